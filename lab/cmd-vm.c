/* SPDX-License-Identifier: MIT */
/*
 * lab vm xml|up|ssh|console|down|ls: one VM on a topology, by hand.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "host/host.h"
#include "image/image.h"
#include "kernel/build.h"
#include "kernel/source.h"
#include "kernel/variant.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/path.h"
#include "util/table.h"
#include "util/units.h"
#include "vm/domain.h"
#include "vm/vm.h"
#include "util/dirs.h"
#include "util/banned.h"

#define MAX_HOST_NODES_OPT 16

struct vopts {
	const char *kernel;
	const char *image;
	const char *name;
	const char *experiment;
	const char *accel;
	const char *host;
	const char *cmdline;
	const char *host_cpus;
	const char *cpuset;
	struct strv host_nodes;
	unsigned port;
	uint64_t timeout_usec;
	bool follow;
	bool all;
	bool reboot_restarts;
	bool insn;
};

const struct lab_option vm_options[] = {
	OPT(struct vopts, kernel, OPT_STRING, 'k', "kernel", "VARIANT", "the built kernel variant to boot"),
	OPT(struct vopts, image, OPT_STRING, 'i', "image", "NAME", "the guest image (default minimal)"),
	OPT(struct vopts, name, OPT_STRING, 'n', "name", "NAME", "the VM's name (default: the topology's)"),
	OPT(struct vopts, experiment, OPT_STRING, 'e', "experiment", "EXPERIMENT", "apply the experiment's sysctls and cgroups"),
	OPT(struct vopts, accel, OPT_CHOICE, 0, "accel", "ACCEL", "kvm or tcg (default: kvm when it works)",
	    .choices = "kvm|tcg"),
	OPT(struct vopts, cmdline, OPT_STRING, 0, "cmdline", "ARGS", "more kernel command line"),
	OPT(struct vopts, host, OPT_STRING, 0, "host", "HOST", "a libvirt host of lab.yaml (default local)"),
	OPT(struct vopts, host_cpus, OPT_STRING, 0, "host-cpus", "LIST", "the host CPUs to place the guest on"),
	OPT(struct vopts, host_nodes, OPT_LIST, 0, "host-node", "LIST", "a host NUMA node's CPUs; repeat per node",
	    .max = MAX_HOST_NODES_OPT),
	OPT(struct vopts, cpuset, OPT_CPULIST, 0, "cpuset", "LIST", "pin every vCPU and QEMU thread inside these host CPUs"),
	OPT(struct vopts, reboot_restarts, OPT_FLAG, 0, "reboot-restarts", NULL,
	    "a guest reboot restarts the VM into the same kernel"),
	OPT(struct vopts, insn, OPT_FLAG, 0, "insn", NULL,
	    "QEMU counts guest instructions (the insn monitor's TCG plugin; TCG only)", .subs = "xml up"),
	OPT(struct vopts, port, OPT_UINT, 0, "port", "PORT", "the host port forwarded to the guest's ssh", .min = 1,
	    .max = 65535),
	OPT(struct vopts, timeout_usec, OPT_DURATION, 0, "timeout", "DURATION", "how long the boot may take"),
	OPT(struct vopts, follow, OPT_FLAG, 'f', "follow", NULL, "keep printing the console"),
	OPT(struct vopts, all, OPT_FLAG, 'a', "all", NULL, "every VM"),
	{ 0 },
};

const char *const vm_subs[] = { "xml", "up", "ssh", "cp", "console", "reset", "down", "ls", NULL };

static void vopts_release(struct vopts *o)
{
	strv_release(&o->host_nodes);
}

static int parse(struct lab_ctx *ctx, int argc, char **argv, struct vopts *o, const char *sub)
{
	/* options anywhere, but `vm ssh NAME CMD...` passes CMD's options through */
	return cmd_options_parse(ctx, "vm", sub, streq(sub, "ssh") ? OPTS_FIRST : OPTS_ANYWHERE, argc, argv, o);
}

