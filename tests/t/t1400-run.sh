#!/bin/sh
# lab run for real, on the base kernel and the minimal image: a two-run
# experiment (one good workload, one that fails) boots a guest per run,
# stores raw outputs, metrics, evidence and a journal, indexes the run,
# and reports; a failed run is recorded with its reason while the rest go
# on; after kill -9 in the middle, lab gc and --resume finish the missing
# run without repeating the stored one. The runs are made with
# --set repeat=1 (lab.yaml says 5), which --resume must apply again.
# lab-test-seconds: 115 (make test here: 112 s and 120 s on 2026-12-06/07, with the other lane busy; tests/run-all balances its two lanes by it)
# lab-test-seconds-full: 245
# lab-test-boots: 2
# lab-test-boots-full: 4
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

# A project of its own: the shipped kernels/images/workloads, a small experiment.
mkdir proj && for d in kernels images workloads; do ln -s "$SRC_DIR/$d" "proj/$d"; done
python3 - "$P/lab.yaml" proj/lab.yaml <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s[:s.index("experiments:")] + """experiments:
  smoke:
    kernels: [base]
    topology: quick-2x2
    image: minimal
    repeat: ${repeat}
    warmup: 1s
    timeout: 5m
    monitors: [cpu-stat]
    workloads:
      - workload: stress-ng
        params: {stressor: switch, instances: 100%, duration: 3s, cgroup: lab/quick}
      - workload: stress-ng
        params: {stressor: no-such-stressor, duration: 2s}
"""
open(sys.argv[2], "w").write(s)
PY
trap 'lab -C "$TRASH/proj" -q gc >/dev/null 2>&1; lab -C "$TRASH/proj2" -q gc >/dev/null 2>&1; lab -C "$P" -q vm down --all >/dev/null 2>&1; test_remove_trash' EXIT

test_expect_success 'the experiment is valid and plans two runs with --set repeat=1' "
	lab -C proj validate &&
	lab -C proj --set repeat=1 plan smoke >plan &&
	test_line_count = 3 plan &&
	lab -C proj plan smoke >plan5 &&
	test_line_count = 11 plan5
"

