#!/bin/sh
# lab gc --keep-days / --max-size on a made-up cache (LAB_CACHE_DIR): what
# goes by age and by size, --dry-run removes nothing, --json says the same,
# a work tree a build holds stays, bad values are refused.
. "$(dirname "$0")/test-lib.sh"

# cache/ENTRY DAYS-AGO KBYTES: an entry with a stamp of that age
entry() {
	mkdir -p "c/$1" &&
	dd if=/dev/zero of="c/$1/data" bs=1024 count="$3" status=none &&
	touch -d "@$(($(date +%s) - $2 * 86400))" "c/$1.used"
}

test_expect_success 'a cache of old and new entries' "
	entry kernels/old 30 64 &&
	entry kernels/new 1 64 &&
	entry images/minimal-abc 20 512 &&
	entry sources/src 2 1024 &&
	entry work/src 2 1024 &&
	entry ccache 0 256 &&
	mkdir -p c/images/recipes c/kernels/k.tmp.1 &&
	find c | sort >before
"

test_expect_success '--dry-run: says what goes, removes nothing' "
	LAB_CACHE_DIR=\$PWD/c lab gc --dry-run --keep-days 7 >out &&
	test_grep -q '^would remove kernel kernels/old (.*; not used in 30 days)' out &&
	test_grep -q '^would remove image images/minimal-abc (.*; not used in 20 days)' out &&
	! grep -q 'kernels/new\|sources/src\|ccache' out &&
	test_grep -q '^cache: 6 entries, .*; would remove 2, ' out &&
	find c | sort >after && test_cmp before after
"

test_expect_success '--json: the same plan, every entry with its kind, size and use' "
	LAB_CACHE_DIR=\$PWD/c lab --json gc --dry-run --keep-days 7 >out.json &&
	python3 - out.json <<-'PY'
	import json, sys
	c = json.load(open(sys.argv[1]))['cache']
	e = {x['name']: x for x in c['entries']}
	assert sorted(e) == ['ccache', 'images/minimal-abc', 'kernels/new', 'kernels/old', 'sources/src', 'work/src'], e
	assert [x['name'] for x in c['entries'] if x['remove']] == ['kernels/old', 'images/minimal-abc'], c
	assert e['work/src']['kind'] == 'work tree' and e['images/minimal-abc']['bytes'] >= 512 * 1024, e
	assert c['freed_bytes'] == e['kernels/old']['bytes'] + e['images/minimal-abc']['bytes'], c
	assert c['bytes'] == sum(x['bytes'] for x in e.values()), c
	PY
"

test_expect_success '--max-size: the least recently used go until it fits; a held work tree stays' "
	exec 9>c/work/src/lock && flock 9 &&
	LAB_CACHE_DIR=\$PWD/c lab gc --max-size 1M >out; rc=\$?; exec 9>&- &&
	test \$rc = 0 &&
	test_grep -q '^kept work tree work/src (.*): in use' out &&
	test_grep -q '^removed source sources/src (.*; least recently used, over the size limit)' out &&
	! test -e c/kernels/old && ! test -e c/kernels/old.used && ! test -e c/images/minimal-abc &&
	! test -e c/sources/src && test -d c/work/src && test -d c/images/recipes && test -d c/kernels/k.tmp.1
"

test_expect_success 'bad values are refused' "
	test_must_fail_with 2 lab gc --keep-days 0 2>err &&
	test_grep -q 'keep-days' err &&
	test_must_fail_with 2 lab gc --max-size lots 2>err &&
	test_grep -q 'is not a size such as 16G' err
"

test_done
