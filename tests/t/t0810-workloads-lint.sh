#!/bin/sh
# The catalogue's scripts: the shell ones pass shellcheck (warnings and
# errors), the Python parsers compile, every script is executable, and every
# workload and monitor has the scripts the contract asks for.
# lab-test-seconds: 22 (alone here on 2026-12-06: 18 s)
. "$(dirname "$0")/test-lib.sh"

W=$SRC_DIR/workloads

test_expect_success 'every workload has workload.yaml, run and parse; every guest monitor start, stop and parse' "
	for d in '$W'/*/; do
		n=\$(basename \"\$d\")
		test \"\$n\" = lib || test \"\$n\" = monitors && continue
		for f in workload.yaml run parse; do test -f \"\$d\$f\" || { echo \"\$d\$f missing\"; exit 1; }; done
	done &&
	for d in '$W'/monitors/*/; do
		# a host-side monitor (host:) is read by lab: nothing of it runs in the guest
		if grep -q '^host:' \"\$d/monitor.yaml\"; then need='monitor.yaml parse'; else need='monitor.yaml start stop parse'; fi
		for f in \$need; do test -f \"\$d\$f\" || { echo \"\$d\$f missing\"; exit 1; }; done
	done
"

test_expect_success 'scripts are executable' "
	for f in '$W'/*/run '$W'/*/setup '$W'/*/parse '$W'/monitors/*/start '$W'/monitors/*/stop '$W'/monitors/*/parse; do
		test -e \"\$f\" || continue
		test -x \"\$f\" || { echo \"\$f is not executable\"; exit 1; }
	done
"

test_expect_success 'every Python script and module compiles (python3)' "
	for f in '$W'/*/* '$W'/monitors/*/*; do
		test -f \"\$f\" || continue
		case \$f in *.py) ;; *) head -n 1 \"\$f\" | grep -q '^#!.*python3' || continue ;; esac
		echo \"\$f\" >>checked &&
		python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' \"\$f\" || exit 1
	done &&
	grep -q 'monitors/tg-load-writes/start\$' checked &&
	grep -q 'monitors/tg-load-writes/tgw.py\$' checked &&
	grep -q 'monitors/cpupri-masks/cpm.py\$' checked &&
	grep -q 'lib/labparse.py\$' checked
"

test_expect_success 'a workload folder whose name is not a plain name is refused' "
	lab init proj >/dev/null &&
	mkdir 'proj/workloads/bad \$(name)' &&
	printf 'name: bad \$(name)\\ntimeout: 1m\\n' >'proj/workloads/bad \$(name)/workload.yaml' &&
	test_must_fail_with 2 lab -C proj validate 2>err &&
	grep -q 'cannot name a workload' err
"

test_expect_success 'overhead-budget: a percentage above 0, and only a monitor has one' "
	rm -rf 'proj/workloads/bad \$(name)' &&
	mkdir proj/workloads/monitors/cheap proj/workloads/burn &&
	printf 'name: cheap\noverhead-budget: 0%%\n' >proj/workloads/monitors/cheap/monitor.yaml &&
	printf 'name: burn\ntimeout: 1m\noverhead-budget: 3%%\n' >proj/workloads/burn/workload.yaml &&
	test_must_fail_with 2 lab -C proj validate 2>err &&
	grep -q 'burn/workload.yaml:3:18: only a monitor has an overhead-budget' err &&
	grep -q 'cheap/monitor.yaml:2:18: overhead-budget must be a percentage above 0% such as 3%' err &&
	printf 'name: cheap\noverhead-budget: 2.5%%\n' >proj/workloads/monitors/cheap/monitor.yaml &&
	rm -r proj/workloads/burn &&
	lab -C proj validate >out 2>err
"

test_expect_success 'host: and work: are checked where they are declared' "
	lab init proj2 >/dev/null &&
	mkdir proj2/workloads/monitors/h1 proj2/workloads/monitors/h2 proj2/workloads/w1 &&
	printf 'name: h1\\nhost: ssh-host\\n' >proj2/workloads/monitors/h1/monitor.yaml &&
	printf 'name: h2\\nhost: insn-plugin\\nwork: insn.total\\n' >proj2/workloads/monitors/h2/monitor.yaml &&
	printf 'name: w1\\nmetrics: [w1.ops]\\nwork: w1.opz\\nhost: insn-plugin\\n' >proj2/workloads/w1/workload.yaml &&
	test_must_fail_with 2 lab -C proj2 validate 2>err &&
	test_grep -q \"host must be 'insn-plugin'\" err &&
	test_grep -q \"only a workload names its unit of 'work'\" err &&
	test_grep -q \"work names 'w1.opz', which is not one of the metrics: above\" err &&
	test_grep -q \"only a monitor runs on the host\" err
"

command -v shellcheck >/dev/null && test_set_prereq SHELLCHECK
test_expect_success SHELLCHECK 'the shell scripts pass shellcheck (-S warning)' "
	cd '$W' &&
	shellcheck -S warning -x -s sh lib/lab.sh \$(grep -l '^#!/bin/sh' */run */setup monitors/*/start monitors/*/stop 2>/dev/null)
"

test_expect_success PYTHON3 'lab_wait_listen waits for a listener and gives up on none' "
	. '$W/lib/lab.sh'
	(python3 -c 'import socket, time; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1], flush=True); time.sleep(1); s.listen(); time.sleep(5)' >port) &
	while ! test -s port; do sleep 0.1; done
	lab_wait_listen \$(cat port) 5 &&
	test_must_fail_with 1 lab_wait_listen 9 1 2>wl.err &&
	test_grep -q 'nothing listens on port 9 after 1 s' wl.err
"

test_done
