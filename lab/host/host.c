/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../ssh/key.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/diag.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../util/tarball.h"
#include "../util/units.h"
#include "host.h"
#include "../util/banned.h"

int host_open(const char *state, const char *cache, const struct spec_host *h, struct host *ret, struct diags *d)
{
	struct host x = { .spec = h };
	int r;

	if (h->type != HOST_SSH && !h->address) {
		diags_add(d, &h->pos, "host '%s' is this machine's libvirt (uri: %s): there is nothing to reach over ssh",
			  h->name, h->uri ? h->uri : "qemu:///embed");
		return -EINVAL;
	}
	x.dir = dirs_host(state, h->name);
	if ((r = path_mkdir_p(x.dir, 0700)) < 0 || (r = fs_check_private(state, FS_PRIVATE, d)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", x.dir, strerror(-r));
		host_close(&x);
		return r;
	}
	x.known_hosts = path_join(x.dir, "known_hosts");
	x.control = path_join(x.dir, "ssh.ctl");
	if (h->identity) {
		/* the loader resolved it (~/ and relative to lab.yaml) */
		x.identity = xstrdup(h->identity);
	} else if ((r = ssh_lab_key(cache, &x.identity, NULL, d)) < 0) {
		host_close(&x);
		return r;
	}
	x.t = (struct ssh_target){
		.user = h->user ? h->user : "root",
		.host = h->address,
		.port = h->port ? h->port : 22,
		.identity = x.identity,
		.known_hosts = x.known_hosts,
		.control = x.control,
	};
	*ret = x;
	return 0;
}

void host_close(struct host *h)
{
	if (h->control)
		ssh_control_exit(&h->t);
	free(h->dir);
	free(h->known_hosts);
	free(h->identity);
	free(h->control);
	memset(h, 0, sizeof(*h));
}

bool host_trusted(const struct host *h)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	return strbuf_read_file(&sb, h->known_hosts, 1 << 20) == 0 && sb.len > 0;
}

int host_trust(struct host *h, struct strbuf *fingerprints, struct diags *d)
{
	static const char *const types[] = { "ed25519", "ecdsa", "rsa" };
	_cleanup_command_ struct command fp = { 0 };
	_cleanup_strbuf_ struct strbuf keys = STRBUF_INIT, err = STRBUF_INIT;
	int r = 0;

	/* one key type at a time: all at once, over QEMU's user networking to a
	 * slow guest, often came back with none */
	for (size_t i = 0; i < ELEMENTSOF(types); i++) {
		_cleanup_command_ struct command scan = { 0 };

		command_init(&scan, "ssh-keyscan");
		command_args(&scan, "-t", types[i], NULL);
		command_argf(&scan, "-p%u", h->t.port);
		command_args(&scan, "-T", "10", "--", h->t.host, NULL);
		scan.out = &keys;
		scan.err = &err;
		scan.timeout_usec = 60ULL * 1000000;
		r = command_run(&scan);
	}
	if (!keys.len) {
		diags_add(d, &h->spec->pos, "host '%s' (%s port %u) offered no key: %s", h->spec->name, h->t.host,
			  h->t.port, r < 0 ? strerror(-r) : "is it up, and is sshd listening?");
		return -ENOENT;
	}
	if ((r = fs_write_atomic(h->known_hosts, keys.buf, keys.len, 0600)) < 0) {
		diags_add(d, NULL, "cannot write '%s': %s", h->known_hosts, strerror(-r));
		return r;
	}
	command_init(&fp, "ssh-keygen");
	command_args(&fp, "-l", "-f", h->known_hosts, NULL);
	fp.out = fingerprints;
	command_run(&fp);
	return 0;
}

int host_run(struct host *h, char *const *argv, size_t n, struct strbuf *out, struct strbuf *err, uint64_t timeout_usec)
{
	_cleanup_command_ struct command c = { 0 };

	ssh_command(&c, &h->t, false);
	ssh_remote_argv(&c, argv, n);
	c.out = out;
	c.err = err;
	c.timeout_usec = timeout_usec;
	return command_run(&c);
}

/* Before the first remote command: a pinned key, or the user is told how to get one. */
int host_need_trust(const struct host *h, struct diags *d)
{
	if (host_trusted(h))
		return 0;
	diags_add(d, &h->spec->pos, "host '%s' has no pinned key yet: check it is the machine you mean, then "
				    "'lab host trust %s'", h->spec->name, h->spec->name);
	return -EPERM;
}

/* Run a shell script on the host (sh -s) and take its output. */
static int script(struct host *h, const char *text, struct strbuf *out, struct diags *d)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	char *sh[] = { (char *)"sh", (char *)"-s", NULL };
	int r;

	if ((r = host_need_trust(h, d)) < 0)
		return r;
	ssh_command(&c, &h->t, false);
	ssh_remote_argv(&c, sh, 2);
	c.in = text;
	c.in_len = strlen(text);
	c.out = out;
	c.err = &err;
	c.timeout_usec = 120ULL * 1000000;
	r = command_run(&c);
	if (r != 0) {
		diags_add(d, &h->spec->pos, "cannot run commands on host '%s' (%s@%s port %u): %s", h->spec->name,
			  h->t.user, h->t.host, h->t.port,
			  r == -ETIME ? "no answer in 2 minutes" : err.len ? err.buf : "ssh failed");
		return r < 0 ? r : -EIO;
	}
	return 0;
}

