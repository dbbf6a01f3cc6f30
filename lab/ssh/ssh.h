/* SPDX-License-Identifier: MIT */
/*
 * OpenSSH command lines for lab's guests and hosts: lab's own key and
 * known_hosts (never the user's ~/.ssh or its config: -F /dev/null),
 * StrictHostKeyChecking=yes against a pinned key under a HostKeyAlias,
 * one ControlMaster per target, and every remote argument shell-quoted
 * (ssh joins its arguments into one string for the remote shell).
 */
#pragma once
#include <stdbool.h>
#include "../util/command.h"

struct ssh_target {
	const char *user;        /* default root */
	const char *host;        /* default 127.0.0.1 */
	unsigned port;
	const char *identity;
	const char *known_hosts;
	const char *alias;       /* HostKeyAlias; NULL: the host itself */
	const char *control;     /* ControlPath, or NULL for no master */
	unsigned connect_timeout; /* seconds; 0: 10 */
	/* reach host:port from this machine (a guest's forwarded port on a remote
	 * hypervisor's loopback): ssh -W through it, as ProxyCommand */
	const struct ssh_target *via;
};

/* `ssh <options> user@host` into c (command_init done here). */
void ssh_command(struct command *c, const struct ssh_target *t, bool tty);
/* Append argv as one remote command line, each word shell-quoted. */
void ssh_remote_argv(struct command *c, char *const *argv, size_t n);
/* `scp <options> FROM TO` where a remote side is written ":path" (the target's host is added). */
void scp_command(struct command *c, const struct ssh_target *t, const char *from, const char *to);
/* Stop the target's ControlMaster, if one runs. */
void ssh_control_exit(const struct ssh_target *t);
