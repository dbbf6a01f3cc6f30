/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "image/recipe.h"
#include "result/compare.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/path.h"
#include "util/dirs.h"
#include "vm/machine.h"
#include "util/table.h"
#include "util/banned.h"

#ifndef LAB_DATADIR
#define LAB_DATADIR "/usr/local/share/lab"
#endif

void cmd_write(const struct strbuf *sb)
{
	fwrite(sb->buf, 1, sb->len, stdout);
	fflush(stdout);
}

void cmd_json_strings(const char *key, ...)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json j;
	va_list ap;

	json_init(&j, &sb, true);
	json_object_begin(&j);
	va_start(ap, key);
	for (const char *k = key; k; k = va_arg(ap, const char *))
		json_kv_string(&j, k, va_arg(ap, const char *));
	va_end(ap);
	json_object_end(&j);
	json_finish(&j);
	cmd_write(&sb);
}

static void json_error(const char *msg, const struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json j;

	json_init(&j, &sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "error", msg);
	if (d) {
		json_key(&j, "errors");
		json_array_begin(&j);
		for (size_t i = 0; i < d->n; i++) {
			json_object_begin(&j);
			json_kv_string(&j, "file", *d->v[i].file ? d->v[i].file : NULL);
			json_kv_uint(&j, "line", d->v[i].line);
			json_kv_uint(&j, "column", d->v[i].col);
			json_kv_string(&j, "message", d->v[i].msg);
			json_object_end(&j);
		}
		json_array_end(&j);
	}
	json_object_end(&j);
	json_finish(&j);
	cmd_write(&sb);
}

/* What bundle and fetch made: its path on a line, or {"KEY": path} with --json. */
void cmd_print_path(const struct lab_ctx *ctx, const char *key, const char *path)
{
	if (ctx->json)
		cmd_json_strings(key, path, NULL);
	else if (ctx->verbosity >= 0) {
		printf("%s\n", path);
		fflush(stdout);
	}
}

void cmd_write_table(const struct lab_ctx *ctx, const struct table *t)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (ctx->json)
		table_format_json(t, &out);
	else
		table_format_text(t, &out);
	cmd_write(&out);
}

void cmd_error(const struct lab_ctx *ctx, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (ctx && ctx->json) {
		json_error(msg, NULL);
	} else {
		/* errors quote run ids, names and remote output */
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "lab: ");
		term_escape_lines(&sb, msg);
		strbuf_addch(&sb, '\n');
		fwrite(sb.buf, 1, sb.len, stderr);
	}
}

void cmd_report_diags(const struct lab_ctx *ctx, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	diags_sort(d);
	if (ctx->json) {
		_cleanup_free_ char *msg = xasprintf("%zu error%s", d->n, d->n == 1 ? "" : "s");

		json_error(msg, d);
		return;
	}
	diags_format(d, &sb);
	fwrite(sb.buf, 1, sb.len, stderr);
}

void cmd_report_errors(const struct lab_ctx *ctx, struct diags *d)
{
	if (d->n == 1 && !*d->v[0].file)
		cmd_error(ctx, "%s", d->v[0].msg);
	else if (d->n)
		cmd_report_diags(ctx, d);
}

