/* SPDX-License-Identifier: MIT */
/*
 * A VM's life, whichever backend runs its domain (see vm.h, backend.h):
 * the instance, the domain XML, the holder, readiness, teardown.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../image/seed.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../util/strbuf.h"
#include "../util/units.h"
#include "backend.h"
#include "vm.h"
#include "../util/banned.h"

#define CONSOLE_KEEP (256 * 1024)
#define FAIL_LINES 50

static const char *const boot_failures[] = {
	"Kernel panic - not syncing", "kernel BUG at", "BUG: unable to handle", "BUG: kernel NULL pointer",
	"Oops: ", "general protection fault", "Unable to mount root fs", "VFS: Cannot open root device",
	"Kernel Offset: ", "---[ end trace",
	/* lab's images: the seed's boot work failed (a refused sysctl), so sshd never starts */
	"lab-seed: FAILED",
};

void vm_release(struct vm *v)
{
	free(v->name);
	free(v->dir);
	free(v->domain);
	free(v->uri);
	free(v->topology);
	free(v->variant);
	free(v->release);
	free(v->image);
	free(v->console);
	free(v->identity);
	free(v->known_hosts);
	free(v->alias);
	free(v->control);
	free(v->host_name);
	free(v->remote_dir);
	free(v->remote_console);
	free(v->via_user);
	free(v->via_host);
	free(v->via_identity);
	free(v->via_known_hosts);
	free(v->via_control);
	memset(v, 0, sizeof(*v));
}

/* v->via from the strings vm.json keeps */
static void set_via(struct vm *v)
{
	v->via = (struct ssh_target){
		.user = v->via_user,
		.host = v->via_host,
		.port = v->via_port,
		.identity = v->via_identity,
		.known_hosts = v->via_known_hosts,
		.control = v->via_control,
	};
}

void vms_free(struct vm *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vm_release(&v[i]);
	free(v);
}

void vm_ssh_target(const struct vm *v, struct ssh_target *t)
{
	*t = (struct ssh_target){
		.port = v->port,
		.identity = v->identity,
		.known_hosts = v->known_hosts,
		.alias = v->alias,
		.control = v->control,
		.via = v->via_host ? &v->via : NULL,
	};
}

/* The backend that runs v's domain; a struct vm made by hand (the tests) says it by its host. */
static const struct vm_backend_ops *backend(const struct vm *v)
{
	return v->backend ? v->backend : v->host_name ? &vm_backend_remote : &vm_backend_local;
}

void vm_console_sync(const struct vm *v)
{
	backend(v)->console_sync(v);
}

static bool process_alive(pid_t pid)
{
	_cleanup_free_ char *p = NULL, *stat = NULL;
	const char *rp;

	if (pid <= 0)
		return false;
	p = xasprintf("/proc/%d/stat", (int)pid);
	stat = vm_read_trimmed(p);
	/* a process that exited may stay a zombie where nothing reaps it */
	return stat && (rp = strrchr(stat, ')')) && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

bool vm_alive(const struct vm *v)
{
	return process_alive(v->holder);
}

void vm_format_json(const struct vm *v, struct json *j)
{
	json_object_begin(j);
	json_kv_string(j, "name", v->name);
	json_kv_string(j, "domain", v->domain);
	json_kv_string(j, "uri", v->uri);
	json_kv_string(j, "topology", v->topology);
	json_kv_string(j, "variant", v->variant);
	json_kv_string(j, "release", v->release);
	json_kv_string(j, "image", v->image);
	json_kv_string(j, "console", v->console);
	json_kv_string(j, "identity", v->identity);
	json_kv_string(j, "known_hosts", v->known_hosts);
	json_kv_string(j, "host_key_alias", v->alias);
	json_kv_string(j, "control", v->control);
	json_kv_uint(j, "port", v->port);
	if (v->host_name) {
		json_kv_string(j, "host", v->host_name);
		json_kv_string(j, "remote_dir", v->remote_dir);
		json_kv_string(j, "remote_console", v->remote_console);
		json_kv_string(j, "via_user", v->via_user);
		json_kv_string(j, "via_host", v->via_host);
		json_kv_uint(j, "via_port", v->via_port);
		json_kv_string(j, "via_identity", v->via_identity);
		json_kv_string(j, "via_known_hosts", v->via_known_hosts);
		json_kv_string(j, "via_control", v->via_control);
	}
	json_kv_uint(j, "holder", (uint64_t)v->holder);
	json_kv_uint(j, "owner", (uint64_t)v->owner);
	json_key(j, "boot_seconds");
	json_double(j, v->boot_seconds);
	json_object_end(j);
}

int vm_save(const struct vm *v)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *path = path_join(v->dir, "vm.json");
	struct json j;

	json_init(&j, &sb, true);
	vm_format_json(v, &j);
	json_finish(&j);
	return fs_write_atomic(path, sb.buf, sb.len, 0644);
}

