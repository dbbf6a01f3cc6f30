/* SPDX-License-Identifier: MIT */
/*
 * The local backend: libvirt's embedded QEMU driver rooted in the VM's
 * own folder (<dir>/libvirt: no daemon, nothing shared with other VMs),
 * or the URI vm_opts gives; QEMU's ssh forwarded to this machine's
 * 127.0.0.1. Its files are the instance's, where they are. libvirt's probe
 * of QEMU is kept in lab's cache (libvirt/qemu-capabilities) for the next
 * VM's root.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libvirt/libvirt.h>
#include "../image/seed.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/units.h"
#include "../util/strbuf.h"
#include "backend.h"
#include "holder.h"
#include "machine.h"
#include "vm.h"
#include "../util/banned.h"

static int write_embed_config(const char *root)
{
	_cleanup_free_ char *etc = path_join(root, "etc"), *conf = path_join(etc, "qemu.conf");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = path_mkdir_p(etc, 0755);

	if (r < 0)
		return r;
	/* no virtlogd: QEMU's stdio goes to a file */
	strbuf_addstr(&sb, "stdio_handler = \"file\"\n");
	if (geteuid() == 0)
		strbuf_addstr(&sb, "user = \"root\"\ngroup = \"root\"\n");
	strbuf_addstr(&sb, "security_driver = \"none\"\n");
	return fs_write_atomic(conf, sb.buf, sb.len, 0644);
}

/*
 * libvirt probes QEMU's capabilities (a QEMU start and a QMP session: ~4 s
 * of `lab vm up` under TCG on a loaded 2-core host) on the first domain of
 * a driver root, and every VM has a root of its own. So lab keeps the probe
 * in its cache and seeds each root with it; libvirt still checks a cached
 * probe against the QEMU binary and itself, and probes again when either
 * changed (kept again once that VM started).
 */
static char *caps_shared(const char *cache)
{
	return path_join(cache, "libvirt/qemu-capabilities");
}

static char *caps_root(const char *root)
{
	return path_join(root, "cache/qemu/capabilities");
}

static void local_started(const struct vm *v, const struct vm_opts *o)
{
	_cleanup_free_ char *root = path_join(v->dir, "libvirt");
	_cleanup_free_ char *from = caps_root(root), *to = NULL;

	if (o->uri || !o->cache || !path_is_dir(from))
		return;
	to = caps_shared(o->cache);
	/* best effort: without it the next VM probes as this one did */
	(void)fs_copy_tree(from, to, true, NULL);
}

static int local_prepare(struct vm *v, const struct vm_opts *o, const struct instance *in, struct vm_machine *ret,
			 struct diags *d)
{
	_cleanup_free_ char *root = path_join(v->dir, "libvirt");
	int r;

	v->uri = o->uri ? xstrdup(o->uri) : xasprintf("qemu:///embed?root=%s", root);
	if ((r = vm_free_local_port(&v->port)) < 0) {
		diags_add(d, NULL, "no free port on 127.0.0.1: %s", strerror(-r));
		return r;
	}
	if (!o->uri && (r = write_embed_config(root)) < 0) {
		diags_add(d, NULL, "cannot write the libvirt configuration in '%s': %s", root, strerror(-r));
		return r;
	}
	if (!o->uri && o->cache) {
		_cleanup_free_ char *from = caps_shared(o->cache), *to = caps_root(root);

		if (path_is_dir(from))
			(void)fs_copy_tree(from, to, true, NULL);
	}
	vm_probe_host(&ret->host, &ret->host_storage);
	ret->kvm = vm_kvm_available();
	ret->kernel = xstrdup(o->kernel->bzimage);
	ret->modules = in->modules ? xstrdup(in->modules) : NULL;
	ret->disk = xstrdup(in->disk);
	ret->seed = xstrdup(in->seed);
	ret->console = xstrdup(v->console);
	return 0;
}

static void local_console_sync(const struct vm *v)
{
	(void)v; /* QEMU writes v->console itself */
}

