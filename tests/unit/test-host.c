/* SPDX-License-Identifier: MIT */
/* The host facts formatters (pure): text and JSON goldens, and a host
 * without NUMA nodes or lscpu figures. */
#include <stdlib.h>
#include "unit.h"
#include "host/host.h"
#include "util/json.h"
#include "util/strbuf.h"

static void test_facts_goldens(void **state)
{
	char *nodes[] = { (char *)"0-1", (char *)"2-3" };
	struct host_facts f = {
		.release = (char *)"6.1.192-lab-base-45c33956",
		.boot_id = (char *)"3c178fca-e583-4645-a0ab-e359567ee451",
		.cmdline = (char *)"console=ttyS0 root=/dev/vda rw \"quoted\"",
		.model = (char *)"QEMU TCG CPU version 2.5+",
		.cpus = 4, .sockets = 2, .cores_per_socket = 2, .threads_per_core = 1,
		.nnodes = 2, .node_cpus = nodes,
	};
	struct host_facts bare = { .cpus = 1 };
	struct strbuf t = STRBUF_INIT, js = STRBUF_INIT;
	struct json j;

	(void)state;
	host_facts_format_text(&f, &t);
	host_facts_format_text(&bare, &t);
	json_init(&j, &js, true);
	json_object_begin(&j);
	host_facts_format_json(&f, &j);
	json_object_end(&j);
	json_finish(&j);
	assert_golden("tests/data/host/facts.txt", t.buf);
	assert_golden("tests/data/host/facts.json", js.buf);
	strbuf_release(&t);
	strbuf_release(&js);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts_goldens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
