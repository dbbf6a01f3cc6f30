/* SPDX-License-Identifier: MIT */
/* Where lab keeps things: LAB_* over lab.yaml over XDG over the home, one module. */
#include <stdlib.h>
#include "unit.h"
#include "util/alloc.h"
#include "util/dirs.h"

static void clear(void)
{
	static const char *const vars[] = { "LAB_CACHE_DIR", "LAB_STATE_DIR", "LAB_RESULTS_DIR", "XDG_CACHE_HOME",
					    "XDG_STATE_HOME" };

	for (size_t i = 0; i < ELEMENTSOF(vars); i++)
		unsetenv(vars[i]);
	setenv("HOME", "/home/u", 1);
}

#define assert_path(expr, want)                \
	do {                                   \
		char *_p = (expr);             \
		assert_string_equal(_p, want); \
		free(_p);                      \
	} while (0)

static void test_order(void **state)
{
	(void)state;
	clear();
	assert_path(dirs_cache(NULL), "/home/u/.cache/lab");
	assert_path(dirs_cache("/big/cache"), "/big/cache");
	assert_path(dirs_state(), "/home/u/.local/state/lab");
	assert_path(dirs_results(NULL, "/exp"), "/exp/results");
	assert_path(dirs_results(NULL, NULL), "results");
	assert_path(dirs_results("/r", "/exp"), "/r");
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	setenv("XDG_STATE_HOME", "/x/state", 1);
	assert_path(dirs_cache(NULL), "/x/cache/lab");
	assert_path(dirs_cache("/big/cache"), "/big/cache"); /* lab.yaml over XDG */
	assert_path(dirs_state(), "/x/state/lab");
	setenv("LAB_CACHE_DIR", "/l/cache", 1);
	setenv("LAB_STATE_DIR", "/l/state", 1);
	setenv("LAB_RESULTS_DIR", "/l/results", 1);
	assert_path(dirs_cache("/big/cache"), "/l/cache"); /* LAB_* over everything */
	assert_path(dirs_state(), "/l/state");
	assert_path(dirs_results("/r", "/exp"), "/l/results");
	clear();
}

static void test_relative_ignored(void **state)
{
	(void)state;
	clear();
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("LAB_STATE_DIR", "also/relative", 1);
	assert_path(dirs_cache(NULL), "/home/u/.cache/lab");
	assert_path(dirs_state(), "/home/u/.local/state/lab");
	setenv("HOME", "not/absolute", 1);
	assert_non_null(dirs_home()); /* the passwd entry's, absolute */
	assert_true(dirs_home()[0] == '/');
	clear();
}

static void test_derived(void **state)
{
	(void)state;
	assert_path(dirs_ssh_key("/c"), "/c/ssh/id_ed25519");
	assert_path(dirs_vm("/s", "t1200"), "/s/vms/t1200");
	assert_path(dirs_host("/s", "box"), "/s/hosts/box");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_relative_ignored),
		cmocka_unit_test(test_derived),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
