/* SPDX-License-Identifier: MIT */
/*
 * lab kernel build|check|config|list|show: kernel variants from lab.yaml.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "util/clock.h"
#include "kernel/build.h"
#include "kernel/kconfig.h"
#include "kernel/patch.h"
#include "kernel/source.h"
#include "kernel/variant.h"
#include "util/alloc.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/table.h"
#include "util/banned.h"

struct kopts {
	struct kbuild_opts build;
	const char *experiment;
};

static bool tty(const struct lab_ctx *ctx)
{
	return !ctx->json && ctx->verbosity >= 0 && isatty(STDERR_FILENO);
}

static void on_step(void *userdata, const char *variant, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity < 0)
		return;
	if (tty(ctx))
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "lab: %s: %s\n", variant, what);
}

/* A bar and "812/1948 objects, 3m10s, ETA 4m26s", rewritten in place. */
static void on_objects(void *userdata, const char *variant, size_t done, size_t expected)
{
	const struct lab_ctx *ctx = userdata;
	static double t0;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	(void)variant;
	if (done == 1)
		t0 = now_sec();
	if (!tty(ctx) || done % 10)
		return;
	if (expected && done <= expected) {
		size_t w = 40, fill = done * w / expected;

		strbuf_addch(&sb, '[');
		for (size_t i = 0; i < w; i++)
			strbuf_addch(&sb, i < fill ? '#' : '.');
		strbuf_addstr(&sb, "] ");
	}
	kbuild_format_progress(done, expected, now_sec() - t0, &sb);
	fprintf(stderr, "\r\033[K%s", sb.buf);
}

const struct lab_option kernel_options[] = {
	OPT(struct kopts, experiment, OPT_STRING, 'e', "experiment", "EXPERIMENT",
	    "the variants an experiment compares, its baseline first"),
	OPT(struct kopts, build.jobs, OPT_UINT, 'j', "jobs", "N", "parallel compile jobs", .min = 1, .max = 1024),
	OPT(struct kopts, build.force, OPT_FLAG, 0, "force", NULL, "build again what is cached"),
	{ 0 },
};

const char *const kernel_subs[] = { "build", "check", "config", "list", "show", NULL };

static int parse(struct lab_ctx *ctx, int argc, char **argv, struct kopts *o, const char *sub)
{
	return cmd_options_parse(ctx, "kernel", sub, OPTS_ANYWHERE, argc, argv, o);
}

/* The variants named on the command line, or those of -e EXPERIMENT. */
static int collect(struct lab_ctx *ctx, const struct spec *s, const struct kopts *o, int argc, char **argv, int i,
		   struct strv *ret)
{
	if (o->experiment) {
		const struct spec_experiment *e = spec_find_experiment(s, o->experiment);

		if (!e) {
			cmd_error(ctx, "no experiment '%s'", o->experiment);
			return -1;
		}
		spec_experiment_variants(s, e, ret);
	}
	for (; i < argc; i++)
		strv_push(ret, argv[i]);
	if (!ret->n) {
		cmd_error(ctx, "kernel: name variants or an experiment (-e EXPERIMENT)");
		return -1;
	}
	return 0;
}

/* A git source's commit, for lab kernel show: a repository's words,
 * escaped for the terminal. */
static void commit_line(const struct kartifact *a, struct strbuf *out)
{
	const char *commit = ksource_commit(a->source_identity);

	if (!commit)
		return;
	strbuf_addf(out, "commit:    %.12s ", commit);
	term_escape(out, a->subject ? a->subject : "");
	strbuf_addstr(out, " (");
	term_escape(out, a->author ? a->author : "?");
	strbuf_addstr(out, ")\n");
}

