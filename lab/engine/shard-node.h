/* SPDX-License-Identifier: MIT */
/*
 * A cluster node's side of a shard (what `lab shard JOB_DIR N` runs in a
 * Slurm array task; exec-slurm.c is the head's side). The node's lab must
 * be the head's version; the kernels and the image are taken from the
 * spool only after their digests match; the shard's run folder
 * (JOB_DIR/shard-N/work/<run id>, its runs pending) is resumed on this
 * node's libvirt, so a task run again repeats nothing finished; then the
 * folder goes back as a bundle, JOB_DIR/shard-N/result.tar.zst. A refusal
 * (another version, a spool that does not match, runs that could not go
 * on) is written to JOB_DIR/shard-N/error for the head, naming the node.
 * Never prints: the engine's events go to the callback.
 */
#pragma once

#include <stddef.h>
#include "engine.h"

struct shard_node_opts {
	const char *jobdir, *shard; /* JOB_DIR and N */
	const char *node;           /* this node's name, for the head */
	const char *version;        /* this lab's version */
	const char *layer, *insn_plugin, *state;
	void (*event)(void *userdata, const struct engine_event *ev);
	void *userdata;
};

/*
 * Run shard N of JOB_DIR here. 0 with the bundle's path and how many runs
 * it holds; -ENOENT when there is no such shard (nothing written);
 * -EPERM when refused: the line written to the shard's error file
 * ("node NODE: why", escaped) in *ret_why.
 */
int shard_node_run(const struct shard_node_opts *o, char **ret_bundle, size_t *ret_nruns, char **ret_why);
