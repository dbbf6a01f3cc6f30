#!/bin/sh
# lab bisect, for real, on an instruction-timed guest (timing: icount), so
# that the other lane's tests cannot move it. Synthetic series on the base
# kernel (tests/data/bisect-series), where patch 6 alone adds a udelay(200)
# to every read of /proc/version and the others only add comments. A
# workload reads /proc/version 1,800 times in 9 timed batches and reports
# the median batch's time a read.
#   make test: the series of patches 1 and 6 (a bisect of 2 steps at 4
#   boots a step): lab bisect between base and the whole series names the
#   second patch, building only the prefixes it visits (each an
#   incremental build in the series' work tree), deciding each step with
#   sequential boots; the bisect's folder is a stored run that lab report
#   and lab bundle take.
#   make test-full: also the series of patches 1, 2, 6 and 7 (3 steps),
#   which must name its third patch, and whose state survives an
#   interruption (--resume goes on with the step left).
# lab-test-seconds: 400 (make test here on 2026-12-06 evening, quiet: 380 s)
# lab-test-seconds-full: 1500 (make test-full here on 2026-12-06: 1,410 s, 24 boots)
# lab-test-boots: 16
# lab-test-boots-full: 48
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

# make_proj DIR N...: a project in DIR (tests/tools/procread-project: the
# workload tests/data/procread on tiny-icount) whose series "slowproc" is
# the data patches N..., renumbered from 1
make_proj() {
	_d=$1 _i=0 && shift &&
	"$SRC_DIR/tests/tools/procread-project" "$_d" "$P/lab.yaml" "$SRC_DIR" \
		--kernel "slowproc: {from: base, patches: series}" --compare base,slowproc &&
	mkdir "$_d/series" &&
	for _n in "$@"; do
		_i=$((_i + 1)) &&
		_f=$(basename "$SRC_DIR"/tests/data/bisect-series/000"$_n"-*.patch) &&
		cp "$SRC_DIR/tests/data/bisect-series/$_f" "$_d/series/000$_i-${_f#000?-}" || return 1
	done
}
# make test: a bisect of 2 steps; make test-full: of 3 steps too
make_proj proj 1 6
! test_have_prereq FULL || make_proj proj4 1 2 6 7

test_expect_success 'bad input: an end outside the series, a metric no workload measures, nothing stored' "
	test_must_fail_with 2 lab -C proj bisect proc --good base --bad slowproc@3 --metric procread.usec_per_read 2>err &&
	test_grep -q 'is not base, slowproc or slowproc@N with N from 1 to 2' err &&
	test_must_fail_with 2 lab -C proj bisect proc --good slowproc@2 --bad slowproc@1 --metric procread.usec_per_read 2>err &&
	test_grep -q 'must come before the bad end' err &&
	test_must_fail_with 2 lab -C proj bisect proc --good base --bad slowproc --metric nosuch.metric 2>err &&
	test_grep -q \"no workload of experiment 'proc' measures 'nosuch.metric'\" err &&
	test_must_fail_with 2 lab -C proj bisect --resume 20990101-000000-0000 2>err &&
	test_grep -q 'no stored bisect' err &&
	! test -d proj/results || test -z \"\$(ls proj/results | grep -v index)\"
"

# check_bisect DIR ID PREFIXES MARKS GOOD BAD STEPS: what bisect.json of a
# found bisect must say
check_bisect() {
	python3 - "$1/results/$2/bisect.json" "$3" "$4" "$5" "$6" "$7" <<-'EOF'
	import json, sys
	b = json.load(open(sys.argv[1]))
	prefixes = [int(x) for x in sys.argv[2].split(',')]
	marks = sys.argv[3].split(',')
	good, bad, planned = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
	assert b['state'] == 'found' and b['range_good'] == good and b['range_bad'] == bad, b
	steps = b['steps']
	# the ends, then the middle of what is left
	assert [s['prefix'] for s in steps] == prefixes, steps
	assert [s['mark'] for s in steps] == marks, steps
	assert b['direction'] == 1, b  # a read got slower: the bad way is up
	for s in steps:
	    assert s['done'] and s['run'] and s['seconds'] > 0, s
	    assert s['boots'][0] >= 2 and s['boots'][1] >= 2, s
	    # each step's share of the bisect's alpha
	    assert abs(s['alpha'] - 0.05 / planned) < 1e-9, s
	# the slow prefixes read much slower than base (200 us a read and more)
	for s in steps:
	    if s['mark'] == 'bad':
	        assert s['change_pct'] > 100, s
	EOF
}

test_expect_success 'lab bisect names patch 2 of 2, visiting 2 prefixes, each decided by the engine' "
	lab -C proj bisect proc --good base --bad slowproc --metric procread.usec_per_read --threshold 20% \
		>out 2>err || { cat err out; false; } &&
	test_grep -q '^first bad: slowproc@2 (proc: wait 200 us in every read of /proc/version)' out &&
	id=\$(sed -n '1s/^bisect \\([0-9a-f-]*\\)$/\\1/p' out) && echo \$id >id &&
	check_bisect proj \$id 2,1 bad,good 1 2 2 &&
	test_grep -q 'step slowproc@1 against base' proj/results/\$id/bisect.log &&
	test_grep -q 'found' proj/results/\$id/bisect.log
"

test_expect_success 'the bisect folder is a stored run: lab report and lab bundle take it' "
	id=\$(cat id) &&
	lab -C proj report \$id >report &&
	test_grep -q 'slowproc@2' report &&
	lab -C proj bundle \$id -o b.tar.zst &&
	tar --zstd -tf proj/b.tar.zst >members &&
	test_grep -q \"^\$id/bisect.json\\\$\" members &&
	test_grep -q \"^\$id/bisect.log\\\$\" members &&
	test_grep -q \"^\$id/runs/proc.0001/metrics\\\$\" members
"

test_expect_success FULL 'a series of 4: lab bisect names patch 3, visiting 3 prefixes' "
	lab -C proj4 bisect proc --good base --bad slowproc --metric procread.usec_per_read --threshold 20% \
		>out 2>err || { cat err out; false; } &&
	test_grep -q '^first bad: slowproc@3 (proc: wait 200 us in every read of /proc/version)' out &&
	id=\$(sed -n '1s/^bisect \\([0-9a-f-]*\\)$/\\1/p' out) && echo \$id >id4 &&
	check_bisect proj4 \$id 4,2,3 bad,good,bad 2 3 3 &&
	test_grep -q 'step slowproc@3 against base' proj4/results/\$id/bisect.log
"

test_expect_success FULL 'interrupted: lab bisect --resume runs only the step left and names the same patch' "
	id=\$(cat id4) &&
	python3 - proj4/results/\$id/bisect.json <<-'EOF' &&
	import json, sys
	b = json.load(open(sys.argv[1]))
	# as if lab stopped before the last step started
	b['steps'] = b['steps'][:2]
	json.dump(b, open(sys.argv[1], 'w'))
	EOF
	before=\$(ls proj4/results | grep -c -v index) &&
	lab -C proj4 bisect --resume \$id >out 2>err || { cat err out; false; } &&
	test_grep -q '^first bad: slowproc@3' out &&
	test \$(ls proj4/results | grep -c -v index) = \$((before + 1)) &&
	check_bisect proj4 \$id 4,2,3 bad,good,bad 2 3 3
"

test_expect_success 'every guest is gone' "
	lab -C '$P' vm ls >vms && ! grep -q '^run-' vms
"

test_done
