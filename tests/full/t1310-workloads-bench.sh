#!/bin/sh
# Every workload of the catalogue that needs the bench image, at its
# smallest size in a real TCG guest, each between two monitors (every
# monitor but lock-stat, which needs a LOCK_STAT kernel, runs once), the raw
# outputs parsed on the controller. stress-ng and hackbench are in t1300.
# lab-test-seconds: 880 (a .ci/run here on 2026-12-04, with the other lane busy: tests/run-all balances its two lanes by it)
# lab-test-boots: 1
. "$(dirname "$0")/../t/test-lib.sh"

test_require_libvirt_vm

test_expect_success 'a bench VM with the catalogue in it' "
	test_catalogue_vm t1310 bench
"

# run CASE 'MON1 MON2' WORKLOAD VAR=VALUE...: the workload's setup, if it
# has one, then the workload between two monitors in the guest, then its raw outputs copied back as CASE.*.raw
run() {
	c=$1 mons=$2 wl=$3
	shift 3
	lab -C "$P" vm ssh t1310 sh -ec "
		cd /tmp/wl; export LAB_MON_DIR=/tmp/mon-$c; mkdir -p \$LAB_MON_DIR
		if [ -x $wl/setup ]; then env $* $wl/setup >/tmp/out/$c.setup.log 2>&1 || { cat /tmp/out/$c.setup.log >&2; exit 1; }; fi
		for m in $mons; do monitors/\$m/start; done
		env $* $wl/run >/tmp/out/$c.raw 2>/tmp/out/$c.log || { cat /tmp/out/$c.log >&2; exit 1; }
		for m in $mons; do monitors/\$m/stop >/tmp/out/$c.\$m.raw; done" || {
		# a guest that stopped answering: its console says why
		echo "ssh failed; the guest console's last lines:"
		lab -C "$P" vm console t1310 | tail -n 40
		return 1
	} &&
	for f in $c $(for m in $mons; do echo $c.$m; done); do
		lab -C "$P" vm cp t1310 ":/tmp/out/$f.raw" "$PWD/$f.raw" || return 1
	done
}

# parsed CASE WORKLOAD 'MON1 MON2': every raw output through its parser into CASE.metrics
parsed() {
	"$W/$2/parse" "$1.raw" >"$1.metrics" &&
	for m in $3; do "$W/monitors/$m/parse" "$1.$m.raw" >>"$1.metrics" || return 1; done
}

# has CASE METRIC>MIN...: each metric is there and above MIN
has() {
	c=$1
	shift
	python3 - "$c.metrics" "$@" <<-'PY'
	import sys
	m = dict(l.split() for l in open(sys.argv[1]))
	for want in sys.argv[2:]:
	    k, lo = want.split(">")
	    assert k in m, (k, sorted(m)[:20])
	    assert float(m[k]) > float(lo), (k, m[k])
	PY
}

test_expect_success 'pg-sysbench in its cgroup, with perf-profile and sched-debug' "
	run pg 'perf-profile sched-debug' pg-sysbench LAB_PARAM_THREADS=2 LAB_PARAM_TABLES=1 \
		LAB_PARAM_TABLE_SIZE=1000 LAB_PARAM_DURATION=5s LAB_PARAM_WARMUP=1s LAB_PARAM_CGROUP=lab/pg &&
	parsed pg pg-sysbench 'perf-profile sched-debug' &&
	has pg 'sysbench.tps>0' 'sysbench.qps>0' 'sysbench.latency_p95_ms>0' 'perf-profile.samples>0' \
		'sched_debug.cfs_rq:/lab/pg.load_avg.max>0' &&
	grep -q '^# lab: event cpu-clock\$' pg.perf-profile.raw
"

# 20 s, not 10: with the other test lane's guest busy on the same two host CPUs,
# an instance once had not encoded its first frame when the 10 s window closed
test_expect_success 'ffmpeg-multi pinned at SCHED_FIFO, with vmstat and interrupts' "
	run ff 'vmstat interrupts' ffmpeg-multi LAB_PARAM_INSTANCES=2 LAB_PARAM_INSTANCE_CPUS=2 \
		LAB_PARAM_DURATION=20s LAB_PARAM_PRESET=ultrafast LAB_PARAM_RESOLUTION=160x120 &&
	parsed ff ffmpeg-multi 'vmstat interrupts' &&
	has ff 'ffmpeg.fps.total>0' 'ffmpeg.fps.instance.1>0' 'vmstat.samples>1' 'interrupts.total>0' &&
	grep -q '^== instance 1 cpus 2-3\$' ff.raw &&
	# every thread really at SCHED_FIFO 99, each instance on its own CPUs
	grep -q '^# lab: sched instance 1 threads [1-9][0-9]* at_policy [1-9][0-9]* cpus 2-3\$' ff.raw &&
	grep -q '^ffmpeg.sched.at_policy_pct 100\$' ff.metrics &&
	grep -q '^ffmpeg.sched.cpuset_overlaps 0\$' ff.metrics
"

test_expect_success 'kbuild in two cgroups, with meminfo and zoneinfo-pcp' "
	run kb 'meminfo zoneinfo-pcp' kbuild LAB_PARAM_INSTANCES=2 LAB_PARAM_JOBS=1 \
		LAB_PARAM_CONFIG=allnoconfig LAB_PARAM_TARGET=scripts &&
	parsed kb kbuild 'meminfo zoneinfo-pcp' &&
	has kb 'kbuild.time.instance.0>0' 'kbuild.time.instance.1>0' 'meminfo.used_kb.max>0' 'zoneinfo-pcp.samples>1'
"

test_expect_success 'pi-stress, with perf-lock and cpu-stat' "
	run pi 'perf-lock cpu-stat' pi-stress LAB_PARAM_GROUPS=2 LAB_PARAM_DURATION=3s &&
	parsed pi pi-stress 'perf-lock cpu-stat' &&
	has pi 'pi-stress.inversions_per_sec>0' 'cpu-stat.system_pct>0' &&
	grep -q '^lock.contention.total.contended ' pi.metrics
"

test_expect_success 'iperf3 TCP and UDP over loopback, with perf-stat and proc-vmstat' "
	run ip 'perf-stat proc-vmstat' iperf3 LAB_PARAM_PAIRS=2 LAB_PARAM_DURATION=2s &&
	parsed ip iperf3 'perf-stat proc-vmstat' &&
	has ip 'iperf3.throughput_gbps>0' 'perf-stat.context-switches>0' 'proc-vmstat.pgalloc_normal>0' &&
	! grep -q '^perf-stat.cycles ' ip.metrics &&
	run ipu '' iperf3 LAB_PARAM_PROTOCOL=udp LAB_PARAM_PAIRS=1 LAB_PARAM_DURATION=2s LAB_PARAM_LENGTH=1400 &&
	parsed ipu iperf3 '' &&
	has ipu 'iperf3.throughput_gbps>0' && grep -q '^iperf3.lost_pct ' ipu.metrics
"

test_expect_success 'lock-stat refuses a kernel without CONFIG_LOCK_STAT, naming the fragment' "
	test_must_fail_with 1 lab -C '$P' vm ssh t1310 sh -c 'LAB_MON_DIR=/tmp /tmp/wl/monitors/lock-stat/start' 2>err &&
	grep -q 'lockstat.config' err
"

test_expect_success 'the VM goes away' "
	lab -C '$P' vm down t1310 &&
	! test -e '$XDG_STATE_HOME/lab/vms/t1310'
"

test_done
