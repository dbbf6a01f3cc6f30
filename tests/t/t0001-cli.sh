#!/bin/sh
# The command line as a user drives it: help, version, dispatch, global
# options, exit codes, JSON errors, init -> validate -> plan.
# lab-test-seconds: 20 (alone here on 2026-12-06: 15 s)
. "$(dirname "$0")/test-lib.sh"

test_expect_success 'lab --help lists every command and exits 0' '
	lab --help >out &&
	for c in init validate plan kernel image vm host run ls report compare bundle fetch doctor gc; do
		test_grep -q "^  $c " out || exit 1
	done
'

test_expect_success 'lab with no command prints usage on stderr and exits 2' '
	test_must_fail_with 2 lab >out 2>err &&
	test_grep -q "^usage: lab" err &&
	test_line_count = 0 out
'

test_expect_success 'lab --version' '
	lab --version >out &&
	test_grep -q "^lab [0-9]" out
'

test_expect_success 'unknown command suggests the closest one' '
	test_must_fail_with 2 lab plna 2>err &&
	test_grep -q "no command .plna. (did you mean .plan.?)" err
'

test_expect_success 'unknown global option is a usage error' '
	test_must_fail_with 2 lab --frobnicate plan 2>err &&
	test_grep -q "unknown option" err
'

test_expect_success 'lab doctor: every check, its exit status follows what is missing' '
	rc=0 && lab doctor >out || rc=$? &&
	for c in accel libvirt make gcc mmdebstrap qemu-img genisoimage qemu-system-x86_64 ssh perf libelf \
		kernel-source root cgroup2 disk machine; do
		test_grep -q "^$c  *\(ok\|warn\|MISSING\)  " out || exit 1
	done &&
	if grep -q "^[a-z0-9_.-]*  *MISSING  " out; then test $rc = 1; else test $rc = 0; fi &&
	test_grep -q "^\(ready\|ready, with [0-9]* warnings\?\|[0-9]* missing, .*\)$" out
'

test_expect_success 'lab doctor names what is missing and how to get it (a PATH without mmdebstrap)' '
	mkdir bin && for p in make gcc qemu-img ssh; do ln -s "$(command -v $p)" bin/$p || exit 1; done &&
	PATH=$PWD/bin test_must_fail_with 1 "$LAB" doctor >out &&
	test_grep -q "^mmdebstrap  *MISSING  *not in PATH" out &&
	test_grep -q "^missing mmdebstrap (for guest images): apt install mmdebstrap$" out &&
	test_grep -q "^make  *ok  *$PWD/bin/make" out &&
	test_grep -q "^[0-9]* missing, [0-9]* warnings*: lab cannot do all of its work here$" out &&
	PATH=$PWD/bin test_must_fail_with 1 "$LAB" --json doctor >out.json &&
	python3 -c "import json, sys; c = {x[\"check\"]: x for x in json.load(open(\"out.json\"))}; assert c[\"mmdebstrap\"][\"status\"] == \"MISSING\" and c[\"mmdebstrap\"][\"fix\"] == \"apt install mmdebstrap\", c[\"mmdebstrap\"]; assert \"fix\" not in c[\"make\"]" &&
	test_must_fail_with 2 lab doctor extra 2>err &&
	test_grep -q "doctor takes no arguments" err
'

test_expect_success 'run, report and ls refuse bad usage with exit 2 and a reason' '
	lab init usage >/dev/null &&
	cd usage &&
	test_must_fail_with 2 lab run 2>err &&
	test_grep -q "name the experiments to run" err &&
	test_must_fail_with 2 lab run no-such-experiment 2>err &&
	test_grep -q "no-such-experiment" err &&
	test_must_fail_with 2 lab run --bogus 2>err &&
	test_grep -q "unknown option" err &&
	# options after the experiments too, as git takes them
	test_must_fail_with 2 lab run quick --jobs 0 2>err &&
	test_grep -q "is not a number of guests" err &&
	! test_grep -q "no experiment" err &&
	test_must_fail_with 2 lab run quick --bogus 2>err &&
	test_grep -q "unknown option" err &&
	lab plan quick --json >plan.json && lab --json plan quick >plan2.json &&
	test_cmp plan.json plan2.json &&
	lab kernel show base --json >k.json &&
	python3 -c "import json; assert json.load(open(\"k.json\"))[\"variant\"] == \"base\"" &&
	test_must_fail_with 2 lab report 2>err &&
	test_grep -q "name one stored run" err &&
	test_must_fail_with 2 lab report --format pdf x 2>err &&
	test_grep -q "text, md, html or json" err &&
	test_must_fail_with 2 lab run --resume 20990101-000000-0000 2>err &&
	test_grep -q "no stored run" err &&
	lab ls >out && test_line_count = 0 out
