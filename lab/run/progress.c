/* SPDX-License-Identifier: MIT */
/* How far a lab run is: the durations its progress line says (engine.h). */
#include "engine.h"
#include "util/banned.h"

void engine_format_secs(struct strbuf *sb, double s)
{
	if (s < 60)
		strbuf_addf(sb, "%.0fs", s);
	else if (s < 3600)
		strbuf_addf(sb, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		strbuf_addf(sb, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

void engine_format_eta(const struct engine_progress *p, double elapsed, double now, struct strbuf *sb)
{
	double per, left;

	if (!p->done || p->done >= p->total)
		return;
	per = elapsed / (double)p->done;
	left = per * (double)(p->total - p->done);
	if (p->to_look > 0) {
		strbuf_addstr(sb, ", next look in ");
		engine_format_secs(sb, per * (double)p->to_look);
	}
	if (p->budget_end > 0 && p->budget_end - now < left)
		left = p->budget_end > now ? p->budget_end - now : 0;
	strbuf_addstr(sb, p->to_look >= 0 || p->budget_end > 0 ? ", budget ends in " : ", ETA ");
	engine_format_secs(sb, left);
}
