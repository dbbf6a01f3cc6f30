/* SPDX-License-Identifier: MIT */
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>
#include "alloc.h"
#include "macro.h"
#include "path.h"
#include "dirs.h"
#include "banned.h"

const char *dirs_home(void)
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
	home = dirs_home();
	return xasprintf("%s/%s", home ? home : "/nonexistent", fallback);
}

bool dirs_have_home(void)
{
	return dirs_home() || ((env_abs("LAB_CACHE_DIR") || env_abs("XDG_CACHE_HOME")) &&
				(env_abs("LAB_STATE_DIR") || env_abs("XDG_STATE_HOME")));
}

char *dirs_cache(const char *setting)
{
	if (!env_abs("LAB_CACHE_DIR") && setting)
		return xstrdup(setting);
	return user_dir("LAB_CACHE_DIR", "XDG_CACHE_HOME", ".cache/lab");
}

char *dirs_state(void)
{
	return user_dir("LAB_STATE_DIR", "XDG_STATE_HOME", ".local/state/lab");
}

char *dirs_results(const char *setting, const char *spec_dir)
{
	const char *v = env_abs("LAB_RESULTS_DIR");

	if (v)
		return xstrdup(v);
	if (setting)
		return xstrdup(setting);
	return spec_dir ? path_join(spec_dir, "results") : xstrdup("results");
}

char *dirs_ssh_key(const char *cache)
{
	return xasprintf("%s/ssh/id_ed25519", cache);
}

char *dirs_vm(const char *state, const char *name)
{
	return xasprintf("%s/vms/%s", state, name);
}

char *dirs_host(const char *state, const char *name)
{
	return xasprintf("%s/hosts/%s", state, name);
}

char *dirs_datadir(void)
{
	const char *env = getenv("LAB_DATADIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return xstrdup(env);
	/* run from a checkout: the data sits beside the binary */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		_cleanup_free_ char *dir = NULL, *probe = NULL;

		exe[n] = '\0';
		dir = path_dirname(exe);
		/* installed: PREFIX/bin/lab beside PREFIX/share/lab */
		probe = path_join(dir, "../share/lab/lab.yaml");
		if (path_is_file(probe))
			return path_join(dir, "../share/lab");
		for (int up = 0; up < 4; up++) {
			free(probe);
			probe = path_join(dir, "workloads");
			if (path_is_dir(probe)) {
				free(probe);
				probe = path_join(dir, "lab.yaml");
				if (path_is_file(probe))
					return TAKE_PTR(dir);
			}
			char *parent = path_dirname(dir);

			free(dir);
			dir = parent;
		}
	}
	return xstrdup(LAB_DATADIR);
}


char *dirs_insn_plugin(void)
{
	const char *env = getenv("LAB_INSN_PLUGIN");
	_cleanup_free_ char *data = dirs_datadir();
	/* installed (make install), then a checkout's build */
	static const char *const where[] = { "lib/" DIRS_INSN_PLUGIN_NAME, "build/lib/" DIRS_INSN_PLUGIN_NAME };

	if (env && *env == '/')
		return xstrdup(env);
	for (size_t i = 0; i < ELEMENTSOF(where); i++) {
		_cleanup_free_ char *p = path_join(data, where[i]);

		if (path_is_file(p))
			return TAKE_PTR(p);
	}
	return NULL;
}


char *dirs_layer_dir(void)
{
	_cleanup_free_ char *data = dirs_datadir();

	return path_join(data, "images/layer");
}
