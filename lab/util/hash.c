/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "alloc.h"
#include "hash.h"
#include "banned.h"

struct hasher {
	EVP_MD_CTX *ctx;
};

struct hasher *hasher_new(void)
{
	struct hasher *h = xmalloc(sizeof(*h));

	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		abort();
	return h;
}

void hasher_add(struct hasher *h, const void *data, size_t len)
{
	if (len && EVP_DigestUpdate(h->ctx, data, len) != 1)
		abort();
}

void hasher_add_str(struct hasher *h, const char *s)
{
	hasher_add(h, s, strlen(s) + 1);
}

void hasher_finish(struct hasher *h, char out[SHA256_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1 || n != 32)
		abort();
	for (unsigned i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	struct hasher *h = hasher_new();

	hasher_add(h, data, len);
	hasher_finish(h, out);
}

int sha256_file(const char *path, char out[SHA256_HEX_LEN + 1])
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return sha256_fd(fd, out);
}

int sha256_fd(int fd, char out[SHA256_HEX_LEN + 1])
{
	struct hasher *h;
	char buf[65536];
	ssize_t n;

	h = hasher_new();
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			int r = -errno;

			if (errno == EINTR)
				continue;
			hasher_finish(h, out);
			return r;
		}
		hasher_add(h, buf, (size_t)n);
	}
	hasher_finish(h, out);
	return 0;
}