/* A copy of the lines after "== NAME\n" up to the next section; NULL if none. */
static char *section(const char *text, const char *name)
{
	_cleanup_free_ char *head = xasprintf("== %s\n", name);
	const char *p = str_startswith(text, head) ? text : strstr(text, head), *end;

	if (p != text && p) {
		/* a heading starts a line */
		_cleanup_free_ char *nl = xasprintf("\n%s", head);

		p = strstr(text, nl);
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return NULL;
	p += strlen(head);
	end = strstr(p, "\n== ");
	return end ? xstrndup(p, (size_t)(end - p + 1)) : xstrdup(p);
}

static char *first_line(const char *s)
{
	return s ? xstrndup(s, strcspn(s, "\n")) : NULL;
}

/* "Thread(s) per core:   2" in lscpu's text. */
static unsigned lscpu_uint(const char *text, const char *field)
{
	const char *p = text ? strstr(text, field) : NULL;
	uint64_t v;
	_cleanup_free_ char *num = NULL;

	if (!p)
		return 0;
	p += strlen(field);
	p += strspn(p, " \t");
	num = xstrndup(p, strcspn(p, " \t\n"));
	return parse_uint(num, 1u << 20, &v) == 0 ? (unsigned)v : 0;
}

static const char facts_script[] = "export LC_ALL=C\n"
				   "echo '== release'; uname -r\n"
				   "echo '== boot_id'; cat /proc/sys/kernel/random/boot_id\n"
				   "echo '== cmdline'; cat /proc/cmdline\n"
				   "echo '== nodes'\n"
				   "for n in /sys/devices/system/node/node[0-9]*; do\n"
				   "  [ -r \"$n/cpulist\" ] && echo \"${n##*node} $(cat \"$n/cpulist\")\"\n"
				   "done\n"
				   "echo '== lscpu'; lscpu 2>/dev/null\n"
				   "echo '== lscpu-json'; lscpu -J 2>/dev/null\n"
				   "echo '== end'\n";

int host_facts(struct host *h, struct host_facts *f, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_free_ char *release = NULL, *boot = NULL, *cmd = NULL, *nodes = NULL, *lscpu = NULL, *json = NULL;
	int r;

	memset(f, 0, sizeof(*f));
	if ((r = script(h, facts_script, &out, d)) < 0)
		return r;
	if (!out.buf || !strstr(out.buf, "== end\n")) {
		diags_add(d, &h->spec->pos, "host '%s' answered without its facts", h->spec->name);
		return -EIO;
	}
	release = section(out.buf, "release");
	boot = section(out.buf, "boot_id");
	cmd = section(out.buf, "cmdline");
	nodes = section(out.buf, "nodes");
	lscpu = section(out.buf, "lscpu");
	json = section(out.buf, "lscpu-json");
	f->release = first_line(release);
	f->boot_id = first_line(boot);
	f->cmdline = first_line(cmd);
	if (lscpu) {
		const char *m = strstr(lscpu, "Model name:");

		f->cpus = lscpu_uint(lscpu, "\nCPU(s):");
		if (!f->cpus && str_startswith(lscpu, "CPU(s):"))
			f->cpus = lscpu_uint(lscpu, "CPU(s):");
		f->sockets = lscpu_uint(lscpu, "Socket(s):");
		f->cores_per_socket = lscpu_uint(lscpu, "Core(s) per socket:");
		f->threads_per_core = lscpu_uint(lscpu, "Thread(s) per core:");
		if (m) {
			m += strlen("Model name:");
			m += strspn(m, " \t");
			f->model = first_line(m);
		}
	}
	if (json && *json)
		f->lscpu_json = TAKE_PTR(json);
	if (nodes) {
		_cleanup_strv_ struct strv lines = STRV_INIT;

		strv_split(&lines, nodes, '\n');
		f->node_cpus = xcalloc(lines.n + 1, sizeof(char *));
		for (size_t i = 0; i < lines.n; i++) {
			const char *sp = strchr(lines.v[i], ' ');

			if (sp && sp[1])
				f->node_cpus[f->nnodes++] = xstrdup(sp + 1);
		}
	}
	return 0;
}

void host_facts_release(struct host_facts *f)
{
	free(f->release);
	free(f->boot_id);
	free(f->cmdline);
	free(f->model);
	for (unsigned i = 0; f->node_cpus && i < f->nnodes; i++)
		free(f->node_cpus[i]);
	free(f->node_cpus);
	free(f->lscpu_json);
	memset(f, 0, sizeof(*f));
}

void host_facts_format_text(const struct host_facts *f, struct strbuf *out)
{
	strbuf_addf(out, "release %s\nboot id %s\ncmdline %s\ncpu %s\n", f->release ? f->release : "?",
		    f->boot_id ? f->boot_id : "?", f->cmdline ? f->cmdline : "?", f->model ? f->model : "?");
	strbuf_addf(out, "cpus %u (%u sockets x %u cores x %u threads)\nnuma nodes %u", f->cpus, f->sockets,
		    f->cores_per_socket, f->threads_per_core, f->nnodes);
	for (unsigned i = 0; i < f->nnodes; i++)
		strbuf_addf(out, "%s%u: %s", i ? ", " : " (", i, f->node_cpus[i]);
	strbuf_addstr(out, f->nnodes ? ")\n" : "\n");
}

void host_facts_format_json(const struct host_facts *f, struct json *j)
{
	json_kv_string(j, "release", f->release);
	json_kv_string(j, "boot_id", f->boot_id);
	json_kv_string(j, "cmdline", f->cmdline);
	json_kv_string(j, "model", f->model);
	json_kv_uint(j, "cpus", f->cpus);
	json_kv_uint(j, "sockets", f->sockets);
	json_kv_uint(j, "cores_per_socket", f->cores_per_socket);
	json_kv_uint(j, "threads_per_core", f->threads_per_core);
	json_key(j, "nodes");
	json_array_begin(j);
	for (unsigned i = 0; i < f->nnodes; i++)
		json_string(j, f->node_cpus[i]);
	json_array_end(j);
}

static const char check_script[] = "export LC_ALL=C\n"
				   "echo \"kexec $(command -v kexec || echo -)\"\n"
				   "echo \"kexec_load_disabled $(cat /proc/sys/kernel/kexec_load_disabled 2>/dev/null || echo -)\"\n"
				   "echo \"perf $(command -v perf || echo -)\"\n"
				   "if [ -r /sys/fs/cgroup/cgroup.controllers ]; then\n"
				   "  echo \"cgroup2 $(tr ' ' , </sys/fs/cgroup/cgroup.controllers)\"\n"
				   "else echo 'cgroup2 -'; fi\n"
				   "mkdir -p /var/lib/lab 2>/dev/null\n"
				   "echo \"disk $(df -Pk /var/lib/lab 2>/dev/null | awk 'NR == 2 { print $4 }')\"\n"
				   "echo \"grub-reboot $(command -v grub-reboot || echo -)\"\n"
				   "echo \"update-grub $(command -v update-grub || command -v grub-mkconfig || echo -)\"\n"
				   "echo \"mkinitramfs $(command -v mkinitramfs || echo -)\"\n"
				   "echo '== default'; cat /etc/default/grub /etc/default/grub.d/*.cfg 2>/dev/null\n"
				   "echo end\n";

static const char *value_of(const char *text, const char *key)
{
	_cleanup_free_ char *k = xasprintf("\n%s ", key);
	const char *p;

	if (str_startswith(text, k + 1))
		return text + strlen(k + 1);
	p = strstr(text, k);
	return p ? p + strlen(k) : NULL;
}

static void add(struct host_check **v, size_t *n, const char *name, bool ok, char *detail, const char *fix)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct host_check){ .name = name, .ok = ok, .detail = detail, .fix = fix };
}

