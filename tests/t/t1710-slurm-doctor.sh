#!/bin/sh
# lab doctor --engine slurm against a real two-node Slurm cluster of this
# machine (tests/tools/slurm-cluster: nodes n1 and n2, partition lab): the
# engine: section, the controller, the partition, the spool, and each idle
# node probed with srun (its lab's version, accel, libvirt, the spool seen
# from it); a wrong partition, a node set DOWN, a lab missing on the nodes,
# and a controller that is gone, each said plainly. The cluster is this
# test's own, in $TRASH, on LAB_TEST_SLURM_PORT (default 18817, and the two
# ports after it); it is stopped at exit.
# lab-test-seconds: 45 (make test here: 43 s and 42 s on 2026-12-06/07, most of it waiting on the cluster's daemons)
. "$(dirname "$0")/test-lib.sh"

missing=""
for p in munged slurmctld slurmd sinfo srun scontrol; do
	command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] || test_skip_all "missing:$missing (make deps installs slurm-wlm and munge)"
command -v python3 >/dev/null 2>&1 || test_skip_all "missing: python3 (it reads lab's JSON here)"

CLUSTER=$SRC_DIR/tests/tools/slurm-cluster
C=$TRASH/slc
PORT=${LAB_TEST_SLURM_PORT:-18817}
trap '"$CLUSTER" stop "$C" >/dev/null 2>&1; test_remove_trash' EXIT
"$CLUSTER" start "$C" "$PORT" >"$TRASH/cluster.env" 2>"$TRASH/cluster.err" && . "$TRASH/cluster.env"
V=$("$LAB" --version | sed 's/^lab //')

# project DIR [ENGINE_LINES]: a project from lab init, its engine: section the lines given
project() {
	lab init "$1" >/dev/null &&
	if [ -n "${2:-}" ]; then printf 'engine:\n%s\n' "$2" >>"$1/lab.yaml"; fi &&
	lab -C "$1" validate
}

# wait_idle NODE: until sinfo says idle (a node back from DOWN answers again within seconds)
wait_idle() {
	i=0
	while [ "$(sinfo --noheader --Node --nodes="$1" --format=%T)" != idle ]; do
		i=$((i + 1))
		[ $i -lt 150 ] || { echo "$1 is not idle after 30 s: $(sinfo --Node)" >&2; return 1; }
		sleep 0.2
	done
}

test_expect_success 'the test cluster runs' '
	cat cluster.err &&
	test -n "${SLURM_CONF:-}" &&
	sinfo --noheader --Node --format="%N %T" >nodes &&
	test_grep -q "^n1 idle" nodes && test_grep -q "^n2 idle" nodes
'

mkdir -p "$TRASH/spool"
NODE_LAB=$(test_node_lab) || exit 1
project ok "  partition: lab
  spool: $TRASH/spool
  lab: $NODE_LAB" >/dev/null 2>&1

test_expect_success 'both idle nodes are probed and run the head'"'"'s lab version' '
	rc=0 && lab -C ok doctor --engine slurm >out 2>err || rc=$? &&
	test_grep -q "^engine  *ok  *lab.yaml: partition lab, spool $TRASH/spool, lab on the nodes $NODE_LAB$" out &&
	test_grep -q "^slurm  *ok  *slurm-wlm [0-9.]*, sinfo answers" out &&
	test_grep -q "^partition  *ok  *lab (the default): 2 nodes: n1 idle, n2 idle$" out &&
	test_grep -q "^spool  *ok  *$TRASH/spool: a folder writable here$" out &&
	for n in n1 n2; do
		test_grep -q "^node $n  *\(ok\|warn\|MISSING\)  *lab $V, \(kvm\|tcg\)" out &&
		grep "^node $n " out | grep -q "spool shared and writable" || exit 1
	done &&
	! grep -q "not the head" out &&
	test_grep -q "probing n1" err &&
	if grep -q "^[a-z0-9 ]*  *MISSING  " out; then test $rc = 1; else test $rc = 0; fi &&
	ls -a spool >left && test_line_count = 2 left
'

test_expect_success 'a partition Slurm does not have is MISSING, naming the ones it has' '
	project nopart "  partition: lbb
  spool: $TRASH/spool" &&
	test_must_fail_with 1 lab -C nopart doctor --engine slurm >out &&
	test_grep -q "^partition  *MISSING  *Slurm has no partition .lbb. (it has lab; did you mean .lab.?)$" out &&
	test_grep -q "^missing partition (for the nodes lab.s shards run on): set engine: partition: in lab.yaml" out &&
	! grep -q "^node " out
'

test_expect_success 'without an engine: section doctor says lab.yaml has none' '
	project plain &&
	test_must_fail_with 1 lab -C plain doctor --engine slurm >out &&
	test_grep -q "^engine  *MISSING  *lab.yaml has no engine: section$" out &&
	test_grep -q "^missing engine (for lab run --engine slurm: where the boots run): give lab.yaml an engine: section" out
'

test_expect_success 'a node set DOWN is listed with its state, not probed; --json has every check' '
	scontrol update NodeName=n2 State=DOWN Reason=test &&
	rc=0 && lab -C ok --json doctor --engine slurm >out.json || rc=$? &&
	scontrol update NodeName=n2 State=RESUME && wait_idle n2 &&
	python3 - "$V" "$rc" <<-\EOF
	import json, sys
	checks = json.load(open("out.json"))
	c = {x["check"]: x for x in checks}
	assert [x["check"] for x in checks] == ["engine", "slurm", "partition", "spool", "node n1", "node n2"], checks
	assert c["partition"]["found"] == "lab (the default): 2 nodes: n1 idle, n2 down", c["partition"]
	assert c["node n2"]["status"] == "warn" and c["node n2"]["found"] == "not probed: down", c["node n2"]
	assert "State=RESUME" in c["node n2"]["fix"], c["node n2"]
	assert c["node n1"]["found"].startswith("lab %s, " % sys.argv[1]), c["node n1"]
	assert set(c["node n1"]) >= {"check", "status", "found", "needs"}
	missing = any(x["status"] == "MISSING" for x in checks)
	assert int(sys.argv[2]) == (1 if missing else 0), sys.argv[2]
	EOF
'

test_expect_success 'engine: lab: a path no node has fails each node, saying why' '
	project nolab "  spool: $TRASH/nospool
  lab: /nonexistent/lab" &&
	test_must_fail_with 1 lab -C nolab doctor --engine slurm >out &&
	test_grep -q "^partition  *ok  *lab (the default): 2 nodes: n1 idle, n2 idle$" out &&
	test_grep -q "^spool  *MISSING  *$TRASH/nospool: No such file or directory$" out &&
	for n in n1 n2; do
		test_grep -q "^node $n  *MISSING  *the probe did not run: srun failed (exit status 2): .*execve(): /nonexistent/lab: No such file or directory" out &&
		test_grep -q "^missing node $n (for boots on the node (lab shard)): install lab $V on $n at /nonexistent/lab " out || exit 1
	done
'

test_expect_success 'with the controller gone, doctor says Slurm cannot be reached' '
	"$CLUSTER" stop "$C" >/dev/null &&
	test_must_fail_with 1 lab -C ok doctor --engine slurm >out &&
	test_grep -q "^slurm  *MISSING  *cannot reach Slurm: sinfo failed (exit status 1): .*Unable to contact slurm controller" out &&
	test_grep -q "^missing slurm (for .*): start slurmctld, or point SLURM_CONF at the cluster.s slurm.conf" out &&
	! grep -q "^partition\|^node " out &&
	test_grep -q "^spool  *ok" out
'

test_done
