/* SPDX-License-Identifier: MIT */
/*
 * lab image build|list|show|instance: guest images from recipes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "image/image.h"
#include "image/seed.h"
#include "kernel/build.h"
#include "kernel/source.h"
#include "kernel/variant.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/path.h"
#include "util/table.h"
#include "util/units.h"
#include "util/dirs.h"
#include "util/banned.h"

struct iopts {
	bool refresh;
	bool packages;
	const char *hostname;
	const char *experiment;
	const char *kernel;
};

static void on_step(void *userdata, const char *image, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: image %s: %s\n", image, what);
}

const struct lab_option image_options[] = {
	OPT(struct iopts, refresh, OPT_FLAG, 0, "refresh", NULL, "resolve the packages anew"),
	OPT(struct iopts, packages, OPT_FLAG, 0, "packages", NULL, "the image's package list"),
	OPT(struct iopts, hostname, OPT_STRING, 0, "hostname", "NAME", "the guest's host name"),
	OPT(struct iopts, experiment, OPT_STRING, 'e', "experiment", "EXPERIMENT",
	    "the experiment whose sysctls and cgroups the seed applies"),
	OPT(struct iopts, kernel, OPT_STRING, 'k', "kernel", "VARIANT", "add a disk with the variant's modules"),
	{ 0 },
};

const char *const image_subs[] = { "build", "list", "show", "instance", NULL };

static int parse(struct lab_ctx *ctx, int argc, char **argv, struct iopts *o, const char *sub)
{
	return cmd_options_parse(ctx, "image", sub, OPTS_ANYWHERE, argc, argv, o);
}

static void json_image(struct json *j, const struct image_artifact *a)
{
	json_object_begin(j);
	json_kv_string(j, "name", a->name);
	json_kv_string(j, "id", a->id);
	json_kv_string(j, "recipe_key", a->recipe_key);
	json_kv_string(j, "suite", a->suite);
	json_kv_string(j, "created", a->created);
	json_kv_string(j, "qcow2", a->qcow2);
	json_kv_string(j, "packages_file", a->packages);
	json_kv_string(j, "log", a->log);
	json_kv_uint(j, "packages", a->npackages);
	json_kv_uint(j, "disk_bytes", a->disk_bytes);
	json_kv_uint(j, "virtual_bytes", a->virtual_bytes);
	json_key(j, "build_seconds");
	json_double(j, a->seconds);
	json_key(j, "cached");
	json_bool(j, a->cached);
	json_key(j, "current");
	json_bool(j, a->current);
	json_object_end(j);
}

/* The name=version lines in sb as {"image", "packages_file", "packages": [...]}, in place. */
static void packages_json(const struct image_artifact *a, struct strbuf *sb)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	struct json j;

	strv_split(&lines, sb->buf ? sb->buf : "", '\n');
	strbuf_reset(sb);
	json_init(&j, sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "image", a->name);
	json_kv_string(&j, "packages_file", a->packages);
	json_key(&j, "packages");
	json_array_begin(&j);
	for (size_t i = 0; i < lines.n; i++)
		if (*lines.v[i])
			json_string(&j, lines.v[i]);
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static int image_build_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *layer = dirs_layer_dir();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct iopts o = { 0 };
	struct image_opts io = { 0 };
	struct image_progress p = { .step = on_step, .userdata = ctx };
	_cleanup_diags_ struct diags failed = { 0 };
	struct json j;
	int i = parse(ctx, argc, argv, &o, "build"), ret = EXIT_OK;
	size_t first;

	if (i < 0)
		return cmd_options_exit(i);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	first = (size_t)i;
	for (int k = i; k < argc; k++)
		if (!cmd_find_image(ctx, s, argv[k]))
			return EXIT_USAGE;
	io.layer = layer;
	io.refresh = o.refresh;
	if (ctx->json) {
		json_init(&j, &out, true);
		json_array_begin(&j);
	}
	for (size_t k = 0; k < (first < (size_t)argc ? (size_t)argc - first : s->nimages); k++) {
		/* the names given (checked above), or every image of lab.yaml */
		const struct spec_image *im = first < (size_t)argc ? cmd_find_image(ctx, s, argv[first + k]) : &s->images[k];
		_cleanup_diags_ struct diags d = { 0 };
		struct image_artifact a = { 0 };

		/* with --json every failure goes into one error object at the end */
		if (image_build(s, im, &io, &p, &a, ctx->json ? &failed : &d) < 0) {
			if (!ctx->json)
				cmd_report_diags(ctx, &d);
			ret = EXIT_FAILED;
			continue;
		}
		if (ctx->json) {
			json_image(&j, &a);
		} else {
			_cleanup_free_ char *sz = format_size(a.disk_bytes);

			printf("%s %.12s %s (%zu packages, %s%s)\n", a.name, a.id, a.qcow2, a.npackages, sz,
			       a.cached ? ", cached" : "");
			if (!a.cached && ctx->verbosity >= 0)
				fprintf(stderr, "lab: image %s: built in %.1f s\n", a.name, a.seconds);
		}
		image_artifact_release(&a);
	}
	if (ctx->json) {
		json_array_end(&j);
		json_finish(&j);
		if (ret == EXIT_OK)
			cmd_write(&out);
		else
			cmd_report_diags(ctx, &failed);
	}
	return ret;
}

