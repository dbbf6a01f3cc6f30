/* SPDX-License-Identifier: MIT */
/*
 * A lab VM on another hypervisor host (lab.yaml `uri: qemu+ssh://user@host/system`).
 *
 * libvirt there only sees its own files, so lab puts what the domain
 * needs under the host's `dir` (default /var/lib/lab) over the host's ssh
 * (pinned key, `lab host trust`): images/<id>.qcow2 and
 * kernels/<key>/{bzImage,modules.ext4} once (content-addressed), and per VM
 * vms/<name>/ with the overlay (rebased onto the remote image), the seed
 * and the console file. QEMU forwards the guest's ssh to the host's
 * 127.0.0.1; lab reaches it through the host (ssh -W). libvirt's own
 * connection runs ssh through a wrapper with the same options, so it
 * checks the same pinned key. The library never prints.
 */
#pragma once
#include "../host/host.h"
#include "../image/image.h"
#include "../image/seed.h"
#include "../kernel/build.h"
#include "../util/diag.h"
#include "domain.h"

struct remote_vm {
	char *dir; /* the VM's folder on the host */
	char *kernel, *modules, *disk, *seed, *console;
};

/* Copy what the domain needs (what is already there stays), rebase the overlay. */
int remote_vm_prepare(struct host *h, const char *name, const struct kartifact *k, const struct image_artifact *img,
		      const struct instance *in, struct remote_vm *ret, struct diags *d);
void remote_vm_release(struct remote_vm *r);

/* A port nothing listens on at the host's loopback, below its ephemeral range. */
int remote_free_port(struct host *h, unsigned *ret, struct diags *d);

/* Whether /dev/kvm works there; the host's CPUs and NUMA nodes for placement
 * (strings point into *storage, which the caller frees). */
int remote_probe(struct host *h, bool *kvm, struct domain_host *dh, char **storage, struct diags *d);

/*
 * The URI lab's holder opens: `uri` with command=WRAPPER, a script written
 * to `wrapper` that runs ssh with t's options (key, pinned known_hosts).
 */
char *remote_connect_uri(const char *uri, const struct ssh_target *t, const char *wrapper, struct diags *d);

/* Append what the remote console file got since the local copy's end. */
int remote_console_sync(const struct ssh_target *t, const char *remote, const char *local);

/* Remove the VM's folder on the host. */
int remote_vm_remove(const struct ssh_target *t, const char *dir);

/* Pure: the lines of /proc/net/tcp{,6} -> whether `port` is in LISTEN state there. */
bool remote_port_listening(const char *proc_net_tcp, unsigned port);
