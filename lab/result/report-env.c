/* SPDX-License-Identifier: MIT */
/*
 * The reports' "Mixed environments" section: every two environments the
 * runs of one comparison group were measured in, with their differences
 * (mixed.h). Shown whenever the runs' fingerprints differ; a difference
 * that matters reaches a report only with --allow-mixed.
 */
#include "../util/escape.h"
#include "../util/json.h"
#include "../util/xml.h"
#include "report.h"
#include "../util/banned.h"

static const char heading[] = "Mixed environments";
static const char intro[] = "the runs compared were not all measured in the same environment; "
			    "a difference marked (noted) does not make the comparison unfair, any other one does";

/* A line per pair of environments, each escaped for its format. */
static void env_lines(const struct comparison *c, const char *bullet,
		      void (*escape)(struct strbuf *out, const char *s), struct strbuf *out)
{
	for (size_t i = 0; i < c->nenv; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

		env_pair_describe(&c->env[i], &line);
		strbuf_addstr(out, bullet);
		escape(out, line.buf);
		strbuf_addch(out, '\n');
	}
}

void report_env_text(const struct comparison *c, struct strbuf *out)
{
	if (!c->nenv)
		return;
	strbuf_addf(out, "\n%s (%zu unfair): %s\n", heading, env_pairs_matter(c->env, c->nenv), intro);
	env_lines(c, "  ", term_escape, out);
}

void report_env_md(const struct comparison *c, struct strbuf *out)
{
	if (!c->nenv)
		return;
	strbuf_addf(out, "## %s\n\n%s.\n\n", heading, intro);
	env_lines(c, "- ", md_escape, out);
	strbuf_addch(out, '\n');
}

void report_env_json(const struct comparison *c, struct json *j)
{
	json_key(j, "mixed_environments");
	json_array_begin(j);
	for (size_t i = 0; i < c->nenv; i++) {
		const struct env_pair *p = &c->env[i];

		json_object_begin(j);
		json_kv_string(j, "group", p->group);
		json_kv_string(j, "a", p->va);
		json_kv_string(j, "b", p->vb);
		json_kv_uint(j, "fingerprint_a", (unsigned)p->fa);
		json_kv_uint(j, "fingerprint_b", (unsigned)p->fb);
		json_key(j, "differences");
		fp_diffs_write_json(p->d, p->n, j);
		json_object_end(j);
	}
	json_array_end(j);
}

void report_env_html(const struct comparison *c, struct xml *x)
{
	if (!c->nenv)
		return;
	xml_element(x, "h2", heading);
	xml_element(x, "p", intro);
	xml_open(x, "ul");
	for (size_t i = 0; i < c->nenv; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

		env_pair_describe(&c->env[i], &line);
		xml_element(x, "li", line.buf);
	}
	xml_close(x);
}
