/* SPDX-License-Identifier: MIT */
/*
 * lab judge FILE.csv [--base NAME] [--expect METRIC:DIR[:MDE]]...: lab's
 * decision engine on results from anywhere. The CSV's rows are
 * variant,boot,run,metric,value (lab/result/csv.h); the first variant is
 * the baseline unless --base names another. Each --expect declares a
 * metric's direction (increase, decrease, unchanged) and, optionally, the
 * smallest change that matters in percent; those rows get a verdict, every
 * other metric is exploratory and flagged when it passes the false
 * discovery rate. The text is lab report's table; --json is one row per
 * metric and compared variant. Exit 1 when a declared verdict is regressed
 * or changed, 2 on bad input. --fingerprint VARIANT=FILE gives a variant
 * its environment (a fingerprint.json); variants whose environments differ
 * in what matters are refused (exit 2) unless --allow-mixed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd.h"
#include "result/compare.h"
#include "result/csv.h"
#include "result/report.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/banned.h"

struct jopts {
	const char *base;
	struct strv expect;
	const char *alpha, *q, *statistic;
	struct strv fingerprint;
	bool all, allow_mixed;
};

const struct lab_option judge_options[] = {
	OPT(struct jopts, base, OPT_STRING, 0, "base", "NAME",
	    "the variant the others are compared against (default: the first in the file)"),
	OPT(struct jopts, expect, OPT_LIST, 0, "expect", "METRIC:DIR[:MDE]",
	    "declare a metric: DIR increase, decrease or unchanged, MDE the smallest change that matters in % "
	    "(repeatable)"),
	OPT(struct jopts, alpha, OPT_STRING, 0, "alpha", "ALPHA", "level of the declared verdicts (default 0.05)"),
	OPT(struct jopts, q, OPT_STRING, 0, "q", "Q", "false discovery rate of the exploratory rows (default 0.05)"),
	OPT(struct jopts, statistic, OPT_CHOICE, 0, "statistic", "STATISTIC",
	    "welch-log, mann-whitney or bootstrap (default welch-log)", .choices = "welch-log|mann-whitney|bootstrap"),
	OPT(struct jopts, all, OPT_FLAG, 0, "all", NULL, "every row in the text, not only the significant changes"),
	OPT(struct jopts, fingerprint, OPT_LIST, 0, "fingerprint", "VARIANT=FILE",
	    "the variant's environment, a fingerprint.json as lab run writes it (repeatable)"),
	OPT(struct jopts, allow_mixed, OPT_FLAG, 0, "allow-mixed", NULL,
	    "compare variants whose environments differ in what matters (listed under Mixed environments)"),
	{ 0 },
};

static void jopts_release(struct jopts *o)
{
	strv_release(&o->expect);
	strv_release(&o->fingerprint);
}

static int read_text(const char *path, char **ret, size_t *ret_len);

/* --fingerprint VARIANT=FILE: every run of the variant measured there. */
static int read_fingerprints(const struct lab_ctx *ctx, const struct jopts *o, struct result_set *rs)
{
	for (size_t i = 0; i < o->fingerprint.n; i++) {
		const char *arg = o->fingerprint.v[i], *eq = strchr(arg, '=');
		_cleanup_free_ char *variant = eq ? xstrndup(arg, (size_t)(eq - arg)) : NULL, *text = NULL, *err = NULL;
		struct fingerprint fp;
		size_t len = 0;
		int r, k;

		if (!eq || !eq[1]) {
			cmd_error(ctx, "judge: --fingerprint '%s' is not VARIANT=FILE", arg);
			return -1;
		}
		if (!strv_contains(&rs->variants, variant)) {
			cmd_error(ctx, "judge: --fingerprint names variant '%s', which the file does not have", variant);
			return -1;
		}
		/* a variant's runs were measured in one place: a second file is a mistake, not an override */
		for (size_t j = 0; j < i; j++) {
			const char *prev = o->fingerprint.v[j], *peq = strchr(prev, '=');

			if (peq && (size_t)(peq - prev) == strlen(variant) && !strncmp(prev, variant, strlen(variant))) {
				cmd_error(ctx, "judge: --fingerprint '%s': variant '%s' is given twice", arg, variant);
				return -1;
			}
		}
		if ((r = read_text(eq + 1, &text, &len)) < 0) {
			cmd_error(ctx, "judge: cannot read '%s': %s", eq + 1, strerror(-r));
			return -1;
		}
		if (fingerprint_parse(text, len, &fp, &err) < 0) {
			cmd_error(ctx, "judge: %s: %s", eq + 1, err);
			return -1;
		}
		k = result_add_fingerprint(rs, &fp);
		fingerprint_release(&fp);
		for (size_t n = 0; n < rs->n; n++)
			if (streq(rs->runs[n].variant, variant))
				rs->runs[n].fp = k;
	}
	return 0;
}

