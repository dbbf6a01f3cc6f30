#!/bin/sh
# lab report and lab site of a track, on a store written by lab's own
# store code (test-track --write-store: a track of 4 commits whose change
# point lies between the second and the third, bisected to its culprit,
# the fourth commit not built): the robot's report in text, Markdown,
# JSON and HTML, each with the robot's line, the series with the change
# point, the bisect's steps, the machine and the command that makes it
# again; hostile stored text kept as text; a comparison that is gone said
# and left out; a damaged track.json refused naming the file; lab site's
# page of the track is its timeline.
. "$(dirname "$0")/test-lib.sh"

BUILD=${LAB_BUILD:-$SRC_DIR/build/asan}
mkdir results
ID=$(cd "$SRC_DIR" && "$BUILD/tests/test-track" --write-store "$TRASH/results") ||
	test_skip_all "the unit tests are not built ($BUILD/tests/test-track: make test builds them)"
C1=c0ffee0000000000000000000000000000000000
C2=c0ffee0700000000000000000000000000000007
CULPRIT=c0ffee0400000000000000000000000000000004

test_expect_success 'text: the robot line, the series with its change point, the bisect, the machine, the command' "
	lab report results/$ID >out 2>err &&
	test ! -s err &&
	test_grep -q '^1. FYI: a +30.1% \\[+29.5, +30.7\\]% change of w.m (proc, w) due to commit c0ffee040000' out &&
	# the series: commit 1, the change point, commit 2, then the commit that did not build
	grep -o 'c0ffee000000 [#.]*\\|---- change point 1: +30.1% ----\\|c0ffee070000 [#.]*\\|c0ffee090000   (no boot)' out |
		head -4 | cut -c1-18 >order &&
	printf '%s\\n' 'c0ffee000000 .....' '---- change point ' 'c0ffee070000 #####' 'c0ffee090000   (no' >want &&
	test_cmp want order &&
	test_grep -q 'culprit: $CULPRIT' out &&
	test_grep -q 'first bad commit: ' out &&
	test_grep -q 'cpu model: AMD EPYC' out &&
	test_grep -q 'reproduce on your tree: lab bisect proc --good $C1 --bad $C2 --metric w.m --threshold 20% --kernel lin' out
"

test_expect_success 'stored text stays text: no terminal control, no markup in HTML, no fence break in Markdown' "
	! grep -q \"\$(printf '\\033')\" out &&
	test_grep -q 'Dev \\\\x1b\\[31m' out &&
	lab report --format html results/$ID >page.html &&
	! grep -qi '<script' page.html &&
	test_grep -q '&lt;script&gt;' page.html &&
	lab report --format md results/$ID >page.md &&
	! grep -q '<script' page.md &&
	! grep -q \"\$(printf '\\033')\" page.md
"

test_expect_success 'JSON: the points, the commits with their boots, the bisect, the machine, the command as argv' "
	lab report --format json results/$ID >r.json &&
	lab --json report results/$ID >r2.json &&
	cmp r.json r2.json &&
	python3 - r.json <<-'PY'
	import json, sys
	r = json.load(open(sys.argv[1]))
	assert r['format'] == 1 and r['metric'] == 'w.m' and r['workload'] == 'w', r
	p, = r['points']
	assert p['kind'] == 'news' and p['culprit'].startswith('c0ffee04'), p
	assert p['line'].startswith('FYI: a +30.1% [+29.5, +30.7]% change of w.m'), p
	assert p['from'].startswith('c0ffee00') and p['at'].startswith('c0ffee07'), p
	assert p['bisect']['state'] == 'found' and len(p['bisect']['steps']) >= 2, p
	assert p['reproduce'][:3] == ['lab', 'bisect', 'proc'], p
	c = r['commits']
	assert len(c) == 4 and [len(x['boots']) for x in c] == [2, 4, 2, 0], c
	assert all(abs(v - 100) <= 1.5 for x in c[:2] for v in x['boots']), c
	assert all(abs(v - 130) <= 1.5 for v in c[2]['boots']), c
	assert 'does not build' in c[3]['not_measured'], c
	assert r['machine']['cpu_model'] == 'AMD EPYC' and r['notes'] == [], r
	PY
"

