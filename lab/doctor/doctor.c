/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/path.h"
#include "../util/strv.h"
#include "../util/table.h"
#include "../util/units.h"
#include "../vm/vm.h"
#include "doctor.h"
#include "../util/banned.h"

/* Programs lab runs, in the order lab needs them: kernels, images, guests. */
static const struct tool {
	const char *name;
	const char *needs;
	const char *fix;
	bool required;
} tools[] = {
	{ "make", "kernel builds", "apt install build-essential", true },
	{ "gcc", "kernel builds", "apt install build-essential", true },
	{ "flex", "kernel builds (kconfig)", "apt install flex", true },
	{ "bison", "kernel builds (kconfig)", "apt install bison", true },
	{ "bc", "kernel builds", "apt install bc", true },
	{ "ccache", "fast rebuilds of a variant", "apt install ccache", false },
	{ "git", "kernels from a git ref", "apt install git", false },
	{ "mmdebstrap", "guest images", "apt install mmdebstrap", true },
	{ "mkfs.ext4", "guest images", "apt install e2fsprogs", true },
	{ "qemu-img", "guest images and overlays", "apt install qemu-utils", true },
	{ "genisoimage", "cloud-init NoCloud seeds", "apt install genisoimage", true },
	{ "cloud-init", "checking user-data (cloud-init schema)", "apt install cloud-init", false },
	{ "qemu-system-x86_64", "guests", "apt install qemu-system-x86", true },
	{ "virt-xml-validate", "checking domain XML", "apt install libvirt-clients libxml2-utils", false },
	{ "ssh", "guests and bare-metal hosts", "apt install openssh-client", true },
	{ "ssh-keygen", "lab's key and pinned host keys", "apt install openssh-client", true },
	{ "ssh-keyscan", "lab host trust", "apt install openssh-client", false },
	{ "perf", "profiles on this machine; guests carry their own", "apt install linux-perf", false },
};

#define GiB (1024ULL * 1024 * 1024)

static char *in_path(void *userdata, const char *prog)
{
	const char *path = getenv("PATH");
	_cleanup_strv_ struct strv dirs = STRV_INIT;

	(void)userdata;
	strv_split(&dirs, path && *path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", ':');
	for (size_t i = 0; i < dirs.n; i++) {
		char *p = path_join(*dirs.v[i] ? dirs.v[i] : ".", prog);

		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

void doctor_probe_machine(struct doctor_machine *m, const char *cache_dir)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	struct statvfs vfs;
	long n;

	memset(m, 0, sizeof(*m));
	m->kvm = vm_kvm_usable(&m->kvm_why);
	m->root = geteuid() == 0;
	if (strbuf_read_file(&sb, "/sys/fs/cgroup/cgroup.controllers", 4096) == 0) {
		m->cgroup2 = true;
		strbuf_setlen(&sb, strcspn(sb.buf ? sb.buf : "", "\n"));
		m->cgroup_controllers = strbuf_detach(&sb, NULL);
	}
	if (vm_libvirt_version(&m->libvirt, &err) < 0)
		m->libvirt_error = strbuf_detach(&err, NULL);
	m->cache_dir = xstrdup(cache_dir);
	{
		/* the cache may not exist yet: the nearest folder that does */
		_cleanup_free_ char *p = xstrdup(cache_dir);

		while (statvfs(p, &vfs) < 0 && strchr(p, '/') && strcmp(p, "/")) {
			char *slash = strrchr(p, '/');

			if (slash == p)
				slash[1] = '\0';
			else
				*slash = '\0';
		}
		if (statvfs(p, &vfs) == 0)
			m->cache_free = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	}
	n = sysconf(_SC_NPROCESSORS_ONLN);
	m->cpus = n > 0 ? (unsigned)n : 0;
	if (sysconf(_SC_PHYS_PAGES) > 0 && sysconf(_SC_PAGESIZE) > 0)
		m->mem_total = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	m->kernel_source = path_is_file("/usr/src/linux-source-6.1.tar.xz");
	m->libelf = path_is_file("/usr/include/libelf.h");
	m->which = in_path;
}

void doctor_machine_release(struct doctor_machine *m)
{
	free(m->cgroup_controllers);
	free(m->libvirt);
	free(m->libvirt_error);
	free(m->cache_dir);
	memset(m, 0, sizeof(*m));
}

void doctor_check_add(struct doctor_check **v, size_t *n, const char *name, const char *needs, enum doctor_status st,
		      char *found, const char *fix)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct doctor_check){ .name = name, .needs = needs, .status = st, .found = found, .fix = fix };
}

void doctor_check_add_owned(struct doctor_check **v, size_t *n, char *name, const char *needs,
			    enum doctor_status st, char *found, char *fix)
{
	doctor_check_add(v, n, name, needs, st, found, fix);
	(*v)[*n - 1].name_buf = name;
	(*v)[*n - 1].fix_buf = fix;
}

static void add(struct doctor_check **v, size_t *n, const char *name, const char *needs, enum doctor_status st,
		char *found, const char *fix)
{
	doctor_check_add(v, n, name, needs, st, found, fix);
}

static void gib(char *buf, size_t len, uint64_t bytes)
{
	snprintf(buf, len, "%.1f GiB", (double)bytes / (double)GiB);
}