static void json_artifact(struct json *j, const struct kartifact *a)
{
	json_object_begin(j);
	json_kv_string(j, "variant", a->name);
	json_kv_string(j, "release", a->release);
	json_kv_string(j, "key", a->key);
	json_kv_string(j, "source", a->source_identity);
	if (ksource_commit(a->source_identity)) { /* a git source's commit */
		json_kv_string(j, "commit", ksource_commit(a->source_identity));
		json_kv_string(j, "subject", a->subject);
		json_kv_string(j, "author", a->author);
	}
	json_kv_string(j, "config_sha256", a->config_hash);
	json_kv_string(j, "compiler", a->compiler);
	json_kv_string(j, "dir", a->dir);
	json_kv_string(j, "bzImage", a->bzimage);
	json_kv_string(j, "config", a->config);
	json_kv_string(j, "system_map", a->system_map);
	json_kv_string(j, "log", a->log);
	json_key(j, "cached");
	json_bool(j, a->cached);
	json_key(j, "build_seconds");
	json_double(j, a->seconds);
	json_kv_uint(j, "compiled_objects", a->compiled);
	json_key(j, "patches");
	json_array_begin(j);
	for (size_t i = 0; i < a->patches.n; i++) {
		const char *sp = strchr(a->patches.v[i], ' ');
		_cleanup_free_ char *sha = xstrndup(a->patches.v[i], (size_t)(sp - a->patches.v[i]));

		json_object_begin(j);
		json_kv_string(j, "file", sp + 1);
		json_kv_string(j, "sha256", sha);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "require");
	json_array_begin(j);
	for (size_t i = 0; i < a->nchecks; i++) {
		json_object_begin(j);
		json_kv_string(j, "symbol", a->checks[i].req->symbol);
		json_kv_string(j, "want", a->checks[i].req->value);
		json_kv_string(j, "actual", a->checks[i].actual);
		json_key(j, "ok");
		json_bool(j, a->checks[i].ok);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "checked_objects");
	json_array_begin(j);
	for (size_t i = 0; i < a->checked.n; i++)
		json_string(j, a->checked.v[i]);
	json_array_end(j);
	json_object_end(j);
}

/* Variants compared in one experiment must differ only by their patches. */
static size_t print_config_diff(const struct lab_ctx *ctx, const struct kartifact *base, const struct kartifact *a,
				const struct kvariant *v)
{
	struct kconfig ka = { 0 }, kb = { 0 };
	_cleanup_strbuf_ struct strbuf diff = STRBUF_INIT;
	_cleanup_strv_ struct strv allowed = STRV_INIT;
	size_t n;

	if (kconfig_load(base->config, &ka) < 0 || kconfig_load(a->config, &kb) < 0) {
		kconfig_release(&ka);
		kconfig_release(&kb);
		return 0;
	}
	kernel_patch_symbols(&v->patches, &allowed);
	n = kconfig_diff(&ka, &kb, &allowed, &diff);
	if (n) /* stderr even with --json: stdout carries the artifacts */
		fprintf(stderr, "lab: configs of '%s' and '%s' differ in %zu symbols the patches do not define:\n%s",
			base->name, a->name, n, diff.buf);
	else if (!ctx->json && ctx->verbosity >= 0) {
			fprintf(stderr, "lab: configs of '%s' and '%s' are identical%s\n", base->name, a->name,
				allowed.n ? " apart from symbols the patches define" : "");
	}
	kconfig_release(&ka);
	kconfig_release(&kb);
	return n;
}

/* The table of what kernel build or check did. */
static void print_built(const struct kartifact *arts, size_t n, bool check)
{
	static const char *const cols[] = { "VARIANT:variant", "RELEASE:release", "SECONDS:seconds", "OBJECTS:objects",
					    "STATE:state", NULL };
	_cleanup_table_ struct table *t = table_new(cols);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	for (size_t k = 0; k < n; k++) {
		_cleanup_free_ char *secs = xasprintf("%.1f", arts[k].seconds);

		table_add_string(t, arts[k].name);
		table_add_string(t, arts[k].release);
		table_add_string(t, check ? "-" : secs);
		table_add_uint(t, check ? arts[k].checked.n : arts[k].compiled);
		table_add_string(t, check ? "compiled touched objects" : arts[k].cached ? "cached" : "built");
	}
	table_format_text(t, &out);
	cmd_write(&out);
}

