/* SPDX-License-Identifier: MIT */
/*
 * Where a lab VM's domain runs, behind one table of operations: the local
 * backend (libvirt's embedded QEMU driver in the VM's own folder, local.c)
 * and the remote one (a hypervisor host reached as qemu+ssh://, its files
 * copied there, remote.c). vm.c picks the backend once, in vm_up from
 * vm_opts.remote and in vm_load from what vm.json says, and calls through
 * it; what both share (the instance, the domain XML, the holder process,
 * waiting for ssh, the teardown) stays in vm.c.
 *
 * The table knows struct vm only by name, so this header includes no
 * part of vm.h and vm.c includes no backend's file.
 */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include "domain.h"

struct diags;
struct instance;
struct vm;
struct vm_opts;

/* What a backend made ready for the domain on the machine that runs it. */
struct vm_machine {
	struct domain_host host; /* its CPUs and NUMA nodes (placement) */
	char *host_storage;      /* the strings `host` points into */
	bool kvm;                /* whether KVM works there */
	/* the domain's files, as paths on that machine */
	char *kernel, *modules, *disk, *seed, *console;
};

struct vm_backend_ops {
	const char *name;         /* "local", "remote" */
	const char *prepare_step; /* what prepare does, for progress; NULL: nothing worth saying */
	/*
	 * Make the machine ready for v's domain once the instance (overlay,
	 * seed, keys) is in v->dir: the ssh port (v->port), the URI the holder
	 * opens (v->uri), on another host the kernel, image and instance copied
	 * there; *ret says where they are and what the machine is. 0, or
	 * negative with the reason in d (what was made there stays named in v
	 * for destroy).
	 */
	int (*prepare)(struct vm *v, const struct vm_opts *o, const struct instance *in, struct vm_machine *ret,
		       struct diags *d);
	/* The domain started (the holder said so); NULL: nothing to do then. */
	void (*started)(const struct vm *v, const struct vm_opts *o);
	/* Bring the console's new lines to v->console (a file here). */
	void (*console_sync)(const struct vm *v);
	/* The pid of v's QEMU on this machine; 0 when none here. */
	pid_t (*qemu_pid)(const struct vm *v);
	/* libvirt's log of v's QEMU, when it is on this machine; else NULL. */
	char *(*qemu_log)(const struct vm *v);
	/* After the holder is gone: stop and remove what it may have left. */
	void (*destroy)(const struct vm *v);
};

extern const struct vm_backend_ops vm_backend_local;
extern const struct vm_backend_ops vm_backend_remote;

void vm_machine_release(struct vm_machine *m);
