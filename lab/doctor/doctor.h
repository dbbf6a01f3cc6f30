/* SPDX-License-Identifier: MIT */
/*
 * lab doctor: is this machine ready to build kernels and images and to run
 * guests? Each check says what it found and, when it is not ok, what to
 * install or fix. Probing is separate from formatting: the formatters are
 * pure (golden tests), the probes read the machine through a struct of
 * hooks tests can replace.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../util/strbuf.h"

enum doctor_status {
	DOCTOR_OK,
	DOCTOR_WARN,    /* works, slower or with less: said, not an error */
	DOCTOR_MISSING, /* lab cannot do part of its work: exit 1 */
};

struct doctor_check {
	const char *name;  /* "accel", "qemu", ... */
	const char *needs; /* what lab needs it for */
	enum doctor_status status;
	char *found;       /* what was found */
	const char *fix;   /* what to do when not ok */
	char *name_buf, *fix_buf; /* name and fix when made for this check (a node's): freed with it */
};

/* What the probes read; doctor_probe_machine fills it from this machine. */
struct doctor_machine {
	bool kvm;               /* KVM usable (vm_kvm_usable) */
	const char *kvm_why;    /* why not, or NULL: "no usable /dev/kvm" */
	bool root;
	bool cgroup2;           /* /sys/fs/cgroup/cgroup.controllers */
	char *cgroup_controllers;
	char *libvirt;          /* "libvirt 9.0.0, QEMU 7.2.0" or NULL */
	char *libvirt_error;
	uint64_t cache_free;    /* bytes free where lab's cache is */
	char *cache_dir;
	uint64_t mem_total;     /* bytes */
	unsigned cpus;
	bool kernel_source;     /* /usr/src/linux-source-6.1.tar.xz */
	bool libelf;            /* /usr/include/libelf.h (objtool) */
	char *(*which)(void *userdata, const char *prog); /* a program's path in PATH, or NULL */
	void *userdata;
};

/* Read this machine: /dev/kvm, an embedded libvirt QEMU connection, PATH, statvfs. */
void doctor_probe_machine(struct doctor_machine *m, const char *cache_dir);
void doctor_machine_release(struct doctor_machine *m);

/* Every check from what m says, in a fixed order. */
void doctor_checks(const struct doctor_machine *m, struct doctor_check **ret, size_t *n);
void doctor_checks_free(struct doctor_check *c, size_t n);
/* Append a check; it takes found. The _owned form takes name and fix too (either may be static: NULL buffers). */
void doctor_check_add(struct doctor_check **v, size_t *n, const char *name, const char *needs, enum doctor_status st,
		      char *found, const char *fix);
void doctor_check_add_owned(struct doctor_check **v, size_t *n, char *name, const char *needs,
			    enum doctor_status st, char *found, char *fix);
/* The worst status of all. */
enum doctor_status doctor_worst(const struct doctor_check *c, size_t n);

/* Pure formatters: a table with a fix under each check that is not ok, and a summary line; a JSON array. */
void doctor_format_text(const struct doctor_check *c, size_t n, struct strbuf *out);
struct json;
void doctor_format_json(const struct doctor_check *c, size_t n, struct json *j);
