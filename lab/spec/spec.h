/* SPDX-License-Identifier: MIT */
/*
 * The typed model of lab.yaml (schema version 1). spec_load() parses the
 * file and its includes, substitutes ${vars}, checks every key, type,
 * unit and reference, and either returns a complete model or adds every
 * error it found to `d` (each with FILE:LINE:COL) and returns -EINVAL.
 * Nothing here prints, builds or boots.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "../util/diag.h"
#include "../util/strmap.h"
#include "../util/strv.h"
#include "node.h"

#define SPEC_VERSION 1
#define SPEC_MAX_VCPUS 1024
#define SPEC_MAX_CELLS 64

/* A name written somewhere, with where it was written. */
struct spec_ref {
	char *name;
	struct pos pos;
};

struct spec_refs {
	struct spec_ref *v;
	size_t n, alloc;
};

struct spec_settings {
	char *cache;     /* NULL: $XDG_CACHE_HOME/lab */
	char *results;   /* NULL: <dir>/results */
	char *catalogue; /* workloads folder; default <dir>/workloads */
};

enum spec_engine_type { SPEC_ENGINE_LOCAL, SPEC_ENGINE_SLURM };
#define SPEC_ENGINE_RETRIES 2
#define SPEC_ENGINE_POLL_SEC 15

/*
 * lab.yaml `engine:`: where the boots run. Local (no section) is the
 * default; a section without `type:` is slurm. With `type: local` the other
 * keys are still checked but unused, so a cluster's settings can stay while
 * a change is tried here. Every name and option is one sbatch argument:
 * none starts with '-' (an sbatch: entry starts with "--") or holds a
 * control character, and a name holds no space.
 */
struct spec_engine {
	enum spec_engine_type type; /* `type: local | slurm` */
	bool declared;              /* the section is in lab.yaml */
	struct pos pos;             /* where (the `engine` key), for later errors */
	char *partition;            /* sbatch --partition; NULL: the cluster's default */
	char *constraint;           /* --constraint: node features, e.g. "skylake&numa2" */
	char *account, *qos, *reservation;
	uint64_t time_limit_sec;    /* `time: 2h` per task (--time), 0 or at least 60; 0: the partition's limit */
	unsigned max_tasks;         /* `tasks: N` array tasks at once (%N); 0: no limit */
	char *spool;                /* `spool:` the directory head and nodes both see; absolute after load */
	unsigned retries;           /* `retries:` resubmissions of a failed shard; default 2 */
	unsigned poll_sec;          /* `poll: 15s` squeue interval; default 15 s, 1 s to 1 h */
	struct strv sbatch;         /* `sbatch: [--gres=..., ...]` the site's own options, each starts with "--" */
	char *lab;                  /* `lab:` lab's path on the nodes (absolute); NULL: the head's own executable */
};

enum source_type { SOURCE_DEBIAN, SOURCE_TARBALL, SOURCE_DIRECTORY, SOURCE_GIT };

struct spec_source {
	char *name;
	struct pos pos;
	enum source_type type;
	char *package; /* debian */
	char *path;    /* tarball, directory: resolved against the file's folder */
	char *url;     /* git */
	char *ref;     /* git */
};

struct spec_require {
	char *symbol; /* CONFIG_FOO */
	char *value;  /* "y", "m", "n" (not set), or a literal value */
	struct pos pos;
};

struct spec_kernel {
	char *name;
	struct pos pos;
	struct spec_ref source; /* name NULL when `from` is used */
	struct spec_ref from;
	/* patches: a folder (patches_dir) or files, resolved paths */
	struct strv patches;
	struct pos patches_pos;
	bool patches_dir;
	struct strv configs; /* resolved fragment paths */
	struct pos configs_pos;
	/* start: the make target the .config starts from before the fragments
	 * (defconfig, tinyconfig, allnoconfig); NULL: not given here */
	char *start;
	struct spec_require *require;
	size_t nrequire;
	char *cmdline;
	unsigned *sweep; /* cumulative prefixes of the series: 1, 3, 5 ... */
	size_t nsweep;
	struct pos sweep_pos;
	/* resolved after loading: the root source and inherited lists */
	const struct spec_source *root_source;
};

