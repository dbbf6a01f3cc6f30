#!/bin/sh
# The optimized binary under valgrind (no sanitizers there): no invalid
# access, no definite or indirect leak, on valid and invalid input.
# lab-test-seconds: 15 (alone here on 2026-12-06: 12 s)
. "$(dirname "$0")/test-lib.sh"

REL=${LAB_RELEASE:-$SRC_DIR/build/lab}
vg() {
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect "$REL" "$@"
}

test_expect_success VALGRIND 'validate and plan of the shipped lab.yaml are valgrind-clean' "
	vg -C '$SRC_DIR' validate &&
	vg -C '$SRC_DIR' plan >/dev/null &&
	vg -C '$SRC_DIR' plan --json tg-load-avg >/dev/null
"

test_expect_success VALGRIND 'error paths are valgrind-clean' "
	for c in err-experiment-dangling-refs err-param-bad-types err-include-cycle err-syntax-bad-indent err-var-undefined; do
		(cd '$TEST_DIRECTORY/data' && test_must_fail_with 2 vg validate \$c.yaml 2>/dev/null) || exit 1
	done
"

test_expect_success VALGRIND 'init is valgrind-clean' '
	vg init vgproj >/dev/null &&
	test -f vgproj/lab.yaml
'

test_done
