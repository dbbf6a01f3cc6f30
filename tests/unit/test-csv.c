/* SPDX-License-Identifier: MIT */
/* lab judge's CSV reader (lab/result/csv.c): what it builds from good
 * files, every error with the position it names, and --base's order. */
#include <errno.h>
#include "unit.h"
#include "result/csv.h"
#include "util/strbuf.h"

/* Parses text; on failure the diagnostics as "FILE:LINE:COL: msg" lines in *err (freed by the caller). */
static int parse(const char *text, const char *base, struct result_set **rs, char **err)
{
	struct diags d = { 0 };
	struct strbuf sb = STRBUF_INIT;
	int r = result_csv_parse(text, strlen(text), "t.csv", base, rs, &d);

	diags_sort(&d);
	diags_format(&d, &sb);
	*err = strbuf_detach(&sb, NULL);
	diags_release(&d);
	return r;
}

/* The file must fail with exactly these diagnostics. */
static void fails(const char *text, const char *base, const char *want)
{
	struct result_set *rs = NULL;
	char *err = NULL;

	assert_int_equal(parse(text, base, &rs, &err), -EINVAL);
	assert_null(rs);
	assert_string_equal(err, want);
	free(err);
}

static void test_good(void **state)
{
	const char *text = "variant,boot,run,metric,value\n"
			   "base,b1,1,m.tps,100\n"
			   "base,b1,1,m.lat,5\n"
			   "base,b1,2,m.tps,101\n"
			   "patched,b2,1,m.tps,120.5\n"
			   "base,b1,1,other,-1e3\n" /* a run's rows need not be together */
			   "patched,,1,m.tps,7\n";
	struct result_set *rs = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(parse(text, NULL, &rs, &err), 0);
	assert_string_equal(err, "");
	free(err);
	assert_int_equal(rs->variants.n, 2);
	assert_string_equal(rs->variants.v[0], "base");
	assert_string_equal(rs->variants.v[1], "patched");
	assert_int_equal(rs->n, 4);
	assert_string_equal(rs->runs[0].id, "1");
	assert_string_equal(rs->runs[0].group, "judge");
	assert_string_equal(rs->runs[0].boot, "b1");
	assert_int_equal(rs->runs[0].status, RUN_OK);
	assert_int_equal(rs->runs[0].job, 0);
	assert_int_equal(rs->runs[0].nm, 3);
	assert_string_equal(rs->runs[0].m[2].name, "other");
	assert_true(rs->runs[0].m[2].value == -1000);
	assert_int_equal(rs->runs[1].repeat, 2);
	assert_int_equal(rs->runs[2].repeat, 1);
	assert_true(rs->runs[2].m[0].value == 120.5);
	assert_null(rs->runs[3].boot); /* an empty boot: unknown */
	assert_string_equal(rs->runs[3].id, "1");
	assert_int_equal(rs->nexpect, 0);
	result_set_free(rs);
}

static void test_quoting_crlf_order(void **state)
{
	/* columns in any order, a BOM, CRLF, blank lines, quoted commas and quotes */
	const char *text = "\xef\xbb\xbf" "value,metric,run,boot,variant\r\n"
			   "1,\"m \"\"q\"\", x\",r1,,\"a,b\"\r\n"
			   "\r\n"
			   "2,\"m \"\"q\"\", x\",r1,,c\r\n"
			   "\n"
			   "\"3\",m,\"\",,c";
	struct result_set *rs = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(parse(text, NULL, &rs, &err), -EINVAL); /* the run is empty */
	assert_string_equal(err, "t.csv:6:7: empty run\n");
	free(err);
	text = "\xef\xbb\xbf" "value,metric,run,boot,variant\r\n"
	       "1,\"m \"\"q\"\", x\",r1,,\"a,b\"\r\n"
	       "\r\n"
	       "2,\"m \"\"q\"\", x\",r1,,c\r\n"
	       "\n"
	       "\"3\",m,r2,,c";
	assert_int_equal(parse(text, NULL, &rs, &err), 0);
	free(err);
	assert_int_equal(rs->n, 3);
	assert_string_equal(rs->variants.v[0], "a,b");
	assert_string_equal(rs->runs[0].m[0].name, "m \"q\", x");
	assert_true(rs->runs[0].m[0].value == 1);
	assert_true(rs->runs[2].m[0].value == 3);
	result_set_free(rs);
}

