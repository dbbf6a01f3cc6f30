/* SPDX-License-Identifier: MIT */
/* How far a lab run is: the durations its progress line says (engine.h). */
#include "engine.h"
#include "util/units.h"
#include "util/banned.h"

static void add_secs(struct strbuf *sb, double s)
{
	_cleanup_free_ char *t = format_elapsed(s);

	strbuf_addstr(sb, t);
}

void engine_format_time(const struct engine_progress *p, double elapsed, double now, struct strbuf *sb)
{
	double per, left;

	add_secs(sb, elapsed);
	if (!p->done || p->done >= p->total)
		return;
	per = elapsed / (double)p->done;
	left = per * (double)(p->total - p->done);
	if (p->to_look > 0) {
		strbuf_addstr(sb, ", next look in ");
		add_secs(sb, per * (double)p->to_look);
	}
	if (p->budget_end > 0 && p->budget_end - now < left)
		left = p->budget_end > now ? p->budget_end - now : 0;
	strbuf_addstr(sb, p->to_look >= 0 || p->budget_end > 0 ? ", budget ends in " : ", ETA ");
	add_secs(sb, left);
}
