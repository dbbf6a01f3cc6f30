/* SPDX-License-Identifier: MIT */
/*
 * Typed node reads shared by lab.yaml, workload declarations and recipes.
 */
#include <errno.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/units.h"
#include "getters.h"
#include "../util/banned.h"

bool node_want(struct diags *d, const struct node *n, enum node_kind k, const char *what)
{
	if (n->kind == k)
		return true;
	node_err(d, n, "%s must be %s, not %s", what, node_kind_name(k), node_kind_name(n->kind));
	return false;
}

char *node_get_string(struct diags *d, const struct node *n, const char *what)
{
	if (!node_want(d, n, NODE_SCALAR, what))
		return NULL;
	if (node_is_null(n)) {
		node_err(d, n, "%s must not be empty", what);
		return NULL;
	}
	return xstrdup(n->scalar);
}

int node_get_uint(struct diags *d, const struct node *n, const char *what, uint64_t min, uint64_t max,
		  unsigned *ret)
{
	uint64_t v;

	if (!node_want(d, n, NODE_SCALAR, what))
		return -EINVAL;
	if (parse_uint(n->scalar, max, &v) < 0 || v < min) {
		node_err(d, n, "%s must be a whole number from %llu to %llu, not '%s'", what,
		 (unsigned long long)min, (unsigned long long)max, n->scalar);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

int node_get_size(struct diags *d, const struct node *n, const char *what, uint64_t *ret)
{
	if (!node_want(d, n, NODE_SCALAR, what))
		return -EINVAL;
	if (parse_size(n->scalar, ret) < 0 || *ret == 0) {
		node_err(d, n, "%s must be a size such as 512M or 4G, not '%s'", what, n->scalar);
		return -EINVAL;
	}
	return 0;
}

int node_get_duration(struct diags *d, const struct node *n, const char *what, uint64_t *ret)
{
	if (!node_want(d, n, NODE_SCALAR, what))
		return -EINVAL;
	if (parse_duration(n->scalar, ret) < 0) {
		node_err(d, n, "%s must be a duration such as 30s, 5m or 1h30m, not '%s'", what, n->scalar);
		return -EINVAL;
	}
	return 0;
}

int node_get_bool(struct diags *d, const struct node *n, const char *what, bool *ret)
{
	static const char *const yes[] = { "true", "yes", "on", "True", "Yes", "On", "TRUE", "YES", "ON" };
	static const char *const no[] = { "false", "no", "off", "False", "No", "Off", "FALSE", "NO", "OFF" };

	if (!node_want(d, n, NODE_SCALAR, what))
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (streq(n->scalar, yes[i])) {
			*ret = true;
			return 0;
		}
		if (streq(n->scalar, no[i])) {
			*ret = false;
			return 0;
		}
	}
	node_err(d, n, "%s must be true or false, not '%s'", what, n->scalar);
	return -EINVAL;
}

void node_get_strv(struct diags *d, const struct node *n, const char *what, bool dups, struct strv *ret)
{
	const struct node *const *items = &n;
	size_t count = 1;

	if (n->kind == NODE_SEQ) {
		items = (const struct node *const *)n->items;
		count = n->n;
	} else if (n->kind != NODE_SCALAR) {
		node_err(d, n, "%s must be a value or a list of values, not %s", what, node_kind_name(n->kind));
		return;
	}
	for (size_t i = 0; i < count; i++) {
		_cleanup_free_ char *v = node_get_string(d, items[i], what);

		if (!v)
			continue;
		if (!*v) {
			node_err(d, items[i], "%s must not be empty", what);
			continue;
		}
		if (!dups && strv_contains(ret, v)) {
			node_err(d, items[i], "'%s' is listed twice in %s", v, what);
			continue;
		}
		strv_push(ret, v);
	}
}