test_expect_success 'Markdown: the line, the series in a block, the bisect, the machine table' "
	test_grep -q '^- \\*\\*FYI: a +30.1% ' page.md &&
	test_grep -q '^## The series' page.md &&
	test_grep -q '^## Change point 1: +30.1% \\[+29.5, +30.7\\]% (p<0.0001)' page.md &&
	test_grep -q '^## The machine' page.md &&
	test_grep -q '^| cpu model | AMD EPYC |' page.md
"

test_expect_success 'a comparison that is gone: the series from the track folder itself, said' "
	mv results/20261207-170001-abcd gone &&
	lab report results/$ID >out2 2>err2 &&
	test_grep -q 'not shown: 1 of the comparisons is not in the results folder: the series is the track.s own folder.s runs' out2 &&
	test_grep -q 'FYI: a +30.1%' out2 &&
	lab report --format json results/$ID >r3.json &&
	python3 - r.json r3.json <<-'PY' &&
	import json, sys
	a, b = (json.load(open(p)) for p in sys.argv[1:])
	# the same boots at every commit, from the gathered runs
	assert [x['boots'] for x in a['commits']] == [x['boots'] for x in b['commits']], (a, b)
	assert len(b['notes']) == 1, b
	PY
	# and when the track's own runs cannot be read either: said, left out
	cp results/$ID/run.json own.json &&
	echo '{' >results/$ID/run.json &&
	lab report results/$ID >out5 &&
	test_grep -q 'not shown: the comparison 20261207-170001-abcd cannot be read' out5 &&
	test_grep -q 'c0ffee070000   (no boot)' out5 &&
	cp own.json results/$ID/run.json &&
	mv gone results/20261207-170001-abcd
"

test_expect_success 'a bundle of the track alone, fetched elsewhere: the same series' "
	lab bundle results/$ID -o track.tar.zst >/dev/null &&
	mkdir -p elsewhere/results &&
	tar --zstd -xf track.tar.zst -C elsewhere/results &&
	lab report --format json elsewhere/results/$ID >r4.json &&
	python3 - r.json r4.json <<-'PY'
	import json, sys
	a, b = (json.load(open(p)) for p in sys.argv[1:])
	assert [x['boots'] for x in a['commits']] == [x['boots'] for x in b['commits']], (a, b)
	assert any('the series is the track' in n for n in b['notes']), b
	assert any('bisect 20261207-171000-abcd is not in the results folder' in n for n in b['notes']), b
	assert b['points'][0]['line'] == a['points'][0]['line'], (a, b)
	PY
"

test_expect_success 'a bisect of another range than the change point: said, its steps not shown' "
	cp results/20261207-171000-abcd/bisect.json keepb.json &&
	sed 's/\"c0ffee0000000000000000000000000000000000\"/\"c0ffee0100000000000000000000000000000099\"/; s/-gc0ffee000000\"/-gc0ffee010000\"/' keepb.json \
		>results/20261207-171000-abcd/bisect.json &&
	! cmp -s keepb.json results/20261207-171000-abcd/bisect.json &&
	lab report results/$ID >out4 &&
	test_grep -q 'not shown: the bisect 20261207-171000-abcd is not this change point.s (it bisects c0ffee010000..c0ffee070000, not c0ffee000000..c0ffee070000)' out4 &&
	! grep -q 'first bad commit' out4 &&
	cp keepb.json results/20261207-171000-abcd/bisect.json
"

test_expect_success 'a damaged track.json: refused, naming the file' "
	cp results/$ID/track.json keep.json &&
	sed 's/\"step\": 3/\"step\": 0/' keep.json >results/$ID/track.json &&
	test_must_fail_with 2 lab report results/$ID >out3 2>err3 &&
	test_grep -q 'track.json' err3 &&
	test_grep -q '\"step\" is 0' err3 &&
	cp keep.json results/$ID/track.json
"

test_expect_success 'lab site: the track is listed, and its page is its timeline' "
	lab site site >/dev/null 2>site.err &&
	test_grep -q 'runs/$ID.html' site/index.html &&
	test_grep -q 'FYI: a +30.1%' site/runs/$ID.html &&
	test_grep -q 'stroke-dasharray' site/runs/$ID.html &&
	test_grep -q '<figcaption>w.m: each dot' site/runs/$ID.html &&
	cmp site/runs/$ID.html page.html
"

test_done
