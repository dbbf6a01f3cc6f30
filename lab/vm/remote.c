/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libvirt/libvirt.h>
#include "../host/host.h"
#include "../image/seed.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "../util/units.h"
#include "backend.h"
#include "holder.h"
#include "machine.h"
#include "remote.h"
#include "vm.h"
#include "../util/banned.h"

#define REMOTE_TIMEOUT (120ULL * 1000000) /* one command on the host */
#define COPY_TIMEOUT (1800ULL * 1000000)  /* an image over a slow link */

/* Where a VM's files are on the host. */
struct remote_vm {
	char *dir; /* the VM's folder on the host */
	char *kernel, *modules, *disk, *seed, *console;
};

static void remote_vm_release(struct remote_vm *r)
{
	free(r->dir);
	free(r->kernel);
	free(r->modules);
	free(r->disk);
	free(r->seed);
	free(r->console);
	memset(r, 0, sizeof(*r));
}

/* sh -c SCRIPT sh ARGS... on the host; 0 or its exit status, or a negative errno. */
static int run_sh(const struct ssh_target *t, const char *script, char *const *args, size_t nargs, struct strbuf *out,
		  struct strbuf *err, uint64_t timeout)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strv_ struct strv argv = STRV_INIT;

	strv_push(&argv, "sh");
	strv_push(&argv, "-c");
	strv_push(&argv, script);
	strv_push(&argv, "sh");
	for (size_t i = 0; i < nargs; i++)
		strv_push(&argv, args[i]);
	ssh_command(&c, t, false);
	ssh_remote_argv(&c, argv.v, argv.n);
	c.out = out;
	c.err = err;
	c.timeout_usec = timeout;
	return command_run(&c);
}

static void say_failure(struct diags *d, const struct host *h, const char *what, int r, const struct strbuf *err)
{
	diags_add(d, NULL, "host '%s': %s failed (%s)%s%.*s", h->spec->name, what,
		  r == -ETIME ? "timed out" : r < 0 ? strerror(-r) : "non-zero exit", err->len ? ": " : "",
		  (int)strcspn(err->buf ? err->buf : "", "\n"), err->buf ? err->buf : "");
}

/* scp local -> remote through a temporary name, so a copy cut short is never taken for the file. */
static int put(struct host *h, const char *local, const char *remote, struct diags *d)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	_cleanup_free_ char *tmp = xasprintf("%s.part-%d", remote, (int)getpid());
	_cleanup_free_ char *to = xasprintf(":%s", tmp);
	_cleanup_free_ char *what = NULL;
	char *mv[] = { (char *)tmp, (char *)remote };
	int r;

	scp_command(&c, &h->t, local, to);
	c.err = &err;
	c.timeout_usec = COPY_TIMEOUT;
	if ((r = command_run(&c)) != 0) {
		what = xasprintf("copying %s to %s", local, remote);
		say_failure(d, h, what, r, &err);
		return r < 0 ? r : -EIO;
	}
	strbuf_reset(&err);
	if ((r = run_sh(&h->t, "mv -f -- \"$1\" \"$2\"", mv, 2, NULL, &err, REMOTE_TIMEOUT)) != 0) {
		what = xasprintf("renaming %s", tmp);
		say_failure(d, h, what, r, &err);
		return r < 0 ? r : -EIO;
	}
	return 0;
}

