#!/bin/sh
# A real guest image, end to end: `lab image build minimal` (mmdebstrap,
# mkfs.ext4 -d, qemu-img convert -c), a rebuild is a cache hit, the
# package list is recorded, and a VM made by `lab image instance` (overlay
# + NoCloud seed) boots lab's base kernel under QEMU and answers ssh as
# root with lab's key and its pinned host key, with the experiment's
# sysctls and cgroups applied by lab-seed.service (cloud-init installed but
# off). A second VM of the same image, booted with cloud-init=enabled on the
# kernel command line, gets the same seed's work done by cloud-init's init
# stage instead (user-data), lab-seed.service skipped. The image file is
# never written.
# The second boot, through cloud-init, is in the full tier.
# Slow on a fresh machine (the test kernel and the image); the cache
# (lab's, kept between runs) makes later runs minutes.
# lab-test-seconds: 75 (make test here on 2026-12-05, with the other lane busy: tests/run-all balances its two lanes by it)
# lab-test-seconds-full: 200
# lab-test-boots: 1
# lab-test-boots-full: 2
. "$(dirname "$0")/test-lib.sh"

test_require_vm isoinfo
command -v cloud-init >/dev/null && test_set_prereq CLOUDINIT
port=$((30000 + $$ % 20000))

cleanup_vm() { [ -f "$TRASH/qemu.pid" ] && kill "$(cat "$TRASH/qemu.pid")" 2>/dev/null; rm -f "$TRASH/qemu.pid"; }
trap 'cleanup_vm; test_remove_trash' EXIT

test_expect_success 'the base kernel builds (or is cached)' "
	lab -C '$P' -q kernel build base &&
	lab -C '$P' --json kernel show base >kernel.json &&
	python3 -c 'import json; k = json.load(open(\"kernel.json\")); print(k[\"bzImage\"]); print(k[\"release\"])' >kernel.txt &&
	test -s \"\$(head -1 kernel.txt)\"
"

test_expect_success 'image build minimal makes a compressed qcow2 and records its packages' "
	lab -C '$P' -q --json image build minimal >build.json &&
	python3 -c '
