/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/tarball.h"
#include "../vm/insn.h"
#include "guest-script.h"
#include "hostload.h"
#include "guest-run.h"
#include "../util/banned.h"

static void step(const struct runner_config *c, const struct plan_run *pr, const char *what)
{
	if (c->progress && c->progress->step)
		c->progress->step(c->progress->userdata, pr->id, what);
}

static void fail(struct result_run *out, const char *fmt, ...) _printf_(2, 3);
static void fail(struct result_run *out, const char *fmt, ...)
{
	va_list ap;

	if (out->error)
		return; /* the first failure is the reason */
	va_start(ap, fmt);
	out->error = xvasprintf(fmt, ap);
	va_end(ap);
	out->status = RUN_FAILED;
}

static void target(const struct runner_config *c, struct ssh_target *t)
{
	if (c->vm)
		vm_ssh_target(c->vm, t);
	else
		*t = *c->host;
}

static void remote_command(const struct runner_config *c, struct command *cmd, char *const *argv, size_t n)
{
	struct ssh_target t;

	target(c, &t);
	ssh_command(cmd, &t, false);
	ssh_remote_argv(cmd, argv, n);
}

/* ssh VM ARGV...; stdout to `out_path` (or captured in `out`), stderr captured in err. */
static int remote(const struct runner_config *c, char *const *argv, size_t n, const char *in, size_t in_len,
		  const char *out_path, struct strbuf *out, struct strbuf *err, uint64_t timeout)
{
	_cleanup_command_ struct command cmd = { 0 };
	int fd = -1, r;

	remote_command(c, &cmd, argv, n);
	cmd.in = in;
	cmd.in_len = in_len;
	cmd.err = err;
	cmd.timeout_usec = timeout;
	if (out_path) {
		fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		cmd.out_fd = fd;
	} else {
		cmd.out = out;
	}
	r = command_run(&cmd);
	if (fd >= 0)
		close(fd);
	return r;
}

static int copy_in(const struct runner_config *c, const char *from, const char *to, struct strbuf *err)
{
	_cleanup_command_ struct command cmd = { 0 };
	_cleanup_free_ char *dst = xasprintf(":%s", to);
	struct ssh_target t;

	target(c, &t);
	scp_command(&cmd, &t, from, dst);
	cmd.err = err;
	cmd.timeout_usec = 600ULL * 1000000;
	return command_run(&cmd);
}

static char *tail(const char *s, size_t max)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		n--;
	return xstrndup(n > max ? s + n - max : s, n > max ? max : n);
}

static void driver_config_fill(const struct runner_config *c, const struct plan_run *pr, struct driver_config *dc,
			       struct driver_monitor *mons, struct plan_param **storage)
{
	const struct catalogue_entry *w = spec_find_catalogue(c->s, pr->workload, false);
	_cleanup_free_ char *setup = w ? path_join(w->dir, "setup") : NULL;

	memset(dc, 0, sizeof(*dc));
	dc->run = pr;
	dc->has_setup = setup && access(setup, X_OK) == 0;
	dc->warmup_sec = c->e ? c->e->warmup_usec / 1000000 : 0;
	dc->quiesce = !c->e || c->e->quiesce;
	for (size_t i = 0; i < pr->nparams; i++)
		if (streq(pr->params[i].key, "duration"))
			dc->has_duration = true;
	for (size_t i = 0; i < pr->monitors.n; i++) {
		const struct catalogue_entry *m = spec_find_catalogue(c->s, pr->monitors.v[i], true);
		size_t np = m ? m->nparams : 0;

		storage[i] = xcalloc(np + 1, sizeof(struct plan_param));
		for (size_t k = 0; k < np; k++) {
			storage[i][k].key = m->params[k].name;
			storage[i][k].value = m->params[k].def ? m->params[k].def : (char *)"";
			storage[i][k].is_default = true;
		}
		mons[i] = (struct driver_monitor){ .name = pr->monitors.v[i], .host = m && m->host,
						   .params = storage[i], .nparams = np };
	}
	dc->monitors = mons;
	dc->nmonitors = pr->monitors.n;
}

