/* SPDX-License-Identifier: MIT */
/*
 * lab host trust|check|facts HOST: bare-metal hosts of lab.yaml (ssh:).
 *   trust  ask the host for its keys and pin them (first contact is the
 *          user's decision, never silent)
 *   check  what lab needs there (ssh, kexec, perf, cgroup v2, disk) and
 *          how to fix what is missing; exit 1 when something is
 *   facts  its CPUs, NUMA nodes, release and boot id (lscpu, /sys)
 *   boot   kexec into a built kernel variant and check it came up
 *   restore  reboot into the host's own kernel
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "host/host.h"
#include "image/image.h"
#include "kernel/build.h"
#include "kernel/source.h"
#include "kernel/variant.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/units.h"
#include "util/table.h"
#include "vm/vm.h"
#include "util/dirs.h"
#include "util/banned.h"

struct hopts {
	const char *cmdline;  /* boot */
	uint64_t timeout_usec; /* boot, restore */
	const char *via_name; /* boot: kexec|grub */
	bool via_given;
	enum host_boot via;
};

const struct lab_option host_options[] = {
	OPT(struct hopts, via_name, OPT_CHOICE, 0, "via", "HOW", "kexec or grub (default: the host's boot:)",
	    .choices = "kexec|grub", .subs = "boot"),
	OPT(struct hopts, cmdline, OPT_STRING, 0, "cmdline", "ARGS", "the kernel command line (kexec)", .subs = "boot"),
	OPT(struct hopts, timeout_usec, OPT_DURATION, 0, "timeout", "DURATION",
	    "how long the host may take to come back (default 10m)", .min = 1, .subs = "boot restore"),
	{ 0 },
};

const char *const host_subs[] = { "trust", "check", "facts", "boot", "restore", NULL };

/* Common to the subcommands: options (those a subcommand takes), the spec, the host opened. */
static int open_host(struct lab_ctx *ctx, int argc, char **argv, const char *sub, struct spec **s, struct host *h,
		     struct hopts *o)
{
	int want = streq(sub, "boot") ? 2 : 1;
	_cleanup_free_ const char **names = NULL;
	_cleanup_free_ char *state = dirs_state(), *cache = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	int first = cmd_options_parse(ctx, "host", sub, OPTS_ANYWHERE, argc, argv, o);
	long i;

	if (first < 0)
		return first == -2 ? 1 : -1;
	if (o->via_name) {
		o->via_given = true;
		o->via = streq(o->via_name, "grub") ? HOST_BOOT_GRUB : HOST_BOOT_KEXEC;
	}
	if (argc - first != want) {
		cmd_error(ctx, want == 2 ? "host %s: name a host of lab.yaml and a kernel variant" : "host %s: name one host of lab.yaml", sub);
		return -1;
	}
	if (cmd_load_spec(ctx, ctx->file, s) < 0)
		return -1;
	names = xcalloc((*s)->nhosts + 1, sizeof(char *));
	for (size_t k = 0; k < (*s)->nhosts; k++)
		names[k] = (*s)->hosts[k].name;
	if ((i = cmd_lookup(ctx, "host", argv[first], names, (*s)->nhosts, (*s)->path)) < 0)
		return -1;
	if ((*s)->hosts[i].type == HOST_LIBVIRT && !streq(sub, "trust") && !streq(sub, "facts")) {
		cmd_error(ctx, "host '%s' is a libvirt host (uri:): lab host %s is for bare-metal hosts (ssh:); "
			  "trust and facts work for both", argv[first], sub);
		return -1;
	}
	cache = spec_cache_dir(*s);
	if (host_open(state, cache, &(*s)->hosts[i], h, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

static int host_trust_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_strbuf_ struct strbuf fp = STRBUF_INIT, out = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct host h = { 0 };
	int r = open_host(ctx, argc, argv, "trust", &s, &h, &(struct hopts){ 0 });

	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	r = host_trust(&h, &fp, &d);
	if (r < 0) {
		cmd_report_diags(ctx, &d);
		host_close(&h);
		return EXIT_FAILED;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, "host", h.spec->name);
		json_kv_string(&j, "known_hosts", h.known_hosts);
		json_kv_string(&j, "fingerprints", fp.buf ? fp.buf : "");
		json_object_end(&j);
		json_finish(&j);
	} else {
		strbuf_addf(&out, "pinned the keys of %s (%s port %u) in %s:\n%s", h.spec->name, h.t.host, h.t.port,
			    h.known_hosts, fp.buf ? fp.buf : "");
	}
	cmd_write(&out);
	host_close(&h);
	return EXIT_OK;
}

static int host_check_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	static const char *const cols[] = { "CHECK:check", "OK:ok", "FOUND:found", "FIX:fix", NULL };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_table_ struct table *t = table_new(cols);
	struct host_check *c = NULL;
	struct host h = { 0 };
	size_t n = 0;
	bool bad = false;
	int r = open_host(ctx, argc, argv, "check", &s, &h, &(struct hopts){ 0 });

	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	r = host_check(&h, &c, &n, &d);
	for (size_t i = 0; i < n; i++) {
		table_add_string(t, c[i].name);
		table_add_string(t, c[i].ok ? "yes" : "NO");
		table_add_string(t, c[i].detail);
		table_add_string(t, c[i].ok ? "" : c[i].fix);
		bad |= !c[i].ok;
	}
	cmd_write_table(ctx, t);
	if (r < 0 && !ctx->json)
		cmd_report_diags(ctx, &d);
	host_checks_free(c, n);
	host_close(&h);
	return bad || r < 0 ? EXIT_FAILED : EXIT_OK;
}

