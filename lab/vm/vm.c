/* SPDX-License-Identifier: MIT */
/*
 * VMs through libvirt: holder processes, readiness, teardown (see vm.h).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include "../image/seed.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/path.h"
#include "../util/paths.h"
#include "../util/strbuf.h"
#include "../util/units.h"
#include "remote.h"
#include "vm.h"
#include "../util/banned.h"

#define CONSOLE_KEEP (256 * 1024)
#define FAIL_LINES 50

static const char *const boot_failures[] = {
	"Kernel panic - not syncing", "kernel BUG at", "BUG: unable to handle", "BUG: kernel NULL pointer",
	"Oops: ", "general protection fault", "Unable to mount root fs", "VFS: Cannot open root device",
	"Kernel Offset: ", "---[ end trace",
};

bool vm_kvm_usable(const char **ret_why)
{
	const char *force = getenv("LAB_ACCEL"), *why = NULL;
	int fd, api;

	if (force && (streq(force, "kvm") || streq(force, "tcg"))) {
		if (streq(force, "tcg"))
			why = "LAB_ACCEL=tcg";
	} else if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		why = "no usable /dev/kvm";
	} else {
		api = ioctl(fd, KVM_GET_API_VERSION, 0);
		close(fd);
		if (api != KVM_API_VERSION)
			why = "/dev/kvm does not speak KVM's API 12";
		else if (access("/sys/module/kvm_pvm", F_OK) == 0)
			/* seen here: an unmodified kernel stops with "kvm-pvm: INTERNAL_ERROR" */
			why = "/dev/kvm is PVM (kvm_pvm), which runs only guests built for it";
	}
	if (ret_why)
		*ret_why = why;
	return !why;
}

bool vm_kvm_available(void)
{
	return vm_kvm_usable(NULL);
}

static char *read_trimmed(const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 1 << 16) < 0)
		return NULL;
	while (sb.len && (sb.buf[sb.len - 1] == '\n' || sb.buf[sb.len - 1] == ' '))
		strbuf_setlen(&sb, sb.len - 1);
	return strbuf_detach(&sb, NULL);
}

void vm_host_layout(struct domain_host *h, char **storage, const char *online, const char *const *nodes, size_t n)
{
	_cleanup_strbuf_ struct strbuf all = STRBUF_INIT;
	size_t offs[DOMAIN_MAX_HOST_NODES + 1];

	if (n > DOMAIN_MAX_HOST_NODES)
		n = DOMAIN_MAX_HOST_NODES;
	h->cpus = NULL;
	h->nnodes = 0;
	offs[0] = 0;
	strbuf_addstr(&all, online && *online ? online : "0");
	strbuf_addch(&all, '\0');
	for (size_t i = 0; i < n; i++) {
		offs[i + 1] = all.len;
		strbuf_addstr(&all, nodes[i]);
		strbuf_addch(&all, '\0');
	}
	*storage = xmalloc(all.len);
	memcpy(*storage, all.buf, all.len);
	h->cpus = *storage + offs[0];
	h->nnodes = (unsigned)n;
	for (size_t i = 0; i < n; i++)
		h->node_cpus[i] = *storage + offs[i + 1];
}

void vm_probe_host(struct domain_host *h, char **storage)
{
	_cleanup_free_ char *online = read_trimmed("/sys/devices/system/cpu/online");
	_cleanup_strv_ struct strv nodes = STRV_INIT;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	h->ncpus = ncpu > 0 ? (unsigned)ncpu : 1;
	for (unsigned node = 0; node < 1024 && nodes.n < DOMAIN_MAX_HOST_NODES; node++) {
		_cleanup_free_ char *p = xasprintf("/sys/devices/system/node/node%u/cpulist", node);
		_cleanup_free_ char *list = read_trimmed(p);

		if (!list) {
			if (node > 0 && !path_is_dir("/sys/devices/system/node"))
				break;
			continue;
		}
		if (*list) /* not a memory-only node */
			strv_push(&nodes, list);
	}
	vm_host_layout(h, storage, online, (const char *const *)nodes.v, nodes.n);
}