/* reproduce.sh: `lab reproduce` on the run folder it is in (a stored run or
 * an unpacked bundle, anywhere): the whole lab run made again from its
 * snapshot, a new run linked to it, and whether it reproduced. */
static void write_reproduce(const struct runner_config *c, const struct plan_run *pr)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = path_join(c->rundir, "reproduce.sh");

	strbuf_addf(&sb, "#!/bin/sh\n# Reproduce the lab run that run %s belongs to, from its folder alone\n"
			 "# (a stored run or an unpacked bundle, anywhere: no checkout needed). The\n"
			 "# new run goes into ./results; extra arguments go to lab reproduce\n"
			 "# (--repeat N).\n"
			 "set -eu\nhere=$(cd \"$(dirname \"$0\")/../..\" && pwd)\n"
			 "exec lab reproduce \"$here\" \"$@\"\n",
		    pr->id);
	fs_write_atomic(p, sb.buf, sb.len, 0755);
}

static void evidence(const struct runner_config *c, const char *dir)
{
	_cleanup_free_ char *console = path_join(dir, "console.log"), *config = path_join(dir, "kernel.config");
	_cleanup_free_ char *pk = path_join(dir, "packages.txt"), *dm = path_join(dir, "dmesg");
	_cleanup_free_ char *bid = path_join(dir, "boot_id");
	char *dmesg[] = { (char *)"dmesg", NULL };
	char *boot_id[] = { (char *)"cat", (char *)"/proc/sys/kernel/random/boot_id", NULL };

	if (c->vm && c->vm->console) {
		vm_console_sync(c->vm);
		fs_copy_file(c->vm->console, console, true);
	}
	if (c->kernel && c->kernel->config)
		fs_copy_file(c->kernel->config, config, true);
	if (c->image && c->image->packages)
		fs_copy_file(c->image->packages, pk, true);
	remote(c, dmesg, 1, NULL, 0, dm, NULL, NULL, 60ULL * 1000000);
	/* which boot served the run: runs sharing a guest share it */
	remote(c, boot_id, 2, NULL, 0, bid, NULL, NULL, 60ULL * 1000000);
}

/* Run `parse RAW` on the controller; its lines appended to metrics. `work`:
 * the workload's units of work ("metric value") for a monitor's per-work
 * figures, or NULL. */
static int parse_one(const char *script, const char *raw, const char *work, struct strbuf *metrics,
		     struct strbuf *err)
{
	_cleanup_command_ struct command cmd = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	int r;

	command_init(&cmd, script);
	command_arg(&cmd, raw);
	if (work) {
		_cleanup_free_ char *name = xstrndup(work, strcspn(work, " "));

		command_env(&cmd, "LAB_WORK_METRIC", name);
		command_env(&cmd, "LAB_WORK", work + strlen(name) + (work[strlen(name)] == ' '));
	}
	cmd.out = &out;
	cmd.err = err;
	cmd.timeout_usec = 300ULL * 1000000;
	r = command_run(&cmd);
	if (r == 0)
		strbuf_addstr(metrics, out.buf ? out.buf : "");
	return r;
}

/* driver.sh and reproduce.sh into the run folder; the script in `script`. */
static void write_driver(const struct runner_config *c, const struct plan_run *pr, struct strbuf *script)
{
	_cleanup_free_ char *drv = path_join(c->rundir, "driver.sh");
	_cleanup_free_ struct driver_monitor *mons = xcalloc(pr->monitors.n + 1, sizeof(*mons));
	_cleanup_free_ struct plan_param **storage = xcalloc(pr->monitors.n + 1, sizeof(*storage));
	struct driver_config dc;

	driver_config_fill(c, pr, &dc, mons, storage);
	driver_format(&dc, script);
	for (size_t i = 0; i < pr->monitors.n; i++)
		free(storage[i]);
	fs_write_atomic(drv, script->buf, script->len, 0755);
	write_reproduce(c, pr);
}

