/* SPDX-License-Identifier: MIT */
/*
 * The engine's scheduling: the pending runs into groups (one worker's
 * each), how many workers at a time on which host CPUs, the policy asked
 * for each next run (a run it adds made here), and the boots with the runs
 * each served. No I/O but the notes placement says.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/units.h"
#include "../vm/domain.h"
#include "engine-priv.h"
#include "../util/banned.h"


const struct spec_host *engine_find_host(const struct spec *s, const char *name, enum host_type type)
{
	for (size_t i = 0; name && i < s->nhosts; i++)
		if (streq(s->hosts[i].name, name) && s->hosts[i].type == type)
			return &s->hosts[i];
	return NULL;
}

const struct plan_run *engine_plan_run(const struct engine *x, const char *id)
{
	for (size_t k = 0; x->p && k < x->p->n; k++)
		if (streq(x->p->runs[k].id, id))
			return &x->p->runs[k];
	for (size_t k = 0; k < x->nextra; k++)
		if (x->extra[k].planned && streq(x->extra[k].pr.id, id))
			return &x->extra[k].pr;
	return NULL;
}

ssize_t engine_find_run(const struct result_set *rs, const char *id)
{
	for (size_t i = 0; id && i < rs->n; i++)
		if (streq(rs->runs[i].id, id))
			return (ssize_t)i;
	return -1;
}

/* The plan's host of a stored run ("local" unless the experiment names hosts). */
static const char *run_host(const struct engine *x, const struct result_run *r)
{
	const struct plan_run *pr = engine_plan_run(x, r->id);

	return pr ? pr->host : "";
}

static void group_push(struct run_group *g, size_t i)
{
	GROW(g->runs, g->alloc, g->n + 1);
	g->runs[g->n++] = i;
}

/* The plan's boot of a stored run, 0 when it is not in the plan. */
static unsigned run_boot(const struct engine *x, const struct result_run *r)
{
	const struct plan_run *pr = engine_plan_run(x, r->id);

	return pr ? pr->boot : 0;
}

/* Runs into groups: each pending run alone, with `boot: once` a group per
 * variant, host and boot of the plan, with `boot: side-by-side` a group per
 * host and boot (its runs in the plan's order, the variants interleaved).
 * Groups are in the order of their first run: the plan's A B, B A, A B ... */
void engine_make_groups(struct engine *x)
{
	bool shared = x->e->boot != BOOT_PER_RUN, side = x->e->boot == BOOT_SIDE_BY_SIDE;

	x->groups = xcalloc(x->rs->n + 1, sizeof(*x->groups));
	for (size_t i = 0; i < x->rs->n; i++) {
		const struct result_run *r = &x->rs->runs[i];
		unsigned boot = run_boot(x, r);
		struct run_group *g = NULL;

		if (r->status != RUN_PENDING)
			continue;
		for (size_t k = 0; shared && k < x->ngroups && !g; k++) {
			const struct result_run *first = &x->rs->runs[x->groups[k].runs[0]];

			if ((side || streq(first->variant, r->variant)) && x->groups[k].boot == boot &&
			    streq(run_host(x, first), run_host(x, r)))
				g = &x->groups[k];
		}
		if (!g) {
			g = &x->groups[x->ngroups++];
			g->boot = boot;
		}
		group_push(g, i);
	}
}

void engine_release(struct engine *x)
{
	for (size_t k = 0; k < x->ngroups; k++)
		free(x->groups[k].runs);
	free(x->groups);
	x->groups = NULL;
	x->ngroups = 0;
	if (x->cpusets)
		for (char **c = x->cpusets; *c; c++)
			free(*c);
	free(x->cpusets);
	x->cpusets = NULL;
	for (size_t k = 0; k < x->nboots; k++) {
		free(x->boots[k].id);
		free(x->boots[k].variant);
		free(x->boots[k].guest);
		free(x->boots[k].runs);
	}
	free(x->boots);
	x->boots = NULL;
	x->nboots = x->boots_alloc = 0;
	for (size_t k = 0; k < x->nextra; k++)
		free(x->extra[k].pr.id);
	free(x->extra);
	x->extra = NULL;
	x->nextra = x->extra_alloc = 0;
	free(x->issued);
	x->issued = NULL;
	x->issued_alloc = 0;
}

/* The CPUs lab may use, in order (at least one). */
static unsigned host_cpus(unsigned cpu[CPU_SETSIZE])
{
	unsigned ncpu = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpu[ncpu++] = c;
	if (!ncpu)
		cpu[ncpu++] = 0;
	return ncpu;
}