static const struct spec_topology *topology(const struct lab_ctx *ctx, const struct spec *s, const char *name)
{
	_cleanup_free_ const char **names = xcalloc(s->ntopologies + 1, sizeof(char *));
	long i;

	for (size_t k = 0; k < s->ntopologies; k++)
		names[k] = s->topologies[k].name;
	i = cmd_lookup(ctx, "topology", name, names, s->ntopologies, s->path);
	return i < 0 ? NULL : &s->topologies[i];
}

/*
 * The libvirt URI of --host: NULL for the embedded driver (the implicit
 * `local`, or a host whose uri is qemu:///embed); a local daemon's URI
 * (qemu:///system, qemu:///session) as given. -1 after an error.
 */
static int host_uri(const struct lab_ctx *ctx, const struct spec *s, const char *name, const char **ret,
		    const struct spec_host **ret_remote)
{
	*ret = NULL;
	*ret_remote = NULL;
	if (!name || streq(name, "local")) {
		for (size_t i = 0; name && i < s->nhosts; i++)
			if (streq(s->hosts[i].name, name) && s->hosts[i].uri &&
			    !str_startswith(s->hosts[i].uri, "qemu:///embed"))
				*ret = s->hosts[i].uri;
		return 0;
	}
	for (size_t i = 0; i < s->nhosts; i++) {
		const struct spec_host *h = &s->hosts[i];

		if (!streq(h->name, name))
			continue;
		if (h->type != HOST_LIBVIRT) {
			cmd_error(ctx, "host '%s' is bare metal (ssh): lab vm boots libvirt hosts", name);
			return -1;
		}
		if (h->address)
			*ret_remote = h; /* qemu+ssh://: kernel and disks are copied there */
		if (h->uri && !str_startswith(h->uri, "qemu:///embed"))
			*ret = h->uri;
		return 0;
	}
	cmd_error(ctx, "no host '%s' in %s", name, s->path);
	return -1;
}

/* The variant's built artifact; 1 when not built (a is empty). */
static int lookup_kernel(const struct lab_ctx *ctx, const struct spec *s, const char *name, struct kvariant *v,
			 struct kartifact *a)
{
	_cleanup_diags_ struct diags d = { 0 };
	int r = kvariant_resolve(s, name, v, &d);

	if (r < 0) {
		cmd_report_diags(ctx, &d);
		return r;
	}
	r = kernel_lookup(s, v, a, &d);
	if (r == -ENOENT)
		return 1;
	if (r < 0)
		cmd_report_diags(ctx, &d);
	return r;
}

/* The host placement vm xml shows: as --host-cpus and --host-node give it, else as probed. */
static void xml_host(const struct vopts *o, struct domain_host *host, char **hoststore)
{
	if (!o->host_cpus && !o->host_nodes.n) {
		vm_probe_host(host, hoststore);
		return;
	}
	memset(host, 0, sizeof(*host));
	host->cpus = o->host_cpus;
	host->ncpus = 1;
	host->nnodes = (unsigned)o->host_nodes.n;
	for (size_t k = 0; k < o->host_nodes.n; k++)
		host->node_cpus[k] = o->host_nodes.v[k];
}

/* the kernel vm xml names: the built one, where an unbuilt one will be, or a placeholder without --kernel */
static int xml_kernel(const struct lab_ctx *ctx, const struct spec *s, const char *kernel, struct kvariant *v,
		      struct kartifact *a, char **ret_path, char **ret_cmdline)
{
	if (kernel) {
		int r = lookup_kernel(ctx, s, kernel, v, a);

		if (r < 0)
			return r;
		*ret_path = r == 0 ? xstrdup(a->bzimage) : xasprintf("/unbuilt/kernels/%s/bzImage", kernel);
		*ret_cmdline = domain_cmdline(v->cmdline);
	} else {
		*ret_path = xstrdup("/unbuilt/kernels/KERNEL/bzImage");
		*ret_cmdline = domain_cmdline(NULL);
	}
	return 0;
}

