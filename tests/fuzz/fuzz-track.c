/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for engine/track.c's readers: track.json comes back with a
 * bundle or a results folder from elsewhere, and `lab track --resume` acts
 * on it; accepted.json sits in the results folder. Any bytes, read as
 * each: never a crash or a leak; what was read formats again and reads
 * back the same, and a track's summary and its robot's report (text,
 * Markdown, HTML, JSON that parses) can be said.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine/track.h"
#include "engine/track-report.h"
#include "util/alloc.h"
#include "util/json-read.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void accepted(const uint8_t *data, size_t size)
{
	struct track_accepted a, back;
	char *err = NULL, *err2 = NULL;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;

	if (track_accepted_parse("accepted.json", (const char *)data, size, &a, &err) < 0) {
		if (!err)
			abort();
		free(err);
		return;
	}
	track_accepted_format_json(&a, &sb);
	if (track_accepted_parse("again.json", sb.buf, sb.len, &back, &err2) < 0)
		abort();
	track_accepted_format_json(&back, &sb2);
	if (sb.len != sb2.len || memcmp(sb.buf, sb2.buf, sb.len) != 0)
		abort();
	if (a.n)
		track_accepted_why(&a, "c0ffee0500000000000000000000000000000005", a.v[0].metric);
	track_accepted_release(&a);
	track_accepted_release(&back);
	strbuf_release(&sb);
	strbuf_release(&sb2);
}

/* The report of a track read from elsewhere, with no comparison or bisect
 * to read (r takes t). */
static void report(struct track *t)
{
	struct track_report r = { 0 };
	struct result_set **runs = xcalloc(t->ncommits + 1, sizeof(*runs));
	struct strbuf sb = STRBUF_INIT;
	struct json_doc *doc = NULL;
	char *err = NULL;

	r.t = *t;
	r.id = xstrdup("20261207-170000-abcd");
	track_series(&r.t, runs, &r.value, &r.commit, &r.n, &r.kept, &r.nkept);
	free(runs);
	r.pts = xcalloc(r.t.npoints + 1, sizeof(*r.pts));
	track_report_format_text(&r, &sb);
	track_report_format_md(&r, &sb);
	track_report_format_html(&r, &sb);
	strbuf_reset(&sb);
	track_report_format_json(&r, &sb);
	if (json_doc_parse_file("report.json", sb.buf, sb.len, &doc, &err) < 0)
		abort(); /* the report's JSON is JSON whatever the track held */
	json_doc_free(doc);
	track_report_release(&r);
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct track t, back;
	char *err = NULL, *err2 = NULL;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT, text = STRBUF_INIT;

	accepted(data, size);
	if (track_parse("track.json", (const char *)data, size, &t, &err) < 0) {
		if (!err)
			abort(); /* an error always says why */
		free(err);
		return 0;
	}
	track_format_json(&t, &sb);
	if (track_parse("again.json", sb.buf, sb.len, &back, &err2) < 0)
		abort(); /* what lab writes it reads */
	track_format_json(&back, &sb2);
	if (sb.len != sb2.len || memcmp(sb.buf, sb2.buf, sb.len) != 0)
		abort();
	track_format_text(&t, &text);
	track_release(&t);
	report(&back);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	strbuf_release(&text);
	return 0;
}