/* A slot's host CPUs each: oversubscribed slots wrap around the host's CPUs. */
static void make_cpusets(struct engine *x, unsigned jobs, unsigned vcpus, const unsigned *cpu, unsigned ncpu)
{
	x->cpusets = xcalloc(jobs + 1, sizeof(char *));
	for (unsigned k = 0; k < jobs; k++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		for (unsigned j = 0; j < vcpus && j < ncpu; j++)
			strbuf_addf(&sb, "%s%u", j ? "," : "", cpu[(k * vcpus + j) % ncpu]);
		x->cpusets[k] = strbuf_detach(&sb, NULL);
	}
}

/* A bare-metal host runs one thing at a time, on all of itself: its name, or NULL. */
static const char *bare_metal(const struct engine *x)
{
	for (size_t i = 0; i < x->e->hosts.n; i++)
		if (engine_find_host(x->s, x->e->hosts.v[i].name, HOST_SSH))
			return x->e->hosts.v[i].name;
	return NULL;
}

/*
 * How many guests at a time, and each one's host CPUs: never more vCPUs
 * than the CPUs lab may use unless asked (--oversubscribe), and said when
 * the topology alone is bigger than the host. -1 with *ret_err.
 */
char *const *engine_cpusets(const struct engine *x)
{
	return x->cpusets;
}

int engine_place(struct engine *x, bool check_only, unsigned *ret_jobs, char **ret_err)
{
	const struct spec_topology *t = spec_find_topology(x->s, x->e->topology.name);
	unsigned vcpus = t ? domain_vcpus(t) : 1, jobs, cpu[CPU_SETSIZE];
	unsigned ncpu = host_cpus(cpu);
	const char *bm = bare_metal(x);

	if (bm) {
		if (x->o->jobs > 1 && !check_only)
			engine_emit_text(x, ENGINE_EV_NOTE, "note: experiment %s runs on bare-metal host %s: one run at a time",
			     x->e->name, bm);
		*ret_jobs = 1;
		return 0;
	}
	/* by default one host CPU stays for lab, ssh and QEMU's own threads: guests
	 * packed onto every CPU measured 20% lower and twice as noisy here */
	jobs = x->o->jobs ? x->o->jobs : (vcpus && ncpu > vcpus && (ncpu - 1) / vcpus > 1 ? (ncpu - 1) / vcpus : 1);
	if (jobs > x->ngroups)
		jobs = x->ngroups ? (unsigned)x->ngroups : 1;
	if (jobs > 1 && t && t->pin == PIN_LIST) {
		*ret_err = xasprintf("topology '%s' pins its vCPUs to host CPUs %s: its guests run one at a time (--jobs 1)",
				     t->name, t->pin_cpus);
		return -1;
	}
	if (jobs > 1 && (size_t)jobs * vcpus > ncpu && !x->o->oversubscribe) {
		*ret_err = xasprintf("--jobs %u needs %u host CPUs for guests of %u vCPUs (%s); lab may use %u "
				     "(--oversubscribe shares them anyway, and the numbers suffer)",
				     jobs, jobs * vcpus, vcpus, t ? t->name : "?", ncpu);
		return -1;
	}
	if (check_only)
		return 0;
	if (vcpus > ncpu)
		engine_emit_text(x, ENGINE_EV_NOTE, "note: %s has %u vCPUs and lab may use %u host CPUs: they share them "
		     "(compare variants with each other, not with a bigger host)", t ? t->name : "?", vcpus, ncpu);
	if (jobs > 1)
		make_cpusets(x, jobs, vcpus, cpu, ncpu);
	*ret_jobs = jobs;
	return 0;
}

/* The N of a boot id "<experiment>.b<N>", 0 for anything else. */
static unsigned boot_number(const char *experiment, const char *id)
{
	size_t n = strlen(experiment);
	uint64_t v;

	if (!id || strncmp(id, experiment, n) != 0 || strncmp(id + n, ".b", 2) != 0 ||
	    parse_uint(id + n + 2, UINT32_MAX, &v) < 0)
		return 0;
	return (unsigned)v;
}

void engine_sched_init(struct engine *x)
{
	x->issued_alloc = x->rs->n + 1;
	x->issued = xcalloc(x->issued_alloc, sizeof(bool));
	if (!x->policy.ops)
		x->policy = (x->o && x->o->policy) ? *x->o->policy
						     : (struct run_policy){ .ops = &run_policy_fixed_ops };
	for (size_t i = 0; i < x->rs->n; i++) {
		unsigned b = boot_number(x->rs->experiment, x->rs->runs[i].boot);

		if (b > x->boot_seq)
			x->boot_seq = b;
	}
}

