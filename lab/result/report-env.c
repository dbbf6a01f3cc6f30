/* SPDX-License-Identifier: MIT */
/*
 * The reports' "Mixed environments" section: every two environments the
 * runs of one comparison group were measured in, with their differences
 * (mixed.h). Shown whenever the runs' fingerprints differ; a difference
 * that matters reaches a report only with --allow-mixed. And "Environment":
 * each distinct fingerprint and the kernels and runs it covers, in the
 * JSON and Markdown reports as in the HTML one, so that a reader of either
 * learns where the figures came from without opening run.json.
 */
#include "../util/escape.h"
#include "../util/strv.h"
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

bool report_env_field_known(const struct result_set *rs, int fi)
{
	for (size_t f = 0; f < rs->nfps; f++)
		if (rs->fps[f].f[fi])
			return true;
	return false;
}

size_t report_env_users(const struct result_set *rs, size_t f, struct strv *vars)
{
	size_t runs = 0;

	for (size_t i = 0; i < rs->n; i++)
		if (rs->runs[i].fp == (int)f) {
			runs++;
			if (!strv_contains(vars, rs->runs[i].variant))
				strv_push(vars, rs->runs[i].variant);
		}
	return runs;
}

void report_environments_json(const struct comparison *c, struct json *j)
{
	const struct result_set *rs = c->rs;

	json_key(j, "environments");
	json_array_begin(j);
	for (size_t f = 0; f < rs->nfps; f++) {
		_cleanup_strv_ struct strv vars = STRV_INIT;

		report_env_users(rs, f, &vars);
		json_object_begin(j);
		json_kv_uint(j, "fingerprint", (unsigned)f);
		json_key(j, "kernels");
		json_array_begin(j);
		for (size_t k = 0; k < vars.n; k++)
			json_string(j, vars.v[k]);
		json_array_end(j);
		json_key(j, "runs");
		json_array_begin(j);
		for (size_t i = 0; i < rs->n; i++)
			if (rs->runs[i].fp == (int)f)
				json_string(j, rs->runs[i].id);
		json_array_end(j);
		json_key(j, "environment");
		fingerprint_write_json(&rs->fps[f], j);
		json_object_end(j);
	}
	json_array_end(j);
}

void report_environments_md(const struct comparison *c, struct strbuf *out)
{
	const struct result_set *rs = c->rs;

	/* a heading after a blank line, whatever ends the report before it */
	if (out->len && out->buf[out->len - 1] != '\n')
		strbuf_addch(out, '\n');
	if (out->len >= 2 && out->buf[out->len - 2] != '\n')
		strbuf_addch(out, '\n');
	strbuf_addstr(out, "## Environment\n\n");
	if (!rs->nfps) {
		strbuf_addstr(out, "The runs carry no environment fingerprint (stored before lab recorded them).\n\n");
		return;
	}
	strbuf_addstr(out, "| |");
	for (size_t f = 0; f < rs->nfps; f++) {
		_cleanup_strv_ struct strv vars = STRV_INIT;
		size_t runs = report_env_users(rs, f, &vars);

		strbuf_addch(out, ' ');
		if (rs->nfps > 1)
			strbuf_addf(out, "environment %zu: ", f + 1);
		for (size_t k = 0; k < vars.n; k++) {
			if (k)
				strbuf_addstr(out, ", ");
			md_escape(out, vars.v[k]);
		}
		strbuf_addf(out, " (%zu run%s) |", runs, runs == 1 ? "" : "s");
	}
	strbuf_addstr(out, "\n|---|");
	for (size_t f = 0; f < rs->nfps; f++)
		strbuf_addstr(out, "---|");
	strbuf_addch(out, '\n');
	for (int fi = 0; fi < FP_NFIELDS; fi++) {
		if (!report_env_field_known(rs, fi))
			continue;
		strbuf_addf(out, "| %s |", fp_field_label(fi));
		for (size_t f = 0; f < rs->nfps; f++) {
			strbuf_addch(out, ' ');
			if (rs->fps[f].f[fi])
				md_escape(out, rs->fps[f].f[fi]);
			else
				strbuf_addstr(out, "unknown");
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
	}
	strbuf_addch(out, '\n');
}
