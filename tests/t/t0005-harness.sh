#!/bin/sh
# The suite's own rules (tests/t/test-lib.sh), on test files made here: a
# file that boots more guests than it declares (# lab-test-boots) fails;
# a boot again after QEMU crashed during the one before (the boot
# journal's "again", lab's worker does it) is said, not counted, so that
# an emulator's crash under load does not fail the file that met it.
. "$(dirname "$0")/test-lib.sh"

# boots N AGAIN: a test file that declares 1 boot and journals N boots
# and AGAIN boots again, run as the suite runs it; its TAP in out
boots() {
	{
		echo '#!/bin/sh'
		echo '# lab-test-boots: 1'
		echo ". '$TEST_DIRECTORY/t/test-lib.sh'"
		echo "test_expect_success 'boots' '"
		_i=0
		while [ "$_i" -lt "$1" ]; do
			echo '	test_boot_journal vm'"$_i"' &&'
			_i=$((_i + 1))
		done
		_i=0
		while [ "$_i" -lt "$2" ]; do
			echo '	printf "%s\\tvm\\t-\\ttcg\\tlocal\\tagain\\n" 0 >>"$TRASH/state/lab/boots.log" &&'
			_i=$((_i + 1))
		done
		echo '	:'
		echo "'"
		echo 'test_done'
	} >f.sh &&
	LAB_TEST_FAILURES= LAB_SUITE_DIR= sh f.sh >out 2>&1
}

test_expect_success 'a file within its declared boots passes' '
	boots 1 0 &&
	test_grep -q "^ok 1 - boots" out &&
	! grep -q "^not ok" out
'

test_expect_success 'a file that boots more than it declares fails, naming both counts' '
	! boots 2 0 &&
	test_grep -q "^not ok 2 - booted 2 guests, declares 1 (# lab-test-boots)" out
'

test_expect_success 'a boot again after QEMU crashed is said, not counted' '
	boots 1 1 &&
	! grep -q "^not ok" out &&
	test_grep -q "^# 1 boot(s) again after QEMU crashed during a boot, not counted" out
'

test_done
