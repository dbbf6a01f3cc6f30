#!/bin/sh
# Golden files (libvirt's qemuxmlconftest style):
#   tests/data/plan-<case>.yaml -> .plan (text) and .plan.json, and validates silently
#   tests/data/err-<case>.yaml  -> .err: every error with FILE:LINE:COL, exit 2
#   ../lab.yaml (the shipped file) -> tests/data/lab.plan
# LAB_TEST_REGENERATE=1 rewrites the golden files; a golden file without
# its case fails the suite.
# lab-test-seconds: 20 (alone here on 2026-12-06: 16 s)
. "$(dirname "$0")/test-lib.sh"

DATA=$TEST_DIRECTORY/data
REGEN=${LAB_TEST_REGENERATE:-}

# compare_or_write GOLDEN ACTUAL
golden() {
	if [ -n "$REGEN" ]; then
		cp "$2" "$1"
	else
		test_cmp "$1" "$2"
	fi
}

for y in "$DATA"/plan-*.yaml; do
	c=$(basename "$y" .yaml)
	test_expect_success "$c validates silently" "
		(cd '$DATA' && lab validate '$c.yaml') >out 2>err &&
		test_line_count = 0 out && test_line_count = 0 err
	"
	test_expect_success "$c plan matches $c.plan" "
		(cd '$DATA' && lab -f '$c.yaml' plan) >actual &&
		golden '$DATA/$c.plan' actual
	"
	test_expect_success "$c plan --json matches $c.plan.json" "
		(cd '$DATA' && lab -f '$c.yaml' plan --json) >actual &&
		python3 -m json.tool actual >/dev/null &&
		golden '$DATA/$c.plan.json' actual
	"
done

for y in "$DATA"/err-*.yaml; do
	c=$(basename "$y" .yaml)
	test_expect_success "$c fails with $c.err" "
		(cd '$DATA' && test_must_fail_with 2 lab validate '$c.yaml') >out 2>actual &&
		test_line_count = 0 out &&
		test -s actual &&
		golden '$DATA/$c.err' actual
	"
done

test_expect_success 'the shipped lab.yaml validates and plans as lab.plan says' "
	lab -C '$SRC_DIR' validate &&
	lab -C '$SRC_DIR' plan >actual &&
	golden '$DATA/lab.plan' actual
"

test_expect_success 'every golden file belongs to a case' '
	stale=""
	for g in "$DATA"/*.plan "$DATA"/*.plan.json "$DATA"/*.err; do
		[ -e "$g" ] || continue
		b=$(basename "$g"); b=${b%.json}; b=${b%.plan}; b=${b%.err}
		[ "$b" = lab ] && continue
		[ -f "$DATA/$b.yaml" ] || stale="$stale $g"
	done
	[ -z "$stale" ] || { echo "unused golden files:$stale" >&2; exit 1; }
'

test_expect_success 'there are at least 30 malformed cases' '
	n=$(ls "$DATA"/err-*.yaml | wc -l)
	[ "$n" -ge 30 ] || { echo "only $n err-*.yaml cases" >&2; exit 1; }
'

test_done
