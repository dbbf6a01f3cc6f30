#!/bin/sh
# Experiment snapshots without a VM: `lab snapshot write` (the library path
# `lab run` takes) keeps the shipped lab.yaml, kernels/, images/ and
# workloads/ in a stored run made by hand; its bundle, unpacked in an empty
# folder outside the project, passes `lab validate` there; an edited
# object (one patch line) is refused naming the file; a run without a
# snapshot says what it lacks; a hostile listing is refused naming its line.
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
printf 'stress-ng 0.15\n' >packages.txt || exit 1
OUT=$(mktemp -d "${TMPDIR:-/tmp}/lab-t1450.XXXXXX") || exit 1
trap 'rm -rf "$OUT"' EXIT
PATCH=kernels/patches/sched-fair-ratelimit-tg-load-avg/0001-sched-fair-Ratelimit-update-to-tg-load_avg.patch

test_expect_success 'lab snapshot write keeps what lab.yaml names, each object once' "
	lab -f '$SRC_DIR/lab.yaml' --set repeat=3 snapshot write quick proj/results/$ID \
		--kernel-config base=base.config --kernel-config tg-ratelimit=tg.config --packages minimal=packages.txt &&
	S=proj/results/$ID/snapshot/SNAPSHOT &&
	head -1 \$S | grep -qx 'lab-snapshot 1' &&
	grep -qx 'experiment quick' \$S && grep -qx 'set repeat=3' \$S &&
	grep -q '^source debian-6.1 debian ' \$S &&
	grep -q ' 644 spec lab.yaml\$' \$S &&
	grep -q ' 644 patch $PATCH\$' \$S &&
	grep -q ' 644 config kernels/configs/guest.config\$' \$S &&
	grep -q ' 644 recipe images/minimal.yaml\$' \$S &&
	grep -q ' 755 catalogue workloads/stress-ng/run\$' \$S &&
	grep -q ' catalogue workloads/monitors/perf-profile/monitor.yaml\$' \$S &&
	grep -q ' kernel-config built/kernels/tg-ratelimit.config\$' \$S &&
	grep -q ' packages built/images/minimal.packages.txt\$' \$S &&
	files=\$(grep -c '^file ' \$S) && objs=\$(grep '^file ' \$S | cut -d' ' -f2 | sort -u | wc -l) &&
	test \$(ls proj/results/$ID/snapshot/objects | wc -l) -eq \$objs &&
	test \$objs -le \$files &&
	lab -f '$SRC_DIR/lab.yaml' snapshot write quick proj/results/$ID &&
	lab snapshot show proj/results/$ID >show && grep -q '^file ' show
"

test_expect_success 'lab snapshot show escapes what the listing carries: C1 controls, bidi overrides, invalid UTF-8' "
	cp -r proj/results/$ID c1-listing &&
	python3 - c1-listing/snapshot/SNAPSHOT <<-'PY' &&
	import sys
	p = sys.argv[1]
	s = open(p, 'rb').read()
	s = s.replace(b'experiment quick\\n', b'experiment quick\\nset repeat=3\\xc2\\x9b2J\\xe2\\x80\\xae\\xff\\n')
	open(p, 'wb').write(s)
	PY
	lab snapshot show c1-listing >show 2>err &&
	! grep -q \"\$(printf '\\302\\233')\" show &&
	! grep -q \"\$(printf '\\342\\200\\256')\" show &&
	! LC_ALL=C grep -q \"\$(printf '\\377')\" show &&
	test_grep -q 'set repeat=3.u009b2J.u202e.xff' show
"

