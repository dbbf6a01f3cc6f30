/* SPDX-License-Identifier: MIT */
/*
 * The engine's worker side: in a process of its own (pool.c), the runs of
 * one group, each asked of lab in turn, on one guest (a guest per variant
 * with `boot: side-by-side`) or one bare-metal host, booted when a run
 * needs it and kept while runs succeed. Steps, boots and each run's end go
 * to lab as wire.h lines; lab alone writes the journal and the index.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../host/host.h"
#include "../kernel/source.h"
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../vm/vm.h"
#include "../util/hash.h"
#include "engine-priv.h"
#include "../result/failure.h"
#include "../result/fingerprint.h"
#include "pool.h"
#include "guest-run.h"
#include "../util/banned.h"

/* In a worker: the holders of its VMs (one, or a guest per variant with
 * `boot: side-by-side`); a signal tears them down. In lab itself: a signal
 * stops the workers (and so their guests). */
static volatile pid_t holders[SPEC_MAX_SIDE_BY_SIDE];
static volatile sig_atomic_t in_worker;

volatile sig_atomic_t engine_cluster_active, engine_cluster_cancel;

bool engine_cancel(void)
{
	/* the cluster's executor cancels its jobs and returns; a second signal ends lab */
	if (engine_cluster_active && !engine_cluster_cancel) {
		engine_cluster_cancel = 1;
		return true;
	}
	if (in_worker) {
		for (size_t i = 0; i < SPEC_MAX_SIDE_BY_SIDE; i++)
			if (holders[i] > 0)
				kill(holders[i], SIGTERM);
	} else {
		pool_terminate();
	}
	return false;
}

static void send_msg(struct engine *x, const struct wire_msg *m)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	wire_format(m, &sb);
	pool_send(x->fd, "%s", sb.buf);
}

/* A step goes to the run's log and to lab. */
static void worker_step(struct engine *x, const char *what)
{
	const struct result_run *r = &x->rs->runs[x->cur];
	_cleanup_free_ char *logp = xasprintf("%s/runs/%s/log", x->dir, r->id);
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

	strbuf_addf(&line, "%8.1f  %s\n", now_sec() - x->t0, what);
	fs_append(logp, line.buf, line.len);
	send_msg(x, &(struct wire_msg){ .type = WIRE_STEP, .run = r->id, .what = (char *)what });
}

static void worker_vm_step(void *userdata, const char *vm, const char *what)
{
	(void)vm;
	worker_step(userdata, what);
}

static void worker_run_step(void *userdata, const char *run, const char *what)
{
	(void)run;
	worker_step(userdata, what);
}

static void worker_host_step(void *userdata, const char *what)
{
	worker_step(userdata, what);
}

static void send_boot(struct engine *x, const char *guest, ssize_t vi)
{
	send_msg(x, &(struct wire_msg){ .type = WIRE_BOOT, .guest = (char *)guest, .variant = x->variants->v[vi] });
}

/* How the run ended (its metrics are on disk) and on which guest. */
static void worker_done(struct engine *x, const struct result_run *r, const char *guest)
{
	send_msg(x, &(struct wire_msg){ .type = WIRE_DONE,
					.run = r->id,
					.ok = r->status == RUN_OK,
					.release = r->release,
					.error = r->error,
					.guest = (char *)guest });
}

/* "boot failed: A; B" from a boot's diagnostics. */
static char *boot_failure(const struct diags *d)
{
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;

	for (size_t i = 0; i < d->n; i++)
		strbuf_addf(&msg, "%s%s", i ? "; " : "", d->v[i].msg);
	return xasprintf("boot failed: %s", msg.buf ? msg.buf : "?");
}

static void run_fail(struct result_run *r, char *why)
{
	r->status = RUN_FAILED;
	free(r->error);
	r->error = why;
}

/* Where the guest's threads may run, kept with the run. */
static void write_placement(const struct engine *x, const struct vm *v, const char *rundir)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = path_join(rundir, "placement");
	const char *cs = x->cpusets ? x->cpusets[x->slot] : NULL;
	_cleanup_free_ char *self = vm_read_trimmed("/proc/self/status");
	const char *a = self ? strstr(self, "Cpus_allowed_list:") : NULL;

	if (a) {
		a += strlen("Cpus_allowed_list:");
		a += strspn(a, " \t");
	} else {
		a = "?";
	}
	strbuf_addf(&sb, "# slot %u, host cpus %s\n# lab's own work (worker %d): cpus allowed %.*s\n"
			 "# thread id, name, cpus allowed\n", x->slot, cs ? cs : "(the topology's pinning)",
		    (int)getpid(), (int)strcspn(a, "\n"), a);
	vm_placement(v, &sb);
	fs_write_atomic(p, sb.buf, sb.len, 0644);
}

