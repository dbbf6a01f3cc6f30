/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "alloc.h"
#include "path.h"
#include "strv.h"
#include "banned.h"

char *path_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

char *path_basename(const char *path)
{
	size_t n = strlen(path);
	const char *slash;

	while (n > 1 && path[n - 1] == '/')
		n--;
	slash = memrchr(path, '/', n);
	return slash ? xstrndup(slash + 1, n - (size_t)(slash + 1 - path)) : xstrndup(path, n);
}

char *path_join(const char *dir, const char *rel)
{
	if (rel[0] == '/')
		return xstrdup(rel);
	if (!dir || !*dir || streq(dir, "."))
		return xstrdup(rel);
	return xasprintf("%s/%s", dir, rel);
}

char *path_join_user(const char *dir, const char *rel)
{
	const char *home;

	if (rel[0] == '~' && rel[1] == '/' && (home = getenv("HOME")) && *home)
		return xasprintf("%s%s", home, rel + 1);
	return path_join(dir, rel);
}

bool path_is_safe_relative(const char *rel)
{
	size_t depth = 0;

	if (!*rel || rel[0] == '/' || rel[strlen(rel) - 1] == '/' || strlen(rel) > PATH_SAFE_MAX)
		return false;
	for (const char *c = rel; *c;) {
		const char *e = strchrnul(c, '/');
		size_t len = (size_t)(e - c);

		if (len == 0 || len > 255 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.') ||
		    c[0] == '~' || ++depth > PATH_SAFE_DEPTH)
			return false;
		for (const char *k = c; k < e; k++)
			if ((unsigned char)*k < 0x20 || *k == 0x7f || *k == '\\')
				return false;
		c = *e ? e + 1 : e;
	}
	return true;
}

bool path_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int path_mkdir_p(const char *path, unsigned mode)
{
	_cleanup_free_ char *p = xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return path_is_dir(p) ? 0 : -ENOTDIR;
}

bool path_is_cgroup(const char *p)
{
	_cleanup_free_ char *copy = xstrdup(p);
	char *save = NULL;

	if (!*p || *p == '/' || str_endswith(p, "/") || strstr(p, "//"))
		return false;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (!str_is_name(c) || streq(c, ".") || streq(c, "..") || str_startswith(c, "cgroup."))
			return false;
	return true;
}
