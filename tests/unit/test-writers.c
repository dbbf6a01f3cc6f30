/* SPDX-License-Identifier: MIT */
/* The escapers (JSON, XML, terminal, Markdown), the table formatter, diagnostics, strbuf and suggestions. */
#include "unit.h"
#include <stdlib.h>
#include "util/alloc.h"
#include "util/diag.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/json-read.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/table.h"
#include "util/xml.h"

static void test_json_escape(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	json_escape(&sb, "a\"b\\c\nd\te\x01\x7f</script>");
	assert_string_equal(sb.buf, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u007f</script>\"");
	strbuf_release(&sb);
}

/* Beyond what RFC 8259 requires: C1 and bidirectional controls escaped, bytes that are not UTF-8 as U+FFFD. */
static void test_json_escape_unicode(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *back;

	(void)state;
	json_escape(&sb, "\xc2\x9b" "x\xe2\x80\xae" "y\xff" "z é ✓");
	assert_string_equal(sb.buf, "\"\\u009bx\\u202ey\\ufffdz é ✓\"");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "{\"k\": ");
	json_escape(&sb, "a\xe2\x80\xae" "b\xc2\x85" "c\x01");
	strbuf_addstr(&sb, "}");
	/* what lab wrote reads back as it was */
	{
		struct json_doc *doc = NULL;
		char *err = NULL;

		assert_int_equal(json_doc_parse(sb.buf, sb.len, &doc, &err), 0);
		back = json_doc_string(doc, "k");
		assert_string_equal(back, "a\xe2\x80\xae" "b\xc2\x85" "c\x01");
		free(back);
		json_doc_free(doc);
	}
	strbuf_release(&sb);
}

static void test_xml_escape(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	xml_escape(&sb, "<a href='x'>&\"\t\x01" "\xff" "\xc0\xaf" "\x7f\xc2\x9b" "é\xe2\x80\xae</a>");
	assert_string_equal(sb.buf, "&lt;a href=&apos;x&apos;&gt;&amp;&quot;&#9;??????é\xe2\x80\xae&lt;/a&gt;");
	strbuf_release(&sb);
}