/* Copy what the domain needs (what is already there stays), rebase the overlay. */
static int remote_vm_prepare(struct host *h, const char *name, const struct kartifact *k, const struct image_artifact *img,
		      const struct instance *in, struct remote_vm *ret, struct diags *d)
{
	const char *base = h->spec->dir; /* the loader's default for a qemu+ssh:// host */
	_cleanup_free_ char *image = xasprintf("%s/images/%s.qcow2", base, img->id);
	_cleanup_free_ char *kdir = xasprintf("%s/kernels/%s", base, k->key);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct remote_vm rv = { 0 };
	int r;

	rv.dir = dirs_vm(base, name);
	rv.kernel = path_join(kdir, "bzImage");
	rv.modules = in->modules ? path_join(kdir, "modules.ext4") : NULL;
	rv.disk = path_join(rv.dir, "overlay.qcow2");
	rv.seed = path_join(rv.dir, "seed.iso");
	rv.console = path_join(rv.dir, "console.log");
	{
		/* a fresh VM folder; which of the shared files are there already */
		char *args[] = { rv.dir, (char *)image, rv.kernel, rv.modules ? rv.modules : (char *)"" };
		static const char script[] = "rm -rf -- \"$1\" && mkdir -p -- \"$1\" \"${2%/*}\" \"${3%/*}\" || exit 1; "
					     "test -s \"$2\" && echo image; test -s \"$3\" && echo kernel; "
					     "test -n \"$4\" && test -s \"$4\" && echo modules; "
					     "command -v qemu-img >/dev/null || echo no-qemu-img; exit 0";

		if ((r = run_sh(&h->t, script, args, 4, &out, &err, REMOTE_TIMEOUT)) != 0) {
			say_failure(d, h, "preparing its lab folder", r, &err);
			goto fail;
		}
	}
	if (strstr(out.buf, "no-qemu-img")) {
		diags_add(d, NULL, "host '%s' has no qemu-img (install qemu-utils there)", h->spec->name);
		r = -ENOENT;
		goto fail;
	}
	if (!strstr(out.buf, "image\n") && (r = put(h, img->qcow2, image, d)) < 0)
		goto fail;
	if (!strstr(out.buf, "kernel\n") && (r = put(h, k->bzimage, rv.kernel, d)) < 0)
		goto fail;
	if (rv.modules && !strstr(out.buf, "modules\n") && (r = put(h, in->modules, rv.modules, d)) < 0)
		goto fail;
	if ((r = put(h, in->disk, rv.disk, d)) < 0 || (r = put(h, in->seed, rv.seed, d)) < 0)
		goto fail;
	{
		/* the overlay's backing file is the host's copy of the image */
		char *args[] = { (char *)image, rv.disk };

		strbuf_reset(&err);
		r = run_sh(&h->t, "qemu-img rebase -u -f qcow2 -F qcow2 -b \"$1\" \"$2\"", args, 2, NULL, &err,
			   REMOTE_TIMEOUT);
		if (r != 0) {
			say_failure(d, h, "pointing the overlay at its image (qemu-img rebase)", r, &err);
			r = r < 0 ? r : -EIO;
			goto fail;
		}
	}
	*ret = rv;
	return 0;
fail:
	remote_vm_release(&rv);
	return r < 0 ? r : -EIO;
}

