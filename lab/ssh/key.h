/* SPDX-License-Identifier: MIT */
/*
 * lab's ssh keys (key.c). Never prints: diagnostics go to d.
 */
#pragma once

#include "../util/diag.h"

/* lab's own key pair, <cache>/ssh/id_ed25519, made on first use. */
int ssh_lab_key(const char *cache, char **ret_private, char **ret_public_line, struct diags *d);
/* A new ed25519 key pair at path and path.pub, no passphrase, with comment. */
int ssh_keygen(const char *path, const char *comment, struct diags *d);
/* The first line of the file at path (a public key), without its newline. */
int ssh_read_line(const char *path, char **ret, struct diags *d);