test_expect_success 'a --kernel-config or --packages file lab cannot read fails, named; nothing written' "
	mkdir proj/results/20261201-000000-beef &&
	cp '$SRC_DIR/lab.yaml' proj/results/20261201-000000-beef/lab.yaml &&
	test_must_fail_with 2 lab -f '$SRC_DIR/lab.yaml' snapshot write quick proj/results/20261201-000000-beef \\
		--kernel-config base=nosuch.config 2>err &&
	test_grep -q \"kernel-config base=nosuch.config: 'nosuch.config' is not a file lab can read\" err &&
	mkdir unreadable.d &&
	test_must_fail_with 2 lab -f '$SRC_DIR/lab.yaml' snapshot write quick proj/results/20261201-000000-beef \\
		--packages minimal=unreadable.d 2>err &&
	test_grep -q \"is not a file lab can read\" err &&
	! test -e proj/results/20261201-000000-beef/snapshot
"

test_expect_success 'the bundle lists the snapshot in its MANIFEST' "
	(cd proj && lab bundle $ID -o ../b.tar.zst >/dev/null) &&
	tar --zstd -xOf b.tar.zst $ID/MANIFEST >manifest &&
	grep -q '  snapshot/SNAPSHOT\$' manifest &&
	test \$(grep -c '  snapshot/objects/' manifest) -eq \$(ls proj/results/$ID/snapshot/objects | wc -l)
"

test_expect_success 'unpacked in an empty folder outside the project, lab validate passes there' "
	tar -C '$OUT' --zstd -xf b.tar.zst &&
	(cd '$OUT/$ID' && lab validate && lab -f lab.yaml validate && lab --json validate >'$PWD/v.json') &&
	python3 -c 'import json; d = json.load(open(\"v.json\")); assert d[\"valid\"] and d[\"snapshot\"], d' &&
	(cd '$OUT/$ID' && lab validate) 2>err && test ! -s err &&
	ls '$OUT/$ID' >after && ! grep -qx kernels after &&
	lab snapshot checkout '$OUT/$ID' tree >/dev/null &&
	cmp tree/$PATCH '$SRC_DIR/$PATCH' && test -x tree/workloads/stress-ng/run &&
	test_must_fail_with 2 lab snapshot checkout '$OUT/$ID' tree 2>err && grep -q 'not an empty folder' err
"

test_expect_success 'an edited patch line in the snapshot is refused naming the file' "
	sha=\$(grep ' $PATCH\$' '$OUT/$ID/snapshot/SNAPSHOT' | cut -d' ' -f2) &&
	obj='$OUT/$ID/snapshot/objects/'\$sha && cp \"\$obj\" orig &&
	sed -i '12s/./X/' \"\$obj\" && ! cmp -s orig \"\$obj\" && test \$(wc -c <orig) -eq \$(wc -c <\"\$obj\") &&
	(cd '$OUT/$ID' && test_must_fail_with 2 lab validate 2>'$PWD/err') &&
	grep -q 'snapshot/SNAPSHOT:[0-9]*: refused: $PATCH .* does not match its sha256' err &&
	test_must_fail_with 2 lab snapshot show '$OUT/$ID' 2>err && grep -q '$PATCH' err &&
	cp orig \"\$obj\"
"

