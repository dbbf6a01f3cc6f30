/* SPDX-License-Identifier: MIT */
/*
 * One option parser for every command, driven by the tables of lab/cmd.h
 * (git's parse-options): the same syntax everywhere (-x, -xVALUE, -x VALUE,
 * clustered flags -fa, --long, --long=VALUE, --long VALUE, an unambiguous
 * prefix of a long name, -- ends the options, a lone - is an operand), the
 * same error for the same mistake, and the help, `lab help --options`, the
 * man page's OPTIONS and the bash completion printed from the same tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/units.h"
#include "util/banned.h"

#define CPULIST_BITS 8192
#define HELP_COLUMN 32

/* Every command takes these besides its own. */
static const struct lab_option implicit_options[] = {
	OPT_JSON_ENTRY,
	{ .long_name = "help", .short_name = 'h', .type = OPT_FLAG, .help = "this help" },
	{ 0 },
};

static bool takes_arg(const struct lab_option *o)
{
	return o->arg_name != NULL;
}

static const char *opt_name(const struct lab_option *o, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (o->long_name)
		strbuf_addf(sb, "--%s", o->long_name);
	else
		strbuf_addf(sb, "-%c", o->short_name);
	return sb->buf;
}

/* "a|b|c" -> "a, b or c" */
static void choices_words(const char *choices, struct strbuf *out)
{
	_cleanup_strv_ struct strv v = STRV_INIT;

	strv_split(&v, choices, '|');
	for (size_t i = 0; i < v.n; i++)
		strbuf_addf(out, "%s%s", i == 0 ? "" : i + 1 == v.n ? " or " : ", ", v.v[i]);
}

/* "boot restore" -> "host boot and restore" */
static void subs_words(const char *noun, const char *subs, struct strbuf *out)
{
	_cleanup_strv_ struct strv v = STRV_INIT;

	strv_split(&v, subs, ' ');
	strbuf_addstr(out, noun);
	for (size_t i = 0; i < v.n; i++)
		strbuf_addf(out, "%s%s", i == 0 ? " " : i + 1 == v.n ? " and " : ", ", v.v[i]);
}

