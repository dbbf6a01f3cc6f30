/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/json-read.h"
#include "../util/json.h"
#include "../util/path.h"
#include "../vm/vm.h"
#include "cluster.h"
#include "../util/banned.h"

#define SINFO_TIMEOUT_USEC (30 * 1000000ULL)
#define PROBE_TIMEOUT_USEC (120 * 1000000ULL)
/* srun waits this long for the node (it may have been taken since sinfo), then gives up */
#define PROBE_IMMEDIATE_SEC 30
#define MARKER_PREFIX ".lab-doctor-"

static const char needs_engine[] = "lab run --engine slurm: where the boots run";
static const char needs_slurm[] = "submitting and watching lab's array jobs (sbatch, squeue)";
static const char needs_partition[] = "the nodes lab's shards run on";
static const char needs_spool[] = "kernels, images and results between this machine and the nodes";
static const char needs_node[] = "boots on the node (lab shard)";

/* ---- sinfo ---- */

void doctor_partition_release(struct doctor_partition *p)
{
	free(p->name);
	strv_release(&p->nodes);
	strv_release(&p->states);
	memset(p, 0, sizeof(*p));
}

static void names_words(const struct strv *names, struct strbuf *out)
{
	for (size_t i = 0; i < names->n; i++)
		strbuf_addf(out, "%s%s", i ? ", " : "", names->v[i]);
}

