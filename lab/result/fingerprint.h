/* SPDX-License-Identifier: MIT */
/*
 * A run's environment fingerprint: what the numbers were measured on, so a
 * comparison can tell when two sides were not measured alike. Every field
 * is a string, NULL when lab could not learn it ("unknown": never a guess).
 *
 *   host            the hypervisor or bare-metal host's name    noted
 *   cpu_model       /proc/cpuinfo's model name there            matters
 *   cpus            its CPU count                               matters
 *   microcode       its microcode revision                      noted
 *   host_kernel     its uname -r                                noted
 *   qemu            QEMU's version                              matters
 *   libvirt         libvirt's version                           noted
 *   accel           kvm or tcg                                  matters
 *   timing          host or icount                              matters
 *   topology        the guest topology's name                   noted
 *   topology_digest sha256 of the resolved shape                matters
 *   pinning         vCPU and emulator placement (a shape, not
 *                   the host CPU numbers a slot got)            matters
 *   kernel_config   sha256 of the booted variant's .config      matters between runs of the SAME variant;
 *                                                               between variants it is no difference at all
 *   kernel_commit   the git commit the variant was built from   the same (a git source's kernels only)
 *   image           the image's content id                      matters
 *   lab             lab's version                               noted
 *
 * The rule: a difference that can move a figure by itself (other CPU, other
 * emulator, other clock, other guest shape or placement, other disk image,
 * a kernel rebuilt with another config under the same name) makes the
 * comparison unfair and "matters"; the rest is "noted": shown, never
 * refused. A field unknown on one side is noted too: lab cannot say it
 * differs (runs stored before fingerprints have none at all).
 *
 * Pure but fingerprint_collect_local, which probes this machine
 * (lab/engine/fingerprint-host.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../util/strbuf.h"

struct json;

enum fp_field {
	FP_HOST, FP_CPU_MODEL, FP_CPUS, FP_MICROCODE, FP_HOST_KERNEL, FP_QEMU, FP_LIBVIRT, FP_ACCEL, FP_TIMING,
	FP_TOPOLOGY, FP_TOPOLOGY_DIGEST, FP_PINNING, FP_KERNEL_CONFIG, FP_IMAGE, FP_LAB, FP_KERNEL_COMMIT, FP_NFIELDS,
};

/* How a difference in the field weighs. */
enum fp_weight { FP_NOTED, FP_MATTERS, FP_MATTERS_SAME_VARIANT };

struct fingerprint {
	char *f[FP_NFIELDS];
};

/* Longest value kept: longer ones are refused on reading. */
#define FP_MAX_VALUE 256

/* The field's JSON key ("cpu_model") and what a person reads ("cpu model"). */
const char *fp_field_key(enum fp_field f);
const char *fp_field_label(enum fp_field f);
enum fp_weight fp_field_weight(enum fp_field f);

void fingerprint_release(struct fingerprint *fp);
void fingerprint_copy(struct fingerprint *dst, const struct fingerprint *src);
/* Sets field f to a copy of v (NULL or "": unknown); newlines become spaces. */
void fingerprint_set(struct fingerprint *fp, enum fp_field f, const char *v);
bool fingerprint_equal(const struct fingerprint *a, const struct fingerprint *b);
bool fingerprint_empty(const struct fingerprint *fp);

struct json_doc;
/* The fingerprint as one JSON object, every field (null: unknown). */
void fingerprint_write_json(const struct fingerprint *fp, struct json *j);
/* The same text, pretty, with a trailing newline (fingerprint.json). */
void fingerprint_format_json(const struct fingerprint *fp, struct strbuf *out);
/* An object back: each member a string or null, no unknown member, none
 * longer than FP_MAX_VALUE; missing members are unknown. -EINVAL with
 * *ret_err (free it) naming the member. */
int fingerprint_read_json(const struct json_doc *v, struct fingerprint *ret, char **ret_err);
/* fingerprint_read_json on a text. */
int fingerprint_parse(const char *text, size_t len, struct fingerprint *ret, char **ret_err);

struct fp_diff {
	enum fp_field field;
	bool matters;
	const char *a, *b; /* borrowed; NULL: unknown */
};

/* The fields where a and b differ, into ret (up to FP_NFIELDS), those that
 * matter first; same_variant: both sides ran the same kernel variant (else
 * the kernel config is not compared).
 * Returns how many; *ret_matters how many matter. */
size_t fingerprint_diff(const struct fingerprint *a, const struct fingerprint *b, bool same_variant,
			struct fp_diff ret[FP_NFIELDS], size_t *ret_matters);
/* "cpu model 'A' / 'B'; host 'x' / 'y' (noted)": every difference in d. */
void fp_diffs_describe(const struct fp_diff *d, size_t n, struct strbuf *out);
/* The differences as a JSON array of {"field", "a", "b", "matters"}. */
void fp_diffs_write_json(const struct fp_diff *d, size_t n, struct json *j);
/* "cpu model differs" / "cpu model, qemu differ": the fields that matter in d. */
void fp_diff_why(const struct fp_diff *d, size_t n, struct strbuf *out);

/* Pure parsers of what the probes read. */
/* /proc/cpuinfo: the first "model name" (or "cpu model"), the processor count, the first "microcode". */
void fingerprint_from_cpuinfo(struct fingerprint *fp, const char *cpuinfo);
/* `qemu-system-x86_64 --version`'s first line: "8.2.2" from "QEMU emulator version 8.2.2 (Debian ...)". */
char *fingerprint_qemu_version(const char *text);
/* `virsh --version` / `libvirtd --version`: the last word of the first line. */
char *fingerprint_libvirt_version(const char *text);

/* What the run's own side knows, set by the caller: then the host's facts
 * read on this machine (cpuinfo, uname, QEMU and libvirt versions); for a
 * guest on another host, host is its name and only what lab can learn of it
 * is set. Never fails; what cannot be read stays unknown. */
struct fp_probe {
	const char *remote_host; /* NULL: this machine */
	const char *remote_model; /* what lab's host facts said, when known */
	unsigned remote_cpus;
	const char *remote_kernel;
};
void fingerprint_collect_local(struct fingerprint *fp, const struct fp_probe *p);
