/* SPDX-License-Identifier: MIT */
/*
 * lab doctor --engine slurm: is the cluster of lab.yaml's engine: section
 * ready for `lab run --engine slurm`? The checks are doctor.h's, in order:
 * the section, the controller (sinfo answers), the partition and its
 * nodes, the spool from here, then one per node of the partition. On each
 * idle node one short srun runs the node's lab as `lab doctor --node-probe
 * SPOOL MARKER`, whose one line of JSON (a doctor_node_report) says its
 * version, KVM or TCG, libvirt's QEMU driver, and whether it sees the
 * head's marker file in the spool and can write there. A node that is
 * busy, down or drained is listed with its state, not probed.
 *
 * Every Slurm command goes through command.h with a timeout (tests answer
 * them with a command hook); nothing here prints. The readers of sinfo's
 * lines and of the probe's JSON are pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "doctor.h"

/* What the cluster checks need from lab.yaml and the command line. */
struct doctor_cluster {
	const char *file;      /* lab.yaml's path, for messages */
	bool have_file;        /* it exists and was loaded */
	bool declared;         /* it has an engine: section */
	const char *partition; /* engine: partition:, NULL: the cluster's default */
	const char *account, *qos, *reservation; /* srun takes them as sbatch does */
	const char *spool;     /* engine: spool:, NULL: none */
	const char *lab;       /* lab's executable on the nodes (engine: lab:, else this one) */
	const char *version;   /* the head's version: each node's lab must say the same */
	uint64_t timeout_usec; /* each Slurm command at most; 0: 30 s for sinfo, 120 s a probe */
	/* told before each step that may take seconds ("probing n1"); may be NULL */
	void (*progress)(void *userdata, const char *what);
	void *userdata;
};

/* The checks of the cluster o describes, appended to *v (n of them). */
void doctor_cluster_checks(const struct doctor_cluster *o, struct doctor_check **v, size_t *n);

/* A partition as `sinfo --noheader --Node --format=%N|%P|%T` says it: its nodes and their states. */
struct doctor_partition {
	char *name;
	bool is_default;
	struct strv nodes;
	struct strv states; /* "idle", "allocated", "mixed", "down", "drained*", ... as sinfo says */
};

void doctor_partition_release(struct doctor_partition *p);
/*
 * Read sinfo's lines (one per node and partition, "n1|lab*|idle", the
 * default partition marked '*') for `partition` (NULL: the default one)
 * into *ret. -ENOENT when there is no such partition (or no default one):
 * *ret_err names the partitions there are; -EINVAL for a line that is no
 * NODE|PARTITION|STATE, said in *ret_err. *ret untouched on failure.
 */
int doctor_sinfo_parse(const char *text, const char *partition, struct doctor_partition *ret, char **ret_err);
/* Whether a node in this sinfo state takes the probe now: idle, responding, not reserved or powered down. */
bool doctor_node_state_idle(const char *state);

/* What `lab doctor --node-probe` found on a node. */
struct doctor_node_report {
	char *node;          /* the node's name (SLURMD_NODENAME, else the host name) */
	char *version;       /* its lab's version */
	bool kvm;
	char *kvm_why;       /* why not KVM, or NULL */
	char *libvirt;       /* "libvirt 9.0.0, QEMU 7.2.0", or NULL */
	char *libvirt_error; /* why not, or NULL */
	bool spool_checked;  /* a spool was given */
	char *spool_error;   /* NULL: the spool is a folder, the head's marker is in it, and it is writable */
};

/* On a node: probe this machine (its /dev/kvm, libvirt, the spool and the head's marker in it; either may be NULL). */
void doctor_node_probe(const char *version, const char *spool, const char *marker, struct doctor_node_report *ret);
void doctor_node_report_release(struct doctor_node_report *r);
/* The report as one line of JSON and a newline. */
void doctor_node_report_format(const struct doctor_node_report *r, struct strbuf *out);
/*
 * Read a probe's output: the last line that is not empty must be its JSON
 * (srun may say more before it). 0, or -EINVAL with *ret_err; *ret
 * untouched on failure.
 */
int doctor_node_report_parse(const char *text, size_t len, struct doctor_node_report *ret, char **ret_err);
/*
 * The check of a node from its report (pure): `name` is Slurm's name for
 * it, `version` the head's, `spool` whether the head gave one. Appended to *v.
 */
void doctor_node_check(const char *name, const struct doctor_node_report *r, const char *version, bool spool,
		       struct doctor_check **v, size_t *n);
