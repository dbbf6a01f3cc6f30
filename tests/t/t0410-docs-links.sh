#!/bin/sh
# The documents stand alone: a user has this tree and nothing beside it.
# README.md and every Markdown file under docs/ (and the READMEs of the
# catalogue, the images and the backports) name no file outside the tree
# (../shared), and every relative Markdown link [text](path) leads to a
# file or folder that exists.
. "$(dirname "$0")/test-lib.sh"

cd "$SRC_DIR" || exit 1
{
	echo README.md
	find docs -name '*.md'
	find kernels images workloads -name README.md
} | sort >"$TRASH/docs"
cd "$TRASH" || exit 1

test_expect_success 'there are documents to check' '
	test_line_count -ge 5 docs &&
	grep -qx README.md docs &&
	grep -qx docs/README.md docs
'

# Prints FILE:LINE: TEXT for every line naming the folder beside the tree.
outside() {
	grep -n -e "\.\./shared" -e "/work/shared" "$SRC_DIR/$1" | sed "s|^|$1:|"
}

test_expect_success 'no document names a file outside the tree' '
	while read f; do
		outside "$f"
	done <docs >outside &&
	if [ -s outside ]; then cat outside >&2; exit 1; fi
'

# Prints FILE:LINE: TARGET for every inline link, without its title, and
# skips URLs, mail addresses and links to an anchor of the same page.
links() {
	grep -no "\]([^)]*)" "$SRC_DIR/$1" |
	sed -e "s/^\([0-9]*\):\](<\([^>]*\)>.*/\1 \2/;t" \
	    -e "s/^\([0-9]*\):\](\([^) ]*\).*/\1 \2/" |
	while read -r n t; do
		case $t in
		"" | \#* | *://* | mailto:*) continue ;;
		esac
		echo "$1:$n: ${t%%#*}"
	done
}

test_expect_success 'every relative link leads to a file in the tree' '
	rc=0
	while read f; do
		links "$f"
	done <docs >all-links &&
	test_line_count -ge 10 all-links &&
	while read -r where t; do
		case $t in /*) echo "$where $t: an absolute path" >&2; rc=1; continue ;; esac
		d=$(dirname "$SRC_DIR/${where%%:*}")
		[ -e "$d/$t" ] || { echo "$where $t does not exist" >&2; rc=1; }
	done <all-links
	exit $rc
'

test_expect_success 'the checks see a broken link and a ../shared path' '
	mkdir -p fake/docs &&
	printf "%s\n" "see [x](nowhere.md \"t\") and ../shared/REFERENCE.md" \
		"[ok](https://example.org/) [top](#top) [y](<sub/a b.md#part>)" >fake/docs/bad.md &&
	(SRC_DIR=$PWD/fake; links docs/bad.md; outside docs/bad.md) >found &&
	test_grep -qx "docs/bad.md:1: nowhere.md" found &&
	test_grep -qx "docs/bad.md:2: sub/a b.md" found &&
	test_grep -q "^docs/bad.md:1:.*\.\./shared/REFERENCE.md" found &&
	test_line_count = 3 found
'

test_done
