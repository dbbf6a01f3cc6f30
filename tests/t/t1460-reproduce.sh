#!/bin/sh
# lab reproduce for real (the base and tg-ratelimit kernels from the tests'
# cache, the minimal image, a 1-vCPU guest, a tiny workload whose figure
# the patched kernel raises by half): a stored run made with --set is
# bundled, and in an empty folder outside the project `lab reproduce
# BUNDLE` fetches it, holds each kernel's merged .config to the recorded
# one (the cached build's, by its content key), runs the same plan with
# the same --set values, stores a new run that names the original, and
# says "reproduced"; lab report of the new run shows both side by side
# (text, JSON, HTML in Chromium when installed). A run whose recorded
# .config is not what this machine builds is refused, the differing
# option named, with nothing booted.
#   make test-full: also a run's reproduce.sh, from an unpacked bundle, is
#   lab reproduce on its folder (--repeat 1: one run a kernel cannot
#   decide: inconclusive, exit 0): the same reproduction by another door,
#   two boots more.
# lab-test-seconds: 145 (make test here: 151 s and 134 s on 2026-12-06/07, one boot a kernel; make test-full's 6 boots took 179 s alone)
# lab-test-seconds-full: 260
# lab-test-boots: 4
# lab-test-boots-full: 6
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

# a project of its own, copied (a snapshot keeps only what is inside it)
mkdir proj && cp -r "$SRC_DIR/kernels" "$SRC_DIR/images" "$SRC_DIR/workloads" proj/ || exit 1
"$SRC_DIR/tests/tools/kernelmark" proj/workloads || exit 1
python3 - "$P/lab.yaml" proj/lab.yaml <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace("topologies:\n", """topologies:
  tiny:
    sockets: 1
    cores: 1
    memory: 1G
""", 1)
s = s[:s.index("experiments:")] + """experiments:
  rep:
    kernels: [base, tg-ratelimit]
    topology: tiny
    image: minimal
    repeat: ${repeat}
    boot: once
    # one boot a kernel serves its runs: the test asserts what is
    # reproduced, not the noise between boots (2 boots a run, not 4)
    decide: {min-boots: 1}
    timeout: 5m
    workloads:
      - workload: kernelmark
        expect:
          kernelmark.x: {direction: increase, mde: 10%}
"""
open(sys.argv[2], "w").write(s)
PY
OUT=$(mktemp -d "${TMPDIR:-/tmp}/lab-t1460.XXXXXX") || exit 1
# lab reproduce checks a snapshot out under TMPDIR: this test's own, to see it go
mkdir "$TRASH/tmp" && export TMPDIR="$TRASH/tmp"
trap 'rm -rf "$OUT"
	lab -C "$P" -q vm down --all >/dev/null 2>&1
	test_remove_trash' EXIT
mkdir "$OUT/empty" "$OUT/unpacked" "$OUT/again"

# the run folder a `lab run` made, from its first line
run_dir() { sed -n 's/^lab: run [^ ]*: experiment [^,]*, [0-9]* runs, results in //p' "$1" | head -n 1; }