test_expect_success 'lab run: the good run is stored, the bad one fails with its reason, exit 1' "
	lab -C '$P' -q kernel build base &&
	lab -C '$P' -q image build minimal &&
	test_must_fail_with 1 lab -C proj --set repeat=1 run smoke >report 2>err &&
	id=\$(ls proj/results | grep -v index) &&
	echo \"\$id\" >id &&
	test \$(echo \"\$id\" | wc -l) = 1 &&
	run_journal proj/results/\$id | grep -q '^smoke.0001	ok	base	0	1	stress-ng stressor=switch' &&
	run_journal proj/results/\$id | grep -q '^smoke.0002	failed	base	1	1	stress-ng stressor=no-such-stressor.*the warm-up step failed' &&
	grep -q 'smoke.0002 base FAILED' err &&
	grep -q 'Failed runs' report
"

test_expect_success 'the run folder holds raw outputs, metrics and the evidence' "
	d=proj/results/\$(cat id)/runs/smoke.0001 &&
	for f in raw/stress-ng.raw raw/cpu-stat.raw raw/uname metrics console.log dmesg kernel.config packages.txt \
		driver.sh reproduce.sh; do
		test -s \$d/\$f || { echo \"\$f missing\"; exit 1; }
	done &&
	grep -q '^stress-ng.switch.ops_per_sec [0-9]' \$d/metrics &&
	grep -q '^cpu-stat.user_pct ' \$d/metrics &&
	# the host's CPU around the run: busy, this guest's QEMU (a stressor on
	# every vCPU keeps it busy), the rest; busy = qemu + other
	python3 -c '
import sys
m = dict(l.split() for l in open(sys.argv[1]))
b, q, o = (float(m[k]) for k in (\"host.busy_pct\", \"host.qemu_pct\", \"host.other_pct\"))
assert 0 < b <= 100 and 0 < q <= b and 0 <= o, (b, q, o)
assert abs(b - q - o) < 0.02, (b, q, o)
' \$d/metrics &&
	grep -q 'lab-base' \$d/raw/uname &&
	# its environment: this machine's CPU, QEMU's version, the accel the
	# domain asked for (what lab doctor says), the booted config's digest;
	# run.json names it
	{ lab --json doctor >doctor.json || :; } &&
	python3 -c '
import hashlib, json, os, sys
d = sys.argv[1]
f = json.load(open(d + \"/fingerprint.json\"))
model = [l.split(\":\", 1)[1].strip() for l in open(\"/proc/cpuinfo\") if l.startswith(\"model name\")][0]
assert f[\"cpu_model\"] == model, (f, model)
accel = [c for c in json.load(open(sys.argv[3])) if c[\"check\"] == \"accel\"][0][\"found\"].split(\":\")[0]
assert f[\"accel\"] == accel, (f, accel)
assert f[\"qemu\"] and f[\"qemu\"][0].isdigit(), f
assert f[\"kernel_config\"] == hashlib.sha256(open(d + \"/kernel.config\", \"rb\").read()).hexdigest(), f
assert f[\"timing\"] == \"host\" and f[\"topology\"] == \"quick-2x2\" and len(f[\"topology_digest\"]) == 64, f
r = json.load(open(sys.argv[2]))
assert r[\"fingerprints\"][r[\"runs\"][0][\"fingerprint\"]] == f, r
' \$d proj/results/\$(cat id)/run.json doctor.json &&
	test -s proj/results/\$(cat id)/lab.yaml && test -s proj/results/\$(cat id)/plan.json &&
	lab snapshot show proj/results/\$(cat id) | grep -q ' kernel-config built/kernels/' &&
	sh -n \$d/reproduce.sh &&
	d2=proj/results/\$(cat id)/runs/smoke.0002 &&
	grep -q 'no-such-stressor' \$d2/raw/warmup.log
"

test_expect_success 'lab ls and lab report read it back' "
	lab -C proj ls >ls &&
	grep -q \"^\$(cat id)  smoke  *2  *1  *1  *0\" ls &&
	lab -C proj report \$(cat id) --all >r &&
	grep -q 'stress-ng.switch.ops_per_sec' r &&
	lab -C proj report --format json \$(cat id) >r.json &&
	python3 -c 'import json,sys; d=json.load(open(\"r.json\")); assert d[\"runs\"][0][\"status\"] == \"ok\", d' &&
	test_must_fail_with 2 lab -C proj report nope 2>err &&
	grep -q \"no stored run 'nope'\" err
"

test_expect_success 'the index is rebuilt from the folders' "
	rm proj/results/index.sqlite* &&
	lab -C proj gc --reindex >out &&
	grep -q 'reindexed 1 stored runs' out &&
	lab -C proj ls | grep -q \"^\$(cat id) \"
"

test_expect_success FULL 'kill -9 in the middle: gc and --resume lose nothing stored, repeat nothing done' "
	mkdir proj2 && cp -P proj/lab.yaml proj/kernels proj/images proj/workloads proj2/ || exit 1
	# the binary itself in the background (not the lab() wrapper): kill -9 must hit lab
	\"\$LAB\" -C proj2 --set repeat=1 run smoke >/dev/null 2>&1 &
	pid=\$! n=0
	until run_journal proj2/results/* 2>/dev/null | grep -q '^smoke.0001	ok'; do
		sleep 2; n=\$((n + 1)); test \$n -lt 300 || exit 1
	done &&
	kill -9 \$pid &&
	sleep 1 &&
	id=\$(ls proj2/results | grep -v index) &&
	m1=\$(stat -c %Y proj2/results/\$id/runs/smoke.0001/metrics) &&
	run_journal proj2/results/\$id | grep -q '^smoke.0002	pending' &&
	lab -C proj2 gc >gc &&
	test \"\$(cat proj2/results/\$id/set)\" = repeat=1 &&
	test_must_fail_with 2 lab -C proj2 --set repeat=2 run --resume \$id 2>err &&
	grep -q 'resume takes the --set values the run was made with' err &&
	test_must_fail_with 1 lab -C proj2 run --resume \$id >/dev/null 2>err &&
	! run_journal proj2/results/\$id | grep -q 'not in the plan' &&
	run_journal proj2/results/\$id | grep -q '^smoke.0001	ok' &&
	run_journal proj2/results/\$id | grep -q '^smoke.0002	failed' &&
	test \$(stat -c %Y proj2/results/\$id/runs/smoke.0001/metrics) = \$m1 &&
	! grep -q 'smoke.0001 base: boot' err &&
	lab -C '$P' vm ls >vms && ! grep -q '^run-' vms &&
	# the killed run's QEMU is gone too, not only its folder
	sleep 2 && ! pgrep -f \"\$XDG_STATE_HOME/lab/vms/run-\" >/dev/null
"

test_done
