#!/bin/sh
# Workload parsers on outputs recorded from real runs in a TCG guest
# (tests/data/parse/<prefix>-<case>.raw; sng = stress-ng, hb = hackbench,
# pv, cs, zp = the proc-vmstat, cpu-stat and zoneinfo-pcp monitors):
#   <case>.raw -> <case>.metrics   one "metric value" per line
#   bad-<...>.raw -> <...>.err     a clear error and exit 1, never a zero metric
. "$(dirname "$0")/test-lib.sh"

DATA=$TEST_DIRECTORY/data/parse
W=$SRC_DIR/workloads
REGEN=${LAB_TEST_REGENERATE:-}

golden() {
	if [ -n "$REGEN" ]; then cp "$2" "$1"; else test_cmp "$1" "$2"; fi
}

parser() {
	case $(basename "$1") in
	sng-* | bad-sng-*) echo "$W/stress-ng/parse" ;;
	hb-* | bad-hb-*) echo "$W/hackbench/parse" ;;
	pv-* | bad-pv-*) echo "$W/monitors/proc-vmstat/parse" ;;
	cs-* | bad-cs-*) echo "$W/monitors/cpu-stat/parse" ;;
	zp-* | bad-zp-*) echo "$W/monitors/zoneinfo-pcp/parse" ;;
	esac
}

for raw in "$DATA"/*.raw; do
	c=$(basename "$raw" .raw)
	p=$(parser "$raw")
	case $c in
	bad-*)
		test_expect_success "$c is refused with $c.err" "
			test_must_fail_with 1 '$p' '$raw' >out 2>actual &&
			test_line_count = 0 out &&
			sed 's#$DATA/##' actual >err &&
			golden '$DATA/$c.err' err
		"
		;;
	*)
		test_expect_success "$c parses to $c.metrics" "
			'$p' '$raw' >actual 2>err &&
			test_line_count = 0 err &&
			golden '$DATA/$c.metrics' actual &&
			test -s actual
		"
		;;
	esac
done

test_expect_success 'every metric name is in the dotted families' "
	for raw in '$DATA'/sng-*.raw '$DATA'/hb-*.raw '$DATA'/pv-*.raw '$DATA'/cs-*.raw '$DATA'/zp-*.raw; do
		\"\$(parser \"\$raw\")\" \"\$raw\"
	done >all &&
	! grep -v '^\\(stress-ng\\|hackbench\\|proc-vmstat\\|cpu-stat\\|zoneinfo-pcp\\)\\.[A-Za-z0-9_.-]* -\\?[0-9.e+-]*\$' all
"

test_expect_success 'workload figures are never zero: a stressor that did nothing is visible' "
	for raw in '$DATA'/sng-*.raw '$DATA'/hb-*.raw; do \"\$(parser \"\$raw\")\" \"\$raw\"; done >w &&
	! grep ' 0\$' w
"

test_done
