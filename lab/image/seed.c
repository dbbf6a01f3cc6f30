/* SPDX-License-Identifier: MIT */
/*
 * NoCloud seeds and per-VM disks (see seed.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../util/yamlw.h"
#include "../ssh/key.h"
#include "seed.h"
#include "../util/banned.h"

/* QEMU user-mode networking's defaults (lab's domains set none): the
 * first DHCP lease and the gateway. */
#define SEED_GUEST_ADDRESS "10.0.2.15/24"
#define SEED_GUEST_GATEWAY "10.0.2.2"

/* Controllers lab delegates down to the workloads' groups, where the kernel has them. */
#define CGROUP_CONTROLLERS "cpu|cpuset|memory|io|pids"

void seed_format_meta_data(const struct seed_config *c, struct strbuf *out)
{
	strbuf_addstr(out, "instance-id: ");
	yaml_quote(out, c->instance_id);
	strbuf_addstr(out, "\nlocal-hostname: ");
	yaml_quote(out, c->hostname);
	strbuf_addch(out, '\n');
}

void seed_format_network_config(const struct seed_config *c, struct strbuf *out)
{
	(void)c;
	strbuf_addstr(out, "# lab boots with net.ifnames=0: the one NIC is eth0, on user-mode networking\n"
			   "version: 2\n"
			   "ethernets:\n"
			   "  eth0:\n"
			   "    dhcp4: true\n"
			   "    dhcp6: false\n");
}

static void cgroup_script(const struct strv *cgroups, struct strbuf *sh)
{
	strbuf_addstr(sh, "cg=/sys/fs/cgroup; for p in");
	for (size_t i = 0; i < cgroups->n; i++) {
		strbuf_addch(sh, ' ');
		shell_quote(sh, cgroups->v[i]);
	}
	strbuf_addstr(sh, "; do mkdir -p \"$cg/$p\"; d=$cg; rest=$p; while [ -n \"$rest\" ]; do "
			  "for c in $(cat \"$d/cgroup.controllers\"); do case $c in " CGROUP_CONTROLLERS ") "
			  "echo \"+$c\" > \"$d/cgroup.subtree_control\";; esac; done; "
			  "d=$d/${rest%%/*}; case $rest in */*) rest=${rest#*/};; *) rest=;; esac; done; done");
}

/* One command of the seed's boot work: cloud-init's bootcmd writes it as a
 * YAML list, lab-seed.sh as a shell line; `comment` (or NULL) goes first. */
typedef void (*boot_emit)(struct strbuf *out, const char *comment, const char *const *argv);

/* What the seed asks before sshd starts, in order; the same for both writers. */
static void boot_commands(const struct seed_config *c, boot_emit emit, struct strbuf *out)
{
	if (c->modules_disk) {
		const char *const argv[] = { "mount", "-o", "ro", "LABEL=lab-modules", "/usr/lib/modules", NULL };

		emit(out, "the kernel variant's modules (the image has no kernel)", argv);
	}
	for (size_t i = 0; i < c->nsysctl; i++) {
		_cleanup_free_ char *kv = xasprintf("%s=%s", c->sysctl[i].key, c->sysctl[i].value);
		const char *const argv[] = { "sysctl", "-w", kv, NULL };

		emit(out, i ? NULL : "the experiment's sysctls; a refused value fails the boot", argv);
	}
	if (c->cgroups && c->cgroups->n) {
		_cleanup_strbuf_ struct strbuf sh = STRBUF_INIT;
		const char *argv[] = { "sh", "-ec", NULL, NULL };

		cgroup_script(c->cgroups, &sh);
		argv[2] = sh.buf;
		emit(out, "the workloads' cgroups, controllers delegated down to them", argv);
	}
}

static void bootcmd_yaml(struct strbuf *out, const char *comment, const char *const *argv)
{
	if (comment)
		strbuf_addf(out, "  # %s\n", comment);
	strbuf_addstr(out, "  - [");
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		yaml_quote(out, argv[i]);
	}
	strbuf_addstr(out, "]\n");
}