/* The GRUB path's checks, from check_script's output: host_check's and boot's preflight. */
static void grub_checks(const char *out, struct host_check **ret, size_t *n)
{
	const char *v = value_of(out, "grub-reboot"), *u = value_of(out, "update-grub");
	const char *def = strstr(out, "== default\n");
	_cleanup_free_ char *gd = def ? host_grub_default(def) : NULL;

	add(ret, n, "grub", v && *v == '/' && u && *u == '/',
	    v && *v == '/' ? first_line(u && *u == '/' ? u : "no update-grub or grub-mkconfig") : xstrdup("no grub-reboot"),
	    "apt install grub-pc (or grub-efi-amd64): boot: grub needs grub-reboot and update-grub");
	add(ret, n, "grub-default", gd && streq(gd, "saved"), xasprintf("GRUB_DEFAULT=%s", gd ? gd : "(unset)"),
	    "set GRUB_DEFAULT=saved in /etc/default/grub and run update-grub (grub-reboot's once-only entry needs it)");
}

int host_check(struct host *h, struct host_check **ret, size_t *n, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const char *v;
	uint64_t kib = 0;
	int r;

	*ret = NULL;
	*n = 0;
	r = script(h, check_script, &out, d);
	add(ret, n, "ssh", r == 0,
	    r == 0 ? xasprintf("%s@%s port %u answers", h->t.user, h->t.host, h->t.port)
		   : xstrdup(d->n ? d->v[d->n - 1].msg : "no answer"),
	    r == -EPERM ? "lab host trust HOST, after checking it is the right machine"
			: "check the address, the port, the user and that lab's key is in its authorized_keys");
	if (r < 0)
		return r;
	v = value_of(out.buf, "kexec");
	add(ret, n, "kexec", v && *v == '/', first_line(v ? v : "-"), "apt install kexec-tools");
	v = value_of(out.buf, "kexec_load_disabled");
	add(ret, n, "kexec-load", v && *v == '0', xasprintf("kernel.kexec_load_disabled = %.1s", v ? v : "?"),
	    "kexec is locked on this boot (kexec_load_disabled=1): reboot, and keep the sysctl at 0");
	v = value_of(out.buf, "perf");
	add(ret, n, "perf", v && *v == '/', first_line(v ? v : "-"), "apt install linux-perf");
	v = value_of(out.buf, "cgroup2");
	add(ret, n, "cgroup2", v && *v != '-', v && *v != '-' ? first_line(v) : xstrdup("no cgroup v2 at /sys/fs/cgroup"),
	    "boot with systemd.unified_cgroup_hierarchy=1 (cgroup v2)");
	v = value_of(out.buf, "disk");
	{
		_cleanup_free_ char *num = first_line(v ? v : "");

		if (num && parse_uint(num, UINT64_MAX, &kib) < 0)
			kib = 0;
	}
	add(ret, n, "disk", kib >= 2ULL << 20, xasprintf("%llu MiB free in /var/lib/lab", (unsigned long long)(kib >> 10)),
	    "free at least 2 GiB under /var/lib/lab (kernels, modules, raw outputs)");
	if (h->spec->boot == HOST_BOOT_GRUB)
		grub_checks(out.buf, ret, n);
	if (h->spec->initrd) {
		v = value_of(out.buf, "mkinitramfs");
		add(ret, n, "initrd", v && *v == '/', first_line(v ? v : "-"), "apt install initramfs-tools");
	}
	return 0;
}

