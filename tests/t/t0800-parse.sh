#!/bin/sh
# Workload parsers on outputs recorded from real runs in a TCG guest
# (tests/data/parse/<prefix>-<case>.raw; the prefixes are in PARSERS):
#   <case>.raw -> <case>.metrics   one "metric value" per line
#   bad-<...>.raw -> <...>.err     a clear error and exit 1, never a zero metric
# lab-test-seconds: 75 (alone here on 2026-12-06: 61 s)
. "$(dirname "$0")/test-lib.sh"

DATA=$TEST_DIRECTORY/data/parse
W=$SRC_DIR/workloads
REGEN=${LAB_TEST_REGENERATE:-}

golden() {
	if [ -n "$REGEN" ]; then cp "$2" "$1"; else test_cmp "$1" "$2"; fi
}

# Python starts in 0.4 s here: each recorded output is parsed once, by its
# golden test, and the checks over all of them read what it printed
# (<case>.out); a case whose golden test failed has none, and they fail.

# prefix -> parser (workloads, then monitors)
PARSERS="sng:stress-ng hb:hackbench pg:pg-sysbench ff:ffmpeg-multi kb:kbuild pi:pi-stress ip:iperf3
	pv:monitors/proc-vmstat cs:monitors/cpu-stat zp:monitors/zoneinfo-pcp pp:monitors/perf-profile
	pl:monitors/perf-lock ls:monitors/lock-stat ps:monitors/perf-stat vm:monitors/vmstat
	mi:monitors/meminfo sd:monitors/sched-debug ir:monitors/interrupts tw:monitors/tg-load-writes
	cm:monitors/cpupri-masks in:monitors/insn"

parser() {
	c=$(basename "$1")
	c=${c#bad-}
	for p in $PARSERS; do
		case $c in "${p%%:*}"-*) echo "$W/${p#*:}/parse"; return ;; esac
	done
	echo "no parser for $1" >&2
	return 1
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
			test -s actual &&
			cp actual '$c.out'
		"
		;;
	esac
done

test_expect_success 'insn: insn.per_work is insn.total over the unit of work lab passes, and only with one' "
	LAB_WORK=1000 LAB_WORK_METRIC=hackbench.messages '$W/monitors/insn/parse' '$DATA/in-2vcpu.raw' >pw &&
	test_grep -q '^insn.per_work 2.35738e+06\$' pw &&
	LAB_WORK=0 '$W/monitors/insn/parse' '$DATA/in-2vcpu.raw' >pw0 &&
	! grep -q per_work pw0 &&
	test_must_fail_with 1 env LAB_WORK=lots '$W/monitors/insn/parse' '$DATA/in-2vcpu.raw' 2>err &&
	test_grep -q \"LAB_WORK 'lots' is not a number\" err
"

test_expect_success 'tg-load-writes: per_work is the writes over the unit of work lab passes, per function too, and only with one' "
	LAB_WORK=160000 LAB_WORK_METRIC=hackbench.messages '$W/monitors/tg-load-writes/parse' '$DATA/tw-hackbench.raw' >pw &&
	test_grep -q '^tg-load-writes.per_work 0.0255312\$' pw &&
	test_grep -q '^tg-load-writes.update_load_avg.per_work 0.0238562\$' pw &&
	test_grep -q '^tg-load-writes.total 4085\$' pw &&
	LAB_WORK=0 '$W/monitors/tg-load-writes/parse' '$DATA/tw-hackbench.raw' >pw0 &&
	! grep -q per_work pw0 &&
	test_must_fail_with 1 env LAB_WORK=lots '$W/monitors/tg-load-writes/parse' '$DATA/tw-hackbench.raw' 2>err &&
	test_grep -q \"LAB_WORK 'lots' is not a number\" err
"

test_expect_success 'every parser has a recorded output and a refused one' "
	for p in \$PARSERS; do
		ls '$DATA'/\${p%%:*}-*.raw >/dev/null && ls '$DATA'/bad-\${p%%:*}-*.raw >/dev/null || exit 1
	done
"

test_expect_success 'every metric name is in the dotted families' "
	for raw in '$DATA'/[!b]*.raw; do
		cat \"\$(basename \"\$raw\" .raw).out\" || exit 1
	done >all &&
	test -s all &&
	! grep -v '^\\(stress-ng\\|hackbench\\|sysbench\\|ffmpeg\\|kbuild\\|pi-stress\\|iperf3\\|proc-vmstat\\|cpu-stat\\|zoneinfo-pcp\\|perf-profile\\|lock\\.contention\\|lock_stat\\|perf-stat\\|vmstat\\|meminfo\\|sched_debug\\|interrupts\\|tg-load-writes\\|cpupri-masks\\|insn\\)\\.[^ ]* -\\?[0-9.e+-]*\$' all &&
	! grep '^[^ ]* .* ' all
"

# The metrics a parser prints are the ones its yaml declares (lab validate
# checks expectations and observe entries against the declarations).
test_expect_success 'every metric a parser printed is one its yaml declares' "
	for raw in '$DATA'/[!b]*.raw; do
		p=\$(parser \"\$raw\") && d=\$(dirname \"\$p\") &&
		y=\$d/workload.yaml && { test -f \"\$y\" || y=\$d/monitor.yaml; } &&
		'$SRC_DIR/tests/tools/declared-metrics' \"\$y\" <\"\$(basename \"\$raw\" .raw).out\" || exit 1
	done
"

test_expect_success 'workload figures are never zero: a run that did nothing is visible' "
	for raw in '$DATA'/sng-*.raw '$DATA'/hb-*.raw '$DATA'/pg-*.raw '$DATA'/ff-*.raw '$DATA'/kb-*.raw \
		'$DATA'/pi-*.raw '$DATA'/ip-*.raw; do
		cat \"\$(basename \"\$raw\" .raw).out\" || exit 1
	done >w &&
	grep -q '^sysbench.tps ' w && grep -q '^ffmpeg.fps.total ' w && grep -q '^kbuild.time.total ' w &&
	! grep -v '\\(errors\\|reconnects\\|retransmits\\|lost_pct\\|overlaps\\) 0\$' w | grep ' 0\$'
"

test_done
