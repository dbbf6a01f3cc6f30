/* SPDX-License-Identifier: MIT */
/*
 * The host's side of lab's instruction-counting QEMU plugin
 * (lab/plugin/lab-insn.c, loaded when vm_opts.insn_plugin is set): one
 * snapshot of its counts read from the socket in the VM's folder.
 *
 * The bytes come from a QEMU process running a guest: they are kept as
 * they are (at most INSN_SNAPSHOT_MAX) for the insn monitor's parser,
 * which judges them; nothing here interprets them.
 */
#pragma once

#include "../util/strbuf.h"

struct vm;

#define INSN_SNAPSHOT_MAX (256 * 1024)
#define INSN_SNAPSHOT_TIMEOUT_MS 5000

/* The socket of VM v's plugin (VM_INSN_SOCKET in its folder). */
char *insn_socket_path(const struct vm *v);
/*
 * Connect to `path`, append what the plugin sends until it closes to out.
 * 0, or a negative errno with *ret_err saying why (nothing connected,
 * no answer within INSN_SNAPSHOT_TIMEOUT_MS, more than INSN_SNAPSHOT_MAX
 * bytes); out may then hold part of an answer.
 */
int insn_snapshot_read(const char *path, struct strbuf *out, char **ret_err);
