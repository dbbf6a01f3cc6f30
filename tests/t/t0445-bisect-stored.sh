#!/bin/sh
# A stored bisect.json is data from disk (a bundle, another machine, a
# hand): lab bisect --resume checks it against the reader's rules, then
# against lab.yaml and the store, and refuses what does not fit, naming
# the field, before anything runs: a patch count that is not the series',
# an unknown state, max_boots 0, a step whose run is another experiment's.
# What it prints of the file (subjects, the metric) reaches the terminal
# and bisect.log escaped. No VM: the bisects here have nothing left to run.
. "$(dirname "$0")/test-lib.sh"

mkdir proj && for d in kernels images workloads; do ln -s "$SRC_DIR/$d" "proj/$d"; done &&
cp "$SRC_DIR/lab.yaml" proj/lab.yaml && mkdir proj/results || exit 1

# bisect ID [KEY=JSON]...: results/ID/bisect.json, a finished bisect of
# tg-ratelimit (1 patch) on base in experiment quick, with fields replaced
bisect() {
	python3 - "proj/results/$1" "$@" <<-'PY'
	import json, os, sys
	d = sys.argv[1]
	os.makedirs(d, exist_ok=True)
	b = {"format": 1, "experiment": "quick", "series": "tg-ratelimit", "from": "base", "patches": 1,
	     "subjects": ["sched/fair: Ratelimit update to tg->load_avg"], "good": 0, "bad": 1,
	     "metric": "stress-ng.switch.ops_per_sec", "threshold_pct": 5, "direction": 0, "alpha": 0.05,
	     "max_boots": 4,
	     "steps": [{"prefix": 1, "run": None, "done": True, "mark": "bad", "verdict": "changed",
	                "change_pct": 12.5, "lo_pct": 8, "hi_pct": 17, "boots": [2, 2], "runs": [4, 4],
	                "alpha": 0.05, "seconds": 60, "why": None}],
	     "state": "found", "range_good": 0, "range_bad": 1, "why": None}
	for kv in sys.argv[3:]:
	    k, v = kv.split("=", 1)
	    v = json.loads(v)
	    if k.startswith("steps.0."):
	        b["steps"][0][k[8:]] = v
	    else:
	        b[k] = v
	json.dump(b, open(os.path.join(d, "bisect.json"), "w"))
	# a stored run's folder, as lab bisect made it (an old store's journal: no runs yet)
	if not os.path.exists(os.path.join(d, "journal")):
	    os.makedirs(os.path.join(d, "runs"), exist_ok=True)
	    open(os.path.join(d, "journal"), "w").write("# lab journal 1 experiment=quick\n")
	PY
}

test_expect_success 'a stored bisect that fits resumes: nothing left to run, the culprit named' "
	bisect 20261201-000000-0001 &&
	lab -C proj bisect --resume 20261201-000000-0001 >out 2>err &&
	test_grep -q '^first bad: tg-ratelimit@1' out
"

test_expect_success 'a patch count that is not the series'\''s is refused, naming the field' "
	bisect 20261201-000000-0002 patches=3 bad=3 'subjects=[\"a\", \"b\", \"c\"]' &&
	test_must_fail_with 2 lab -C proj bisect --resume 20261201-000000-0002 2>err &&
	test_grep -q \"'patches': 3 patches on base, but series 'tg-ratelimit' in .* has 1 on base\" err
"

test_expect_success 'an unknown state and max_boots 0 are refused by the reader' "
	bisect 20261201-000000-0003 'state=\"pwned\"' &&
	test_must_fail_with 2 lab -C proj bisect --resume 20261201-000000-0003 2>err &&
	test_grep -q '\"state\" is not a state of a bisect' err &&
	bisect 20261201-000000-0004 max_boots=0 &&
	test_must_fail_with 2 lab -C proj bisect --resume 20261201-000000-0004 2>err &&
	test_grep -q '\"max_boots\" is 0' err
"

test_expect_success 'a step whose run is another experiment'\''s is refused' "
	'$SRC_DIR/tests/tools/fabricate-run' proj/results 20261201-000000-0005 &&
	bisect 20261201-000000-0006 'steps.0.run=\"20261201-000000-0005\"' &&
	test_must_fail_with 2 lab -C proj bisect --resume 20261201-000000-0006 2>err &&
	test_grep -q \"'steps': the run 20261201-000000-0005 of prefix 1 is of experiment 'e', not 'quick'\" err
"

test_expect_success 'ESC and C1 in the stored subjects reach the terminal and the log escaped' "
	bisect 20261201-000000-0007 'subjects=[\"fix \\\\u001b]0;owned\\\\u0007 \\\\u009b2J it\"]' &&
	lab -C proj bisect --resume 20261201-000000-0007 >out 2>err &&
	! grep -q \"\$(printf '\\033')\" out err proj/results/20261201-000000-0007/bisect.log &&
	! grep -q \"\$(printf '\\302\\233')\" out err proj/results/20261201-000000-0007/bisect.log &&
	test_grep -q 'fix .*owned.* it' out
"

test_done