/* The guest's `uname -r` into out->release; it must be the variant's. */
static int check_release(const struct runner_config *c, struct result_run *out)
{
	_cleanup_strbuf_ struct strbuf rel = STRBUF_INIT, err = STRBUF_INIT;
	char *uname[] = { (char *)"uname", (char *)"-r", NULL };

	if (remote(c, uname, 2, NULL, 0, NULL, &rel, &err, 60ULL * 1000000) == 0 && rel.len) {
		strbuf_setlen(&rel, rel.len - (rel.buf[rel.len - 1] == '\n'));
		out->release = xstrdup(rel.buf);
	}
	if (!out->release || (c->kernel && c->kernel->release && !streq(out->release, c->kernel->release))) {
		fail(out, "the guest runs %s, not the variant's %s", out->release ? out->release : "(no answer)",
		     c->kernel && c->kernel->release ? c->kernel->release : "?");
		return -1;
	}
	return 0;
}

/* The catalogue and System.map into the guest, once per boot. */
static int ship(const struct runner_config *c, const struct plan_run *pr, struct result_run *out)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	char *mk[] = { (char *)"mkdir", (char *)"-p", (char *)DRIVER_GUEST_DIR "/wl", NULL };
	char *untar[] = { (char *)"tar", (char *)"-C", (char *)DRIVER_GUEST_DIR "/wl", (char *)"-xf",
			  (char *)DRIVER_GUEST_DIR "/wl.tar", NULL };

	if (c->shipped && *c->shipped)
		return 0;
	step(c, pr, "ship the catalogue");
	if (remote(c, mk, 3, NULL, 0, NULL, NULL, &err, 60ULL * 1000000) != 0 ||
	    copy_in(c, c->catalogue_tar, DRIVER_GUEST_DIR "/wl.tar", &err) != 0 ||
	    remote(c, untar, 5, NULL, 0, NULL, NULL, &err, 300ULL * 1000000) != 0 ||
	    (c->kernel && c->kernel->system_map &&
	     copy_in(c, c->kernel->system_map, DRIVER_GUEST_DIR "/System.map", &err) != 0)) {
		_cleanup_free_ char *t = tail(err.buf ? err.buf : "", 400);

		fail(out, "could not ship the catalogue to the guest: %s", t);
		return -1;
	}
	if (c->shipped)
		*c->shipped = true;
	return 0;
}

/* The host-side monitors of a run: read by lab at the window's start and
 * stop (guest-script.h's markers), their raw outputs kept here until the guest's
 * are unpacked. */
struct window {
	const struct runner_config *c;
	const struct plan_run *pr;
	struct command *cmd;
	size_t stop_cut, len; /* where the script's second step ends; its length */
	int seen;             /* markers seen: 0, 1 (open), 2 (closed) */
	struct strbuf *raw;   /* per monitor of pr; a guest monitor's stays empty */
};

/* One reading of every host-side monitor, as a "== WHEN" section of its raw output. */
static void window_read(struct window *win, const char *when)
{
	const struct runner_config *c = win->c;

	for (size_t i = 0; i < win->pr->monitors.n; i++) {
		const struct catalogue_entry *m = spec_find_catalogue(c->s, win->pr->monitors.v[i], true);
		struct strbuf *raw = &win->raw[i];
		_cleanup_free_ char *sock = NULL, *why = NULL;

		if (!m || !m->host)
			continue;
		strbuf_addf(raw, "== %s\n", when);
		/* the one source there is: CATALOGUE_HOST_INSN_PLUGIN */
		if (!c->vm || c->vm->host_name) {
			strbuf_addstr(raw, "# lab: error: lab's QEMU plugin counts instructions of a VM on this machine, "
					   "not of a bare-metal or remote host\n");
			continue;
		}
		sock = insn_socket_path(c->vm);
		if (insn_snapshot_read(sock, raw, &why) < 0)
			strbuf_addf(raw, "\n# lab: error: %s\n", why);
		else if (raw->len && raw->buf[raw->len - 1] != '\n')
			strbuf_addch(raw, '\n');
	}
}

/* The driver's stdout: at each marker the monitors are read, then the next step of the script goes. */
static void window_line(void *userdata, const char *line, size_t len)
{
	struct window *win = userdata;

	(void)len;
	if (win->seen == 0 && streq(line, DRIVER_WINDOW_START)) {
		window_read(win, "start");
		win->seen = 1;
		win->cmd->in_len = win->stop_cut;
	} else if (win->seen == 1 && streq(line, DRIVER_WINDOW_STOP)) {
		window_read(win, "stop");
		win->seen = 2;
		win->cmd->in_len = win->len;
		win->cmd->in_open = false;
	}
}

