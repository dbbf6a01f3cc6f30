#!/bin/sh
# No C function of lab/ is longer than 80 lines, counted from the line with
# its name to its closing brace (tests/tools/func-length measures them with
# ctags; `func-length list` prints them all, the longest first). The fake
# trees check the measure; the last tests check lab/ itself. An argument
# names another lab/ folder to check (e.g. an older checkout's).
. "$(dirname "$0")/test-lib.sh"

F=$SRC_DIR/tests/tools/func-length
L=${1:-$SRC_DIR/lab}

# fn NAME N [static]: a C function of N lines in lab's style: the line with
# its name, the opening brace on a line of its own, N - 3 statements and
# the closing brace
fn() {
	echo "${3:+$3 }void $1(int x)"
	echo "{"
	_i=3
	while [ "$_i" -lt "$2" ]; do echo "	x++;"; _i=$((_i + 1)); done
	echo "}"
}

test_expect_success 'a function of 81 lines is named with its file and line, and fails the check' '
	mkdir -p long/util &&
	{ echo "#include <stdio.h>"; echo; fn too_long 81; } >long/util/a.c &&
	test_must_fail_with 1 "$F" check "$PWD/long" >why &&
	echo "util/a.c:3: too_long is 81 lines (at most 80)" >want &&
	test_cmp want why &&
	test_must_fail_with 1 "$F" check 80 "$PWD/long" >why &&
	test_cmp want why
'

test_expect_success 'a function of exactly 80 lines passes, and fails a limit of 79' '
	mkdir -p fits/util &&
	fn just_fits 80 >fits/util/a.c &&
	"$F" list "$PWD/fits" >list &&
	echo "80 util/a.c:1 just_fits" >want && test_cmp want list &&
	"$F" check "$PWD/fits" >why &&
	test_line_count = 0 why &&
	test_must_fail_with 1 "$F" check 79 "$PWD/fits" >why &&
	echo "util/a.c:1: just_fits is 80 lines (at most 79)" >want &&
	test_cmp want why
'

test_expect_success 'a static function counts too' '
	mkdir -p statics/util statics/m &&
	{ fn helper 81 static; echo; fn m_run 5; } >statics/m/b.c &&
	test_must_fail_with 1 "$F" check "$PWD/statics" >why &&
	echo "m/b.c:1: helper is 81 lines (at most 80)" >want &&
	test_cmp want why
'

test_expect_success 'a long initializer, comment, enum or prototype outside a function is no function' '
	mkdir -p data/util &&
	{
		echo "/*"
		_i=0; while [ $_i -lt 100 ]; do echo " * a comment of a hundred lines"; _i=$((_i + 1)); done
		echo " */"
		echo "struct pair { int a, b; };"
		echo "static const struct pair pairs[] ="
		echo "{"
		_i=0; while [ $_i -lt 100 ]; do echo "	{ $_i, $_i },"; _i=$((_i + 1)); done
		echo "};"
		echo "static const struct pair one = {"
		_i=0; while [ $_i -lt 90 ]; do echo "	.a = $_i,"; _i=$((_i + 1)); done
		echo "};"
		echo "enum colour {"
		_i=0; while [ $_i -lt 90 ]; do echo "	COLOUR_$_i,"; _i=$((_i + 1)); done
		echo "};"
		echo "void small(int x);"
		fn small 4
	} >data/util/a.c &&
	"$F" list "$PWD/data" >list &&
	grep -n "^void small(int x)$" data/util/a.c | cut -d: -f1 >at &&
	echo "4 util/a.c:$(cat at) small" >want && test_cmp want list &&
	"$F" check "$PWD/data" >why &&
	test_line_count = 0 why
'

test_expect_success 'two functions in one file are measured each on its own' '
	mkdir -p two/util &&
	{ fn first 10; echo; fn second 81; echo; fn third 20; } >two/util/a.c &&
	"$F" list "$PWD/two" >list &&
	printf "81 util/a.c:12 second\n20 util/a.c:94 third\n10 util/a.c:1 first\n" >want &&
	test_cmp want list &&
	test_must_fail_with 1 "$F" check "$PWD/two" >why &&
	echo "util/a.c:12: second is 81 lines (at most 80)" >want &&
	test_cmp want why
