/* SPDX-License-Identifier: MIT */
/*
 * One lab VM: prepared, started through libvirt's C API, waited for, and
 * always torn down.
 *
 * Each VM lives in <state>/vms/<name>/ (overlay, seed, host key,
 * known_hosts, console.log, vm.json). A holder process per VM keeps the
 * libvirt connection open with the event loop running: the default URI is
 * libvirt's embedded QEMU driver rooted in the VM's folder (no daemon),
 * and with it a domain lives only as long as the process that holds the
 * connection keeps it (seen here: a second process that reopens the root
 * reattaches, and kills the domain when it exits). The holder defines and
 * starts the domain, and on SIGTERM (lab vm down, a failed boot, Ctrl-C
 * in lab) or when the domain stops, destroys and undefines it and exits.
 * Commands that only talk to the guest (ssh, console) need no libvirt.
 *
 * Where the domain runs is a backend's business (backend.h): this
 * machine's embedded driver (local.c) or a hypervisor host over
 * qemu+ssh:// (remote.c, vm_opts.remote). vm.c picks one per VM and
 * calls through it; the holder is holder.c, what the machine offers
 * (KVM, CPUs, a port) machine.c.
 *
 * Ready means: lab's ssh command succeeds against the pinned host key and
 * `uname -r` is the variant's release. A panic, an oops, a BUG, a domain
 * that stops, or a console silent for too long is a boot failure,
 * reported with the last console lines, and the VM is removed.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../image/image.h"
#include "../kernel/build.h"
#include "../spec/spec.h"
#include "../util/diag.h"
#include "domain.h"
#include "holder.h"
#include "machine.h"
#include "../ssh/ssh.h"

struct host;
struct vm_backend_ops;

/* The insn plugin's socket in the VM's folder (vm_opts.insn_plugin). */
#define VM_INSN_SOCKET "insn.sock"

struct vm {
	char *name;
	char *dir;
	char *domain;     /* libvirt domain name */
	char *uri;        /* the libvirt URI the holder uses */
	char *topology;
	char *variant;
	char *release;    /* expected uname -r */
	char *image;
	char *console;    /* serial log */
	char *identity, *known_hosts, *alias, *control;
	unsigned port;
	pid_t holder;
	pid_t owner;         /* the process the VM serves (a lab run); 0: none, the VM lives until vm down */
	double boot_seconds; /* start to ready */
	/* on a remote hypervisor host (NULL hostname: this machine): its name in
	 * lab.yaml, the VM's folder and console there, and how to reach it */
	char *host_name, *remote_dir, *remote_console;
	char *via_user, *via_host, *via_identity, *via_known_hosts, *via_control;
	unsigned via_port;
	struct ssh_target via; /* points into the strings above */
	const struct vm_backend_ops *backend; /* where the domain runs (backend.h); set by vm_up and vm_load */
};

struct vm_progress {
	void (*step)(void *userdata, const char *vm, const char *what);
	void *userdata;
};

struct vm_opts {
	const char *name;                 /* NULL: the topology's name */
	const char *uri;                  /* NULL: embedded QEMU driver in the VM's folder */
	struct host *remote;              /* uri is qemu+ssh:// on this host (lab host trust): files go there */
	const struct spec_topology *topo;
	const char *variant;
	const struct kartifact *kernel;
	const struct image_artifact *image;
	const char *cache;                /* lab's cache (ssh key) */
	const struct spec_experiment *experiment; /* sysctls, cgroups; may be NULL */
	const char *cmdline;              /* extra kernel arguments (the variant's, the host's) */
	const char *run_id;
	pid_t owner;                      /* a process whose end ends the VM at the next vm_gc; 0: none */
	uint64_t timeout_usec;            /* boot to ready; 0: 10 min under TCG, 3 min under KVM */
	uint64_t silence_usec;            /* console silent this long = hung; 0: 120 s */
	int accel;                        /* -1: auto (KVM when /dev/kvm works) */
	bool reboot_restarts;             /* a guest reboot restarts it (a VM playing a bare-metal host) */
	const char *cpuset;               /* host cpulist the VM is pinned inside (lab run --jobs); NULL: topology's */
	const char *evidence;             /* a folder: a failed boot's console.log and qemu.log are copied there */
	const char *insn_plugin;          /* lab-insn.so: QEMU counts instructions (TCG only; this machine only),
					   * served on <VM folder>/VM_INSN_SOCKET; NULL: no plugin */
	const struct vm_progress *progress;
	/* a boot again after QEMU crashed in the last one (the emulator's
	 * fault): the boot journal marks it "again" */
	bool again;
};

