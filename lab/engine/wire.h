/* SPDX-License-Identifier: MIT */
/*
 * What a worker and lab tell each other about one experiment's runs: one
 * JSON object a line, written with lab's JSON writer and read with its JSON
 * reader, so any string (an error quoting a guest's stderr: tabs, newlines,
 * quotes, bytes that are not UTF-8) crosses intact (those bytes as U+FFFD).
 *
 *   worker -> lab  {"type":"step","run":ID,"what":TEXT}
 *                  {"type":"boot","guest":NAME,"variant":V}   a boot begins
 *                  {"type":"done","run":ID,"status":"ok"|"failed",
 *                   "release":R|null,"error":E|null,"guest":NAME|null}
 *                  {"type":"next"}                            which run now?
 *   lab -> worker  {"type":"run","run":ID}                    a planned run
 *                  {"type":"run","run":ID,"like":ID2,"repeat":N}
 *                                                             a new run repeating ID2
 *                  {"type":"stop"}                            the group is done
 *
 * Pure: formats and parses, never prints.
 */
#pragma once

#include <stdbool.h>
#include "../util/strbuf.h"

enum wire_type { WIRE_STEP, WIRE_BOOT, WIRE_DONE, WIRE_NEXT, WIRE_RUN, WIRE_STOP };

struct wire_msg {
	enum wire_type type;
	char *run;      /* step, done, run */
	char *what;     /* step */
	char *guest;    /* boot, done (NULL: none) */
	char *variant;  /* boot */
	bool ok;        /* done */
	char *release;  /* done; NULL when unknown */
	char *error;    /* done; NULL when none */
	char *like;     /* run: the run a new one repeats; NULL for a planned run */
	unsigned repeat; /* run with like */
};

/* The message as one line of compact JSON (no newline). */
void wire_format(const struct wire_msg *m, struct strbuf *out);
/* A line back into *ret (its strings allocated; wire_msg_release frees
 * them). -EINVAL with *ret_err (free it) for a line that is not one. */
int wire_parse(const char *line, struct wire_msg *ret, char **ret_err);
void wire_msg_release(struct wire_msg *m);