struct spec_cell {
	uint8_t cpus[SPEC_MAX_VCPUS / 8];
	char *cpulist;
	uint64_t memory;
	struct pos pos;
};

enum pin_policy { PIN_NONE, PIN_AUTO, PIN_LIST };

/* What the guest's clock follows: the host's, or the instructions the
 * guest executed (QEMU -icount shift=0,sleep=on,align=off; TCG only). */
enum topology_timing { TIMING_HOST, TIMING_ICOUNT };

struct spec_topology {
	char *name;
	struct pos pos;
	unsigned sockets, dies, cores, threads; /* cores per socket, threads per core */
	uint64_t memory;
	struct spec_cell *cells;
	size_t ncells;
	unsigned *distances; /* ndistances x ndistances, NULL when not given */
	size_t ndistances;
	bool asymmetric;     /* an asymmetric matrix is intended */
	enum pin_policy pin;
	char *pin_cpus; /* PIN_LIST: host cpulist */
	enum pin_policy emulator; /* QEMU's own threads (emulatorpin); auto: the host CPUs the vCPUs leave */
	char *emulator_cpus;      /* emulator PIN_LIST: host cpulist */
	char *cpu;      /* auto, host-passthrough, host-model or a model name */
	char *hugepages; /* NULL, "2M", "1G" */
	enum topology_timing timing;
	struct pos timing_pos; /* of the timing: key */
};

struct spec_image {
	char *name;
	struct pos pos;
	char *recipe; /* resolved path */
};

enum host_type { HOST_LIBVIRT, HOST_SSH };
/* How a bare-metal host starts a variant: kexec from the running kernel, or
 * a once-only GRUB entry (grub-reboot) and a reboot, which survives a reset
 * and falls back to the host's default kernel by itself. */
enum host_boot { HOST_BOOT_KEXEC, HOST_BOOT_GRUB };

struct spec_host {
	char *name;
	struct pos pos;
	enum host_type type;
	char *uri; /* libvirt; NULL: the embedded local driver */
	char *user, *address; /* ssh: or a qemu+ssh:// uri's */
	char *dir;            /* a remote libvirt host's folder for lab's files (default /var/lib/lab) */
	unsigned port;
	char *identity;
	struct strv power_cycle; /* argv */
	char *cmdline;
	enum host_boot boot;
	bool initrd; /* the host's initramfs-tools makes one for each variant */
};

enum expect_dir { EXPECT_INCREASE, EXPECT_DECREASE, EXPECT_UNCHANGED };

/* How a change is tested; the same order as the result layer's enum stat_method. */
enum spec_statistic { SPEC_STAT_WELCH_LOG, SPEC_STAT_MANN_WHITNEY, SPEC_STAT_BOOTSTRAP };
#define SPEC_STAT_COUNT (SPEC_STAT_BOOTSTRAP + 1)
/* "welch-log", "mann-whitney", "bootstrap" */
const char *spec_statistic_name(enum spec_statistic t);

struct spec_expect {
	char *metric;
	enum expect_dir dir;
	double effect;   /* fraction: the smallest change that matters (mde; older spellings min, within) */
	bool has_effect;
	int statistic;   /* enum spec_statistic, -1: the experiment's decide: statistic */
	struct pos pos;
};

struct spec_param {
	char *key;
	struct pos pos;
	char **values; /* more than one: a matrix dimension */
	struct pos *value_pos;
	size_t nvalues;
	bool is_list;
};

struct spec_job {
	struct spec_ref workload;
	struct pos pos;
	struct spec_param *params;
	size_t nparams;
	struct spec_refs monitors;
	struct spec_expect *expect;
	size_t nexpect;
};

/* per-run: a guest per run; once: a guest per variant serves its runs, one
 * variant after the other; side-by-side: a guest per variant, all up at the
 * same time, the runs alternating between them as the plan interleaves them. */
enum boot_policy { BOOT_PER_RUN, BOOT_ONCE, BOOT_SIDE_BY_SIDE };
#define SPEC_MAX_SIDE_BY_SIDE 16 /* guests kept up at once by one side-by-side worker */