'

test_expect_success 'help COMMAND and COMMAND --help print its usage' '
	lab help plan >a &&
	lab plan --help >b &&
	test_cmp a b &&
	test_grep -q "usage: lab \[global options\] plan \[--as-declared\] \[EXPERIMENT...\]" a
'

test_expect_success 'no lab.yaml: a clear error, exit 2' '
	mkdir empty &&
	test_must_fail_with 2 lab -C empty validate 2>err &&
	test_grep -q "no lab.yaml here" err
'

test_expect_success 'init writes lab.yaml and the folders it references' '
	lab init proj >out &&
	test -f proj/lab.yaml &&
	test -d proj/workloads/stress-ng &&
	test -f proj/workloads/stress-ng/workload.yaml &&
	test -f proj/kernels/configs/guest.config &&
	test -d proj/kernels/patches/sched-fair-ratelimit-tg-load-avg &&
	test -f proj/images/bench.yaml &&
	test_grep -q "^version: 1" proj/lab.yaml
'

test_expect_success 'the initialised lab.yaml validates silently' '
	lab -C proj validate >out 2>err &&
	test_line_count = 0 out &&
	test_line_count = 0 err
'

test_expect_success 'init refuses to overwrite, --force replaces' '
	echo "# mine" >proj/lab.yaml &&
	test_must_fail_with 2 lab init proj 2>err &&
	test_grep -q "exists already" err &&
	test_grep -q "^# mine" proj/lab.yaml &&
	lab init --force proj &&
	test_grep -q "^version: 1" proj/lab.yaml
'

test_expect_success 'run --engine slurm without an engine: section with a spool: refused before anything is made' '
	test_must_fail_with 1 lab -C proj run --engine slurm --as-declared quick 2>err &&
	test_grep -q "^lab: --engine slurm: lab.yaml has no engine: section with a spool:" err &&
	test ! -d proj/results
'

test_expect_success 'plan of the initialised project interleaves base and patched, the other way round in the second boot' '
	lab -C proj plan --as-declared quick >plan &&
	awk "NR > 1 && \$7 == 1 {print \$2}" plan | head -2 >kernels &&
	awk "NR > 1 && \$7 == 2 {print \$2}" plan | head -2 >>kernels &&
	printf "base\ntg-ratelimit\ntg-ratelimit\nbase\n" >expect &&
	test_cmp expect kernels
'

test_expect_success 'where KVM does not work, plan quick plans its stand-in quick-insn and says why; with KVM or --as-declared, quick' '
	LAB_ACCEL=tcg lab -C proj plan quick >plan 2>err &&
	test_line_count = 1 err &&
	test_grep -q "^lab: quick: KVM does not work here (LAB_ACCEL=tcg): running .quick-insn. in its place, its stand-in without KVM (lab.yaml: without-kvm); --as-declared runs .quick. itself\$" err &&
	awk "NR > 1 {print \$1 > \"ids\"; print \$3}" plan | sort -u >topologies &&
	echo quick-icount >expect &&
	test_cmp expect topologies &&
	! grep -v "^quick-insn\.[0-9]*\$" ids &&
	LAB_ACCEL=tcg lab -C proj plan quick-insn >direct 2>err &&
	test_line_count = 0 err &&
	test_cmp direct plan &&
	LAB_ACCEL=kvm lab -C proj plan quick >kvm 2>err &&
	test_line_count = 0 err &&
	grep -q "^quick.0001  base  *quick-2x1 " kvm &&
	LAB_ACCEL=tcg lab -C proj plan quick --as-declared >declared 2>err &&
	test_line_count = 0 err &&
	test_cmp kvm declared &&
	LAB_ACCEL=tcg lab -C proj -q plan quick >quiet 2>err &&
	test_line_count = 0 err &&
	test_cmp plan quiet
'

test_expect_success 'plan --json and -f with a path' '
	lab -f proj/lab.yaml plan --json --as-declared quick >plan.json &&
	python3 -c "import json,sys; d=json.load(open(\"plan.json\")); assert len(d)==48, len(d); assert d[0][\"kernel\"]==\"base\" and d[1][\"kernel\"]==\"tg-ratelimit\"; assert d[0][\"params\"][\"stressor\"]==\"switch\""
'