bool remote_port_listening(const char *text, unsigned port)
{
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		_cleanup_free_ char *line = nl ? xstrndup(p, (size_t)(nl - p)) : xstrdup(p);
		char *save = NULL, *f[4] = { 0 };
		size_t n = 0;

		for (char *w = strtok_r(line, " \t", &save); w && n < 4; w = strtok_r(NULL, " \t", &save))
			f[n++] = w;
		/* "sl local_address rem_address st": 0: 0100007F:1F90 00000000:0000 0A */
		if (n == 4 && streq(f[3], "0A")) {
			const char *colon = strrchr(f[1], ':');

			if (colon && strtoul(colon + 1, NULL, 16) == port)
				return true;
		}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

static bool listening(unsigned port, void *userdata)
{
	return remote_port_listening(userdata, port);
}

/* A port nothing listens on at the host's loopback, below its ephemeral range. */
static int remote_free_port(struct host *h, unsigned *ret, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	static const char script[] = "cat /proc/sys/net/ipv4/ip_local_port_range; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null";
	int r;

	if ((r = run_sh(&h->t, script, NULL, 0, &out, &err, REMOTE_TIMEOUT)) != 0 || !out.buf) {
		say_failure(d, h, "reading its listening ports", r, &err);
		return r < 0 ? r : -EIO;
	}
	/* line 1: the port range; then the sockets */
	if ((r = vm_pick_port(out.buf, listening, strchr(out.buf, '\n'), ret)) < 0)
		diags_add(d, NULL, "host '%s': no free port below its ephemeral range on its loopback", h->spec->name);
	return r;
}

/* Whether /dev/kvm works there; the host's CPUs and NUMA nodes for placement
 * (strings point into *storage, which the caller frees). */
static int remote_probe(struct host *h, bool *kvm, struct domain_host *dh, char **storage, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	_cleanup_strv_ struct strv lines = STRV_INIT;
	static const char script[] = "if test -w /dev/kvm && ! test -e /sys/module/kvm_pvm; then echo kvm; else echo tcg; fi; "
				     "cat /sys/devices/system/cpu/online; "
				     "for n in /sys/devices/system/node/node[0-9]*; do "
				     "test -s \"$n/cpulist\" && cat \"$n/cpulist\"; done; exit 0";
	char *save = NULL;
	int r;

	if ((r = host_need_trust(h, d)) < 0)
		return r;
	if ((r = run_sh(&h->t, script, NULL, 0, &out, &err, REMOTE_TIMEOUT)) != 0 || !out.buf) {
		say_failure(d, h, "reading its CPUs", r, &err);
		return r < 0 ? r : -EIO;
	}
	/* "kvm" or "tcg", the online CPUs, then one cpulist per NUMA node with CPUs */
	for (char *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (*l)
			strv_push(&lines, l);
	memset(dh, 0, sizeof(*dh));
	if (lines.n < 2) {
		diags_add(d, NULL, "host '%s' did not say its online CPUs", h->spec->name);
		return -EIO;
	}
	*kvm = streq(lines.v[0], "kvm");
	vm_host_layout(dh, storage, lines.v[1], (const char *const *)lines.v + 2, lines.n - 2);
	return 0;
}

char *remote_connect_uri(const char *uri, const struct ssh_target *t, const char *wrapper, struct diags *d)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf sh = STRBUF_INIT, u = STRBUF_INIT;
	struct ssh_target lt = *t;
	size_t n;
	int r;

	/* libvirt adds -p, -l, the host and its command; the wrapper brings lab's key and pinned key */
	lt.control = NULL;
	ssh_command(&c, &lt, false);
	n = c.argv.n;
	while (n && !streq(c.argv.v[n - 1], "--"))
		n--;
	strbuf_addstr(&sh, "#!/bin/sh\n# lab: libvirt's ssh to the host, with lab's key and its pinned host key\nexec");
	for (size_t i = 0; i + 1 < n; i++) {
		const char *w = c.argv.v[i];

		/* libvirt gives its own port, and -T */
		if (str_startswith(w, "-p") || streq(w, "-T"))
			continue;
		strbuf_addch(&sh, ' ');
		shell_quote(&sh, w);
	}
	strbuf_addstr(&sh, " \"$@\"\n");
	if ((r = fs_write_atomic(wrapper, sh.buf, sh.len, 0755)) < 0) {
		diags_add(d, NULL, "cannot write '%s': %s", wrapper, strerror(-r));
		return NULL;
	}
	strbuf_addstr(&u, uri);
	strbuf_addstr(&u, strchr(uri, '?') ? "&command=" : "?command=");
	for (const char *p = wrapper; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || strchr("/-._~", ch))
			strbuf_addch(&u, (char)ch);
		else
			strbuf_addf(&u, "%%%02X", ch);
	}
	return strbuf_detach(&u, NULL);
}

