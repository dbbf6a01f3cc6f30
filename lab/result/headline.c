/* SPDX-License-Identifier: MIT */
/*
 * The headline a report opens with, in every format: a sentence per
 * compared variant that says what was decided. Each declared expectation
 * with its effect and interval and the decision engine's word for it
 * (an inconclusive one with the smallest change the data could have
 * shown), then the mechanism checks that hold out of those judged, the
 * flagged exploratory changes when nothing was declared, and the runs
 * that failed. Pure: the comparison in, lines out.
 */
#include <math.h>
#include <string.h>
#include "../util/alloc.h"
#include "report.h"
#include "../util/banned.h"

void report_change_text(const struct effect *e, struct strbuf *sb)
{
	const char *unit = e->points ? " points" : "%";

	if (!isfinite(e->change)) {
		strbuf_addstr(sb, "no change measured");
		return;
	}
	strbuf_addf(sb, "%+.1f%s", e->change, unit);
	if (isfinite(e->lo) && isfinite(e->hi))
		strbuf_addf(sb, " [%+.1f%s, %+.1f%s]", e->lo, unit, e->hi, unit);
}

/* The metric, with its group when the variant has the metric in another group too. */
static void metric_name(const struct comparison *c, const struct cmp_verdict *v, struct strbuf *sb)
{
	bool other_group = false;

	for (size_t i = 0; i < c->nverdicts; i++)
		other_group |= streq(c->verdicts[i].variant, v->variant) && streq(c->verdicts[i].metric, v->metric) &&
			       !streq(c->verdicts[i].group, v->group);
	strbuf_addstr(sb, v->metric);
	if (other_group)
		strbuf_addf(sb, " [%s]", v->group);
}

/* A decided expectation: its effect, interval and the decision engine's word. */
static void decided_text(const struct comparison *c, const struct cmp_verdict *v, struct strbuf *sb)
{
	const struct effect *e = &v->d->e;

	metric_name(c, v, sb);
	strbuf_addch(sb, ' ');
	report_change_text(e, sb);
	switch (v->v) {
	case VERDICT_IMPROVED:
		strbuf_addstr(sb, " improved as expected");
		break;
	case VERDICT_REGRESSED:
		strbuf_addstr(sb, " REGRESSED");
		break;
	case VERDICT_UNCHANGED:
		strbuf_addstr(sb, " unchanged");
		if (v->expect->has_effect)
			strbuf_addf(sb, " (within +-%g%%)", v->expect->effect * 100);
		break;
	case VERDICT_CHANGED:
		strbuf_addstr(sb, " CHANGED (expected unchanged)");
		break;
	case VERDICT_SMALLER:
		strbuf_addstr(sb, " smaller than declared");
		if (v->expect->has_effect)
			strbuf_addf(sb, " (%g%%)", v->expect->effect * 100);
		break;
	case VERDICT_INCONCLUSIVE:
		break;
	}
}

/* An inconclusive one: why, in a few words. */
static void inconclusive_text(const struct comparison *c, const struct cmp_verdict *v, struct strbuf *sb)
{
	const struct effect *e = &v->d->e;

	metric_name(c, v, sb);
	if (v->na < CMP_MIN_RUNS || v->nb < CMP_MIN_RUNS)
		strbuf_addf(sb, " (%zu and %zu runs: fewer than %d a side)", v->na, v->nb, CMP_MIN_RUNS);
	else if (isfinite(e->mde))
		strbuf_addf(sb, " (could show %.1f%s)", e->mde, e->points ? " points" : "%");
}

void report_headline(const struct comparison *c, struct strv *ret)
{
	const struct result_set *rs = c->rs;

	for (size_t k = 1; k < c->nvariants; k++) {
		const char *var = rs->variants.v[k];
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		size_t parts = 0, held = 0, judged = 0, open = 0, failed = 0, flagged = 0;

		strbuf_addf(&sb, "%s: ", var);
		/* decided first, each with its figures; then the undecided, named */
		for (size_t i = 0; i < c->nverdicts; i++) {
			const struct cmp_verdict *v = &c->verdicts[i];

			if (!streq(v->variant, var) || !v->d || !v->d->have || v->v == VERDICT_INCONCLUSIVE)
				continue;
			if (parts++)
				strbuf_addstr(&sb, "; ");
			decided_text(c, v, &sb);
		}
		for (int pass = 0; pass < 2; pass++) {
			size_t n = 0;

			for (size_t i = 0; i < c->nverdicts; i++) {
				const struct cmp_verdict *v = &c->verdicts[i];
				bool have = v->d && v->d->have;

				if (!streq(v->variant, var) || (pass == 0 ? !have || v->v != VERDICT_INCONCLUSIVE : have))
					continue;
				strbuf_addstr(&sb, n++ ? ", " : parts++ ? "; " : "");
				if (n == 1)
					strbuf_addstr(&sb, pass == 0 ? "inconclusive: " : "not measured: ");
				if (pass == 0)
					inconclusive_text(c, v, &sb);
				else
					metric_name(c, v, &sb);
			}
		}
		for (size_t i = 0; i < c->nobs; i++)
			if (c->obs[i].variant && streq(c->obs[i].variant, var) && c->obs[i].state != OBS_MISSING) {
				judged++;
				held += c->obs[i].state == OBS_HOLDS;
				open += c->obs[i].state == OBS_INCONCLUSIVE;
			}
		if (judged)
			strbuf_addf(&sb, "%smechanism checks %zu/%zu hold", parts++ ? "; " : "", held, judged);
		if (open)
			strbuf_addf(&sb, ", %zu inconclusive", open);
		if (!c->nverdicts) {
			for (size_t g = 0; g < c->ngroups; g++)
				for (size_t r = 0; r < c->groups[g].nrows; r++)
					flagged += c->groups[g].rows[r].d[k].flagged;
			strbuf_addf(&sb, "%sno declared expectation, %zu flagged change%s", parts++ ? "; " : "", flagged,
				    flagged == 1 ? "" : "s");
		}
		for (size_t g = 0; g < c->ngroups; g++)
			failed += c->groups[g].failed[k];
		if (failed)
			strbuf_addf(&sb, "%s%zu run%s failed", parts++ ? "; " : "", failed, failed == 1 ? "" : "s");
		if (!parts)
			strbuf_addstr(&sb, "nothing declared or checked");
		strv_push(ret, sb.buf);
	}
}