/* kernel config's text: the fragments in merge order and every require result. */
static void config_text(const char *name, const struct kvariant *v, const struct kartifact *a, struct strbuf *text)
{
	strbuf_addf(text, "# %s: fragments, in merge order\n", name);
	for (size_t f = 0; f < v->configs.n; f++)
		strbuf_addf(text, "#   %s\n", v->configs.v[f]);
	for (size_t c = 0; c < a->nchecks; c++)
		strbuf_addf(text, "%s %s=%s (final: %s)\n", a->checks[c].ok ? "ok  " : "FAIL", a->checks[c].req->symbol,
			    a->checks[c].req->value, a->checks[c].actual);
	strbuf_addf(text, "# final .config: %s\n", a->config);
}

static int kernel_build_cmd(struct lab_ctx *ctx, int argc, char **argv, bool check, bool config)
{
	const char *sub = check ? "check" : config ? "config" : "build";
	struct kopts o = { 0 };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, text = STRBUF_INIT;
	struct kbuild_progress prog = { on_step, on_objects, ctx };
	struct kartifact *arts;
	struct kvariant *vars;
	size_t built = 0;
	struct json j;
	int i = parse(ctx, argc, argv, &o, sub), rc = EXIT_OK;

	if (i < 0)
		return cmd_options_exit(i);
	o.build.check_only = check;
	o.build.config_only = config;
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (collect(ctx, s, &o, argc, argv, i, &names) < 0)
		return EXIT_USAGE;
	arts = xcalloc(names.n, sizeof(*arts));
	vars = xcalloc(names.n, sizeof(*vars));
	json_init(&j, &out, true);
	json_array_begin(&j);
	for (size_t k = 0; k < names.n; k++) {
		_cleanup_diags_ struct diags d = { 0 };

		if (kvariant_resolve(s, names.v[k], &vars[k], &d) < 0 ||
		    kernel_build(s, &vars[k], &o.build, &prog, &arts[k], &d) < 0) {
			if (tty(ctx))
				fprintf(stderr, "\r\033[K");
			cmd_report_diags(ctx, &d);
			rc = EXIT_FAILED;
			break;
		}
		if (tty(ctx))
			fprintf(stderr, "\r\033[K");
		built++;
		if (config)
			config_text(names.v[k], &vars[k], &arts[k], &text);
		json_artifact(&j, &arts[k]);
	}
	json_array_end(&j);
	json_finish(&j);
	/* with -e the first variant is the experiment's baseline */
	if (built > 1 && o.experiment)
		for (size_t k = 1; k < built; k++)
			if (print_config_diff(ctx, &arts[0], &arts[k], &vars[k]))
				rc = EXIT_FAILED;
	if (ctx->json) {
		if (rc == EXIT_OK) /* on failure the error object is the output */
			cmd_write(&out);
	} else if (config) {
		cmd_write(&text);
	} else if (built) {
		print_built(arts, built, check);
	}
	for (size_t k = 0; k < names.n; k++) {
		kartifact_release(&arts[k]);
		kvariant_release(&vars[k]);
	}
	free(arts);
	free(vars);
	return rc;
}

static int kernel_list(struct lab_ctx *ctx, int argc, char **argv)
{
	static const char *const cols[] = { "VARIANT:variant", "SOURCE:source", "PATCHES:patches",
					    "FRAGMENTS:fragments", "RELEASE:release", NULL };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_table_ struct table *t = table_new(cols);
	struct kopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "list");

	if (i < 0)
		return cmd_options_exit(i);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	kvariant_names(s, &names);
	for (size_t k = 0; k < names.n; k++) {
		_cleanup_diags_ struct diags d = { 0 };
		struct kvariant v = { 0 };
		struct kartifact a = { 0 };

		if (kvariant_resolve(s, names.v[k], &v, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return EXIT_USAGE;
		}
		table_add_string(t, v.name);
		table_add_string(t, v.source ? v.source->name : NULL);
		table_add_uint(t, v.patches.n);
		table_add_uint(t, v.configs.n);
		if (kernel_lookup(s, &v, &a, &d) == 0)
			table_add_string(t, a.release);
		else
			table_add_null(t);
		kartifact_release(&a);
		kvariant_release(&v);
	}
	cmd_write_table(ctx, t);
	return EXIT_OK;
}

