#!/bin/sh
# lab bisect between two commits of a git source, for real: a repository
# made from the test kernel's source (the good commit), then 8 commits and
# a merge (10 in all):
#   main line: 3 comment-only commits, one that breaks the build
#   (fs/proc/uptime.c), its fix, then after the merge one more;
#   a side branch from the good commit: the udelay(200) in every read of
#   /proc/version (tests/data/bisect-series/0006, the culprit), then a
#   comment, merged.
# With 9 suspects the broken commit is the best split (4 of 9 among its
# ancestors): lab must build it, see the compiler's error, skip it, and go
# on round it; the culprit on the side branch is then found in 3 more steps
# and named with its subject and author. Each commit is built in the
# source's one work tree (an incremental build), on an instruction-timed
# guest as t1440. make test-full only: make test has test-workflow's
# commit bisect over a real repository with the fake engine, and t1440's
# real bisect of a series.
# lab-test-seconds: 1800 (not in make test: tests/full)
# lab-test-seconds-full: 1800
# lab-test-boots: 32
# lab-test-boots-full: 32
. "$(dirname "$0")/../t/test-lib.sh"

test_require_libvirt_vm

R=$PWD/linux
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lab

# commit SUBJECT: everything staged or changed, as a fixed author at a fixed
# date (-f: Debian's .gitignore ignores every top-level entry)
commit() {
	git -C "$R" add -A -f &&
	GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z \
		git -C "$R" -c user.name='Ada Lab' -c user.email=ada@example.invalid commit -q -m "$1"
}
# apply N: the data series' patch N (git apply: files replaced, never written into)
apply() {
	git -C "$R" apply "$SRC_DIR"/tests/data/bisect-series/000"$1"-*.patch
}

test_expect_success 'a git repository of the test kernel source: 10 commits, a merge, a broken build' "
	lab -C '$P' kernel build base >/dev/null &&
	id=\$(lab -C '$P' --json kernel show base | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"source\"])') &&
	key=\$(printf %s \"\$id\" | sha256sum | cut -c1-16) &&
	test -f '$cache'/sources/\$key/Makefile &&
	cp -R '$cache'/sources/\$key '$R' &&
	git -C '$R' init -q -b master &&
	commit 'linux: the good commit' &&
	git -C '$R' rev-parse HEAD >good &&
	git -C '$R' checkout -q -b side &&
	apply 6 && commit 'proc: wait 200 us in every read of /proc/version' &&
	git -C '$R' rev-parse HEAD >culprit &&
	apply 7 && commit 'proc: say what /proc/softirqs shows' &&
	git -C '$R' checkout -q master &&
	apply 1 && commit 'proc: say what /proc/cmdline shows' &&
	apply 3 && commit 'proc: say what /proc/loadavg shows' &&
	apply 4 && commit 'proc: say what /proc/devices shows' &&
	sed -i 's/^static int uptime_proc_show(/static int uptime_proc_show(  broken/' '$R'/fs/proc/uptime.c &&
	commit 'proc: break the build' &&
	git -C '$R' rev-parse HEAD >broken &&
	sed -i 's/^static int uptime_proc_show(  broken/static int uptime_proc_show(/' '$R'/fs/proc/uptime.c &&
	commit 'proc: mend the build' &&
	GIT_COMMITTER_DATE=2026-01-01T00:00:00Z git -C '$R' -c user.name='Ada Lab' -c user.email=ada@example.invalid \
		merge -q --no-ff -m \"Merge branch 'side'\" side &&
	apply 5 && commit 'proc: say what /proc/interrupts shows' &&
	test \$(git -C '$R' rev-list --count \$(cat good)..master) = 9
"

"$SRC_DIR/tests/tools/procread-project" proj "$P/lab.yaml" "$SRC_DIR" \
	--source "linux-git: {type: git, url: '$R', ref: master}" \
	--kernel 'lin: {source: linux-git, start: "${kernel_start}", config: ["${kernel_config}"]}' \
	--kernel "lin-same: {from: lin}" --compare lin,lin-same

test_expect_success 'bad input: a ref that names nothing, a good end that is not an ancestor, nothing stored' "
	test_must_fail_with 2 lab -C proj bisect proc --good no-such-ref --bad master --metric procread.usec_per_read 2>err &&
	test_grep -q \"'no-such-ref' names no commit\" err &&
	test_must_fail_with 2 lab -C proj bisect proc --good master --bad \$(cat good) --metric procread.usec_per_read 2>err &&
	test_grep -q 'is not an ancestor of the bad commit' err &&
	! test -d proj/results || test -z \"\$(ls proj/results | grep -v index)\"
"

test_expect_success 'lab bisect names the culprit on the side branch, skipping the commit that does not build' "
	lab -C proj bisect proc --good \$(cat good) --bad master --metric procread.usec_per_read --threshold 20% \
		>out 2>err || { cat err out; false; } &&
	test_grep -q \"^first bad commit: \$(cat culprit) (proc: wait 200 us in every read of /proc/version)\\\$\" out &&
	test_grep -q '^author: Ada Lab <ada@example.invalid>\$' out &&
	id=\$(sed -n '1s/^bisect \\([0-9a-f-]*\\)$/\\1/p' out) &&
	python3 - proj/results/\$id/bisect.json \$(cat broken) \$(cat culprit) <<-'EOF'
	import json, sys
	b = json.load(open(sys.argv[1]))
	broken, culprit = sys.argv[2], sys.argv[3]
	assert b['state'] == 'found', b['why']
	ids = [c['id'] for c in b['commits']]
	assert len(ids) == 10 and ids[-1] != culprit, ids
	merges = [c for c in b['commits'] if len(c['parents']) == 2]
	assert len(merges) == 1 and all(merges[0]['parents']), merges
	steps = b['steps']
	# the ends, then the broken commit (the best split): skipped on the compiler's word
	assert steps[1]['prefix'] == ids.index(broken) and steps[1]['mark'] == 'skipped', steps[1]
	assert 'the kernel\\'s failure (build)' in steps[1]['why'] and 'uptime.c' in steps[1]['why'], steps[1]
	assert steps[1]['run'] is None, steps[1]
	judged = [s for s in steps if s['mark'] != 'skipped']
	assert all(s['mark'] in ('good', 'bad') and s['boots'][0] >= 2 for s in judged), judged
	assert ids[b['range_bad']] == culprit, b['range_bad']
	# then the mend (good), proc: softirqs (bad), the culprit (bad): 5 steps, 4 judged
	assert len(steps) == 5 and len(judged) == 4, steps
	EOF
"

test_expect_success 'each commit was built in the source one work tree, incrementally' "
	test \$(ls -d '$cache'/work/* | xargs -n1 basename | grep -c -v -e '-check\$') -ge 1 &&
	grep -l 'work tree moved to' '$cache'/kernels/*/build.log >moved &&
	test \$(wc -l <moved) -ge 3
"

test_expect_success 'every guest is gone' "
	lab -C '$P' vm ls >vms && ! grep -q '^run-' vms
"

test_done
