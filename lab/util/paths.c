/* SPDX-License-Identifier: MIT */
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>
#include "alloc.h"
#include "path.h"
#include "paths.h"
#include "banned.h"

const char *paths_home(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home && home[0] == '/')
		return home;
	pw = getpwuid(geteuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* An absolute value of the variable, else NULL. */
static const char *env_abs(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] == '/' ? v : NULL;
}

/* The LAB_ variable, else $XDG_.../lab, else ~/fallback ("/nonexistent/..." without a home: never /tmp). */
static char *user_dir(const char *lab_var, const char *xdg_var, const char *fallback)
{
	const char *v = env_abs(lab_var), *home;

	if (v)
		return xstrdup(v);
	if ((v = env_abs(xdg_var)))
		return xasprintf("%s/lab", v);
	home = paths_home();
	return xasprintf("%s/%s", home ? home : "/nonexistent", fallback);
}

bool paths_have_home(void)
{
	return paths_home() || ((env_abs("LAB_CACHE_DIR") || env_abs("XDG_CACHE_HOME")) &&
				(env_abs("LAB_STATE_DIR") || env_abs("XDG_STATE_HOME")));
}

char *paths_cache(const char *setting)
{
	if (!env_abs("LAB_CACHE_DIR") && setting)
		return xstrdup(setting);
	return user_dir("LAB_CACHE_DIR", "XDG_CACHE_HOME", ".cache/lab");
}

char *paths_state(void)
{
	return user_dir("LAB_STATE_DIR", "XDG_STATE_HOME", ".local/state/lab");
}

char *paths_results(const char *setting, const char *spec_dir)
{
	const char *v = env_abs("LAB_RESULTS_DIR");

	if (v)
		return xstrdup(v);
	if (setting)
		return xstrdup(setting);
	return spec_dir ? path_join(spec_dir, "results") : xstrdup("results");
}

char *paths_ssh_key(const char *cache)
{
	return xasprintf("%s/ssh/id_ed25519", cache);
}

char *paths_vm(const char *state, const char *name)
{
	return xasprintf("%s/vms/%s", state, name);
}

char *paths_host(const char *state, const char *name)
{
	return xasprintf("%s/hosts/%s", state, name);
}
