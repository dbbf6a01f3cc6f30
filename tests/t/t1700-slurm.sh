#!/bin/sh
# lab run on a real two-node Slurm cluster on this machine (munged,
# slurmctld, slurmd n1 and n2: tests/tools/slurm-cluster), with real
# guests (the base and tg-ratelimit kernels, the minimal image, 1 vCPU):
#   the plan through Slurm stores the plan's runs and the workload's
#   metrics (make test-full: and the same as the plan run locally); both
#   nodes got work; the two sides of every pair ran on one node; each run
#   records its node;
#   Ctrl-C cancels lab's jobs (none left in squeue) and keeps the run
#   resumable; kill -9 of lab, then --resume, re-attaches to the queued
#   jobs and submits nothing twice;
#   a node marked DOWN in the middle of its shard: Slurm requeues the task,
#   the shard goes on elsewhere without running its finished runs again,
#   and the run's report lists the retry;
#   repeat: auto submits a block a shard as task slots free, none once
#   decided;
#   a node's lab of another version refuses its shard, and the head says
#   so, naming the node; a hostile result bundle is refused with nothing
#   written outside the run; a bare-metal host and a Slurm that cannot be
#   reached are clear errors before anything is made or submitted.
# lab-test-seconds: 140 (make test here: 142 s and 139 s on 2026-12-06/07; tests/run-all balances its two lanes by it)
# lab-test-seconds-full: 900
# lab-test-boots: 4
# lab-test-boots-full: 36
. "$(dirname "$0")/test-lib.sh"

for p in slurmctld slurmd munged sbatch squeue scancel scontrol; do
	command -v $p >/dev/null 2>&1 || test_skip_all "missing: $p (make deps installs slurm-wlm and munge)"
done
test_require_libvirt_vm

SLURM_DIR=$TRASH/slurm
# a port range of its own: other tests' clusters may be up at the same time
eval "$("$SRC_DIR/tests/tools/slurm-cluster" start "$SLURM_DIR" 19817)" ||
	test_skip_all "the test cluster did not come up (see $SLURM_DIR/log)"
# stop exactly this cluster, then the usual teardown
trap '"$SRC_DIR/tests/tools/slurm-cluster" stop "$SLURM_DIR" >/dev/null 2>&1
	lab -C "$P" -q vm down --all >/dev/null 2>&1
	test_remove_trash' EXIT