static int image_list_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	static const char *const cols[] = { "IMAGE:name", "ID:id", "STATE:state", "PACKAGES:packages",
					    "DISK:disk_bytes", "CREATED:created", NULL };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *cache = NULL, *layer = dirs_layer_dir();
	_cleanup_table_ struct table *t = table_new(cols);
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strv_ struct strv current = STRV_INIT;
	struct image_artifact *v = NULL;
	struct image_opts io = { .layer = layer };
	struct iopts o = { 0 };
	size_t n = 0;
	int i = parse(ctx, argc, argv, &o, "list");

	if (i < 0)
		return cmd_options_exit(i);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	cache = spec_cache_dir(s);
	/* what each recipe, as it is now, was built into */
	for (size_t k = 0; k < s->nimages; k++) {
		_cleanup_diags_ struct diags dd = { 0 };
		struct image_artifact a = { 0 };

		if (image_lookup(s, &s->images[k], &io, &a, &dd) == 0)
			strv_push(&current, a.id);
		image_artifact_release(&a);
	}
	if (image_list(cache, &v, &n, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	for (size_t k = 0; k < n; k++) {
		table_add_string(t, v[k].name);
		{
			_cleanup_free_ char *id = xasprintf("%.12s", v[k].id);

			table_add_string(t, id);
		}
		table_add_string(t, strv_contains(&current, v[k].id) ? "current" : "old");
		table_add_uint(t, v[k].npackages);
		if (ctx->json) {
			table_add_uint(t, v[k].disk_bytes);
		} else {
			_cleanup_free_ char *sz = format_size(v[k].disk_bytes);

			table_add_string(t, sz);
		}
		table_add_string(t, v[k].created);
	}
	for (size_t k = 0; k < s->nimages; k++) {
		bool built = false;

		for (size_t m = 0; m < n && !built; m++)
			built = streq(v[m].name, s->images[k].name) && strv_contains(&current, v[m].id);
		if (built)
			continue;
		table_add_string(t, s->images[k].name);
		table_add_null(t);
		table_add_string(t, "not built");
		table_add_null(t);
		table_add_null(t);
		table_add_null(t);
	}
	image_artifacts_free(v, n);
	cmd_write_table(ctx, t);
	return EXIT_OK;
}

static int image_show_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *layer = dirs_layer_dir();
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const struct spec_image *im;
	struct image_opts io = { .layer = layer };
	struct image_artifact a = { 0 };
	struct iopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "show"), r;

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 1) {
		cmd_error(ctx, "image show: name one image");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (!(im = cmd_find_image(ctx, s, argv[i])))
		return EXIT_USAGE;
	r = image_lookup(s, im, &io, &a, &d);
	if (r < 0 && r != -ENOENT) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	if (r == -ENOENT) {
		cmd_error(ctx, "image '%s' is not built for its recipe as it is now (lab image build %s)", im->name,
			  im->name);
		return EXIT_FAILED;
	}
	if (o.packages) {
		if (strbuf_read_file(&out, a.packages, 64 << 20) < 0) {
			cmd_error(ctx, "cannot read '%s'", a.packages);
			image_artifact_release(&a);
			return EXIT_FAILED;
		}
		if (ctx->json)
			packages_json(&a, &out);
	} else if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_image(&j, &a);
		json_finish(&j);
	} else {
		_cleanup_free_ char *disk = format_size(a.disk_bytes), *virt = format_size(a.virtual_bytes);

		strbuf_addf(&out, "image:     %s\n", a.name);
		strbuf_addf(&out, "id:        %s\n", a.id);
		strbuf_addf(&out, "recipe:    %s (key %.12s)\n", im->recipe, a.recipe_key);
		strbuf_addf(&out, "suite:     %s\n", a.suite ? a.suite : "?");
		strbuf_addf(&out, "qcow2:     %s (%s, file system %s)\n", a.qcow2, disk, virt);
		strbuf_addf(&out, "packages:  %zu in %s\n", a.npackages, a.packages);
		strbuf_addf(&out, "log:       %s\n", a.log);
		strbuf_addf(&out, "built:     %s in %.1f s\n", a.created ? a.created : "?", a.seconds);
	}
	cmd_write(&out);
	image_artifact_release(&a);
	return EXIT_OK;
}

