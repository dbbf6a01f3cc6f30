/* SPDX-License-Identifier: MIT */
/* The escaping JSON writer, the table formatter, strbuf and suggestions. */
#include "unit.h"
#include <stdlib.h>
#include "util/alloc.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/table.h"

static void test_json_escape(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	json_escape(&sb, "a\"b\\c\nd\te\x01\x7f</script>");
	assert_string_equal(sb.buf, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f</script>\"");
	strbuf_release(&sb);
}

static void test_json_structure(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct json j;

	(void)state;
	json_init(&j, &sb, false);
	json_object_begin(&j);
	json_kv_string(&j, "k", "v");
	json_key(&j, "list");
	json_array_begin(&j);
	json_int(&j, -3);
	json_double(&j, 0.1);
	json_double(&j, 1.0 / 3.0);
	json_bool(&j, true);
	json_null(&j);
	json_array_end(&j);
	json_key(&j, "empty");
	json_object_begin(&j);
	json_object_end(&j);
	json_kv_string(&j, "nul", NULL);
	json_object_end(&j);
	json_finish(&j);
	assert_string_equal(sb.buf,
			    "{\"k\":\"v\",\"list\":[-3,0.1,0.33333333333333331,true,null],\"empty\":{},\"nul\":null}");
	strbuf_release(&sb);
}

static void test_json_pretty(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct json j;

	(void)state;
	json_init(&j, &sb, true);
	json_array_begin(&j);
	json_object_begin(&j);
	json_kv_uint(&j, "a", 1);
	json_object_end(&j);
	json_array_end(&j);
	json_finish(&j);
	assert_string_equal(sb.buf, "[\n  {\n    \"a\": 1\n  }\n]\n");
	strbuf_release(&sb);
}

static void test_table(void **state)
{
	static const char *const cols[] = { "NAME:name", "N:n", "NOTE:note", NULL };
	struct strbuf text = STRBUF_INIT, js = STRBUF_INIT;
	struct table *t = table_new(cols);

	(void)state;
	table_add_string(t, "alpha");
	table_add_uint(t, 10);
	table_add_null(t);
	table_add_string(t, "b\"q");
	table_add_uint(t, 2);
	table_add_string(t, "x");
	assert_int_equal(table_rows(t), 2);
	table_format_text(t, &text);
	assert_string_equal(text.buf, "NAME   N   NOTE\n"
				      "alpha  10  -\n"
				      "b\"q    2   x\n");
	table_format_json(t, &js);
	assert_string_equal(js.buf, "[\n  {\n    \"name\": \"alpha\",\n    \"n\": 10,\n    \"note\": null\n  },\n"
				    "  {\n    \"name\": \"b\\\"q\",\n    \"n\": 2,\n    \"note\": \"x\"\n  }\n]\n");
	table_free(t);
	strbuf_release(&text);
	strbuf_release(&js);
}

static void test_strbuf(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t len;

	(void)state;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	strbuf_setlen(&sb, 4);
	assert_string_equal(sb.buf, "0,1,");
	s = strbuf_detach(&sb, &len);
	assert_int_equal(len, 4);
	assert_string_equal(s, "0,1,");
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	free(s);
	strbuf_release(&sb);
}

static void test_suggest(void **state)
{
	static const char *const keys[] = { "sockets", "cores", "threads", "memory", "vcpus" };

	(void)state;
	assert_int_equal(str_distance("vpcus", "vcpus"), 1);
	assert_int_equal(str_distance("kitten", "sitting"), 3);
	assert_string_equal(str_suggest("vpcus", keys, 5), "vcpus");
	assert_string_equal(str_suggest("memroy", keys, 5), "memory");
	assert_string_equal(str_suggest("sokets", keys, 5), "sockets");
	assert_null(str_suggest("bananas", keys, 5));
	assert_null(str_suggest("x", keys, 5));
}

static void test_names(void **state)
{
	(void)state;
	assert_true(str_is_name("tg-ratelimit"));
	assert_true(str_is_name("numa_2x4.v1"));
	assert_false(str_is_name("-x"));
	assert_false(str_is_name(""));
	assert_false(str_is_name("a b"));
	assert_false(str_is_name("a/b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_json_structure),
		cmocka_unit_test(test_json_pretty),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