#ifndef LAB_VERSION
#define LAB_VERSION "0.1"
#endif

/* A digest of the guest's resolved shape: what the topology makes of the
 * guest (not its name, not the host CPU numbers a slot got). */
static void topology_digest(const struct spec_topology *t, char out[SHA256_HEX_LEN + 1])
{
	struct hasher *h = hasher_new();
	_cleanup_free_ char *shape = xasprintf("%u/%u/%u/%u mem %llu pin %d emu %d cpu %s huge %s timing %d",
					       t->sockets, t->dies, t->cores, t->threads,
					       (unsigned long long)t->memory, (int)t->pin, (int)t->emulator,
					       t->cpu ? t->cpu : "-", t->hugepages ? t->hugepages : "-", (int)t->timing);

	hasher_add_str(h, shape);
	for (size_t i = 0; i < t->ncells; i++) {
		hasher_add(h, t->cells[i].cpus, sizeof(t->cells[i].cpus));
		hasher_add(h, &t->cells[i].memory, sizeof(t->cells[i].memory));
	}
	if (t->distances)
		hasher_add(h, t->distances, t->ndistances * t->ndistances * sizeof(*t->distances));
	hasher_finish(h, out);
}

/* How many CPUs a cpulist names ("0-3,6": 5). */
static unsigned cpulist_count(const char *s)
{
	unsigned n = 0;

	while (s && *s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		n += b >= a ? (unsigned)(b - a + 1) : 0;
		s = *end == ',' ? end + 1 : end;
		if (*s && *s != ',' && (*s < '0' || *s > '9'))
			break;
	}
	return n;
}

/* The run's environment next to it (fingerprint.json); lab reads it back
 * when the run ends. The host's part is probed once per worker. */
static void write_fingerprint(const struct engine *x, const struct vm *v, const struct plan_run *pr, ssize_t vi,
			      const char *rundir)
{
	static struct fingerprint host;
	static bool probed;
	const struct spec_topology *t = spec_find_topology(x->s, pr->topology);
	_cleanup_free_ char *p = path_join(rundir, "fingerprint.json");
	_cleanup_free_ char *xml = v && v->dir ? path_join(v->dir, "domain.xml") : NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, dom = STRBUF_INIT, pin = STRBUF_INIT;
	struct fingerprint fp = { 0 };
	char hex[SHA256_HEX_LEN + 1];
	const char *cs = x->cpusets ? x->cpusets[x->slot] : NULL;

	if (!probed) {
		struct fp_probe probe = { .remote_host = v ? v->host_name : NULL };

		fingerprint_collect_local(&host, &probe);
		probed = true;
	}
	fingerprint_copy(&fp, &host);
	fingerprint_set(&fp, FP_LAB, LAB_VERSION);
	if (xml && strbuf_read_file(&dom, xml, 1 << 20) >= 0 && dom.buf)
		/* lab's XML writer quotes attributes with ' */
		fingerprint_set(&fp, FP_ACCEL, strstr(dom.buf, "<domain type='kvm'") ? "kvm"
					       : strstr(dom.buf, "<domain type='qemu'") ? "tcg" : NULL);
	if (t) {
		fingerprint_set(&fp, FP_TIMING, t->timing == TIMING_ICOUNT ? "icount" : "host");
		fingerprint_set(&fp, FP_TOPOLOGY, t->name);
		topology_digest(t, hex);
		fingerprint_set(&fp, FP_TOPOLOGY_DIGEST, hex);
		/* a shape: how many host CPUs, pinned how; not which ones */
		strbuf_addf(&pin, "vcpus %s", t->pin == PIN_NONE ? "floating" : t->pin == PIN_AUTO ? "pinned" : "pinned to a list");
		if (t->pin == PIN_LIST)
			strbuf_addf(&pin, " of %u", cpulist_count(t->pin_cpus));
		strbuf_addf(&pin, ", emulator %s", t->emulator == PIN_NONE ? "floating" : t->emulator == PIN_AUTO ? "auto" : "list");
		if (cs)
			strbuf_addf(&pin, ", slot of %u host cpus", cpulist_count(cs));
		fingerprint_set(&fp, FP_PINNING, pin.buf);
	}
	if (vi >= 0 && x->arts[vi].config && sha256_file(x->arts[vi].config, hex) == 0)
		fingerprint_set(&fp, FP_KERNEL_CONFIG, hex);
	if (vi >= 0 && ksource_commit(x->arts[vi].source_identity))
		fingerprint_set(&fp, FP_KERNEL_COMMIT, ksource_commit(x->arts[vi].source_identity));
	if (x->img)
		fingerprint_set(&fp, FP_IMAGE, x->img->id);
	fingerprint_format_json(&fp, &sb);
	fs_write_atomic(p, sb.buf, sb.len, 0644);
	fingerprint_release(&fp);
}

