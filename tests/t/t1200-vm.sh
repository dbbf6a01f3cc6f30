#!/bin/sh
# VMs through libvirt (the embedded QEMU driver, no daemon), for real:
# lab's base kernel boots on the 2-cell, 4-vCPU quick-2x2 topology, lab
# reaches it over ssh with the pinned key, the guest sees the NUMA layout
# lab.yaml gave it, hostile arguments cross ssh unchanged, and `vm down`
# leaves no domain, process or file (t9990, on the suite's shared guest
# this test boots). An injected panic is a boot failure, reported with the
# console and cleaned up. Uses the cache of t1100 (lab's): the
# base kernel and the minimal image.
# lab-test-seconds: 90 (warm, with the other lane busy: tests/run-all balances its two lanes by it)
# lab-test-seconds-full: 240
# lab-test-boots: 0
# lab-test-boots-full: 2
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

test_expect_success 'the base kernel and the minimal image are built (or cached)' "
	lab -C '$P' -q kernel build base &&
	lab -C '$P' -q image build minimal &&
	lab -C '$P' --json kernel show base >kernel.json &&
	python3 -c 'import json; print(json.load(open(\"kernel.json\"))[\"release\"])' >release
"

# The suite's shared guest (test_shared_vm): this test is the first to ask
# for it in `make test`, so it boots it; t1300 reuses it, t9990 takes it
# down and checks that `vm down` leaves nothing.
test_expect_success 'vm up boots base on quick-2x2 and is ready (ssh + uname -r)' "
	test_shared_vm suite-minimal minimal &&
	cp '$SUITE_STATE/suite-minimal.up.json' up.json &&
	python3 -c '
import json
v = json.load(open(\"up.json\"))
assert v[\"name\"] == \"suite-minimal\" and v[\"domain\"] == \"lab-suite-minimal\", v
assert v[\"uri\"].startswith(\"qemu:///embed?root=\"), v
assert v[\"boot_seconds\"] > 0, v
' &&
	shared_lab -C '$P' vm ls >ls &&
	test_grep -q '^suite-minimal  *running  *quick-2x2  *base  *minimal' ls
"

test_expect_success 'the guest runs the variant and sees the topology: 2 nodes, 2 vCPUs each' "
	test \"\$(shared_lab -C '$P' vm ssh suite-minimal uname -r)\" = \"\$(cat release)\" &&
	test \"\$(shared_lab -C '$P' vm ssh suite-minimal cat /sys/devices/system/node/node0/cpulist)\" = 0-1 &&
	test \"\$(shared_lab -C '$P' vm ssh suite-minimal cat /sys/devices/system/node/node1/cpulist)\" = 2-3 &&
	test \"\$(shared_lab -C '$P' vm ssh suite-minimal nproc)\" = 4 &&
	shared_lab -C '$P' vm ssh suite-minimal cat /sys/devices/system/node/node0/meminfo /sys/devices/system/node/node1/meminfo >mem &&
	python3 -c '
import re
kb = [int(m) for m in re.findall(r\"MemTotal:\\s+(\\d+) kB\", open(\"mem\").read())]
# quick-2x2 gives each cell 2G; the kernel keeps some for itself
assert len(kb) == 2 and all(1500000 < k <= 2097152 for k in kb), kb
' &&
	shared_lab -C '$P' vm ssh suite-minimal cat /sys/devices/system/node/node0/distance >dist &&
	test \"\$(cat dist)\" = '10 20'
"

test_expect_success 'hostile arguments cross ssh unchanged' "
	shared_lab -C '$P' vm ssh suite-minimal printf '%s|\n' \"it's\" '\$(touch /tmp/pwned)' 'a
b' -rf '' '\`id\`' '\"q\" \\\\ *' >out &&
	printf '%s|\n' \"it's\" '\$(touch /tmp/pwned)' 'a
b' -rf '' '\`id\`' '\"q\" \\\\ *' >expected &&
	test_cmp expected out &&
	! shared_lab -C '$P' vm ssh suite-minimal test -e /tmp/pwned
"

# Without restrict=on the guest would reach the host's loopback through
# 10.0.2.2, its own forwarded ssh port included (and read a banner there).
test_expect_success 'vm cp copies a file in and back out, names with spaces and quotes intact' "
	printf 'payload \\0 \$(x)\\n' >\"it's a file\" &&
	shared_lab -C '$P' vm cp suite-minimal \"\$PWD/it's a file\" \":/tmp/it's a file\" &&
	shared_lab -C '$P' vm ssh suite-minimal cat \"/tmp/it's a file\" >seen &&
	test_cmp \"it's a file\" seen &&
	shared_lab -C '$P' vm cp suite-minimal \":/tmp/it's a file\" \"\$PWD/back\" &&
	test_cmp \"it's a file\" back
"

test_expect_success 'the guest reaches nothing but lab (restrict=on)' "
	port=\$(python3 -c 'import json; print(json.load(open(\"up.json\"))[\"port\"])') &&
	! shared_lab -C '$P' vm ssh suite-minimal timeout 10 bash -c \"exec 3<>/dev/tcp/10.0.2.2/\$port && head -c 4 <&3\" >banner 2>err &&
	! grep -q SSH banner
"

test_expect_success 'vm console shows the boot' "
	shared_lab -C '$P' vm console suite-minimal >console &&
	test_grep -q 'Linux version' console
"

test_expect_success FULL 'a panic during boot is a boot failure, reported with the console, cleaned up' "
	test_must_fail_with 1 lab -C '$P' vm up quick-2x2 --kernel base --image minimal --name t1200p \
		--cmdline root=/dev/vdz --timeout 60s 2>err &&
	test_grep -q \"boot failure: the console says 'Kernel panic - not syncing'\" err &&
	test_grep -q 'VFS: Unable to mount root fs' err &&
	! test -e '$XDG_STATE_HOME/lab/vms/t1200p' &&
	! pgrep -f 'guest=lab-t1200p'
"

test_expect_success FULL 'lab gc removes a VM whose holder was killed, QEMU included' "
	# fd 7 stands for a caller's lock or pipe: the holder must not keep it
	lab -C '$P' --json vm up quick-2x2 --kernel base --image minimal --name t1200g >g.json 7>\"\$PWD/held\" &&
	holder=\$(python3 -c 'import json; print(json.load(open(\"g.json\"))[\"holder\"])') &&
	ls -l /proc/\$holder/fd >fds &&
	! grep -q '/held\$' fds &&
	kill -9 \$holder &&
	sleep 1 &&
	lab -C '$P' vm ls >ls &&
	test_grep -q '^t1200g  *dead' ls &&
	pgrep -f 'guest=lab-t1200g' >/dev/null &&
	lab -C '$P' gc >gc &&
	test_grep -q 'removed VM t1200g' gc &&
	! pgrep -f 'guest=lab-t1200g' &&
	! test -e '$XDG_STATE_HOME/lab/vms/t1200g'
"

test_expect_success 'vm ssh to a VM that does not exist says so' "
	test_must_fail_with 1 lab -C '$P' vm ssh nosuch true 2>err &&
	test_grep -q \"no VM 'nosuch'\" err
"

test_done
