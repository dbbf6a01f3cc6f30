/* SPDX-License-Identifier: MIT */
/*
 * The local executor: worker processes on this machine (pool.c), a group
 * of runs each, at most `jobs` at a time, each guest pinned to its own
 * host CPUs where the topology allows. It sees the engine through
 * executor.h only: the placement (engine_place), the workers' lines
 * (engine_message, which answers their "next"), a worker's own side
 * (engine_work, in the fork), and the runs a dead worker leaves
 * (engine_fail_run).
 */
#include <sched.h>
#include <stdint.h>
#include <unistd.h>
#include "../spec/spec.h"
#include "../util/alloc.h"
#include "../util/dirs.h"
#include "../util/units.h"
#include "../vm/domain.h"
#include "../vm/machine.h"
#include "../vm/vm.h"
#include "executor.h"
#include "pool.h"
#include "../util/banned.h"

struct local {
	const struct executor_run *r;
	unsigned jobs;
	size_t ended; /* groups whose worker ended */
};

/* What is about to happen, said once. */
static void announce(const struct executor_run *r, unsigned jobs)
{
	const struct spec_topology *t = spec_find_topology(r->s, r->e->topology.name);

	if (!r->total)
		return;
	if (r->e->boot == BOOT_SIDE_BY_SIDE)
		engine_emit_text(r->engine, ENGINE_EV_NOTE,
				 "%zu runs, one at a time%s; boot: side-by-side, a guest per variant (%zu of %llu MiB) "
				 "up together, the runs alternating between them",
				 r->total, jobs > 1 ? " per host" : "", r->variants->n,
				 t ? (unsigned long long)(t->memory >> 20) : 0ULL);
	else
		engine_emit_text(r->engine, ENGINE_EV_NOTE, "%zu runs on %u guest%s at a time%s%s", r->total, jobs,
				 jobs > 1 ? "s" : "",
				 r->e->boot == BOOT_ONCE ? "; boot: once, a guest serves all the runs of a variant in a boot"
							 : "",
				 engine_cpusets(r->engine) ? ", each pinned to its own host CPUs" : "");
}

/*
 * While pinned guests run here, lab (its workers, their ssh and parse
 * scripts, the VM holders) keeps to the host CPUs the vCPUs leave, where
 * there are any: its own work then never takes a vCPU's CPU. Only when
 * every guest of the experiment is on this machine. *saved: the affinity
 * to return to; false when nothing changed.
 */
static bool housekeep(const struct executor_run *r, cpu_set_t *saved)
{
	const struct spec_topology *t = spec_find_topology(r->s, r->e->topology.name);
	_cleanup_free_ char *storage = NULL, *hk = NULL;
	_cleanup_free_ uint8_t *bits = xcalloc(CPU_SETSIZE / 8, 1);
	struct domain_host h;
	cpu_set_t set;

	for (size_t i = 0; i < r->e->hosts.n; i++) {
		const struct spec_host *lh = engine_find_host(r->s, r->e->hosts.v[i].name, HOST_LIBVIRT);

		if (!lh || lh->address)
			return false;
	}
	if (!t || sched_getaffinity(0, sizeof(*saved), saved) < 0)
		return false;
	vm_probe_host(&h, &storage);
	if (!(hk = domain_housekeeping_cpus(&h, t, engine_cpusets(r->engine))) ||
	    parse_cpulist(hk, bits, CPU_SETSIZE, NULL) < 0)
		return false;
	CPU_ZERO(&set);
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if ((bits[c / 8] & (1u << (c % 8))) && CPU_ISSET(c, saved))
			CPU_SET(c, &set);
	if (!CPU_COUNT(&set) || sched_setaffinity(0, sizeof(set), &set) < 0)
		return false;
	engine_emit_text(r->engine, ENGINE_EV_NOTE, "lab's own work (ssh, parse scripts) on host CPUs %s, off the vCPUs'",
			 hk);
	return true;
}

static int on_work(void *userdata, size_t task, unsigned slot, int fd)
{
	const struct local *l = userdata;

	return engine_work(l->r->engine, task, slot, fd);
}

static void on_message(void *userdata, size_t task, unsigned slot, const char *line)
{
	const struct local *l = userdata;

	engine_message(l->r->engine, task, slot, line);
}

/* A worker ended. Runs of its group that did not end fail with the reason. */
static void on_ended(void *userdata, size_t task, unsigned slot, pid_t pid, int status)
{
	struct local *l = userdata;
	const struct executor_run *r = l->r;
	const struct run_group *g = &r->groups[task];

	(void)slot;
	l->ended++;
	engine_set_running(r->engine, r->ngroups - l->ended < l->jobs ? (unsigned)(r->ngroups - l->ended) : l->jobs);
	if (pid > 0) {
		/* a worker that died left its guest: it goes now, not at the next gc */
		_cleanup_free_ char *state = dirs_state(), *name = xasprintf("run-%d", (int)pid);
		_cleanup_free_ char *vmdir = dirs_vm(state, name);
		_cleanup_diags_ struct diags d = { 0 };

		if (access(vmdir, F_OK) == 0)
			vm_down(state, name, &d);
	}
	for (size_t j = 0; j < g->n; j++) {
		if (r->rs->runs[g->runs[j]].status != RUN_PENDING)
			continue;
		/* a worker that ended well after the policy said the group was done: what it
		 * never had stays pending (a sequential run's skipped boots leave the run) */
		if (status == 0 && !engine_issued(r->engine, g->runs[j]))
			continue;
		engine_fail_run(r->engine, g->runs[j],
				status < 0 ? xstrdup("lab could not start a worker for it")
					   : xasprintf("its worker ended (status %d) before the run did", status));
	}
}

static int execute_local(const struct executor_run *r)
{
	struct local l = { .r = r, .jobs = 1 };
	struct pool_ops ops = { .work = on_work, .message = on_message, .ended = on_ended, .userdata = &l };
	_cleanup_diags_ struct diags pd = { 0 };
	_cleanup_free_ char *err = NULL;
	bool housekept;
	cpu_set_t saved;

	if (engine_place(r->engine, false, &l.jobs, &err) < 0) {
		engine_emit_text(r->engine, ENGINE_EV_ERROR, "%s", err);
		return -1;
	}
	announce(r, l.jobs);
	engine_set_running(r->engine, r->ngroups < l.jobs ? (unsigned)r->ngroups : l.jobs);
	housekept = r->ngroups && housekeep(r, &saved);
	if (pool_run(r->ngroups, l.jobs, &ops, &pd) < 0)
		engine_emit(r->engine, &(struct engine_event){ .type = ENGINE_EV_DIAGS, .diags = &pd });
	if (housekept)
		sched_setaffinity(0, sizeof(saved), &saved);
	return 0;
}

const struct executor_ops executor_local = { .name = "local", .execute = execute_local };