test_expect_success 'a hostile listing is refused naming its line, nothing written outside' "
	cp '$OUT/$ID/snapshot/SNAPSHOT' listing.orig &&
	for bad in 'file 0000000000000000000000000000000000000000000000000000000000000000 1 644 patch ../evil' \
		'file 0000000000000000000000000000000000000000000000000000000000000000 1 644 patch /etc/evil' \
		'file 0000000000000000000000000000000000000000000000000000000000000000 1 644 patch lab.yaml' \
		'file 0000000000000000000000000000000000000000000000000000000000000000 1 644 patch lab.yaml/x' \
		'file 0000000000000000000000000000000000000000000000000000000000000000 99999999999 644 patch x' \
		'file 0000000000000000000000000000000000000000000000000000000000000000 1 4755 patch x' \
		'bogus line'; do
		cp listing.orig '$OUT/$ID/snapshot/SNAPSHOT' && echo \"\$bad\" >>'$OUT/$ID/snapshot/SNAPSHOT' &&
		n=\$(wc -l <'$OUT/$ID/snapshot/SNAPSHOT') &&
		test_must_fail_with 2 lab snapshot checkout '$OUT/$ID' hostile 2>err &&
		grep -q \"snapshot/SNAPSHOT:\$n: \" err || { echo \"not refused: \$bad\"; cat err; exit 1; }
		test ! -e hostile && test ! -e '$OUT/evil' || exit 1
	done &&
	cp listing.orig '$OUT/$ID/snapshot/SNAPSHOT' &&
	sed -i '1s/1/2/' '$OUT/$ID/snapshot/SNAPSHOT' &&
	test_must_fail_with 2 lab snapshot show '$OUT/$ID' 2>err && grep -q 'from a newer lab' err &&
	cp listing.orig '$OUT/$ID/snapshot/SNAPSHOT' &&
	obj=\$(ls '$OUT/$ID/snapshot/objects' | head -1) &&
	mv '$OUT/$ID/snapshot/objects/'\$obj objsave && ln -s \"\$PWD/objsave\" '$OUT/$ID/snapshot/objects/'\$obj &&
	test_must_fail_with 2 lab snapshot show '$OUT/$ID' 2>err && grep -q 'symbolic link' err &&
	rm '$OUT/$ID/snapshot/objects/'\$obj && mv objsave '$OUT/$ID/snapshot/objects/'\$obj &&
	lab snapshot show '$OUT/$ID' >/dev/null
"

test_expect_success 'a run without a snapshot opens, and says what it lacks' "
	(cd proj && lab report $OLD >/dev/null) &&
	(cd proj && lab bundle $OLD -o ../old.tar.zst >/dev/null) &&
	mkdir old && tar -C old --zstd -xf old.tar.zst &&
	(cd old/$OLD && test_must_fail_with 2 lab validate 2>'$PWD/err') &&
	grep -q 'has no snapshot' err &&
	grep -q '^  snapshot/SNAPSHOT' err && grep -q '^  config fragment kernels/configs/guest.config\$' err &&
	grep -q '^  workload stress-ng\$' err && grep -q '^  image recipe images/minimal.yaml\$' err &&
	test_must_fail_with 2 lab --json snapshot show old/$OLD >j &&
	python3 -c 'import json; d = json.load(open(\"j\")); assert d[\"snapshot\"] is False and \"workload stress-ng\" in d[\"missing\"], d'
"

# Host files a bundle's lab.yaml might name, for lab validate in the
# unpacked bundle to read; one that was read would be named by an error of
# its own (host.yaml:1:1: unknown key 'bogus').
printf 'bogus: 1\n' >host.yaml && printf 'host patch\n' >host.patch && printf 'CONFIG_HOST=y\n' >host.config &&
mkdir hostpatches && cp host.patch hostpatches/0001-host.patch || exit 1
# from a checkout folder under any TMPDIR up to /, then down to this test's folder
UP=../../../../../../../../../../../../../..

