#!/bin/sh
# Domain XML, a pure function of the topology, the artifacts and the host:
#   tests/data/topology-<case>.yaml (first line "# args: vm xml ...")
#     -> topology-<case>.domain.xml, and virt-xml-validate accepts it
# Cases: 1, 2, 4 and 8 NUMA cells, SMT, pinning with and without host
# NUMA, a host cpu list with hugepages, KVM and TCG, hostile values,
# timing: icount.
# lab-test-seconds: 16 (alone here on 2026-12-06: 13 s)
. "$(dirname "$0")/test-lib.sh"

DATA=$TEST_DIRECTORY/data
REGEN=${LAB_TEST_REGENERATE:-}
export XDG_STATE_HOME=/nonexistent/state   # paths in the goldens
export XDG_CACHE_HOME="$PWD/cache"
export LAB_INSN_PLUGIN=/opt/lab,x/share/lab/lib/lab-insn.so  # vm xml --insn's plugin in the goldens

command -v virt-xml-validate >/dev/null && test_set_prereq VALIDATE

golden() {
	if [ -n "$REGEN" ]; then cp "$2" "$1"; else test_cmp "$1" "$2"; fi
}

for y in "$DATA"/topology-*.yaml; do
	c=$(basename "$y" .yaml)
	args=$(sed -n '1s/^# args: //p' "$y")
	test_expect_success "$c: vm xml matches $c.domain.xml" "
		(cd '$DATA' && lab -f '$c.yaml' $args) >actual &&
		golden '$DATA/$c.domain.xml' actual
	"
	test_expect_success VALIDATE "$c: virt-xml-validate accepts it" "
		(cd '$DATA' && lab -f '$c.yaml' $args) >'$c.xml' &&
		virt-xml-validate '$c.xml' domain
	"
done

test_expect_success 'hostile values come out escaped and parse back unchanged' "
	(cd '$DATA' && lab -f topology-hostile.yaml vm xml odd --kernel k --image i --accel tcg) >odd.xml &&
	python3 -c '
