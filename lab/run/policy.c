/* SPDX-License-Identifier: MIT */
#include "policy.h"
#include "../util/banned.h"

/* The group's first pending run that no worker has had yet, or n. */
static size_t first_open(const struct engine_view *v, size_t group)
{
	const struct run_group *g = &v->groups[group];

	for (size_t j = 0; j < g->n; j++)
		if (!v->issued[g->runs[j]] && v->rs->runs[g->runs[j]].status == RUN_PENDING)
			return j;
	return g->n;
}

static bool fixed_group_done(void *data, const struct engine_view *v, size_t group)
{
	(void)data;
	return first_open(v, group) == v->groups[group].n;
}

static void fixed_next(void *data, const struct engine_view *v, size_t group, struct run_choice *ret)
{
	size_t j = first_open(v, group);

	(void)data;
	if (j == v->groups[group].n) {
		*ret = (struct run_choice){ .kind = CHOICE_DONE };
		return;
	}
	*ret = (struct run_choice){ .kind = CHOICE_RUN, .run = v->groups[group].runs[j] };
}

const struct run_policy_ops run_policy_fixed_ops = {
	.name = "fixed",
	.group_done = fixed_group_done,
	.next = fixed_next,
};
