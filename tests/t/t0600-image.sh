#!/bin/sh
# Image recipes and NoCloud seeds, without building an image:
#   tests/data/recipes/err-<case>.yaml -> .err (every error at FILE:LINE:COL)
#   tests/data/seed/*.user-data (golden, from test-image) and the guest
#   layer's cloud.cfg.d pass `cloud-init schema`,
#   tests/data/seed/*.lab-seed.sh and the guest layer's scripts `sh -n`
#   the image commands' behaviour on an empty cache
# t1100-image-boot.sh builds and boots a real one.
. "$(dirname "$0")/test-lib.sh"

DATA=$TEST_DIRECTORY/data
REGEN=${LAB_TEST_REGENERATE:-}
export XDG_CACHE_HOME="$PWD/cache"

command -v cloud-init >/dev/null && test_set_prereq CLOUDINIT
command -v genisoimage >/dev/null && command -v isoinfo >/dev/null && test_set_prereq GENISO
command -v qemu-img >/dev/null && test_set_prereq QEMUIMG

golden() {
	if [ -n "$REGEN" ]; then cp "$2" "$1"; else test_cmp "$1" "$2"; fi
}

# Each case is copied to x.yaml beside a lab.yaml that names it, so the
# golden files show a stable path.
for y in "$DATA"/recipes/err-*.yaml; do
	c=$(basename "$y" .yaml)
	test_expect_success "recipe $c fails with $c.err" "
		rm -rf case && mkdir case && cp '$y' case/x.yaml && cp -r '$DATA/recipes/files' case/ &&
		printf 'version: 1\nimages:\n  x:\n    recipe: x.yaml\n' >case/lab.yaml &&
		(cd case && test_must_fail_with 2 lab validate) >out 2>actual &&
		test_line_count = 0 out &&
		test -s actual &&
		golden '$DATA/recipes/$c.err' actual
	"
done

test_expect_success 'every recipe golden file belongs to a case' '
	for g in "$DATA"/recipes/*.err; do
		[ -f "${g%.err}.yaml" ] || { echo "unused golden file $g" >&2; exit 1; }
	done
'

test_expect_success 'the shipped recipes load' "
	lab -C '$SRC_DIR' validate
"

test_expect_success '--json reports recipe errors with positions' "
	rm -rf case && mkdir case && cp '$DATA/recipes/err-variant.yaml' case/x.yaml &&
	printf 'version: 1\nimages:\n  x:\n    recipe: x.yaml\n' >case/lab.yaml &&
	(cd case && test_must_fail_with 2 lab --json validate) >out &&
	python3 -c '
import json, sys
e = json.load(open(\"out\"))[\"errors\"][0]
assert (e[\"file\"], e[\"line\"], e[\"column\"]) == (\"x.yaml\", 2, 10), e
assert \"minbase\" in e[\"message\"], e
'
"

# and the guest layer's cloud-init configuration (cloud-init=enabled boots)
for u in "$DATA"/seed/*.user-data "$SRC_DIR"/images/layer/files/etc/cloud/cloud.cfg.d/*.cfg; do
	test_expect_success CLOUDINIT "cloud-init schema accepts $(basename "$u")" "
		cloud-init schema --config-file '$u' >out 2>&1 &&
		test_grep -q 'Valid cloud-config' out
	"
done

test_expect_success CLOUDINIT 'cloud-init schema is a real judge: it refuses a broken user-data' "
	sed 's/^ssh_genkeytypes: .*/ssh_genkeytypes: []/' '$DATA/seed/plain.user-data' >broken &&
	! cloud-init schema --config-file broken >out 2>&1
"