/* A boot that failed on infrastructure's account (result/failure.h: QEMU
 * crashed, as seen under TCG when a vCPU thread segfaulted while the guest
 * probed PCI; libvirt; ssh silent after user space ran; no evidence either
 * way): the kind, else NULL (the kernel's failure, or an interruption). */
static const char *infra_boot_failure(const struct diags *d, int rc)
{
	_cleanup_free_ char *msg = NULL;
	struct failure f;
	const char *kind = NULL;

	if (rc == -EINTR || !d->n)
		return NULL;
	msg = boot_failure(d);
	failure_classify(FAILURE_AT_BOOT, msg, &f);
	if (!failure_is_kernels(f.kind) && f.kind != FAILURE_INTERRUPTED)
		kind = failure_kind_name(f.kind);
	failure_release(&f);
	return kind;
}

/* One more boot after an infrastructure failure (never counted against the
 * kernel); the first one's evidence is kept as boot-1.*. */
static int boot_again(struct engine *x, const char *state, const struct vm_opts *vo, const char *rundir,
		      const char *kind, struct vm *v, struct diags *d)
{
	static const char *const files[] = { "console.log", "qemu.log" };
	_cleanup_diags_ struct diags dd = { 0 };
	_cleanup_free_ char *what = NULL;
	struct vm_opts again = *vo;

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		_cleanup_free_ char *from = path_join(rundir, files[k]);
		_cleanup_free_ char *to = xasprintf("%s/boot-1.%s", rundir, files[k]);

		rename(from, to);
	}
	diags_release(d);
	vm_down(state, vo->name, &dd);
	what = xasprintf("the boot failed on infrastructure's account (%s; boot-1.console.log, boot-1.qemu.log): "
			 "booting again",
			 kind);
	worker_step(x, what);
	again.again = true;
	return vm_up(state, &again, v, d);
}

static void vm_opts_fill(struct engine *x, const char *name, const struct plan_run *pr, ssize_t vi,
			 const char *rundir, const char *cache, const struct vm_progress *vp, struct vm_opts *vo)
{
	*vo = (struct vm_opts){
		.name = name,
		.topo = spec_find_topology(x->s, pr->topology),
		.variant = x->vars[vi].name,
		.kernel = &x->arts[vi],
		.image = x->img,
		.cache = cache,
		.experiment = x->e,
		.cmdline = x->vars[vi].cmdline,
		.run_id = pr->id,
		.owner = x->lab,
		.accel = -1,
		.cpuset = x->cpusets ? x->cpusets[x->slot] : NULL,
		.evidence = rundir,
		.insn_plugin = spec_experiment_host_source(x->s, x->e, CATALOGUE_HOST_INSN_PLUGIN) ? x->o->insn_plugin
												    : NULL,
		.progress = vp,
	};
}

static int boot(struct engine *x, const char *name, const struct plan_run *pr, ssize_t vi, const char *rundir,
		struct vm *v, struct result_run *r)
{
	_cleanup_free_ char *state = dirs_state(), *cache = spec_cache_dir(x->s);
	_cleanup_diags_ struct diags d = { 0 };
	struct vm_progress vp = { .step = worker_vm_step, .userdata = x };
	const struct spec_host *lh = engine_find_host(x->s, pr->host, HOST_LIBVIRT);
	struct host remote = { 0 };
	const char *kind;
	struct vm_opts vo;
	int rc;

