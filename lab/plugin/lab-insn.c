/* SPDX-License-Identifier: MIT */
/*
 * lab-insn.so: a QEMU TCG plugin that counts the guest instructions each
 * vCPU executes and serves the counts on a UNIX socket.
 *
 *   qemu-system-x86_64 ... -plugin file=lab-insn.so,sock=/path/insn.sock
 *
 * At translation every block gets one execution callback that adds the
 * block's instruction count to its vCPU's counter: no callback per
 * instruction. Under MTTCG each vCPU thread writes only its own counter
 * (a cache line each), so the counts are exact per vCPU with no lock; a
 * reader sees each 64-bit counter whole. Known inexactness: the count is
 * added when a block starts, so a block cut short by an exception (a
 * page fault, an undefined opcode) counts the instructions after the
 * faulting one as well, and the faulting one again when it is retried.
 *
 * A listener thread accepts on the socket; each connection gets one
 * snapshot and is closed:
 *
 *   insn-v1 vcpus N
 *   vcpu 0 COUNT
 *   ...
 *   end
 *
 * The plugin must never take QEMU down: every failure after install is
 * ignored (a reader sees a closed connection), the output is bounded by
 * the vCPU count, and the thread blocks every signal so QEMU's own
 * handlers keep seeing them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "qemu-plugin-abi.h"

LAB_QEMU_PLUGIN_EXPORT int qemu_plugin_version = LAB_QEMU_PLUGIN_API_VERSION;

#define MAX_VCPUS 4096
#define LINE_MAX_BYTES 48 /* "vcpu 4095 18446744073709551615\n" and then some */

struct counter {
	uint64_t n;
} __attribute__((aligned(64)));

static struct counter *counts;
static unsigned nvcpus;
static int listen_fd = -1;
static char *sock_path;

static void tb_exec(unsigned int vcpu, void *udata)
{
	if (vcpu < nvcpus) {
		/* one writer per counter (its vCPU's thread): a relaxed store keeps it whole for the reader */
		uint64_t n = __atomic_load_n(&counts[vcpu].n, __ATOMIC_RELAXED);

		__atomic_store_n(&counts[vcpu].n, n + (uintptr_t)udata, __ATOMIC_RELAXED);
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
}

/* The snapshot into buf (size at least 32 + nvcpus * LINE_MAX_BYTES); its length. */
static size_t snapshot(char *buf, size_t size)
{
	size_t len = 0;
	int k = snprintf(buf, size, "insn-v1 vcpus %u\n", nvcpus);

	if (k < 0 || (size_t)k >= size)
		return 0;
	len = (size_t)k;
	for (unsigned i = 0; i < nvcpus; i++) {
		k = snprintf(buf + len, size - len, "vcpu %u %" PRIu64 "\n", i,
			     __atomic_load_n(&counts[i].n, __ATOMIC_RELAXED));
		if (k < 0 || (size_t)k >= size - len)
			return 0;
		len += (size_t)k;
	}
	k = snprintf(buf + len, size - len, "end\n");
	if (k < 0 || (size_t)k >= size - len)
		return 0;
	return len + (size_t)k;
}

static void serve(int fd, char *buf, size_t size)
{
	struct timeval tv = { .tv_sec = 2 };
	size_t len = snapshot(buf, size), off = 0;

	/* a reader that does not read cannot hold the thread for long */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (off < len) {
		ssize_t w = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

static void *listener(void *arg)
{
	size_t size = 32 + (size_t)nvcpus * LINE_MAX_BYTES;
	char *buf = malloc(size);

	(void)arg;
	if (!buf)
		return NULL;
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				if (errno != EINTR && errno != ECONNABORTED)
					usleep(100 * 1000);
				continue;
			}
			break; /* the socket is gone (QEMU exits) */
		}
		serve(fd, buf, size);
		close(fd);
	}
	free(buf);
	return NULL;
}

/* Bind `path`; one longer than sun_path is reached through its folder's /proc/self/fd entry. */
static int bind_path(int fd, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *slash = strrchr(path, '/');
	int dfd = -1, r;

	if (strlen(path) < sizeof(sa.sun_path)) {
		memcpy(sa.sun_path, path, strlen(path) + 1);
	} else {
		char *dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : NULL;

		dfd = dir ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		free(dir);
		if (dfd < 0 || snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, slash + 1) >=
				       (int)sizeof(sa.sun_path)) {
			snprintf(err, errlen, "socket path too long: %s", path);
			if (dfd >= 0)
				close(dfd);
			return -1;
		}
	}
	unlink(sa.sun_path);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0)
		snprintf(err, errlen, "cannot bind %s: %s", path, strerror(errno));
	else
		chmod(sa.sun_path, 0600);
	if (dfd >= 0)
		close(dfd);
	return r;
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	if (listen_fd >= 0) {
		shutdown(listen_fd, SHUT_RDWR);
		unlink(sock_path);
	}
}

static int fail(const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	/* QEMU's log shows it only with -d plugin; its stderr goes to libvirt's log of the domain */
	qemu_plugin_outs(msg);
	fputs(msg, stderr);
	return -1;
}

LAB_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	char err[256];
	sigset_t all, old;
	pthread_t t;
	int r;

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "sock=", 5) == 0 && argv[i][5])
			sock_path = argv[i] + 5;
		else
			return fail("lab-insn: unknown argument '%s' (sock=PATH)\n", argv[i]);
	}
	if (!sock_path)
		return fail("lab-insn: no socket%s (sock=PATH)\n", "");
	if (!info->system_emulation)
		return fail("lab-insn: %s", "counts a whole system: system emulation only\n");
	if (info->system.max_vcpus < 1 || info->system.max_vcpus > MAX_VCPUS)
		return fail("lab-insn: %s", "the machine's vCPU count is out of range\n");
	nvcpus = (unsigned)info->system.max_vcpus;
	counts = aligned_alloc(64, nvcpus * sizeof(*counts));
	if (!counts)
		return fail("lab-insn: %s", "out of memory\n");
	memset(counts, 0, nvcpus * sizeof(*counts));
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return fail("lab-insn: socket: %s\n", strerror(errno));
	if (bind_path(listen_fd, sock_path, err, sizeof(err)) < 0 || listen(listen_fd, 8) < 0) {
		if (!*err)
			snprintf(err, sizeof(err), "listen: %s", strerror(errno));
		return fail("lab-insn: %s\n", err);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, NULL, listener, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return fail("lab-insn: cannot start its thread: %s\n", strerror(r));
	pthread_detach(t);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