/* Mechanism checks (`observe:`): a metric a variant's every run satisfies
 * (is: "> 0"), or where it lies against the baseline's runs (vs-baseline). */
enum observe_op {
	OBSERVE_EQ, OBSERVE_LT, OBSERVE_LE, OBSERVE_GT, OBSERVE_GE,       /* is: "OP NUMBER" */
	OBSERVE_HIGHER, OBSERVE_LOWER, OBSERVE_DIFFERS, OBSERVE_SAME,     /* vs-baseline: */
};

struct spec_observe {
	char *metric;
	struct pos pos;
	struct spec_refs kernels; /* empty: every variant (vs-baseline: every one but the baseline) */
	enum observe_op op;
	double value; /* is: */
	double margin; /* vs-baseline: equivalence margin, a fraction; 0: none */
	char *says;
};

struct spec_kv {
	char *key, *value;
	struct pos pos;
};

/* An experiment's `decide:` (every key optional; defaults as set here). */
struct spec_decide {
	double alpha;             /* 0.05: declared verdicts, two-sided */
	double power;             /* 0.8 */
	double q;                 /* 0.05: false discovery rate of the exploratory rows */
	enum spec_statistic statistic; /* welch-log */
	unsigned min_boots;       /* 2: per variant, before the first look */
	unsigned max_boots;       /* per variant; 2 for a fixed design, 6 with repeat: auto (at least min_boots) */
	unsigned runs_per_boot;   /* repeat: auto only: 3 */
	unsigned max_runs;        /* per variant, 0: no limit */
	uint64_t max_time_usec;   /* 0: no limit */
	struct pos pos;           /* the decide: mapping; the experiment's name when absent */
	struct pos alpha_pos, power_pos, q_pos, statistic_pos, min_boots_pos, max_boots_pos, runs_per_boot_pos,
		max_runs_pos, max_time_pos; /* file NULL: not given */
};

struct spec_experiment {
	char *name;
	struct pos pos;
	char *description;
	struct spec_refs kernels; /* first is the baseline */
	struct spec_ref topology;
	struct spec_ref image;
	struct spec_refs hosts; /* empty: the implicit "local" host */
	/* without-kvm: the experiment lab runs in this one's place where KVM
	 * does not work here (its instruction-timed twin); none: name NULL */
	struct spec_ref without_kvm;
	unsigned repeat;  /* runs per boot of a fixed design; 0 with repeat: auto */
	bool repeat_auto; /* repeat: auto: boots added until decided (decide.runs_per_boot a boot) */
	struct pos repeat_pos;
	struct spec_decide decide;
	uint64_t warmup_usec;
	bool quiesce;     /* the guest quiesced before each run (guest-script.h); default true */
	uint64_t timeout_usec;
	enum boot_policy boot;
	struct pos boot_pos;
	struct spec_refs monitors; /* for every job */
	/* not from lab.yaml: lab calibrate --monitors plans each run again with
	 * each of its monitors off in turn, right after it in the same boot */
	bool monitors_off;
	/* overhead-budget: {MONITOR: PERCENT}: the monitor.yaml's budget, here */
	struct spec_kv *overhead_budget;
	size_t noverhead_budget;
	struct spec_kv *sysctl;
	size_t nsysctl;
	struct spec_job *jobs;
	size_t njobs;
	struct spec_observe *observe;
	size_t nobserve;
};

/* A workload or monitor of the catalogue (workloads/<name>/workload.yaml). */
enum param_type {
	PARAM_STRING, PARAM_INT, PARAM_UINT, PARAM_BOOL, PARAM_DURATION, PARAM_SIZE,
	PARAM_CPUS, PARAM_PERCENT, PARAM_ENUM, PARAM_CPULIST
};

struct catalogue_param {
	char *name;
	enum param_type type;
	char *def; /* NULL: required */
	struct strv values; /* PARAM_ENUM */
	char *description;
};