/* ssh VM sh -s with the script on stdin: whole, or step by step when there is a window to read. */
static int run_script(const struct runner_config *c, const struct strbuf *script, struct window *win,
		      struct strbuf *err, uint64_t timeout)
{
	_cleanup_command_ struct command cmd = { 0 };
	char *sh[] = { (char *)"sh", (char *)"-s", NULL };
	size_t start_cut = 0;

	remote_command(c, &cmd, sh, 2);
	cmd.in = script->buf;
	cmd.in_len = script->len;
	cmd.err = err;
	cmd.timeout_usec = timeout;
	if (win) {
		driver_steps(script->buf, &start_cut, &win->stop_cut);
		win->cmd = &cmd;
		win->len = script->len;
		if (start_cut && win->stop_cut) {
			cmd.in_len = start_cut;
			cmd.in_open = true;
			cmd.on_line = window_line;
			cmd.userdata = win;
		}
	}
	return command_run(&cmd);
}

/* The driver in the guest, within the run's time limit; the host's CPU
 * around it (for a guest on this machine) as metric lines in hostm. */
static void run_driver(const struct runner_config *c, const struct catalogue_entry *w, const struct strbuf *script,
		       struct window *win, struct result_run *out, struct strbuf *hostm)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	struct host_cpu_sample h0, h1;
	bool hl = c->vm && !c->vm->host_name && host_cpu_sample(vm_qemu_pid(c->vm), &h0) == 0;
	uint64_t timeout = c->e && c->e->timeout_usec ? c->e->timeout_usec
				: (w && w->timeout_usec ? w->timeout_usec : 3600ULL * 1000000);
	int r = run_script(c, script, win, &err, timeout);

	if (r == -ETIME) {
		fail(out, "timeout after %llu s (the run's limit)", (unsigned long long)(timeout / 1000000));
	} else if (r != 0) {
		const char *stepname = driver_step_name(r);

		if (stepname) {
			fail(out, "the %s step failed (exit %d); see raw/*.log", stepname, r);
		} else {
			_cleanup_free_ char *t = tail(err.buf ? err.buf : "", 400);

			fail(out, "the driver failed (exit %d): %s", r, t);
		}
	}
	if (hl && host_cpu_sample(vm_qemu_pid(c->vm), &h1) == 0)
		host_load_format(&h0, &h1, hostm);
}

/* Whatever happened, what the guest has into raw/. */
static int collect(const struct runner_config *c, const struct plan_run *pr, const char *raw,
		   struct result_run *out)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	_cleanup_free_ char *tarp = path_join(c->rundir, "raw.tar");
	_cleanup_close_ int x = -1;
	char *tarc[] = { (char *)"tar", (char *)"-C", (char *)DRIVER_GUEST_DIR "/out", (char *)"-cf", (char *)"-",
			 (char *)".", NULL };

	step(c, pr, "collect");
	if (remote(c, tarc, 6, NULL, 0, tarp, NULL, &err, 600ULL * 1000000) != 0) {
		_cleanup_free_ char *t = tail(err.buf ? err.buf : "", 300);

		fail(out, "could not collect the raw outputs: %s", t);
		return -1;
	}
	/* the guest made the archive: unpacked here, it cannot write outside raw/ (util/tarball.h) */
	strbuf_reset(&err);
	if ((x = open(raw, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    tarball_extract(tarp, x, 0, NULL, &err) < 0) {
		fail(out, "could not unpack the raw outputs: %s", err.len ? err.buf : strerror(errno));
		return -1;
	}
	unlink(tarp);
	return 0;
}

/* One parse script on its raw output; a failure is the run's. */
static void parse_raw(const struct catalogue_entry *ce, const char *raw, const char *name, const char *work,
		      struct strbuf *metrics, struct result_run *out)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	_cleanup_free_ char *file = xasprintf("%s/%s.raw", raw, name);
	_cleanup_free_ char *script = ce ? path_join(ce->dir, "parse") : NULL;

	if (!script || parse_one(script, file, work, metrics, &err) != 0) {
		_cleanup_free_ char *t = tail(err.buf ? err.buf : "", 400);

		fail(out, "%s", t);
	}
}

