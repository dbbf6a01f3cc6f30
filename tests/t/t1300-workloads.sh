#!/bin/sh
# The workload and monitor scripts in a real guest: the catalogue is copied
# in with `lab vm cp`, stress-ng and hackbench run at their smallest size
# inside the experiment's cgroup between the proc-vmstat, cpu-stat,
# zoneinfo-pcp and tg-load-writes monitors, and the controller-side parsers
# turn the raw outputs into metrics. (lab run will drive the same scripts; this checks them alone.)
# The guest is the suite's shared one (test_shared_vm); t9990 takes it down.
# lab-test-seconds: 13 (warm, with the other lane busy: tests/run-all balances its two lanes by it)
# lab-test-boots: 0
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

# the suite's shared guest (booted by t1200 in `make test`, or here when
# this test runs alone); everything this test writes there is below /tmp/mon
test_expect_success 'a VM with the quick experiment and the catalogue in it' "
	test_shared_vm suite-minimal minimal &&
	shared_lab -C '$P' vm ssh suite-minimal sh -c 'rm -rf /tmp/mon && mkdir /tmp/mon'
"

test_expect_success 'stress-ng and hackbench run in lab/quick between two monitors' "
	shared_lab -C '$P' vm ssh suite-minimal sh -ec '
		cd /tmp/wl; export LAB_MON_DIR=/tmp/mon
		monitors/proc-vmstat/start; monitors/cpu-stat/start; LAB_PARAM_INTERVAL=1s monitors/zoneinfo-pcp/start
		monitors/tg-load-writes/start
		LAB_PARAM_STRESSOR=switch LAB_PARAM_INSTANCES=100% LAB_PARAM_DURATION=2s \
			LAB_PARAM_CGROUP=lab/quick stress-ng/run >/tmp/mon/stress-ng.raw 2>/tmp/mon/stress-ng.log
		LAB_PARAM_MODE=threads LAB_PARAM_GROUPS=2 LAB_PARAM_LOOPS=50 LAB_PARAM_CGROUP=lab/quick \
			hackbench/run >/tmp/mon/hackbench.raw
		monitors/proc-vmstat/stop >/tmp/mon/proc-vmstat.raw
		monitors/cpu-stat/stop >/tmp/mon/cpu-stat.raw
		monitors/zoneinfo-pcp/stop >/tmp/mon/zoneinfo-pcp.raw
		monitors/tg-load-writes/stop >/tmp/mon/tg-load-writes.raw
		if grep lab_tgw /sys/kernel/tracing/kprobe_events || test -e /sys/kernel/tracing/instances/lab_tgw
		then echo tg-load-writes/stop left its probes behind >&2; exit 1; fi
		cat /sys/fs/cgroup/lab/quick/cpu.stat >/tmp/mon/cgroup.raw
		monitors/cpupri-masks/start
		LAB_PARAM_STRESSOR=cyclic LAB_PARAM_POLICY=fifo LAB_PARAM_INSTANCES=100% LAB_PARAM_DURATION=1s \
			stress-ng/run >/dev/null 2>/tmp/mon/cyclic.log
		monitors/cpupri-masks/stop >/tmp/mon/cpupri-masks.raw
		if grep lab_cpm /sys/kernel/tracing/kprobe_events || test -e /sys/kernel/tracing/instances/lab_cpm
		then echo cpupri-masks/stop left its probes behind >&2; exit 1; fi' &&
	for f in stress-ng hackbench proc-vmstat cpu-stat zoneinfo-pcp tg-load-writes cpupri-masks cgroup; do
		shared_lab -C '$P' vm cp suite-minimal :/tmp/mon/\$f.raw \"\$PWD/\$f.raw\" || exit 1
	done &&
	python3 -c '
import re
# the work ran inside the cgroup: it used CPU time there
us = int(re.search(r\"usage_usec (\\d+)\", open(\"cgroup.raw\").read()).group(1))
assert us > 0, us
'
"

test_expect_success 'the parsers turn the raw outputs into metrics' "
	'$W/stress-ng/parse' stress-ng.raw >m &&
	'$W/hackbench/parse' hackbench.raw >>m &&
	'$W/monitors/proc-vmstat/parse' proc-vmstat.raw >>m &&
	'$W/monitors/cpu-stat/parse' cpu-stat.raw >>m &&
	'$W/monitors/zoneinfo-pcp/parse' zoneinfo-pcp.raw >>m &&
	'$W/monitors/tg-load-writes/parse' tg-load-writes.raw >>m &&
	'$W/monitors/cpupri-masks/parse' cpupri-masks.raw >>m &&
	python3 -c '
m = dict(l.split() for l in open(\"m\"))
for k in (\"stress-ng.switch.ops_per_sec\", \"stress-ng.ctxt_per_sec\", \"hackbench.throughput\", \"hackbench.time\"):
    assert float(m[k]) > 0, (k, m.get(k))
assert float(m[\"cpu-stat.user_pct\"]) + float(m[\"cpu-stat.system_pct\"]) > 10, m
assert int(m[\"proc-vmstat.pgfault\"]) > 0, m
assert float(m[\"zoneinfo-pcp.samples\"]) >= 2 and float(m[\"zoneinfo-pcp.Normal.high_avg\"]) > 0, m
# hackbench in a cpu cgroup moves tg->load_avg: its inlined writes were hit
assert float(m[\"tg-load-writes.update_load_avg\"]) > 0, m
assert float(m[\"tg-load-writes.total\"]) >= float(m[\"tg-load-writes.update_load_avg\"]), m
assert float(m[\"tg-load-writes.missed\"]) == 0, m
# SCHED_FIFO tasks moved the RT priorities of the CPUs; base has no per-node split
assert float(m[\"cpupri-masks.sets\"]) > 0 and float(m[\"cpupri-masks.split\"]) == 0, m
assert float(m[\"cpupri-masks.node_reads\"]) == 0 and float(m[\"cpupri-masks.missed\"]) == 0, m
'
"

test_done