void host_checks_free(struct host_check *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].detail);
	free(c);
}

/* The words of a grub.cfg line as its shell-like syntax reads them: quotes
 * and backslashes removed, 'a'\''b' one word. */
static void grub_words(const char *line, struct strv *w)
{
	const char *p = line;

	for (;;) {
		_cleanup_strbuf_ struct strbuf word = STRBUF_INIT;
		bool any = false;

		p += strspn(p, " \t");
		if (!*p || *p == '#')
			return;
		while (*p && *p != ' ' && *p != '\t') {
			any = true;
			if (*p == '\'') {
				const char *e = strchr(p + 1, '\'');

				if (!e)
					e = p + strlen(p);
				strbuf_add(&word, p + 1, (size_t)(e - p - 1));
				p = *e ? e + 1 : e;
			} else if (*p == '"') {
				for (p++; *p && *p != '"'; p++) {
					if (*p == '\\' && p[1])
						p++;
					strbuf_addch(&word, *p);
				}
				if (*p)
					p++;
			} else if (*p == '\\' && p[1]) {
				strbuf_addch(&word, p[1]);
				p += 2;
			} else {
				strbuf_addch(&word, *p++);
			}
		}
		if (any)
			strv_push(w, word.buf ? word.buf : "");
	}
}

struct grub_block {
	bool menu;  /* a menuentry or submenu (not an if or a function) */
	char *name; /* its id, else its title */
	bool recovery;
};

int host_grub_entry(const char *cfg, const char *release, char **ret)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	_cleanup_free_ char *want = xasprintf("vmlinuz-%s", release);
	struct grub_block stack[16];
	size_t depth = 0;
	char *first = NULL, *named = NULL;

	*ret = NULL;
	strv_split(&lines, cfg, '\n');
	for (size_t i = 0; i < lines.n && !named; i++) {
		_cleanup_strv_ struct strv w = STRV_INIT;

		grub_words(lines.v[i], &w);
		if (!w.n)
			continue;
		if (streq(w.v[0], "}")) {
			if (depth)
				free(stack[--depth].name);
			continue;
		}
		if (streq(w.v[w.n - 1], "{")) {
			struct grub_block b = { 0 };

			if ((streq(w.v[0], "menuentry") || streq(w.v[0], "submenu")) && w.n > 2) {
				b.menu = true;
				b.recovery = strstr(w.v[1], "recovery mode") != NULL;
				for (size_t j = 2; j + 1 < w.n; j++)
					if (streq(w.v[j], "$menuentry_id_option") || streq(w.v[j], "--id"))
						b.name = xstrdup(w.v[j + 1]);
				if (!b.name)
					b.name = xstrdup(w.v[1]);
			}
			if (depth == ELEMENTSOF(stack)) {
				free(b.name);
				break;
			}
			stack[depth++] = b;
			continue;
		}
		if ((streq(w.v[0], "linux") || streq(w.v[0], "linuxefi") || streq(w.v[0], "linux16")) && w.n > 1 &&
		    depth && stack[depth - 1].menu && !stack[depth - 1].recovery) {
			const char *slash = strrchr(w.v[1], '/');

			if (streq(slash ? slash + 1 : w.v[1], want)) {
				_cleanup_strbuf_ struct strbuf path = STRBUF_INIT;

				for (size_t j = 0; j < depth; j++) {
					if (!stack[j].menu)
						continue;
					if (path.len)
						strbuf_addch(&path, '>');
					strbuf_addstr(&path, stack[j].name);
				}
				/* an entry whose own name has the release beats a generic one
				 * ("Debian GNU/Linux" boots whichever kernel is newest today) */
				if (strstr(stack[depth - 1].name, release))
					named = strbuf_detach(&path, NULL);
				else if (!first)
					first = strbuf_detach(&path, NULL);
			}
		}
	}
	while (depth)
		free(stack[--depth].name);
	if (named) {
		free(first);
		first = named;
	}
	*ret = first;
	return first ? 0 : -ENOENT;
}