int doctor_sinfo_parse(const char *text, const char *partition, struct doctor_partition *ret, char **ret_err)
{
	_cleanup_strv_ struct strv lines = STRV_INIT, names = STRV_INIT, node = STRV_INIT, part = STRV_INIT,
				   state = STRV_INIT;
	_cleanup_strbuf_ struct strbuf words = STRBUF_INIT;
	_cleanup_free_ char *def = NULL;
	struct doctor_partition p = { 0 };
	const char *want;

	strv_split(&lines, text ? text : "", '\n');
	/* each line once: its node, partition (the default one marked '*') and state */
	for (size_t i = 0; i < lines.n; i++) {
		_cleanup_strv_ struct strv f = STRV_INIT;
		size_t len;

		if (!*lines.v[i])
			continue;
		strv_split(&f, lines.v[i], '|');
		if (f.n != 3 || !*f.v[0] || !*f.v[1] || !*f.v[2]) {
			*ret_err = xasprintf("sinfo: cannot read '%s' (want NODE|PARTITION|STATE)", lines.v[i]);
			return -EINVAL;
		}
		len = strlen(f.v[1]);
		if (f.v[1][len - 1] == '*') {
			f.v[1][len - 1] = '\0';
			if (!def && *f.v[1])
				def = xstrdup(f.v[1]);
		}
		if (!*f.v[1]) {
			*ret_err = xasprintf("sinfo: cannot read '%s' (no partition)", lines.v[i]);
			return -EINVAL;
		}
		if (!strv_contains(&names, f.v[1]))
			strv_push(&names, f.v[1]);
		strv_push(&node, f.v[0]);
		strv_push(&part, f.v[1]);
		strv_push(&state, f.v[2]);
	}
	names_words(&names, &words);
	want = partition ? partition : def;
	if (!names.n) {
		*ret_err = xstrdup("Slurm lists no partitions");
		return -ENOENT;
	}
	if (!want) {
		*ret_err = xasprintf("Slurm has no default partition (it has %s)", words.buf);
		return -ENOENT;
	}
	if (!strv_contains(&names, want)) {
		const char *hint = str_suggest(want, (const char *const *)names.v, names.n);

		*ret_err = xasprintf("Slurm has no partition '%s' (it has %s%s%s%s)", want, words.buf,
				     hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
		return -ENOENT;
	}
	p.name = xstrdup(want);
	p.is_default = def && streq(def, want);
	for (size_t i = 0; i < node.n; i++)
		if (streq(part.v[i], want) && !strv_contains(&p.nodes, node.v[i])) {
			strv_push(&p.nodes, node.v[i]);
			strv_push(&p.states, state.v[i]);
		}
	*ret = p;
	return 0;
}

bool doctor_node_state_idle(const char *state)
{
	/* a suffix is a flag: '*' not responding, '~' powered off, '#' powering up, '$' reserved, ... */
	return state && streq(state, "idle");
}

/* ---- the probe on a node ---- */

static char *spool_probe(const char *spool, const char *marker)
{
	_cleanup_free_ char *tmp = NULL;
	struct stat st;
	int fd;

	if (stat(spool, &st) < 0)
		return xasprintf("%s: %s", spool, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return xasprintf("%s is not a folder", spool);
	if (marker) {
		_cleanup_free_ char *m = NULL;

		if (strchr(marker, '/') || !str_startswith(marker, MARKER_PREFIX))
			return xasprintf("'%s' is no marker of lab doctor's", marker);
		m = path_join(spool, marker);
		if (access(m, F_OK) < 0)
			return xasprintf("%s is another folder than the head's: the head's %s is not in it", spool,
					 marker);
	}
	tmp = path_join(spool, MARKER_PREFIX "node-XXXXXX");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return xasprintf("%s is not writable here: %s", spool, strerror(errno));
	close(fd);
	unlink(tmp);
	return NULL;
}

void doctor_node_probe(const char *version, const char *spool, const char *marker, struct doctor_node_report *ret)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	const char *why = NULL, *name = getenv("SLURMD_NODENAME");
	char host[256];

	memset(ret, 0, sizeof(*ret));
	if (name && *name)
		ret->node = xstrdup(name);
	else if (gethostname(host, sizeof(host)) == 0)
		ret->node = xstrndup(host, sizeof(host) - 1);
	ret->version = xstrdup(version);
	ret->kvm = vm_kvm_usable(&why);
	if (!ret->kvm)
		ret->kvm_why = xstrdup(why ? why : "no usable /dev/kvm");
	if (vm_libvirt_version(&ret->libvirt, &err) < 0)
		ret->libvirt_error = xstrdup(err.len ? err.buf : "libvirt's QEMU driver cannot be opened");
	if (spool) {
		ret->spool_checked = true;
		ret->spool_error = spool_probe(spool, marker);
	}
}

void doctor_node_report_release(struct doctor_node_report *r)
{
	free(r->node);
	free(r->version);
	free(r->kvm_why);
	free(r->libvirt);
	free(r->libvirt_error);
	free(r->spool_error);
	memset(r, 0, sizeof(*r));
}

void doctor_node_report_format(const struct doctor_node_report *r, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, false);
	json_object_begin(&j);
	json_kv_string(&j, "node", r->node);
	json_kv_string(&j, "lab", r->version);
	json_kv_string(&j, "accel", r->kvm ? "kvm" : "tcg");
	json_kv_string(&j, "accel_why", r->kvm ? NULL : r->kvm_why);
	json_kv_string(&j, "libvirt", r->libvirt);
	json_kv_string(&j, "libvirt_error", r->libvirt ? NULL : r->libvirt_error);
	json_kv_string(&j, "spool", !r->spool_checked ? NULL : r->spool_error ? r->spool_error : "ok");
	json_object_end(&j);
	json_finish(&j);
	strbuf_addch(out, '\n');
}

/* A member that is a string or null (missing reads as null): 0 with a copy or NULL, else -EINVAL. */
static int string_or_null(const struct json_doc *doc, const char *key, char **ret)
{
	const struct json_doc *v = json_doc_get(doc, key);

	if (json_doc_type(v) == JSON_DOC_NULL) {
		*ret = NULL;
		return 0;
	}
	if (json_doc_type(v) != JSON_DOC_STRING)
		return -EINVAL;
	*ret = xstrdup(json_doc_string_value(v));
	return 0;
}

