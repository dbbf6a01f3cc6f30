#!/bin/sh
# make install into a staging root: the installed binary finds its data
# (PREFIX/share/lab) and `lab init` works from anywhere.
. "$(dirname "$0")/test-lib.sh"

command -v make >/dev/null 2>&1 && test_set_prereq MAKE
command -v groff >/dev/null 2>&1 && test_set_prereq GROFF

test_expect_success MAKE 'make install DESTDIR=... PREFIX=/opt/lab installs binary, man page, completion, data' "
	make -s -C '$SRC_DIR' install DESTDIR='$TRASH/root' PREFIX=/opt/lab >/dev/null &&
	test -x root/opt/lab/bin/lab &&
	test -f root/opt/lab/share/man/man1/lab.1 &&
	test -f root/opt/lab/share/bash-completion/completions/lab &&
	test -f root/opt/lab/share/lab/lab.yaml &&
	test -f root/opt/lab/share/lab/workloads/stress-ng/workload.yaml &&
	test -f root/opt/lab/share/lab/lib/lab-insn.so
"

# make quick from a fresh clone: where KVM does not work it runs
# quick-insn, whose insn monitor needs lab's QEMU plugin
test_expect_success MAKE 'make quick builds what it runs: lab and the insn plugin' "
	make -s -C '$SRC_DIR' -n -B quick >quick.n &&
	test_grep -q -- '-o build/lib/lab-insn.so' quick.n &&
	test_grep -q -- '-o build/lab ' quick.n &&
	test_grep -q 'build/lab --set kernel_start=tinyconfig --set kernel_config=kernels/configs/test.config run quick' quick.n
"

test_expect_success MAKE 'the installed lab initialises and validates a project' '
	root/opt/lab/bin/lab init p >/dev/null &&
	root/opt/lab/bin/lab -C p validate &&
	root/opt/lab/bin/lab -C p plan --as-declared quick >plan &&
	test_line_count = 49 plan
'

test_expect_success MAKE 'the installed lab loads the installed insn plugin' '
	(unset LAB_INSN_PLUGIN; root/opt/lab/bin/lab -C p vm xml quick-2x2 --accel tcg --insn) >insn.xml &&
	test_grep -q "file=$TRASH/root/opt/lab/\(bin/\.\./\)\?share/lab/lib/lab-insn.so,sock=" insn.xml
'

test_expect_success MAKE,GROFF 'the man page renders without warnings' '
	groff -man -Tutf8 -ww root/opt/lab/share/man/man1/lab.1 >/dev/null 2>warn &&
	test_line_count = 0 warn
'

test_done