static int host_facts_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct host_facts f;
	struct host h = { 0 };
	int r = open_host(ctx, argc, argv, "facts", &s, &h, &(struct hopts){ 0 });

	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (host_facts(&h, &f, &d) < 0) {
		cmd_report_diags(ctx, &d);
		host_close(&h);
		return EXIT_FAILED;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, "host", h.spec->name);
		host_facts_format_json(&f, &j);
		json_object_end(&j);
		json_finish(&j);
	} else {
		strbuf_addf(&out, "host %s: %s@%s port %u\n", h.spec->name, h.t.user, h.t.host, h.t.port);
		host_facts_format_text(&f, &out);
	}
	cmd_write(&out);
	host_facts_release(&f);
	host_close(&h);
	return EXIT_OK;
}

static void boot_step(void *userdata, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: %s\n", what);
}

/* "box runs RELEASE", or {"host": ..., "release": ...} */
static void booted(const struct lab_ctx *ctx, const struct host *h, const char *release, const char *what)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, "host", h->spec->name);
		json_kv_string(&j, "release", release);
		json_object_end(&j);
		json_finish(&j);
	} else if (ctx->verbosity >= 0) {
		strbuf_addf(&out, "%s runs %s\n", h->spec->name, what);
	}
	cmd_write(&out);
}

static int host_boot_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	struct kvariant v = { 0 };
	struct kartifact a = { 0 };
	struct host h = { 0 };
	struct hopts ho = { 0 };
	int r = open_host(ctx, argc, argv, "boot", &s, &h, &ho), ret = EXIT_OK;
	struct host_boot_opts o = { .step = boot_step, .userdata = ctx, .cmdline = ho.cmdline,
				    .timeout_usec = ho.timeout_usec, .via_given = ho.via_given, .via = ho.via };

	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (ho.cmdline && (ho.via_given ? ho.via : h.spec->boot) == HOST_BOOT_GRUB) {
		cmd_error(ctx, "host boot: --cmdline goes with kexec; a GRUB entry takes GRUB_CMDLINE_LINUX "
			       "of the host's /etc/default/grub");
		host_close(&h);
		return EXIT_USAGE;
	}
	if (kvariant_resolve(s, argv[argc - 1], &v, &d) < 0) {
		cmd_report_diags(ctx, &d);
		host_close(&h);
		return EXIT_USAGE;
	}
	r = kernel_lookup(s, &v, &a, &d);
	if (r == -ENOENT) {
		cmd_error(ctx, "kernel '%s' is not built yet: lab kernel build %s", v.name, v.name);
		ret = EXIT_FAILED;
	} else if (r < 0 || host_boot(&h, &a, &o, &d) < 0) {
		cmd_report_diags(ctx, &d);
		ret = EXIT_FAILED;
	} else {
		booted(ctx, &h, a.release, a.release);
	}
	kartifact_release(&a);
	kvariant_release(&v);
	host_close(&h);
	return ret;
}

static int host_restore_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *release = NULL;
	struct host h = { 0 };
	struct hopts ho = { 0 };
	int r = open_host(ctx, argc, argv, "restore", &s, &h, &ho), ret = EXIT_OK;
	struct host_boot_opts o = { .step = boot_step, .userdata = ctx, .timeout_usec = ho.timeout_usec };

	if (r)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (host_restore(&h, &o, &release, &d) < 0) {
		cmd_report_diags(ctx, &d);
		ret = EXIT_FAILED;
	} else {
		booted(ctx, &h, release, "its own kernel again");
	}
	host_close(&h);
	return ret;
}

int cmd_host(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct subcommand subs[] = {
		{ "trust", host_trust_cmd },
		{ "check", host_check_cmd },
		{ "facts", host_facts_cmd },
		{ "boot", host_boot_cmd },
		{ "restore", host_restore_cmd },
	};

	return cmd_dispatch(ctx, "host", subs, ELEMENTSOF(subs), argc, argv);
}