mkdir -p proj/workloads && for d in kernels images; do ln -s "$SRC_DIR/$d" "proj/$d"; done
for e in "$W"/*; do ln -s "$e" proj/workloads/; done
"$SRC_DIR/tests/tools/kernelmark" proj/workloads || exit 1
NODE_LAB=$(test_node_lab) || exit 1
python3 - "$P/lab.yaml" proj/lab.yaml "$TRASH/spool" "$NODE_LAB" <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace("topologies:\n", """topologies:
  tiny:
    sockets: 1
    cores: 1
    memory: 1G
""", 1)
exp = """    kernels: [base, tg-ratelimit]
    topology: tiny
    image: minimal
    timeout: 5m
    workloads:
      - workload: kernelmark
        expect:
          kernelmark.x: {direction: increase, mde: 10%}
"""
s = s[:s.index("experiments:")] + """engine:
  type: slurm
  spool: %s
  poll: 1s
  retries: 2
  lab: %s
experiments:
  pair:
    repeat: 2
%s  long:
    repeat: 4
%s  seq:
    repeat: auto
    boot: once
    decide: {max-boots: 6, runs-per-boot: 2}
%s""" % (sys.argv[3], sys.argv[4], exp, exp, exp)
open(sys.argv[2], "w").write(s)
PY

# the run folder a `lab run` made, from its first line
run_dir() { sed -n 's/^lab: run [^ ]*: experiment [^,]*, [0-9]* runs, results in //p' "$1" | head -n 1; }
# each run's id, status, node and sorted metric names, a line each
runs_and_metrics() {
	python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
for r in json.load(open(d + "/run.json"))["runs"]:
    names = sorted(l.split()[0] for l in open(os.path.join(d, "runs", r["id"], "metrics")) if l.strip())
    print(r["id"], r["status"], r["variant"], " ".join(names))
PY
}
# lab's jobs still in the queue (pending, running, completing)
queued() { squeue --noheader --states=PD,R,CG,CF --format=%i 2>/dev/null | wc -l; }
# (lab in the background is "$LAB" itself: $! must be its pid, for kill)
# wait up to $2 seconds for the shell test $1
wait_for() {
	_n=0
	until eval "$1"; do
		_n=$((_n + 1))
		[ $_n -le "$2" ] || { echo "timed out waiting for: $1" >&2; return 1; }
		sleep 1
	done
}

# make test-full: the same plan run locally too, the reference the Slurm
# run is compared with (4 boots more; make test compares with the plan)
test_expect_success FULL 'the plan runs locally (the reference)' '
	lab -C proj run --engine local pair >local.out 2>local.err &&
	L=$(run_dir local.err) && test -n "$L" &&
	runs_and_metrics "proj/$L" >local.runs &&
	test_line_count = 4 local.runs
'

test_expect_success 'the plan through Slurm: the plan'"'"'s runs and metrics, both nodes, pairs kept on one node' '
	lab -C proj plan pair --json >plan.json &&
	python3 - plan.json >plan.runs <<-\PY &&
	# the runs of the plan as every engine must store them: id, ok,
	# variant, the metric of the workload (kernelmark measures only x)
	import json, sys
	for p in json.load(open(sys.argv[1])):
	    print(p["id"], "ok", p["kernel"], "kernelmark.x")
	PY
	test_line_count = 4 plan.runs &&
	lab -C proj run pair >slurm.out 2>slurm.err &&
	S=$(run_dir slurm.err) && test -n "$S" &&
	runs_and_metrics "proj/$S" >slurm.runs &&
	test_cmp plan.runs slurm.runs &&
	if test_have_prereq FULL; then test_cmp local.runs slurm.runs; fi &&
	test_grep "slurm: job [0-9]*: 2 shards" slurm.err &&
	python3 - "proj/$S" <<-\PY
	import json, sys
	d = sys.argv[1]
	runs = json.load(open(d + "/run.json"))["runs"]
	plan = {p["id"]: p["boot"] for p in json.load(open(d + "/plan.json"))}
	nodes = {r["id"]: r.get("node") for r in runs}
	assert all(nodes.values()), nodes
	assert set(nodes.values()) == {"n1", "n2"}, nodes
	for b in set(plan.values()):
	    assert len({nodes[i] for i in plan if plan[i] == b}) == 1, (b, nodes)
	# the boots are numbered by the head: each run its own, none twice
	assert len({r["boot"] for r in runs}) == len(runs), runs
	PY
	test_grep "kernelmark.x" slurm.out
'

test_expect_success FULL 'Ctrl-C cancels lab'"'"'s jobs and keeps the run resumable' '
	{ "$LAB" -C proj run pair >int.out 2>int.err & pid=$!; } &&
	wait_for "test -n \"\$(run_dir int.err)\" && grep -q \"slurm: job\" int.err" 120 &&
	I=$(run_dir int.err) &&
	wait_for "test \$(queued) -gt 0" 30 &&
	kill -INT $pid && { wait $pid; rc=$?; } && test $rc != 0 &&
	test_grep "interrupted: lab.s jobs were cancelled" int.err &&
	test_grep "slurm: cancelled job" int.err &&
	wait_for "test \$(queued) = 0" 30 &&
	echo "$I" >interrupted
'

test_expect_success FULL 'kill -9 of lab, then --resume: re-attached, nothing submitted twice' '
	I=$(cat interrupted) &&
	id=$(basename "$I") &&
	{ "$LAB" -C proj run --resume "$id" >res1.out 2>res1.err & pid=$!; } &&
	wait_for "grep -q \"slurm: job\" res1.err" 120 &&
	wait_for "test \$(queued) -gt 0" 30 &&
	kill -9 $pid && { wait $pid || :; } &&
	jobs_before=$(python3 -c "import json,sys; print(sorted({s[\"job\"] for s in json.load(open(sys.argv[1]))[\"shards\"]}))" "proj/$I/slurm.json") &&
	ls "$TRASH/spool/jobs/$id"/submit-*.sh >subs.before &&
	lab -C proj run --resume "$id" >res2.out 2>res2.err &&
	ls "$TRASH/spool/jobs/$id"/submit-*.sh >subs.after &&
	test_cmp subs.before subs.after &&
	! grep "slurm: job [0-9]*:" res2.err &&
	jobs_after=$(python3 -c "import json,sys; print(sorted({s[\"job\"] for s in json.load(open(sys.argv[1]))[\"shards\"]}))" "proj/$I/slurm.json") &&
	test "$jobs_before" = "$jobs_after" &&
	run_journal "proj/$I" >res.journal &&
	test_line_count = 4 res.journal &&
	! grep -v "	ok	" res.journal
'

test_expect_success FULL 'a node DOWN mid-shard: requeued, finished runs not run again, the retry reported' '
	{ "$LAB" -C proj run long >down.out 2>down.err & pid=$!; } &&
	# a lab left running would hold both nodes through the next tests
	wait_for "test -n \"\$(run_dir down.err)\" && grep -q \"slurm: job\" down.err" 120 ||
		{ kill $pid; wait $pid; false; } &&
	D=$(run_dir down.err) && id=$(basename "$D") &&
	# the first shard whose node finished a run: its node goes DOWN (up
	# to 10 minutes: with the other lane busy on both CPUs, the first run
	# of a shard takes minutes, boot and node-side setup included)
	wait_for "grep -l \"\\\"status\\\": \\\"ok\\\"\" \"$TRASH/spool/jobs/$id\"/shard-*/work/$id/run.json >done.shards 2>/dev/null" 600 ||
		{ kill $pid; wait $pid; false; } &&
	shard=$(head -n 1 done.shards) && work=$(dirname "$shard") &&
	python3 - "$work" >before.boots <<-\PY &&
	import json, sys
	d = sys.argv[1]
	for r in json.load(open(d + "/run.json"))["runs"]:
	    if r["status"] == "ok":
	        print(r["id"], r["node"], open(d + "/runs/" + r["id"] + "/boot_id").read().strip())
	PY
	node=$(awk "NR == 1 { print \$2 }" before.boots) &&
	scontrol update NodeName="$node" State=DOWN Reason=lab-test &&
	sleep 3 && scontrol update NodeName="$node" State=RESUME &&
	wait $pid &&
	run_journal "proj/$D" >down.journal &&
	test_line_count = 8 down.journal &&
	! grep -v "	ok	" down.journal &&
	while read -r run n boot; do
		test "$(cat "proj/$D/runs/$run/boot_id")" = "$boot" || return 1
	done <before.boots &&
	test_grep "requeued by Slurm after it ran on $node" down.err &&
	lab -C proj report "$id" >down.report &&
	test_grep "cluster: shard [0-9]* (job [0-9]* task [0-9]*) requeued by Slurm" down.report &&
	lab -C proj report "$id" --format html >down.html &&
	test_grep "<p>cluster: shard [0-9]* (job [0-9]* task [0-9]*) requeued by Slurm" down.html &&
	lab -C proj --json report "$id" >down.json &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any(\"requeued by Slurm\" in l for l in d[\"cluster\"]); assert all(r[\"node\"] in (\"n1\", \"n2\") for r in d[\"runs\"])" down.json
'

test_expect_success FULL 'repeat: auto on the cluster: blocks submitted as slots free, none once decided' '
	lab -C proj run seq >seq.out 2>seq.err &&
	Q=$(run_dir seq.err) &&
	test_grep "^  improved  *tg-ratelimit kernelmark.x: increase 10%" seq.out &&
	test_grep "repeat: auto: stopped before boot" seq.err &&
	# a block a shard, never the whole budget (6 boots) up front. How
	# many runs a later block holds the policy decides on this draw of
	# the noise (runs-per-boot 2, or 1 once boots vary more between than
	# within), so the invariants: every block holds both kernels alike,
	# 1 or 2 runs each, and the first block is the full 2
	python3 - "proj/$Q" <<-\PY
	import json, sys
	from collections import Counter
	d = sys.argv[1]
	j = json.load(open(d + "/slurm.json"))
	variant = {r["id"]: r["variant"] for r in json.load(open(d + "/run.json"))["runs"]}
	n = len(j["shards"])
	assert 2 <= n < 6, n
	for s in j["shards"]:
	    c = Counter(variant[r] for r in s["runs"])
	    assert set(c) == {"base", "tg-ratelimit"}, (s, c)
	    assert c["base"] == c["tg-ratelimit"] in (1, 2), (s, c)
	assert len(j["shards"][0]["runs"]) == 4, j
	# the first job takes what the two nodes hold, the rest as they free
	jobs = [s["job"] for s in j["shards"]]
	assert jobs.count(jobs[0]) <= 2, j
	assert n <= 2 or len(set(jobs)) >= 2, j
	PY
'

test_expect_success 'a node with another lab refuses its shard; the head names the node' '
	mkdir -p fake && cat >fake/lab <<-EOF &&
	#!/bin/sh
	# lab of another version on the nodes: the same binary, told so
	LAB_TEST_VERSION=9.9 exec "$NODE_LAB" "\$@"
	EOF
	chmod +x fake/lab &&
	sed "s|^  lab: .*|  lab: $PWD/fake/lab|" proj/lab.yaml >proj/other.yaml &&
	test_must_fail_with 1 lab -C proj -f other.yaml run pair >other.out 2>other.err &&
	test_grep "node n[12]: lab 9.9 here, the head runs lab" other.err &&
	test_grep "refused by its node, not retried" other.err
'

test_expect_success 'a hostile result from a node is refused, nothing written outside the run' '
	cat >fake/evil <<-\EOF &&
	#!/bin/sh
	# a node whose "lab shard" answers with a crafted bundle: a member
	# that climbs out, and the run id of the shard
	python3 - "$2" "$3" <<PY
	import io, os, sys, tarfile
	jobdir, n = sys.argv[1], sys.argv[2]
	rid = os.path.basename(jobdir)
	with tarfile.open(os.path.join(jobdir, "shard-" + n, "result.tar.zst"), "w") as t:
	    for name, data in ((rid + "/MANIFEST", b""), (rid + "/../../../../escaped", b"owned")):
	        i = tarfile.TarInfo(name)
	        i.size = len(data)
	        t.addfile(i, io.BytesIO(data))
	PY
	EOF
	chmod +x fake/evil &&
	sed "s|^  lab: .*|  lab: $PWD/fake/evil|" proj/lab.yaml >proj/evil.yaml &&
	test_must_fail_with 1 lab -C proj -f evil.yaml run pair >evil.out 2>evil.err &&
	test_grep "pair.0001 FAILED: its result .* was refused" evil.err &&
	! find "$TRASH" -name escaped | grep . &&
	E=$(run_dir evil.err) && run_journal "proj/$E" >evil.journal &&
	test_line_count = 4 evil.journal && ! grep "	ok	" evil.journal
'

test_expect_success 'a bare-metal host stays outside Slurm: said before anything is made' '
	python3 - proj/lab.yaml proj/metal.yaml <<-\PY &&
	import sys
	s = open(sys.argv[1]).read()
	s = s.replace("hosts:\n", "hosts:\n  box:\n    ssh: root@127.0.0.1:22\n", 1)
	s = s.replace("  pair:\n", "  pair:\n    hosts: [box]\n", 1)
	open(sys.argv[2], "w").write(s)
	PY
	ls proj/results >before.ls &&
	test_must_fail_with 1 lab -C proj -f metal.yaml run pair >metal.out 2>metal.err &&
	test_grep "experiment pair runs on bare-metal host box: with engine: slurm the cluster.s nodes are the hosts" metal.err &&
	ls proj/results >after.ls && test_cmp before.ls after.ls
'

test_expect_success 'Slurm cannot be reached: a clear error, nothing submitted' '
	"$SRC_DIR/tests/tools/slurm-cluster" stop "$SLURM_DIR" >/dev/null 2>&1 &&
	ls proj/results >before.ls &&
	test_must_fail_with 1 lab -C proj run pair >down2.out 2>down2.err &&
	test_grep "Slurm cannot be reached (nothing was submitted)" down2.err &&
	ls proj/results >after.ls && test_cmp before.ls after.ls
'

test_done
