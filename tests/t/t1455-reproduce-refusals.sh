#!/bin/sh
# lab reproduce refuses bad input before anything is built or booted (no
# VM): a run without a snapshot gets the list of what it lacks; an edited
# patch line inside an unpacked bundle is refused naming the patch; a file
# of an unpacked bundle that does not match its MANIFEST is refused; a
# snapshot whose lab.yaml names a file it does not hold is refused naming
# lab.yaml's line and the file; a recorded source this machine does not
# have is refused naming both identities. Nothing is added to the results
# folder by a refusal but the original run it was given.
# lab-test-seconds: 14 (alone here on 2026-12-06: 11 s)
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
	(cd empty && test_must_fail_with 2 lab reproduce no-such-run 2>'$PWD/err') &&
	grep -q \"'no-such-run' is neither a bundle file, a run folder nor a stored run\" err &&
	lab reproduce --help | grep -q -- '--repeat N' &&
	lab --help | grep -q '^ *reproduce '
"

test_expect_success 'a bundle of a run stored before snapshots: the list of what it lacks' "
	(cd empty && test_must_fail_with 2 lab reproduce ../old.tar.zst 2>'$PWD/err') &&
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

# Host files a bundle's lab.yaml might name; one lab read would be named by
# an error of its own (host.yaml:1:1: unknown key 'bogus').
printf 'bogus: 1\n' >host.yaml && printf 'host patch\n' >host.patch && mkdir hostpatches &&
cp host.patch hostpatches/0001-host.patch || exit 1
# from the checkout folder under $TMPDIR up to /, then down to this test's folder
UP=../../../../../../../../../../../../../..
# a cache lab cannot make: a reproduction that went past its refusals fails
# there, before anything is configured or built
NOCACHE=/dev/null/lab-cache

# hostile_run DIR LINE-PATTERN NEW: a copy of the stored run whose snapshot's
# lab.yaml (its object and its listing line) has the one line matching
# LINE-PATTERN replaced by NEW (NEW appended when LINE-PATTERN is empty); the
# line in $line
hostile_run() {
	cp -r proj/results/$ID "$1" &&
	sha=$(sed -n 's/^file \([0-9a-f]*\) [0-9]* 644 spec lab.yaml$/\1/p' "$1/snapshot/SNAPSHOT") &&
	y="$1/snapshot/objects/$sha" || return 1
	if [ -n "$2" ]; then
		line=$(grep -n -- "$2" "$y" | cut -d: -f1)
		test "$(echo $line | wc -w)" = 1 || { echo "'$2' is not one line of lab.yaml"; return 1; }
		awk -v n="$line" -v s="$3" 'NR == n { print s; next } { print }' "$y" >new.yaml
	else
		line=$(($(wc -l <"$y") + 1))
		{ cat "$y"; printf '%s\n' "$3"; } >new.yaml
	fi
	nsha=$(sha256sum new.yaml | cut -d' ' -f1) && size=$(wc -c <new.yaml) &&
	mv new.yaml "$1/snapshot/objects/$nsha" &&
	sed -i "s/^file $sha [0-9]* 644 spec lab.yaml\$/file $nsha $size 644 spec lab.yaml/" "$1/snapshot/SNAPSHOT" &&
	grep -q "^file $nsha $size 644 spec lab.yaml\$" "$1/snapshot/SNAPSHOT"
}