static void test_base(void **state)
{
	const char *text = "variant,boot,run,metric,value\n"
			   "a,1,1,m,1\n"
			   "b,1,1,m,2\n"
			   "c,1,1,m,3\n";
	struct result_set *rs = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(parse(text, "c", &rs, &err), 0);
	free(err);
	assert_int_equal(rs->variants.n, 3);
	assert_string_equal(rs->variants.v[0], "c");
	assert_string_equal(rs->variants.v[1], "a");
	assert_string_equal(rs->variants.v[2], "b");
	result_set_free(rs);
	assert_int_equal(parse(text, "a", &rs, &err), 0);
	free(err);
	assert_string_equal(rs->variants.v[0], "a");
	assert_string_equal(rs->variants.v[1], "b");
	result_set_free(rs);
	fails(text, "z", "t.csv: no variant 'z' in the file (its variants: 'a', 'b', 'c')\n");
}

static void test_header_errors(void **state)
{
	(void)state;
	fails("", NULL, "t.csv: empty: no header line (variant, boot, run, metric and value)\n");
	fails("\n\r\n", NULL, "t.csv: empty: no header line (variant, boot, run, metric and value)\n");
	fails("variant,boot,run,metric,value\n", NULL, "t.csv: no rows after the header\n");
	fails("variant,boot,run,metric\na,1,1,m\n", NULL,
	      "t.csv:1: no column 'value' in the header (it names variant, boot, run, metric and value)\n");
	fails("variant,boot,run,metric,value,x\n", NULL,
	      "t.csv:1:31: unknown column 'x' (the columns are variant, boot, run, metric and value)\n");
	fails("variant,boot,run,metric,Value\n", NULL,
	      "t.csv:1: no column 'value' in the header (it names variant, boot, run, metric and value)\n"
	      "t.csv:1:25: unknown column 'Value' (the columns are variant, boot, run, metric and value)\n");
	fails("variant,boot,run,metric,run\n", NULL,
	      "t.csv:1: no column 'value' in the header (it names variant, boot, run, metric and value)\n"
	      "t.csv:1:25: column 'run' twice in the header\n");
	fails("variant,boot,\"run,metric,value\n", NULL, "t.csv:1:14: a quoted field without its closing quote\n");
}

static void test_row_errors(void **state)
{
	(void)state;
	fails("variant,boot,run,metric,value\n"
	      "a,1,1,m,1\n"
	      "a,1,1\n"
	      "a,1,1,m,1,2\n"
	      "b,1,1,m,x\n"
	      "b,1,1,m,1.5s\n"
	      "b,1,1,m, 2\n"
	      "b,1,1,m,\n"
	      "b,1,1,m,1e999\n"
	      "b,1,1,m,nan\n"
	      "b,1,1,m,-inf\n",
	      NULL,
	      "t.csv:3:1: 3 fields where the header has 5\n"
	      "t.csv:4:1: 6 fields where the header has 5\n"
	      "t.csv:5:9: value 'x' is not a number\n"
	      "t.csv:6:9: value '1.5s' is not a number\n"
	      "t.csv:7:9: value ' 2' is not a number\n"
	      "t.csv:8:9: empty value\n"
	      "t.csv:9:9: value '1e999' is not a finite number\n"
	      "t.csv:10:9: value 'nan' is not a finite number\n"
	      "t.csv:11:9: value '-inf' is not a finite number\n");
	fails("variant,boot,run,metric,value\n"
	      ",1,1,m,1\n"
	      "a,1,,m,1\n"
	      "a,1,1,,1\n"
	      "a,\"x\ty\",1,m,1\n"
	      "a,1,1,\"m\x7f\",1\n"
	      "\"a\nb\",1,1,m,1\n"
	      "b,1,1,m,1\n",
	      NULL,
	      "t.csv:2:1: empty variant\n"
	      "t.csv:3:5: empty run\n"
	      "t.csv:4:7: empty metric\n"
	      "t.csv:5:3: a control character (0x09) in the boot\n"
	      "t.csv:6:7: a control character (0x7f) in the metric\n"
	      "t.csv:7:1: a control character (0x0a) in the variant\n");
}