static bool word_in(const char *word, const char *words)
{
	size_t n = strlen(word);

	for (const char *p = words; (p = strstr(p, word)); p += n)
		if ((p == words || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

struct parser {
	struct lab_ctx *ctx;
	const char *who;  /* "kernel build", or NULL for lab's global options */
	const char *noun; /* for "goes with NOUN SUB" */
	const char *sub;
	const struct lab_option *tables[2];
	void *values;
	bool help; /* -h, --help given */
};

static void perror_opt(const struct parser *p, const char *fmt, const char *a, const char *b)
{
	_cleanup_free_ char *msg = xasprintf(fmt, a, b);

	if (p->who)
		cmd_error(p->ctx, "%s: %s (see 'lab %s --help')", p->who, msg, p->noun);
	else
		cmd_error(p->ctx, "%s (see 'lab --help')", msg);
}

static int bad_value(const struct parser *p, const struct lab_option *o, const char *arg)
{
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT, what = STRBUF_INIT;

	switch (o->what ? OPT_END : o->type) {
	case OPT_END:
		strbuf_addstr(&what, o->what);
		break;
	case OPT_UINT:
		strbuf_addf(&what, "a number from %ld to %ld", o->min, o->max);
		break;
	case OPT_SIZE:
		strbuf_addstr(&what, "a size such as 16G");
		break;
	case OPT_DURATION:
		strbuf_addstr(&what, "a duration such as 10m");
		break;
	case OPT_CHOICE:
		strbuf_addstr(&what, "one of ");
		choices_words(o->choices, &what);
		break;
	case OPT_CPULIST:
		strbuf_addstr(&what, "a host cpu list such as 2-3");
		break;
	default:
		strbuf_addstr(&what, "valid");
		break;
	}
	if (p->who)
		cmd_error(p->ctx, "%s: %s '%s' is not %s", p->who, opt_name(o, &name), arg, what.buf);
	else
		cmd_error(p->ctx, "%s '%s' is not %s", opt_name(o, &name), arg, what.buf);
	return -1;
}

/* Whether arg is a value o takes; numbers in *ret. -1 after a reported error. */
static int check_value(const struct parser *p, const struct lab_option *o, const char *arg, uint64_t *ret)
{
	int r = 0;

	switch (o->type) {
	case OPT_UINT:
		r = parse_uint(arg, (uint64_t)o->max, ret) < 0 || *ret < (uint64_t)o->min ? -1 : 0;
		break;
	case OPT_SIZE:
		r = parse_size(arg, ret) < 0 || *ret < (uint64_t)o->min ? -1 : 0;
		break;
	case OPT_DURATION:
		r = parse_duration(arg, ret) < 0 || *ret < (uint64_t)o->min ? -1 : 0;
		break;
	case OPT_CHOICE: {
		_cleanup_strv_ struct strv c = STRV_INIT;

		strv_split(&c, o->choices, '|');
		r = strv_contains(&c, arg) ? 0 : -1;
		break;
	}
	case OPT_CPULIST: {
		uint8_t bits[CPULIST_BITS / 8];
		size_t max;

		r = parse_cpulist(arg, bits, CPULIST_BITS, &max);
		break;
	}
	default:
		break;
	}
	return r < 0 ? bad_value(p, o, arg) : 0;
}

static int add_to_list(const struct parser *p, const struct lab_option *o, const char *arg, struct strv *l)
{
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;

	if (o->max && l->n >= (size_t)o->max) {
		if (p->who)
			cmd_error(p->ctx, "%s: at most %ld %s", p->who, o->max, opt_name(o, &name));
		else
			cmd_error(p->ctx, "at most %ld %s", o->max, opt_name(o, &name));
		return -1;
	}
	strv_push(l, arg);
	return 0;
}

static int apply(struct parser *p, const struct lab_option *o, const char *arg)
{
	char *field = (char *)p->values + o->offset;
	uint64_t v = 0;

	if (o->subs && p->sub && !word_in(p->sub, o->subs)) {
		_cleanup_strbuf_ struct strbuf name = STRBUF_INIT, with = STRBUF_INIT;

		subs_words(p->noun, o->subs, &with);
		cmd_error(p->ctx, "%s: %s goes with %s", p->who, opt_name(o, &name), with.buf);
		return -1;
	}
	if (o == &implicit_options[1]) {
		p->help = true;
		return 0;
	}
	if (arg && check_value(p, o, arg, &v) < 0)
		return -1;
	switch (o->type) {
	case OPT_JSON:
		p->ctx->json = true;
		break;
	case OPT_FLAG:
		*(bool *)field = true;
		break;
	case OPT_STRING:
	case OPT_CHOICE:
	case OPT_CPULIST:
		*(const char **)field = arg;
		break;
	case OPT_UINT:
		*(unsigned *)field = (unsigned)v;
		break;
	case OPT_SIZE:
	case OPT_DURATION:
		*(uint64_t *)field = v;
		break;
	case OPT_LIST:
		return add_to_list(p, o, arg, (struct strv *)field);
	case OPT_CSV:
		strv_split((struct strv *)field, arg, ',');
		break;
	case OPT_COUNT:
		(*(int *)field)++;
		break;
	case OPT_SET_INT:
		*(int *)field = (int)o->min;
		break;
	default:
		break;
	}
	return 0;
}

static const struct lab_option *find_short(const struct parser *p, char c)
{
	for (size_t t = 0; t < ELEMENTSOF(p->tables); t++)
		for (const struct lab_option *o = p->tables[t]; o && o->type != OPT_END; o++)
			if (o->short_name == c)
				return o;
	return NULL;
}

/* An exact long name, else the one long name `name` is a prefix of; NULL after a reported error. */
static const struct lab_option *find_long(const struct parser *p, const char *arg, size_t len)
{
	const struct lab_option *hit = NULL;
	_cleanup_strbuf_ struct strbuf all = STRBUF_INIT;
	_cleanup_free_ char *name = xstrndup(arg, len);
	size_t nhits = 0;

	for (size_t t = 0; t < ELEMENTSOF(p->tables); t++)
		for (const struct lab_option *o = p->tables[t]; o && o->type != OPT_END; o++) {
			if (!o->long_name || strncmp(o->long_name, arg, len))
				continue;
			if (strlen(o->long_name) == len)
				return o;
			hit = o;
			nhits++;
			strbuf_addf(&all, "%s--%s", all.len ? ", " : "", o->long_name);
		}
	if (nhits == 1)
		return hit;
	if (nhits > 1) {
		_cleanup_free_ char *opt = xasprintf("--%s", name);

		perror_opt(p, "option '%s' is ambiguous (%s)", opt, all.buf);
	} else {
		const char *names[128];
		size_t n = 0;
		const char *near;
		_cleanup_free_ char *opt = xasprintf("--%s", name), *hint = NULL;

		for (size_t t = 0; t < ELEMENTSOF(p->tables); t++)
			for (const struct lab_option *o = p->tables[t]; o && o->type != OPT_END && n < 128; o++)
				if (o->long_name)
					names[n++] = o->long_name;
		near = str_suggest(name, names, n);
		if (near) {
			hint = xasprintf("--%s", near);
			perror_opt(p, "unknown option '%s' (did you mean '%s'?)", opt, hint);
		} else {
			perror_opt(p, "unknown option '%s'%s", opt, "");
		}
	}
	return NULL;
}

static int parse_long(struct parser *p, int argc, char **argv, int *i)
{
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	const struct lab_option *o = find_long(p, arg, eq ? (size_t)(eq - arg) : strlen(arg));
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;

	if (!o)
		return -1;
	if (!takes_arg(o)) {
		if (eq) {
			perror_opt(p, "option '%s' takes no argument%s", opt_name(o, &name), "");
			return -1;
		}
		return apply(p, o, NULL);
	}
	if (eq)
		return apply(p, o, eq + 1);
	if (*i + 1 >= argc) {
		perror_opt(p, "option '%s' needs an argument (%s)", opt_name(o, &name), o->arg_name);
		return -1;
	}
	return apply(p, o, argv[++*i]);
}

static int parse_short(struct parser *p, int argc, char **argv, int *i)
{
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;

	for (const char *c = argv[*i] + 1; *c; c++) {
		const struct lab_option *o = find_short(p, *c);

		if (!o) {
			_cleanup_free_ char *opt = xasprintf("-%c", *c);

			perror_opt(p, "unknown option '%s'%s", opt, "");
			return -1;
		}
		if (!takes_arg(o)) {
			if (apply(p, o, NULL) < 0)
				return -1;
			continue;
		}
		if (c[1])
			return apply(p, o, c + 1);
		if (*i + 1 >= argc) {
			strbuf_addf(&name, "-%c", *c);
			perror_opt(p, "option '%s' needs an argument (%s)", name.buf, o->arg_name);
			return -1;
		}
		return apply(p, o, argv[++*i]);
	}
	return 0;
}

static int parse(struct parser *p, unsigned flags, int argc, char **argv)
{
	_cleanup_free_ char **operands = xcalloc((size_t)argc + 1, sizeof(char *));
	size_t nops = 0;
	int i;

	/* a --json anywhere makes even an error before it JSON */
	for (i = 1; i < argc && !streq(argv[i], "--"); i++) {
		if ((flags & OPTS_FIRST) && (argv[i][0] != '-' || !argv[i][1]))
			break;
		if (streq(argv[i], "--json"))
			p->ctx->json = true;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (streq(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (flags & OPTS_FIRST)
				break;
			operands[nops++] = argv[i];
			continue;
		}
		if ((a[1] == '-' ? parse_long(p, argc, argv, &i) : parse_short(p, argc, argv, &i)) < 0)
			return -1;
	}
	for (; i < argc; i++)
		operands[nops++] = argv[i];
	memcpy(argv + argc - nops, operands, nops * sizeof(char *));
	return argc - (int)nops;
}

int options_parse(struct lab_ctx *ctx, const char *who, const struct lab_option *opts, const char *sub,
		  unsigned flags, int argc, char **argv, void *values)
{
	struct parser p = { .ctx = ctx, .who = who, .noun = who, .sub = sub, .tables = { opts, NULL }, .values = values };

	return parse(&p, flags, argc, argv);
}

int cmd_options_parse(struct lab_ctx *ctx, const char *noun, const char *sub, unsigned flags, int argc, char **argv,
		      void *values)
{
	const struct cli_command *cmd = command_find(noun);
	_cleanup_free_ char *who = sub ? xasprintf("%s %s", noun, sub) : xstrdup(noun);
	struct parser p = { .ctx = ctx, .who = who, .noun = noun, .sub = sub,
			    .tables = { cmd->options, implicit_options }, .values = values };
	int r = parse(&p, flags, argc, argv);

	if (r < 0)
		return -1;
	if (p.help) {
		command_usage(cmd, stdout);
		return -2;
	}
	return r;
}

int cmd_options_exit(int r)
{
	return r == -2 ? EXIT_OK : EXIT_USAGE;
}

int cmd_parse_options(struct lab_ctx *ctx, const struct cli_command *cmd, int argc, char **argv)
{
	int npos, i = cmd_options_parse(ctx, cmd->name, NULL, OPTS_ANYWHERE, argc, argv, NULL);

	if (i < 0)
		return i;
	npos = argc - i;
	if (npos < cmd->min_args || (cmd->max_args >= 0 && npos > cmd->max_args)) {
		cmd_error(ctx, "%s: wrong number of arguments (usage: lab %s %s)", cmd->name, cmd->name, cmd->args);
		return -1;
	}
	return i;
}

static void help_line(const struct lab_option *o, const char *noun, struct strbuf *out)
{
	size_t start = out->len;

	if (o->short_name)
		strbuf_addf(out, "  -%c%s", o->short_name, o->long_name ? ", " : "");
	else
		strbuf_addstr(out, "      ");
	if (o->long_name)
		strbuf_addf(out, "--%s", o->long_name);
	if (o->arg_name)
		strbuf_addf(out, " %s", o->arg_name);
	if (out->len - start <= HELP_COLUMN - 2)
		strbuf_addf(out, "%*s", (int)(HELP_COLUMN - (out->len - start)), "");
	else
		strbuf_addf(out, "\n%*s", HELP_COLUMN, "");
	strbuf_addstr(out, o->help);
	if (o->subs && noun) {
		strbuf_addstr(out, " (");
		subs_words(noun, o->subs, out);
		strbuf_addstr(out, ")");
	}
	strbuf_addch(out, '\n');
}

static void format_help(const struct lab_option *opts, const char *noun, bool global, struct strbuf *out)
{
	for (const struct lab_option *o = opts; o && o->type != OPT_END; o++)
		help_line(o, noun, out);
	for (const struct lab_option *o = implicit_options; !global && o->type != OPT_END; o++)
		help_line(o, noun, out);
}

void options_format_help(const struct cli_command *cmd, struct strbuf *out)
{
	if (cmd)
		format_help(cmd->options, cmd->name, false, out);
	else
		format_help(global_options, NULL, true, out);
}

/* key: the words of `words` split at sep, as an array; null without words */
static void json_words(struct json *j, const char *key, const char *words, char sep)
{
	_cleanup_strv_ struct strv c = STRV_INIT;

	json_key(j, key);
	if (!words) {
		json_null(j);
		return;
	}
	strv_split(&c, words, sep);
	json_array_begin(j);
	for (size_t i = 0; i < c.n; i++)
		json_string(j, c.v[i]);
	json_array_end(j);
}

static void json_option(struct json *j, const struct lab_option *o)
{
	json_object_begin(j);
	json_kv_string(j, "long", o->long_name);
	json_key(j, "short");
	if (o->short_name) {
		char s[2] = { o->short_name, '\0' };

		json_string(j, s);
	} else {
		json_null(j);
	}
	json_kv_string(j, "argument", o->arg_name);
	json_words(j, "choices", o->choices, '|');
	json_words(j, "subcommands", o->subs, ' ');
	json_kv_string(j, "help", o->help);
	json_object_end(j);
}

static void json_command(struct json *j, const struct cli_command *cmd)
{
	json_object_begin(j);
	json_kv_string(j, "command", cmd ? cmd->name : NULL);
	json_key(j, "subcommands");
	json_array_begin(j);
	for (const char *const *s = cmd ? cmd->subs : NULL; s && *s; s++)
		json_string(j, *s);
	json_array_end(j);
	json_key(j, "options");
	json_array_begin(j);
	for (const struct lab_option *o = cmd ? cmd->options : global_options; o && o->type != OPT_END; o++)
		json_option(j, o);
	for (const struct lab_option *o = implicit_options; cmd && o->type != OPT_END; o++)
		json_option(j, o);
	json_array_end(j);
	json_object_end(j);
}

void options_format_all(bool json, struct strbuf *out)
{
	if (json) {
		struct json j;

		json_init(&j, out, true);
		json_array_begin(&j);
		json_command(&j, NULL);
		for (size_t i = 0; i < ncommands; i++)
			json_command(&j, &commands[i]);
		json_array_end(&j);
		json_finish(&j);
		return;
	}
	strbuf_addstr(out, "lab [global options]\n");
	format_help(global_options, NULL, true, out);
	for (size_t i = 0; i < ncommands; i++) {
		strbuf_addf(out, "\nlab %s", commands[i].name);
		for (const char *const *s = commands[i].subs; s && *s; s++)
			strbuf_addf(out, "%s%s", s == commands[i].subs ? " " : "|", *s);
		strbuf_addch(out, '\n');
		format_help(commands[i].options, commands[i].name, false, out);
	}
}

void command_usage(const struct cli_command *cmd, FILE *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "usage: lab [global options] %s%s%s\n\n%s\n\nOptions:\n", cmd->name, *cmd->args ? " " : "",
		    cmd->args, cmd->summary);
	options_format_help(cmd, &sb);
	fwrite(sb.buf, 1, sb.len, out);
}

int cmd_dispatch(struct lab_ctx *ctx, const char *noun, const struct subcommand *subs, size_t n, int argc,
		 char **argv)
{
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;

	if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h")) {
		command_usage(command_find(noun), argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	for (size_t i = 0; i < n; i++) {
		if (streq(argv[1], subs[i].name))
			return subs[i].fn(ctx, argc - 1, argv + 1);
		strbuf_addf(&names, "%s%s", i ? ", " : "", subs[i].name);
	}
	cmd_error(ctx, "%s: no subcommand '%s' (%s)", noun, argv[1], names.buf);
	return EXIT_USAGE;
}