static int kernel_dir(const struct lab_ctx *ctx, const struct spec *s, const char *name, char **ret)
{
	_cleanup_diags_ struct diags d = { 0 };
	struct kvariant v = { 0 };
	struct kartifact a = { 0 };
	int r = kvariant_resolve(s, name, &v, &d);

	if (r == 0)
		r = kernel_lookup(s, &v, &a, &d);
	if (r == -ENOENT)
		cmd_error(ctx, "kernel '%s' is not built (lab kernel build %s)", name, name);
	else if (r < 0)
		cmd_report_diags(ctx, &d);
	else
		*ret = xstrdup(a.dir);
	kartifact_release(&a);
	kvariant_release(&v);
	return r;
}

/* What image instance made, for a person or as JSON. */
static void print_instance(const struct lab_ctx *ctx, const struct image_artifact *a, const struct instance *in,
			   struct strbuf *out)
{
	if (ctx->json) {
		struct json j;

		json_init(&j, out, true);
		json_object_begin(&j);
		json_kv_string(&j, "image", a->name);
		json_kv_string(&j, "image_id", a->id);
		json_kv_string(&j, "disk", in->disk);
		json_kv_string(&j, "seed", in->seed);
		json_key(&j, "modules");
		if (in->modules)
			json_string(&j, in->modules);
		else
			json_null(&j);
		json_kv_string(&j, "identity", in->identity);
		json_kv_string(&j, "known_hosts", in->known_hosts);
		json_kv_string(&j, "host_key_alias", in->host_alias);
		json_object_end(&j);
		json_finish(&j);
	} else {
		strbuf_addf(out, "disk:        %s (overlay on %s)\n", in->disk, a->qcow2);
		strbuf_addf(out, "seed:        %s\n", in->seed);
		if (in->modules)
			strbuf_addf(out, "modules:     %s\n", in->modules);
		strbuf_addf(out, "identity:    %s\n", in->identity);
		strbuf_addf(out, "known_hosts: %s\n", in->known_hosts);
		strbuf_addf(out, "ssh:         ssh -i %s -o UserKnownHostsFile=%s -o HostKeyAlias=%s "
				  "-o StrictHostKeyChecking=yes -p PORT root@127.0.0.1\n",
			    in->identity, in->known_hosts, in->host_alias);
		strbuf_addstr(out, "boot with:   -kernel bzImage -append \"root=/dev/vda rw net.ifnames=0 console=ttyS0\", the disk first, the seed second\n");
	}
}

static int image_instance_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *layer = dirs_layer_dir(), *cache = NULL, *kdir = NULL, *dir = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_strv_ struct strv cgroups = STRV_INIT;
	const struct spec_image *im;
	const struct spec_experiment *e = NULL;
	struct image_opts io = { .layer = layer };
	struct image_artifact a = { 0 };
	struct instance in = { 0 };
	struct instance_opts ino = { 0 };
	struct iopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "instance"), r;

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 2) {
		cmd_error(ctx, "image instance: name an image and a folder");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (!(im = cmd_find_image(ctx, s, argv[i])))
		return EXIT_USAGE;
	if (o.experiment && !(e = spec_find_experiment(s, o.experiment))) {
		cmd_error(ctx, "no experiment '%s' in %s", o.experiment, s->path);
		return EXIT_USAGE;
	}
	if (o.kernel && kernel_dir(ctx, s, o.kernel, &kdir) < 0)
		return EXIT_FAILED;
	r = image_lookup(s, im, &io, &a, &d);
	if (r == -ENOENT) {
		cmd_error(ctx, "image '%s' is not built (lab image build %s)", im->name, im->name);
		return EXIT_FAILED;
	}
	if (r < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	cache = spec_cache_dir(s);
	dir = xstrdup(argv[i + 1]);
	ino.hostname = o.hostname ? o.hostname : im->name;
	if (e) {
		ino.sysctl = e->sysctl;
		ino.nsysctl = e->nsysctl;
		seed_experiment_cgroups(e, &cgroups);
		ino.cgroups = &cgroups;
	}
	ino.kernel_dir = kdir;
	if (image_instance_create(cache, &a, dir, &ino, &in, &d) < 0) {
		cmd_report_diags(ctx, &d);
		image_artifact_release(&a);
		return EXIT_FAILED;
	}
	print_instance(ctx, &a, &in, &out);
	cmd_write(&out);
	instance_release(&in);
	image_artifact_release(&a);
	return EXIT_OK;
}

int cmd_image(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct subcommand subs[] = {
		{ "build", image_build_cmd },
		{ "list", image_list_cmd },
		{ "show", image_show_cmd },
		{ "instance", image_instance_cmd },
	};

	return cmd_dispatch(ctx, "image", subs, ELEMENTSOF(subs), argc, argv);
}