int doctor_node_report_parse(const char *text, size_t len, struct doctor_node_report *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	_cleanup_free_ char *err = NULL, *accel = NULL, *spool = NULL;
	struct doctor_node_report r = { 0 };
	static const char *const strings[] = { "node", "lab", "accel", "accel_why", "libvirt", "libvirt_error",
					       "spool" };
	char **const dst[] = { &r.node, &r.version, &accel, &r.kvm_why, &r.libvirt, &r.libvirt_error, &spool };
	size_t start, end = len;

	/* the last line that is not empty */
	while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' '))
		end--;
	start = end;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	if (start == end) {
		*ret_err = xstrdup("the probe printed nothing");
		return -EINVAL;
	}
	if (json_doc_parse(text + start, end - start, &doc, &err) < 0) {
		*ret_err = xasprintf("the probe's report is no JSON (%s): '%.*s'", err, (int)(end - start > 200 ? 200 : end - start),
				     text + start);
		return -EINVAL;
	}
	if (json_doc_type(doc) != JSON_DOC_OBJECT) {
		*ret_err = xstrdup("the probe's report is no JSON object");
		return -EINVAL;
	}
	for (size_t i = 0; i < ELEMENTSOF(strings); i++)
		if (string_or_null(doc, strings[i], dst[i]) < 0) {
			*ret_err = xasprintf("the probe's report: \"%s\" is %s, not a string", strings[i],
					     json_doc_type_name(json_doc_get(doc, strings[i])));
			goto fail;
		}
	if (!r.version || !*r.version) {
		*ret_err = xstrdup("the probe's report has no \"lab\" version");
		goto fail;
	}
	if (!accel || (!streq(accel, "kvm") && !streq(accel, "tcg"))) {
		*ret_err = xasprintf("the probe's report: \"accel\" is %s%s%s, not kvm or tcg", accel ? "'" : "",
				     accel ? accel : "missing", accel ? "'" : "");
		goto fail;
	}
	r.kvm = streq(accel, "kvm");
	if (r.kvm) {
		free(r.kvm_why);
		r.kvm_why = NULL;
	}
	if (r.libvirt) {
		free(r.libvirt_error);
		r.libvirt_error = NULL;
	} else if (!r.libvirt_error) {
		r.libvirt_error = xstrdup("not reported");
	}
	r.spool_checked = spool != NULL;
	if (spool && !streq(spool, "ok"))
		r.spool_error = TAKE_PTR(spool);
	*ret = r;
	return 0;
fail:
	doctor_node_report_release(&r);
	return -EINVAL;
}

void doctor_node_check(const char *name, const struct doctor_node_report *r, const char *version, bool spool,
		       struct doctor_check **v, size_t *n)
{
	_cleanup_strbuf_ struct strbuf found = STRBUF_INIT, fix = STRBUF_INIT;
	enum doctor_status st = DOCTOR_OK;

#define FIX(s_, ...)                                                \
	do {                                                        \
		if ((s_) > st)                                      \
			st = (s_);                                  \
		strbuf_addstr(&fix, fix.len ? "; " : "");           \
		strbuf_addf(&fix, __VA_ARGS__);                     \
	} while (0)

	if (version && !streq(r->version, version)) {
		strbuf_addf(&found, "lab %s, not the head's %s", r->version, version);
		FIX(DOCTOR_MISSING, "install lab %s on %s (engine: lab: is its path there)", version, name);
	} else {
		strbuf_addf(&found, "lab %s", r->version);
	}
	if (r->kvm) {
		strbuf_addstr(&found, ", kvm");
	} else {
		strbuf_addf(&found, ", tcg (%s)", r->kvm_why ? r->kvm_why : "no usable /dev/kvm");
		FIX(DOCTOR_WARN, "load kvm_intel or kvm_amd on %s and give lab /dev/kvm rw (guests run slowly under TCG)",
		    name);
	}
	if (r->libvirt) {
		strbuf_addf(&found, ", %s", r->libvirt);
	} else {
		strbuf_addf(&found, ", no libvirt: %s", r->libvirt_error ? r->libvirt_error : "not reported");
		FIX(DOCTOR_MISSING, "apt install libvirt-daemon-driver-qemu libvirt-daemon-system on %s", name);
	}
	if (spool && !r->spool_checked) {
		strbuf_addstr(&found, ", spool not checked");
	} else if (r->spool_checked && !r->spool_error) {
		strbuf_addstr(&found, ", spool shared and writable");
	} else if (r->spool_checked) {
		strbuf_addf(&found, ", spool: %s", r->spool_error);
		FIX(DOCTOR_MISSING, "mount the spool on %s at the same path, writable by lab's user", name);
	}
	if (r->node && !streq(r->node, name))
		strbuf_addf(&found, " (it calls itself %s)", r->node);
#undef FIX
	doctor_check_add_owned(v, n, xasprintf("node %s", name), needs_node, st, strbuf_detach(&found, NULL),
			       fix.len ? strbuf_detach(&fix, NULL) : NULL);
}

