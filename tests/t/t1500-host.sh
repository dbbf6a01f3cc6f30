#!/bin/sh
# Bare-metal hosts over SSH, with a TCG guest that lab booted playing the
# host (to ssh it is one; a reboot restarts it into its own kernel, as a
# boot loader would): quick-2x1, two NUMA nodes of one vCPU each, no more
# vCPUs than this machine's CPUs (its boots, kexecs and reboot take less
# than quick-2x2's four vCPUs did, and the facts still see two nodes).
#   make test: before `lab host trust` nothing runs there; trust pins its
#   keys; facts reads its CPUs, NUMA nodes, release and boot id (checked
#   against the guest itself); check says what lab needs there and how to
#   fix what is missing; lab host boot kexecs a second variant (a new boot
#   id, its release); lab host restore reboots into its own kernel (from
#   where the kexec left it: no extra boot); a host whose key changed is
#   refused.
#   make test-full: also lab run there, a kexec per variant, with the
#   host's facts kept per run; a kexec that hangs gets the host's
#   power-cycle command (lab vm reset here) and the fallback to its own
#   kernel is reported.
# lab-test-seconds: 270 (make test here: 271 s and 263 s on 2026-12-06/07)
# lab-test-seconds-full: 700
# lab-test-boots: 1
# lab-test-boots-full: 1
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

test_expect_success 'a guest is up to play the host' "
	lab -C '$P' -q kernel build base &&
	lab -C '$P' -q kernel build tg-ratelimit &&
	lab -C '$P' -q image build minimal &&
	lab -C '$P' --json vm up quick-2x1 --kernel base --image minimal --name box --reboot-restarts >vm.json &&
	port=\$(python3 -c 'import json,sys; print(json.load(open(\"vm.json\"))[\"port\"])') &&
	test -n \"\$port\" && echo \"\$port\" >port &&
	mkdir proj && for d in kernels images workloads; do ln -s '$SRC_DIR'/\$d proj/\$d; done &&
	sed -n '1,/^experiments:/p' '$P/lab.yaml' |
		sed \"s|^hosts:\$|hosts:\\n  box:\\n    ssh: root@127.0.0.1:\$port\\n    power-cycle: [\$LAB, -C, '$P', vm, reset, box]|\" >proj/lab.yaml &&
	cat >>proj/lab.yaml <<-EOF &&
	  metal:
	    kernels: [base, tg-ratelimit]
	    topology: quick-2x1
	    image: minimal
	    hosts: [box]
	    repeat: 1
	    timeout: 5m
	    monitors: [cpu-stat]
	    workloads:
	      - workload: stress-ng
	        params: {stressor: switch, instances: 100%, duration: 3s}
	EOF
	lab -C proj validate
"

test_expect_success 'before trust nothing runs there, and lab says how to go on' "
	test_must_fail_with 1 lab -C proj host check box >out 2>err &&
	grep -q \"no pinned key yet.*'lab host trust box'\" err &&
	grep -q '^ssh  *NO' out &&
	test_must_fail_with 1 lab -C proj host facts box 2>err &&
	grep -q 'lab host trust box' err &&
	test_must_fail_with 2 lab -C proj host check box --cmdline quiet 2>err &&
	grep -q -- '--cmdline goes with host boot' err
"

test_expect_success 'lab host trust pins its keys' "
	lab -C proj host trust box >out &&
	grep -q \"pinned the keys of box (127.0.0.1 port \$(cat port))\" out &&
	grep -q 'ED25519' out &&
	grep -q \"^\\[127.0.0.1\\]:\$(cat port) ssh-ed25519 \" \"\$XDG_STATE_HOME/lab/hosts/box/known_hosts\"
"

test_expect_success 'lab host facts: CPUs, NUMA nodes, release and boot id of the machine' "
	lab -C proj --json host facts box >facts.json &&
	lab -C '$P' vm ssh box cat /proc/sys/kernel/random/boot_id >boot_id &&
	python3 - facts.json boot_id <<-'EOF'
	import json, sys
	f = json.load(open(sys.argv[1]))
	assert f['cpus'] == 2, f
	assert f['sockets'] == 2 and f['cores_per_socket'] == 1 and f['threads_per_core'] == 1, f
	assert f['nodes'] == ['0', '1'], f
	assert f['release'].startswith('6.1.') and 'lab-base' in f['release'], f
	assert f['boot_id'] == open(sys.argv[2]).read().strip(), f
	EOF
	lab -C proj host facts box >facts &&
	grep -q '^numa nodes 2 (0: 0, 1: 1)' facts
"

