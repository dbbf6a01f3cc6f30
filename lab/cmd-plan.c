/* SPDX-License-Identifier: MIT */
/* lab plan [EXPERIMENT...]: the runs, in execution order; with a stored
 * calibration (lab calibrate), what each declared mde needs here. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "plan/plan.h"
#include "result/decide.h"
#include "store/calib-store.h"
#include "util/escape.h"
#include "util/banned.h"

/* One declared expectation against the calibration: boots a variant for its mde, and the time. */
static void estimate(const struct spec_experiment *e, const struct spec_expect *x, const struct calib_record *rec,
		     struct strbuf *out)
{
	const struct calib_metric *m = calibration_find(rec->c, NULL, x->metric);
	unsigned looks = e->repeat_auto && e->decide.max_boots > e->decide.min_boots
				 ? e->decide.max_boots - e->decide.min_boots + 1 : 1;
	unsigned rpb = e->repeat_auto ? e->decide.runs_per_boot : rec->c->runs_per_boot, boots;
	double minutes;

	strbuf_addstr(out, "  ");
	term_escape(out, x->metric);
	if (!x->has_effect) {
		strbuf_addstr(out, ": no mde declared (mde: N%), nothing to size\n");
		return;
	}
	strbuf_addf(out, " %g%%: ", x->effect * 100);
	if (!m || isnan(m->cv_between)) {
		strbuf_addstr(out, "the calibration has no figures for it\n");
		return;
	}
	boots = decide_boots_needed(m->cv_between, m->cv_within, rpb ? rpb : 1, x->effect * 100,
				    e->decide.alpha / looks, e->decide.power);
	minutes = (double)boots * (rpb ? rpb : 1) * 2 * rec->seconds_per_run / 60;
	strbuf_addf(out, "about %u boots x %u runs a variant, about %.0f min here%s\n", boots, rpb ? rpb : 1, minutes,
		    e->repeat_auto && boots > e->decide.max_boots ? " (more than max-boots: it would end inconclusive)"
								  : "");
}

/* For each experiment planned with a calibration stored: its expectations sized. */
static void estimates(const struct lab_ctx *ctx, const struct spec *s, const struct plan *p, struct strbuf *out)
{
	_cleanup_free_ char *root = cmd_results_dir(s);
	struct calib_host here = { 0 };
	const char *last = NULL;

	for (size_t i = 0; i < p->n; i++) {
		const struct spec_experiment *e = spec_find_experiment(s, p->runs[i].experiment);
		struct calib_record rec;
		_cleanup_free_ char *err = NULL, *why = NULL;

		if (!e || (last && streq(last, e->name)))
			continue;
		last = e->name;
		if (calib_load(root, e->name, &rec, &err) < 0) {
			if (err)
				cmd_error(ctx, "%s", err);
			continue;
		}
		if (!here.cpu)
			calib_host_here(&here); /* once, and only with a calibration to compare */
		why = calib_host_differs(&rec.host, &here);
		/* the stored file may come from another machine's results: its strings go out escaped */
		strbuf_addf(out, "\n%s, from its calibration of ", e->name);
		term_escape(out, rec.date);
		strbuf_addstr(out, why ? " on another host (" : " on this host");
		if (why)
			term_escape(out, why);
		strbuf_addstr(out, why ? "):\n" : ":\n");
		for (size_t j = 0; j < e->njobs; j++)
			for (size_t k = 0; k < e->jobs[j].nexpect; k++)
				estimate(e, &e->jobs[j].expect[k], &rec, out);
		calib_record_release(&rec);
	}
	calib_host_release(&here);
}

struct plan_opts {
	bool as_declared;
};

const struct lab_option plan_options[] = {
	OPT(struct plan_opts, as_declared, OPT_FLAG, 0, "as-declared", NULL,
	    "plan the experiments named, even where KVM does not work and one names a stand-in (without-kvm)"),
	{ 0 },
};

int cmd_plan(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct plan_opts o = { 0 };
	int i = cmd_options_parse(ctx, "plan", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (i < 0)
		return cmd_options_exit(i);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	cmd_stand_ins(ctx, s, argc - i, argv + i, o.as_declared, &only);
	if (plan_build(s, &only, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	if (ctx->json)
		plan_format_json(p, &out);
	else {
		plan_format_text(p, &out);
		estimates(ctx, s, p, &out);
	}
	cmd_write(&out);
	return EXIT_OK;
}