void doctor_checks(const struct doctor_machine *m, struct doctor_check **ret, size_t *n)
{
	char fb[32], mb[32];

	*ret = NULL;
	*n = 0;
	add(ret, n, "accel", "guests at full speed", m->kvm ? DOCTOR_OK : DOCTOR_WARN,
	    m->kvm ? xstrdup("kvm (/dev/kvm)")
		   : xasprintf("tcg: %s, guests run under QEMU's software emulation (slow but real)",
			       m->kvm_why ? m->kvm_why : "no usable /dev/kvm"),
	    "load kvm_intel or kvm_amd (enable VT-x/AMD-V, or nested virtualization on a VM) and give lab "
	    "/dev/kvm rw");
	add(ret, n, "libvirt", "guests: libvirt's QEMU driver, embedded", m->libvirt ? DOCTOR_OK : DOCTOR_MISSING,
	    xstrdup(m->libvirt ? m->libvirt : m->libvirt_error ? m->libvirt_error : "not found"),
	    "apt install libvirt-daemon-driver-qemu libvirt-daemon-system");
	for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
		char *at = m->which(m->userdata, tools[i].name);

		add(ret, n, tools[i].name, tools[i].needs,
		    at ? DOCTOR_OK : tools[i].required ? DOCTOR_MISSING : DOCTOR_WARN, at ? at : xstrdup("not in PATH"),
		    tools[i].fix);
	}
	add(ret, n, "libelf", "kernel builds (objtool)", m->libelf ? DOCTOR_OK : DOCTOR_MISSING,
	    xstrdup(m->libelf ? "/usr/include/libelf.h" : "no libelf.h"), "apt install libelf-dev");
	add(ret, n, "kernel-source", "the default kernel source (source: debian-6.1)",
	    m->kernel_source ? DOCTOR_OK : DOCTOR_WARN,
	    xstrdup(m->kernel_source ? "/usr/src/linux-source-6.1.tar.xz" : "not installed"),
	    "apt install linux-source-6.1 (or give kernels a local tree or a git source)");
	add(ret, n, "root", "image builds (mmdebstrap --mode=root)", m->root ? DOCTOR_OK : DOCTOR_WARN,
	    xstrdup(m->root ? "running as root" : "not root"), "run lab image build as root");
	add(ret, n, "cgroup2", "cpu and cpuset groups for lab's own processes and QEMU",
	    m->cgroup2 ? DOCTOR_OK : DOCTOR_WARN,
	    xstrdup(m->cgroup2 ? m->cgroup_controllers : "no cgroup v2 at /sys/fs/cgroup"),
	    "mount cgroup2 at /sys/fs/cgroup (systemd.unified_cgroup_hierarchy=1)");
	gib(fb, sizeof(fb), m->cache_free);
	add(ret, n, "disk", "a kernel tree and objects (~4 GiB a source), images (~1.2 GiB each), results",
	    m->cache_free >= 20 * GiB	  ? DOCTOR_OK
	    : m->cache_free >= 8 * GiB ? DOCTOR_WARN
				       : DOCTOR_MISSING,
	    xasprintf("%s free for %s", fb, m->cache_dir ? m->cache_dir : "?"),
	    "free 20 GiB for lab's cache (or point XDG_CACHE_HOME at a bigger disk)");
	gib(mb, sizeof(mb), m->mem_total);
	add(ret, n, "machine", "sizing runs (lab run --jobs)", m->cpus >= 2 ? DOCTOR_OK : DOCTOR_WARN,
	    xasprintf("%u CPU%s, %s", m->cpus, m->cpus == 1 ? "" : "s", mb), "one CPU only: kernel builds and guests share it");
}

void doctor_checks_free(struct doctor_check *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].found);
		free(c[i].name_buf);
		free(c[i].fix_buf);
	}
	free(c);
}

enum doctor_status doctor_worst(const struct doctor_check *c, size_t n)
{
	enum doctor_status w = DOCTOR_OK;

	for (size_t i = 0; i < n; i++)
		if (c[i].status > w)
			w = c[i].status;
	return w;
}

static const char *status_word(enum doctor_status s)
{
	return s == DOCTOR_OK ? "ok" : s == DOCTOR_WARN ? "warn" : "MISSING";
}

void doctor_format_text(const struct doctor_check *c, size_t n, struct strbuf *out)
{
	static const char *const cols[] = { "CHECK:check", "STATUS:status", "FOUND:found", NULL };
	_cleanup_table_ struct table *t = table_new(cols);
	size_t warn = 0, missing = 0;

	for (size_t i = 0; i < n; i++) {
		table_add_string(t, c[i].name);
		table_add_string(t, status_word(c[i].status));
		table_add_string(t, c[i].found);
		warn += c[i].status == DOCTOR_WARN;
		missing += c[i].status == DOCTOR_MISSING;
	}
	table_format_text(t, out);
	if (warn + missing)
		strbuf_addch(out, '\n');
	for (size_t i = 0; i < n; i++)
		if (c[i].status != DOCTOR_OK)
			strbuf_addf(out, "%s %s (for %s): %s\n", c[i].status == DOCTOR_MISSING ? "missing" : "warn",
				    c[i].name, c[i].needs, c[i].fix);
	if (missing)
		strbuf_addf(out, "\n%zu missing, %zu warning%s: lab cannot do all of its work here\n", missing, warn,
			    warn == 1 ? "" : "s");
	else if (warn)
		strbuf_addf(out, "\nready, with %zu warning%s\n", warn, warn == 1 ? "" : "s");
	else
		strbuf_addstr(out, "\nready\n");
}

void doctor_format_json(const struct doctor_check *c, size_t n, struct json *j)
{
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "check", c[i].name);
		json_kv_string(j, "status", status_word(c[i].status));
		json_kv_string(j, "found", c[i].found);
		json_kv_string(j, "needs", c[i].needs);
		if (c[i].status != DOCTOR_OK)
			json_kv_string(j, "fix", c[i].fix);
		json_object_end(j);
	}
	json_array_end(j);
}
