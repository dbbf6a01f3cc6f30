/* SPDX-License-Identifier: MIT */
/*
 * Bare-metal hosts (lab.yaml `hosts:` with `ssh: user@host[:port]`), driven
 * over OpenSSH like the guests: lab's key (or the host's `identity`), a
 * known_hosts of lab's own under $XDG_STATE_HOME/lab/hosts/NAME with the
 * host's key pinned by `lab host trust` (first contact never trusts
 * silently), one ControlMaster per host.
 *
 * What a host is made of (CPUs, NUMA nodes, release, boot id) is read
 * with `lscpu -J` and /sys/devices/system/node and kept with results; the
 * checks say what lab needs on it (kexec, perf, cgroup v2, disk) and how
 * to fix what is missing. The library never prints.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "../kernel/build.h"
#include "../spec/spec.h"
#include "../util/strbuf.h"
#include "../ssh/ssh.h"

struct host {
	const struct spec_host *spec;
	char *dir;         /* <state>/hosts/<name> */
	char *known_hosts; /* its pinned key */
	char *identity;
	char *control;
	struct ssh_target t;
};

/* Paths and the ssh target; creates nothing but lab's key when missing. */
int host_open(const char *state, const char *cache, const struct spec_host *h, struct host *ret, struct diags *d);
void host_close(struct host *h);
/* Whether a key is pinned for it. */
bool host_trusted(const struct host *h);
/* 0 when it is; else -EPERM and an error that says to `lab host trust` it. */
int host_need_trust(const struct host *h, struct diags *d);
/* Ask the host for its keys (ssh-keyscan), pin them, and say their
 * fingerprints (ssh-keygen -l) in `fingerprints`. */
int host_trust(struct host *h, struct strbuf *fingerprints, struct diags *d);
/* Run argv on the host; its exit status (0 ok), -ETIME, or another negative errno. */
int host_run(struct host *h, char *const *argv, size_t n, struct strbuf *out, struct strbuf *err, uint64_t timeout_usec);

struct host_facts {
	char *release;   /* uname -r */
	char *boot_id;   /* /proc/sys/kernel/random/boot_id */
	char *cmdline;   /* /proc/cmdline */
	char *model;     /* lscpu's model name */
	unsigned cpus, sockets, cores_per_socket, threads_per_core;
	unsigned nnodes;
	char **node_cpus; /* per NUMA node, its cpulist; nnodes entries */
	char *lscpu_json; /* lscpu -J as the host printed it */
};

/* One round trip; what lscpu or /sys do not say stays 0 or NULL. */
int host_facts(struct host *h, struct host_facts *f, struct diags *d);
void host_facts_release(struct host_facts *f);
/* Pure formatters: "release ...\nboot id ...\n..." lines; the members of a JSON object. */
void host_facts_format_text(const struct host_facts *f, struct strbuf *out);
struct json;
void host_facts_format_json(const struct host_facts *f, struct json *j);

struct host_check {
	const char *name;  /* "ssh", "kexec", "perf", "cgroup2", "disk" */
	bool ok;
	char *detail;      /* what was found */
	const char *fix;   /* what to do when not ok */
};

struct host_boot_opts {
	const char *cmdline;    /* NULL: the running kernel's (kexec --reuse-cmdline) plus the host's cmdline: */
	uint64_t timeout_usec;  /* to go away and come back; 0: 10 min */
	bool via_given;         /* via overrides the host's boot: */
	enum host_boot via;
	void (*step)(void *userdata, const char *what);
	void *userdata;
};

/*
 * Boot a built kernel on the host: bzImage (and its modules) copied under
 * /var/lib/lab/kernels/RELEASE, an initramfs made there by the host's
 * mkinitramfs when the host says initrd: true. Then, with boot: kexec,
 * `kexec -l` with the running command line (or opts->cmdline) and
 * `systemctl kexec` where systemd runs, else `kexec -e`; with boot: grub,
 * the kernel installed as /boot/vmlinuz-RELEASE, update-grub, its entry
 * armed for the next boot only (grub-reboot; GRUB_DEFAULT=saved is checked
 * first) and a reboot: a reset or a kernel that never comes up lands on
 * the host's default entry. Either way lab waits for a new boot id and
 * checks `uname -r` is the kernel's release. A host that does not come back
 * gets the host's power-cycle command, once. The host's own kernel is
 * remembered on the first boot (host_restore goes back to it). 0, or
 * negative with the reason in d.
 */
int host_boot(struct host *h, const struct kartifact *k, const struct host_boot_opts *o, struct diags *d);
/* Back to the host's own kernel: a reboot through its boot loader (what
 * a reset also gives), then the release is checked against the one lab
 * remembered before its first boot. The kernels lab put in /boot for GRUB
 * are removed then (and update-grub run). */
int host_restore(struct host *h, const struct host_boot_opts *o, char **ret_release, struct diags *d);

/* Every check, each with its result; negative only when the host cannot be reached at all. */
int host_check(struct host *h, struct host_check **ret, size_t *n, struct diags *d);
void host_checks_free(struct host_check *c, size_t n);

/*
 * Pure helpers of the GRUB path, on files as the host has them:
 * host_grub_entry: in a grub.cfg, the entry that boots /boot/vmlinuz-RELEASE
 * (not its recovery mode twin; one whose id or title names the release
 * before a generic one), as grub-reboot takes it: "SUBMENU>ENTRY" by their
 * ids ($menuentry_id_option or --id), titles where an id is missing. 0, or
 * -ENOENT.
 * host_grub_default: the value of the last GRUB_DEFAULT= in TEXT (the
 * concatenation of /etc/default/grub and its grub.d files), unquoted; NULL if none.
 */
int host_grub_entry(const char *cfg, const char *release, char **ret);
char *host_grub_default(const char *text);