int vm_load(const char *state, const char *name, struct vm *ret, struct diags *d)
{
	_cleanup_free_ char *dir = dirs_vm(state, name), *path = path_join(dir, "vm.json");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	_cleanup_free_ char *err = NULL;
	struct vm v = { 0 };
	double x;

	if (!str_is_name(name) || strbuf_read_file(&sb, path, 1 << 20) < 0) {
		diags_add(d, NULL, "no VM '%s' (lab vm ls lists them)", name);
		return -ENOENT;
	}
	if (json_doc_parse(sb.buf ? sb.buf : "", sb.len, &doc, &err) < 0) {
		diags_add(d, NULL, "%s: %s", path, err);
		return -EINVAL;
	}
	v.dir = TAKE_PTR(dir);
	v.name = json_doc_string(doc, "name");
	v.domain = json_doc_string(doc, "domain");
	v.uri = json_doc_string(doc, "uri");
	v.topology = json_doc_string(doc, "topology");
	v.variant = json_doc_string(doc, "variant");
	v.release = json_doc_string(doc, "release");
	v.image = json_doc_string(doc, "image");
	v.console = json_doc_string(doc, "console");
	v.identity = json_doc_string(doc, "identity");
	v.known_hosts = json_doc_string(doc, "known_hosts");
	v.alias = json_doc_string(doc, "host_key_alias");
	v.control = json_doc_string(doc, "control");
	if (json_doc_number(doc, "port", &x) == 0)
		v.port = (unsigned)x;
	if (json_doc_number(doc, "holder", &x) == 0)
		v.holder = (pid_t)x;
	if (json_doc_number(doc, "owner", &x) == 0)
		v.owner = (pid_t)x;
	if (json_doc_number(doc, "boot_seconds", &x) == 0)
		v.boot_seconds = x;
	if ((v.host_name = json_doc_string(doc, "host"))) {
		v.remote_dir = json_doc_string(doc, "remote_dir");
		v.remote_console = json_doc_string(doc, "remote_console");
		v.via_user = json_doc_string(doc, "via_user");
		v.via_host = json_doc_string(doc, "via_host");
		v.via_identity = json_doc_string(doc, "via_identity");
		v.via_known_hosts = json_doc_string(doc, "via_known_hosts");
		v.via_control = json_doc_string(doc, "via_control");
		if (json_doc_number(doc, "via_port", &x) == 0)
			v.via_port = (unsigned)x;
		set_via(&v);
	}
	v.backend = v.host_name ? &vm_backend_remote : &vm_backend_local;
	if (!v.name || !v.domain || !v.identity || !v.known_hosts || !v.port) {
		diags_add(d, NULL, "'%s' is not a VM lab wrote", path);
		vm_release(&v);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

int vm_list(const char *state, struct vm **ret, bool **alive, size_t *n)
{
	_cleanup_free_ char *dir = path_join(state, "vms");
	struct vm *v = NULL;
	bool *a = NULL;
	size_t count = 0, alloc = 0, aalloc = 0;
	struct dirent **names = NULL;
	int m = scandir(dir, &names, NULL, alphasort);

	*ret = NULL;
	*alive = NULL;
	*n = 0;
	if (m < 0)
		return errno == ENOENT ? 0 : -errno;
	for (int i = 0; i < m; i++) {
		_cleanup_diags_ struct diags d = { 0 };
		struct vm one = { 0 };

		if (names[i]->d_name[0] != '.' && vm_load(state, names[i]->d_name, &one, &d) == 0) {
			GROW(v, alloc, count + 1);
			GROW(a, aalloc, count + 1);
			a[count] = vm_alive(&one);
			v[count++] = one;
		}
		free(names[i]);
	}
	free(names);
	*ret = v;
	*alive = a;
	*n = count;
	return 0;
}

static bool wait_gone(pid_t pid, const struct vm *v, double seconds)
{
	double end = now_sec() + seconds;

	while (now_sec() < end) {
		waitpid(pid, NULL, WNOHANG);
		if (!vm_alive(v))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

pid_t vm_qemu_pid(const struct vm *v)
{
	return backend(v)->qemu_pid(v);
}

/* The last resort when a holder will not go. */
static void kill_qemu(const struct vm *v)
{
	pid_t pid = vm_qemu_pid(v);

	if (pid > 0)
		kill(pid, SIGKILL);
}

int vm_placement(const struct vm *v, struct strbuf *out)
{
	pid_t pid = vm_qemu_pid(v);
	_cleanup_free_ char *taskdir = NULL;
	DIR *dh;
	struct dirent *de;

	if (pid <= 0)
		return -ENOENT;
	taskdir = xasprintf("/proc/%d/task", (int)pid);
	if (!(dh = opendir(taskdir)))
		return -errno;
	while ((de = readdir(dh))) {
		_cleanup_free_ char *comm = NULL, *statp = NULL, *commp = NULL;
		_cleanup_strbuf_ struct strbuf st = STRBUF_INIT;
		const char *a;

		if (de->d_name[0] == '.')
			continue;
		commp = xasprintf("%s/%s/comm", taskdir, de->d_name);
		statp = xasprintf("%s/%s/status", taskdir, de->d_name);
		comm = vm_read_trimmed(commp);
		if (!comm || strbuf_read_file(&st, statp, 1 << 16) < 0 || !st.buf ||
		    !(a = strstr(st.buf, "Cpus_allowed_list:")))
			continue;
		a += strlen("Cpus_allowed_list:");
		a += strspn(a, " \t");
		strbuf_addf(out, "%s\t%s\t%.*s\n", de->d_name, comm, (int)strcspn(a, "\n"), a);
	}
	closedir(dh);
	return 0;
}

static int teardown(struct vm *v)
{
	struct ssh_target t;

	vm_ssh_target(v, &t);
	ssh_control_exit(&t);
	if (vm_alive(v)) {
		kill(v->holder, SIGTERM);
		if (!wait_gone(v->holder, v, 60)) {
			kill(v->holder, SIGKILL);
			kill_qemu(v);
			wait_gone(v->holder, v, 5);
		}
	}
	backend(v)->destroy(v);
	return fs_remove_tree(v->dir);
}

int vm_down(const char *state, const char *name, struct diags *d)
{
	struct vm v = { 0 };
	int r = vm_load(state, name, &v, d);

	if (r < 0)
		return r;
	r = teardown(&v);
	if (r < 0)
		diags_add(d, NULL, "cannot remove '%s'", v.dir);
	vm_release(&v);
	return r;
}

/* ---- boot and readiness ---- */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

static void step(const struct vm_opts *o, const char *name, const char *what)
{
	if (o->progress && o->progress->step)
		o->progress->step(o->progress->userdata, name, what);
}

/* Read what the console got since *off into buf (the last CONSOLE_KEEP bytes). */
static bool read_console(const char *path, off_t *off, struct strbuf *buf)
{
	char chunk[16384];
	bool grew = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	if (lseek(fd, *off, SEEK_SET) == *off) {
		while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
			strbuf_add(buf, chunk, (size_t)n);
			*off += n;
			grew = true;
		}
	}
	close(fd);
	if (buf->len > CONSOLE_KEEP) {
		size_t cut = buf->len - CONSOLE_KEEP;

		memmove(buf->buf, buf->buf + cut, CONSOLE_KEEP);
		strbuf_setlen(buf, CONSOLE_KEEP);
	}
	return grew;
}

static const char *boot_failure(const struct strbuf *console)
{
	for (size_t i = 0; i < sizeof(boot_failures) / sizeof(boot_failures[0]); i++)
		if (strstr(console->buf, boot_failures[i]))
			return boot_failures[i];
	return NULL;
}

static void last_lines(const struct strbuf *console, size_t n, struct strbuf *out)
{
	const char *p = console->buf + console->len;
	size_t lines = 0;

	while (p > console->buf && lines <= n) {
		p--;
		if (*p == '\n')
			lines++;
	}
	if (*p == '\n')
		p++;
	for (; *p; p++)
		if (*p != '\r')
			strbuf_addch(out, (*p >= 0x20 || *p == '\n' || *p == '\t') ? *p : '?');
}

/* uname -r over ssh: 0 and the release, or a negative errno when ssh could not get in yet. */
static int probe_ssh(const struct vm *v, char **ret)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct ssh_target t;
	char *argv[] = { (char *)"uname", (char *)"-r" };

	vm_ssh_target(v, &t);
	t.control = NULL; /* the master starts once the guest is ready */
	t.connect_timeout = 3;
	ssh_command(&c, &t, false);
	ssh_remote_argv(&c, argv, 2);
	c.out = &out;
	c.err = &err;
	c.timeout_usec = 20 * 1000000ULL;
	if (command_run(&c) != 0)
		return -EAGAIN;
	while (out.len && (out.buf[out.len - 1] == '\n' || out.buf[out.len - 1] == '\r'))
		strbuf_setlen(&out, out.len - 1);
	*ret = strbuf_detach(&out, NULL);
	return 0;
}

/* QEMU's own message in its log: "[TIMESTAMP ]qemu-system-ARCH: text"
 * (libvirt passes -msg timestamp=on), not its command line's path */
static bool qemu_message(const char *line)
{
	const char *q = strstr(line, "qemu-system-");

	return q && (q == line || q[-1] == ' ') && q[strcspn(q, ": ")] == ':';
}

char *vm_qemu_stop_reason(const char *log, bool *crashed)
{
	_cleanup_free_ char *text = xstrdup(log);
	_cleanup_free_ char *reason = NULL, *msg = NULL;
	char *line, *save = NULL;

	*crashed = false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *r = strstr(line, "shutting down, reason=");

		if (r) {
			free(reason);
			reason = xstrdup(r + strlen("shutting down, reason="));
		} else if (qemu_message(line)) {
			free(msg);
			msg = xstrdup(line);
		}
	}
	if (!reason)
		return NULL;
	*crashed = streq(reason, "crashed");
	return xasprintf("libvirt: QEMU stopped, reason=%s%s%s", reason, msg ? "; QEMU said: " : "", msg ? msg : "");
}

static char *qemu_stop_reason(const struct vm *v, bool *crashed)
{
	_cleanup_free_ char *path = backend(v)->qemu_log(v);
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;

	*crashed = false;
	if (!path || strbuf_read_file(&text, path, 1 << 20) < 0 || !text.len)
		return NULL;
	return vm_qemu_stop_reason(text.buf, crashed);
}

/* A boot being watched: the limits, and what the console said so far. */
struct boot_watch {
	double t0, timeout, silence;
	double last_output, next_probe, next_sync;
	off_t off;             /* how far the console file was read */
	struct strbuf console; /* its last CONSOLE_KEEP bytes */
	bool crashed;          /* QEMU itself died */
};

/* One look at a booting VM: 1 when ssh answers with the right release, 0
 * while it boots, -1 with what went wrong in *what. */
static int boot_poll(struct vm *v, struct boot_watch *w, char **what)
{
	double now = now_sec();
	const char *why;

	if (now >= w->next_sync) {
		/* on another host the console file is there: bring its new lines over */
		backend(v)->console_sync(v);
		w->next_sync = now_sec() + 1;
	}
	if (read_console(v->console, &w->off, &w->console))
		w->last_output = now;
	if ((why = boot_failure(&w->console))) {
		*what = xasprintf("boot failure: the console says '%s'", why);
		return -1;
	}
	if (interrupted) {
		*what = xstrdup("interrupted");
		return -1;
	}
	if (!vm_alive(v)) {
		_cleanup_free_ char *reason = NULL;

		waitpid(v->holder, NULL, WNOHANG);
		reason = qemu_stop_reason(v, &w->crashed);
		*what = reason ? xasprintf("the domain stopped during boot (%s)", reason)
			       : xstrdup("the domain stopped during boot (a triple fault, a reboot or QEMU exited)");
		return -1;
	}
	if (now - w->last_output > w->silence && now - w->t0 > w->silence) {
		*what = xasprintf("the console printed nothing for %.0f s", w->silence);
		return -1;
	}
	if (now - w->t0 > w->timeout) {
		*what = xasprintf("not ready after %.0f s", w->timeout);
		return -1;
	}
	if (now >= w->next_probe) {
		_cleanup_free_ char *rel = NULL;

		if (probe_ssh(v, &rel) == 0) {
			if (v->release && !streq(rel, v->release)) {
				*what = xasprintf("the guest runs '%s', not the variant's '%s'", rel, v->release);
				return -1;
			}
			return 1;
		}
		/* a refused probe costs one ssh start here; a late one, the boot's time */
		w->next_probe = now_sec() + 0.5;
	}
	return 0;
}

static int wait_ready(struct vm *v, const struct vm_opts *o, double t0, struct diags *d)
{
	struct boot_watch w = { .t0 = t0, .last_output = now_sec(), .next_probe = now_sec() + 2,
				.console = STRBUF_INIT };
	_cleanup_strbuf_ struct strbuf tail = STRBUF_INIT;
	_cleanup_free_ char *what = NULL;
	int r;

	w.timeout = o->timeout_usec ? (double)o->timeout_usec / 1e6 : (vm_kvm_available() ? 180 : 600);
	w.silence = o->silence_usec ? (double)o->silence_usec / 1e6 : 120;
	while ((r = boot_poll(v, &w, &what)) == 0)
		usleep(200 * 1000);
	if (r > 0) {
		v->boot_seconds = now_sec() - t0;
		strbuf_release(&w.console);
		return 0;
	}
	backend(v)->console_sync(v);
	read_console(v->console, &w.off, &w.console);
	last_lines(&w.console, FAIL_LINES, &tail);
	diags_add(d, NULL, "VM '%s' (%s on %s): %s after %.1f s; the last console lines:\n%s", v->name,
		  v->variant ? v->variant : "?", v->topology, what, now_sec() - t0, tail.len ? tail.buf : "(nothing)");
	strbuf_release(&w.console);
	return interrupted ? -EINTR : w.crashed ? -ESRCH : -EIO;
}

int vm_name_check(const char *name, struct diags *d)
{
	if (!str_is_name(name) || strchr(name, '.') || strlen(name) > 40) {
		diags_add(d, NULL, "'%s' is not a VM name (letters, digits, '-', '_'; at most 40)", name);
		return -EINVAL;
	}
	return 0;
}

/* The state folder ready and the name free: a VM that runs keeps it; what a dead one left goes. */
static int claim_name(const char *state, const char *name, struct diags *d)
{
	_cleanup_free_ char *dir = dirs_vm(state, name);
	_cleanup_diags_ struct diags ignore = { 0 };
	struct vm old = { 0 };
	int r;

	if ((r = path_mkdir_p(state, 0700)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", state, strerror(-r));
		return r;
	}
	if ((r = fs_check_private(state, FS_PRIVATE, d)) < 0)
		return r;
	if (vm_load(state, name, &old, &ignore) == 0) {
		bool alive = vm_alive(&old);

		vm_release(&old);
		if (alive) {
			diags_add(d, NULL, "VM '%s' is running (lab vm down %s, or --name)", name, name);
			return -EEXIST;
		}
	}
	fs_remove_tree(dir);
	return 0;
}

/* What vm.json says from the start; the backend is picked here, once. */
static void record_init(struct vm *v, const char *state, const char *name, const struct vm_opts *o)
{
	v->backend = o->remote ? &vm_backend_remote : &vm_backend_local;
	v->name = xstrdup(name);
	v->dir = dirs_vm(state, name);
	v->owner = o->owner;
	v->domain = xasprintf("lab-%s", name);
	v->topology = xstrdup(o->topo->name);
	v->variant = o->variant ? xstrdup(o->variant) : NULL;
	v->release = o->kernel && o->kernel->release ? xstrdup(o->kernel->release) : NULL;
	v->image = xstrdup(o->image->name);
	v->console = path_join(v->dir, "console.log");
	v->control = path_join(v->dir, "ssh.ctl");
}

/* The overlay, the seed and the guest's keys in v->dir. */
static int make_instance(struct vm *v, const struct vm_opts *o, struct instance *in, struct diags *d)
{
	_cleanup_strv_ struct strv cgroups = STRV_INIT;
	struct instance_opts io = { .hostname = v->name, .kernel_dir = o->kernel ? o->kernel->dir : NULL };
	int r;

	if (o->experiment) {
		io.sysctl = o->experiment->sysctl;
		io.nsysctl = o->experiment->nsysctl;
		seed_experiment_cgroups(o->experiment, &cgroups);
		io.cgroups = &cgroups;
	}
	if ((r = image_instance_create(o->cache, o->image, v->dir, &io, in, d)) < 0)
		return r;
	v->identity = xstrdup(in->identity);
	v->known_hosts = xstrdup(in->known_hosts);
	v->alias = xstrdup(in->host_alias);
	return 0;
}

/* The domain XML for the machine the backend made ready, in v->dir/domain.xml. */
static int write_domain(const char *state, const struct vm *v, const struct vm_opts *o, const struct vm_machine *m,
			bool kvm, char **ret_path, struct diags *d)
{
	_cleanup_free_ char *cmdline = domain_cmdline(o->cmdline), *path = path_join(v->dir, "domain.xml");
	_cleanup_free_ char *sock = path_join(v->dir, VM_INSN_SOCKET);
	_cleanup_strbuf_ struct strbuf xml = STRBUF_INIT;
	const struct domain_config dc = {
		.name = v->domain,
		.topo = o->topo,
		.accel = kvm ? ACCEL_KVM : ACCEL_TCG,
		.host = &m->host,
		.kernel = m->kernel,
		.cmdline = cmdline,
		.disk = m->disk,
		.seed = m->seed,
		.modules = m->modules,
		.console = m->console,
		.ssh_port = v->port,
		.vm = v->name,
		.owner = state,
		.variant = o->variant,
		.release = v->release,
		.image = o->image->name,
		.image_id = o->image->id,
		.run_id = o->run_id,
		.cpuset = o->cpuset,
		.reboot_restarts = o->reboot_restarts,
		.insn_plugin = o->insn_plugin,
		.insn_socket = sock,
	};
	int r;

	domain_format_xml(&dc, &xml);
	if ((r = fs_write_atomic(path, xml.buf, xml.len, 0644)) < 0) {
		diags_add(d, NULL, "cannot write '%s': %s", path, strerror(-r));
		return r;
	}
	*ret_path = TAKE_PTR(path);
	return 0;
}

/*
 * The boot journal, <state>/boots.log: a line per guest lab started (unix
 * time, VM, kernel variant, accelerator, host, and "again" for a boot
 * after QEMU crashed in the one before), appended whole, so that
 * what a run or a test cost in boots can be counted, whatever the
 * machine's load made it cost in seconds. Best effort: a boot is never
 * refused for it.
 */
static void journal_boot(const char *state, const struct vm *v, bool kvm, bool again)
{
	_cleanup_free_ char *f = path_join(state, "boots.log");
	_cleanup_free_ char *line = xasprintf("%.0f\t%s\t%s\t%s\t%s%s\n", now_sec(), v->name,
					      v->variant ? v->variant : "-", kvm ? "kvm" : "tcg",
					      v->host_name ? v->host_name : "local", again ? "\tagain" : "");

	(void)fs_append(f, line, strlen(line));
}

/* Start the holder (vm.json names it before the domain starts, so a lab
 * killed from here on leaves a VM that vm_gc finds) and wait for ssh;
 * SIGINT and SIGTERM stop the boot meanwhile. */
static int boot(const char *state, struct vm *v, const struct vm_opts *o, const char *xml_path, bool kvm,
		struct diags *d)
{
	_cleanup_free_ char *log = path_join(v->dir, "holder.log");
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
	int fd = -1, r;
	double t0;

	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	step(o, v->name, kvm ? "starting (KVM)" : "starting (TCG: software emulation)");
	t0 = now_sec();
	r = vm_holder_spawn(v->uri, xml_path, v->domain, log, &v->holder, &fd);
	if (r == 0) {
		vm_save(v);
		r = vm_holder_wait(v->holder, fd, &why);
		journal_boot(state, v, kvm, o->again);
	}
	if (r == 0)
		r = vm_save(v);
	if (r < 0) {
		diags_add(d, NULL, "VM '%s' did not start: %s", v->name, why.len ? why.buf : strerror(-r));
	} else {
		if (backend(v)->started)
			backend(v)->started(v, o);
		step(o, v->name, "booting; waiting for ssh");
		r = wait_ready(v, o, t0, d);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return r;
}

/* A boot that failed: what the console and QEMU said kept in o->evidence, then everything removed. */
static void up_failed(struct vm *v, const struct vm_opts *o)
{
	if (o->evidence && v->dir) {
		_cleanup_free_ char *ql = backend(v)->qemu_log(v);
		_cleanup_free_ char *to_con = path_join(o->evidence, "console.log");
		_cleanup_free_ char *to_qemu = path_join(o->evidence, "qemu.log");

		if (v->console)
			fs_copy_file(v->console, to_con, true);
		if (ql)
			fs_copy_file(ql, to_qemu, true);
	}
	teardown(v);
	vm_release(v);
}

int vm_accel_check(const struct spec_topology *t, bool kvm, struct diags *d)
{
	if (!kvm || t->timing != TIMING_ICOUNT)
		return 0;
	diags_add(d, NULL,
		  "topology '%s' has timing: icount, which QEMU runs only under TCG, and this VM would use KVM: "
		  "--accel tcg, LAB_ACCEL=tcg or timing: host",
		  t->name);
	return -EINVAL;
}

int vm_up(const char *state, const struct vm_opts *o, struct vm *ret, struct diags *d)
{
	const char *name = o->name ? o->name : o->topo->name;
	_cleanup_free_ char *xml_path = NULL;
	struct instance in = { 0 };
	struct vm_machine m = { 0 };
	struct vm v = { 0 };
	bool kvm;
	int r;

	if (vm_name_check(name, d) < 0)
		return -EINVAL;
	if (o->insn_plugin && (o->accel == ACCEL_KVM || o->remote)) {
		diags_add(d, NULL, "VM '%s': the insn monitor counts instructions in a QEMU TCG plugin on this machine: %s",
			  name, o->remote ? "not on a remote host" : "not under KVM (--accel tcg)");
		return -EINVAL;
	}
	interrupted = 0;
	if ((r = claim_name(state, name, d)) < 0)
		return r;
	record_init(&v, state, name, o);
	step(o, name, "overlay and seed");
	if ((r = make_instance(&v, o, &in, d)) < 0)
		goto fail;
	if (v.backend->prepare_step)
		step(o, name, v.backend->prepare_step);
	r = v.backend->prepare(&v, o, &in, &m, d);
	if (v.via_host)
		set_via(&v);
	if (r < 0)
		goto fail;
	kvm = o->accel < 0 ? m.kvm : o->accel == ACCEL_KVM;
	if (kvm && o->insn_plugin) {
		/* QEMU loads TCG plugins only: the insn monitor's guests are emulated */
		step(o, name, "TCG, not KVM: the insn monitor counts instructions in a TCG plugin");
		kvm = false;
	}
	if ((r = vm_accel_check(o->topo, kvm, d)) < 0 || (r = write_domain(state, &v, o, &m, kvm, &xml_path, d)) < 0 ||
	    (r = boot(state, &v, o, xml_path, kvm, d)) < 0)
		goto fail;
	vm_save(&v);
	instance_release(&in);
	vm_machine_release(&m);
	*ret = v;
	return 0;
fail:
	up_failed(&v, o);
	instance_release(&in);
	vm_machine_release(&m);
	/* the signal that stopped the boot goes on to the caller's handler, now that the VM is gone */
	if (interrupted)
		raise(interrupted);
	return r;
}

int vm_reset(const char *state, const char *name, struct diags *d)
{
	struct vm v = { 0 };
	int r = vm_load(state, name, &v, d);

	if (r < 0)
		return r;
	if (!vm_alive(&v)) {
		diags_add(d, NULL, "VM '%s' is not running", name);
		vm_release(&v);
		return -ESRCH;
	}
	r = kill(v.holder, SIGUSR1) < 0 ? -errno : 0;
	if (r < 0)
		diags_add(d, NULL, "cannot reach the holder of '%s': %s", name, strerror(-r));
	vm_release(&v);
	return r;
}

int vm_gc(const char *state, bool dry_run, struct strv *removed, struct diags *d)
{
	struct vm *v = NULL;
	bool *alive = NULL;
	size_t n = 0;
	int r = vm_list(state, &v, &alive, &n);

	if (r < 0) {
		diags_add(d, NULL, "cannot list '%s/vms': %s", state, strerror(-r));
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		/* the process the VM served is gone (a lab run killed with SIGKILL) */
		bool orphan = v[i].owner > 0 && v[i].owner != getpid() && !process_alive(v[i].owner);

		if (alive[i] && !orphan)
			continue;
		strv_push(removed, v[i].name);
		if (dry_run)
			continue;
		/* teardown stops a live holder and kills a QEMU a dead one left */
		if (teardown(&v[i]) < 0)
			diags_add(d, NULL, "cannot remove '%s'", v[i].dir);
	}
	vms_free(v, n);
	free(alive);
	return d->n ? -EIO : 0;
}