test_expect_success 'lab host check: ssh, kexec, perf, cgroup v2 and disk, with a fix for each miss' "
	{ lab -C proj host check box >out; echo \$? >rc; } &&
	grep -q '^ssh  *yes' out &&
	grep -q '^cgroup2  *yes  *cpuset,cpu' out &&
	grep -q '^disk  *[a-zA-Z]*  *[0-9]* MiB free in /var/lib/lab' out &&
	for c in kexec kexec-load perf; do grep -q \"^\$c \" out || exit 1; done &&
	# a miss makes it exit 1 and says what to do
	if grep -q '^[a-z0-9-]*  *NO ' out; then test \$(cat rc) = 1; else test \$(cat rc) = 0; fi &&
	if grep -q '^kexec  *NO' out; then grep '^kexec  *NO' out | grep -q 'apt install kexec-tools\$'; fi &&
	if grep -q '^disk  *NO' out; then grep '^disk  *NO' out | grep -q 'free at least 2 GiB'; fi &&
	{ lab -C proj --json host check box >check.json; test \$? = \$(cat rc); } &&
	python3 -c 'import json; t = json.load(open(\"check.json\")); assert {r[\"check\"] for r in t} >= {\"ssh\", \"kexec\", \"perf\", \"cgroup2\", \"disk\"}, t'
"

test_expect_success 'lab host boot: kexec into a second variant, a new boot, its release' "
	lab -C '$P' vm ssh box cat /proc/sys/kernel/random/boot_id >before &&
	rel=\$(lab -C '$P' --json kernel show tg-ratelimit | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"release\"])') &&
	lab -C proj host boot box tg-ratelimit >out 2>err &&
	grep -q \"^box runs \$rel\$\" out &&
	grep -q 'kexec -l' err && grep -q 'waiting for the new boot' err &&
	lab -C proj --json host facts box >f.json &&
	python3 - f.json before \"\$rel\" <<-'EOF'
	import json, sys
	f = json.load(open(sys.argv[1]))
	assert f['release'] == sys.argv[3], f
	assert f['boot_id'] != open(sys.argv[2]).read().strip(), f
	EOF
"

test_expect_success FULL 'lab run on the host: a kexec per variant, the same driver, the host facts kept' "
	lab -C proj run metal >report 2>err &&
	id=\$(ls proj/results | grep -v index) &&
	d=proj/results/\$id/runs &&
	run_journal proj/results/\$id | grep -q '^metal.0001	ok	base' &&
	run_journal proj/results/\$id | grep -q '^metal.0002	ok	tg-ratelimit' &&
	test \$(grep -c 'base: kexec\$\\|tg-ratelimit: kexec\$' err) = 2 &&
	grep -q '^stress-ng.switch.ops_per_sec ' \$d/metal.0001/metrics &&
	python3 -c 'import json,sys; f = json.load(open(sys.argv[1])); assert f[\"host\"] == \"box\" and f[\"nodes\"] == [\"0\", \"1\"] and \"lab-tg-ratelimit\" in f[\"release\"], f' \$d/metal.0002/host-facts.json &&
	grep -q \"host box still runs the last kernel lab booted: 'lab host restore box'\" err &&
	grep -q 'lab-tg-ratelimit' \$d/metal.0002/raw/uname &&
	test -s \$d/metal.0001/lscpu.json
"

# lab host boot left the host on tg-ratelimit, and so did lab run in the
# full tier (the test above checks that it says so): restore takes it from
# there, without a boot of its own
test_expect_success 'lab host restore: a reboot into its own kernel' "
	lab -C proj --json host facts box >f.json &&
	python3 -c 'import json; f = json.load(open(\"f.json\")); assert \"lab-tg-ratelimit\" in f[\"release\"], f' &&
	lab -C proj host restore box >out 2>err &&
	grep -q '^box runs its own kernel again' out &&
	lab -C proj --json host facts box >f.json &&
	python3 -c 'import json; f = json.load(open(\"f.json\")); assert \"lab-base\" in f[\"release\"], f' &&
	test_must_fail_with 1 lab -C proj host restore box 2>err &&
	grep -q 'its own kernel is what runs' err
"

test_expect_success FULL 'a kexec that never comes back: the power-cycle command, then the fallback is reported' "
	# root on a disk that does not exist: the kernel waits for it forever,
	# so any timeout is \"never\"; a short one keeps the test short (after
	# the power cycle lab waits at least 10 minutes for the reset boot)
	test_must_fail_with 1 lab -C proj host boot box tg-ratelimit --timeout 30s \\
		--cmdline 'console=ttyS0 root=/dev/nosuchdisk rootwait' >out 2>err &&
	grep -q 'no answer: running the power-cycle command' err &&
	grep -q \"booted .*lab-base.*, not .*lab-tg-ratelimit.*did the boot fall back\" err &&
	grep -q 'lab holder: reset: done' \"\$XDG_STATE_HOME/lab/vms/box/holder.log\" &&
	# the reset brought back what its boot loader boots: the base kernel
	lab -C proj --json host facts box >f.json &&
	python3 -c 'import json; f = json.load(open(\"f.json\")); assert \"lab-base\" in f[\"release\"], f'
"

test_expect_success 'a host whose key changed is refused' "
	ssh-keygen -q -t ed25519 -N '' -f other &&
	echo \"[127.0.0.1]:\$(cat port) \$(cut -d' ' -f1,2 other.pub)\" >\"\$XDG_STATE_HOME/lab/hosts/box/known_hosts\" &&
	test_must_fail_with 1 lab -C proj host check box >out 2>err &&
	grep -q '^ssh  *NO' out &&
	grep -qi 'host key verification failed\\|REMOTE HOST IDENTIFICATION HAS CHANGED' err
"

test_done