/* A number in (lo, hi), the whole argument. */
static int parse_level(const struct lab_ctx *ctx, const char *opt, const char *arg, double hi, double *ret)
{
	char *end = NULL;
	double v;

	if (!arg)
		return 0;
	v = strtod(arg, &end);
	if (!*arg || (unsigned char)*arg <= ' ' || *end || !(v > 0 && v < hi)) {
		cmd_error(ctx, "judge: %s '%s' is not a number above 0 and below %g", opt, arg, hi);
		return -1;
	}
	*ret = v;
	return 0;
}

/* METRIC:DIR[:MDE], split from the right: a metric name may hold colons. */
static int parse_expect(const struct lab_ctx *ctx, const char *arg, struct result_set *rs)
{
	_cleanup_free_ char *s = xstrdup(arg);
	char *colon = strrchr(s, ':'), *mde = NULL, *end = NULL;
	enum expect_direction dir;
	double pct = 0;

	if (colon && expect_direction_parse(colon + 1, &dir) < 0) {
		mde = colon + 1;
		*colon = '\0';
		colon = strrchr(s, ':');
		if (colon && expect_direction_parse(colon + 1, &dir) < 0)
			colon = NULL;
	}
	if (!colon || colon == s) {
		cmd_error(ctx, "judge: --expect '%s' is not METRIC:increase|decrease|unchanged[:MDE] "
			       "(e.g. hackbench.throughput:increase:5)", arg);
		return -1;
	}
	*colon = '\0';
	if (mde) {
		pct = strtod(mde, &end);
		if (end && *end == '%')
			end++;
		if (!*mde || (unsigned char)*mde <= ' ' || *end || !(pct > 0 && pct < 1000)) {
			cmd_error(ctx, "judge: --expect '%s': the smallest change that matters, '%s', is not a "
				       "percentage above 0 and below 1000", arg, mde);
			return -1;
		}
	}
	for (size_t i = 0; i < rs->nexpect; i++)
		if (streq(rs->expect[i].metric, s)) {
			cmd_error(ctx, "judge: --expect '%s': metric '%s' is declared twice", arg, s);
			return -1;
		}
	result_add_expect(rs, 0, s, dir, pct / 100, mde != NULL);
	return 0;
}

/* Every declared metric is in the file: a typo would be an inconclusive verdict nobody reads. */
static int check_declared(const struct lab_ctx *ctx, const struct comparison *c, const char *file)
{
	const struct cmp_group *g = c->ngroups ? &c->groups[0] : NULL;
	size_t n = g ? g->nrows : 0;
	_cleanup_free_ const char **names = xcalloc(n + 1, sizeof(*names));

	for (size_t i = 0; i < n; i++)
		names[i] = g->rows[i].metric;
	for (size_t e = 0; e < c->rs->nexpect; e++) {
		const char *m = c->rs->expect[e].metric, *hint;
		size_t i;

		for (i = 0; i < n && !streq(names[i], m); i++)
			;
		if (i < n)
			continue;
		hint = str_suggest(m, names, n);
		cmd_error(ctx, "judge: --expect names metric '%s', which %s does not have%s%s%s", m, file,
			  hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
		return -1;
	}
	return 0;
}

static const struct cmp_verdict *verdict_of(const struct comparison *c, const char *metric, const char *variant)
{
	for (size_t i = 0; i < c->nverdicts; i++)
		if (streq(c->verdicts[i].metric, metric) && streq(c->verdicts[i].variant, variant))
			return &c->verdicts[i];
	return NULL;
}

static void json_row(struct json *j, const struct comparison *c, const struct cmp_row *row, size_t v)
{
	const struct cmp_delta *d = &row->d[v];
	const struct cmp_verdict *x = verdict_of(c, row->metric, c->rs->variants.v[v]);

	json_object_begin(j);
	json_kv_string(j, "metric", row->metric);
	json_kv_string(j, "variant", c->rs->variants.v[v]);
	json_key(j, "declared");
	json_bool(j, x != NULL);
	json_kv_string(j, "verdict", x ? verdict_name(x->v) : NULL);
	json_kv_string(j, "why", x ? x->why : NULL);
	json_key(j, "flagged");
	json_bool(j, d->flagged);
	json_kv_double(j, "p", d->have && d->e.tested ? d->e.p : NAN);
	json_kv_double(j, "q", d->q);
	json_key(j, "points"); /* the change and its interval are in points: the metric is a percentage */
	json_bool(j, d->e.points);
	json_kv_double(j, "change_pct", d->e.change);
	json_kv_double(j, "ci_low_pct", d->e.lo);
	json_kv_double(j, "ci_high_pct", d->e.hi);
	json_kv_uint(j, "boots", d->have ? d->e.boots[1] : 0);
	json_kv_uint(j, "runs", row->s[v].n);
	json_object_end(j);
}

static void format_json(const struct comparison *c, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "rows");
	json_array_begin(&j);
	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t r = 0; r < c->groups[g].nrows; r++)
			for (size_t v = 1; v < c->nvariants; v++)
				json_row(&j, c, &c->groups[g].rows[r], v);
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