test_expect_success 'plan of an unknown experiment suggests one' '
	test_must_fail_with 2 lab -C proj plan quik 2>err &&
	test_grep -q "no experiment .quik. (did you mean .quick.?)" err
'

test_expect_success '--set gives a var another value; unknown names and bad forms are errors' '
	lab -C proj --set repeat=2 --set duration=7s plan tg-load-avg >plan &&
	grep -q "^tg-load-avg.0003  tg-ratelimit .* 2  *2  *threads=75% tables=8 duration=7s" plan &&
	! grep -q "  3  " plan &&
	test_must_fail_with 2 lab -C proj --set duraton=5s plan 2>err &&
	test_grep -q "^--set duraton=5s: lab.yaml has no variable .duraton. (did you mean .duration.?)" err &&
	test_must_fail_with 2 lab -C proj --set nosuch=1 validate 2>err &&
	test_grep -q "has no variable .nosuch. (vars: topology, repeat, duration, " err &&
	test_must_fail_with 2 lab -C proj --set repeat plan 2>err &&
	test_grep -q "^--set repeat: expected NAME=VALUE" err &&
	test_must_fail_with 2 lab -C proj --set repeat=lots plan 2>err &&
	test_grep -q "lab.yaml:[0-9]*:[0-9]*: .*lots" err
'

test_expect_success '--kernels cuts experiments down to some variants and sweep steps' '
	lab -C proj --kernels base,pcp-auto@9 plan pcp-auto >plan &&
	awk "NR > 1 {print \$2}" plan | sort -u >kernels &&
	printf "base\npcp-auto@9\n" >expect &&
	test_cmp expect kernels &&
	lab -C proj plan pcp-auto >all &&
	grep -q "pcp-auto@5" all &&
	lab -C proj --kernels pcp-auto@9,base plan pcp-auto | sed -n 2p | grep -q "^pcp-auto.0001  base " &&
	lab -C proj --kernels base,pcp-auto@9 plan --as-declared quick >quick &&
	grep -q "^quick.0002  base " quick && ! grep -q tg-ratelimit quick &&
	test_must_fail_with 2 lab -C proj --kernels base,pcp-auto@4 plan 2>err &&
	test_grep -q "^--kernels: no experiment of lab.yaml compares .pcp-auto@4." err
'

test_expect_success 'validate --json reports errors as an error object on stdout' '
	printf "version: 1\nexperiments:\n  x:\n    kernels: [a, b]\n" >bad.yaml &&
	test_must_fail_with 2 lab --json validate bad.yaml >out &&
	python3 -c "import json; d=json.load(open(\"out\")); assert \"error\" in d; e=d[\"errors\"]; assert e[0][\"file\"]==\"bad.yaml\" and e[0][\"line\"]==3, e"
'

test_expect_success 'validate --json on a valid file says so' '
	lab -C proj validate --json >out &&
	python3 -c "import json; d=json.load(open(\"out\")); assert d[\"valid\"] is True and d[\"experiments\"]>=4"
'

test_expect_success 'every error is reported, not only the first, sorted by position' '
	cat >many.yaml <<-\EOF &&
	version: 1
	kernels:
	  k:
	    sorce: x
	topologies:
	  t:
	    memory: lots
	EOF
	test_must_fail_with 2 lab validate many.yaml 2>err &&
	test_line_count = 2 err &&
	head -1 err | test_grep -q "^many.yaml:4:5: unknown key .sorce. in kernel .k. (did you mean .source.?)" &&
	tail -1 err | test_grep -q "^many.yaml:7:13: memory must be a size"
'

test_expect_success 'a missing -f file names the file' '
	test_must_fail_with 2 lab -f nowhere.yaml plan 2>err &&
	test_grep -q "cannot read .nowhere.yaml." err
'

test_expect_success 'gc with nothing left behind removes nothing' "
	XDG_STATE_HOME=\$PWD/gcstate XDG_CACHE_HOME=\$PWD/gccache lab gc >out &&
	test_line_count = 0 out &&
	mkdir -p gccache/lab/images/tmp-x-999999999 &&
	XDG_STATE_HOME=\$PWD/gcstate XDG_CACHE_HOME=\$PWD/gccache lab gc --dry-run >out &&
	test_grep -q 'would remove unfinished image build' out &&
	test -d gccache/lab/images/tmp-x-999999999 &&
	XDG_STATE_HOME=\$PWD/gcstate XDG_CACHE_HOME=\$PWD/gccache lab gc >out &&
	! test -d gccache/lab/images/tmp-x-999999999
"

test_done