import json
a = json.load(open(\"build.json\"))[0]
assert a[\"name\"] == \"minimal\" and len(a[\"id\"]) == 64, a
open(\"qcow2\", \"w\").write(a[\"qcow2\"])
open(\"packages\", \"w\").write(a[\"packages_file\"])
' &&
	qemu-img check \"\$(cat qcow2)\" &&
	qemu-img info --output=json \"\$(cat qcow2)\" >info.json &&
	python3 -c '
import json
i = json.load(open(\"info.json\"))
assert i[\"format\"] == \"qcow2\", i
assert i[\"actual-size\"] < i[\"virtual-size\"] / 4, i   # compressed and sparse
' &&
	for p in openssh-server python3 stress-ng rt-tests linux-perf systemd-sysv; do
		test_grep -q \"^\$p=\" \"\$(cat packages)\" || exit 1
	done &&
	! grep -q '^linux-image' \"\$(cat packages)\" &&
	test_grep -q '^cloud-init=' \"\$(cat packages)\" &&
	sort -c \"\$(cat packages)\"
"

test_expect_success 'a second build of the unchanged recipe is a cache hit' "
	lab -C '$P' -q --json image build minimal >again.json &&
	python3 -c '
import json
a, b = json.load(open(\"build.json\"))[0], json.load(open(\"again.json\"))[0]
assert b[\"cached\"] is True, b
assert a[\"id\"] == b[\"id\"], (a, b)
' &&
	lab -C '$P' image list >list &&
	test_grep -q '^minimal  *[0-9a-f]\{12\}  *current' list
"

test_expect_success 'image instance makes an overlay and a cidata seed' "
	sha256sum \"\$(cat qcow2)\" >image.sha &&
	lab -C '$P' -q --json image instance -e quick --hostname boot-test minimal \"\$PWD/vm\" >inst.json &&
	python3 -c '
import json
i = json.load(open(\"inst.json\"))
open(\"identity\", \"w\").write(i[\"identity\"])
assert i[\"host_key_alias\"] == \"lab-boot-test\", i
' &&
	qemu-img info --output=json vm/disk.qcow2 >ov.json &&
	python3 -c '
import json
assert json.load(open(\"ov.json\"))[\"backing-filename\"] == open(\"qcow2\").read(), open(\"ov.json\").read()
' &&
	isoinfo -d -i vm/seed.iso >iso &&
	test_grep -q '^Volume id: cidata' iso &&
	isoinfo -R -i vm/seed.iso -x /user-data >user-data &&
	test_cmp vm/seed/user-data user-data &&
	isoinfo -R -i vm/seed.iso -x /lab-seed.sh >lab-seed.sh &&
	test_cmp vm/seed/lab-seed.sh lab-seed.sh &&
	test_grep -q 'kernel.perf_event_paranoid=-1' lab-seed.sh &&
	test_grep -q 'kernel.perf_event_paranoid=-1' user-data &&
	test_grep -q 'lab/quick' user-data &&
	test_grep -q '^lab-boot-test ssh-ed25519 ' vm/known_hosts &&
	! grep -rq 'StrictHostKeyChecking=no' vm '$P/lab' '$P/images' '$P/bench'
"

test_expect_success CLOUDINIT 'the generated user-data passes cloud-init schema' "
	cloud-init schema --config-file vm/seed/user-data
"

# ssh_vm [DIR ALIAS] CMD...: as root, lab's key, the VM's pinned host key
vm=vm alias=lab-boot-test
ssh_vm() {
	ssh -q -i "$(cat "$TRASH/identity")" -o BatchMode=yes -o ConnectTimeout=3 \
		-o UserKnownHostsFile="$TRASH/$vm/known_hosts" -o HostKeyAlias=$alias \
		-o StrictHostKeyChecking=yes -p "$port" root@127.0.0.1 "$@"
}

# boot_vm DIR [MORE-CMDLINE]: the instance in DIR under QEMU, until ssh answers
boot_vm() {
	accel=tcg; [ -w /dev/kvm ] && [ ! -e /sys/module/kvm_pvm ] && accel=kvm
	test_boot_journal "$1" &&
	qemu-system-x86_64 -machine q35,accel=$accel -cpu max -smp 4,sockets=2,cores=2 -m 2G \
		-object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1G \
		-numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1 \
		-display none -kernel "$(head -1 kernel.txt)" \
		-append "console=ttyS0 root=/dev/vda rw net.ifnames=0${2:+ $2}" \
		-drive file="$1/disk.qcow2",if=virtio,format=qcow2 \
		-drive file="$1/seed.iso",if=virtio,format=raw,readonly=on \
		-netdev user,id=n0,hostfwd=tcp:127.0.0.1:$port-:22 -device virtio-net-pci,netdev=n0 \
		-serial file:"$1/serial.log" -daemonize -pidfile "$TRASH/qemu.pid" || return 1
	n=0
	until ssh_vm true; do
		n=$((n + 1)); [ $n -lt 150 ] || { tail -30 "$1/serial.log"; return 1; }
		sleep 2
	done
}

test_expect_success 'the VM boots lab base kernel and answers ssh with the pinned key' "
	boot_vm vm &&
	ssh_vm uname -r >release &&
	test \"\$(cat release)\" = \"\$(sed -n 2p kernel.txt)\"
"

test_expect_success 'the seed configured the guest: hostname, sysctls, cgroups, by lab-seed.service before sshd' "
	test \"\$(ssh_vm hostname)\" = boot-test &&
	test \"\$(ssh_vm cat /etc/hostname)\" = boot-test &&
	test \"\$(ssh_vm sysctl -n kernel.perf_event_paranoid)\" = -1 &&
	test \"\$(ssh_vm sysctl -n kernel.kptr_restrict)\" = 0 &&
	ssh_vm test -d /sys/fs/cgroup/lab/quick &&
	ssh_vm grep -qw cpu /sys/fs/cgroup/lab/cgroup.subtree_control &&
	test \"\$(ssh_vm systemctl is-active lab-seed.service)\" = active &&
	test \"\$(ssh_vm stat -c %a /etc/ssh/ssh_host_ed25519_key)\" = 600 &&
	! ssh_vm systemctl is-active cloud-init.service &&
	! ssh_vm systemctl is-active systemd-networkd.service &&
	ssh_vm cloud-init status --long >ci-status &&
	test_grep -q '^status: disabled' ci-status &&
	test_grep -q 'disabled-by-marker-file' ci-status &&
	! ssh_vm mountpoint -q /run/lab-seed &&
	ssh_vm systemctl list-units --failed --plain --no-legend >failed &&
	test_line_count = 0 failed
"

test_expect_success 'the image holds no kernel and sshd takes keys only' "
	! ssh_vm 'ls /boot/vmlinuz* /usr/lib/modules/*/kernel' 2>/dev/null &&
	ssh_vm sshd -T >sshd &&
	test_grep -q '^passwordauthentication no' sshd
"

test_expect_success 'another host key for the alias is refused (the key is pinned, not trusted on first use)' "
	ssh-keygen -q -t ed25519 -N '' -f other >/dev/null &&
	echo \"lab-boot-test \$(cut -d' ' -f1,2 other.pub)\" >wrong_known_hosts &&
	! ssh -i \"\$(cat identity)\" -o BatchMode=yes -o ConnectTimeout=3 \
		-o UserKnownHostsFile=wrong_known_hosts -o HostKeyAlias=lab-boot-test \
		-o StrictHostKeyChecking=yes -p $port root@127.0.0.1 true 2>err &&
	test_grep -q 'HOST IDENTIFICATION HAS CHANGED\|Host key verification failed' err
"

# The other way to boot the same image: cloud-init's init stage does the
# seed's work from user-data (as on a stock cloud image), a fresh VM.
test_expect_success FULL 'with cloud-init=enabled the same image boots through cloud-init' "
	cleanup_vm &&
	lab -C '$P' -q --json image instance -e quick --hostname boot-ci minimal \"\$PWD/vm-ci\" >inst-ci.json &&
	test_grep -q '\"host_key_alias\": *\"lab-boot-ci\"' inst-ci.json &&
	vm=vm-ci alias=lab-boot-ci &&
	boot_vm vm-ci cloud-init=enabled &&
	test \"\$(ssh_vm uname -r)\" = \"\$(sed -n 2p kernel.txt)\"
"

test_expect_success FULL 'cloud-init did the seed work: done without errors, hostname, sysctls, cgroups; lab-seed.service skipped' "
	vm=vm-ci alias=lab-boot-ci &&
	ssh_vm cloud-init status --format json >ci.json &&
	ssh_vm cat /run/cloud-init/status.json >stages.json &&
	python3 -c '
import json
s = json.load(open(\"ci.json\"))
# running, not done: done needs the final stage, which lab masks
assert s[\"status\"] in (\"running\", \"done\"), s
assert s[\"errors\"] == [], s
assert s[\"boot_status_code\"] == \"enabled-by-kernel-cmdline\", s
assert s[\"datasource\"].startswith(\"nocloud\"), s
v = json.load(open(\"stages.json\"))[\"v1\"]
assert v[\"init\"][\"finished\"] and v[\"init\"][\"errors\"] == [], v
assert not v[\"init-local\"][\"start\"] and not v[\"modules-final\"][\"start\"], v
' &&
	printf '%s\\n' boot-ci -1 yes yes active no inactive >want-ci &&
	{ ssh_vm 'hostname; sysctl -n kernel.perf_event_paranoid
		test -d /sys/fs/cgroup/lab/quick && echo yes || echo no
		grep -qw cpu /sys/fs/cgroup/lab/cgroup.subtree_control && echo yes || echo no
		systemctl is-active cloud-init.service
		systemctl show -P ConditionResult lab-seed.service
		systemctl is-active lab-seed.service' >got-ci || true; } &&
	test_cmp want-ci got-ci &&
	ssh_vm systemctl list-units --failed --plain --no-legend >failed-ci &&
	test_line_count = 0 failed-ci
"

test_expect_success 'the cached image was not written' "
	cleanup_vm &&
	sha256sum -c image.sha
"

test_done
