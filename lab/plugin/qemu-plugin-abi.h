/* SPDX-License-Identifier: MIT */
/*
 * lab's own declarations of the part of QEMU's TCG plugin API that
 * lab-insn.so uses (QEMU installs no qemu-plugin.h on Debian 12). The API
 * is a C ABI documented in QEMU's docs/devel/tcg-plugins.rst; these are the
 * types and signatures of its API version 1, which Debian 12's QEMU 7.2
 * accepts (tests/t/t1330-insn.sh loads it into that QEMU): a plugin exports
 * `qemu_plugin_version` and `qemu_plugin_install`, QEMU exports the
 * qemu_plugin_* functions the plugin calls. Only what lab uses is here.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LAB_QEMU_PLUGIN_API_VERSION 1
#define LAB_QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

/* What QEMU tells the plugin at install; live only during the call. */
typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb; /* opaque: a block being translated */

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS, /* the callback reads no guest register */
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64, /* *ptr += imm, not atomic */
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

/* QEMU's side (resolved against the QEMU binary when it dlopens the plugin). */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
					      uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

/* The plugin's side. */
LAB_QEMU_PLUGIN_EXPORT extern int qemu_plugin_version;
LAB_QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv);
