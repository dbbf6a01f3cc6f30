#!/bin/sh
# After the tests that share them (in their lane of `make test`): the
# suite's shared guests (test_shared_vm, booted once by the first test that
# needed one) go down, and `vm down` leaves no domain, QEMU process, VM
# folder or listing behind.
# lab-test-seconds: 5 (warm, with the other lane busy: tests/run-all balances its two lanes by it)
. "$(dirname "$0")/test-lib.sh"

test_require_libvirt_vm
[ -n "${LAB_SUITE_DIR:-}" ] ||
	test_skip_all "no suite: run by tests/run-all (make test), after the tests that share guests"
[ -d "$SUITE_STATE/lab/vms" ] && [ -n "$(ls "$SUITE_STATE/lab/vms")" ] ||
	test_skip_all "no shared guest is up: no test of this suite asked for one"

test_expect_success 'every shared guest is listed, running' "
	ls '$SUITE_STATE/lab/vms' >names &&
	shared_lab -C '$P' vm ls >ls &&
	while read n; do test_grep -q \"^\$n  *running \" ls || exit 1; done <names
"

test_expect_success 'vm down destroys each domain and leaves nothing' "
	while read n; do
		shared_lab -C '$P' vm down \"\$n\" &&
		! test -e '$SUITE_STATE/lab/vms/'\"\$n\" &&
		! pgrep -f \"guest=lab-\$n,\" || exit 1
	done <names &&
	shared_lab -C '$P' vm ls >ls &&
	while read n; do ! grep -q \"^\$n \" ls || exit 1; done <names
"

test_done
