#!/bin/sh
# Two hypervisor hosts: this machine's embedded driver and a libvirtd
# reached through qemu+ssh://root@127.0.0.1:PORT/system (both on this
# machine; the second in a mount namespace of its own, see
# tests/tools/libvirt-ssh-host). lab run spreads an experiment's
# repetitions over both: on the remote one lab copies the image, the
# kernel and the VM's overlay and seed there, libvirt there boots the
# guest, lab reaches its forwarded ssh through the host, brings the console
# back, and removes what it put there when the run ends.
# lab-test-seconds: 155 (make test here: 161 s and 147 s on 2026-12-06/07; tests/run-all balances its two lanes by it)
# lab-test-boots: 2
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm
for t in libvirtd /usr/sbin/sshd unshare ssh-keygen; do
	command -v "$t" >/dev/null || test_skip_all "missing: $t (make deps installs libvirt-daemon-system and openssh-server)"
done
[ "$(id -u)" = 0 ] || test_skip_all "the second host's libvirtd and sshd run as root in a mount namespace"

H=$TRASH/host
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
trap 'lab -C "$TRASH/proj" -q gc >/dev/null 2>&1; "$SRC_DIR/tests/tools/libvirt-ssh-host" stop "$H"; test_remove_trash' EXIT
ssh-keygen -q -t ed25519 -N '' -f "$TRASH/key" </dev/null
"$SRC_DIR/tests/tools/libvirt-ssh-host" start "$H" "$PORT" "$TRASH/key.pub" || test_skip_all "could not start libvirtd and sshd in a namespace (see above)"

mkdir proj && for d in kernels images workloads; do ln -s "$SRC_DIR/$d" "proj/$d"; done
python3 - "$P/lab.yaml" proj/lab.yaml "$PORT" "$TRASH/key" <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace("hosts:\n  local:\n    uri: qemu:///embed\n", """hosts:
  local:
    uri: qemu:///embed
  remote:
    uri: qemu+ssh://root@127.0.0.1:%s/system
    identity: %s
""" % (sys.argv[3], sys.argv[4]), 1)
# one vCPU a guest: both guests may be up at once beside the other lane
s = s.replace("topologies:\n", """topologies:
  tiny:
    sockets: 1
    cores: 1
    memory: 1G
""", 1)
s = s[:s.index("experiments:")] + """experiments:
  spread:
    kernels: [base]
    topology: tiny
    image: minimal
    hosts: [local, remote]
    repeat: 2
    boot: once
    warmup: 1s
    timeout: 5m
    monitors: [cpu-stat]
    workloads:
      - workload: stress-ng
        params: {stressor: switch, instances: 100%, duration: 3s}
"""
open(sys.argv[2], "w").write(s)
PY

test_expect_success 'the repetitions alternate between the two hosts' "
	lab -C proj validate &&
	lab -C proj plan spread >plan &&
	awk 'NR > 1 {print \$4}' plan >hosts &&
	printf 'local\nremote\n' >expect &&
	test_cmp expect hosts
"

test_expect_success 'a remote host whose key is not pinned is refused, with the fix' "
	lab -C '$P' -q kernel build base &&
	lab -C '$P' -q image build minimal &&
	test_must_fail_with 1 lab -C proj vm up tiny --kernel base --host remote 2>err &&
	test_grep -q 'lab host trust remote' err &&
	! test -e '$H/lab/images'
"

test_expect_success 'lab host trust pins the remote host key' "
	lab -C proj host trust remote >out &&
	test_grep -q 'ED25519' out &&
	test -s state/lab/hosts/remote/known_hosts &&
	lab -C proj host facts remote >facts &&
	test_grep -q '^cpus ' facts &&
	test_must_fail_with 2 lab -C proj host boot remote base 2>err &&
	test_grep -q 'is a libvirt host (uri:): lab host boot is for bare-metal hosts' err
"

test_expect_success 'lab run: one repetition on each host, both measured' "
	lab -C proj run spread >report 2>err &&
	id=\$(ls proj/results | grep -v index) && echo \$id >id &&
	run_journal proj/results/\$id | grep -q '^spread.0001	ok' &&
	run_journal proj/results/\$id | grep -q '^spread.0002	ok' &&
	for r in spread.0001 spread.0002; do
		grep -q '^stress-ng.switch.ops_per_sec [0-9]' proj/results/\$id/runs/\$r/metrics &&
		grep -q 'lab-base' proj/results/\$id/runs/\$r/raw/uname || exit 1
	done &&
	test_grep -q 'spread.0002 base: copying kernel and disks to the host' err
"

test_expect_success 'the remote guest ran on the remote host: its files landed there, its console came back' "
	ls '$H'/lab/images/*.qcow2 >/dev/null &&
	ls '$H'/lab/kernels/*/bzImage >/dev/null &&
	grep -q 'Linux version .*lab-base' proj/results/\$(cat id)/runs/spread.0002/console.log &&
	grep -q 'qemu-system' '$H'/log/qemu/lab-run-*.log
"

test_expect_success 'nothing is left on the remote host: no domain, no VM folder' "
	test -z \"\$(ls '$H/lab/vms')\" &&
	ssh -F /dev/null -i '$TRASH/key' -o UserKnownHostsFile=state/lab/hosts/remote/known_hosts \
		-o StrictHostKeyChecking=yes -o BatchMode=yes -p $PORT root@127.0.0.1 \
		virsh -q -c qemu:///system list --all --name >doms &&
	test -z \"\$(tr -d '[:space:]' <doms)\"
"

test_done