/*
 * Open libvirt's embedded QEMU driver as lab does, in a scratch root that
 * is removed again, and say its versions: "libvirt 9.0.0, QEMU 7.2.0". 0,
 * or negative with libvirt's reason in err.
 */
int vm_libvirt_version(char **ret, struct strbuf *err);

/*
 * Define, start and wait for a VM (see vm_opts). 0 when ssh answers with
 * the variant's release; -ESRCH when QEMU itself died during the boot
 * (libvirt: "reason=crashed"), a fault of the emulator rather than of the
 * guest kernel, which a caller may retry; -EINTR on a signal; else negative
 * with the reason (and the console's last lines) in d. A failed boot's VM
 * is gone; its console.log and qemu.log are in o->evidence if given.
 */
int vm_up(const char *state, const struct vm_opts *o, struct vm *ret, struct diags *d);
/* -EINVAL with a diagnostic when the topology cannot run on that accelerator (timing: icount under KVM). */
int vm_accel_check(const struct spec_topology *t, bool kvm, struct diags *d);
/*
 * A VM name (vm up --name, vm xml --name, or the topology's): it becomes the
 * domain lab-NAME, a state folder and a host name. 0, or -EINVAL with an error.
 */
int vm_name_check(const char *name, struct diags *d);
/*
 * Why QEMU stopped, from its log's text: libvirt's last "shutting down,
 * reason=R" (crashed: QEMU died of a signal; shutdown, destroyed: the guest
 * or somebody stopped it) and QEMU's own last message before it. NULL when
 * the log does not say. *crashed: QEMU itself failed.
 */
char *vm_qemu_stop_reason(const char *log, bool *crashed);
/* The QEMU process of a VM on this machine (its backend says); -1 on a remote host, 0 when gone. */
pid_t vm_qemu_pid(const struct vm *v);
/* Stop the holder (domain destroyed and undefined) and remove the folder. */
int vm_down(const char *state, const char *name, struct diags *d);
int vm_load(const char *state, const char *name, struct vm *ret, struct diags *d);
/* Press the VM's reset button (its holder resets the domain; a
 * bare-metal host's power-cycle in the tests). */
int vm_reset(const char *state, const char *name, struct diags *d);
/* Remove the VMs whose holder is gone, or whose owner process is (a killed
 * lab run): domain, QEMU, folder. Names go to `removed`. */
int vm_gc(const char *state, bool dry_run, struct strv *removed, struct diags *d);
/* Every VM folder; `alive` tells whether its holder still runs. */
int vm_list(const char *state, struct vm **ret, bool **alive, size_t *n);
bool vm_alive(const struct vm *v);
/* Where QEMU's threads may run: "TID\tNAME\tCPULIST" a line (e.g. "CPU 0/TCG"). */
int vm_placement(const struct vm *v, struct strbuf *out);
void vm_ssh_target(const struct vm *v, struct ssh_target *t);
/* A VM on another host: bring its console file's new lines to v->console. */
void vm_console_sync(const struct vm *v);
struct json;
/* The VM as vm.json holds it (and `lab vm up --json` prints it). */
void vm_format_json(const struct vm *v, struct json *j);
/* Write v's vm.json (a backend saves what it made before it goes on: lab gc
 * finds it after a kill). */
int vm_save(const struct vm *v);
void vm_release(struct vm *v);
void vms_free(struct vm *v, size_t n);