void seed_format_user_data(const struct seed_config *c, struct strbuf *out)
{
	bool boot = c->modules_disk || c->nsysctl || (c->cgroups && c->cgroups->n);

	strbuf_addstr(out, "#cloud-config\n");
	strbuf_addstr(out, "# Written by lab for one VM, for images that run cloud-init (only its init\n"
			   "# stage is needed: bootcmd, set_hostname, ssh). lab's own images run\n"
			   "# lab-seed.sh beside this file instead, which does the same without Python,\n"
			   "# unless booted with cloud-init=enabled.\n");
	strbuf_addstr(out, "users: [root]\n"
			   "disable_root: false\n"
			   "ssh_authorized_keys:\n"
			   "  - ");
	yaml_quote(out, c->authorized_key);
	strbuf_addstr(out, "\n# This VM's host key, made by lab and pinned in its known_hosts.\n"
			   "ssh_deletekeys: true\n"
			   "ssh_genkeytypes: [ed25519]\n"
			   "ssh_keys:\n"
			   "  ed25519_private: ");
	yaml_block(out, c->host_key, 4);
	strbuf_addstr(out, "  ed25519_public: ");
	yaml_quote(out, c->host_key_pub);
	strbuf_addstr(out, "\nssh_publish_hostkeys:\n  enabled: false\n");
	if (boot)
		strbuf_addstr(out, "bootcmd:\n");
	boot_commands(c, bootcmd_yaml, out);
}

static void shell_line(struct strbuf *out, const char *comment, const char *const *argv)
{
	if (comment)
		strbuf_addf(out, "# %s\n", comment);
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(out, ' ');
		shell_quote(out, argv[i]);
	}
	strbuf_addch(out, '\n');
}

/* printf '%s' WORD >PATH, WORD quoted: keys go in as data, never as shell text. */
static void shell_write_file(struct strbuf *out, const char *text, bool newline, const char *path)
{
	strbuf_addstr(out, newline ? "printf '%s\\n' " : "printf '%s' ");
	shell_quote(out, text);
	strbuf_addf(out, " >%s\n", path);
}

void seed_format_lab_seed(const struct seed_config *c, struct strbuf *out)
{
	strbuf_addstr(out, "# Written by lab for one VM: what its user-data asks, for lab's own images,\n"
			   "# whose lab-seed.service runs it with `sh -eu` before sshd starts (their\n"
			   "# cloud-init stays off). A failing command fails the boot.\n");
	strbuf_addstr(out, "# the host name (meta-data's local-hostname)\n");
	shell_write_file(out, c->hostname, true, "/etc/hostname");
	shell_write_file(out, c->hostname, true, "/proc/sys/kernel/hostname");
	strbuf_addstr(out, "# root accepts lab's key, nothing else\n"
			   "mkdir -p -m 700 /root/.ssh\n");
	shell_write_file(out, c->authorized_key, true, "/root/.ssh/authorized_keys");
	strbuf_addstr(out, "# this VM's host key, made by lab and pinned in its known_hosts\n"
			   "rm -f /etc/ssh/ssh_host_*\n"
			   "umask 077\n");
	shell_write_file(out, c->host_key, false, "/etc/ssh/ssh_host_ed25519_key");
	strbuf_addstr(out, "umask 022\n");
	shell_write_file(out, c->host_key_pub, true, "/etc/ssh/ssh_host_ed25519_key.pub");
	/* what network-config's DHCP gets from QEMU's user-mode network, whose
	 * defaults lab's domains keep (domain.c user_network): no DHCP client
	 * to start, no wait */
	strbuf_addstr(out, "# eth0 as QEMU's user-mode network gives it by DHCP (network-config)\n"
			   "ip link set eth0 up\n"
			   "ip addr add " SEED_GUEST_ADDRESS " dev eth0\n"
			   "ip route add default via " SEED_GUEST_GATEWAY "\n");
	boot_commands(c, shell_line, out);
}

static bool sysctl_key_ok(const char *k)
{
	if (!*k || *k == '.' || *k == '/')
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
		      strchr("._-/", *k)))
			return false;
	return true;
}

static bool one_line(const char *s)
{
	return s && *s && !strchr(s, '\n') && !strchr(s, '\r');
}

