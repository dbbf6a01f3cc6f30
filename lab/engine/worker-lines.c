/* SPDX-License-Identifier: MIT */
/*
 * lab's side of a worker's lines (wire.h), for the local executor
 * (exec-local.c): a step of a run, a boot begun, a run ended, and the
 * answer to "next" (the policy's choice, engine_next). Apart from engine.c,
 * so that the executor, which the engine names by its ops table, calls
 * back into no file that names it.
 */
#include <string.h>
#include "../util/alloc.h"
#include "../util/strbuf.h"
#include "engine-priv.h"
#include "pool.h"
#include "wire.h"
#include "../util/banned.h"

/* The worker of `group` asks which run now. */
static void reply_next(struct engine *x, size_t group, unsigned slot)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct wire_msg m = { .type = WIRE_STOP };
	size_t i;

	if (engine_next(x, group, &i) == 0) {
		m.type = WIRE_RUN;
		m.run = x->rs->runs[i].id;
		for (size_t k = 0; k < x->nextra; k++)
			if (streq(x->extra[k].pr.id, m.run)) {
				m.like = x->rs->runs[x->extra[k].like].id;
				m.repeat = x->rs->runs[i].repeat;
			}
	}
	wire_format(&m, &sb);
	pool_reply(slot, sb.buf);
}

void engine_message(struct engine *x, size_t task, unsigned slot, const char *line)
{
	_cleanup_free_ char *err = NULL;
	struct wire_msg m = { 0 };
	ssize_t i;

	if (wire_parse(line, &m, &err) < 0)
		return;
	i = engine_find_run(x->rs, m.run);
	if (m.type == WIRE_STEP && i >= 0)
		engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_STEP, .run = &x->rs->runs[i], .what = m.what });
	else if (m.type == WIRE_BOOT)
		engine_boot_begin(x, m.guest, m.variant);
	else if (m.type == WIRE_DONE && i >= 0)
		engine_run_done(x, (size_t)i, &m);
	else if (m.type == WIRE_NEXT)
		reply_next(x, task, slot);
	wire_msg_release(&m);
}