'

test_expect_success 'a function counts from the line with its name, its arguments on two lines' '
	mkdir -p wide/util &&
	cat >wide/util/a.c <<-\EOF &&
	#include <stddef.h>

	int wide(const char *a, size_t na,
		 const char *b)
	{
		return 0;
	}
	EOF
	"$F" list "$PWD/wide" >list &&
	echo "5 util/a.c:3 wide" >want && test_cmp want list
'

test_expect_success 'the QEMU plugin (plugin/) is measured too, and the longest come first' '
	mkdir -p plug/util plug/plugin &&
	fn tb_exec 81 static >plug/plugin/lab-insn.c &&
	fn tidy 3 >plug/util/a.c &&
	"$F" list "$PWD/plug" >list &&
	printf "81 plugin/lab-insn.c:1 tb_exec\n3 util/a.c:1 tidy\n" >want && test_cmp want list &&
	test_must_fail_with 1 "$F" check "$PWD/plug" >why &&
	test_grep -qx "plugin/lab-insn.c:1: tb_exec is 81 lines (at most 80)" why
'

test_expect_success 'a limit that is no number, or a folder that is not lab/, is refused' '
	mkdir -p ok/util && fn small 4 >ok/util/a.c &&
	test_must_fail_with 2 "$F" check lots "$PWD/ok" 2>err &&
	test_grep -q "LIMIT must be a number" err &&
	test_must_fail_with 2 "$F" list "$PWD/nowhere" 2>err &&
	test_grep -q "is not lab.s source folder" err &&
	test_must_fail_with 2 "$F" count 2>err &&
	test_grep -q "^usage: func-length" err
'

# a PATH of the tools func-length runs, with no universal-ctags in it
test_expect_success 'without universal-ctags the check cannot run, and says so' '
	mkdir -p ok/util bin && fn small 4 >ok/util/a.c &&
	for t in awk dirname find mktemp rm sed sort tr; do ln -s "$(command -v $t)" bin/$t; done &&
	printf "#!/bin/sh\necho \"Exuberant Ctags 5.8, Copyright (C) 1996-2009 Darren Hiebert\"\n" >bin/ctags &&
	chmod +x bin/ctags &&
	test_must_fail_with 2 env PATH="$PWD/bin" "$F" check "$PWD/ok" 2>err &&
	test_grep -q "is not universal-ctags" err &&
	rm bin/ctags &&
	test_must_fail_with 2 env PATH="$PWD/bin" "$F" check "$PWD/ok" 2>err &&
	test_grep -q "ctags is missing" err
'

# ctags read lab/ as lab's style has it: each function ends at a closing
# brace at the start of a line (or on its one line), and each opening brace
# at the start of a line opens a function the list measures, so none is
# left out
test_expect_success 'ctags measures every function of lab/ to its closing brace' '
	"$F" list "$L" >list &&
	test_line_count -ge 100 list &&
	test_grep -q " plugin/lab-insn.c:" list &&
	(cd "$L" && find . -name "*.c" | sed "s|^\./||" | LC_ALL=C sort) >files &&
	(cd "$L" && awk "
		NR == FNR {
			split(\$2, at, \":\")
			for (l = at[2]; l <= at[2] + \$1 - 1; l++) inside[at[1], l]++
			end[at[1], at[2] + \$1 - 1] = \$3
			if (\$1 == 1) one[at[1], at[2]] = 1
			next
		}
		(FILENAME, FNR) in end && !/^}/ && !((FILENAME, FNR) in one) {
			print FILENAME \":\" FNR \": \" end[FILENAME, FNR] \" does not end at a closing brace\"
		}
		/^{/ && inside[FILENAME, FNR] != 1 {
			print FILENAME \":\" FNR \": an opening brace in \" inside[FILENAME, FNR] + 0 \" functions\"
		}" "$TRASH/list" $(cat "$TRASH/files")) >why &&
	{ test_line_count = 0 why || { cat why; false; }; }
'

test_expect_success 'no function of lab/ is longer than 80 lines' '
	"$F" check "$L" >why || { cat why; false; }
'

test_done
