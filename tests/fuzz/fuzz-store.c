/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the run store's readers, as a fetched bundle may bring
 * their input. An input that starts with '{' is a run.json, then
 * optionally 0x1e (record separator) and one run's metrics; any other
 * input is a run stored before run.json: its journal, variants, expect,
 * observe, mechanism and one run's metrics separated by 0x1e. Whatever is
 * accepted then goes through the comparison and every report formatter,
 * which print what the store holds, and (run.json) is written back and
 * must read back the same.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "result/compare.h"
#include "result/report.h"
#include "store/store.h"
#include "store/store-v1.h"
#include "util/alloc.h"

#define ID "20261201-000000-f022"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void report_all(struct result_set *rs, const char *metrics)
{
	struct strbuf sb = STRBUF_INIT;
	struct report_opts all = { .all = true };
	struct comparison *c;

	for (size_t i = 0; i < rs->n; i++) {
		char *err = NULL;

		if (metrics && result_parse_metrics(&rs->runs[i], metrics, &err) < 0)
			free(err);
	}
	c = compare_build(rs);
	report_format_text(c, &all, &sb);
	report_format_md(c, &all, &sb);
	report_format_json(c, NULL, &sb);
	report_format_html(c, &all, &sb);
	comparison_free(c);
	strbuf_release(&sb);
}

/* What store_format writes, store_parse reads back; from then on the text
 * stays the same (the first writing may turn bytes that are not UTF-8 into
 * U+FFFD and -0 into 0). */
static void round_trip(const struct result_set *rs)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, c = STRBUF_INIT;
	struct result_set *back = NULL, *again = NULL;
	struct diags d = { 0 };

	store_format(rs, &a);
	if (store_parse(ID, a.buf, a.len, "run.json", &back, &d) < 0)
		abort();
	store_format(back, &b);
	if (store_parse(ID, b.buf, b.len, "run.json", &again, &d) < 0)
		abort();
	store_format(again, &c);
	if (b.len != c.len || memcmp(b.buf, c.buf, b.len) != 0)
		abort();
	result_set_free(back);
	result_set_free(again);
	diags_release(&d);
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&c);
}

static void fuzz_json(const char *data, size_t size)
{
	const char *rsep = memchr(data, 0x1e, size);
	size_t len = rsep ? (size_t)(rsep - data) : size;
	char *metrics = rsep ? xstrndup(rsep + 1, size - len - 1) : NULL;
	struct result_set *rs = NULL;
	struct diags d = { 0 };

	if (store_parse(ID, data, len, "run.json", &rs, &d) == 0) {
		round_trip(rs);
		report_all(rs, metrics);
		result_set_free(rs);
	}
	diags_release(&d);
	free(metrics);
}

static void fuzz_v1(const uint8_t *data, size_t size)
{
	char *text, *part[6] = { 0 };
	struct diags d = { 0 };
	struct result_set *rs = NULL;
	size_t n = 0;

	text = xstrndup((const char *)data, size); /* a NUL ends the text, as reading a file stops there */
	part[n++] = text;
	for (char *p = text; *p && n < 6; p++)
		if (*p == 0x1e) {
			*p = '\0';
			part[n++] = p + 1;
		}
	{
		struct store_v1_text t = {
			.journal = part[0], .variants = part[1] ? part[1] : "", .expect = part[2] ? part[2] : "",
			.observe = part[3], .mechanism = part[4],
			.journal_file = "journal", .variants_file = "variants", .expect_file = "expect",
			.observe_file = "observe",
		};

		if (store_v1_parse(ID, &t, &rs, &d) == 0) {
			round_trip(rs); /* what `lab run --resume` of an old run writes */
			report_all(rs, part[5]);
			result_set_free(rs);
		}
	}
	diags_release(&d);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	if (size && data[0] == '{')
		fuzz_json((const char *)data, size);
	else
		fuzz_v1(data, size);
	return 0;
}