char *host_grub_default(const char *text)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	char *last = NULL;

	strv_split(&lines, text, '\n');
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i] + strspn(lines.v[i], " \t");
		_cleanup_strv_ struct strv w = STRV_INIT;

		if (!str_startswith(l, "GRUB_DEFAULT="))
			continue;
		grub_words(l + strlen("GRUB_DEFAULT="), &w);
		free(last);
		last = xstrdup(w.n ? w.v[0] : "");
	}
	return last;
}

static void boot_step(const struct host_boot_opts *o, const char *what)
{
	if (o && o->step)
		o->step(o->userdata, what);
}

/* The boot id, or NULL when the host does not answer (short timeouts: it may be rebooting). */
static char *probe_boot_id(struct host *h)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	char *cat[] = { (char *)"cat", (char *)"/proc/sys/kernel/random/boot_id", NULL };
	struct ssh_target saved = h->t;
	int r;

	h->t.control = NULL; /* no master across a reboot */
	h->t.connect_timeout = 5;
	r = host_run(h, cat, 2, &out, &err, 20ULL * 1000000);
	h->t = saved;
	if (r != 0 || !out.len)
		return NULL;
	return xstrndup(out.buf, strcspn(out.buf, "\n"));
}

#define HOST_BOOT_LIMIT_USEC (600ULL * 1000000)

/* Wait for a boot id other than `old`; the power-cycle command once if it
 * takes too long. The limit is the boot's (--timeout); after a power cycle
 * the machine goes through its firmware and boot loader too, so it gets at
 * least the default limit. */
static int wait_new_boot(struct host *h, const char *old, const struct host_boot_opts *o, char **ret, struct diags *d)
{
	uint64_t limit = o && o->timeout_usec ? o->timeout_usec : HOST_BOOT_LIMIT_USEC;
	bool cycled = false;

	for (;;) {
		struct timespec t0, t1;
		uint64_t waited = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (waited < limit) {
			_cleanup_free_ char *id = probe_boot_id(h);

			if (id && !streq(id, old)) {
				*ret = TAKE_PTR(id);
				return 0;
			}
			sleep(3);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			waited = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000 + (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000);
		}
		if (cycled || !h->spec->power_cycle.n) {
			diags_add(d, &h->spec->pos, "host '%s' did not come back with a new boot within %llu s%s", h->spec->name,
				  (unsigned long long)(limit / 1000000),
				  cycled ? ", even after its power-cycle command"
					 : " (give it a power-cycle: command in lab.yaml to have lab reset it)");
			return -ETIME;
		}
		{
			_cleanup_command_ struct command pc = { 0 };
			_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;

			boot_step(o, "no answer: running the power-cycle command");
			command_init(&pc, h->spec->power_cycle.v[0]);
			for (size_t i = 1; i < h->spec->power_cycle.n; i++)
				command_arg(&pc, h->spec->power_cycle.v[i]);
			pc.err = &err;
			pc.timeout_usec = 120ULL * 1000000;
			if (command_run(&pc) != 0)
				diags_add(d, &h->spec->pos, "the power-cycle command of '%s' failed: %s", h->spec->name,
					  err.len ? err.buf : "?");
			cycled = true;
			if (limit < HOST_BOOT_LIMIT_USEC)
				limit = HOST_BOOT_LIMIT_USEC;
		}
	}
}

/* uname -r after a boot, against what was meant. */
static int check_release(struct host *h, const char *want, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	char *uname[] = { (char *)"uname", (char *)"-r", NULL };

	if (host_run(h, uname, 2, &out, &err, 60ULL * 1000000) != 0 || !out.len) {
		diags_add(d, &h->spec->pos, "host '%s' came back but does not answer: %s", h->spec->name,
			  err.len ? err.buf : "?");
		return -EIO;
	}
	strbuf_setlen(&out, strcspn(out.buf, "\n"));
	if (!streq(out.buf, want)) {
		diags_add(d, &h->spec->pos, "host '%s' booted %s, not %s (did the boot fall back to another kernel?)",
			  h->spec->name, out.buf, want);
		return -ESTALE;
	}
	return 0;
}

/* The release lab remembered as the host's own kernel, or NULL. */
static char *own_release(struct host *h)
{
	_cleanup_free_ char *p = path_join(h->dir, "own-kernel");
	_cleanup_strbuf_ struct strbuf own = STRBUF_INIT;

	if (strbuf_read_file(&own, p, 1 << 16) < 0 || !own.len)
		return NULL;
	strbuf_setlen(&own, strcspn(own.buf, "\n"));
	return own.len ? strbuf_detach(&own, NULL) : NULL;
}

