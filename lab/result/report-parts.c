/* SPDX-License-Identifier: MIT */
/*
 * The pieces every report format shares (text, Markdown, HTML, the
 * attribution's and the forest's): paragraph wrapping, the notes and the
 * legend under a table, how an observation and a verdict's basis read,
 * a disturbed run's line. Pure functions of the comparison; below the
 * formatters that use them, so that none of them calls another back.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/strbuf.h"
#include "report.h"
#include "../util/banned.h"

/* A mean the way the robot prints it: integers when large, 4 significant digits otherwise. */
void report_fmt_value(struct strbuf *out, double v)
{
	if (fabs(v) >= 1000 || v == floor(v))
		strbuf_addf(out, "%.0f", v);
	else
		strbuf_addf(out, "%.4g", v);
}

static const char *timing_note(const struct result_set *rs)
{
	return rs->icount ? "timing: icount: guest time counts instructions; a time-based metric measures path "
			    "length, not the host's speed, and not cache effects"
			  : NULL;
}

void report_wrap(struct strbuf *out, const char *s, size_t width, const char *indent)
{
	size_t col = 0;

	while (*s) {
		size_t n = strcspn(s, " ");

		if (!col)
			strbuf_addstr(out, indent);
		if (col && col + 1 + n > width) {
			strbuf_addch(out, '\n');
			strbuf_addstr(out, indent);
			col = 0;
		} else if (col) {
			strbuf_addch(out, ' ');
			col++;
		}
		strbuf_add(out, s, n);
		col += n;
		s += n;
		s += strspn(s, " ");
	}
	strbuf_addch(out, '\n');
}

static const char *counter_note(const struct result_set *rs)
{
	for (size_t i = 0; i < rs->names.n; i++)
		if (str_startswith(rs->names.v[i], "insn."))
			return "insn: guest instructions counted by lab's QEMU TCG plugin, exact whatever the host's "
			       "speed; they show path length, spinning on a contended lock and serialised "
			       "interleavings, not cache-line contention, which needs real cores";
	return NULL;
}

size_t report_notes(const struct result_set *rs, const char *notes[REPORT_MAX_NOTES])
{
	size_t n = 0;

	if (timing_note(rs))
		notes[n++] = timing_note(rs);
	if (counter_note(rs))
		notes[n++] = counter_note(rs);
	return n;
}

char *report_legend(const struct comparison *c)
{
	const struct decide_params *dp = &c->rs->decide;
	size_t tested = 0;

	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t r = 0; r < c->groups[g].nrows; r++)
			for (size_t v = 1; v < c->nvariants; v++)
				tested += !isnan(c->groups[g].rows[r].d[v].q);
	return xasprintf("Declared expectations: %s at alpha %g%s; the unit is the boot when each side has 2 or "
			 "more, else the run. Other rows: p, and q (Benjamini-Hochberg over %zu tested rows); "
			 "shown when q <= %g with 3 runs a side (--all: every row). \"ranges apart\": the kernel test "
			 "robot's rule; noisy: %%stddev >= 20%%. perf-profile and *_pct rows change in points; a profile "
			 "symbol or lock a run did not report counts 0 in that run.",
			 stat_method_name(dp->method), dp->alpha,
			 dp->sequential ? ", spent over the looks of a sequential design" : "", tested, dp->q);
}

static void obs_range(struct strbuf *out, const struct sample_stats *s)
{
	strbuf_addf(out, "%zu run%s: ", s->n, s->n == 1 ? "" : "s");
	report_fmt_value(out, s->min);
	if (s->max != s->min) {
		strbuf_addstr(out, " .. ");
		report_fmt_value(out, s->max);
	}
}

void report_observation_evidence(const struct cmp_observation *x, struct strbuf *out)
{
	bool vs = x->o->rel >= OBS_HIGHER;

	if (!x->group) {
		strbuf_addf(out, "no run reported %s", x->o->metric);
		return;
	}
	if (!x->s.n) {
		strbuf_addf(out, "no run of %s reported it", x->variant);
		return;
	}
	obs_range(out, &x->s);
	if (vs) {
		strbuf_addstr(out, "; baseline ");
		if (x->base.n)
			obs_range(out, &x->base);
		else
			strbuf_addstr(out, "has no value");
	}
	if (x->decided)
		strbuf_addf(out, "; %s; ranges %s", x->why, x->apart ? "apart" : "overlap");
}

void report_observation_seen(const struct cmp_observation *x, struct strbuf *out)
{
	if (x->o->says)
		strbuf_addf(out, "%s; ", x->o->says);
	report_observation_evidence(x, out);
}

bool report_disturbed(const struct report_opts *o, const char *group, size_t i, struct strbuf *out)
{
	const struct calib_overhead *ov = o->calib && i < o->calib->nov ? &o->calib->ov[i] : NULL;

	if (!ov || !streq(ov->group, group) || !calib_overhead_over_budget(o->calib, ov))
		return false;
	strbuf_addf(out, "%s moves %s by ", ov->monitor, ov->metric);
	calib_overhead_figure(ov, out);
	strbuf_addf(out, " here (budget %g%%, lab calibrate --monitors): these numbers are disturbed", ov->budget_pct);
	return true;
}

/* CV % or "-" */
static void fmt_cv(struct strbuf *out, double cv)
{
	if (isnan(cv))
		strbuf_addch(out, '-');
	else
		strbuf_addf(out, "%.1f%%", cv);
}

void report_verdict_basis(const struct cmp_verdict *v, struct strbuf *out)
{
	const struct effect *e = v->d ? &v->d->e : NULL;

	strbuf_addf(out, "%s, alpha %.3g", v->d ? e->method : stat_method_name(v->method), v->alpha);
	if (v->looks > 1)
		strbuf_addf(out, " (look %u of %u)", v->look, v->looks);
	if (!e)
		return;
	for (int k = 0; k < 2; k++) {
		strbuf_addstr(out, k ? "; compared " : "; baseline ");
		if (!e->boots[k]) {
			strbuf_addf(out, "%zu runs, boots unknown", e->runs[k]);
			continue;
		}
		strbuf_addf(out, "%zu boots x %.3g runs, CV between boots ", e->boots[k],
			    (double)e->runs[k] / (double)e->boots[k]);
		fmt_cv(out, e->cv_between[k]);
		strbuf_addstr(out, " within ");
		fmt_cv(out, e->cv_within[k]);
	}
	if (!e->by_boot && (e->boots[0] == 1 || e->boots[1] == 1))
		strbuf_addstr(out, "; one boot a side: its runs are not independent, the interval is too narrow");
}