# reproduce_refuses DIR LINE-PATTERN NEW COL WHAT: lab reproduce of such a
# run is refused (exit 2) at that line and column COL of lab.yaml, naming
# WHAT and NEW's value; no host file read, no checkout left, nothing stored
reproduce_refuses() {
	hostile_run "$1" "$2" "$3" || return 1
	value=${3#*: } && value=${value#[} && value=${value%]}
	(cd empty && XDG_CACHE_HOME=$NOCACHE test_must_fail_with 2 lab reproduce "../$1") 2>err || { cat err; return 1; }
	grep -qF "lab.yaml:$line:$4: refused: $5 '$value' is not " err || { echo "not refused at $line:$4:"; cat err; return 1; }
	! grep -q 'host[a-z.]*:[0-9]' err || { echo 'a host file was read:'; cat err; return 1; }
	! ls -A tmp | grep -q '^lab-reproduce' && test $(ls empty/results | grep -c '^2026') = 1
}

test_expect_success "a snapshot whose lab.yaml names the host's files: refused where it names them, before anything" "
	reproduce_refuses h-inc '' 'include: $TRASH/host.yaml' 10 include &&
	reproduce_refuses h-up '' 'include: $UP$TRASH/host.yaml' 10 include &&
	reproduce_refuses h-patch 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: [$TRASH/host.patch]' 15 patch &&
	reproduce_refuses h-series 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: $TRASH/hostpatches' 14 'patch folder' &&
	reproduce_refuses h-upseries 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: $UP$TRASH/hostpatches' 14 'patch folder'
"

test_expect_success 'a bundle whose run is stored already, the same run: its stored copy is reproduced' "
	mkdir -p hproj/results && hostile_run hproj/results/$ID '' 'include: $TRASH/host.yaml' &&
	(cd hproj && lab bundle $ID -o ../h.tar.zst >/dev/null) &&
	(cd hproj && XDG_CACHE_HOME=$NOCACHE test_must_fail_with 2 lab reproduce ../h.tar.zst 2>'$PWD/err') &&
	grep -q \"run $ID is already stored in .*/hproj/results, the same as the bundle's: reproducing the stored copy\" err &&
	grep -qF \"lab.yaml:\$line:10: refused: include '$TRASH/host.yaml' is not a path inside\" err &&
	mkdir hfetched && (cd hfetched && lab fetch ../h.tar.zst >/dev/null) && test -f hfetched/results/$ID/report.html &&
	(cd hfetched && XDG_CACHE_HOME=$NOCACHE test_must_fail_with 2 lab reproduce ../h.tar.zst 2>'$PWD/err') &&
	grep -q 'the same as the bundle.s: reproducing the stored copy' err && grep -q 'refused: include' err &&
	! ls -A tmp | grep -q '^lab-reproduce' && ! ls -A hfetched/results | grep -q '^\.fetch'
"

# stored_differs NAME CHANGE: the run as lab run stored it (no MANIFEST, no
# reports) copied to NAME/results, then CHANGE (commands, run in
# NAME/results/$ID); lab reproduce of its bundle there is refused (exit 2)
# before anything, naming the run and the first difference; the output in err
stored_differs() {
	mkdir -p "$1/results" && cp -r proj/results/$ID "$1/results/" && (cd "$1/results/$ID" && eval "$2") &&
	(cd "$1" && XDG_CACHE_HOME=$NOCACHE test_must_fail_with 2 lab reproduce ../b.tar.zst) 2>err || { cat err; return 1; }
	grep -q "reproduce: refused: run $ID is already stored in .*/$1/results, and the stored copy differs from the bundle ../b.tar.zst" err &&
	! grep -q 'reproducing the stored copy' err && ! ls -A tmp | grep -q '^lab-reproduce' &&
	ls -A "$1/results" | grep -v '^index\.' >ls && echo $ID | test_cmp - ls || { cat err; return 1; }
}

test_expect_success 'a bundle whose run id is stored with other content: refused, exit 2, the difference named' "
	stored_differs other-metrics 'printf \"m.tps 1.000\\n\" >runs/e.0001/metrics' &&
	grep -q '(runs/e.0001/metrics: not the bundle.s (sha256 [0-9a-f]* here, [0-9a-f]* in the bundle))' err &&
	stored_differs other-extra 'echo x >runs/e.0001/extra' && grep -q '(runs/e.0001/extra: only the stored copy has it)' err &&
	stored_differs other-less 'rm runs/e.0002/metrics' && grep -q '(runs/e.0002/metrics: only the bundle has it)' err &&
	stored_differs other-snapshot 'sed -i s/^experiment.*/experiment\\ other/ snapshot/SNAPSHOT' &&
	grep -q '(snapshot/SNAPSHOT: not the bundle' err
"

test_expect_success 'another bundle of the same run id fetched before (its MANIFEST agreeing): refused all the same' "
	mkdir fetched-other && (cd fetched-other && lab fetch ../b.tar.zst >/dev/null) &&
	r=fetched-other/results/$ID && printf 'm.tps 1.000\\n' >\$r/runs/e.0001/metrics &&
	sum=\$(sha256sum \$r/runs/e.0001/metrics | cut -d' ' -f1) &&
	sed -i \"s|^[0-9a-f]*  runs/e.0001/metrics\\\$|\$sum  runs/e.0001/metrics|\" \$r/MANIFEST &&
	(cd \$r && sha256sum -c --quiet MANIFEST) &&
	(cd fetched-other && XDG_CACHE_HOME=$NOCACHE test_must_fail_with 2 lab reproduce ../b.tar.zst 2>'$PWD/err') &&
	grep -q \"refused: run $ID is already stored in .*/fetched-other/results, and the stored copy differs from the bundle\" err &&
	grep -q 'runs/e.0001/metrics: not the bundle' err && grep -q 'lab fetch --replace ../b.tar.zst' err &&
	! ls -A fetched-other/results | grep -q '^\\.fetch'
"

test_done