/* The domain of VM name on t, printed as vm xml shows it; EXIT_OK or EXIT_USAGE after the error was said. */
static int xml_print(const struct lab_ctx *ctx, const struct vopts *o, const struct spec_topology *t, const char *name,
		     const char *state, const struct domain_host *host, const char *kpath, const char *cmdline,
		     const char *release)
{
	_cleanup_free_ char *disk = NULL, *seed = NULL, *console = NULL, *dname = NULL, *plugin = NULL, *sock = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct domain_config dc;

	{
		_cleanup_free_ char *vdir = dirs_vm(state, name);

		disk = path_join(vdir, "disk.qcow2");
		seed = path_join(vdir, "seed.iso");
		console = path_join(vdir, "console.log");
		sock = path_join(vdir, VM_INSN_SOCKET);
	}
	if (o->insn && o->accel && streq(o->accel, "kvm")) {
		cmd_error(ctx, "vm xml: --insn loads a TCG plugin: not with --accel kvm");
		return EXIT_USAGE;
	}
	if (o->insn && !(plugin = dirs_insn_plugin()))
		plugin = xstrdup("/unbuilt/lib/" DIRS_INSN_PLUGIN_NAME);
	dname = xasprintf("lab-%s", name);
	dc = (struct domain_config){
		.name = dname,
		.topo = t,
		.accel = o->accel ? (streq(o->accel, "kvm") ? ACCEL_KVM : ACCEL_TCG)
				  : (vm_kvm_available() && !o->insn ? ACCEL_KVM : ACCEL_TCG),
		.host = host,
		.kernel = kpath,
		.cmdline = cmdline,
		.disk = disk,
		.seed = seed,
		.console = console,
		.ssh_port = o->port ? o->port : 2222,
		.vm = name,
		.owner = state,
		.variant = o->kernel,
		.release = release,
		.image = o->image,
		.cpuset = o->cpuset,
		.reboot_restarts = o->reboot_restarts,
		.insn_plugin = plugin,
		.insn_socket = sock,
	};
	if (vm_accel_check(t, dc.accel == ACCEL_KVM, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	domain_format_xml(&dc, &out);
	if (ctx->json)
		cmd_json_strings("name", name, "domain", dname, "xml", out.buf, NULL);
	else
		cmd_write(&out);
	return EXIT_OK;
}

static int vm_xml(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *hoststore = NULL, *cmdline = NULL, *kpath = NULL, *state = dirs_state();
	_cleanup_diags_ struct diags d = { 0 };
	const struct spec_topology *t;
	struct domain_host host;
	struct kvariant v = { 0 };
	struct kartifact a = { 0 };
	_cleanup_(vopts_release) struct vopts o = { 0 };
	const char *name;
	int i = parse(ctx, argc, argv, &o, "xml");

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 1) {
		cmd_error(ctx, "vm xml: name one topology");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (!(t = topology(ctx, s, argv[i])))
		return EXIT_USAGE;
	if (o.image && !cmd_find_image(ctx, s, o.image))
		return EXIT_USAGE;
	name = o.name ? o.name : t->name;
	if (vm_name_check(name, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	if (xml_kernel(ctx, s, o.kernel, &v, &a, &kpath, &cmdline) < 0)
		return EXIT_USAGE;
	xml_host(&o, &host, &hoststore);
	if (xml_print(ctx, &o, t, name, state, &host, kpath, cmdline, a.release) != EXIT_OK)
		return EXIT_USAGE;
	kartifact_release(&a);
	kvariant_release(&v);
	return EXIT_OK;
}

static void on_step(void *userdata, const char *vm, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: vm %s: %s\n", vm, what);
}

static void print_vm(const struct lab_ctx *ctx, const struct vm *v, struct strbuf *out)
{
	if (ctx->json) {
		struct json j;

		json_init(&j, out, true);
		vm_format_json(v, &j);
		json_finish(&j);
		return;
	}
	strbuf_addf(out, "%s: %s on %s, image %s, ready after %.1f s%s%s\n", v->name, v->variant ? v->variant : "?",
		    v->topology, v->image, v->boot_seconds, v->host_name ? ", on host " : "",
		    v->host_name ? v->host_name : "");
	if (v->host_name)
		/* the forwarded port is on the other host's loopback */
		strbuf_addf(out, "  lab vm ssh %s            # through %s@%s port %u, port %u on its loopback\n",
			    v->name, v->via_user, v->via_host, v->via_port, v->port);
	else
		strbuf_addf(out, "  lab vm ssh %s            # or: ssh -i %s -o UserKnownHostsFile=%s -o HostKeyAlias=%s "
				 "-o StrictHostKeyChecking=yes -p %u root@127.0.0.1\n",
			    v->name, v->identity, v->known_hosts, v->alias, v->port);
	strbuf_addf(out, "  lab vm console %s        # %s\n", v->name, v->console);
	strbuf_addf(out, "  lab vm down %s\n", v->name);
}

/* What vm up boots: the built kernel and image; an exit code (the artifacts filled on EXIT_OK only). */
static int up_artifacts(struct lab_ctx *ctx, const struct spec *s, const struct vopts *o, struct image_opts *io,
			struct kvariant *kv, struct kartifact *ka, struct image_artifact *ia)
{
	_cleanup_diags_ struct diags d = { 0 };
	const struct spec_image *im = cmd_find_image(ctx, s, o->image ? o->image : "minimal");
	int r;

	if (!im)
		return EXIT_USAGE;
	r = lookup_kernel(ctx, s, o->kernel, kv, ka);
	if (r < 0)
		return EXIT_USAGE;
	if (r == 1) {
		cmd_error(ctx, "kernel '%s' is not built (lab kernel build %s)", o->kernel, o->kernel);
		kvariant_release(kv);
		return EXIT_FAILED;
	}
	r = image_lookup(s, im, io, ia, &d);
	if (r == -ENOENT)
		cmd_error(ctx, "image '%s' is not built (lab image build %s)", im->name, im->name);
	else if (r < 0)
		cmd_report_diags(ctx, &d);
	if (r < 0) {
		kartifact_release(ka);
		kvariant_release(kv);
		return r == -ENOENT ? EXIT_FAILED : EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Boot through vo (on the remote host rh when there is one); print the VM. */
static int up_boot(struct lab_ctx *ctx, const char *state, const struct spec_host *rh, struct vm_opts *vo)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct host remote = { 0 };
	struct vm v = { 0 };
	int r;

	if (rh) {
		if (host_open(state, vo->cache, rh, &remote, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return EXIT_USAGE;
		}
		vo->remote = &remote;
	}
	r = vm_up(state, vo, &v, &d);
	if (rh)
		host_close(&remote);
	if (r < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	print_vm(ctx, &v, &out);
	cmd_write(&out);
	vm_release(&v);
	return EXIT_OK;
}

static int vm_up_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *state = dirs_state(), *cache = NULL, *layer = dirs_layer_dir(), *extra = NULL;
	_cleanup_free_ char *plugin = NULL;
	const struct spec_topology *t;
	const struct spec_experiment *e = NULL;
	struct kvariant kv = { 0 };
	struct kartifact ka = { 0 };
	struct image_artifact ia = { 0 };
	struct image_opts io = { .layer = layer };
	struct vm_progress p = { .step = on_step, .userdata = ctx };
	struct vm_opts vo;
	_cleanup_(vopts_release) struct vopts o = { 0 };
	const char *uri = NULL;
	const struct spec_host *rh = NULL;
	int i = parse(ctx, argc, argv, &o, "up"), ret;

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 1 || !o.kernel) {
		cmd_error(ctx, "vm up: name a topology and --kernel VARIANT");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (!(t = topology(ctx, s, argv[i])))
		return EXIT_USAGE;
	if (o.experiment && !(e = spec_find_experiment(s, o.experiment))) {
		cmd_error(ctx, "no experiment '%s' in %s", o.experiment, s->path);
		return EXIT_USAGE;
	}
	if (host_uri(ctx, s, o.host, &uri, &rh) < 0)
		return EXIT_USAGE;
	if ((o.insn || (e && spec_experiment_host_source(s, e, CATALOGUE_HOST_INSN_PLUGIN))) &&
	    !(plugin = dirs_insn_plugin())) {
		cmd_error(ctx, "vm up: the insn monitor needs lab's QEMU plugin " DIRS_INSN_PLUGIN_NAME
			       " (make builds it; LAB_INSN_PLUGIN names another)");
		return EXIT_FAILED;
	}
	if ((ret = up_artifacts(ctx, s, &o, &io, &kv, &ka, &ia)) != EXIT_OK)
		return ret;
	cache = spec_cache_dir(s);
	extra = kv.cmdline && o.cmdline ? xasprintf("%s %s", kv.cmdline, o.cmdline)
					: xstrdup(kv.cmdline ? kv.cmdline : o.cmdline ? o.cmdline : "");
	vo = (struct vm_opts){
		.name = o.name,
		.uri = uri,
		.topo = t,
		.variant = kv.name,
		.kernel = &ka,
		.image = &ia,
		.cache = cache,
		.experiment = e,
		.cmdline = extra,
		.timeout_usec = o.timeout_usec,
		.accel = o.accel ? (streq(o.accel, "kvm") ? ACCEL_KVM : ACCEL_TCG) : -1,
		.cpuset = o.cpuset,
		.reboot_restarts = o.reboot_restarts,
		.insn_plugin = plugin,
		.progress = &p,
	};
	ret = up_boot(ctx, state, rh, &vo);
	image_artifact_release(&ia);
	kartifact_release(&ka);
	kvariant_release(&kv);
	return ret;
}

static int load(struct lab_ctx *ctx, const char *name, struct vm *v)
{
	_cleanup_free_ char *state = dirs_state();
	_cleanup_diags_ struct diags d = { 0 };

	if (vm_load(state, name, v, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	if (!vm_alive(v)) {
		cmd_error(ctx, "VM '%s' is not running (lab vm down %s removes what is left)", name, name);
		vm_release(v);
		return -1;
	}
	return 0;
}

static int vm_ssh_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_command_ struct command c = { 0 };
	struct ssh_target t;
	struct vm v = { 0 };
	_cleanup_(vopts_release) struct vopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "ssh"), r;

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i < 1) {
		cmd_error(ctx, "vm ssh: name a VM");
		return EXIT_USAGE;
	}
	if (load(ctx, argv[i], &v) < 0)
		return EXIT_FAILED;
	vm_ssh_target(&v, &t);
	ssh_command(&c, &t, argc - i == 1 && isatty(STDIN_FILENO));
	if (argc - i > 1)
		ssh_remote_argv(&c, argv + i + 1, (size_t)(argc - i - 1));
	vm_release(&v);
	r = command_exec(&c);
	cmd_error(ctx, "vm ssh: cannot run ssh: %s", strerror(-r));
	return EXIT_FAILED;
}

/* lab vm cp NAME SRC DST: a guest path is written ":path" */
static int vm_cp_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf log = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct ssh_target t;
	struct vm v = { 0 };
	_cleanup_(vopts_release) struct vopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "cp"), r;

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 3 || (argv[i + 1][0] == ':') == (argv[i + 2][0] == ':')) {
		cmd_error(ctx, "vm cp: name a VM, a source and a destination, one of them in the guest (:path)");
		return EXIT_USAGE;
	}
	if (load(ctx, argv[i], &v) < 0)
		return EXIT_FAILED;
	vm_ssh_target(&v, &t);
	scp_command(&c, &t, argv[i + 1], argv[i + 2]);
	r = command_run_logged(&c, &log, &d, NULL, "scp");
	vm_release(&v);
	if (r < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	if (ctx->json)
		cmd_json_strings("vm", argv[i], "source", argv[i + 1], "destination", argv[i + 2], NULL);
	return EXIT_OK;
}

static int vm_console_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *state = dirs_state();
	_cleanup_diags_ struct diags d = { 0 };
	struct vm v = { 0 };
	_cleanup_(vopts_release) struct vopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "console");
	FILE *f;
	char buf[8192];
	size_t n;

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 1) {
		cmd_error(ctx, "vm console: name a VM");
		return EXIT_USAGE;
	}
	if (vm_load(state, argv[i], &v, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	if (!(f = fopen(v.console, "r"))) {
		cmd_error(ctx, "cannot read '%s'", v.console);
		vm_release(&v);
		return EXIT_FAILED;
	}
	if (ctx->json) {
		/* the console so far, as a record; --follow is for a terminal */
		_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;

		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			strbuf_add(&text, buf, n);
		cmd_json_strings("vm", v.name, "console", v.console, "text", text.buf ? text.buf : "", NULL);
		fclose(f);
		vm_release(&v);
		return EXIT_OK;
	}
	for (;;) {
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, stdout);
		fflush(stdout);
		if (!o.follow || !vm_alive(&v))
			break;
		clearerr(f);
		usleep(200 * 1000);
	}
	fclose(f);
	vm_release(&v);
	return EXIT_OK;
}

static int vm_reset_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *state = dirs_state();
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_(vopts_release) struct vopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "reset");

	if (i < 0)
		return cmd_options_exit(i);
	if (argc - i != 1) {
		cmd_error(ctx, "vm reset: name one VM");
		return EXIT_USAGE;
	}
	if (vm_reset(state, argv[i], &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	if (ctx->json)
		cmd_json_strings("reset", argv[i], NULL);
	return EXIT_OK;
}

/* {"removed": [...]}: what vm down took down */
static void print_removed(const struct lab_ctx *ctx, const struct strv *removed)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct json j;

	if (!ctx->json)
		return;
	json_init(&j, &out, true);
	json_object_begin(&j);
	json_key(&j, "removed");
	json_array_begin(&j);
	for (size_t k = 0; k < removed->n; k++)
		json_string(&j, removed->v[k]);
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
	cmd_write(&out);
}