/* The whole file: a regular one in a buffer of its size (a growing buffer holds up to twice the file at
 * lab judge's peak), anything else (a pipe) as it comes. */
static int read_text(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		if ((r = strbuf_read_file(&sb, path, RESULT_CSV_MAX_BYTES)) < 0)
			return r;
		*ret_len = sb.len;
		*ret = strbuf_detach(&sb, NULL);
		return 0;
	}
	if ((uint64_t)st.st_size > RESULT_CSV_MAX_BYTES)
		return -EFBIG;
	buf = xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*ret_len = n;
	*ret = TAKE_PTR(buf);
	return 0;
}

static int read_csv(const struct lab_ctx *ctx, const char *arg, const struct jopts *o, struct result_set **ret)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	const char *name = streq(arg, "-") ? "<stdin>" : arg;
	size_t len = 0;
	int r = read_text(streq(arg, "-") ? "/dev/stdin" : arg, &text, &len);

	if (r == -EFBIG) {
		cmd_error(ctx, "judge: %s: larger than %zu MiB, the most lab judge reads: split it", name,
			  RESULT_CSV_MAX_BYTES >> 20);
		return -1;
	}
	if (r < 0) {
		cmd_error(ctx, "judge: cannot read '%s': %s", name, strerror(-r));
		return -1;
	}
	if (result_csv_parse(text, len, name, o->base, ret, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

/* The decision parameters and the expectations from the options. */
static int configure(const struct lab_ctx *ctx, const struct jopts *o, struct result_set *rs)
{
	enum stat_method m;

	rs->decide = DECIDE_PARAMS_DEFAULT;
	if (parse_level(ctx, "--alpha", o->alpha, 0.5, &rs->decide.alpha) < 0 ||
	    parse_level(ctx, "--q", o->q, 1, &rs->decide.q) < 0)
		return -1;
	if (o->statistic && stat_method_from_name(o->statistic, &m) == 0)
		rs->decide.method = m;
	for (size_t i = 0; i < o->expect.n; i++)
		if (parse_expect(ctx, o->expect.v[i], rs) < 0)
			return -1;
	return 0;
}

int cmd_judge(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_(jopts_release) struct jopts o = { 0 };
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct report_opts ro = { 0 };
	int first = cmd_options_parse(ctx, "judge", NULL, OPTS_ANYWHERE, argc, argv, &o);
	bool failed = false;

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 1) {
		cmd_error(ctx, "judge: name one CSV file (- reads stdin) with the columns variant,boot,run,metric,value");
		return EXIT_USAGE;
	}
	if (read_csv(ctx, argv[first], &o, &rs) < 0 || configure(ctx, &o, rs) < 0 ||
	    read_fingerprints(ctx, &o, rs) < 0)
		return EXIT_USAGE;
	c = compare_build(rs);
	if (cmd_refuse_mixed(ctx, "judge", c, o.allow_mixed))
		return EXIT_USAGE;
	if (check_declared(ctx, c, rs->id) < 0)
		return EXIT_USAGE;
	for (size_t i = 0; i < c->nverdicts; i++)
		failed |= c->verdicts[i].v == VERDICT_REGRESSED || c->verdicts[i].v == VERDICT_CHANGED;
	ro.all = o.all;
	if (ctx->json)
		format_json(c, &out);
	else
		report_format_text(c, &ro, &out);
	cmd_write(&out);
	return failed ? EXIT_FAILED : EXIT_OK;
}