/* LINE detached on the host after a second, so the ssh session ends before the old kernel does. */
static void remote_sh_detached(struct host *h, const char *line)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char *go[] = { (char *)"sh", (char *)"-c", NULL, NULL };

	strbuf_addstr(&sb, "nohup sh -c ");
	{
		_cleanup_strbuf_ struct strbuf inner = STRBUF_INIT;

		strbuf_addf(&inner, "sleep 1; %s", line);
		shell_quote(&sb, inner.buf);
	}
	strbuf_addstr(&sb, " >/dev/null 2>&1 </dev/null &");
	go[2] = sb.buf;
	host_run(h, go, 3, NULL, NULL, 60ULL * 1000000);
	ssh_control_exit(&h->t);
}

/* "release\ncmdline\n" of the host's own kernel, kept before lab's first kexec. */
static int remember_own_kernel(struct host *h, const struct host_facts *f, struct diags *d)
{
	_cleanup_free_ char *p = path_join(h->dir, "own-kernel");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	if (path_is_file(p))
		return 0;
	strbuf_addf(&sb, "%s\n%s\n", f->release ? f->release : "", f->cmdline ? f->cmdline : "");
	if ((r = fs_write_atomic(p, sb.buf, sb.len, 0644)) < 0)
		diags_add(d, NULL, "cannot write '%s': %s", p, strerror(-r));
	return r;
}

/* Regenerate grub.cfg: Debian's wrapper where there is one. */
static const char update_grub[] = "if command -v update-grub >/dev/null; then update-grub; "
				  "else grub-mkconfig -o /boot/grub/grub.cfg; fi";

/* Run argv on the host; on failure "WHAT failed on 'HOST': stderr" in d and -EIO. */
static int remote(struct host *h, char *const *argv, size_t n, struct strbuf *out, uint64_t secs, struct diags *d,
		  const char *what)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	int r = host_run(h, argv, n, out, &err, secs * 1000000);

	if (r == 0)
		return 0;
	while (err.len && (err.buf[err.len - 1] == '\n' || err.buf[err.len - 1] == ' '))
		strbuf_setlen(&err, err.len - 1);
	diags_add(d, &h->spec->pos, "%s failed on '%s': %s", what, h->spec->name,
		  r == -ETIME ? "no answer in time" : err.len ? err.buf : "?");
	return -EIO;
}

static int remote_sh(struct host *h, const char *line, struct strbuf *out, uint64_t secs, struct diags *d,
		     const char *what)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)line, NULL };

	return remote(h, argv, 3, out, secs, d, what);
}

/* What the GRUB path needs on the host (lab host check's GRUB rows), each miss with its fix, before anything is copied. */
static int grub_preflight(struct host *h, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct host_check *c = NULL;
	size_t n = 0;
	int r;

	if ((r = script(h, check_script, &out, d)) < 0)
		return r;
	grub_checks(out.buf, &c, &n);
	for (size_t i = 0; i < n; i++)
		if (!c[i].ok) {
			diags_add(d, &h->spec->pos, "host '%s' cannot boot through GRUB: %s; %s", h->spec->name,
				  c[i].detail, c[i].fix);
			r = -EINVAL;
		}
	host_checks_free(c, n);
	return r;
}

/*
 * The kernel in /boot for GRUB, its entry armed for the next boot only.
 * When no default is saved yet, the host's own kernel is made the saved
 * one first: update-grub lists the newest version first, which may be
 * lab's, and the fallback must be the host's own kernel.
 */