/* ---- the head ---- */

static void progress(const struct doctor_cluster *o, const char *fmt, ...) _printf_(2, 3);
static void progress(const struct doctor_cluster *o, const char *fmt, ...)
{
	_cleanup_free_ char *t = NULL;
	va_list ap;

	if (!o->progress)
		return;
	va_start(ap, fmt);
	t = xvasprintf(fmt, ap);
	va_end(ap);
	o->progress(o->userdata, t);
}

/*
 * What a Slurm command that failed said: "sinfo failed (exit status 1):
 * <stderr>". srun's own "task 0: Exited with exit code N" line says less
 * than slurmstepd's reason (execve(): ...: No such file or directory), so
 * it goes only when nothing else was said; the lines are joined with "; ".
 */
static char *command_error(const struct command *c, int r, const struct strbuf *err)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	_cleanup_strbuf_ struct strbuf said = STRBUF_INIT;
	const char *prog = c->argv.v[0];

	if (r == -ETIME)
		return xasprintf("%s did not answer within %llu s", prog,
				 (unsigned long long)(c->timeout_usec / 1000000));
	if (r == -ENOENT)
		return xasprintf("%s is not installed here (not in PATH)", prog);
	if (r < 0)
		return xasprintf("%s: %s", prog, strerror(-r));
	strv_split(&lines, err->buf ? err->buf : "", '\n');
	for (int pass = 0; pass < 2 && !said.len; pass++)
		for (size_t i = 0; i < lines.n && said.len < 1000; i++) {
			const char *l = lines.v[i];

			if (!*l || (pass == 0 && str_startswith(l, "srun: error: ") && strstr(l, ": task ")))
				continue;
			strbuf_addf(&said, "%s%s", said.len ? "; " : "", l);
		}
	return xasprintf("%s failed (exit status %d)%s%s", prog, r, said.len ? ": " : "", said.len ? said.buf : "");
}

/* Run c, its stdout in out; 0, or the error in *ret_err. */
static int run(struct command *c, uint64_t timeout_usec, struct strbuf *out, char **ret_err)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	int r;

	c->out = out;
	c->err = &err;
	c->timeout_usec = timeout_usec;
	r = command_run(c);
	if (r != 0) {
		*ret_err = command_error(c, r, &err);
		return r < 0 ? r : -EIO;
	}
	return 0;
}

static void check_engine(const struct doctor_cluster *o, struct doctor_check **v, size_t *n)
{
	static const char fix[] = "give lab.yaml an engine: section: type: slurm, spool: a folder every node mounts at "
				  "the same path, partition: (else the cluster's default); see lab(1)";

	if (!o->have_file)
		doctor_check_add(v, n, "engine", needs_engine, DOCTOR_MISSING,
				 xasprintf("no %s here: the cluster is lab.yaml's engine: section", o->file), fix);
	else if (!o->declared)
		doctor_check_add(v, n, "engine", needs_engine, DOCTOR_MISSING,
				 xasprintf("%s has no engine: section", o->file), fix);
	else if (!o->spool)
		doctor_check_add(v, n, "engine", needs_engine, DOCTOR_MISSING,
				 xasprintf("%s: engine: has no spool:", o->file), fix);
	else
		doctor_check_add(v, n, "engine", needs_engine, DOCTOR_OK,
				 xasprintf("%s: partition %s, spool %s, lab on the nodes %s", o->file,
					   o->partition ? o->partition : "(the cluster's default)", o->spool, o->lab),
				 fix);
}

