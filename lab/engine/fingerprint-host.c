/* SPDX-License-Identifier: MIT */
/*
 * fingerprint.h's impure side: what this machine says of itself
 * (/proc/cpuinfo, uname, QEMU's and libvirt's versions), and the
 * fingerprint a worker writes next to each run (fingerprint.json).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/hash.h"
#include "../util/macro.h"
#include "../util/strbuf.h"
#include "../result/fingerprint.h"
#include "../util/banned.h"

/* The first line a program prints for --version, or NULL. */
static char *version_of(const char *prog)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct command c;
	int r;

	command_init(&c, prog);
	command_arg(&c, "--version");
	c.out = &out;
	c.timeout_usec = 10 * 1000000ULL;
	r = command_run(&c);
	command_release(&c);
	if (r != 0 || !out.buf)
		return NULL;
	return xstrdup(out.buf);
}

void fingerprint_collect_local(struct fingerprint *fp, const struct fp_probe *p)
{
	_cleanup_free_ char *qemu = version_of("qemu-system-x86_64");
	_cleanup_free_ char *virsh = version_of("virsh");
	_cleanup_free_ char *qv = fingerprint_qemu_version(qemu), *lv = fingerprint_libvirt_version(virsh);

	/* QEMU and libvirt are this machine's: a remote host's are not known here */
	if (!p || !p->remote_host) {
		_cleanup_strbuf_ struct strbuf ci = STRBUF_INIT;
		struct utsname u;

		if (strbuf_read_file(&ci, "/proc/cpuinfo", 8 << 20) >= 0 && ci.buf)
			fingerprint_from_cpuinfo(fp, ci.buf);
		if (uname(&u) == 0) {
			fingerprint_set(fp, FP_HOST, u.nodename);
			fingerprint_set(fp, FP_HOST_KERNEL, u.release);
		}
		fingerprint_set(fp, FP_QEMU, qv);
		fingerprint_set(fp, FP_LIBVIRT, lv);
		return;
	}
	fingerprint_set(fp, FP_HOST, p->remote_host);
	fingerprint_set(fp, FP_CPU_MODEL, p->remote_model);
	fingerprint_set(fp, FP_HOST_KERNEL, p->remote_kernel);
	if (p->remote_cpus) {
		_cleanup_free_ char *n = xasprintf("%u", p->remote_cpus);

		fingerprint_set(fp, FP_CPUS, n);
	}
}
