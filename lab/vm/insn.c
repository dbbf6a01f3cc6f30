/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/path.h"
#include "insn.h"
#include "vm.h"
#include "../util/banned.h"

char *insn_socket_path(const struct vm *v)
{
	return path_join(v->dir, VM_INSN_SOCKET);
}

/* A path longer than sun_path is reached through its folder's /proc/self/fd entry (the plugin binds it so). */
static int sock_connect(int fd, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dfd = -1;
	size_t len = strlen(path);
	int n;

	if (len < sizeof(sa.sun_path)) {
		memcpy(sa.sun_path, path, len + 1);
	} else {
		dir = path_dirname(path);
		if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return -errno;
		n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, strrchr(path, '/') + 1);
		if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
			return -ENAMETOOLONG;
	}
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
}

int insn_snapshot_read(const char *path, struct strbuf *out, char **ret_err)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	double deadline = now_sec() + INSN_SNAPSHOT_TIMEOUT_MS / 1000.0;
	size_t got = 0;
	char buf[4096];
	int r;

	if (fd < 0 || (r = sock_connect(fd, path)) < 0) {
		r = fd < 0 ? -errno : r;
		*ret_err = xasprintf("cannot connect to '%s': %s", path, strerror(-r));
		return r;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double now = now_sec();
		ssize_t n;

		if (now >= deadline) {
			*ret_err = xasprintf("'%s' sent no end within %d ms", path, INSN_SNAPSHOT_TIMEOUT_MS);
			return -ETIME;
		}
		r = poll(&p, 1, (int)((deadline - now) * 1000) + 1);
		if (r < 0 && errno != EINTR) {
			*ret_err = xasprintf("poll on '%s': %s", path, strerror(errno));
			return -errno;
		}
		if (r <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			r = -errno;
			*ret_err = xasprintf("reading '%s': %s", path, strerror(errno));
			return r;
		}
		if (n == 0)
			return 0;
		if (got + (size_t)n > INSN_SNAPSHOT_MAX) {
			*ret_err = xasprintf("'%s' sent more than %d bytes: not a snapshot", path, INSN_SNAPSHOT_MAX);
			return -EMSGSIZE;
		}
		strbuf_add(out, buf, (size_t)n);
		got += (size_t)n;
	}
}