static void test_utf8_decode(void **state)
{
	uint32_t cp = 0;

	(void)state;
	assert_int_equal(utf8_decode("A", &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(utf8_decode("é", &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(utf8_decode("✓", &cp), 3);
	assert_int_equal(cp, 0x2713);
	assert_int_equal(utf8_decode("\xf0\x9f\x98\x80", &cp), 4);
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(utf8_decode("\xf4\x8f\xbf\xbf", &cp), 4); /* U+10FFFF */
	assert_int_equal(utf8_decode("\x80", &cp), 0);             /* a stray continuation */
	assert_int_equal(utf8_decode("\xc0\xaf", &cp), 0);         /* overlong '/' */
	assert_int_equal(utf8_decode("\xe0\x80\xaf", &cp), 0);     /* overlong, 3 bytes */
	assert_int_equal(utf8_decode("\xed\xa0\x80", &cp), 0);     /* a surrogate */
	assert_int_equal(utf8_decode("\xf4\x90\x80\x80", &cp), 0); /* beyond U+10FFFF */
	assert_int_equal(utf8_decode("\xe2\x82", &cp), 0);         /* cut short */
	assert_int_equal(utf8_decode("\xff", &cp), 0);
	assert_true(unicode_is_control(0x1b));
	assert_true(unicode_is_control(0x7f));
	assert_true(unicode_is_control(0x9b));
	assert_true(unicode_is_control(0x202e));
	assert_true(unicode_is_control(0x2066));
	assert_false(unicode_is_control(' '));
	assert_false(unicode_is_control(0xa0));
	assert_false(unicode_is_control(0x2713));
}

struct esc_case {
	const char *in, *out;
};

static void assert_escapes(void (*escape)(struct strbuf *, const char *), const struct esc_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;

		escape(&sb, cases[i].in);
		assert_string_equal(sb.buf, cases[i].out);
		strbuf_release(&sb);
	}
}

static void test_term_escape(void **state)
{
	static const struct esc_case cases[] = {
		{ "sysbench.tps", "sysbench.tps" },
		{ "é ✓ \xf0\x9f\x98\x80 <a|b>", "é ✓ \xf0\x9f\x98\x80 <a|b>" },
		{ "\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m" },
		{ "bell\a del\x7f nul-less\x01", "bell\\x07 del\\x7f nul-less\\x01" },
		{ "tab\tnl\ncr\r", "tab\\tnl\\ncr\\r" },
		{ "back\\slash \\x1b", "back\\\\slash \\\\x1b" },
		{ "csi\xc2\x9b" "2J", "csi\\u009b2J" },
		{ "bidi\xe2\x80\xae" "txt.exe\xe2\x81\xa6" "\xe2\x80\xa8", "bidi\\u202etxt.exe\\u2066\\u2028" },
		{ "bad\xff" "byte", "bad\\xffbyte" },
		{ "\xc0\xaf" "\xed\xa0\x80", "\\xc0\\xaf\\xed\\xa0\\x80" },
		{ "lead\xc2" "A", "lead\\xc2A" },
		{ "cut\xe2\x82", "cut\\xe2\\x82" },
		{ "", "" },
	};

	(void)state;
	assert_escapes(term_escape, cases, ELEMENTSOF(cases));
}

static void test_term_escape_lines(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	term_escape_lines(&sb, "make: *** [x] Error 1\n\tgcc \"a\\n\"\r\n\x1b[1mbold\rover\xc2\x9b" "\xff");
	assert_string_equal(sb.buf, "make: *** [x] Error 1\n\tgcc \"a\\n\"\r\n\\x1b[1mbold\\rover\\u009b\\xff");
	strbuf_release(&sb);
}

static void test_md_escape(void **state)
{
	static const struct esc_case cases[] = {
		{ "pg-sysbench threads=100%", "pg-sysbench threads=100%" },
		{ "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;" },
		{ "<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;" },
		{ "a|b `c` *d* _e_ [f](g) ~h~ &amp;", "a\\|b \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) \\~h\\~ &amp;amp;" },
		/* rendered, it reads as the terminal form: \\ for a backslash, \x1b for ESC */
		{ "back\\slash", "back\\\\\\\\slash" },
		{ "\x1b[31m\xff\n", "\\\\x1b\\[31m\\\\xff\\\\n" },
		{ "# heading", "\\# heading" },
		{ "  ## deeper", "  \\## deeper" },
		{ "- item", "\\- item" },
		{ "+", "\\+" },
		{ "---", "\\---" },
		{ "===", "\\===" },
		{ "1. first", "1\\. first" },
		{ "12) twelfth", "12\\) twelfth" },
		{ "-29.45 points", "-29.45 points" },
		{ "2.5x", "2.5x" },
		{ "== 0", "== 0" },
		{ "a # b - c", "a # b - c" },
		{ "", "" },
	};

	(void)state;
	assert_escapes(md_escape, cases, ELEMENTSOF(cases));
}

static void test_md_code(void **state)
{
	static const struct esc_case cases[] = {
		{ "sysbench.latency_p95_ms", "`sysbench.latency_p95_ms`" },
		{ "perf-profile.self.cycles-pp.*[x]", "`perf-profile.self.cycles-pp.*[x]`" },
		{ "é", "`é`" },
		{ "a|b", "a\\|b" },
		{ "a`b", "a\\`b" },
		{ "<script>", "&lt;script&gt;" },
		{ "a\\b", "a\\\\\\\\b" },
		{ "esc\x1b", "esc\\\\x1b" },
		{ " padded", " padded" },
		{ "", "" },
	};

	(void)state;
	assert_escapes(md_code, cases, ELEMENTSOF(cases));
}

/* Messages quote hostile data; multi-line ones (tool output) keep their lines. */
static void test_diags_escape(void **state)
{
	struct diags d = { 0 };
	struct strbuf sb = STRBUF_INIT;
	const struct pos pos = { .file = "runs/\x1b]0;x\a/metrics", .line = 3, .col = 4 };

	(void)state;
	diags_add(&d, &pos, "'%s' is not a number", "1\x1b[2J");
	diags_add(&d, NULL, "build failed:\n\tcc: \x1b[31merror\x1b[0m\n");
	diags_format(&d, &sb);
	assert_string_equal(sb.buf, "runs/\\x1b]0;x\\x07/metrics:3:4: '1\\x1b[2J' is not a number\n"
				    "build failed:\n\tcc: \\x1b[31merror\\x1b[0m\n\n");
	diags_release(&d);
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

/* Cells shown in text are escaped, and the columns line up on what is shown. */
static void test_table_escapes(void **state)
{
	static const char *const cols[] = { "ID:id", "EXPERIMENT:experiment", NULL };
	struct strbuf text = STRBUF_INIT, js = STRBUF_INIT;
	struct table *t = table_new(cols);

	(void)state;
	table_add_string(t, "r1");
	table_add_string(t, "x\x1b[2J\xc2\x9b");
	table_add_string(t, "r2");
	table_add_string(t, "plain");
	table_format_text(t, &text);
	assert_string_equal(text.buf, "ID  EXPERIMENT\n"
				      "r1  x\\x1b[2J\\u009b\n"
				      "r2  plain\n");
	table_format_json(t, &js);
	assert_non_null(strstr(js.buf, "\"x\\u001b[2J\\u009b\""));
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
		cmocka_unit_test(test_json_escape_unicode),
		cmocka_unit_test(test_xml_escape),
		cmocka_unit_test(test_utf8_decode),
		cmocka_unit_test(test_term_escape),
		cmocka_unit_test(test_term_escape_lines),
		cmocka_unit_test(test_md_escape),
		cmocka_unit_test(test_md_code),
		cmocka_unit_test(test_diags_escape),
		cmocka_unit_test(test_json_structure),
		cmocka_unit_test(test_json_pretty),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_escapes),
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