static int grub_arm(struct host *h, const struct kartifact *k, const char *dir, const char *own_release,
		    const struct host_boot_opts *o, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf cfg = STRBUF_INIT, env = STRBUF_INIT;
	_cleanup_free_ char *entry = NULL, *own = NULL, *list = path_join(h->dir, "grub-installed");
	char *cat[] = { (char *)"cat", (char *)"/boot/grub/grub.cfg", NULL };
	char *editenv[] = { (char *)"grub-editenv", (char *)"list", NULL };
	int r;

	boot_step(o, "install it in /boot and update-grub");
	{
		_cleanup_free_ char *src = path_join(dir, "bzImage"), *tmp = xasprintf("/boot/vmlinuz-%s.new", k->release);
		_cleanup_free_ char *dst = xasprintf("/boot/vmlinuz-%s", k->release);
		_cleanup_free_ char *isrc = path_join(dir, "initrd.img"), *idst = xasprintf("/boot/initrd.img-%s", k->release);
		char *cp[] = { (char *)"cp", src, tmp, NULL };
		char *mv[] = { (char *)"mv", tmp, dst, NULL };
		char *icp[] = { (char *)"cp", isrc, idst, NULL };

		if ((r = remote(h, cp, 3, NULL, 120, d, "copying the kernel to /boot")) < 0 ||
		    (r = remote(h, mv, 3, NULL, 60, d, "copying the kernel to /boot")) < 0 ||
		    (h->spec->initrd && (r = remote(h, icp, 3, NULL, 120, d, "copying the initramfs to /boot")) < 0) ||
		    (r = remote_sh(h, update_grub, NULL, 300, d, "update-grub")) < 0)
			return r;
	}
	/* remembered at once: restore removes it even if what follows fails */
	{
		_cleanup_strbuf_ struct strbuf l = STRBUF_INIT;

		strbuf_addf(&l, "%s\n", k->release);
		if ((r = fs_append(list, l.buf, l.len)) < 0) {
			diags_add(d, NULL, "cannot write '%s': %s", list, strerror(-r));
			return r;
		}
	}
	if ((r = remote(h, cat, 2, &cfg, 60, d, "reading /boot/grub/grub.cfg")) < 0)
		return r;
	if (host_grub_entry(cfg.buf ? cfg.buf : "", k->release, &entry) < 0) {
		diags_add(d, &h->spec->pos, "update-grub on '%s' made no entry for /boot/vmlinuz-%s in /boot/grub/grub.cfg",
			  h->spec->name, k->release);
		return -ENOENT;
	}
	if ((r = remote(h, editenv, 2, &env, 60, d, "grub-editenv list")) < 0)
		return r;
	if (!env.buf || (!str_startswith(env.buf, "saved_entry=") && !strstr(env.buf, "\nsaved_entry="))) {
		if (!own_release || host_grub_entry(cfg.buf, own_release, &own) < 0) {
			diags_add(d, &h->spec->pos, "host '%s' has no saved GRUB default and its own kernel %s has no "
						    "entry: set one with grub-set-default first", h->spec->name,
				  own_release ? own_release : "?");
			return -ENOENT;
		}
		{
			char *set[] = { (char *)"grub-set-default", own, NULL };

			boot_step(o, "its own kernel made GRUB's saved default");
			if ((r = remote(h, set, 2, NULL, 60, d, "grub-set-default")) < 0)
				return r;
		}
	}
	{
		char *once[] = { (char *)"grub-reboot", entry, NULL };

		boot_step(o, "grub-reboot: its entry for the next boot only");
		return remote(h, once, 2, NULL, 60, d, "grub-reboot");
	}
}

static int kexec_load(struct host *h, const char *dir, const struct host_boot_opts *o, struct diags *d)
{
	_cleanup_strv_ struct strv argv = STRV_INIT;
	_cleanup_free_ char *img = xasprintf("%s/bzImage", dir), *append = NULL, *line = NULL, *initrd = NULL;

	boot_step(o, "kexec -l");
	strv_push(&argv, "kexec");
	strv_push(&argv, "-l");
	strv_push(&argv, img);
	if (h->spec->initrd) {
		initrd = xasprintf("--initrd=%s/initrd.img", dir);
		strv_push(&argv, initrd);
	}
	if (o && o->cmdline) {
		line = xasprintf("--command-line=%s", o->cmdline);
		strv_push(&argv, line);
	} else {
		strv_push(&argv, "--reuse-cmdline");
		if (h->spec->cmdline) {
			append = xasprintf("--append=%s", h->spec->cmdline);
			strv_push(&argv, append);
		}
	}
	return remote(h, argv.v, argv.n, NULL, 120, d, "kexec -l");
}

/* bzImage (and modules) into DIR on the host; an initramfs there when the host wants one. */
static int copy_kernel(struct host *h, const struct kartifact *k, const char *dir, const struct host_boot_opts *o,
		       struct diags *d)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	_cleanup_free_ char *to = xasprintf(":%s/bzImage", dir);
	char *mk[] = { (char *)"mkdir", (char *)"-p", (char *)dir, NULL };
	_cleanup_command_ struct command cp = { 0 };
	int r;

	boot_step(o, "copy the kernel");
	if ((r = remote(h, mk, 3, NULL, 60, d, "creating the kernel's folder")) < 0)
		return r;
	scp_command(&cp, &h->t, k->bzimage, to);
	cp.err = &err;
	if (command_run(&cp) != 0) {
		diags_add(d, &h->spec->pos, "cannot copy %s to '%s': %s", k->bzimage, h->spec->name,
			  err.len ? err.buf : "?");
		return -EIO;
	}
	if (k->modules) {
		/* modules_install's tree, unpacked at / on the host */
		_cleanup_free_ char *mods = path_join(k->dir, "modules"), *tarp = path_join(k->dir, "modules.tar");
		_cleanup_free_ char *mto = xasprintf(":%s/modules.tar", dir), *rtar = xasprintf("%s/modules.tar", dir);
		_cleanup_command_ struct command mcp = { 0 };
		/* unpacked by the host's own tar, over ssh: lab's files there are the host's business */
		char *untar[] = { (char *)"tar", (char *)"-C", (char *)"/", (char *)"-xf", rtar, NULL };

		boot_step(o, "copy the modules");
		scp_command(&mcp, &h->t, tarp, mto);
		strbuf_reset(&err);
		mcp.err = &err;
		if (tarball_create(mods, "lib", tarp, &err) < 0 || command_run(&mcp) != 0) {
			diags_add(d, &h->spec->pos, "cannot copy the modules of %s to '%s': %s", k->release,
				  h->spec->name, err.len ? err.buf : "?");
			return -EIO;
		}
		if ((r = remote(h, untar, 5, NULL, 600, d, "unpacking the modules")) < 0)
			return r;
	}
	if (h->spec->initrd) {
		/* initramfs-tools reads /lib/modules/RELEASE: a kernel without modules gets an empty, depmod'ed one */
		_cleanup_free_ char *mdir = xasprintf("/lib/modules/%s", k->release), *out = path_join(dir, "initrd.img");
		char *mkd[] = { (char *)"mkdir", (char *)"-p", mdir, NULL };
		char *dep[] = { (char *)"depmod", k->release, NULL };
		char *mki[] = { (char *)"mkinitramfs", (char *)"-o", out, k->release, NULL };

		boot_step(o, "mkinitramfs");
		if ((r = remote(h, mkd, 3, NULL, 60, d, "creating its modules folder")) < 0 ||
		    (r = remote(h, dep, 2, NULL, 120, d, "depmod")) < 0 ||
		    (r = remote(h, mki, 4, NULL, 600, d, "mkinitramfs (initramfs-tools)")) < 0)
			return r;
	}
	return 0;
}

