/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for lab judge's CSV reader (lab/result/csv.c): any bytes as
 * the file. Whatever it accepts goes through the decision engine with two
 * declared metrics (the first run's first two) and lab report's text and
 * JSON formatters, once as read and once with the last variant as the
 * base. Never a crash or a leak; an accepted file has two variants or more
 * and a run for every one of them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "result/compare.h"
#include "result/csv.h"
#include "result/report.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void judge(struct result_set *rs, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	struct report_opts all = { .all = true };
	struct comparison *c;

	if (rs->variants.n < 2 || !rs->n)
		abort();
	rs->decide.method = (enum stat_method)(size % STAT_METHOD_COUNT);
	if (rs->runs[0].nm > 0)
		result_add_expect(rs, 0, rs->runs[0].m[0].name, DIR_INCREASE, 0.05, true);
	if (rs->runs[0].nm > 1)
		result_add_expect(rs, 0, rs->runs[0].m[1].name, DIR_UNCHANGED, 0.02, size & 1);
	c = compare_build(rs);
	report_format_text(c, &all, &sb);
	report_format_json(c, NULL, &sb);
	comparison_free(c);
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result_set *rs = NULL, *again = NULL;
	struct diags d = { 0 };
	char *base;

	if (size > 64 * 1024)
		return 0;
	if (result_csv_parse((const char *)data, size, "fuzz.csv", NULL, &rs, &d) == 0) {
		base = xstrdup(rs->variants.v[rs->variants.n - 1]);
		judge(rs, size);
		if (result_csv_parse((const char *)data, size, "fuzz.csv", base, &again, &d) < 0 ||
		    !streq(again->variants.v[0], base))
			abort();
		judge(again, size + 1);
		free(base);
	}
	result_set_free(rs);
	result_set_free(again);
	diags_release(&d);
	return 0;
}