static void test_quote_errors(void **state)
{
	(void)state;
	fails("variant,boot,run,metric,value\n"
	      "a,1,1,m\"x,1\n"
	      "a,1,1,\"m\"x,1\n"
	      "a,1,1,\"m\",1\n"
	      "b,1,1,m,\"2\n",
	      NULL,
	      "t.csv:2:8: a quote inside an unquoted field (quote the whole field and write the quote as \"\")\n"
	      "t.csv:3:10: text after the closing quote of a field (a quote inside a quoted field is written \"\")\n"
	      "t.csv:5:9: a quoted field without its closing quote\n");
	/* a quoted line break moves the line count on */
	fails("variant,boot,run,metric,value\n"
	      "a,1,1,\"two\nlines\",1\n"
	      "a,1,1,m,x\n",
	      NULL,
	      "t.csv:2:7: a control character (0x0a) in the metric\n"
	      "t.csv:4:9: value 'x' is not a number\n");
}

static void test_duplicates_and_variants(void **state)
{
	(void)state;
	fails("variant,boot,run,metric,value\n"
	      "a,b1,1,m,1\n"
	      "a,b1,1,n,1\n"
	      "b,,1,m,1\n"
	      "a,b1,1,m,2\n"
	      "b,,1,m,3\n"
	      "b,,1,m,4\n",
	      NULL,
	      "t.csv:5: metric 'm' twice in run '1' of variant 'a', boot 'b1': lines 2 and 5\n"
	      "t.csv:6: metric 'm' twice in run '1' of variant 'b': lines 4 and 6\n"
	      "t.csv:7: metric 'm' twice in run '1' of variant 'b': lines 4 and 7\n");
	/* the same run id in another boot or variant is another run */
	{
		struct result_set *rs = NULL;
		char *err = NULL;

		assert_int_equal(parse("variant,boot,run,metric,value\na,b1,1,m,1\na,b2,1,m,1\nb,b1,1,m,1\n", NULL, &rs,
				       &err), 0);
		free(err);
		assert_int_equal(rs->n, 3);
		result_set_free(rs);
	}
	fails("variant,boot,run,metric,value\na,1,1,m,1\na,2,1,m,1\n", NULL,
	      "t.csv: nothing to compare: every row is of variant 'a'\n");
}

static void test_limits(void **state)
{
	struct result_set *rs = NULL;
	struct diags d = { 0 };
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* the size is checked before a byte is read: the text need not be there */
	assert_int_equal(result_csv_parse("", RESULT_CSV_MAX_BYTES + 1, "t.csv", NULL, &rs, &d), -EINVAL);
	diags_format(&d, &sb);
	assert_string_equal(sb.buf, "t.csv: 256 MiB, more than the 256 MiB this reads: split the file\n");
	assert_null(rs);
	diags_release(&d);
	strbuf_release(&sb);
	/* errors stop at the diags' limit */
	strbuf_addstr(&sb, "variant,boot,run,metric,value\n");
	for (int i = 0; i < 50; i++)
		strbuf_addstr(&sb, "a,1,1,m,x\n");
	d.limit = 10;
	assert_int_equal(result_csv_parse(sb.buf, sb.len, "t.csv", NULL, &rs, &d), -EINVAL);
	assert_int_equal(d.n, 10);
	diags_release(&d);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_quoting_crlf_order),
		cmocka_unit_test(test_base),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_row_errors),
		cmocka_unit_test(test_quote_errors),
		cmocka_unit_test(test_duplicates_and_variants),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
