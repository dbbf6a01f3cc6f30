/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "guest-script.h"
#include "../util/banned.h"

static void env_name(struct strbuf *out, const char *key)
{
	strbuf_addstr(out, "LAB_PARAM_");
	for (; *key; key++)
		strbuf_addch(out, isalnum((unsigned char)*key) ? toupper((unsigned char)*key) : '_');
}

static void params(struct strbuf *out, const struct plan_param *p, size_t n, const char *override_key,
		   const char *override_value)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = override_key && streq(p[i].key, override_key) ? override_value : p[i].value;

		env_name(out, p[i].key);
		strbuf_addch(out, '=');
		shell_quote(out, v);
		strbuf_addch(out, ' ');
	}
}

/* "$OUT"/'NAME.SUFFIX': every file the driver writes, quoted. */
static void out_file(struct strbuf *out, const char *name, const char *suffix)
{
	_cleanup_free_ char *f = xasprintf("%s%s", name, suffix);

	strbuf_addstr(out, "\"$OUT\"/");
	shell_quote(out, f);
}

static bool host_window(const struct driver_config *c)
{
	for (size_t i = 0; i < c->nmonitors; i++)
		if (c->monitors[i].host)
			return true;
	return false;
}

void driver_format(const struct driver_config *c, struct strbuf *out)
{
	const struct plan_run *r = c->run;
	_cleanup_strbuf_ struct strbuf w = STRBUF_INIT;
	bool host = host_window(c);

	shell_quote(&w, r->workload);
	strbuf_addf(out, "#!/bin/sh\n"
			 "# lab run %s: %s on %s, repeat %u. Exit status: 0 ok, %d setup, %d warm-up,\n"
			 "# %d a monitor did not start, %d the workload failed.\n"
			 "set -u\n"
			 "cd " DRIVER_GUEST_DIR "/wl || exit %d\n"
			 "OUT=" DRIVER_GUEST_DIR "/out\n"
			 "rm -rf \"$OUT\" && mkdir -p \"$OUT/mon\" || exit %d\n"
			 "export LAB_MON_DIR=\"$OUT/mon\"\n"
			 "[ -r " DRIVER_GUEST_DIR "/System.map ] && export LAB_SYSTEM_MAP=" DRIVER_GUEST_DIR "/System.map\n"
			 "uname -a >\"$OUT/uname\"\n",
		    r->id, r->workload, r->kernel, r->repeat, DRIVER_SETUP, DRIVER_WARMUP, DRIVER_MONITOR, DRIVER_RUN,
		    DRIVER_SETUP, DRIVER_SETUP);
	if (c->has_setup) {
		strbuf_addstr(out, "env ");
		params(out, r->params, r->nparams, NULL, NULL);
		strbuf_addf(out, "./%s/setup >\"$OUT/setup.log\" 2>&1 || exit %d\n", w.buf, DRIVER_SETUP);
	}
	/* best effort (lib/lab.sh): what it could not do is in its log, the run goes on */
	if (c->quiesce)
		strbuf_addstr(out, "(. ./lib/lab.sh && lab_quiesce) >\"$OUT/quiesce.log\" 2>&1\n");
	if (c->warmup_sec && c->has_duration) {
		_cleanup_free_ char *d = xasprintf("%llus", (unsigned long long)c->warmup_sec);

		strbuf_addstr(out, "env ");
		params(out, r->params, r->nparams, "duration", d);
		strbuf_addf(out, "./%s/run >/dev/null 2>\"$OUT/warmup.log\" || exit %d\n", w.buf, DRIVER_WARMUP);
	}
	for (size_t i = 0; i < c->nmonitors; i++) {
		const struct driver_monitor *m = &c->monitors[i];

		if (m->host)
			continue;
		strbuf_addstr(out, "env ");
		params(out, m->params, m->nparams, NULL, NULL);
		strbuf_addstr(out, "./monitors/");
		shell_quote(out, m->name);
		strbuf_addstr(out, "/start 2>");
		out_file(out, m->name, ".start.log");
		strbuf_addf(out, " || exit %d\n", DRIVER_MONITOR);
	}
	/* the host reads its monitors while the guest waits for the rest of this script */
	if (host)
		strbuf_addstr(out, "echo '" DRIVER_WINDOW_START "'\n");
	strbuf_addstr(out, "env ");
	params(out, r->params, r->nparams, NULL, NULL);
	strbuf_addf(out, "./%s/run >", w.buf);
	out_file(out, r->workload, ".raw");
	strbuf_addstr(out, " 2>");
	out_file(out, r->workload, ".log");
	/* stdin is the script, and only its step so far: the workload never reads it */
	if (host)
		strbuf_addstr(out, " </dev/null");
	strbuf_addstr(out, "\nrc=$?\n");
	if (host)
		strbuf_addstr(out, "echo '" DRIVER_WINDOW_STOP "'\n");
	/* monitors stop in reverse order, whatever the workload did */
	for (size_t i = c->nmonitors; i-- > 0;) {
		const struct driver_monitor *m = &c->monitors[i];

		if (m->host)
			continue;
		strbuf_addstr(out, "./monitors/");
		shell_quote(out, m->name);
		strbuf_addstr(out, "/stop >");
		out_file(out, m->name, ".raw");
		strbuf_addstr(out, " 2>");
		out_file(out, m->name, ".stop.log");
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "[ \"$rc\" -eq 0 ] || exit %d\n", DRIVER_RUN);
}

void driver_steps(const char *script, size_t *ret_start, size_t *ret_stop)
{
	static const char start[] = "\necho '" DRIVER_WINDOW_START "'\n", stop[] = "\necho '" DRIVER_WINDOW_STOP "'\n";
	const char *a = strstr(script, start), *b = a ? strstr(a, stop) : NULL;

	*ret_start = a ? (size_t)(a - script) + sizeof(start) - 1 : 0;
	*ret_stop = b ? (size_t)(b - script) + sizeof(stop) - 1 : 0;
}

const char *driver_step_name(int status)
{
	switch (status) {
	case DRIVER_SETUP:
		return "setup";
	case DRIVER_WARMUP:
		return "warm-up";
	case DRIVER_MONITOR:
		return "monitor start";
	case DRIVER_RUN:
		return "run";
	default:
		return NULL;
	}
}