/* sinfo: the slurm and partition checks; 0 with *ret when the partition is there. */
static int check_slurm(const struct doctor_cluster *o, struct doctor_partition *ret, struct doctor_check **v,
		       size_t *n)
{
	_cleanup_(command_release) struct command ver, list;
	_cleanup_strbuf_ struct strbuf vout = STRBUF_INIT, out = STRBUF_INIT, nodes = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	uint64_t timeout = o->timeout_usec ? o->timeout_usec : SINFO_TIMEOUT_USEC;
	const char *conf = getenv("SLURM_CONF");
	struct doctor_partition p = { 0 };
	int r;

	command_init(&ver, "sinfo");
	command_init(&list, "sinfo");
	progress(o, "asking Slurm (sinfo)");
	command_arg(&ver, "--version");
	if (run(&ver, timeout, &vout, &err) < 0) {
		doctor_check_add(v, n, "slurm", needs_slurm, DOCTOR_MISSING, TAKE_PTR(err),
				 "apt install slurm-client (sinfo, sbatch, squeue, srun), configured for the cluster");
		return -1;
	}
	strbuf_setlen(&vout, strcspn(vout.buf ? vout.buf : "", "\n"));
	command_args(&list, "--noheader", "--Node", "--format=%N|%P|%T", NULL);
	if (run(&list, timeout, &out, &err) < 0) {
		doctor_check_add(v, n, "slurm", needs_slurm, DOCTOR_MISSING,
				 xasprintf("cannot reach Slurm: %s", err),
				 "start slurmctld, or point SLURM_CONF at the cluster's slurm.conf; sinfo must answer here");
		return -1;
	}
	doctor_check_add(v, n, "slurm", needs_slurm, DOCTOR_OK,
			 xasprintf("%s, sinfo answers%s%s", vout.len ? vout.buf : "sinfo", conf ? ": SLURM_CONF=" : "",
				   conf ? conf : ""),
			 NULL);
	r = doctor_sinfo_parse(out.buf, o->partition, &p, &err);
	if (r < 0) {
		doctor_check_add(v, n, "partition", needs_partition, DOCTOR_MISSING, TAKE_PTR(err),
				 r == -ENOENT ? "set engine: partition: in lab.yaml to one of Slurm's partitions (sinfo)"
					      : "check that sinfo works here");
		return -1;
	}
	for (size_t i = 0; i < p.nodes.n; i++)
		strbuf_addf(&nodes, "%s%s %s", i ? ", " : "", p.nodes.v[i], p.states.v[i]);
	doctor_check_add(v, n, "partition", needs_partition, DOCTOR_OK,
			 xasprintf("%s%s: %zu node%s: %s", p.name, p.is_default ? " (the default)" : "", p.nodes.n,
				   p.nodes.n == 1 ? "" : "s", nodes.buf),
			 NULL);
	*ret = p;
	return 0;
}

/* The spool from here; on success *ret_marker names a file left in it for the nodes to find. */
static void check_spool(const struct doctor_cluster *o, char **ret_marker, struct doctor_check **v, size_t *n)
{
	static const char fix[] = "create the spool on storage every node mounts at the same path (NFS, ...), "
				  "writable by lab's user";
	_cleanup_free_ char *tmp = NULL;
	struct stat st;
	int fd;

	if (stat(o->spool, &st) < 0) {
		doctor_check_add(v, n, "spool", needs_spool, DOCTOR_MISSING, xasprintf("%s: %s", o->spool, strerror(errno)),
				 fix);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		doctor_check_add(v, n, "spool", needs_spool, DOCTOR_MISSING, xasprintf("%s is not a folder", o->spool),
				 fix);
		return;
	}
	tmp = path_join(o->spool, MARKER_PREFIX "XXXXXX");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		doctor_check_add(v, n, "spool", needs_spool, DOCTOR_MISSING,
				 xasprintf("%s is not writable here: %s", o->spool, strerror(errno)), fix);
		return;
	}
	close(fd);
	doctor_check_add(v, n, "spool", needs_spool, DOCTOR_OK, xasprintf("%s: a folder writable here", o->spool), fix);
	*ret_marker = path_basename(tmp);
}

