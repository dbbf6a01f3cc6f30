/* SPDX-License-Identifier: MIT */
/*
 * Per-VM disks: a qcow2 overlay on a cached image (the image is never
 * written) and a NoCloud seed, an ISO 9660 volume labelled "cidata" with
 * meta-data, user-data and network-config for any cloud image, and
 * lab-seed.sh, the same work as a shell script for lab's own images.
 *
 * The formatters are pure functions (golden-file tests pin them; every
 * user-data they write passes `cloud-init schema`, every lab-seed.sh
 * `sh -n`, in the tests). What the seed asks of the guest, done before
 * sshd starts (by cloud-init's `init` stage on a stock cloud image, and on
 * lab's images booted with cloud-init=enabled; by lab-seed.service, in
 * shell, on lab's images by default, where a Python start under TCG would
 * cost ~15 s of the boot):
 *   - root accepts lab's ed25519 key, no passwords;
 *   - the SSH host key is the one lab generated for this VM (lab pins it
 *     in the VM's known_hosts under a HostKeyAlias; host key
 *     checking is never turned off);
 *   - the host name;
 *   - the experiment's sysctls, applied with `sysctl -w` (a refused value
 *     fails cloud-init's stage; on lab's images it fails the boot, and
 *     lab's readiness watch reports it from the console);
 *   - the cgroup v2 groups the workloads run in, with cpu/cpuset/memory/io
 *     /pids delegated down to them where the kernel has them;
 *   - the variant's modules, when it built any, mounted from a disk
 *     labelled lab-modules at /usr/lib/modules (the image has no kernel);
 *   - eth0 (lab boots with net.ifnames=0) by DHCP from user-mode networking
 *     (network-config; lab's images have the same baked in).
 */
#pragma once
#include <stdbool.h>
#include "../spec/spec.h"
#include "../util/diag.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "image.h"

struct seed_config {
	const char *instance_id;
	const char *hostname;
	const char *authorized_key; /* "ssh-ed25519 AAAA... comment" */
	const char *host_key;       /* OpenSSH private key text */
	const char *host_key_pub;   /* "ssh-ed25519 AAAA... comment" */
	const struct spec_kv *sysctl;
	size_t nsysctl;
	const struct strv *cgroups; /* relative to /sys/fs/cgroup: "lab/pg" */
	bool modules_disk;
};

void seed_format_meta_data(const struct seed_config *c, struct strbuf *out);
void seed_format_user_data(const struct seed_config *c, struct strbuf *out);
void seed_format_network_config(const struct seed_config *c, struct strbuf *out);
/* lab-seed.sh: the same as user-data (keys, host name, boot commands) as a
 * POSIX shell script, for lab's images, which run it instead of cloud-init
 * (unless booted with cloud-init=enabled). */
void seed_format_lab_seed(const struct seed_config *c, struct strbuf *out);

/* Values the formatters would write but the guest must not get; 0 or -EINVAL with errors in d. */
int seed_config_check(const struct seed_config *c, struct diags *d);

/* The cgroups an experiment's workloads name (their `cgroup:` parameter), each once. */
void seed_experiment_cgroups(const struct spec_experiment *e, struct strv *ret);

/* Write <dir>/seed/{meta-data,user-data,network-config,lab-seed.sh} and <dir>/seed.iso. */
int seed_write(const char *dir, const struct seed_config *c, char **ret_iso, struct diags *d);


struct instance_opts {
	const char *hostname;      /* also the HostKeyAlias suffix */
	const char *instance_id;   /* NULL: derived from the folder and the time */
	const struct spec_kv *sysctl;
	size_t nsysctl;
	const struct strv *cgroups;
	const char *kernel_dir;    /* a kernel artifact folder: its modules, if any, go on a disk */
};

struct instance {
	char *dir;
	char *disk;        /* overlay qcow2, backed by the image */
	char *seed;        /* seed.iso */
	char *modules;     /* modules disk (ext4, raw) or NULL */
	char *identity;    /* lab's private key */
	char *known_hosts; /* one line: the alias and this VM's host key */
	char *host_alias;  /* HostKeyAlias */
};

/* A fresh per-VM folder: overlay, host key, known_hosts, seed. Replaces what `dir` held. */
int image_instance_create(const char *cache, const struct image_artifact *img, const char *dir,
			  const struct instance_opts *o, struct instance *ret, struct diags *d);
void instance_release(struct instance *i);

/* <kernel_dir>/modules.ext4 from the artifact's installed modules; NULL (and 0) when it has none. */
int image_modules_disk(const char *kernel_dir, char **ret, struct diags *d);
