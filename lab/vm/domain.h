/* SPDX-License-Identifier: MIT */
/*
 * libvirt domain XML for one lab VM: a pure function of a topology, the
 * artifacts it boots and the host it lands on (golden-tested, judged by
 * virt-xml-validate).
 *
 * q35, direct kernel boot with the variant's command line, the overlay on
 * virtio (vda, so root=/dev/vda), the NoCloud seed as a SATA cdrom, the
 * serial console into a file lab reads, and QEMU user-mode networking
 * with restrict=on and only ssh forwarded from 127.0.0.1 (through
 * <qemu:commandline>: libvirt 9.0 forwards ports only with passt). The
 * guest reaches nothing but lab. With insn_plugin, QEMU loads lab's TCG
 * plugin (-plugin, TCG only) serving instruction counts on insn_socket.
 * <metadata> names lab as the owner so
 * stale domains can be found.
 */
#pragma once
#include <stdbool.h>
#include "../spec/spec.h"
#include "../util/strbuf.h"

#define LAB_XMLNS "https://lab-tool.invalid/xmlns/vm/1"

enum domain_accel { ACCEL_TCG, ACCEL_KVM };

#define DOMAIN_MAX_HOST_NODES 64

/* The host as far as placement goes. */
struct domain_host {
	const char *cpus;                         /* online CPUs, cpulist; NULL: 0..ncpus-1 */
	unsigned ncpus;
	unsigned nnodes;                          /* NUMA nodes with CPUs; <= 1: no binding */
	const char *node_cpus[DOMAIN_MAX_HOST_NODES]; /* cpulist of each node */
};

struct domain_config {
	const char *name;
	const struct spec_topology *topo;
	enum domain_accel accel;
	const struct domain_host *host;
	const char *kernel;  /* bzImage */
	const char *cmdline; /* the whole kernel command line */
	const char *disk;    /* overlay qcow2 */
	const char *seed;    /* seed ISO */
	const char *modules; /* modules disk or NULL */
	const char *console; /* serial log file */
	unsigned ssh_port;   /* on 127.0.0.1 */
	const char *mac;     /* NULL: QEMU's default */
	bool reboot_restarts; /* a guest reboot restarts it (lab vm up --reboot-restarts) */
	const char *cpuset;  /* host cpulist this VM owns (a `lab run --jobs` slot): every vCPU
			      * and the emulator pinned inside it; NULL: the topology's pinning */
	const char *insn_plugin; /* lab's QEMU TCG plugin (lab-insn.so) loaded with -plugin; NULL: none */
	const char *insn_socket; /* where it serves its counts */
	/* metadata */
	const char *vm;      /* lab's name for the VM */
	const char *owner;   /* the state folder that holds it */
	const char *variant, *release, *image, *image_id, *run_id;
};

void domain_format_xml(const struct domain_config *c, struct strbuf *out);

/* console=ttyS0 root=/dev/vda rw net.ifnames=0 panic=-1 no_timer_check, then `extra` (the variant's, the host's). */
char *domain_cmdline(const char *extra);

/*
 * The host CPUs of `h` that guests of topology `t` leave to everything else,
 * as a cpulist: the vCPUs each pinned inside one of `cpusets` (the --jobs
 * slots, NULL-terminated) or, with NULL, by the topology's pinning. lab's
 * own work goes there while such guests run, and QEMU's with `emulator:
 * auto`. NULL when the vCPUs float or take every CPU.
 */
char *domain_housekeeping_cpus(const struct domain_host *h, const struct spec_topology *t, char *const *cpusets);

/* How many vCPUs and KiB of memory the topology gives the guest. */
unsigned domain_vcpus(const struct spec_topology *t);
