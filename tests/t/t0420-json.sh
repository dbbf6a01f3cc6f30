#!/bin/sh
# The global --json, honoured by every command that runs without a VM:
# stdout is one valid JSON document (python3's json.tool is the judge),
# a listing or a record, a summary of what was done, or {"error": ...}.
# The same --json given after the command does the same.
# lab-test-seconds: 30 (alone here on 2026-12-06: 24 s)
. "$(dirname "$0")/test-lib.sh"

command -v python3 >/dev/null 2>&1 || test_skip_all 'python3 is not installed'

LAB_STATE_DIR=$TRASH/state LAB_CACHE_DIR=$TRASH/cache
export LAB_STATE_DIR LAB_CACHE_DIR

# json_ok EXPECTED_EXIT FILE -- lab ARGS...: lab's stdout is one JSON document
json_ok() {
	want=$1 out=$2
	shift 3
	rc=0
	"$@" >"$out" 2>"$out.err" || rc=$?
	test "$rc" = "$want" || { echo "exit $rc, not $want: $*" >&2; cat "$out.err" >&2; return 1; }
	python3 -m json.tool "$out" >/dev/null || { echo "not JSON: $*" >&2; cat "$out" >&2; return 1; }
}

ID=20261130-120000-beef
mkdir -p p/results/$ID/runs/e.0001 p/results/$ID/runs/e.0002
printf 'base\npatched\n' >p/results/$ID/variants
printf '0\tm.tps\tincrease\t0.02\n' >p/results/$ID/expect
printf '# lab journal 1 experiment=e\ne.0001\tok\tbase\t0\t1\tw\t6.1-lab-base\t-\ne.0002\tok\tpatched\t0\t1\tw\t6.1-lab-patched\t-\n' \
	>p/results/$ID/journal
printf 'm.tps 10\n' >p/results/$ID/runs/e.0001/metrics
printf 'm.tps 12\n' >p/results/$ID/runs/e.0002/metrics

test_expect_success 'init, validate, plan' '
	json_ok 0 init.json -- lab --json init p &&
	python3 -c "import json; d = json.load(open(\"init.json\")); assert d[\"files\"] > 1, d" &&
	json_ok 0 validate.json -- lab --json -C p validate &&
	json_ok 0 plan.json -- lab --json -C p plan quick &&
	python3 -c "import json; assert len(json.load(open(\"plan.json\"))) > 1"
'

test_expect_success 'kernel list and show, image list, vm ls and xml' '
	json_ok 0 kl.json -- lab --json -C p kernel list &&
	json_ok 0 ks.json -- lab --json -C p kernel show base &&
	json_ok 0 il.json -- lab --json -C p image list &&
	json_ok 0 vl.json -- lab --json vm ls &&
	json_ok 0 vx.json -- lab --json -C p vm xml quick-2x2 --accel tcg &&
	python3 -c "import json; d = json.load(open(\"vx.json\")); assert d[\"xml\"].startswith(\"<domain\"), d"
'

test_expect_success 'ls, report, compare, bundle, fetch' "
	json_ok 0 ls.json -- lab --json -C p ls &&
	json_ok 0 report.json -- lab --json -C p report $ID &&
	json_ok 0 compare.json -- lab --json -C p compare $ID $ID &&
	json_ok 0 bundle.json -- lab --json -C p bundle $ID -o ../b.tar.zst &&
	mkdir q &&
	json_ok 0 fetch.json -- lab --json -C q fetch ../b.tar.zst
"

test_expect_success 'doctor, gc, help' '
	json_ok 0 gc.json -- lab --json gc --dry-run &&
	rc=0 && lab --json doctor >doctor.json || rc=$? &&
	test $rc -le 1 && python3 -m json.tool doctor.json >/dev/null &&
	json_ok 0 help.json -- lab --json help &&
	json_ok 0 options.json -- lab --json help --options
'

test_expect_success 'errors are {"error": ...} on stdout, for every kind of mistake' "
	json_ok 2 e1.json -- lab --json run --bogus &&
	json_ok 2 e2.json -- lab --json -C p kernel build --jobs 0 &&
	json_ok 2 e3.json -- lab --json -C p host check --cmdline x local &&
	json_ok 2 e4.json -- lab --json -C p report --format pdf $ID &&
	json_ok 1 e5.json -- lab --json -C p image show minimal &&
	json_ok 1 e6.json -- lab --json vm down no-such-vm &&
	json_ok 2 e7.json -- lab --json nosuchcommand &&
	for f in e1 e2 e3 e4 e5 e6 e7; do
		python3 -c \"import json, sys; assert 'error' in json.load(open(sys.argv[1])), sys.argv[1]\" \$f.json || exit 1
	done
"

test_expect_success 'the --json given after the command is the global one' "
	json_ok 0 v2.json -- lab -C p validate --json &&
	json_ok 0 r2.json -- lab -C p report $ID --json &&
	test_cmp report.json r2.json &&
	json_ok 0 k2.json -- lab -C p kernel list --json &&
	test_cmp kl.json k2.json &&
	json_ok 2 e8.json -- lab -C p gc --bogus --json
"

test_done