/* Whether nothing holds 127.0.0.1:port (a test bind, closed again). */
static bool port_free(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

int vm_pick_port(const char *port_range, bool (*taken)(unsigned port, void *userdata), void *userdata,
		 unsigned *ret)
{
	unsigned low = 32768, span, seed;
	struct timespec ts;

	if (port_range) {
		unsigned l = (unsigned)strtoul(port_range, NULL, 10);

		if (l > 2048 && l <= 65535)
			low = l;
	}
	/* [low/2, low): 16384-32767 by default */
	span = low - low / 2;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = (unsigned)getpid() * 2654435761u ^ (unsigned)ts.tv_nsec;
	for (unsigned i = 0; i < 256; i++) {
		unsigned port = low / 2 + (seed + i * 7919u) % span;

		if (!taken(port, userdata)) {
			*ret = port;
			return 0;
		}
	}
	return -EADDRINUSE;
}

static bool port_taken(unsigned port, void *userdata)
{
	(void)userdata;
	return !port_free(port);
}

/* A port for QEMU's forwarded ssh on this machine (see vm_pick_port). */
static int free_port(unsigned *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, "/proc/sys/net/ipv4/ip_local_port_range", 256) < 0)
		strbuf_reset(&sb);
	return vm_pick_port(sb.buf, port_taken, NULL, ret);
}

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

void vm_console_sync(const struct vm *v)
{
	if (v->remote_console)
		remote_console_sync(&v->via, v->remote_console, v->console);
}

static bool process_alive(pid_t pid)
{
	_cleanup_free_ char *p = NULL, *stat = NULL;
	const char *rp;

	if (pid <= 0)
		return false;
	p = xasprintf("/proc/%d/stat", (int)pid);
	stat = read_trimmed(p);
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

static int save(const struct vm *v)
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
	_cleanup_free_ char *dir = paths_vm(state, name), *path = path_join(dir, "vm.json");
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

/* ---- the holder ---- */

static volatile sig_atomic_t holder_stop;
static volatile sig_atomic_t holder_domain_stopped;

static volatile sig_atomic_t holder_reset;

static void holder_signal(int sig)
{
	if (sig == SIGUSR1)
		holder_reset = 1; /* lab vm reset: the machine's reset button */
	else
		holder_stop = 1;
}

static int holder_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	(void)conn;
	(void)dom;
	(void)opaque;
	if (event == VIR_DOMAIN_EVENT_STOPPED || event == VIR_DOMAIN_EVENT_CRASHED) {
		holder_domain_stopped = 1;
		fprintf(stderr, "lab holder: domain stopped (event %d, detail %d)\n", event, detail);
	}
	return 0;
}

static void holder_tick(int timer, void *opaque)
{
	(void)timer;
	(void)opaque;
}

static void holder_report(int fd, const char *fmt, ...) _printf_(2, 3);
static void holder_report(int fd, const char *fmt, ...)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (fd >= 0 && write(fd, sb.buf, sb.len) < 0)
		fprintf(stderr, "lab holder: cannot report: %s\n", strerror(errno));
}

static const char *virt_error(void)
{
	const virError *e = virGetLastError();

	return e && e->message ? e->message : "unknown libvirt error";
}

int vm_domain_start(const char *uri, const char *xml, void **ret_conn, void **ret_dom, struct strbuf *err)
{
	virConnectPtr conn;
	virDomainPtr dom;

	if (!(conn = virConnectOpen(uri))) {
		strbuf_addf(err, "cannot open %s: %s", uri, virt_error());
		return -EIO;
	}
	if (!(dom = virDomainDefineXML(conn, xml))) {
		strbuf_addf(err, "defining the domain: %s", virt_error());
		virConnectClose(conn);
		return -EINVAL;
	}
	if (virDomainCreate(dom) < 0) {
		strbuf_addf(err, "starting the domain: %s", virt_error());
		virDomainUndefine(dom);
		virDomainFree(dom);
		virConnectClose(conn);
		return -EIO;
	}
	*ret_conn = conn;
	*ret_dom = dom;
	return 0;
}

void vm_domain_stop(void *conn, void *dom)
{
	if (virDomainIsActive(dom) == 1 && virDomainDestroy(dom) < 0)
		fprintf(stderr, "lab holder: destroy: %s\n", virt_error());
	if (virDomainUndefine(dom) < 0)
		fprintf(stderr, "lab holder: undefine: %s\n", virt_error());
	virDomainFree(dom);
	virConnectClose(conn);
}