/* Append what the remote console file got since the local copy's end. */
static int remote_console_sync(const struct ssh_target *t, const char *remote, const char *local)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct stat st;
	_cleanup_free_ char *from = NULL;
	char *args[2];
	int fd, r;

	from = xasprintf("+%lld", (long long)(stat(local, &st) == 0 ? st.st_size : 0) + 1);
	args[0] = from;
	args[1] = (char *)remote;
	r = run_sh(t, "test -e \"$2\" || exit 0; tail -c \"$1\" -- \"$2\"", args, 2, &out, NULL, 20ULL * 1000000);
	if (r != 0)
		return r < 0 ? r : -EIO;
	if (!out.len)
		return 0;
	if ((fd = open(local, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return -errno;
	r = write(fd, out.buf, out.len) == (ssize_t)out.len ? 0 : -EIO;
	close(fd);
	return r;
}

/* Remove the VM's folder on the host (a remote rm -rf: lab's fs_remove_tree works only here). */
static int remote_vm_remove(const struct ssh_target *t, const char *dir)
{
	char *args[] = { (char *)dir };

	return run_sh(t, "rm -rf -- \"$1\"", args, 1, NULL, NULL, REMOTE_TIMEOUT);
}

static int remote_prepare(struct vm *v, const struct vm_opts *o, const struct instance *in, struct vm_machine *ret,
			  struct diags *d)
{
	_cleanup_free_ char *wrapper = path_join(v->dir, "ssh-libvirt");
	struct host *h = o->remote;
	struct remote_vm rv = { 0 };
	int r;

	v->host_name = xstrdup(h->spec->name);
	v->via_user = xstrdup(h->t.user ? h->t.user : "root");
	v->via_host = xstrdup(h->t.host);
	v->via_port = h->t.port;
	v->via_identity = xstrdup(h->t.identity);
	v->via_known_hosts = xstrdup(h->t.known_hosts);
	v->via_control = h->t.control ? xstrdup(h->t.control) : NULL;
	if ((r = remote_probe(h, &ret->kvm, &ret->host, &ret->host_storage, d)) < 0 ||
	    (r = remote_vm_prepare(h, v->name, o->kernel, o->image, in, &rv, d)) < 0)
		return r;
	/* from here a failure removes the folder there too (destroy), and
	 * once vm.json says so, lab gc after a kill */
	v->remote_dir = xstrdup(rv.dir);
	v->remote_console = xstrdup(rv.console);
	ret->kernel = TAKE_PTR(rv.kernel);
	ret->modules = TAKE_PTR(rv.modules);
	ret->disk = TAKE_PTR(rv.disk);
	ret->seed = TAKE_PTR(rv.seed);
	ret->console = TAKE_PTR(rv.console);
	remote_vm_release(&rv);
	if ((r = remote_free_port(h, &v->port, d)) < 0)
		return r;
	vm_save(v);
	if (!(v->uri = remote_connect_uri(o->uri, &h->t, wrapper, d)))
		return -EIO;
	return 0;
}

static void remote_sync(const struct vm *v)
{
	if (v->remote_console)
		remote_console_sync(&v->via, v->remote_console, v->console);
}

static pid_t remote_qemu_pid(const struct vm *v)
{
	(void)v;
	return -1; /* on the other host */
}

static char *remote_qemu_log(const struct vm *v)
{
	(void)v;
	return NULL; /* libvirt's log stays on the other host */
}

/* Only libvirt there can stop what a dead holder left. */
static void remote_destroy(const struct vm *v)
{
	virConnectPtr conn;
	virDomainPtr dom;

	if (!v->remote_dir)
		return;
	if (v->uri && v->domain) {
		vm_virt_quiet();
		if ((conn = virConnectOpen(v->uri))) {
			if ((dom = virDomainLookupByName(conn, v->domain))) {
				virDomainDestroy(dom);
				virDomainUndefine(dom);
				virDomainFree(dom);
			}
			virConnectClose(conn);
		}
	}
	remote_vm_remove(&v->via, v->remote_dir);
	ssh_control_exit(&v->via);
}

const struct vm_backend_ops vm_backend_remote = {
	.name = "remote",
	.prepare_step = "copying kernel and disks to the host",
	.prepare = remote_prepare,
	.console_sync = remote_sync,
	.qemu_pid = remote_qemu_pid,
	.qemu_log = remote_qemu_log,
	.destroy = remote_destroy,
};