static int vm_down_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *state = dirs_state();
	_cleanup_(vopts_release) struct vopts o = { 0 };
	_cleanup_strv_ struct strv names = STRV_INIT, removed = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	int i = parse(ctx, argc, argv, &o, "down"), ret = EXIT_OK;

	if (i < 0)
		return cmd_options_exit(i);
	if (o.all) {
		struct vm *v = NULL;
		bool *alive = NULL;
		size_t n = 0;

		vm_list(state, &v, &alive, &n);
		for (size_t k = 0; k < n; k++)
			strv_push(&names, v[k].name);
		vms_free(v, n);
		free(alive);
	} else if (argc - i < 1) {
		cmd_error(ctx, "vm down: name a VM (or --all)");
		return EXIT_USAGE;
	}
	for (int k = i; k < argc && !o.all; k++)
		strv_push(&names, argv[k]);
	/* every failure in one report: with --json, one error object */
	for (size_t k = 0; k < names.n; k++) {
		if (vm_down(state, names.v[k], &d) < 0)
			ret = EXIT_FAILED;
		else
			strv_push(&removed, names.v[k]);
	}
	if (ret != EXIT_OK)
		cmd_report_diags(ctx, &d);
	else
		print_removed(ctx, &removed);
	return ret;
}

static int vm_ls_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	static const char *const cols[] = { "NAME:name", "STATE:state", "TOPOLOGY:topology", "KERNEL:variant",
					    "IMAGE:image", "SSH:port", NULL };
	_cleanup_free_ char *state = dirs_state();
	_cleanup_table_ struct table *t = table_new(cols);
	struct vm *v = NULL;
	bool *alive = NULL;
	size_t n = 0;
	_cleanup_(vopts_release) struct vopts o = { 0 };
	int i = parse(ctx, argc, argv, &o, "ls");

	if (i < 0)
		return cmd_options_exit(i);
	vm_list(state, &v, &alive, &n);
	for (size_t k = 0; k < n; k++) {
		table_add_string(t, v[k].name);
		table_add_string(t, alive[k] ? "running" : "dead");
		table_add_string(t, v[k].topology);
		table_add_string(t, v[k].variant);
		table_add_string(t, v[k].image);
		table_add_uint(t, v[k].port);
	}
	vms_free(v, n);
	free(alive);
	cmd_write_table(ctx, t);
	return EXIT_OK;
}

int cmd_vm(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct subcommand subs[] = {
		{ "xml", vm_xml },
		{ "up", vm_up_cmd },
		{ "ssh", vm_ssh_cmd },
		{ "cp", vm_cp_cmd },
		{ "console", vm_console_cmd },
		{ "down", vm_down_cmd },
		{ "reset", vm_reset_cmd },
		{ "ls", vm_ls_cmd },
	};

	return cmd_dispatch(ctx, "vm", subs, ELEMENTSOF(subs), argc, argv);
}
