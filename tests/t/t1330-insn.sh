#!/bin/sh
# The insn monitor for real: lab run boots one guest (boot: once) with lab's
# QEMU TCG plugin loaded, reads its per-vCPU instruction counts on the host
# at the start and stop of each run's window, and the monitor's parser
# turns them into insn.total, insn.vcpu.I and insn.per_work. Twice the
# bogo ops of a CPU stressor count about twice the instructions (a CPU
# loop, not hackbench: its count moves with how much the vCPUs spin).
# lab-test-seconds: 35 (make test here: 38 s and 30 s on 2026-12-06/07, with the other lane busy; tests/run-all balances its two lanes by it)
# lab-test-boots: 1
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm

test -f "$SRC_DIR/build/lib/lab-insn.so" || test_skip_all "no build/lib/lab-insn.so (make builds it)"

mkdir proj && for d in kernels images workloads; do ln -s "$SRC_DIR/$d" "proj/$d"; done
python3 - "$P/lab.yaml" proj/lab.yaml <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace("topologies:\n", "topologies:\n  insn-2: {sockets: 1, cores: 2, memory: 1G}\n", 1)
s = s[:s.index("experiments:")] + """experiments:
  insn:
    kernels: [base]
    topology: insn-2
    image: minimal
    boot: once
    repeat: 1
    timeout: 5m
    monitors: [insn]
    workloads:
      - workload: stress-ng
        params: {stressor: cpu, instances: 1, duration: 120s, extra: --cpu-ops 100 --cpu-method int64}
      - workload: stress-ng
        params: {stressor: cpu, instances: 1, duration: 120s, extra: --cpu-ops 200 --cpu-method int64}
"""
open(sys.argv[2], "w").write(s)
PY
trap 'lab -C "$TRASH/proj" -q gc >/dev/null 2>&1; test_remove_trash' EXIT

test_expect_success 'lab run with the insn monitor: one boot under TCG, both runs ok' "
	lab -C '$P' -q kernel build base &&
	lab -C '$P' -q image build minimal &&
	lab -C proj run insn >report 2>err &&
	id=\$(ls proj/results | grep -v index) &&
	echo \"\$id\" >id &&
	test_grep -q 'insn.total' report &&
	test \$(grep -c 'booting; waiting for ssh' err) = 1
"

test_expect_success 'the raw output holds two plugin snapshots; the metrics count every vCPU' "
	for r in 0001 0002; do
		d=proj/results/\$(cat id)/runs/insn.\$r &&
		test \$(grep -c '^insn-v1 vcpus 2\$' \$d/raw/insn.raw) = 2 &&
		test \$(grep -c '^end\$' \$d/raw/insn.raw) = 2 &&
		grep -q \"^echo 'lab: window start'\" \$d/driver.sh &&
		! test -e \$d/raw/mon/insn.raw || exit 1
	done &&
	python3 - proj/results/\$(cat id)/runs <<-'PY'
	import sys
	m = [dict(l.split() for l in open('%s/insn.%s/metrics' % (sys.argv[1], r))) for r in ('0001', '0002')]
	for x in m:
	    t, v0, v1 = int(x['insn.total']), int(x['insn.vcpu.0']), int(x['insn.vcpu.1'])
	    assert t > 0 and v0 > 0 and v1 > 0 and t == v0 + v1, x
	    w = float(x['stress-ng.cpu.bogo_ops'])
	    assert abs(float(x['insn.per_work']) - t / w) <= 1e-5 * t / w, x
	# twice the bogo ops: about twice the instructions (1.86 here: stress-ng's start is the constant part)
	ratio = int(m[1]['insn.total']) / int(m[0]['insn.total'])
	print('insn.total ratio %.3f' % ratio)
	assert 1.7 <= ratio <= 2.3, ratio
	PY
"

test_done