import xml.etree.ElementTree as ET
d = ET.parse(\"odd.xml\").getroot()
cmd = d.find(\"os/cmdline\").text
assert cmd.endswith(\"quiet x=\\\"<a b=\\x27c\\x27>&amp;\\\" y=\$(reboot) z=a\\tb\"), repr(cmd)
assert d.find(\"cpu/model\").text == \"Evil\\x27<model>&\\\"\", d.find(\"cpu/model\").text
'
"

test_expect_success 'NUMA cells, distances and metadata are where libvirt reads them' "
	(cd '$DATA' && lab -f topology-4cell-smt.yaml vm xml smt --accel kvm --host-cpus 0-3) >smt.xml &&
	python3 -c '
import xml.etree.ElementTree as ET
d = ET.parse(\"smt.xml\").getroot()
assert d.get(\"type\") == \"kvm\"
t = d.find(\"cpu/topology\").attrib
assert (t[\"sockets\"], t[\"cores\"], t[\"threads\"]) == (\"2\", \"4\", \"2\"), t
cells = d.findall(\"cpu/numa/cell\")
assert [c.get(\"cpus\") for c in cells] == [\"0-3\", \"4-7\", \"8-11\", \"12-15\"]
assert [s.get(\"value\") for s in cells[2].findall(\"distances/sibling\")] == [\"21\", \"21\", \"10\", \"12\"]
assert d.find(\"vcpu\").text == \"16\"
assert d.find(\"features/pmu\").get(\"state\") == \"on\"
lab = d.find(\"metadata/{https://lab-tool.invalid/xmlns/vm/1}vm\")
assert lab is not None and lab.get(\"name\") == \"smt\"
'
"

test_expect_success 'the network is isolated: only ssh from 127.0.0.1, restrict=on' "
	(cd '$DATA' && lab -f topology-2cell.yaml vm xml two --accel tcg --port 40022) >two.xml &&
	test_grep -q 'user,id=labnet,restrict=on,hostfwd=tcp:127.0.0.1:40022-:22' two.xml &&
	! grep -q '<interface' two.xml
"

test_expect_success 'vm xml --insn: QEMU loads the plugin with its socket in the VM folder; not under KVM' "
	(cd '$DATA' && lab -f topology-insn.yaml vm xml insn --accel tcg --insn) >insn.xml &&
	test_grep -q '<qemu:arg value=.-plugin./>' insn.xml &&
	test_grep -q 'value=.file=/opt/lab,,x/share/lab/lib/lab-insn.so,sock=/nonexistent/state/lab/vms/insn/insn.sock./>' insn.xml &&
	test_grep -q '<domain type=.qemu.' insn.xml &&
	(cd '$DATA' && lab -f topology-insn.yaml vm xml insn --accel tcg) >plain.xml &&
	! grep -q -- '-plugin' plain.xml &&
	test_must_fail_with 2 lab -f '$DATA/topology-insn.yaml' vm xml insn --accel kvm --insn 2>err &&
	test_grep -q 'loads a TCG plugin: not with --accel kvm' err
"

test_expect_success 'vm xml of an unknown topology suggests one' "
	test_must_fail_with 2 lab -f '$DATA/topology-2cell.yaml' vm xml tow 2>err &&
	test_grep -q \"did you mean 'two'\" err
"

test_expect_success 'vm xml --name takes what vm up --name takes, and nothing else' "
	for n in 'x;reboot' ../../etc a.b '-rf' \"a b\" '' \$(printf '%041d' 0); do
		test_must_fail_with 2 lab -f '$DATA/topology-2cell.yaml' vm xml two --name \"\$n\" >out 2>err &&
		test_line_count = 0 out &&
		test_grep -q \"is not a VM name (letters, digits, '-', '_'; at most 40)\" err || exit 1
	done &&
	lab -f '$DATA/topology-2cell.yaml' vm xml two --name my_vm-2 >out &&
	test_grep -q '<name>lab-my_vm-2</name>' out
"

test_expect_success 'vm up refuses bare-metal hosts and unknown ones with a reason, before booting anything' "
	cat >hosts.yaml <<-EOF &&
	version: 1
	topologies:
	  two: {sockets: 1, cores: 2, memory: 1G}
	hosts:
	  box: {ssh: root@box.example}
	  far: {uri: qemu+ssh://root@far.example/system}
	EOF
	test_must_fail_with 2 lab -f hosts.yaml vm up two --kernel k --host box 2>err &&
	test_grep -q \"host 'box' is bare metal\" err &&
	# a remote libvirt host is accepted (t1600 boots on one); here the image is missing first
	test_must_fail_with 2 lab -f hosts.yaml vm up two --kernel k --host far 2>err &&
	test_grep -q \"no image 'minimal'\" err &&
	test_must_fail_with 2 lab -f hosts.yaml vm up two --kernel k --host nosuch 2>err &&
	test_grep -q \"no host 'nosuch'\" err
"

test_expect_success 'timing: icount is QEMU -icount in <qemu:commandline>, and never under KVM' "
	(cd '$DATA' && lab -f topology-icount.yaml vm xml one --accel tcg) >icount.xml &&
	python3 -c '
import xml.etree.ElementTree as ET
d = ET.parse(\"icount.xml\").getroot()
args = [a.get(\"value\") for a in d.findall(\"{http://libvirt.org/schemas/domain/qemu/1.0}commandline/*\")]
i = args.index(\"-icount\")
assert args[i + 1] == \"shift=0,sleep=on,align=off\", args
assert d.get(\"type\") == \"qemu\"
' &&
	(cd '$DATA' && lab -f topology-1cell.yaml vm xml one --accel tcg) >host.xml &&
	! grep -q icount host.xml &&
	test_must_fail_with 2 lab -f '$DATA/topology-icount.yaml' vm xml one --accel kvm >out 2>err &&
	test_line_count = 0 out &&
	test_grep -q \"topology 'one' has timing: icount, which QEMU runs only under TCG\" err
"

test_done
