#!/bin/sh
# lab reproduce refuses bad input before anything is built or booted (no
# VM): a run without a snapshot gets the list of what it lacks; an edited
# patch line inside an unpacked bundle is refused naming the patch; a file
# of an unpacked bundle that does not match its MANIFEST is refused; a
# snapshot whose lab.yaml names a file it does not hold is refused naming
# lab.yaml's line and the file; a recorded source this machine does not
# have is refused naming both identities. Nothing is added to the results
# folder by a refusal but the original run it was given.
. "$(dirname "$0")/test-lib.sh"

ID=20261201-120000-5a5a
OLD=20261201-120000-01d0
mkdir -p proj/results
python3 "$SRC_DIR/tests/tools/fabricate-run" proj/results $ID &&
python3 "$SRC_DIR/tests/tools/fabricate-run" proj/results $OLD &&
cp "$SRC_DIR/lab.yaml" proj/results/$ID/lab.yaml &&
cp "$SRC_DIR/lab.yaml" proj/results/$OLD/lab.yaml &&
printf 'CONFIG_NUMA=y\n' >base.config && printf 'CONFIG_NUMA=y\nCONFIG_X=y\n' >tg.config &&
printf 'stress-ng=0.15\n' >packages.txt &&
lab -f "$SRC_DIR/lab.yaml" snapshot write quick proj/results/$ID \
	--kernel-config base=base.config --kernel-config tg-ratelimit=tg.config --packages minimal=packages.txt &&
(cd proj && lab bundle $ID -o ../b.tar.zst >/dev/null && lab bundle $OLD -o ../old.tar.zst >/dev/null) || exit 1
OUT=$(mktemp -d "${TMPDIR:-/tmp}/lab-t1455.XXXXXX") || exit 1
trap 'rm -rf "$OUT" "$TRASH"' EXIT
PATCH=kernels/patches/sched-fair-ratelimit-tg-load-avg/0001-sched-fair-Ratelimit-update-to-tg-load_avg.patch
tar -C "$OUT" --zstd -xf b.tar.zst || exit 1
mkdir empty
# lab reproduce checks a snapshot out under TMPDIR: this test's own, to see it go
mkdir "$TRASH/tmp" && export TMPDIR="$TRASH/tmp"
dpkg-query -W -f='${Status}' linux-source-6.1 2>/dev/null | grep -q 'ok installed' && test_set_prereq LINUX_SOURCE

test_expect_success 'usage: one bundle, run folder or stored run; --repeat is a number' "
	(cd empty && test_must_fail_with 2 lab reproduce 2>'$PWD/err') && grep -q 'name one bundle file' err &&
	(cd empty && test_must_fail_with 2 lab reproduce a b 2>'$PWD/err') && grep -q 'name one bundle file' err &&
	(cd empty && test_must_fail_with 2 lab reproduce --repeat 0 x 2>'$PWD/err') && grep -q 'repeat' err &&
	(cd empty && test_must_fail_with 2 lab --set repeat=1 reproduce x 2>'$PWD/err') &&
	grep -q 'with the --set and --kernels values it was made with; give none' err &&
	(cd empty && test_must_fail_with 1 lab reproduce no-such-run 2>'$PWD/err') &&
	grep -q \"'no-such-run' is neither a bundle file, a run folder nor a stored run\" err &&
	lab reproduce --help | grep -q -- '--repeat N' &&
	lab --help | grep -q '^ *reproduce '
"

test_expect_success 'a bundle of a run stored before snapshots: the list of what it lacks' "
	(cd empty && test_must_fail_with 1 lab reproduce ../old.tar.zst 2>'$PWD/err') &&
	grep -q 'has no snapshot of what its lab.yaml names; missing:' err &&
	grep -q '^  config fragment kernels/configs/guest.config\$' err &&
	grep -q '^  workload stress-ng\$' err &&
	ls empty/results >ls && test_cmp - ls <<-EOF
	$OLD
	index.lock
	index.sqlite
	EOF
"

