#!/bin/sh
# The man page and bash completion follow the command table (bpftool's
# test_bpftool_synctypes.py): every command `lab --help` lists is in both,
# and neither names a command the table does not have.
. "$(dirname "$0")/test-lib.sh"

MAN=$SRC_DIR/doc/lab.1
COMP=$SRC_DIR/doc/lab.bash-completion

lab --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' >commands
test_expect_success 'lab --help lists commands' '
	test_line_count -ge 10 commands
'

test_expect_success 'every command is documented in lab.1' '
	while read c; do
		grep -q "^\.B $c\( \|$\)" "$MAN" || { echo "lab.1 lacks $c" >&2; exit 1; }
	done <commands
'

test_expect_success 'lab.1 documents no command the table lacks' '
	sed -n "/^\.SH COMMANDS/,/^\.SH /p" "$MAN" | sed -n "s/^\.B \([a-z][a-z-]*\).*/\1/p" >man-commands &&
	while read c; do
		grep -qx "$c" commands || { echo "lab.1 documents unknown command $c" >&2; exit 1; }
	done <man-commands
'

test_expect_success 'bash completion offers exactly the commands of the table' '
	sed -n "s/^	local commands=\"\(.*\)\"$/\1/p" "$COMP" | tr " " "\n" | grep -v "^help$" | sort >comp &&
	sort commands >want &&
	test_cmp want comp
'

test_expect_success 'bash completion knows every global option of lab --help' '
	for o in $(lab --help | sed -n "/^Global options:/,/^$/p" | sed -n "s/^ *\(-[^ ,]*\)\(, \(--[^ ]*\)\)\{0,1\}.*/\1 \3/p"); do
		grep -q -- " $o[ \"]" "$COMP" || { echo "completion lacks $o" >&2; exit 1; }
	done
'

test_expect_success 'the completion script loads and completes a command' '
	command -v bash >/dev/null &&
	bash -c ". \"$COMP\"; COMP_WORDS=(lab pl); COMP_CWORD=1; _lab; echo \${COMPREPLY[*]}" >out &&
	test_grep -qx plan out
'

test_done
