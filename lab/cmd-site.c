/* SPDX-License-Identifier: MIT */
/*
 * lab site DIR [--all] [--allow-mixed]: static pages for the whole result
 * store, for any web server: DIR/index.html lists every stored run (newest
 * first) with its verdicts and a link to its report (DIR/runs/<id>.html),
 * a track's is its timeline (the robot's report: the series over commits,
 * change points, culprits, accepted trade-offs marked),
 * DIR/exp/<experiment>.html charts each declared metric across runs
 * (store/site-build.h writes them, result/site.h draws them). DIR/.lab-site
 * lists what lab wrote, the only files a rebuild removes; a DIR in the
 * result store (the results folder, a run folder) is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "cmd.h"
#include "engine/track-report.h"
#include "store/site-build.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/path.h"
#include "util/banned.h"

struct site_cmd_opts {
	bool all, allow_mixed;
};

const struct lab_option site_options[] = {
	OPT(struct site_cmd_opts, all, OPT_FLAG, 0, "all", NULL, "reports with every row, not only the significant changes"),
	OPT(struct site_cmd_opts, allow_mixed, OPT_FLAG, 0, "allow-mixed", NULL,
	    "report runs whose environments differ in what matters (else listed without verdicts)"),
	{ 0 },
};

static void summary_json(const char *dir, const struct site_summary *s, double seconds, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_string(&j, "dir", dir);
	json_kv_uint(&j, "pages", s->pages);
	json_kv_uint(&j, "runs", s->runs);
	json_kv_uint(&j, "experiments", s->experiments);
	json_kv_uint(&j, "removed", s->removed);
	json_key(&j, "damaged");
	json_array_begin(&j);
	for (size_t i = 0; i < s->damaged.n; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "id", s->damaged.v[i]);
		json_kv_string(&j, "why", s->why.v[i]);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_kv_double(&j, "seconds", seconds);
	json_object_end(&j);
	json_finish(&j);
}

/* A track's folder (track.json in it): its timeline, the robot's report in
 * HTML (engine/track-report.h), is its page. */
static int track_page(const char *root, const char *dir, struct strbuf *html, struct diags *d)
{
	_cleanup_free_ char *tf = path_join(dir, TRACK_FILE);
	struct track_report r;
	int ret;

	if (access(tf, F_OK) < 0)
		return 0;
	if ((ret = track_report_load(root, dir, &r, d)) < 0)
		return ret;
	track_report_format_html(&r, html);
	track_report_release(&r);
	return 1;
}

int cmd_site(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_(site_summary_release) struct site_summary s = { 0 };
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct site_cmd_opts o = { 0 };
	struct site_opts so;
	const char *dir;
	double t0 = now_sec();
	int r, first = cmd_options_parse(ctx, "site", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 1 || !*argv[first]) {
		cmd_error(ctx, "site: name one folder for the pages (lab site DIR)");
		return EXIT_USAGE;
	}
	dir = argv[first];
	if (!(root = cmd_results_root(ctx)))
		return EXIT_USAGE;
	so = (struct site_opts){ .all = o.all, .allow_mixed = o.allow_mixed, .own_page = track_page };
	if ((r = site_build(root, dir, &so, &s, &d)) < 0) {
		cmd_report_diags(ctx, &d);
		return r == -ENOTDIR || r == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	if (ctx->json) {
		summary_json(dir, &s, now_sec() - t0, &out);
	} else {
		for (size_t i = 0; i < s.damaged.n; i++)
			cmd_error(ctx, "warning: run '%s' does not load, listed as such: %s", s.damaged.v[i], s.why.v[i]);
		if (ctx->verbosity >= 0) {
			strbuf_addf(&out, "%s/index.html: %zu pages, %zu stored runs", dir, s.pages, s.runs);
			if (s.damaged.n)
				strbuf_addf(&out, " (%zu do%s not load)", s.damaged.n, s.damaged.n == 1 ? "es" : "");
			strbuf_addf(&out, ", %zu experiments, %.2f s\n", s.experiments, now_sec() - t0);
		}
	}
	cmd_write(&out);
	return EXIT_OK;
}
