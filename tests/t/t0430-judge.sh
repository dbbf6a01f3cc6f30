#!/bin/sh
# lab judge FILE.csv: the decision engine on results from anywhere. Two
# variants, 4 boots x 3 runs each (made here, from a fixed seed): a clear
# +20% declared increase:5 is improved, a steady metric declared
# unchanged:5 is unchanged, 50 null metrics are exploratory and (nearly)
# none is flagged; --json's rows, --base's sign, the exit status of a
# regression, and errors that name the line (exit 2).
. "$(dirname "$0")/test-lib.sh"

command -v python3 >/dev/null 2>&1 || test_skip_all 'python3 is not installed'

python3 - data.csv <<'PY'
import random, sys
random.seed(430)
rows = ["variant,boot,run,metric,value"]
for v, scale in (("base", 1.0), ("patched", 1.2)):
    for b in range(4):
        boot = "%s-b%d" % (v, b + 1)
        shift = {m: random.gauss(0, 0.005) for m in ("t", "l")}
        for r in range(3):
            run = str(r + 1)
            rows.append("%s,%s,%s,hackbench.throughput,%.4f" % (v, boot, run, 1000 * scale * (1 + shift["t"]) * random.gauss(1, 0.01)))
            rows.append("%s,%s,%s,stable.latency,%.5f" % (v, boot, run, 50 * (1 + shift["l"]) * random.gauss(1, 0.005)))
            for k in range(50):
                rows.append("%s,%s,%s,null.m%02d,%.4f" % (v, boot, run, k, random.gauss(100 + k, 2)))
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
PY

EXPECT='--expect hackbench.throughput:increase:5 --expect stable.latency:unchanged:5'

test_expect_success 'declared metrics get their verdicts in the text (lab report table)' "
	lab judge data.csv $EXPECT >out &&
	test_grep -q '^run data.csv, experiment judge' out &&
	test_grep -q 'baseline base' out &&
	test_grep -q 'improved  *patched hackbench.throughput: increase 5%' out &&
	test_grep -q 'unchanged  *patched stable.latency: unchanged 5%' out
"

test_expect_success '--json: one row per metric and compared variant, declared ones with a verdict' "
	lab judge --json data.csv $EXPECT >j.json &&
	python3 - j.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))['rows']
assert len(rows) == 52, len(rows)
by = {r['metric']: r for r in rows}
keys = {'metric', 'variant', 'declared', 'verdict', 'flagged', 'p', 'q', 'change_pct', 'ci_low_pct',
        'ci_high_pct', 'boots', 'runs'}
for r in rows:
    assert keys <= set(r), r
    assert r['variant'] == 'patched', r
    assert r['boots'] == 4 and r['runs'] == 12, r
t, l = by['hackbench.throughput'], by['stable.latency']
assert t['declared'] and t['verdict'] == 'improved', t
assert 17 < t['change_pct'] < 23 and t['ci_low_pct'] > 5, t
assert l['declared'] and l['verdict'] == 'unchanged', l
assert abs(l['change_pct']) < 2 and l['q'] is None, l
null = [r for r in rows if r['metric'].startswith('null.')]
assert len(null) == 50
for r in null:
    assert r['declared'] is False and r['verdict'] is None and r['why'] is None, r
    assert 0 <= r['p'] <= 1 and r['p'] <= r['q'] <= 1, r
flagged = [r['metric'] for r in null if r['flagged']]
assert len(flagged) <= 2, flagged
PY
"

test_expect_success '--base switches the sign: the increase is now a regression (exit 1)' "
	test_must_fail_with 1 lab judge --json --base patched data.csv $EXPECT >b.json &&
	python3 - b.json <<'PY'
import json, sys
by = {r['metric']: r for r in json.load(open(sys.argv[1]))['rows']}
t = by['hackbench.throughput']
assert t['variant'] == 'base' and t['verdict'] == 'regressed', t
assert -20 < t['change_pct'] < -14 and t['ci_high_pct'] < 0, t
assert by['stable.latency']['verdict'] == 'unchanged'
PY
	test_must_fail_with 1 lab judge data.csv --expect hackbench.throughput:decrease >t.out &&
	test_grep -q 'regressed' t.out
"

test_expect_success 'statistics and levels from the options; stdin as -' "
	lab judge --statistic mann-whitney --alpha 0.01 --q 0.1 data.csv $EXPECT >mw.out &&
	test_grep -q 'mann-whitney' mw.out &&
	lab judge --json - $EXPECT <data.csv >s.json &&
	lab judge --json data.csv $EXPECT >f.json &&
	test_cmp f.json s.json &&
	lab judge --all data.csv >all.out &&
	test_grep -q 'null.m49' all.out
"

test_expect_success 'a bad row: exit 2, the message names FILE:LINE:COL' "
	cp data.csv bad.csv &&
	echo 'patched,patched-b4,3,extra.metric,12x' >>bad.csv &&
	n=\$(wc -l <bad.csv) &&
	test_must_fail_with 2 lab judge bad.csv 2>err &&
	test_grep -q \"^lab: bad.csv:\$n:\\|^bad.csv:\$n:\" err &&
	test_grep -q \"value '12x' is not a number\" err &&
	test_must_fail_with 2 lab --json judge bad.csv >err.json &&
	python3 -c \"import json, sys; d = json.load(open('err.json')); assert d['errors'][0]['line'] == \$n, d\"
"

test_expect_success 'a header without the five columns, an unreadable file, a duplicate metric' "
	printf 'variant,run,metric,value\na,1,m,1\n' >h.csv &&
	test_must_fail_with 2 lab judge h.csv 2>err &&
	test_grep -q \"h.csv:1: no column 'boot'\" err &&
	test_must_fail_with 2 lab judge no-such.csv 2>err &&
	test_grep -q \"cannot read 'no-such.csv'\" err &&
	printf 'variant,boot,run,metric,value\na,,1,m,1\nb,,1,m,2\na,,1,m,3\n' >d.csv &&
	test_must_fail_with 2 lab judge d.csv 2>err &&
	test_grep -q \"d.csv:4: metric 'm' twice in run '1' of variant 'a': lines 2 and 4\" err
"

test_expect_success '--expect errors name the argument' "
	test_must_fail_with 2 lab judge data.csv --expect hackbench.throughput 2>err &&
	test_grep -q \"expect 'hackbench.throughput' is not METRIC:increase|decrease|unchanged\" err &&
	test_must_fail_with 2 lab judge data.csv --expect hackbench.throughput:up:5 2>err &&
	test_grep -q \"expect 'hackbench.throughput:up:5'\" err &&
	test_must_fail_with 2 lab judge data.csv --expect hackbench.throughput:increase:-5 2>err &&
	test_grep -q \"the smallest change that matters, '-5'\" err &&
	test_must_fail_with 2 lab judge data.csv --expect hackbench.thruput:increase 2>err &&
	test_grep -q \"did you mean 'hackbench.throughput'\" err &&
	test_must_fail_with 2 lab judge data.csv --base nobody 2>err &&
	test_grep -q \"no variant 'nobody'\" err &&
	test_must_fail_with 2 lab judge data.csv --alpha 0.7 2>err &&
	test_grep -q \"alpha '0.7' is not a number above 0 and below 0.5\" err &&
	test_must_fail_with 2 lab judge 2>err &&
	test_must_fail_with 2 lab judge a.csv b.csv 2>err
"

test_done
