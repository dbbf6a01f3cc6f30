/* SPDX-License-Identifier: MIT */
/*
 * A snapshot's lab.yaml confined to the files its snapshot lists
 * (spec.h: struct spec_confine). By their names alone: nothing here
 * opens, stats or follows a link.
 */
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "getters.h"
#include "spec.h"
#include "../util/banned.h"

void spec_confine_init(struct spec_confine *cf, const char *root, const char *const *files, size_t n)
{
	size_t len = strlen(root);

	*cf = (struct spec_confine){ .root = xstrdup(root) };
	while (len > 1 && cf->root[len - 1] == '/')
		cf->root[--len] = '\0';
	for (size_t i = 0; i < n; i++)
		strv_push(&cf->names, files[i]);
	/* the keys are borrowed: every string is in place before the maps take it */
	for (size_t i = 0; i < cf->names.n; i++) {
		const char *name = cf->names.v[i];

		strmap_put(&cf->files, name, i);
		for (const char *s = strchr(name, '/'); s; s = strchr(s + 1, '/')) {
			char *dir = xstrndup(name, (size_t)(s - name));
			size_t one;

			if (strmap_get(&cf->dirs, dir, &one)) {
				free(dir);
				continue;
			}
			strv_push_take(&cf->folders, dir);
			strmap_put(&cf->dirs, cf->folders.v[cf->folders.n - 1], 0);
		}
	}
}

void spec_confine_release(struct spec_confine *cf)
{
	strmap_release(&cf->files);
	strmap_release(&cf->dirs);
	strv_release(&cf->names);
	strv_release(&cf->folders);
	free(cf->root);
	memset(cf, 0, sizeof(*cf));
}

/* `path` relative to root, lexically, a folder's trailing '/' gone; NULL when it is not a plain path below it. */
static char *rel_below(const char *root, const char *path, bool folder)
{
	const char *rel = NULL;
	size_t n = strlen(root);
	char *ret;

	if (!*root || streq(root, ".")) {
		if (path[0] != '/')
			rel = path;
	} else if (strneq(path, root, n) && path[n] == '/') {
		rel = path + n + 1;
	}
	if (!rel)
		return NULL;
	while (strneq(rel, "./", 2))
		rel += 2;
	ret = xstrdup(rel);
	for (n = strlen(ret); folder && n > 1 && ret[n - 1] == '/'; n--)
		ret[n - 1] = '\0';
	if (!path_is_safe_relative(ret)) {
		free(ret);
		return NULL;
	}
	return ret;
}

const char *spec_confine_refuses(const struct spec_confine *cf, const char *path, bool folder)
{
	_cleanup_free_ char *rel = rel_below(cf->root, path, folder);
	size_t one;

	if (!rel)
		return "not a path inside the run's snapshot";
	if (folder ? strmap_get(&cf->dirs, rel, &one) : strmap_get(&cf->files, rel, &one))
		return NULL;
	return folder ? "not a folder of the run's snapshot" : "not a file of the run's snapshot";
}

void spec_confine_refused(struct diags *d, const struct node *n, const char *what, const char *why)
{
	node_err(d, n, "refused: %s '%s' is %s (a snapshot's lab.yaml and recipes name only the files it lists)",
		 what, n->scalar, why);
}