const struct cli_command *command_find(const char *name)
{
	for (size_t i = 0; i < ncommands; i++)
		if (streq(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int cmd_load_spec(const struct lab_ctx *ctx, const char *path, struct spec **ret)
{
	return cmd_load_spec_confined(ctx, path, NULL, ret);
}

int cmd_load_spec_confined(const struct lab_ctx *ctx, const char *path, const struct spec_confine *cf,
			   struct spec **ret)
{
	_cleanup_diags_ struct diags d = { 0 };
	int r;

	if (!path_is_file(path)) {
		if (ctx->file_given || !streq(path, "lab.yaml"))
			cmd_error(ctx, "cannot read '%s': %s", path, strerror(errno ? errno : ENOENT));
		else
			cmd_error(ctx, "no lab.yaml here (use -f FILE, -C DIR, or 'lab init' to create one)");
		return -ENOENT;
	}
	{
		const struct spec_load_opts o = { .set = (const char *const *)ctx->set.v, .nset = ctx->set.n,
						  .confine = cf };

		r = spec_load(path, &o, ret, &d);
	}
	if (r == 0 && ctx->kernels.n && spec_only_kernels(*ret, &ctx->kernels, &d) < 0) {
		spec_free(*ret);
		*ret = NULL;
		r = -EINVAL;
	}
	if (r == 0) {
		/* image recipes are files of their own; their errors count as the spec's */
		for (size_t i = 0; i < (*ret)->nimages; i++) {
			struct recipe *rc = NULL;

			if (recipe_load_confined((*ret)->images[i].recipe, (*ret)->images[i].name, cf, &rc, &d) == 0)
				recipe_free(rc);
		}
		if (d.n) {
			spec_free(*ret);
			*ret = NULL;
			r = -EINVAL;
		}
	}
	if (r < 0)
		cmd_report_diags(ctx, &d);
	return r;
}

long cmd_lookup(const struct lab_ctx *ctx, const char *what, const char *name, const char *const *names, size_t n,
		const char *file)
{
	const char *near;

	for (size_t i = 0; i < n; i++)
		if (streq(names[i], name))
			return (long)i;
	near = str_suggest(name, names, n);
	if (near)
		cmd_error(ctx, "no %s '%s' in %s; did you mean '%s'?", what, name, file, near);
	else
		cmd_error(ctx, "no %s '%s' in %s", what, name, file);
	return -1;
}

const struct spec_image *cmd_find_image(const struct lab_ctx *ctx, const struct spec *s, const char *name)
{
	_cleanup_free_ const char **names = xcalloc(s->nimages + 1, sizeof(char *));
	long i;

	for (size_t k = 0; k < s->nimages; k++)
		names[k] = s->images[k].name;
	i = cmd_lookup(ctx, "image", name, names, s->nimages, s->path);
	return i < 0 ? NULL : &s->images[i];
}

char *cmd_results_dir(const struct spec *s)
{
	return dirs_results(s ? s->settings.results : NULL, s ? s->dir : NULL);
}

char *cmd_results_root(const struct lab_ctx *ctx)
{
	struct spec *s = NULL;
	char *root;

	if (!ctx->file_given && !path_is_file(ctx->file))
		return cmd_results_dir(NULL);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return NULL;
	root = cmd_results_dir(s);
	spec_free(s);
	return root;
}

int cmd_exit_of(int r)
{
	switch (-r) {
	case ENOSPC:
	case EDQUOT:
	case EIO:
	case ENOMEM:
	case EROFS:
		return EXIT_FAILED;
	default:
		return EXIT_USAGE;
	}
}

char *cmd_stored_run(const struct lab_ctx *ctx, const char *noun, int nargs, char **args)
{
	_cleanup_free_ char *root = NULL;
	char *dir;

	if (nargs != 1) {
		cmd_error(ctx, "%s: name one stored run (lab ls lists them)", noun);
		return NULL;
	}
	if (!(root = cmd_results_root(ctx)))
		return NULL;
	if (!(dir = store_find(root, args[0])))
		cmd_error(ctx, "no stored run '%s' under %s (lab ls lists them)", args[0], root);
	return dir;
}

bool cmd_refuse_mixed(const struct lab_ctx *ctx, const char *noun, const struct comparison *c, bool allow)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t m = env_pairs_matter(c->env, c->nenv);

	if (!m || allow)
		return false;
	for (size_t i = 0; i < c->nenv; i++)
		if (c->env[i].nmatters) {
			strbuf_addstr(&sb, "\n  ");
			env_pair_describe(&c->env[i], &sb);
		}
	cmd_error(ctx, "%s: %s compares runs measured in environments that differ in what matters "
		  "(--allow-mixed compares them anyway and lists the differences):%s",
		  noun, c->rs->id, sb.buf);
	return true;
}

void cmd_stand_ins(const struct lab_ctx *ctx, const struct spec *s, int n, char **names, bool as_declared,
		   struct strv *ret)
{
	const char *why = NULL;
	bool asked = false, kvm = true;

	for (int i = 0; i < n; i++) {
		const struct spec_experiment *e = spec_find_experiment(s, names[i]);

		if (!e || !e->without_kvm.name || as_declared) {
			strv_push(ret, names[i]);
			continue;
		}
		if (!asked) {
			kvm = vm_kvm_usable(&why);
			asked = true;
		}
		if (kvm) {
			strv_push(ret, names[i]);
			continue;
		}
		strv_push(ret, e->without_kvm.name);
		if (ctx->verbosity >= 0)
			fprintf(stderr,
				"lab: %s: KVM does not work here (%s): running '%s' in its place, its stand-in "
				"without KVM (lab.yaml: without-kvm); --as-declared runs '%s' itself\n",
				e->name, why, e->without_kvm.name, e->name);
	}
}
