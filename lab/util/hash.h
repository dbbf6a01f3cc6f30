/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 through OpenSSL's libcrypto (already a kernel build dependency):
 * content addresses for artifacts, patch identities, manifests.
 */
#pragma once

#include <stddef.h>

#define SHA256_HEX_LEN 64

struct hasher;

struct hasher *hasher_new(void);
void hasher_add(struct hasher *h, const void *data, size_t len);
void hasher_add_str(struct hasher *h, const char *s); /* with its NUL, so "ab","c" != "a","bc" */
/* Writes 64 hex digits and a NUL; frees the hasher. */
void hasher_finish(struct hasher *h, char out[SHA256_HEX_LEN + 1]);
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);
/* Hash a file's contents; 0 or a negative errno. */
int sha256_file(const char *path, char out[SHA256_HEX_LEN + 1]);
/* Hash what is left to read of fd; 0 or a negative errno. */
int sha256_fd(int fd, char out[SHA256_HEX_LEN + 1]);
