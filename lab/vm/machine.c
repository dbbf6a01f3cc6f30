/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "machine.h"
#include "../util/banned.h"

bool vm_kvm_usable(const char **ret_why)
{
	const char *force = getenv("LAB_ACCEL"), *why = NULL;
	int fd, api;

	if (force && (streq(force, "kvm") || streq(force, "tcg"))) {
		if (streq(force, "tcg"))
			why = "LAB_ACCEL=tcg";
	} else if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0) {
		why = "no usable /dev/kvm";
	} else {
		api = ioctl(fd, KVM_GET_API_VERSION, 0);
		close(fd);
		if (api != KVM_API_VERSION)
			why = "/dev/kvm does not speak KVM's API 12";
		else if (access("/sys/module/kvm_pvm", F_OK) == 0)
			/* seen here: an unmodified kernel stops with "kvm-pvm: INTERNAL_ERROR" */
			why = "/dev/kvm is PVM (kvm_pvm), which runs only guests built for it";
	}
	if (ret_why)
		*ret_why = why;
	return !why;
}

bool vm_kvm_available(void)
{
	return vm_kvm_usable(NULL);
}

char *vm_read_trimmed(const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 1 << 16) < 0)
		return NULL;
	while (sb.len && (sb.buf[sb.len - 1] == '\n' || sb.buf[sb.len - 1] == ' '))
		strbuf_setlen(&sb, sb.len - 1);
	return strbuf_detach(&sb, NULL);
}

void vm_host_layout(struct domain_host *h, char **storage, const char *online, const char *const *nodes, size_t n)
{
	_cleanup_strbuf_ struct strbuf all = STRBUF_INIT;
	size_t offs[DOMAIN_MAX_HOST_NODES + 1];

	if (n > DOMAIN_MAX_HOST_NODES)
		n = DOMAIN_MAX_HOST_NODES;
	h->cpus = NULL;
	h->nnodes = 0;
	offs[0] = 0;
	strbuf_addstr(&all, online && *online ? online : "0");
	strbuf_addch(&all, '\0');
	for (size_t i = 0; i < n; i++) {
		offs[i + 1] = all.len;
		strbuf_addstr(&all, nodes[i]);
		strbuf_addch(&all, '\0');
	}
	*storage = xmalloc(all.len);
	memcpy(*storage, all.buf, all.len);
	h->cpus = *storage + offs[0];
	h->nnodes = (unsigned)n;
	for (size_t i = 0; i < n; i++)
		h->node_cpus[i] = *storage + offs[i + 1];
}

void vm_probe_host(struct domain_host *h, char **storage)
{
	_cleanup_free_ char *online = vm_read_trimmed("/sys/devices/system/cpu/online");
	_cleanup_strv_ struct strv nodes = STRV_INIT;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	h->ncpus = ncpu > 0 ? (unsigned)ncpu : 1;
	for (unsigned node = 0; node < 1024 && nodes.n < DOMAIN_MAX_HOST_NODES; node++) {
		_cleanup_free_ char *p = xasprintf("/sys/devices/system/node/node%u/cpulist", node);
		_cleanup_free_ char *list = vm_read_trimmed(p);

		if (!list) {
			if (node > 0 && !path_is_dir("/sys/devices/system/node"))
				break;
			continue;
		}
		if (*list) /* not a memory-only node */
			strv_push(&nodes, list);
	}
	vm_host_layout(h, storage, online, (const char *const *)nodes.v, nodes.n);
}

/* Whether nothing holds 127.0.0.1:port (a test bind, closed again). */
static bool port_free(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

int vm_pick_port(const char *port_range, bool (*taken)(unsigned port, void *userdata), void *userdata,
		 unsigned *ret)
{
	unsigned low = 32768, span, seed;
	struct timespec ts;

	if (port_range) {
		unsigned l = (unsigned)strtoul(port_range, NULL, 10);

		if (l > 2048 && l <= 65535)
			low = l;
	}
	/* [low/2, low): 16384-32767 by default */
	span = low - low / 2;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = (unsigned)getpid() * 2654435761u ^ (unsigned)ts.tv_nsec;
	for (unsigned i = 0; i < 256; i++) {
		unsigned port = low / 2 + (seed + i * 7919u) % span;

		if (!taken(port, userdata)) {
			*ret = port;
			return 0;
		}
	}
	return -EADDRINUSE;
}

static bool port_taken(unsigned port, void *userdata)
{
	(void)userdata;
	return !port_free(port);
}

int vm_free_local_port(unsigned *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, "/proc/sys/net/ipv4/ip_local_port_range", 256) < 0)
		strbuf_reset(&sb);
	return vm_pick_port(sb.buf, port_taken, NULL, ret);
}