size_t engine_add_run(struct engine *x, size_t group, const char *id, size_t like, unsigned repeat)
{
	const struct plan_run *lp = engine_plan_run(x, x->rs->runs[like].id);
	struct plan_run copy = lp ? *lp : (struct plan_run){ 0 };
	_cleanup_free_ char *variant = xstrdup(x->rs->runs[like].variant), *g = xstrdup(x->rs->runs[like].group);
	size_t job = x->rs->runs[like].job, i;

	result_add_run(x->rs, id, variant, g, job, repeat);
	i = x->rs->n - 1;
	copy.id = xstrdup(id);
	copy.repeat = repeat;
	GROW(x->extra, x->extra_alloc, x->nextra + 1);
	x->extra[x->nextra++] = (struct added_run){ .pr = copy, .planned = lp != NULL, .like = like };
	GROW(x->issued, x->issued_alloc, x->rs->n);
	if (group != SIZE_MAX) {
		group_push(&x->groups[group], i);
		x->prog.total++;
	}
	return i;
}

/* A new run like `like`: the experiment's next free id, the next repeat of its variant and workload. */
static size_t add_repeat(struct engine *x, size_t group, size_t like)
{
	const struct result_run *l = &x->rs->runs[like];
	unsigned repeat = 0;
	_cleanup_free_ char *id = NULL;

	for (size_t i = 0; i < x->rs->n; i++) {
		const struct result_run *r = &x->rs->runs[i];

		if (r->job == l->job && streq(r->variant, l->variant) && streq(r->group, l->group) && r->repeat > repeat)
			repeat = r->repeat;
	}
	for (size_t seq = x->rs->n + 1; !id || engine_find_run(x->rs, id) >= 0; seq++) {
		free(id);
		id = xasprintf("%s.%04zu", x->rs->experiment, seq);
	}
	return engine_add_run(x, group, id, like, repeat + 1);
}

static bool in_group(const struct run_group *g, size_t i)
{
	for (size_t j = 0; j < g->n; j++)
		if (g->runs[j] == i)
			return true;
	return false;
}

void engine_progress_looks(struct engine *x)
{
	struct engine_view v = { .rs = x->rs, .groups = x->groups, .ngroups = x->ngroups, .issued = x->issued };

	x->prog.to_look = x->policy.ops->runs_to_look ? x->policy.ops->runs_to_look(x->policy.data, &v) : -1;
}

int engine_next(struct engine *x, size_t group, size_t *ret_run)
{
	struct engine_view v = { .rs = x->rs, .groups = x->groups, .ngroups = x->ngroups, .issued = x->issued };
	const struct run_group *g = &x->groups[group];
	struct run_choice c = { .kind = CHOICE_DONE };
	size_t i;

	if (x->policy.ops->group_done(x->policy.data, &v, group))
		return 1;
	x->policy.ops->next(x->policy.data, &v, group, &c);
	if (c.kind == CHOICE_RUN && c.run < x->rs->n && in_group(g, c.run) && !x->issued[c.run] &&
	    x->rs->runs[c.run].status == RUN_PENDING)
		i = c.run;
	else if (c.kind == CHOICE_REPEAT && c.like < x->rs->n && in_group(g, c.like))
		i = add_repeat(x, group, c.like);
	else
		return 1; /* done, or an answer that cannot be run */
	x->issued[i] = true;
	*ret_run = i;
	engine_progress_looks(x);
	return 0;
}

struct boot *engine_boot_begin(struct engine *x, const char *guest, const char *variant)
{
	struct boot *b;

	GROW(x->boots, x->boots_alloc, x->nboots + 1);
	b = &x->boots[x->nboots++];
	memset(b, 0, sizeof(*b));
	b->id = xasprintf("%s.b%u", x->rs->experiment, ++x->boot_seq);
	b->variant = xstrdup(variant);
	b->guest = xstrdup(guest);
	return b;
}

void engine_boot_run(struct engine *x, size_t i, const char *guest)
{
	struct result_run *r = &x->rs->runs[i];

	free(r->guest);
	free(r->boot);
	r->guest = guest ? xstrdup(guest) : NULL;
	r->boot = NULL;
	r->boot_pos = 0;
	for (size_t k = x->nboots; guest && k-- > 0;) {
		struct boot *b = &x->boots[k];

		if (!streq(b->guest, guest))
			continue;
		/* the guest's latest boot served it */
		GROW(b->runs, b->alloc, b->n + 1);
		b->runs[b->n++] = i;
		r->boot = xstrdup(b->id);
		r->boot_pos = (unsigned)b->n;
		break;
	}
}

bool engine_issued(const struct engine *x, size_t i)
{
	return x->issued[i];
}

void engine_mark_issued(struct engine *x, size_t i)
{
	x->issued[i] = true;
}

void engine_set_running(struct engine *x, unsigned n)
{
	x->prog.running = n;
}

void engine_note_cluster(struct engine *x, const char *line, bool once)
{
	if (!once || !strv_contains(&x->rs->cluster, line))
		strv_push(&x->rs->cluster, line);
}