test_expect_success 'a stored run of a small experiment, made with --set, bundled' "
	lab -C '$P' -q kernel build base tg-ratelimit &&
	lab -C '$P' -q image build minimal &&
	lab -C proj --set repeat=3 run rep >orig.out 2>orig.err &&
	test_grep 'improved  *tg-ratelimit kernelmark.x' orig.out &&
	ID=\$(basename \"\$(run_dir orig.err)\") && test -n \"\$ID\" && echo \"\$ID\" >id &&
	(cd proj && lab bundle \$ID -o '$OUT/b.tar.zst' >/dev/null)
"
ID=$(cat id 2>/dev/null)

test_expect_success 'lab reproduce BUNDLE in an empty folder: the same plan again, reproduced' "
	(cd '$OUT/empty' && lab reproduce ../b.tar.zst >'$PWD/rep.out' 2>'$PWD/rep.err') &&
	cat rep.err &&
	test_grep 'kernel base: merged .config [0-9a-f]* as recorded (the cached build.s)' rep.err &&
	test_grep 'kernel tg-ratelimit: merged .config [0-9a-f]* as recorded' rep.err &&
	test_grep \"^reproduction of \$ID by [0-9-]*[0-9a-f]*: reproduced\" rep.out &&
	ls '$OUT/empty/results' | grep '^2026' >runs && test_line_count = 2 runs &&
	NEW=\$(grep -vx \"\$ID\" runs) && echo \"\$NEW\" >new &&
	test \"\$(cat '$OUT/empty/results/'\$NEW/reproduces)\" = \"\$ID\" &&
	test \"\$(cat '$OUT/empty/results/'\$NEW/set)\" = repeat=3 &&
	run_journal '$OUT/empty/results/'\$NEW >journal && test_line_count = 6 journal && ! grep -v '	ok	' journal &&
	! ls -A '$OUT/empty/results' '$TRASH/tmp' | grep -q '^lab-reproduce-'
"

test_expect_success 'lab report of the reproduction shows original and reproduction side by side' "
	NEW=\$(cat new) &&
	(cd '$OUT/empty' && lab report \$NEW) >report &&
	test_grep \"reproduction of \$ID by \$NEW: reproduced\" report &&
	test_grep 'kernelmark.x' report &&
	(cd '$OUT/empty' && lab --json report \$NEW) >report.json &&
	python3 - report.json \$ID <<-\\PY &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	r = d[\"reproduction\"]
	assert r[\"original\"] == sys.argv[2] and r[\"verdict\"] == \"reproduced\", r
	assert [e[\"state\"] for e in r[\"expectations\"]] == [\"reproduced\"], r
	PY
	(cd '$OUT/empty' && lab report \$NEW --format html) >report.html &&
	test_grep \"<section class='reproduction'>\" report.html &&
	if test_have_prereq CHROMIUM; then
		'$SRC_DIR/tests/tools/browser-check' --no-console-errors --self-contained --captions-above \
			--no-e-notation --contains reproduced report.html
	fi
"

test_expect_success FULL 'reproduce.sh of an unpacked bundle is lab reproduce on its folder' "
	tar -C '$OUT/unpacked' --zstd -xf '$OUT/b.tar.zst' &&
	test_grep 'exec lab reproduce' '$OUT/unpacked/'\$ID/runs/rep.0001/reproduce.sh &&
	(cd '$OUT/again' && PATH=\"\$(dirname \"\$LAB\"):\$PATH\" sh '$OUT/unpacked/'\$ID/runs/rep.0001/reproduce.sh --repeat 1 \
		>'$PWD/sh.out' 2>'$PWD/sh.err') &&
	test_grep \"^reproduction of \$ID by [0-9a-f-]*: inconclusive\" sh.out &&
	ls '$OUT/again/results' | grep -c '^2026' | grep -qx 1
"

test_expect_success 'a recorded .config this machine does not build: refused, the option named, nothing booted' "
	mkdir cfg && cp -r '$OUT/empty/results/'\$ID cfg/ && rm -f cfg/\$ID/MANIFEST &&
	lab snapshot checkout cfg/\$ID tree >/dev/null &&
	sed 's/^CONFIG_NUMA=y\$/# CONFIG_NUMA is not set/' tree/built/kernels/base.config >flipped.config &&
	! cmp -s flipped.config tree/built/kernels/base.config &&
	rm -r cfg/\$ID/snapshot &&
	lab -C proj --set repeat=3 snapshot write rep '$PWD/cfg/'\$ID --kernel-config base='$PWD/flipped.config' \
		--kernel-config tg-ratelimit='$PWD/tree/built/kernels/tg-ratelimit.config' \
		--packages minimal='$PWD/tree/built/images/minimal.packages.txt' &&
	ls '$OUT/empty/results' >before &&
	(cd '$OUT/empty' && test_must_fail_with 1 lab reproduce '$PWD/cfg/'\$ID 2>'$PWD/cfg.err') &&
	test_grep 'kernel base: its merged .config differs from the recorded one (built/kernels/base.config' cfg.err &&
	test_grep '^  CONFIG_NUMA: n -> y' cfg.err &&
	test_grep 'refused, nothing was booted' cfg.err &&
	ls '$OUT/empty/results' >after && test_cmp before after
"

test_done
