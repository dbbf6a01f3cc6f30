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
 *
 * It is the remote backend (backend.h: vm_backend_remote); what is
 * declared here is what the tests use.
 */
#pragma once
#include <stdbool.h>
#include "../ssh/ssh.h"
#include "../util/diag.h"

/*
 * The URI lab's holder opens: `uri` with command=WRAPPER, a script written
 * to `wrapper` that runs ssh with t's options (key, pinned known_hosts).
 */
char *remote_connect_uri(const char *uri, const struct ssh_target *t, const char *wrapper, struct diags *d);

/* Pure: the lines of /proc/net/tcp{,6} -> whether `port` is in LISTEN state there. */
bool remote_port_listening(const char *proc_net_tcp, unsigned port);
