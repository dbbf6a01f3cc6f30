#!/bin/sh
# lab's include graph is a DAG: util at the bottom, the commands (main.c,
# cmd-*.c) at the top, no module including one that includes it back, and
# no two files of a module including each other (tests/tools/module-graph
# reads the graph; docs/architecture.md draws it). Calls keep to it too:
# no .c files calling each other in a circle, callbacks through an ops
# table included, and no module calling one that includes or calls it. An
# argument names another lab/ folder to check (e.g. an older checkout's).
. "$(dirname "$0")/test-lib.sh"

G=$SRC_DIR/tests/tools/module-graph
L=${1:-$SRC_DIR/lab}

test_expect_success 'the graph has the modules lab is made of' "
	'$G' edges '$L' >edges &&
	test_line_count -ge 10 edges &&
	test_grep -q '^cmd util\$' edges
"

test_expect_success 'the module graph has no cycle, util includes no module, nothing includes cmd, no call cycle' "
	'$G' check '$L' >why || { cat why; false; }
"

test_expect_success 'the check finds a cycle, an upward util and a file cycle, and names them' "
	mkdir -p fake/util fake/a fake/b &&
	echo '#include \"util/x.h\"' >fake/main.c &&
	echo '#include \"../b/b.h\"' >fake/a/a.h &&
	printf '#include \"../a/a.h\"\\n#include \"c.h\"\\n' >fake/b/b.h &&
	echo '#include \"b.h\"' >fake/b/c.h &&
	echo '#include \"../a/a.h\"' >fake/util/x.h &&
	echo '#include \"../cmd.h\"' >fake/util/y.c && : >fake/cmd.h &&
	test_must_fail_with 1 '$G' check \$PWD/fake >why &&
	test_grep -q 'module cycle: a -> b -> a' why &&
	test_grep -q 'util -> a' why &&
	test_grep -q 'util/y.c includes cmd.h' why &&
	test_grep -q 'file cycle: b/b -> b/c -> b/b' why
"

# the call graph's trees: lab/ with util/ and one module m
calls_tree() { mkdir -p "$1/util" "$1/m"; }

test_expect_success 'a file that calls a file that calls it back is a call cycle' '
	calls_tree back &&
	printf "int b_go(void);\nint a_run(void) { return 1; }\nint a_main(void) { return b_go(); }\n" >back/m/a.c &&
	printf "int a_run(void);\nint b_go(void) { return a_run(); }\n" >back/m/b.c &&
	"$G" calls "$PWD/back" >calls &&
	printf "m/a m/b\nm/b m/a\n" >want && test_cmp want calls &&
	test_must_fail_with 1 "$G" check "$PWD/back" >why &&
	test_grep -qx "call cycle: m/a -> m/b -> m/a" why &&
	"$G" call-cycles "$PWD/back" >cycles &&
	test_grep -qx "call cycle: m/a -> m/b -> m/a" cycles && test_line_count = 1 cycles
'

test_expect_success 'a callback in an ops table closes a call cycle too' '
	calls_tree ops &&
	printf "void b_start(void);\nint a_run(void) { return 0; }\nvoid a_main(void) { b_start(); }\n" >ops/m/a.c &&
	echo "int a_run(void);" >ops/m/a.h &&
	cat >ops/m/b.c <<-\EOF &&
	#include "a.h"
	struct ops { int (*run)(void); };
	static const struct ops o = { .run = a_run };
	void b_start(void) { o.run(); }
	EOF
	test_must_fail_with 1 "$G" check "$PWD/ops" >why &&
	test_grep -qx "call cycle: m/a -> m/b -> m/a" why
'

test_expect_success 'a cycle of three files is one cycle, every file named' '
	calls_tree three &&
	printf "void y(void);\nvoid x(void) { y(); }\n" >three/m/x.c &&
	printf "void z(void);\nvoid y(void) { z(); }\n" >three/m/y.c &&
	printf "void x(void);\nvoid z(void) { x(); }\n" >three/m/z.c &&
	"$G" call-cycles "$PWD/three" >cycles &&
	echo "call cycle: m/x -> m/y -> m/z -> m/x" >want && test_cmp want cycles
'

test_expect_success 'a name in a comment, a string, a member or a tag is no call' '
	calls_tree quiet &&
	printf "void b_go(void);\nint a_run(void) { return 0; }\nvoid a_main(void) { b_go(); }\n" >quiet/m/a.c &&
	cat >quiet/m/b.c <<-\EOF &&
	/* b_go does not call a_run(), nor
	 * a_run ( ) here */
	struct s { int (*a_run)(void); } t;
	enum a_run { A };
	static const char *why = "a_run() is not called", c = '"'"'a'"'"'; // a_run()
	void b_go(void) { t.a_run(); (&t)->a_run(); puts("a_run("); puts("\"a_run"); }
	EOF
	"$G" calls "$PWD/quiet" >calls &&
	echo "m/a m/b" >want && test_cmp want calls &&
	"$G" check "$PWD/quiet" >why || { cat why; false; }
'

test_expect_success 'static functions of the same name in two files are no call' '
	calls_tree statics &&
	printf "static int helper(void) { return 0; }\nint a_main(void) { return helper(); }\n" >statics/m/a.c &&
	printf "static int helper(void) { return 1; }\nint b_main(void) { return helper(); }\n" >statics/m/b.c &&
	printf "static int c_fn(void) { return 2; }\nint c_main(void) { return c_fn(); }\n" >statics/m/c.c &&
	printf "int c_fn(void) { return 3; }\n" >statics/m/d.c &&
	"$G" calls "$PWD/statics" >calls &&
	test_line_count = 0 calls &&
	"$G" check "$PWD/statics" >why || { cat why; false; }
'

test_expect_success 'a module that calls a module that includes it is a module call cycle' '
	mkdir -p up/util up/x up/y &&
	echo "int y_do(void (*cb)(void));" >up/y/y.h &&
	printf "#include \"../y/y.h\"\nvoid x_cb(void) { }\n" >up/x/x.c &&
	printf "void x_cb(void);\nint y_do(void (*cb)(void)) { x_cb(); return 0; }\n" >up/y/y.c &&
	test_must_fail_with 1 "$G" check "$PWD/up" >why &&
	test_grep -qx "module call cycle: x -> y -> x" why &&
	! grep -q "^call cycle" why
'

D=$SRC_DIR/docs/architecture.md
if [ -n "${LAB_TEST_REGENERATE:-}" ] && [ "$L" = "$SRC_DIR/lab" ]; then
	"$G" mermaid "$L" >"$TRASH/block" &&
	awk -v block="$TRASH/block" '
		/^```mermaid$/ { while ((getline l <block) > 0) print l; skip = 1; next }
		skip && /^```$/ { skip = 0; next }
		!skip' "$D" >"$TRASH/doc" && cat "$TRASH/doc" >"$D"
fi

# the drawing is of this tree: checking another folder skips it, saying so
[ "$L" != "$SRC_DIR/lab" ] || test_set_prereq THIS_TREE
test_expect_success THIS_TREE 'the module graph in docs/architecture.md is the one the source has' "
	'$G' mermaid '$L' >want &&
	sed -n '/^\`\`\`mermaid\$/,/^\`\`\`\$/p' '$D' >got &&
	test_cmp want got
"

test_done