for f in "$DATA"/seed/*.lab-seed.sh "$SRC_DIR"/images/layer/files/usr/lib/lab/seed \
	"$SRC_DIR"/images/layer/customize "$SRC_DIR"/images/layer/finalize; do
	test_expect_success "$(basename "$f") is a POSIX shell script (sh -n)" "
		sh -n '$f'
	"
done

test_expect_success 'lab-seed.sh does what user-data asks, values quoted' "
	s='$DATA/seed/experiment.lab-seed.sh' &&
	test_grep -q '^printf .%s.n. exp-0001 >/proc/sys/kernel/hostname\$' \"\$s\" &&
	test_grep -q '^printf .%s.n. .ssh-ed25519 AAAA[^ ]* lab. >/root/.ssh/authorized_keys\$' \"\$s\" &&
	test_grep -q '^-----END OPENSSH PRIVATE KEY-----\$' \"\$s\" &&
	test_grep -q '^mount -o ro LABEL=lab-modules /usr/lib/modules\$' \"\$s\" &&
	test \"\$(grep -c '^sysctl -w ' \"\$s\")\" = \"\$(grep -c 'sysctl, -w\\|\"sysctl\", \"-w\"' '$DATA/seed/experiment.user-data')\" &&
	! grep -q '^bootcmd\\|sysctl\\|mount' '$DATA/seed/plain.lab-seed.sh'
"

test_expect_success 'lab-seed.sh run in a scratch root: the files it writes, a failing command fails it' "
	sed -e \"s#/etc/#\$PWD/root/etc/#g\" -e \"s#/root/.ssh#\$PWD/root/root/.ssh#g\" \\
		-e \"s#/proc/sys/kernel/hostname#\$PWD/root/hostname#\" -e 's/^ip /: ip /' \\
		'$DATA/seed/plain.lab-seed.sh' >seed.sh &&
	test \"\$(grep -c '^: ip ' seed.sh)\" = 3 &&
	mkdir -p root/etc/ssh &&
	sh -eu seed.sh &&
	test \"\$(cat root/etc/hostname)\" = test-vm &&
	test \"\$(stat -c %a root/etc/ssh/ssh_host_ed25519_key)\" = 600 &&
	ssh-keygen -y -f root/etc/ssh/ssh_host_ed25519_key >derived.pub &&
	test \"\$(cut -d' ' -f1,2 derived.pub)\" = \"\$(cut -d' ' -f1,2 root/etc/ssh/ssh_host_ed25519_key.pub)\" &&
	test_grep -q '^ssh-ed25519 .* lab\$' root/root/.ssh/authorized_keys &&
	printf 'false\\n' >>seed.sh &&
	! sh -eu seed.sh
"

# lab run with a kernel and an image both missing builds the image in a
# child while the kernel compiles. Here both fail fast (a kernel tree whose
# make fails, a mirror nobody answers on): lab says so for each, waits for
# the child before it exits (as root with mmdebstrap, the child's failed
# log is there when lab returns) and exits 1 (a run failed).
test_expect_success 'lab run: a missing image builds in the background while a missing kernel builds' "
	rm -rf bg && mkdir -p bg/tree &&
	printf '%%:\\n\\t@echo no kernel in this tree >&2; exit 1\\n' >bg/tree/Makefile &&
	ln -s '$SRC_DIR/workloads' bg/workloads &&
	printf 'suite: bookworm\\nmirror: http://127.0.0.1:9/debian\\npackages: [stress-ng]\\n' >bg/img.yaml &&
	cat >bg/lab.yaml <<-EOF &&
	version: 1
	sources:
	  tree: {type: directory, path: tree}
	kernels:
	  k: {source: tree}
	images:
	  bgimg: {recipe: img.yaml}
	topologies:
	  t: {sockets: 1, cores: 1, threads: 1, memory: 1G}
	experiments:
	  e:
	    kernels: [k]
	    topology: t
	    image: bgimg
	    workloads:
	      - workload: stress-ng
	EOF
	(cd bg && test_must_fail_with 1 lab run e) >out 2>err &&
	test_grep -n 'bgimg: building in the background while the kernels compile' err >bgline &&
	test_grep -n '^lab: k: source' err >kline &&
	test \$(cut -d: -f1 bgline) -lt \$(cut -d: -f1 kline) &&
	test_grep -q 'bgimg: the background build failed too' err &&
	test_grep -q 'no kernel in this tree' err &&
	if [ \$(id -u) = 0 ] && command -v mmdebstrap >/dev/null; then
		test -s cache/lab/images/bgimg-failed.log
	fi &&
	! ls cache/lab/images | grep -q '^tmp-'
"

test_expect_success 'image list on an empty cache shows every recipe not built' "
	lab -C '$SRC_DIR' image list >list &&
	test_grep -q '^bench  *-  *not built' list &&
	test_grep -q '^minimal  *-  *not built' list &&
	lab -C '$SRC_DIR' --json image list >list.json &&
	python3 -c '
import json
rows = json.load(open(\"list.json\"))
assert {r[\"name\"] for r in rows} == {\"bench\", \"minimal\"}, rows
assert all(r[\"state\"] == \"not built\" and r[\"id\"] is None for r in rows), rows
'
"

test_expect_success 'image show and instance of an image not built exit 1 and say how to build it' "
	test_must_fail_with 1 lab -C '$SRC_DIR' image show minimal 2>err &&
	test_grep -q 'lab image build minimal' err &&
	test_must_fail_with 1 lab -C '$SRC_DIR' image instance minimal vm 2>err &&
	test_grep -q 'lab image build minimal' err &&
	! test -e vm
"

test_expect_success 'an unknown image gets a suggestion' "
	test_must_fail_with 2 lab -C '$SRC_DIR' image build minimla 2>err &&
	test_grep -q \"did you mean 'minimal'\" err
"

test_expect_success 'image without a subcommand prints usage and exits 2' "
	test_must_fail_with 2 lab -C '$SRC_DIR' image 2>err &&
	test_grep -q 'usage: lab .*image build' err &&
	test_must_fail_with 2 lab -C '$SRC_DIR' image frobnicate 2>err &&
	test_grep -q 'build, list, show, instance' err
"

test_done