# validate_refuses LINE-PATTERN NEW COL WHAT: the unpacked bundle's lab.yaml
# with the one line matching LINE-PATTERN replaced by NEW (appended when
# LINE-PATTERN is empty), checked there with `lab validate FILE`: refused
# (exit 2) at that line and column COL, naming WHAT and NEW's value, and no
# host file read
validate_refuses() {
	y="$OUT/$ID/lab.yaml"
	if [ -n "$1" ]; then
		line=$(grep -n -- "$1" "$y" | cut -d: -f1)
		test "$(echo $line | wc -w)" = 1 || { echo "'$1' is not one line of lab.yaml"; return 1; }
		awk -v n="$line" -v s="$2" 'NR == n { print s; next } { print }' "$y" >"$OUT/$ID/hostile.yaml"
	else
		line=$(($(wc -l <"$y") + 1))
		{ cat "$y"; printf '%s\n' "$2"; } >"$OUT/$ID/hostile.yaml"
	fi
	value=${2#*: } && value=${value#[} && value=${value%]}
	(cd "$OUT/$ID" && test_must_fail_with 2 lab validate hostile.yaml) 2>err || { cat err; return 1; }
	rm "$OUT/$ID/hostile.yaml"
	grep -qF "lab.yaml:$line:$3: refused: $4 '$value' is not " err || { echo "not refused at $line:$3:"; cat err; return 1; }
	! grep -q 'host[a-z.]*:[0-9]' err || { echo 'a host file was read:'; cat err; return 1; }
}

test_expect_success "lab validate in an unpacked bundle: lab.yaml naming the host's files is refused where it names them" "
	validate_refuses '' 'include: $TRASH/host.yaml' 10 include &&
	validate_refuses '' 'include: $UP$TRASH/host.yaml' 10 include &&
	(HOME='$TRASH' && export HOME && validate_refuses '' 'include: ~/host.yaml' 10 include) &&
	validate_refuses 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: [$TRASH/host.patch]' 15 patch &&
	validate_refuses 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: [$UP$TRASH/host.patch]' 15 patch &&
	validate_refuses 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: $TRASH/hostpatches' 14 'patch folder' &&
	validate_refuses 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: $UP$TRASH/hostpatches' 14 'patch folder' &&
	validate_refuses 'patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$' \
		'    patches: [kernels/patches/not-in-the-snapshot.patch]' 15 patch &&
	validate_refuses 'config: \[kernels/configs/lockstat.config\]\$' \
		'    config: [$TRASH/host.config]' 14 'config fragment' &&
	validate_refuses 'recipe: images/minimal.yaml\$' '    recipe: $TRASH/host.yaml' 13 'image recipe' &&
	(cd '$OUT/$ID' && lab validate)
"

test_expect_success "a bundle's lab.yaml runs no command here: a host's power-cycle is refused where it is" "
	y='$OUT/$ID/lab.yaml' &&
	n=\$(grep -n '^hosts:\$' \"\$y\" | cut -d: -f1) &&
	awk -v n=\"\$n\" '{ print } NR == n { print \"  box:\"; print \"    ssh: root@127.0.0.1:22\"; print \"    power-cycle: [touch, $TRASH/pwned]\" }' \
		\"\$y\" >'$OUT/$ID/hostile.yaml' &&
	(cd '$OUT/$ID' && test_must_fail_with 2 lab validate hostile.yaml) 2>err &&
	rm '$OUT/$ID/hostile.yaml' &&
	grep -qF \"lab.yaml:\$((n + 3)):18: refused: a snapshot's lab.yaml runs no command on this machine (power-cycle)\" err &&
	test ! -e '$TRASH/pwned'
"

test_expect_success "a project's own lab.yaml still names any file, outside the project too" "
	mkdir own && cp -r '$SRC_DIR/kernels' '$SRC_DIR/images' '$SRC_DIR/workloads' own/ &&
	sed 's|^    patches: kernels/patches/sched-fair-ratelimit-tg-load-avg\$|    patches: [$TRASH/host.patch]|' \
		'$SRC_DIR/lab.yaml' >own/lab.yaml && grep -q '$TRASH/host.patch' own/lab.yaml &&
	printf 'vars: {host_var: 1}\n' >hostvars.yaml && echo 'include: $TRASH/hostvars.yaml' >>own/lab.yaml &&
	lab -C own validate
"

test_expect_success 'an unpacked bundle from before snapshots: its lab.yaml reads no host file either' "
	cp old/$OLD/lab.yaml old.yaml && echo 'include: $TRASH/host.yaml' >>old/$OLD/lab.yaml &&
	n=\$(wc -l <old/$OLD/lab.yaml) &&
	(cd old/$OLD && test_must_fail_with 2 lab validate 2>'$PWD/err') &&
	grep -qF \"lab.yaml:\$n:10: refused: include '$TRASH/host.yaml' is not a path inside the run's snapshot\" err &&
	! grep -q 'host.yaml:[0-9]' err && grep -q 'has no snapshot' err &&
	cp old.yaml old/$OLD/lab.yaml
"

test_done