int host_boot(struct host *h, const struct kartifact *k, const struct host_boot_opts *o, struct diags *d)
{
	_cleanup_free_ char *dir = xasprintf("/var/lib/lab/kernels/%s", k->release), *newid = NULL;
	enum host_boot via = o && o->via_given ? o->via : h->spec->boot;
	struct host_facts f;
	int r;

	boot_step(o, "facts before the boot");
	if ((r = host_facts(h, &f, d)) < 0)
		return r;
	if ((r = remember_own_kernel(h, &f, d)) < 0)
		goto out;
	if (via == HOST_BOOT_GRUB && (r = grub_preflight(h, d)) < 0)
		goto out;
	if ((r = copy_kernel(h, k, dir, o, d)) < 0)
		goto out;
	if (via == HOST_BOOT_GRUB) {
		_cleanup_free_ char *own = own_release(h);

		if ((r = grub_arm(h, k, dir, own, o, d)) < 0)
			goto out;
		boot_step(o, "reboot into it");
		remote_sh_detached(h, "reboot");
	} else {
		if ((r = kexec_load(h, dir, o, d)) < 0)
			goto out;
		boot_step(o, "kexec into it");
		remote_sh_detached(h, "if [ \"$(cat /proc/1/comm)\" = systemd ]; then systemctl kexec; else kexec -e; fi");
	}
	boot_step(o, "waiting for the new boot");
	if ((r = wait_new_boot(h, f.boot_id ? f.boot_id : "", o, &newid, d)) < 0)
		goto out;
	boot_step(o, "check the release");
	r = check_release(h, k->release, d);
out:
	host_facts_release(&f);
	return r;
}

/* Remove the kernels lab installed in /boot for GRUB, then update-grub. */
static int grub_uninstall(struct host *h, const struct host_boot_opts *o, struct diags *d)
{
	_cleanup_free_ char *list = path_join(h->dir, "grub-installed");
	_cleanup_strbuf_ struct strbuf rels = STRBUF_INIT;
	_cleanup_strv_ struct strv v = STRV_INIT, rm = STRV_INIT;
	int r;

	if (strbuf_read_file(&rels, list, 1 << 20) < 0 || !rels.len)
		return 0;
	boot_step(o, "remove lab's kernels from /boot and update-grub");
	strv_split(&v, rels.buf, '\n');
	strv_push(&rm, "rm");
	strv_push(&rm, "-f");
	for (size_t i = 0; i < v.n; i++)
		if (*v.v[i]) {
			strv_push_take(&rm, xasprintf("/boot/vmlinuz-%s", v.v[i]));
			strv_push_take(&rm, xasprintf("/boot/initrd.img-%s", v.v[i]));
		}
	if ((r = remote(h, rm.v, rm.n, NULL, 60, d, "removing lab's kernels from /boot")) < 0 ||
	    (r = remote_sh(h, update_grub, NULL, 300, d, "update-grub")) < 0)
		return r;
	unlink(list);
	return 0;
}

int host_restore(struct host *h, const struct host_boot_opts *o, char **ret_release, struct diags *d)
{
	_cleanup_free_ char *p = path_join(h->dir, "own-kernel"), *own = own_release(h), *old = NULL, *newid = NULL;
	int r;

	if (!own) {
		diags_add(d, &h->spec->pos, "lab never booted a kernel on '%s': its own kernel is what runs", h->spec->name);
		return -ENOENT;
	}
	boot_step(o, "reboot into its own kernel");
	if (!(old = probe_boot_id(h))) {
		diags_add(d, &h->spec->pos, "host '%s' does not answer", h->spec->name);
		return -EIO;
	}
	remote_sh_detached(h, "reboot");
	boot_step(o, "waiting for the new boot");
	if ((r = wait_new_boot(h, old, o, &newid, d)) < 0)
		return r;
	if ((r = check_release(h, own, d)) < 0)
		return r;
	if ((r = grub_uninstall(h, o, d)) < 0)
		return r;
	unlink(p);
	*ret_release = TAKE_PTR(own);
	return 0;
}
