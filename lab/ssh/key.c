/* SPDX-License-Identifier: MIT */
/*
 * lab's ssh keys: its own client key in the cache (made once, private to
 * the user, refused when another user could read or swap it), and new
 * ed25519 keys for what lab makes (a guest's host key).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../util/strbuf.h"
#include "key.h"
#include "../util/banned.h"

int ssh_keygen(const char *path, const char *comment, struct diags *d)
{
	_cleanup_command_ struct command c = { 0 };

	command_init(&c, "ssh-keygen");
	command_args(&c, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path, NULL);
	return command_run_logged(&c, NULL, d, NULL, "ssh-keygen");
}

int ssh_read_line(const char *path, char **ret, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, path, 64 << 10);

	if (r < 0) {
		diags_add(d, NULL, "cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	while (sb.len && (sb.buf[sb.len - 1] == '\n' || sb.buf[sb.len - 1] == '\r'))
		strbuf_setlen(&sb, sb.len - 1);
	*ret = strbuf_detach(&sb, NULL);
	return 0;
}

int ssh_lab_key(const char *cache, char **ret_private, char **ret_public_line, struct diags *d)
{
	_cleanup_free_ char *key = dirs_ssh_key(cache), *dir = path_dirname(key);
	_cleanup_free_ char *pub = xasprintf("%s.pub", key);
	int r;

	if ((r = path_mkdir_p(dir, 0700)) < 0) {
		diags_add(d, NULL, "cannot create '%s': %s", dir, strerror(-r));
		return r;
	}
	/* a key another user could read or swap is no key of ours */
	if ((r = fs_check_private(cache, FS_NOT_SHARED, d)) < 0 || (r = fs_check_private(dir, FS_PRIVATE, d)) < 0)
		return r;
	if (!path_is_file(key) || !path_is_file(pub)) {
		unlink(key);
		unlink(pub);
		if ((r = ssh_keygen(key, "lab", d)) < 0)
			return r;
	}
	if ((r = fs_check_private(key, FS_PRIVATE_FILE, d)) < 0)
		return r;
	if (ret_public_line && (r = ssh_read_line(pub, ret_public_line, d)) < 0)
		return r;
	if (ret_private)
		*ret_private = TAKE_PTR(key);
	return 0;
}
