/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the run store's readers: a stored run's journal,
 * variants, expect, observe, mechanism and one run's metrics, as a fetched
 * bundle may bring them, separated by 0x1e (record separator) in the
 * input. Whatever is accepted then goes through the comparison and every
 * report formatter, which print what the store holds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "result/compare.h"
#include "result/report.h"
#include "run/store.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *part[6] = { 0 };
	struct diags d = { 0 };
	struct result_set *rs = NULL;
	size_t n = 0;

	if (size > 64 * 1024)
		return 0;
	text = xstrndup((const char *)data, size); /* a NUL ends the text, as reading a file stops there */
	part[n++] = text;
	for (char *p = text; *p && n < 6; p++)
		if (*p == 0x1e) {
			*p = '\0';
			part[n++] = p + 1;
		}
	{
		struct store_text t = {
			.journal = part[0], .variants = part[1] ? part[1] : "", .expect = part[2] ? part[2] : "",
			.observe = part[3], .mechanism = part[4],
			.journal_file = "journal", .variants_file = "variants", .expect_file = "expect",
			.observe_file = "observe",
		};

		if (store_parse("20261201-000000-f022", &t, &rs, &d) == 0) {
			struct strbuf sb = STRBUF_INIT;
			struct report_opts all = { .all = true };
			struct comparison *c;

			for (size_t i = 0; i < rs->n; i++) {
				char *err = NULL;

				if (part[5] && result_parse_metrics(&rs->runs[i], part[5], &err) < 0)
					free(err);
			}
			c = compare_build(rs, 0.95);
			report_format_text(c, &all, &sb);
			report_format_md(c, &all, &sb);
			report_format_json(c, &sb);
			report_format_html(c, &all, &sb);
			comparison_free(c);
			strbuf_release(&sb);
			result_set_free(rs);
		}
	}
	diags_release(&d);
	free(text);
	return 0;
}
