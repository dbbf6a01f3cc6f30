/* SPDX-License-Identifier: MIT */
/*
 * What a machine offers a guest, read without libvirt: whether KVM works,
 * its CPUs and NUMA nodes (for placement), and a port for QEMU's forwarded
 * ssh. The VM backends (local.c, remote.c) and `lab doctor` use it; it
 * knows nothing of a VM.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include "domain.h"

/* Fill `h` from /sys (strings point into `storage`, which the caller frees). */
void vm_probe_host(struct domain_host *h, char **storage);
/* Fill `h`'s CPU lists from an online cpulist and one per NUMA node with CPUs
 * (copied into *storage, which the caller frees); what vm_probe_host reads. */
void vm_host_layout(struct domain_host *h, char **storage, const char *online, const char *const *nodes, size_t n);
/*
 * A port for QEMU's forwarded ssh, below the host's ephemeral range (the
 * first number of `port_range`, ip_local_port_range's text; NULL: 32768):
 * a port the kernel hands out for bind(0) is also what it gives the next
 * outgoing connection (lab's own ssh to other guests among them), which
 * could take it between this check and QEMU's bind. `taken` says which are
 * in use. 0, or -EADDRINUSE.
 */
int vm_pick_port(const char *port_range, bool (*taken)(unsigned port, void *userdata), void *userdata,
		 unsigned *ret);
/* vm_pick_port on this machine: a port nothing holds on 127.0.0.1. */
int vm_free_local_port(unsigned *ret);
/*
 * Whether guests here can use KVM: LAB_ACCEL=kvm or tcg decides when set;
 * else /dev/kvm must open read-write, speak API 12 and not be PVM
 * (kvm_pvm runs only guests built for it). *ret_why (may be NULL): why
 * not, a static string.
 */
bool vm_kvm_usable(const char **ret_why);
bool vm_kvm_available(void);
/* A small file (/proc, /sys) without its trailing newlines and spaces; NULL when unreadable. */
char *vm_read_trimmed(const char *path);