struct catalogue_entry {
	char *name;
	bool monitor;
	char *dir;
	char *description;
	struct catalogue_param *params;
	size_t nparams;
	struct strv packages;
	uint64_t timeout_usec;
	/* the metrics its parser prints; an UPPERCASE word stands for any name
	 * (stress-ng.STRESSOR.ops_per_sec); empty: not declared */
	struct strv metrics;
	/* a monitor's: how much it may move a workload's figures (%) before a
	 * report calls them disturbed (lab calibrate --monitors measures it) */
	double overhead_budget_pct;
	char *work; /* a workload's metric that counts its units of work (a pattern as above); NULL: none */
	char *host; /* a monitor lab runs on the host: what it reads (CATALOGUE_HOST_*); NULL: a guest monitor */
};
#define CATALOGUE_OVERHEAD_BUDGET_PCT 3.0

/* The host-side monitor source: lab's QEMU plugin's instruction counts (lab/plugin/lab-insn.c). */
#define CATALOGUE_HOST_INSN_PLUGIN "insn-plugin"

struct spec {
	struct node_files files;
	char *path; /* the main file as given */
	char *dir;  /* its folder */
	unsigned version;
	struct spec_settings settings;
	struct spec_engine engine;
	struct spec_source *sources;
	size_t nsources;
	struct spec_kernel *kernels;
	size_t nkernels;
	struct spec_topology *topologies;
	size_t ntopologies;
	struct spec_image *images;
	size_t nimages;
	struct spec_host *hosts;
	size_t nhosts;
	struct spec_experiment *experiments;
	size_t nexperiments;
	struct catalogue_entry *catalogue;
	size_t ncatalogue;
};

/*
 * A snapshot's lab.yaml (lab reproduce, lab validate of a stored run or an
 * unpacked bundle) is read from a checkout of the files its snapshot lists
 * and must name nothing else: each include, patch, patch folder, config
 * fragment, image recipe (and each file a recipe copies in) and
 * settings.workloads is a listed file, or a folder of listed files, below
 * `root` by its name alone (no absolute path, no "..", "~" or "." part).
 * Anything else is refused at the line and column that names it before it
 * is opened: a bundle's lab.yaml never reads the host's files. Names only:
 * the checkout holds regular files, no links. Sources (held to their
 * recorded identities), settings.cache and .results and a host's ssh key
 * are the machine's own, not the snapshot's, and stay unconfined.
 */
struct spec_confine {
	char *root;          /* where the listed paths are, as lab.yaml's own path is written ("." for "lab.yaml") */
	struct strv names;   /* the listed paths, owned */
	struct strv folders; /* each folder of one, owned */
	struct strmap files, dirs;
};
/* A confinement to the `n` files (paths relative to root) a snapshot lists. */
void spec_confine_init(struct spec_confine *cf, const char *root, const char *const *files, size_t n);
void spec_confine_release(struct spec_confine *cf);
/*
 * NULL when `path` (as the loader resolved it: the including file's folder
 * joined with what was written) is a listed file, or with `folder` a folder
 * of listed files; else why not, as a phrase ("not a path inside the run's
 * snapshot"). Never touches the file system.
 */
const char *spec_confine_refuses(const struct spec_confine *cf, const char *path, bool folder);
/* The error for a refused path lab.yaml or a recipe names, at n. */
void spec_confine_refused(struct diags *d, const struct node *n, const char *what, const char *why);

struct spec_load_opts {
	/* a snapshot's lab.yaml: only the snapshot's files (above); NULL: a
	 * user's own project, whose lab.yaml may name any file */
	const struct spec_confine *confine;
	bool no_include;    /* fuzzing: never read other files */
	bool no_filesystem; /* fuzzing: skip existence checks and the catalogue */
	/* a cluster node (lab shard): the build inputs (sources, patches, image
	 * recipes) are not here and not needed; the catalogue is the run's own,
	 * unpacked in this folder */
	const char *catalogue;
	/* NAME=VALUE overrides of vars: (lab --set); each NAME must be a var */
	const char *const *set;
	size_t nset;
};

int spec_load(const char *path, const struct spec_load_opts *opts, struct spec **ret, struct diags *d);
int spec_load_buffer(const char *name, const char *data, size_t len, const struct spec_load_opts *opts,
		     struct spec **ret, struct diags *d);
void spec_free(struct spec *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct spec *, spec_free)
#define _cleanup_spec_ _cleanup_(spec_freep)