int vm_domains_owned(void *conn, struct strv *names)
{
	virDomainPtr *doms = NULL;
	int n = virConnectListAllDomains(conn, &doms, 0);

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++) {
		char *md = virDomainGetMetadata(doms[i], VIR_DOMAIN_METADATA_ELEMENT, LAB_XMLNS, 0);

		if (md) {
			strv_push(names, virDomainGetName(doms[i]));
			free(md);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	return 0;
}

_Noreturn void vm_holder_main(const char *uri, const char *xml_path, const char *domain, int ready_fd)
{
	_cleanup_strbuf_ struct strbuf xml = STRBUF_INIT, err = STRBUF_INIT;
	struct sigaction sa = { .sa_handler = holder_signal };
	void *conn = NULL, *dom = NULL;
	int r;

	(void)domain;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if (strbuf_read_file(&xml, xml_path, 1 << 22) < 0) {
		holder_report(ready_fd, "error cannot read %s\n", xml_path);
		_exit(1);
	}
	if (virEventRegisterDefaultImpl() < 0 || vm_domain_start(uri, xml.buf, &conn, &dom, &err) < 0) {
		holder_report(ready_fd, "error %s\n", err.len ? err.buf : virt_error());
		_exit(1);
	}
	virConnectDomainEventRegisterAny(conn, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
					 VIR_DOMAIN_EVENT_CALLBACK(holder_lifecycle), NULL, NULL);
	holder_report(ready_fd, "ok\n");
	if (ready_fd >= 0)
		close(ready_fd);
	virEventAddTimeout(500, holder_tick, NULL, NULL);
	while (!holder_stop && !holder_domain_stopped) {
		r = virEventRunDefaultImpl();
		if (r < 0 && !holder_stop && !holder_reset)
			break;
		if (holder_reset) {
			holder_reset = 0;
			fprintf(stderr, "lab holder: reset: %s\n", virDomainReset(dom, 0) == 0 ? "done" : virt_error());
		}
		if (virDomainIsActive(dom) == 0)
			holder_domain_stopped = 1;
	}
	fprintf(stderr, "lab holder: %s\n", holder_stop ? "asked to stop" : "the domain stopped");
	vm_domain_stop(conn, dom);
	_exit(0);
}

/* Fork the holder, detached (its own session, stdio to holder.log). */
static int save(const struct vm *v);

/* Fork the holder; vm.json names it before the domain starts, so a lab
 * killed from here on leaves a VM that vm_gc finds. */
static int spawn_holder(struct vm *v, const char *xml_path, struct strbuf *why)
{
	_cleanup_free_ char *log = path_join(v->dir, "holder.log");
	int p[2];
	pid_t pid;
	char buf[4096];
	ssize_t n;
	size_t got = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644), nul = open("/dev/null", O_RDONLY);

		close(p[0]);
		setsid();
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		vm_holder_main(v->uri, xml_path, v->domain, p[1]);
	}
	close(p[1]);
	v->holder = pid;
	save(v);
	while (got < sizeof(buf) - 1 && (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += (size_t)n;
	}
	close(p[0]);
	buf[got] = '\0';
	if (!str_startswith(buf, "ok")) {
		int status;

		waitpid(pid, &status, 0);
		strbuf_addstr(why, got ? buf : "the holder exited without a word (see holder.log)");
		while (why->len && why->buf[why->len - 1] == '\n')
			strbuf_setlen(why, why->len - 1);
		return -EIO;
	}
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

/* The pid of this VM's QEMU from libvirt's pid file, checked against its
 * command line (a stale pid file must not name a reused pid); 0 if none. */
static pid_t qemu_pid(const struct vm *v)
{
	_cleanup_free_ char *pidf = xasprintf("%s/libvirt/run/qemu/%s.pid", v->dir, v->domain);
	_cleanup_free_ char *s = read_trimmed(pidf);
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

pid_t vm_qemu_pid(const struct vm *v)
{
	return v->host_name ? -1 : qemu_pid(v);
}

/* The last resort when a holder will not go. */
static void kill_qemu(const struct vm *v)
{
	pid_t pid = qemu_pid(v);

	if (pid > 0)
		kill(pid, SIGKILL);
}

int vm_placement(const struct vm *v, struct strbuf *out)
{
	pid_t pid = qemu_pid(v);
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
		comm = read_trimmed(commp);
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

static void quiet_errors(void *userdata, virErrorPtr e);

/* Destroy and undefine the VM's domain on its remote host, if it is still there. */
static void remote_domain_destroy(const struct vm *v)
{
	virConnectPtr conn;
	virDomainPtr dom;

	if (!v->uri || !v->domain)
		return;
	virSetErrorFunc(NULL, quiet_errors);
	if (!(conn = virConnectOpen(v->uri)))
		return;
	if ((dom = virDomainLookupByName(conn, v->domain))) {
		virDomainDestroy(dom);
		virDomainUndefine(dom);
		virDomainFree(dom);
	}
	virConnectClose(conn);
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
	/* a holder that died without tearing down leaves its QEMU: the pid
	 * file is in the folder about to go, so this is the last chance */
	kill_qemu(v);
	if (v->remote_dir) {
		/* on another host only libvirt there can stop what a dead holder left */
		remote_domain_destroy(v);
		remote_vm_remove(&v->via, v->remote_dir);
		ssh_control_exit(&v->via);
	}
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

/* libvirt's log of a local VM's QEMU; NULL on a remote host, where it stays */
static char *qemu_log_path(const struct vm *v)
{
	if (v->host_name || !v->dir || !v->domain)
		return NULL;
	return xasprintf("%s/libvirt/log/qemu/%s.log", v->dir, v->domain);
}

static char *qemu_stop_reason(const struct vm *v, bool *crashed)
{
	_cleanup_free_ char *path = qemu_log_path(v);
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;

	*crashed = false;
	if (!path || strbuf_read_file(&text, path, 1 << 20) < 0 || !text.len)
		return NULL;
	return vm_qemu_stop_reason(text.buf, crashed);
}

static int wait_ready(struct vm *v, const struct vm_opts *o, double t0, struct diags *d)
{
	bool crashed = false;
	_cleanup_strbuf_ struct strbuf console = STRBUF_INIT;
	double timeout = o->timeout_usec ? (double)o->timeout_usec / 1e6 : (vm_kvm_available() ? 180 : 600);
	double silence = o->silence_usec ? (double)o->silence_usec / 1e6 : 120;
	double last_output = now_sec(), next_probe = now_sec() + 2;
	off_t off = 0;
	const char *why = NULL;
	_cleanup_free_ char *what = NULL;

	double next_sync = 0;

	for (;;) {
		double now = now_sec();

		if (v->remote_console && now >= next_sync) {
			/* the console file is on the other host: bring its new lines over */
			remote_console_sync(&v->via, v->remote_console, v->console);
			next_sync = now_sec() + 1;
		}
		if (read_console(v->console, &off, &console))
			last_output = now;
		if ((why = boot_failure(&console))) {
			what = xasprintf("boot failure: the console says '%s'", why);
			break;
		}
		if (interrupted) {
			what = xstrdup("interrupted");
			break;
		}
		if (!vm_alive(v)) {
			_cleanup_free_ char *reason = NULL;

			waitpid(v->holder, NULL, WNOHANG);
			reason = qemu_stop_reason(v, &crashed);
			what = reason ? xasprintf("the domain stopped during boot (%s)", reason)
				      : xstrdup("the domain stopped during boot (a triple fault, a reboot or QEMU exited)");
			break;
		}
		if (now - last_output > silence && now - t0 > silence) {
			what = xasprintf("the console printed nothing for %.0f s", silence);
			break;
		}
		if (now - t0 > timeout) {
			what = xasprintf("not ready after %.0f s", timeout);
			break;
		}
		if (now >= next_probe) {
			_cleanup_free_ char *rel = NULL;

			if (probe_ssh(v, &rel) == 0) {
				if (v->release && !streq(rel, v->release)) {
					what = xasprintf("the guest runs '%s', not the variant's '%s'", rel, v->release);
					break;
				}
				v->boot_seconds = now_sec() - t0;
				return 0;
			}
			next_probe = now_sec() + 1;
		}
		usleep(200 * 1000);
	}
	{
		_cleanup_strbuf_ struct strbuf tail = STRBUF_INIT;

		if (v->remote_console)
			remote_console_sync(&v->via, v->remote_console, v->console);
		read_console(v->console, &off, &console);
		last_lines(&console, FAIL_LINES, &tail);
		diags_add(d, NULL, "VM '%s' (%s on %s): %s after %.1f s; the last console lines:\n%s", v->name,
			  v->variant ? v->variant : "?", v->topology, what, now_sec() - t0,
			  tail.len ? tail.buf : "(nothing)");
	}
	return interrupted ? -EINTR : crashed ? -ESRCH : -EIO;
}

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

static void quiet_errors(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

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
	virSetErrorFunc(NULL, quiet_errors);
	if (virEventRegisterDefaultImpl() < 0) {
		strbuf_addf(err, "cannot register libvirt's event loop: %s", virt_error());
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
		strbuf_addf(err, "cannot open %s: %s", uri, virt_error());
		r = -EIO;
		goto out;
	}
	virConnectGetLibVersion(conn, &lib);
	if (virConnectGetVersion(conn, &hv) < 0 || !hv) {
		strbuf_addf(err, "%s answers but has no QEMU: %s", uri, virt_error());
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

int vm_name_check(const char *name, struct diags *d)
{
	if (!str_is_name(name) || strchr(name, '.') || strlen(name) > 40) {
		diags_add(d, NULL, "'%s' is not a VM name (letters, digits, '-', '_'; at most 40)", name);
		return -EINVAL;
	}
	return 0;
}

int vm_up(const char *state, const struct vm_opts *o, struct vm *ret, struct diags *d)
{
	const char *name = o->name ? o->name : o->topo->name;
	_cleanup_free_ char *hoststore = NULL, *cmdline = NULL, *xml_path = NULL, *root = NULL;
	_cleanup_strbuf_ struct strbuf xml = STRBUF_INIT, why = STRBUF_INIT;
	_cleanup_strv_ struct strv cgroups = STRV_INIT;
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
	struct domain_host host;
	struct domain_config dc;
	struct instance in = { 0 };
	struct instance_opts io = { 0 };
	struct vm v = { 0 };
	bool kvm = o->accel < 0 ? vm_kvm_available() : o->accel == ACCEL_KVM;
	struct remote_vm rv = { 0 };
	double t0;
	int r;

	if (vm_name_check(name, d) < 0)
		return -EINVAL;
	interrupted = 0;
	v.name = xstrdup(name);
	if ((r = path_mkdir_p(state, 0700)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", state, strerror(-r));
		return r;
	}
	if ((r = fs_check_private(state, FS_PRIVATE, d)) < 0)
		return r;
	v.dir = paths_vm(state, name);
	v.owner = o->owner;
	{
		struct vm old = { 0 };
		_cleanup_diags_ struct diags ignore = { 0 };

		if (vm_load(state, name, &old, &ignore) == 0) {
			bool alive = vm_alive(&old);

			vm_release(&old);
			if (alive) {
				diags_add(d, NULL, "VM '%s' is running (lab vm down %s, or --name)", name, name);
				vm_release(&v);
				return -EEXIST;
			}
		}
		/* what a dead VM left: reuse the folder */
		fs_remove_tree(v.dir);
	}
	v.domain = xasprintf("lab-%s", name);
	v.topology = xstrdup(o->topo->name);
	v.variant = o->variant ? xstrdup(o->variant) : NULL;
	v.release = o->kernel && o->kernel->release ? xstrdup(o->kernel->release) : NULL;
	v.image = xstrdup(o->image->name);
	v.console = path_join(v.dir, "console.log");
	v.control = path_join(v.dir, "ssh.ctl");
	root = path_join(v.dir, "libvirt");
	v.uri = o->uri ? xstrdup(o->uri) : xasprintf("qemu:///embed?root=%s", root);

	step(o, name, "overlay and seed");
	io.hostname = name;
	if (o->experiment) {
		io.sysctl = o->experiment->sysctl;
		io.nsysctl = o->experiment->nsysctl;
		seed_experiment_cgroups(o->experiment, &cgroups);
		io.cgroups = &cgroups;
	}
	io.kernel_dir = o->kernel ? o->kernel->dir : NULL;
	if ((r = image_instance_create(o->cache, o->image, v.dir, &io, &in, d)) < 0)
		goto fail;
	v.identity = xstrdup(in.identity);
	v.known_hosts = xstrdup(in.known_hosts);
	v.alias = xstrdup(in.host_alias);
	if (o->remote) {
		_cleanup_free_ char *wrapper = path_join(v.dir, "ssh-libvirt");
		bool rkvm;

		step(o, name, "copying kernel and disks to the host");
		v.host_name = xstrdup(o->remote->spec->name);
		v.via_user = xstrdup(o->remote->t.user ? o->remote->t.user : "root");
		v.via_host = xstrdup(o->remote->t.host);
		v.via_port = o->remote->t.port;
		v.via_identity = xstrdup(o->remote->t.identity);
		v.via_known_hosts = xstrdup(o->remote->t.known_hosts);
		v.via_control = o->remote->t.control ? xstrdup(o->remote->t.control) : NULL;
		set_via(&v);
		if ((r = remote_probe(o->remote, &rkvm, &host, &hoststore, d)) < 0 ||
		    (r = remote_vm_prepare(o->remote, name, o->kernel, o->image, &in, &rv, d)) < 0)
			goto fail;
		/* from here a failure removes the folder there too (teardown), and
		 * once vm.json says so, lab gc after a kill */
		v.remote_dir = xstrdup(rv.dir);
		v.remote_console = xstrdup(rv.console);
		if ((r = remote_free_port(o->remote, &v.port, d)) < 0)
			goto fail;
		save(&v);
		if (o->accel < 0)
			kvm = rkvm;
		free(v.uri);
		if (!(v.uri = remote_connect_uri(o->uri, &o->remote->t, wrapper, d))) {
			r = -EIO;
			goto fail;
		}
	} else {
		if ((r = free_port(&v.port)) < 0) {
			diags_add(d, NULL, "no free port on 127.0.0.1: %s", strerror(-r));
			goto fail;
		}
		if (!o->uri && (r = write_embed_config(root)) < 0) {
			diags_add(d, NULL, "cannot write the libvirt configuration in '%s': %s", root, strerror(-r));
			goto fail;
		}
		vm_probe_host(&host, &hoststore);
	}
	cmdline = domain_cmdline(o->cmdline);
	dc = (struct domain_config){
		.name = v.domain,
		.topo = o->topo,
		.accel = kvm ? ACCEL_KVM : ACCEL_TCG,
		.host = &host,
		.kernel = o->remote ? rv.kernel : o->kernel->bzimage,
		.cmdline = cmdline,
		.disk = o->remote ? rv.disk : in.disk,
		.seed = o->remote ? rv.seed : in.seed,
		.modules = o->remote ? rv.modules : in.modules,
		.console = o->remote ? rv.console : v.console,
		.ssh_port = v.port,
		.vm = name,
		.owner = state,
		.variant = o->variant,
		.release = v.release,
		.image = o->image->name,
		.image_id = o->image->id,
		.run_id = o->run_id,
		.cpuset = o->cpuset,
		.reboot_restarts = o->reboot_restarts,
	};
	domain_format_xml(&dc, &xml);
	xml_path = path_join(v.dir, "domain.xml");
	if ((r = fs_write_atomic(xml_path, xml.buf, xml.len, 0644)) < 0) {
		diags_add(d, NULL, "cannot write '%s': %s", xml_path, strerror(-r));
		goto fail;
	}

	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	step(o, name, kvm ? "starting (KVM)" : "starting (TCG: software emulation)");
	t0 = now_sec();
	r = spawn_holder(&v, xml_path, &why);
	if (r == 0)
		r = save(&v);
	if (r < 0) {
		diags_add(d, NULL, "VM '%s' did not start: %s", name, why.len ? why.buf : strerror(-r));
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		goto fail;
	}
	step(o, name, "booting; waiting for ssh");
	r = wait_ready(&v, o, t0, d);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (r < 0)
		goto fail;
	save(&v);
	instance_release(&in);
	remote_vm_release(&rv);
	*ret = v;
	return 0;
fail:
	if (o->evidence && v.dir) {
		/* what the console and QEMU said, before the folder goes */
		_cleanup_free_ char *ql = qemu_log_path(&v);
		_cleanup_free_ char *to_con = path_join(o->evidence, "console.log");
		_cleanup_free_ char *to_qemu = path_join(o->evidence, "qemu.log");

		if (v.console)
			fs_copy_file(v.console, to_con, true);
		if (ql)
			fs_copy_file(ql, to_qemu, true);
	}
	instance_release(&in);
	remote_vm_release(&rv);
	teardown(&v);
	vm_release(&v);
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
