/* SPDX-License-Identifier: MIT */
/*
 * What the engine tells its caller, the one way out of the engine: an
 * event (engine.h: struct engine_event) with the progress attached,
 * through the caller's callback. Below every other part of the engine,
 * so that each can say what happens without calling back up.
 */
#include <stdarg.h>
#include "../util/alloc.h"
#include "engine-priv.h"
#include "../util/banned.h"

void engine_emit(struct engine *x, const struct engine_event *ev)
{
	struct engine_event e = *ev;

	e.progress = &x->prog;
	if (x->o && x->o->event)
		x->o->event(x->o->userdata, &e);
}

void engine_emit_text(struct engine *x, enum engine_event_type type, const char *fmt, ...)
{
	_cleanup_free_ char *text = NULL;
	va_list ap;

	va_start(ap, fmt);
	text = xvasprintf(fmt, ap);
	va_end(ap);
	engine_emit(x, &(struct engine_event){ .type = type, .text = text });
}

void engine_emit_diags(struct engine *x, struct diags *d)
{
	engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_DIAGS, .diags = d });
}
