/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "../util/alloc.h"
#include "../util/strbuf.h"
#include "ssh.h"
#include "../util/banned.h"

static void via_option(struct command *c, const struct ssh_target *via);

static void common_options(struct command *c, const struct ssh_target *t)
{
	command_args(c, "-F", "/dev/null", NULL);
	command_argf(c, "-oIdentityFile=%s", t->identity);
	/*
	 * LogLevel INFO, not ERROR: ssh says "Timeout, server not responding"
	 * at INFO, and a guest that stopped answering must not look like a
	 * command that failed without a word (run logs keep ssh's stderr).
	 */
	command_args(c, "-oIdentitiesOnly=yes", "-oIdentityAgent=none", "-oBatchMode=yes",
		     "-oStrictHostKeyChecking=yes", "-oUpdateHostKeys=no", "-oLogLevel=INFO", NULL);
	command_argf(c, "-oUserKnownHostsFile=%s", t->known_hosts);
	command_arg(c, "-oGlobalKnownHostsFile=/dev/null");
	if (t->alias)
		command_argf(c, "-oHostKeyAlias=%s", t->alias);
	command_argf(c, "-oConnectTimeout=%u", t->connect_timeout ? t->connect_timeout : 10);
	command_args(c, "-oServerAliveInterval=5", "-oServerAliveCountMax=6", NULL);
	if (t->control) {
		command_args(c, "-oControlMaster=auto", "-oControlPersist=600", NULL);
		command_argf(c, "-oControlPath=%s", t->control);
	}
	if (t->via)
		via_option(c, t->via);
}

static char *destination(const struct ssh_target *t)
{
	return xasprintf("%s@%s", t->user ? t->user : "root", t->host ? t->host : "127.0.0.1");
}

/* -oProxyCommand=ssh <via's options> -W %h:%p via */
static void via_option(struct command *c, const struct ssh_target *via)
{
	_cleanup_command_ struct command p = { 0 };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *dest = destination(via);

	_cleanup_strbuf_ struct strbuf pc = STRBUF_INIT;

	command_init(&p, "ssh");
	common_options(&p, via);
	command_argf(&p, "-p%u", via->port ? via->port : 22);
	command_args(&p, "-W", "%h:%p", "--", dest, NULL);
	shell_quote_argv(&sb, (const char *const *)p.argv.v);
	/* ssh expands %-tokens in ProxyCommand: every '%' but %h:%p's is doubled */
	for (const char *q = sb.buf; *q; q++) {
		if (str_startswith(q, "%h:%p")) {
			strbuf_addstr(&pc, "%h:%p");
			q += strlen("%h:%p") - 1;
		} else {
			strbuf_addstr(&pc, *q == '%' ? "%%" : (char[]){ *q, 0 });
		}
	}
	command_argf(c, "-oProxyCommand=%s", pc.buf);
}

void ssh_command(struct command *c, const struct ssh_target *t, bool tty)
{
	_cleanup_free_ char *dest = destination(t);

	command_init(c, "ssh");
	common_options(c, t);
	command_argf(c, "-p%u", t->port ? t->port : 22);
	command_arg(c, tty ? "-tt" : "-T");
	/* "--" so a destination never reads as an option */
	command_args(c, "--", dest, NULL);
}

void ssh_remote_argv(struct command *c, char *const *argv, size_t n)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		/* always quote: an empty word, '-x', '$(x)', newlines all arrive as written */
		strbuf_addch(&sb, '\'');
		for (const char *p = argv[i]; *p; p++) {
			if (*p == '\'')
				strbuf_addstr(&sb, "'\\''");
			else
				strbuf_addch(&sb, *p);
		}
		strbuf_addch(&sb, '\'');
	}
	command_arg(c, sb.buf);
}

void scp_command(struct command *c, const struct ssh_target *t, const char *from, const char *to)
{
	_cleanup_free_ char *dest = destination(t);

	command_init(c, "scp");
	common_options(c, t);
	command_argf(c, "-P%u", t->port ? t->port : 22);
	command_args(c, "-q", "-p", "--", NULL);
	{
		_cleanup_free_ char *f = from[0] == ':' ? xasprintf("%s%s", dest, from) : xstrdup(from);
		_cleanup_free_ char *w = to[0] == ':' ? xasprintf("%s%s", dest, to) : xstrdup(to);

		command_args(c, f, w, NULL);
	}
}

void ssh_control_exit(const struct ssh_target *t)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_free_ char *dest = destination(t);

	if (!t->control)
		return;
	command_init(&c, "ssh");
	common_options(&c, t);
	command_argf(&c, "-p%u", t->port ? t->port : 22);
	command_args(&c, "-O", "exit", "--", dest, NULL);
	c.timeout_usec = 5000000;
	command_run(&c);
}