/* The workload's line ("metric value") of its units of work (`pattern`, its
 * workload.yaml's work:) among its parser's lines; NULL when it printed none. */
static char *work_line(const char *pattern, const char *lines)
{
	_cleanup_strv_ struct strv v = STRV_INIT;

	strv_split(&v, lines, '\n');
	for (size_t i = 0; i < v.n; i++) {
		_cleanup_free_ char *name = xstrndup(v.v[i], strcspn(v.v[i], " "));

		if (catalogue_pattern_matches(pattern, name))
			return xstrdup(v.v[i]);
	}
	return NULL;
}

/* Host-side monitors' raw outputs into raw/, over anything of that name the guest sent. */
static void window_save(const struct window *win, const char *raw)
{
	for (size_t i = 0; i < win->pr->monitors.n; i++) {
		_cleanup_free_ char *file = NULL;

		if (!win->raw[i].len)
			continue;
		file = xasprintf("%s/%s.raw", raw, win->pr->monitors.v[i]);
		fs_write_atomic(file, win->raw[i].buf, win->raw[i].len, 0644);
	}
}

/* The workload's and every monitor's parser, then their metrics (and the host's) kept. */
static void parse_all(const struct runner_config *c, const struct plan_run *pr, const struct catalogue_entry *w,
		      const char *raw, const struct strbuf *hostm, struct result_run *out)
{
	_cleanup_strbuf_ struct strbuf metrics = STRBUF_INIT;
	_cleanup_free_ char *mp = path_join(c->rundir, "metrics"), *perr = NULL, *work = NULL;

	step(c, pr, "parse");
	parse_raw(w, raw, pr->workload, NULL, &metrics, out);
	work = w && w->work ? work_line(w->work, metrics.buf ? metrics.buf : "") : NULL;
	for (size_t i = 0; i < pr->monitors.n; i++)
		parse_raw(spec_find_catalogue(c->s, pr->monitors.v[i], true), raw, pr->monitors.v[i], work, &metrics,
			  out);
	if (out->status != RUN_OK)
		return;
	strbuf_add(&metrics, hostm->buf ? hostm->buf : "", hostm->len);
	fs_write_atomic(mp, metrics.buf ? metrics.buf : "", metrics.len, 0644);
	if (result_parse_metrics(out, metrics.buf ? metrics.buf : "", &perr) < 0) {
		fail(out, "a parser printed a malformed line: %s", perr);
		unlink(mp);
	}
}

int runner_exec(const struct runner_config *c, const struct plan_run *pr, struct result_run *out)
{
	const struct catalogue_entry *w = spec_find_catalogue(c->s, pr->workload, false);
	_cleanup_free_ char *raw = path_join(c->rundir, "raw");
	_cleanup_strbuf_ struct strbuf script = STRBUF_INIT, hostm = STRBUF_INIT;
	struct window win = { .c = c, .pr = pr, .raw = xcalloc(pr->monitors.n + 1, sizeof(struct strbuf)) };
	bool host = false;
	int r;

	for (size_t i = 0; i < pr->monitors.n; i++) {
		const struct catalogue_entry *m = spec_find_catalogue(c->s, pr->monitors.v[i], true);

		strbuf_init(&win.raw[i], 0);
		host = host || (m && m->host);
	}
	out->status = RUN_OK;
	if ((r = path_mkdir_p(raw, 0755)) < 0)
		goto done;
	write_driver(c, pr, &script);
	if (check_release(c, out) == 0 && ship(c, pr, out) == 0) {
		step(c, pr, "run");
		run_driver(c, w, &script, host ? &win : NULL, out, &hostm);
		if (collect(c, pr, raw, out) == 0) {
			window_save(&win, raw);
			if (out->status == RUN_OK)
				parse_all(c, pr, w, raw, &hostm, out);
		}
	}
	step(c, pr, "evidence");
	evidence(c, c->rundir);
	r = 0;
done:
	for (size_t i = 0; i < pr->monitors.n; i++)
		strbuf_release(&win.raw[i]);
	free(win.raw);
	return r;
}
