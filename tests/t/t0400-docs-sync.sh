#!/bin/sh
# The man page and bash completion follow the command table and the option
# tables (bpftool's test_bpftool_synctypes.py): every command `lab --help`
# lists is in both, every option `lab help --options` lists is in both,
# and neither names a command or an option the tables do not have.
. "$(dirname "$0")/test-lib.sh"

MAN=$SRC_DIR/docs/lab.1
COMP=$SRC_DIR/docs/lab.bash-completion

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
	sed -n "s/^_lab_commands=\"\(.*\)\"$/\1/p" "$COMP" | tr " " "\n" | sort >comp &&
	sort commands >want &&
	test_cmp want comp
'

test_expect_success 'bash completion knows every global option of lab --help' '
	for o in $(lab --help | sed -n "/^Global options:/,/^$/p" | sed -n "s/^ *\(-[^ ,]*\)\(, \(--[^ ]*\)\)\{0,1\}.*/\1 \3/p"); do
		grep -q -- " $o[ \"]" "$COMP" || { echo "completion lacks $o" >&2; exit 1; }
	done
'

command -v python3 >/dev/null 2>&1 && test_set_prereq PYTHON3

test_expect_success PYTHON3 'the generated parts of lab.1 and the completion are what the tables give' '
	"$SRC_DIR/docs/gen-docs" --check "$LAB"
'

# "COMMAND --option" for every option of every command, from lab help --options
lab help --options | awk '
	/^lab / { cmd = ($2 == "[global") ? "global" : $2; next }
	/^  -|^      --/ { n = split(substr($0, 1, 32), w, " ");
		for (i = 1; i <= n; i++) if (w[i] ~ /^--?[A-Za-z]/) { o = w[i]; sub(/,$/, "", o); print cmd, o } }
' | sort -u >table-options

test_expect_success 'lab help --options lists the options of every command' '
	test_line_count -ge 60 table-options &&
	grep -qx "kernel --jobs" table-options &&
	grep -qx "vm --host-node" table-options &&
	grep -qx "global -C" table-options
'

test_expect_success 'lab.1 documents every option of the tables and no other' '
	sed -n "/^\.SH GLOBAL OPTIONS/,/^\.SH /p" "$MAN" | sed -n "/^\.TP/{n;p}" |
		sed "s/\\\\-/-/g" | grep -o -- "--*[A-Za-z][a-z-]*" | sed "s/^/global /" >man-options &&
	sed -n "/^\.SH OPTIONS/,/^\.SH /p" "$MAN" | awk "
		/^\.SS / { split(\$0, w, \" \"); cmd = w[3]; sub(/\"/, \"\", cmd); next }
		/^\.TP/ { getline; gsub(/\\\\-/, \"-\"); n = split(\$0, w, /[ \"]+/);
			for (i = 1; i <= n; i++) if (w[i] ~ /^--?[a-z]/) print cmd, w[i] }
	" >>man-options &&
	for c in $(sed -n "s/^_lab_commands=\"\(.*\)\"$/\1/p" "$COMP"); do
		printf "%s --json\n%s -h\n%s --help\n" $c $c $c
	done >>man-options &&
	sort -u man-options >man-sorted &&
	test_cmp table-options man-sorted
'

test_expect_success 'the completion offers every option of the tables and no other' '
	: >comp-options &&
	bash -c ". \"$COMP\"; COMP_WORDS=(lab -); COMP_CWORD=1; _lab; printf \"global %s\n\" \"\${COMPREPLY[@]}\"" |
		grep "^global -" >>comp-options &&
	for c in $(sed -n "s/^_lab_commands=\"\(.*\)\"$/\1/p" "$COMP"); do
		bash -c ". \"$COMP\"; COMP_WORDS=(lab $c -); COMP_CWORD=2; _lab; printf \"$c %s\n\" \"\${COMPREPLY[@]}\"" \
			>>comp-options || exit 1
	done &&
	sort -u comp-options >comp-sorted &&
	test_cmp table-options comp-sorted
'

test_expect_success 'the completion offers a subcommand its own options only' '
	bash -c ". \"$COMP\"; COMP_WORDS=(lab host boot --); COMP_CWORD=3; _lab; echo \${COMPREPLY[*]}" >out &&
	test_grep -q -- "--via" out &&
	bash -c ". \"$COMP\"; COMP_WORDS=(lab host check --); COMP_CWORD=3; _lab; echo \${COMPREPLY[*]}" >out &&
	! grep -q -- "--via" out &&
	bash -c ". \"$COMP\"; COMP_WORDS=(lab vm xml --accel \"\"); COMP_CWORD=4; _lab; echo \${COMPREPLY[*]}" >out &&
	test_grep -qx "kvm tcg" out
'

test_expect_success 'every command --help lists every option of its table' '
	for c in $(sed -n "s/^_lab_commands=\"\(.*\)\"$/\1/p" "$COMP"); do
		lab $c --help >help || exit 1
		for o in $(sed -n "s/^$c //p" table-options); do
			grep -q -- "$o[ ,]\|$o\$" help || { echo "lab $c --help lacks $o" >&2; exit 1; }
		done
	done
'

test_expect_success 'the completion script loads and completes a command' '
	command -v bash >/dev/null &&
	bash -c ". \"$COMP\"; COMP_WORDS=(lab pl); COMP_CWORD=1; _lab; echo \${COMPREPLY[*]}" >out &&
	test_grep -qx plan out
'

test_done
