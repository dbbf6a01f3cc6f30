#!/bin/sh
# A signal in the middle of an unpack (no VM): lab fetch, lab compare and
# lab reproduce of a large bundle stopped by SIGINT or SIGTERM remove their
# temporary folder (.fetch-* in the results folder, lab-compare-* in
# $TMPDIR) and die of the signal; a lab killed with SIGKILL leaves one,
# which lab gc removes (--dry-run only says so), while the folder of an
# unpack still under way stays.
. "$(dirname "$0")/test-lib.sh"

ID=20261130-120000-beef
mkdir -p tmp state cache
export TMPDIR=$TRASH/tmp XDG_STATE_HOME=$TRASH/state LAB_CACHE_DIR=$TRASH/cache

# a stored run grown by 300 MB that do not compress: unpacking it and
# checking its sha256 takes a while (in files of 25 MB)
python3 "$SRC_DIR/tests/tools/fabricate-run" src/results $ID
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	head -c 25000000 /dev/urandom >src/results/$ID/runs/e.0001/big-$i
done
(cd src && "$LAB" bundle $ID -o ../big.tar.zst >/dev/null 2>&1)
rm -r src

# wait_for GLOB: until a path matches it (20 s at most)
wait_for() {
	i=0
	while [ $i -lt 1000 ]; do
		for f in $1; do
			[ -e "$f" ] && return 0
		done
		sleep 0.02
		i=$((i + 1))
	done
	echo "nothing matched $1" >&2
	return 1
}

# start_fetch DIR: lab fetch - in DIR, its standard input the FIFO DIR/in,
# SIGINT at its default (a background job's is ignored); $pid, fd 3 the
# FIFO's writing end; the first 32 MB go in, the rest waits: the unpack
# stays under way until fd 3 gets more or is closed
start_fetch() {
	mkdir -p "$1" && rm -f "$1/in" && mkfifo "$1/in" || return 1
	(cd "$1" && exec env --default-signal=INT "$LAB" fetch - <in >out 2>err) &
	pid=$!
	exec 3>"$1/in"
	head -c 32000000 big.tar.zst >&3
}

# start DIR ARGS...: lab ARGS in DIR, in the background, SIGINT at its default; $pid
start() {
	mkdir -p "$1" || return 1
	(cd "$1" && shift && exec env --default-signal=INT "$LAB" "$@" >out 2>err) &
	pid=$!
}

test_expect_success 'the bundle is large' "
	test \$(wc -c <big.tar.zst) -gt 290000000
"

test_expect_success 'SIGINT mid-unpack (lab fetch -): the .fetch folder goes, exit 130, nothing stored' "
	start_fetch a &&
	wait_for 'a/results/.fetch-*/runs/e.0001/big-1' &&
	kill -INT \$pid &&
	status=0 && { wait \$pid || status=\$?; } &&
	exec 3>&- &&
	test \$status = 130 &&
	ls -A a/results >left &&
	! grep -q '^\\.fetch-' left &&
	! test -e a/results/$ID
"

test_expect_success 'SIGTERM mid-unpack: the same, exit 143' "
	start_fetch b &&
	wait_for 'b/results/.fetch-*/runs/e.0001/big-1' &&
	kill -TERM \$pid &&
	status=0 && { wait \$pid || status=\$?; } &&
	exec 3>&- &&
	test \$status = 143 &&
	! ls -A b/results | grep -q '^\\.fetch-'
"

test_expect_success 'SIGINT mid-unpack (lab fetch FILE): the .fetch folder goes' "
	start c fetch ../big.tar.zst &&
	wait_for 'c/results/.fetch-*/*' &&
	kill -INT \$pid &&
	status=0 && { wait \$pid || status=\$?; } &&
	test \$status = 130 &&
	! ls -A c/results | grep -q '^\\.fetch-' &&
	! test -e c/results/$ID
"

test_expect_success 'SIGINT mid-unpack (lab compare BUNDLE): the lab-compare folder in TMPDIR goes' "
	start d compare ../big.tar.zst &&
	wait_for 'tmp/lab-compare-*/.fetch-*/*' &&
	kill -INT \$pid &&
	status=0 && { wait \$pid || status=\$?; } &&
	test \$status = 130 &&
	test \$(ls -A tmp | wc -l) = 0
"

test_expect_success 'SIGINT mid-unpack (lab reproduce BUNDLE): the .fetch folder goes' "
	start e reproduce ../big.tar.zst &&
	wait_for 'e/results/.fetch-*/*' &&
	kill -INT \$pid &&
	status=0 && { wait \$pid || status=\$?; } &&
	test \$status = 130 &&
	! ls -A e/results | grep -q '^\\.fetch-' &&
	! test -e e/results/$ID
"

test_expect_success 'SIGKILL mid-unpack leaves the folder; lab gc --dry-run names it, lab gc removes it' "
	start_fetch f &&
	wait_for 'f/results/.fetch-*/runs/e.0001/big-1' &&
	kill -KILL \$pid &&
	{ wait \$pid || :; } &&
	exec 3>&- &&
	left=\$(cd f/results && echo .fetch-*) &&
	test -d f/results/\$left &&
	(cd f && lab gc --dry-run) >out &&
	test_grep -q \"^would remove unfinished unpack results/\$left (its lab was killed)\" out &&
	test -d f/results/\$left &&
	(cd f && lab gc) >out &&
	test_grep -q \"^removed unfinished unpack results/\$left\" out &&
	! test -e f/results/\$left
"

test_expect_success 'lab gc --json lists them; a lab-compare folder of a killed lab in TMPDIR goes too' "
	mkdir -p g/results/.fetch-999999999-abcdef tmp/lab-compare-999999999-abcdef &&
	(cd g && lab --json gc) >out.json &&
	python3 - out.json \"\$TMPDIR\" <<-'PY'
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d['unpacks'] == ['results/.fetch-999999999-abcdef', sys.argv[2] + '/lab-compare-999999999-abcdef'], d
	PY
	! test -e g/results/.fetch-999999999-abcdef && ! test -e tmp/lab-compare-999999999-abcdef
"

test_expect_success 'the folder of an unpack under way stays (its lock is held), however old; that unpack then goes through' "
	start_fetch h &&
	wait_for 'h/results/.fetch-*/runs/e.0001/big-1' &&
	touch -d @\$((\$(date +%s) - 7200)) h/results/.fetch-* &&
	(cd h && lab gc) >out &&
	! grep -q 'unpack' out &&
	ls -A h/results | grep -q '^\\.fetch-' &&
	tail -c +32000001 big.tar.zst >&3 &&
	exec 3>&- &&
	wait \$pid &&
	test -f h/results/$ID/runs/e.0001/big-12 &&
	! ls -A h/results | grep -q '^\\.fetch-' &&
	rm -r h
"

test_done
