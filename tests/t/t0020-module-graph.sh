#!/bin/sh
# lab's include graph is a DAG: util at the bottom, the commands (main.c,
# cmd-*.c) at the top, no module including one that includes it back, and
# no two files of a module including each other (tests/tools/module-graph
# reads the graph; docs/architecture.md draws it). An argument names
# another lab/ folder to check (e.g. an older checkout's).
. "$(dirname "$0")/test-lib.sh"

G=$SRC_DIR/tests/tools/module-graph
L=${1:-$SRC_DIR/lab}

test_expect_success 'the graph has the modules lab is made of' "
	'$G' edges '$L' >edges &&
	test_line_count -ge 10 edges &&
	test_grep -q '^cmd util\$' edges
"

test_expect_success 'the module graph has no cycle, util includes no module, nothing includes cmd' "
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