/* The pid of this VM's QEMU from libvirt's pid file, checked against its
 * command line (a stale pid file must not name a reused pid); 0 if none. */
static pid_t local_qemu_pid(const struct vm *v)
{
	_cleanup_free_ char *pidf = xasprintf("%s/libvirt/run/qemu/%s.pid", v->dir, v->domain);
	_cleanup_free_ char *s = vm_read_trimmed(pidf);
	_cleanup_free_ char *cmdf = NULL, *want = NULL;
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	uint64_t pid = 0;

	if (!s || parse_uint(s, INT32_MAX, &pid) != 0 || pid <= 1)
		return 0;
	cmdf = xasprintf("/proc/%llu/cmdline", (unsigned long long)pid);
	want = xasprintf("guest=%s,", v->domain);
	if (strbuf_read_file(&cmd, cmdf, 1 << 20) < 0 || !cmd.buf)
		return 0;
	for (size_t i = 0; i < cmd.len; i++)
		if (!cmd.buf[i])
			cmd.buf[i] = ' ';
	return strstr(cmd.buf, want) ? (pid_t)pid : 0;
}

static char *local_qemu_log(const struct vm *v)
{
	if (!v->dir || !v->domain)
		return NULL;
	return xasprintf("%s/libvirt/log/qemu/%s.log", v->dir, v->domain);
}

/* A holder that died without tearing down leaves its QEMU: the pid file
 * is in the folder about to go, so this is the last chance. */
static void local_destroy(const struct vm *v)
{
	pid_t pid = local_qemu_pid(v);

	if (pid > 0)
		kill(pid, SIGKILL);
}

const struct vm_backend_ops vm_backend_local = {
	.name = "local",
	.prepare_step = NULL,
	.prepare = local_prepare,
	.started = local_started,
	.console_sync = local_console_sync,
	.qemu_pid = local_qemu_pid,
	.qemu_log = local_qemu_log,
	.destroy = local_destroy,
};

static void version_string(struct strbuf *sb, unsigned long v)
{
	strbuf_addf(sb, "%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
}

int vm_libvirt_version(char **ret, struct strbuf *err)
{
	_cleanup_free_ char *root = NULL, *uri = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char tmpl[] = "/tmp/lab-doctor.XXXXXX";
	unsigned long lib = 0, hv = 0;
	virConnectPtr conn;
	int r = 0;

	*ret = NULL;
	/* libvirt logs what its probes meet (no /dev/kvm, no dmidecode) and
	 * prints its errors unless told otherwise: the one that matters goes to err */
	setenv("LIBVIRT_LOG_OUTPUTS", "4:file:/dev/null", 0);
	vm_virt_quiet();
	if (virEventRegisterDefaultImpl() < 0) {
		strbuf_addf(err, "cannot register libvirt's event loop: %s", vm_virt_error());
		return -EIO;
	}
	if (!mkdtemp(tmpl)) {
		r = -errno;
		strbuf_addf(err, "cannot create a scratch folder: %s", strerror(-r));
		return r;
	}
	root = xstrdup(tmpl);
	if ((r = write_embed_config(root)) < 0) {
		strbuf_addf(err, "cannot write the embedded driver's qemu.conf: %s", strerror(-r));
		goto out;
	}
	uri = xasprintf("qemu:///embed?root=%s", root);
	if (!(conn = virConnectOpen(uri))) {
		strbuf_addf(err, "cannot open %s: %s", uri, vm_virt_error());
		r = -EIO;
		goto out;
	}
	virConnectGetLibVersion(conn, &lib);
	if (virConnectGetVersion(conn, &hv) < 0 || !hv) {
		strbuf_addf(err, "%s answers but has no QEMU: %s", uri, vm_virt_error());
		r = -ENOENT;
	} else {
		strbuf_addstr(&sb, "libvirt ");
		version_string(&sb, lib);
		strbuf_addstr(&sb, ", QEMU ");
		version_string(&sb, hv);
		*ret = strbuf_detach(&sb, NULL);
	}
	virConnectClose(conn);
out:
	fs_remove_tree(root);
	return r;
}