	vm_opts_fill(x, name, pr, vi, rundir, cache, &vp, &vo);
	if (lh && lh->uri && !str_startswith(lh->uri, "qemu:///embed"))
		vo.uri = lh->uri;
	if (lh && lh->address) {
		/* another hypervisor host: kernel and disks go there, the guest is reached through it */
		if (host_open(state, cache, lh, &remote, &d) < 0) {
			run_fail(r, xasprintf("host %s: %s", lh->name, d.n ? d.v[0].msg : "?"));
			return -1;
		}
		vo.remote = &remote;
		vo.cpuset = NULL; /* --jobs slots are this machine's CPUs */
	}
	send_boot(x, name, vi);
	worker_step(x, "boot");
	rc = vm_up(state, &vo, v, &d);
	if (rc < 0 && (kind = infra_boot_failure(&d, rc)))
		rc = boot_again(x, state, &vo, rundir, kind, v, &d);
	if (vo.remote)
		host_close(&remote);
	if (rc < 0) {
		_cleanup_diags_ struct diags dd = { 0 };

		/* what the console and QEMU said is in rundir (vm_opts.evidence) */
		run_fail(r, boot_failure(&d));
		vm_down(state, name, &dd);
		return -1;
	}
	for (size_t i = 0; i < SPEC_MAX_SIDE_BY_SIDE; i++)
		if (!holders[i]) {
			holders[i] = v->holder;
			break;
		}
	return 0;
}

static void shut_down(struct engine *x, const char *name, struct vm *v)
{
	_cleanup_free_ char *state = dirs_state();
	_cleanup_diags_ struct diags d = { 0 };

	worker_step(x, "shut down");
	vm_down(state, name, &d);
	for (size_t i = 0; i < SPEC_MAX_SIDE_BY_SIDE; i++)
		if (holders[i] == v->holder)
			holders[i] = 0;
	vm_release(v);
	memset(v, 0, sizeof(*v));
}

/* The host's facts next to the run (host-facts.json, lscpu.json): what the numbers were measured on. */
static void write_host_facts(struct host *h, const char *rundir)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = path_join(rundir, "host-facts.json"), *pj = path_join(rundir, "lscpu.json");
	struct host_facts f;
	struct json j;

	if (host_facts(h, &f, &d) < 0)
		return;
	json_init(&j, &sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "host", h->spec->name);
	host_facts_format_json(&f, &j);
	json_object_end(&j);
	json_finish(&j);
	fs_write_atomic(p, sb.buf, sb.len, 0644);
	if (f.lscpu_json)
		fs_write_atomic(pj, f.lscpu_json, strlen(f.lscpu_json), 0644);
	host_facts_release(&f);
}

/*
 * Where a worker's runs go: its guest, booted when a run needs one, or a
 * bare-metal host, kexec'd into the run's variant when it runs another.
 * Consecutive runs share them while they succeed; the catalogue is
 * shipped once per boot.
 */
struct target {
	char *name; /* the guest's VM name */
	struct vm v;
	bool up;
	const char *guest_host; /* the libvirt host it runs on (the plan's string) */
	struct host h;
	bool host_open;
	char *booted; /* the release the host was kexec'd into by this worker */
	bool shipped;
};

/* The host of a run ready on the variant's kernel; its ssh target in rc. */
static int host_ready(struct engine *x, struct target *t, const struct spec_host *sh, ssize_t vi,
		      const char *rundir, struct runner_config *rc, struct result_run *r)
{
	_cleanup_diags_ struct diags d = { 0 };
	struct host_boot_opts bo = { .step = worker_host_step, .userdata = x };
	const struct kartifact *k = &x->arts[vi];

	if (!t->host_open) {
		_cleanup_free_ char *state = dirs_state(), *cache = spec_cache_dir(x->s);

		if (host_open(state, cache, sh, &t->h, &d) < 0) {
			run_fail(r, xasprintf("host %s: %s", sh->name, d.n ? d.v[0].msg : "?"));
			return -1;
		}
		t->host_open = true;
	}
	/* what this worker booted last; a host it has not booted yet is kexec'd
	 * anyway, so every variant's runs start from a boot of their own */
	if (!t->booted || !streq(t->booted, k->release)) {
		free(t->booted);
		t->booted = NULL;
		t->shipped = false;
		send_boot(x, sh->name, vi);
		worker_step(x, "kexec");
		if (host_boot(&t->h, k, &bo, &d) < 0) {
			run_fail(r, boot_failure(&d));
			return -1;
		}
		t->booted = xstrdup(k->release);
	}
	write_host_facts(&t->h, rundir);
	rc->host = &t->h.t;
	return 0;
}