const struct spec_kernel *spec_find_kernel(const struct spec *s, const char *name);
const struct spec_topology *spec_find_topology(const struct spec *s, const char *name);
const struct spec_experiment *spec_find_experiment(const struct spec *s, const char *name);
/* Whether a metric is one of the entry's declared patterns. */
bool catalogue_metric_matches(const struct catalogue_entry *w, const char *metric);
/* Whether a metric matches one such pattern. */
bool catalogue_pattern_matches(const char *pattern, const char *metric);
/* The pattern with each dotted part that is one UPPERCASE word taken from
 * the metric (stress-ng.STRESSOR.ops_per_sec with stress-ng.switch.ops_per_s
 * gives stress-ng.switch.ops_per_sec); NULL when their numbers of parts
 * differ. For suggestions. */
char *catalogue_metric_instance(const char *pattern, const char *metric);
const struct catalogue_entry *spec_find_catalogue(const struct spec *s, const char *name, bool monitor);
/* Whether a monitor of the experiment (its own or a job's) is host-side and reads `source` (CATALOGUE_HOST_*). */
bool spec_experiment_host_source(const struct spec *s, const struct spec_experiment *e, const char *source);
unsigned spec_topology_vcpus(const struct spec_topology *t);

/*
 * The kernel variants an experiment compares, in order, with swept variants
 * expanded into their steps ("pcp@1", "pcp@3", ...). Baseline first.
 */
void spec_experiment_variants(const struct spec *s, const struct spec_experiment *e, struct strv *ret);

/* Whether a job of e runs with the monitor (the experiment's monitors: or the job's). */
bool spec_experiment_monitors(const struct spec_experiment *e, const char *monitor);
/* The monitor's overhead budget (%) in e: its overhead-budget: there, else
 * its monitor.yaml's; NaN for a monitor not in the catalogue. */
double spec_overhead_budget_pct(const struct spec *s, const struct spec_experiment *e, const char *monitor);

const char *param_type_name(enum param_type t);
/* 0 when `value` is valid for the parameter, else a static reason. */
const char *catalogue_param_check(const struct catalogue_param *p, const char *value);

/* Internal: shared by spec-load.c and spec-check.c. */
void spec_check(struct spec *s, const struct spec_load_opts *opts, struct diags *d);
/*
 * lab --kernels: every experiment that compares some of `only` (variants or
 * sweep steps NAME@N) compares just those, in its own order, the first kept
 * the baseline; its observe: checks keep the kernels kept, and one left
 * with none goes. A name no experiment compares is an error.
 */
int spec_only_kernels(struct spec *s, const struct strv *only, struct diags *d);
/*
 * lab bisect: experiment e cut to one step of a bisect over the series of
 * kernel `series`: kernels [good, test] (names: its `from` or series@N;
 * the sweep widened to every prefix so any N resolves), only the jobs that
 * measure `metric` (a declared expectation or the workload's metrics), each
 * with the one expectation {metric, dir, mde: threshold %}, no observe:
 * checks, repeat: auto at `alpha` up to max_boots boots a variant. A metric
 * no job measures is an error.
 */
struct spec_bisect_step {
	const char *series, *good, *test, *metric;
	unsigned npatches; /* the series' own patches */
	enum expect_dir dir;
	double threshold_pct, alpha;
	unsigned max_boots;
};
int spec_bisect_step(struct spec *s, struct spec_experiment *e, const struct spec_bisect_step *st, struct diags *d);
/*
 * Kernel `name`: kernel `kernel` built at commit `id` of its git source
 * (a source of that URL at that commit, and a kernel from `kernel`
 * carrying its patches, configs and requirements), added to s unless
 * there. -EINVAL when `kernel` does not build from a git source.
 */
int spec_kernel_at_commit(struct spec *s, const char *kernel, const char *name, const char *id, struct diags *d);
int catalogue_load(struct spec *s, struct diags *d);

/* lab's cache folder for this lab.yaml (util/dirs.h: LAB_CACHE_DIR,
 * settings.cache, XDG, home); s may be NULL. */
char *spec_cache_dir(const struct spec *s);