int seed_config_check(const struct seed_config *c, struct diags *d)
{
	size_t before = d->n;

	if (!one_line(c->instance_id))
		diags_add(d, NULL, "seed: the instance id must be one non-empty line");
	if (!c->hostname || !str_is_name(c->hostname) || strlen(c->hostname) > 63 || strchr(c->hostname, '_') ||
	    strchr(c->hostname, '.'))
		diags_add(d, NULL, "seed: '%s' is not a host name (letters, digits and '-', at most 63)",
			  c->hostname ? c->hostname : "");
	if (!one_line(c->authorized_key) || !str_startswith(c->authorized_key, "ssh-"))
		diags_add(d, NULL, "seed: the authorized key must be one 'ssh-...' line");
	if (!one_line(c->host_key_pub) || !str_startswith(c->host_key_pub, "ssh-ed25519 "))
		diags_add(d, NULL, "seed: the host public key must be one 'ssh-ed25519 ...' line");
	if (!c->host_key || !strstr(c->host_key, "PRIVATE KEY-----"))
		diags_add(d, NULL, "seed: the host key is not an OpenSSH private key");
	for (size_t i = 0; i < c->nsysctl; i++) {
		if (!sysctl_key_ok(c->sysctl[i].key))
			diags_add(d, &c->sysctl[i].pos, "sysctl '%s' is not a sysctl name", c->sysctl[i].key);
		if (!c->sysctl[i].value || strchr(c->sysctl[i].value, '\n'))
			diags_add(d, &c->sysctl[i].pos, "sysctl '%s' needs a one-line value", c->sysctl[i].key);
	}
	for (size_t i = 0; c->cgroups && i < c->cgroups->n; i++)
		if (!path_is_cgroup(c->cgroups->v[i]))
			diags_add(d, NULL, "cgroup '%s' must be " PATH_CGROUP_RULE, c->cgroups->v[i]);
	return d->n > before ? -EINVAL : 0;
}

void seed_experiment_cgroups(const struct spec_experiment *e, struct strv *ret)
{
	for (size_t i = 0; i < e->njobs; i++)
		for (size_t j = 0; j < e->jobs[i].nparams; j++) {
			const struct spec_param *p = &e->jobs[i].params[j];

			if (!streq(p->key, "cgroup"))
				continue;
			for (size_t k = 0; k < p->nvalues; k++)
				if (p->values[k] && *p->values[k] && !strv_contains(ret, p->values[k]))
					strv_push(ret, p->values[k]);
		}
}

int seed_write(const char *dir, const struct seed_config *c, char **ret_iso, struct diags *d)
{
	static const char *const names[] = { "meta-data", "user-data", "network-config", "lab-seed.sh" };
	void (*const fmt[])(const struct seed_config *, struct strbuf *) = {
		seed_format_meta_data, seed_format_user_data, seed_format_network_config, seed_format_lab_seed,
	};
	_cleanup_free_ char *sdir = path_join(dir, "seed"), *iso = path_join(dir, "seed.iso");
	_cleanup_command_ struct command g = { 0 };
	_cleanup_strbuf_ struct strbuf log = STRBUF_INIT;
	int r;

	if ((r = seed_config_check(c, d)) < 0)
		return r;
	if ((r = path_mkdir_p(sdir, 0700)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", sdir, strerror(-r));
		return r;
	}
	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		_cleanup_free_ char *p = path_join(sdir, names[i]);

		fmt[i](c, &sb);
		/* user-data and lab-seed.sh carry a private host key */
		if ((r = fs_write_atomic(p, sb.buf, sb.len, 0600)) < 0) {
			diags_add(d, NULL, "cannot write '%s': %s", p, strerror(-r));
			return r;
		}
	}
	command_init(&g, "genisoimage");
	command_args(&g, "-quiet", "-output", iso, "-volid", "cidata", "-joliet", "-rock", NULL);
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		command_arg(&g, names[i]);
	g.cwd = xstrdup(sdir);
	if ((r = command_run_logged(&g, &log, d, NULL, "genisoimage (the NoCloud seed)")) < 0)
		return r;
	chmod(iso, 0600);
	*ret_iso = TAKE_PTR(iso);
	return 0;
}

/* ---- per-VM folders ---- */

void instance_release(struct instance *i)
{
	free(i->dir);
	free(i->disk);
	free(i->seed);
	free(i->modules);
	free(i->identity);
	free(i->known_hosts);
	free(i->host_alias);
	memset(i, 0, sizeof(*i));
}

static int overlay(const char *base, const char *disk, struct diags *d)
{
	_cleanup_command_ struct command c = { 0 };

	unlink(disk);
	command_init(&c, "qemu-img");
	command_args(&c, "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", base, disk, NULL);
	return command_run_logged(&c, NULL, d, NULL, "qemu-img create (the VM's overlay)");
}