/* The run's guest up (this worker's, booted when it has none); it goes in rc. */
static int guest_ready(struct engine *x, struct target *t, const struct plan_run *pr, ssize_t vi,
		       const char *rundir, struct runner_config *rc, struct result_run *r)
{
	if (t->up && !streq(t->guest_host, pr->host)) {
		/* a run for another hypervisor host: the guest moves there */
		shut_down(x, t->name, &t->v);
		t->up = false;
	}
	if (!t->up) {
		if (boot(x, t->name, pr, vi, rundir, &t->v, r) < 0)
			return -1;
		t->up = true;
		t->guest_host = pr->host;
		t->shipped = false;
	}
	write_placement(x, &t->v, rundir);
	write_fingerprint(x, &t->v, pr, vi, rundir);
	rc->vm = &t->v;
	rc->image = x->img;
	return 0;
}

/* After a failed run the guest or host may be in any state: the next run boots anew. */
static void target_forget(struct engine *x, struct target *t)
{
	if (t->up)
		shut_down(x, t->name, &t->v);
	t->up = false;
	free(t->booted);
	t->booted = NULL;
}

/* Which run next, as lab says: its index in this worker's result set, or -1 when the group is done. */
static ssize_t ask_next(struct engine *x)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	struct wire_msg m = { 0 };
	ssize_t i = -1, like;

	send_msg(x, &(struct wire_msg){ .type = WIRE_NEXT });
	if (pool_recv(&line) < 0 || wire_parse(line.buf ? line.buf : "", &m, &err) < 0)
		return -1;
	if (m.type == WIRE_RUN) {
		i = engine_find_run(x->rs, m.run);
		/* a run lab added after this worker began: made here the same way */
		if (i < 0 && m.like && (like = engine_find_run(x->rs, m.like)) >= 0)
			i = (ssize_t)engine_add_run(x, SIZE_MAX, m.run, (size_t)like, m.repeat);
	}
	wire_msg_release(&m);
	return i;
}

/* One run on its guest or host; the guest's name (or NULL) to tell lab. */
static const char *run_one(struct engine *x, struct target *t, struct result_run *r, const struct plan_run *pr,
			   ssize_t vi, const char *rundir)
{
	struct runner_progress rp = { .step = worker_run_step, .userdata = x };
	const struct spec_host *sh = engine_find_host(x->s, pr->host, HOST_SSH);
	struct runner_config rc = {
		.s = x->s,
		.e = x->e,
		.rundir = rundir,
		.catalogue_tar = x->tarp,
		.kernel = &x->arts[vi],
		.progress = &rp,
		.shipped = &t->shipped,
	};

	if ((sh ? host_ready(x, t, sh, vi, rundir, &rc, r) : guest_ready(x, t, pr, vi, rundir, &rc, r)) == 0)
		runner_exec(&rc, pr, r);
	return sh ? sh->name : t->name;
}

/*
 * A worker: the runs lab hands out for one group, in turn, on one guest
 * (or host) while they succeed.
 */
int engine_work(struct engine *x, size_t task, unsigned slot, int fd)
{
	bool side = x->e->boot == BOOT_SIDE_BY_SIDE;
	/* side-by-side: a guest per variant, all kept up; else one, reused */
	size_t nt = side ? x->variants->n : 1;
	struct target *ts = xcalloc(nt, sizeof(*ts));
	ssize_t i;

	(void)task;
	for (size_t k = 0; k < nt; k++)
		ts[k].name = side ? xasprintf("run-%d-%zu", (int)getpid(), k) : xasprintf("run-%d", (int)getpid());
	in_worker = 1;
	x->fd = fd;
	x->slot = slot;
	while ((i = ask_next(x)) >= 0) {
		struct result_run *r = &x->rs->runs[i];
		const struct plan_run *pr = engine_plan_run(x, r->id);
		ssize_t vi = strv_index(x->variants, r->variant);
		_cleanup_free_ char *rundir = xasprintf("%s/runs/%s", x->dir, r->id);
		struct target *t = &ts[side && vi > 0 ? (size_t)vi : 0];
		const char *guest = NULL;
		int e;

		x->cur = (size_t)i;
		if (!pr || vi < 0)
			run_fail(r, xstrdup("not in the plan of lab.yaml any more (changed since the run started?)"));
		else if ((e = path_mkdir_p(rundir, 0755)) < 0)
			run_fail(r, xasprintf("cannot create %s: %s", rundir, strerror(-e)));
		else
			guest = run_one(x, t, r, pr, vi, rundir);
		worker_done(x, r, guest);
		if (guest && r->status == RUN_FAILED)
			target_forget(x, t);
	}
	for (size_t k = 0; k < nt; k++) {
		target_forget(x, &ts[k]);
		if (ts[k].host_open)
			host_close(&ts[k].h);
		free(ts[k].name);
	}
	free(ts);
	return 0;
}
