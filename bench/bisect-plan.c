/* SPDX-License-Identifier: MIT */
/*
 * What a bisect's planning costs (bench/bisect-plan runs it): for a range
 * of n commits, a line and a graph where every third commit merges a side
 * branch of two, the steps the alpha is split over (1 + the steps the
 * range needs at worst) and the time to work them out, and the time of a
 * status (the next step) once the ends are judged. lab works these out
 * each time it says where a bisect stands; the goal is well under a second
 * at the 999 commits a bisect takes at most. Figures only.
 *
 * Usage: bisect-plan [N...]   (default 51 201 501 999; the graph takes N down to a multiple of 3)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine/bisect.h"
#include "util/alloc.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A commit bisect of n commits; merges: every third commit merges a side
 * branch of two commits that starts where the line was six commits before
 * (n a multiple of 3, so that the bad end, a merge, has every commit among
 * its ancestors, as in a range git lists). */
static void make(struct bisect *b, unsigned n, bool merges)
{
	memset(b, 0, sizeof(*b));
	b->experiment = xstrdup("e");
	b->series = xstrdup("k");
	b->metric = xstrdup("m");
	b->threshold = 5;
	b->alpha = 0.05;
	b->max_boots = 4;
	b->npatches = n;
	b->good = 0;
	b->bad = n;
	b->commits = xcalloc(n + 1, sizeof(*b->commits));
	for (unsigned k = 0; k <= n; k++) {
		struct bisect_commit *c = &b->commits[k];

		c->id = xasprintf("%040x", k);
		c->author = xstrdup("a");
		c->parents = xcalloc(2, sizeof(unsigned));
		if (!k)
			continue;
		if (merges && k % 3 == 0 && k >= 3) {
			/* k - 1 and k - 2 are the side branch: k - 2's parent goes back further */
			c->parents[c->nparents++] = k >= 6 ? k - 3 : 0;
			c->parents[c->nparents++] = k - 1;
		} else if (merges && k % 3 == 1 && k >= 4) {
			c->parents[c->nparents++] = k >= 6 ? k - 6 + 1 : 0;
		} else {
			c->parents[c->nparents++] = k - 1;
		}
		strv_push(&b->subjects, "s");
	}
	b->from = bisect_kernel_name(b, 0);
}

int main(int argc, char **argv)
{
	static const unsigned def[] = { 51, 201, 501, 999 };
	size_t nsizes = argc > 1 ? (size_t)argc - 1 : sizeof(def) / sizeof(def[0]);

	printf("%6s %-6s %8s %14s %14s %6s\n", "commits", "shape", "planned", "planning s", "a status s", "next");
	for (size_t i = 0; i < nsizes; i++) {
		unsigned n = argc > 1 ? (unsigned)strtoul(argv[i + 1], NULL, 10) : def[i];

		if (n < 2 || n > BISECT_MAX_COMMITS) {
			fprintf(stderr, "bisect-plan: N must be 2 to %d\n", BISECT_MAX_COMMITS);
			return 2;
		}
		for (int merges = 0; merges < 2; merges++) {
			unsigned m = merges ? n - n % 3 : n;
			struct bisect b;
			struct cmp_delta d = { .have = true };
			struct cmp_verdict v = { .metric = "m", .variant = "x", .v = VERDICT_CHANGED, .d = &d,
						 .why = (char *)"because" };
			unsigned planned, lo, hi, next;
			char *why = NULL;
			double t0, t1, t2;

			if (m < 3)
				continue;
			make(&b, m, merges);
			t0 = now();
			planned = bisect_planned_steps(&b);
			t1 = now();
			d.e.change = 50;
			d.e.boots[0] = d.e.boots[1] = 2;
			bisect_judge(&b, bisect_step(&b, m), &v);
			t2 = now();
			bisect_status(&b, &lo, &hi, &next, &why);
			printf("%6u %-6s %8u %14.4f %14.4f %6u\n", m, merges ? "merges" : "line", planned, t1 - t0,
			       now() - t2, next);
			free(why);
			bisect_release(&b);
		}
	}
	return 0;
}