test_expect_success 'an edited patch line inside an unpacked bundle is refused naming the patch' "
	sha=\$(grep ' $PATCH\$' '$OUT/$ID/snapshot/SNAPSHOT' | cut -d' ' -f2) &&
	obj='$OUT/$ID/snapshot/objects/'\$sha && cp \"\$obj\" orig &&
	sed -i '12s/./X/' \"\$obj\" && ! cmp -s orig \"\$obj\" &&
	(cd empty && test_must_fail_with 2 lab reproduce '$OUT/$ID' 2>'$PWD/err') &&
	grep -q 'refused: $PATCH .* does not match its sha256' err &&
	cp orig \"\$obj\" &&
	ls empty/results | grep -c '^2026' | grep -qx 1
"

test_expect_success 'a file of an unpacked bundle that does not match its MANIFEST is refused' "
	cp '$OUT/$ID/journal' journal.orig &&
	printf ' ' >>'$OUT/$ID/journal' &&
	(cd empty && test_must_fail_with 2 lab reproduce '$OUT/$ID' 2>'$PWD/err') &&
	grep -q 'journal' err && grep -q -i 'manifest\|sha256\|changed' err &&
	cp journal.orig '$OUT/$ID/journal'
"

test_expect_success 'lab.yaml naming a file the snapshot does not hold: refused, naming it and its line' "
	cp -r proj/results/$ID gap && sed -i '\\| config kernels/configs/guest.config\$|d' gap/snapshot/SNAPSHOT &&
	(cd empty && test_must_fail_with 2 lab reproduce ../gap 2>'$PWD/err') &&
	grep -q '^lab.yaml:[0-9]*:[0-9]*: .*kernels/configs/guest.config' err &&
	! ls -A tmp | grep -q '^lab-reproduce'
"

test_expect_success LINUX_SOURCE 'a recorded source this machine does not have: refused, both named, nothing configured' "
	cp -r proj/results/$ID othersrc &&
	sed -i 's/^source debian-6.1 debian [^ ]*/source debian-6.1 debian linux-source-6.1=0.0-lab-test/' \
		othersrc/snapshot/SNAPSHOT &&
	grep -q 'linux-source-6.1=0.0-lab-test' othersrc/snapshot/SNAPSHOT &&
	(cd empty && XDG_CACHE_HOME='$PWD/cache' test_must_fail_with 1 lab reproduce ../othersrc 2>'$PWD/err') &&
	grep -q 'source debian-6.1: the run was built from linux-source-6.1=0.0-lab-test, this machine has linux-source-6.1=' err &&
	grep -q 'refused, nothing was booted' err &&
	! ls -A tmp | grep -q '^lab-reproduce' &&
	test \$(ls empty/results | grep -c '^2026') = 1
"

test_expect_success 'a recorded tarball source that is not here: refused naming it, nothing configured' "
	mkdir -p tarproj/src && cp -r '$SRC_DIR/kernels' '$SRC_DIR/images' '$SRC_DIR/workloads' tarproj/ &&
	echo 'not a kernel' >tarproj/src/linux-6.1.tar.xz &&
	sed 's|^    type: debian\$|    type: tarball|; s|^    package: linux-source-6.1\$|    path: src/linux-6.1.tar.xz|' \
		'$SRC_DIR/lab.yaml' >tarproj/lab.yaml &&
	grep -q 'path: src/linux-6.1.tar.xz' tarproj/lab.yaml &&
	python3 '$SRC_DIR/tests/tools/fabricate-run' tarproj/results 20261201-130000-7a7a &&
	cp tarproj/lab.yaml tarproj/results/20261201-130000-7a7a/lab.yaml &&
	lab -C tarproj snapshot write quick results/20261201-130000-7a7a --kernel-config base='$PWD/base.config' \
		--kernel-config tg-ratelimit='$PWD/tg.config' &&
	grep -q '^source debian-6.1 tarball ' tarproj/results/20261201-130000-7a7a/snapshot/SNAPSHOT &&
	rm tarproj/src/linux-6.1.tar.xz &&
	{ (cd empty && XDG_CACHE_HOME='$PWD/cache' lab reproduce ../tarproj/results/20261201-130000-7a7a \
		2>'$PWD/err'); echo \$? >rc; } &&
	grep -qx '[12]' rc && grep -q 'linux-6.1.tar.xz' err && ! grep -q 'Sanitizer' err &&
	! ls -A tmp | grep -q '^lab-reproduce' &&
	test \$(ls empty/results | grep -c '^2026') = 1
"

test_done