static void probe_node(const struct doctor_cluster *o, const char *partition, const char *node, const char *marker,
		       struct doctor_check **v, size_t *n)
{
	_cleanup_(command_release) struct command c;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	struct doctor_node_report r;

	progress(o, "probing %s (srun %s doctor --node-probe)", node, o->lab);
	command_init(&c, "srun");
	command_args(&c, "--nodes=1", "--ntasks=1", "--exclusive", "--time=1", "--quiet", "--job-name=lab-doctor", NULL);
	command_argf(&c, "--immediate=%d", PROBE_IMMEDIATE_SEC);
	command_argf(&c, "--partition=%s", partition);
	command_argf(&c, "--nodelist=%s", node);
	if (o->account)
		command_argf(&c, "--account=%s", o->account);
	if (o->qos)
		command_argf(&c, "--qos=%s", o->qos);
	if (o->reservation)
		command_argf(&c, "--reservation=%s", o->reservation);
	command_args(&c, o->lab, "doctor", "--node-probe", NULL);
	if (o->spool)
		command_arg(&c, o->spool);
	if (o->spool && marker)
		command_arg(&c, marker);
	if (run(&c, o->timeout_usec ? o->timeout_usec : PROBE_TIMEOUT_USEC, &out, &err) < 0) {
		doctor_check_add_owned(v, n, xasprintf("node %s", node), needs_node, DOCTOR_MISSING,
				       xasprintf("the probe did not run: %s", err),
				       xasprintf("install lab %s on %s at %s (engine: lab: names lab's path on the "
						 "nodes; without it, this lab's own path)",
						 o->version, node, o->lab));
		return;
	}
	if (doctor_node_report_parse(out.buf ? out.buf : "", out.len, &r, &err) < 0) {
		doctor_check_add_owned(v, n, xasprintf("node %s", node), needs_node, DOCTOR_MISSING,
				       xasprintf("%s %s: %s", o->lab, "doctor --node-probe", err),
				       xasprintf("install lab %s on %s at %s", o->version, node, o->lab));
		return;
	}
	doctor_node_check(node, &r, o->version, o->spool != NULL, v, n);
	doctor_node_report_release(&r);
}

static void not_probed(const char *node, const char *state, struct doctor_check **v, size_t *n)
{
	bool busy = str_startswith(state, "alloc") || str_startswith(state, "mix") || str_startswith(state, "comp");

	doctor_check_add_owned(v, n, xasprintf("node %s", node), needs_node, DOCTOR_WARN,
			       xasprintf("not probed: %s", state),
			       busy ? xasprintf("%s runs a job: run lab doctor --engine slurm again when it is idle", node)
				    : xasprintf("%s is not idle: once it is fixed, scontrol update NodeName=%s "
						"State=RESUME (sinfo -R says why)",
						node, node));
}

void doctor_cluster_checks(const struct doctor_cluster *o, struct doctor_check **v, size_t *n)
{
	_cleanup_free_ char *marker = NULL;
	struct doctor_partition p = { 0 };
	bool have_partition;

	check_engine(o, v, n);
	have_partition = check_slurm(o, &p, v, n) == 0;
	if (o->spool)
		check_spool(o, &marker, v, n);
	for (size_t i = 0; have_partition && i < p.nodes.n; i++) {
		if (doctor_node_state_idle(p.states.v[i]))
			probe_node(o, p.name, p.nodes.v[i], marker, v, n);
		else
			not_probed(p.nodes.v[i], p.states.v[i], v, n);
	}
	if (marker) {
		_cleanup_free_ char *m = path_join(o->spool, marker);

		unlink(m);
	}
	doctor_partition_release(&p);
}
