/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../image/seed.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/diag.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/path.h"
#include "../util/units.h"
#include "host.h"
#include "../util/banned.h"

int host_open(const char *state, const char *cache, const struct spec_host *h, struct host *ret, struct diags *d)
{
	struct host x = { .spec = h };
	int r;

	if (h->type != HOST_SSH) {
		diags_add(d, &h->pos, "host '%s' is a libvirt host (uri:), not a bare-metal one (ssh:)", h->name);
		return -EINVAL;
	}
	x.dir = xasprintf("%s/hosts/%s", state, h->name);
	if ((r = path_mkdir_p(x.dir, 0700)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", x.dir, strerror(-r));
		host_close(&x);
		return r;
	}
	x.known_hosts = path_join(x.dir, "known_hosts");
	x.control = path_join(x.dir, "ssh.ctl");
	if (h->identity) {
		/* the loader resolved it (~/ and relative to lab.yaml) */
		x.identity = xstrdup(h->identity);
	} else if ((r = lab_ssh_key(cache, &x.identity, NULL, d)) < 0) {
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
static int need_trust(const struct host *h, struct diags *d)
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

	if ((r = need_trust(h, d)) < 0)
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
	return 0;
}

void host_checks_free(struct host_check *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].detail);
	free(c);
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

/* Wait for a boot id other than `old`; the power-cycle command once if it takes too long. */
static int wait_new_boot(struct host *h, const char *old, const struct host_boot_opts *o, char **ret, struct diags *d)
{
	uint64_t limit = o && o->timeout_usec ? o->timeout_usec : 600ULL * 1000000;
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

int host_boot(struct host *h, const struct kartifact *k, const struct host_boot_opts *o, struct diags *d)
{
	_cleanup_free_ char *dir = xasprintf("/var/lib/lab/kernels/%s", k->release), *img = NULL, *newid = NULL;
	_cleanup_free_ char *append = NULL, *line = NULL;
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	struct host_facts f;
	int r;

	boot_step(o, "facts before the boot");
	if ((r = host_facts(h, &f, d)) < 0)
		return r;
	if ((r = remember_own_kernel(h, &f, d)) < 0)
		goto out;
	boot_step(o, "copy the kernel");
	img = xasprintf("%s/bzImage", dir);
	{
		char *mk[] = { (char *)"mkdir", (char *)"-p", dir, NULL };
		_cleanup_command_ struct command cp = { 0 };
		_cleanup_free_ char *to = xasprintf(":%s", img);

		if ((r = host_run(h, mk, 3, NULL, &err, 60ULL * 1000000)) != 0) {
			diags_add(d, &h->spec->pos, "cannot create %s on '%s': %s", dir, h->spec->name, err.len ? err.buf : "?");
			r = -EIO;
			goto out;
		}
		scp_command(&cp, &h->t, k->bzimage, to);
		cp.err = &err;
		if ((r = command_run(&cp)) != 0) {
			diags_add(d, &h->spec->pos, "cannot copy %s to '%s': %s", k->bzimage, h->spec->name,
				  err.len ? err.buf : "?");
			r = -EIO;
			goto out;
		}
	}
	if (k->modules) {
		/* modules_install's tree, unpacked at / on the host */
		_cleanup_free_ char *mods = path_join(k->dir, "modules"), *tarp = path_join(k->dir, "modules.tar");
		_cleanup_free_ char *to = xasprintf(":%s/modules.tar", dir), *rtar = xasprintf("%s/modules.tar", dir);
		_cleanup_command_ struct command t = { 0 }, cp = { 0 };
		char *untar[] = { (char *)"tar", (char *)"-C", (char *)"/", (char *)"-xf", rtar, NULL };

		boot_step(o, "copy the modules");
		command_init(&t, "tar");
		command_args(&t, "-C", mods, "-cf", tarp, "lib", NULL);
		scp_command(&cp, &h->t, tarp, to);
		cp.err = &err;
		if (command_run(&t) != 0 || command_run(&cp) != 0 || host_run(h, untar, 5, NULL, &err, 600ULL * 1000000) != 0) {
			diags_add(d, &h->spec->pos, "cannot install the modules of %s on '%s': %s", k->release,
				  h->spec->name, err.len ? err.buf : "?");
			r = -EIO;
			goto out;
		}
	}
	boot_step(o, "kexec -l");
	{
		_cleanup_command_ struct command c = { 0 };
		_cleanup_strv_ struct strv argv = STRV_INIT;

		strv_push(&argv, "kexec");
		strv_push(&argv, "-l");
		strv_push(&argv, img);
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
		strbuf_reset(&err);
		if ((r = host_run(h, argv.v, argv.n, NULL, &err, 120ULL * 1000000)) != 0) {
			diags_add(d, &h->spec->pos, "kexec -l failed on '%s': %s", h->spec->name, err.len ? err.buf : "?");
			r = -EIO;
			goto out;
		}
	}
	boot_step(o, "kexec into it");
	{
		/* detached, so the ssh session ends before the old kernel does */
		char *go[] = { (char *)"sh", (char *)"-c",
			       (char *)"nohup sh -c 'sleep 1; if [ \"$(cat /proc/1/comm)\" = systemd ]; then "
				       "systemctl kexec; else kexec -e; fi' >/dev/null 2>&1 </dev/null &",
			       NULL };

		host_run(h, go, 3, NULL, NULL, 60ULL * 1000000);
		ssh_control_exit(&h->t);
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

int host_restore(struct host *h, const struct host_boot_opts *o, char **ret_release, struct diags *d)
{
	_cleanup_free_ char *p = path_join(h->dir, "own-kernel"), *old = NULL, *newid = NULL;
	_cleanup_strbuf_ struct strbuf own = STRBUF_INIT;
	char *reboot[] = { (char *)"sh", (char *)"-c", (char *)"nohup sh -c 'sleep 1; reboot' >/dev/null 2>&1 </dev/null &", NULL };
	int r;

	if (strbuf_read_file(&own, p, 1 << 16) < 0 || !own.len) {
		diags_add(d, &h->spec->pos, "lab never booted a kernel on '%s': its own kernel is what runs", h->spec->name);
		return -ENOENT;
	}
	strbuf_setlen(&own, strcspn(own.buf, "\n"));
	boot_step(o, "reboot into its own kernel");
	if (!(old = probe_boot_id(h))) {
		diags_add(d, &h->spec->pos, "host '%s' does not answer", h->spec->name);
		return -EIO;
	}
	host_run(h, reboot, 3, NULL, NULL, 60ULL * 1000000);
	ssh_control_exit(&h->t);
	boot_step(o, "waiting for the new boot");
	if ((r = wait_new_boot(h, old, o, &newid, d)) < 0)
		return r;
	if ((r = check_release(h, own.buf, d)) < 0)
		return r;
	unlink(p);
	*ret_release = strbuf_detach(&own, NULL);
	return 0;
}