int image_modules_disk(const char *kernel_dir, char **ret, struct diags *d)
{
	_cleanup_free_ char *tree = xasprintf("%s/modules/lib/modules", kernel_dir);
	_cleanup_free_ char *disk = path_join(kernel_dir, "modules.ext4"), *tmp = NULL;
	_cleanup_command_ struct command du = { 0 };
	_cleanup_command_ struct command mk = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	unsigned long long bytes;
	int r;

	*ret = NULL;
	if (!path_is_dir(tree))
		return 0;
	if (path_is_file(disk)) {
		*ret = TAKE_PTR(disk);
		return 0;
	}
	command_init(&du, "du");
	command_args(&du, "-sb", tree, NULL);
	du.out = &out;
	if (command_run(&du) != 0 || sscanf(out.buf, "%llu", &bytes) != 1) {
		diags_add(d, NULL, "cannot measure '%s'", tree);
		return -EIO;
	}
	tmp = xasprintf("%s.tmp", disk);
	command_init(&mk, "mkfs.ext4");
	command_args(&mk, "-q", "-F", "-L", "lab-modules", "-d", tree, tmp, NULL);
	command_argf(&mk, "%lluk", (bytes * 3 / 2 + (32ULL << 20)) >> 10);
	if ((r = command_run_logged(&mk, NULL, d, NULL, "mkfs.ext4 (the modules disk)")) < 0) {
		unlink(tmp);
		return r;
	}
	if (rename(tmp, disk) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	*ret = TAKE_PTR(disk);
	return 0;
}

static char *default_instance_id(const char *hostname)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return xasprintf("lab-%s-%lld%09ld", hostname, (long long)ts.tv_sec, ts.tv_nsec);
}

int image_instance_create(const char *cache, const struct image_artifact *img, const char *dir,
			  const struct instance_opts *o, struct instance *ret, struct diags *d)
{
	_cleanup_free_ char *pub = NULL, *hostkey = NULL, *hostpub = NULL, *hk_path = NULL, *hk_pub = NULL;
	_cleanup_free_ char *iid = NULL, *line = NULL;
	struct instance in = { 0 };
	struct seed_config sc = { 0 };
	int r;

	in.dir = xstrdup(dir);
	in.disk = path_join(dir, "disk.qcow2");
	in.known_hosts = path_join(dir, "known_hosts");
	in.host_alias = xasprintf("lab-%s", o->hostname);
	if ((r = path_mkdir_p(dir, 0700)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", dir, strerror(-r));
		goto fail;
	}
	if ((r = ssh_lab_key(cache, &in.identity, &pub, d)) < 0)
		goto fail;
	hk_path = path_join(dir, "ssh_host_ed25519_key");
	hk_pub = xasprintf("%s.pub", hk_path);
	unlink(hk_path);
	unlink(hk_pub);
	if ((r = ssh_keygen(hk_path, in.host_alias, d)) < 0)
		goto fail;
	{
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		if ((r = strbuf_read_file(&sb, hk_path, 64 << 10)) < 0) {
			diags_add(d, NULL, "cannot read '%s': %s", hk_path, strerror(-r));
			goto fail;
		}
		hostkey = strbuf_detach(&sb, NULL);
	}
	if ((r = ssh_read_line(hk_pub, &hostpub, d)) < 0)
		goto fail;
	{
		/* "alias ssh-ed25519 AAAA": the key type and key, without the comment */
		const char *sp = strchr(hostpub, ' ');
		const char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;

		line = sp2 ? xasprintf("%s %.*s\n", in.host_alias, (int)(sp2 - hostpub), hostpub)
			   : xasprintf("%s %s\n", in.host_alias, hostpub);
		if ((r = fs_write_atomic(in.known_hosts, line, strlen(line), 0644)) < 0) {
			diags_add(d, NULL, "cannot write '%s': %s", in.known_hosts, strerror(-r));
			goto fail;
		}
	}
	if (o->kernel_dir && (r = image_modules_disk(o->kernel_dir, &in.modules, d)) < 0)
		goto fail;
	iid = o->instance_id ? xstrdup(o->instance_id) : default_instance_id(o->hostname);
	sc = (struct seed_config){
		.instance_id = iid,
		.hostname = o->hostname,
		.authorized_key = pub,
		.host_key = hostkey,
		.host_key_pub = hostpub,
		.sysctl = o->sysctl,
		.nsysctl = o->nsysctl,
		.cgroups = o->cgroups,
		.modules_disk = in.modules != NULL,
	};
	if ((r = seed_write(dir, &sc, &in.seed, d)) < 0)
		goto fail;
	if ((r = overlay(img->qcow2, in.disk, d)) < 0)
		goto fail;
	*ret = in;
	return 0;
fail:
	instance_release(&in);
	return r;
}
