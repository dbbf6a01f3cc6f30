/* SPDX-License-Identifier: MIT */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <string.h>
#include "../util/alloc.h"
#include "catalogue-tar.h"
#include "../util/banned.h"

/* The entry's data from the disk into the archive. */
static int copy_data(struct archive *disk, struct archive *out)
{
	char buf[1 << 16];
	la_ssize_t n;

	while ((n = archive_read_data(disk, buf, sizeof(buf))) > 0)
		if (archive_write_data(out, buf, (size_t)n) < 0)
			return -EIO;
	return n < 0 ? -EIO : 0;
}

/* One entry of the walk: 1 added, 0 left out, or a negative errno. */
static int add_entry(struct archive *disk, struct archive *out, struct archive_entry *e, size_t prefix)
{
	const char *path = archive_entry_pathname(e), *base = strrchr(path, '/');
	_cleanup_free_ char *rel = NULL;

	if (streq(base ? base + 1 : path, "__pycache__"))
		return 0; /* nor what is under it: the walk does not descend */
	if (archive_read_disk_can_descend(disk))
		archive_read_disk_descend(disk);
	rel = xasprintf(".%s", path + prefix);
	archive_entry_set_pathname(e, rel);
	if (archive_write_header(out, e) != ARCHIVE_OK)
		return -EIO;
	if (archive_entry_filetype(e) == AE_IFREG && archive_entry_size(e) > 0)
		return copy_data(disk, out) < 0 ? -EIO : 1;
	return 1;
}

static int walk(struct archive *disk, struct archive *out, size_t prefix, struct diags *d)
{
	for (;;) {
		struct archive_entry *e = archive_entry_new();
		int r = archive_read_next_header2(disk, e);

		if (r == ARCHIVE_EOF) {
			archive_entry_free(e);
			return 0;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			diags_add(d, NULL, "cannot read the catalogue: %s", archive_error_string(disk));
			archive_entry_free(e);
			return -EIO;
		}
		r = add_entry(disk, out, e, prefix);
		archive_entry_free(e);
		if (r < 0) {
			diags_add(d, NULL, "cannot archive the catalogue: %s",
				  archive_error_string(out) ? archive_error_string(out) : archive_error_string(disk));
			return r;
		}
	}
}

int catalogue_archive(const char *from, const char *to, struct diags *d)
{
	struct archive *disk = archive_read_disk_new(), *out = archive_write_new();
	_cleanup_free_ char *root = xstrdup(from);
	size_t len = strlen(root);
	int r = -EIO;

	while (len > 1 && root[len - 1] == '/')
		root[--len] = '\0';
	/* --dereference: links are followed, their targets archived */
	archive_read_disk_set_symlink_logical(disk);
	archive_read_disk_set_standard_lookup(disk);
	archive_write_set_format_gnutar(out);
	archive_write_add_filter_none(out);
	if (archive_write_open_filename(out, to) != ARCHIVE_OK)
		diags_add(d, NULL, "cannot write %s: %s", to, archive_error_string(out));
	else if (archive_read_disk_open(disk, root) != ARCHIVE_OK)
		diags_add(d, NULL, "cannot read the catalogue %s: %s", root, archive_error_string(disk));
	else if ((r = walk(disk, out, len, d)) == 0 && archive_write_close(out) != ARCHIVE_OK) {
		diags_add(d, NULL, "cannot write %s: %s", to, archive_error_string(out));
		r = -EIO;
	}
	archive_read_free(disk);
	archive_write_free(out);
	return r;
}