static int kernel_show(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct kopts o = { 0 };
	struct kvariant v = { 0 };
	struct kartifact a = { 0 };
	bool built;
	int i = parse(ctx, argc, argv, &o, "show");

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 1) {
		cmd_error(ctx, "kernel show: name one variant");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (kvariant_resolve(s, argv[i], &v, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	built = kernel_lookup(s, &v, &a, &d) == 0;
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		if (built) {
			json_artifact(&j, &a);
		} else {
			_cleanup_free_ char *key = NULL;
			_cleanup_diags_ struct diags kd = { 0 };

			json_object_begin(&j);
			json_kv_string(&j, "variant", v.name);
			json_key(&j, "built");
			json_bool(&j, false);
			if (kernel_key(s, &v, &key, &kd) == 0)
				json_kv_string(&j, "key", key);
			json_object_end(&j);
		}
		json_finish(&j);
	} else {
		strbuf_addf(&out, "variant:   %s\n", v.name);
		strbuf_addf(&out, "source:    %s", v.source ? v.source->name : "?");
		if (built)
			strbuf_addf(&out, " (%s)", a.source_identity);
		strbuf_addch(&out, '\n');
		if (built)
			commit_line(&a, &out);
		for (size_t k = 0; k < v.configs.n; k++)
			strbuf_addf(&out, "fragment:  %s\n", v.configs.v[k]);
		for (size_t k = 0; k < v.nrequire; k++)
			strbuf_addf(&out, "require:   %s=%s\n", v.require[k]->symbol, v.require[k]->value);
		for (size_t k = 0; k < v.patches.n; k++) {
			char hex[SHA256_HEX_LEN + 1] = "?";

			sha256_file(v.patches.v[k], hex);
			strbuf_addf(&out, "patch:     %.12s  %s\n", hex, v.patches.v[k]);
		}
		if (built) {
			strbuf_addf(&out, "release:   %s\n", a.release);
			strbuf_addf(&out, "config:    %s (sha256 %.12s)\n", a.config, a.config_hash ? a.config_hash : "?");
			strbuf_addf(&out, "bzImage:   %s\n", a.bzimage);
			strbuf_addf(&out, "System.map: %s\n", a.system_map);
			strbuf_addf(&out, "log:       %s\n", a.log);
			strbuf_addf(&out, "built in:  %.1f s with %s\n", a.seconds, a.compiler ? a.compiler : "?");
		} else {
			strbuf_addstr(&out, "state:     not built (lab kernel build ");
			strbuf_addstr(&out, v.name);
			strbuf_addstr(&out, ")\n");
		}
	}
	cmd_write(&out);
	kartifact_release(&a);
	kvariant_release(&v);
	return EXIT_OK;
}

static int kernel_build_sub(struct lab_ctx *ctx, int argc, char **argv)
{
	return kernel_build_cmd(ctx, argc, argv, false, false);
}

static int kernel_check_sub(struct lab_ctx *ctx, int argc, char **argv)
{
	return kernel_build_cmd(ctx, argc, argv, true, false);
}

static int kernel_config_sub(struct lab_ctx *ctx, int argc, char **argv)
{
	return kernel_build_cmd(ctx, argc, argv, false, true);
}

int cmd_kernel(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct subcommand subs[] = {
		{ "build", kernel_build_sub },
		{ "check", kernel_check_sub },
		{ "config", kernel_config_sub },
		{ "list", kernel_list },
		{ "show", kernel_show },
	};

	return cmd_dispatch(ctx, "kernel", subs, ELEMENTSOF(subs), argc, argv);
}
