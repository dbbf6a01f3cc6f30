#!/bin/sh
# Many labs on one results folder at once (no VM): parallel fetches, lists
# and reindexes lose nothing. Every fetched run ends up in its folder and
# in the index; a reindex never leaves fewer runs indexed than are stored;
# lab ls, read-only, says when stored runs are missing from the index.
. "$(dirname "$0")/test-lib.sh"

N=12
mkdir -p src/results
for i in $(seq 1 $N); do
	id=$(printf '20261201-1200%02d-%04x' "$i" "$i")
	d=src/results/$id
	mkdir -p "$d/runs/e.0001" "$d/runs/e.0002"
	printf 'base\npatched\n' >"$d/variants"
	printf '0\tm.tps\tincrease\t0.02\n' >"$d/expect"
	printf '# lab journal 1 experiment=e\ne.0001\tok\tbase\t0\t1\tw\t6.1\t-\ne.0002\tok\tpatched\t0\t1\tw\t6.1\t-\n' >"$d/journal"
	printf 'm.tps %d\n' "$i" >"$d/runs/e.0001/metrics"
	printf 'm.tps %d\n' "$((i + 1))" >"$d/runs/e.0002/metrics"
	(cd src && lab bundle "$id" -o "../b$i.tar.zst" >/dev/null) || exit 1
done

test_expect_success "$N fetches, lab ls and lab gc --reindex at once: every run stored and indexed" "
	mkdir -p dst &&
	for i in \$(seq 1 $N); do
		(cd dst && lab fetch ../b\$i.tar.zst >/dev/null 2>fetch\$i.err; echo \$? >fetch\$i.rc) &
	done
	for k in 1 2 3; do
		(cd dst && lab ls >ls\$k.out 2>ls\$k.err; echo \$? >ls\$k.rc) &
		(cd dst && lab gc --reindex >gc\$k.out 2>gc\$k.err; echo \$? >gc\$k.rc) &
	done
	wait &&
	for i in \$(seq 1 $N); do
		test \"\$(cat dst/fetch\$i.rc)\" = 0 || { cat dst/fetch\$i.err; false; }
	done &&
	for k in 1 2 3; do
		test \"\$(cat dst/ls\$k.rc)\" = 0 && test \"\$(cat dst/gc\$k.rc)\" = 0 ||
			{ cat dst/ls\$k.err dst/gc\$k.err; false; }
	done &&
	test \$(ls dst/results | grep -c '^2026') = $N &&
	(cd dst && lab ls 2>err) >ls.final &&
	test \$(grep -c '^2026' ls.final) = $N &&
	test ! -s dst/err
"

test_expect_success 'three reindexes at once: all runs indexed after each' "
	for k in 1 2 3; do (cd dst && lab gc --reindex >/dev/null 2>&1) & done; wait &&
	(cd dst && lab ls) >ls2 && test \$(grep -c '^2026' ls2) = $N &&
	! ls -A dst/results | grep -q '^\\.index-'
"

test_expect_success 'lab ls opens the index read-only and says which runs it lacks' "
	cp -r dst ro && rm -f ro/results/index.sqlite* &&
	(cd ro && lab ls >out 2>err) &&
	grep -q \"$N stored runs are not in the index (lab gc --reindex adds them)\" ro/err &&
	! test -e ro/results/index.sqlite &&
	(cd ro && lab gc --reindex >/dev/null) &&
	(cd ro && lab ls 2>err) | grep -c '^2026' | grep -qx $N && test ! -s ro/err &&
	chmod -R a-w ro/results &&
	(cd ro && lab ls 2>err) | grep -c '^2026' | grep -qx $N &&
	chmod -R u+w ro/results
"

test_expect_success 'a damaged run folder is skipped by reindex, named, and the others stay indexed' "
	bad=dst/results/20261201-130000-dead && mkdir -p \$bad && printf 'garbage\n' >\$bad/journal && printf 'base\n' >\$bad/variants && : >\$bad/expect &&
	(cd dst && test_must_fail_with 1 lab gc --reindex >out 2>err) &&
	grep -q 'not a lab journal' dst/err &&
	grep -q 'not indexed: 20261201-130000-dead' dst/out &&
	grep -q \"reindexed $N stored runs\" dst/out &&
	(cd dst && lab ls 2>err) | grep -c '^2026' | grep -qx $N &&
	grep -q '1 stored run is not in the index' dst/err
"

test_done
