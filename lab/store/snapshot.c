/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../image/recipe.h"
#include "../kernel/source.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "snapshot.h"
#include "../util/banned.h"

#define OBJECTS SNAPSHOT_DIR "/objects"
#define MAX_TREE_DEPTH PATH_SAFE_DEPTH

static const char *const role_names[SNAP_ROLE_COUNT] = {
	[SNAP_SPEC] = "spec",
	[SNAP_INCLUDE] = "include",
	[SNAP_CONFIG] = "config",
	[SNAP_PATCH] = "patch",
	[SNAP_RECIPE] = "recipe",
	[SNAP_RECIPE_FILE] = "recipe-file",
	[SNAP_LAYER] = "layer",
	[SNAP_CATALOGUE] = "catalogue",
	[SNAP_KERNEL_CONFIG] = "kernel-config",
	[SNAP_PACKAGES] = "packages",
};

static const char *const source_types[] = { "debian", "tarball", "directory", "git" };

const char *snapshot_role_name(enum snapshot_role r)
{
	return r < SNAP_ROLE_COUNT ? role_names[r] : "?";
}

static int role_parse(const char *s)
{
	for (int i = 0; i < SNAP_ROLE_COUNT; i++)
		if (streq(s, role_names[i]))
			return i;
	return -1;
}

static void source_release(struct snapshot_source *src)
{
	free(src->name);
	free(src->type);
	free(src->identity);
	free(src->digest);
	free(src->where);
}

void snapshot_release(struct snapshot *snap)
{
	free(snap->experiment);
	strv_release(&snap->set);
	strv_release(&snap->kernels);
	for (size_t i = 0; i < snap->nsources; i++)
		source_release(&snap->sources[i]);
	free(snap->sources);
	for (size_t i = 0; i < snap->nfiles; i++) {
		free(snap->files[i].path);
		free(snap->files[i].from);
	}
	free(snap->files);
	for (size_t i = 0; i < snap->nabsent; i++)
		free(snap->absent[i].path);
	free(snap->absent);
	strmap_release(&snap->paths);
	memset(snap, 0, sizeof(*snap));
}

/* ---- collecting ---- */

/* `path` relative to the project folder `root`, lexically; NULL when it is not below it. */
static char *rel_of(const char *root, const char *path)
{
	const char *rel = NULL;
	size_t n = strlen(root);

	if (streq(root, ".")) {
		if (path[0] != '/')
			rel = path;
	} else if (strneq(path, root, n) && path[n] == '/') {
		rel = path + n + 1;
	}
	while (rel && strneq(rel, "./", 2))
		rel += 2;
	return rel && path_is_safe_relative(rel) ? xstrdup(rel) : NULL;
}

static void add_absent(struct snapshot *snap, const char *path, enum snapshot_role role)
{
	for (size_t i = 0; i < snap->nabsent; i++)
		if (streq(snap->absent[i].path, path))
			return;
	GROW(snap->absent, snap->absent_alloc, snap->nabsent + 1);
	snap->absent[snap->nabsent++] = (struct snapshot_absent){ .path = xstrdup(path), .role = role };
}

/* `from` as `rel` (taken); a path already listed keeps its first role. */
static int add_file(struct snapshot *snap, const char *from, char *rel_, enum snapshot_role role, struct diags *d)
{
	_cleanup_free_ char *rel = rel_;
	struct pos pos = { .file = from };
	struct snapshot_file *f;
	struct stat st;
	size_t i;
	int r;

	if (strmap_get(&snap->paths, rel, &i))
		return 0;
	if (stat(from, &st) < 0 || !S_ISREG(st.st_mode)) {
		add_absent(snap, rel, role);
		return 0;
	}
	if (snap->nfiles >= SNAPSHOT_MAX_FILES || (uint64_t)st.st_size > SNAPSHOT_MAX_OBJECT) {
		diags_add(d, &pos, "cannot keep it in the run's snapshot: more than %d files or %" PRIu64 " bytes",
			  SNAPSHOT_MAX_FILES, SNAPSHOT_MAX_OBJECT);
		return -EFBIG;
	}
	GROW(snap->files, snap->files_alloc, snap->nfiles + 1);
	f = &snap->files[snap->nfiles];
	*f = (struct snapshot_file){ .path = TAKE_PTR(rel), .size = (uint64_t)st.st_size, .role = role,
				     .mode = st.st_mode & 0111 ? 0755 : 0644, .from = xstrdup(from) };
	if ((r = sha256_file(from, f->sha256)) < 0) {
		free(f->path);
		free(f->from);
		diags_add(d, &pos, "cannot read it for the run's snapshot: %s", strerror(-r));
		return r;
	}
	strmap_put(&snap->paths, f->path, snap->nfiles);
	snap->nfiles++;
	return 0;
}

/* A file lab.yaml names: kept under its path in the project, or listed as absent. */
static int add_path(struct snapshot *snap, const char *root, const char *path, enum snapshot_role role,
		    struct diags *d)
{
	char *rel = rel_of(root, path);

	if (!rel) {
		add_absent(snap, path, role);
		return 0;
	}
	return add_file(snap, path, rel, role, d);
}

/* Every file below `dir` (links followed, as the catalogue's archive does; __pycache__ left out). */
static int add_tree(struct snapshot *snap, const char *root, const char *dir, enum snapshot_role role,
		    unsigned depth, struct diags *d)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	DIR *dh;
	struct dirent *de;
	int r = 0;

	if (depth > MAX_TREE_DEPTH || !(dh = opendir(dir))) {
		add_absent(snap, dir, role);
		return 0;
	}
	while ((de = readdir(dh)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, "..") && !streq(de->d_name, "__pycache__"))
			strv_push(&names, de->d_name);
	closedir(dh);
	for (size_t i = 0; i < names.n && r >= 0; i++) {
		_cleanup_free_ char *p = path_join(dir, names.v[i]);

		r = path_is_dir(p) ? add_tree(snap, root, p, role, depth + 1, d) : add_path(snap, root, p, role, d);
	}
	return r;
}

static void add_source(struct snapshot *snap, const struct snapshot_source *src)
{
	GROW(snap->sources, snap->sources_alloc, snap->nsources + 1);
	snap->sources[snap->nsources++] = (struct snapshot_source){
		.name = xstrdup(src->name), .type = xstrdup(src->type),
		.identity = src->identity ? xstrdup(src->identity) : NULL,
		.digest = src->digest ? xstrdup(src->digest) : NULL, .where = xstrdup(src->where),
	};
}

/* What kernel/source.c knows of each source without fetching anything. */
static void identify_sources(const struct spec *s, struct snapshot *snap)
{
	_cleanup_free_ char *cache = spec_cache_dir(s);

	for (size_t i = 0; i < s->nsources; i++) {
		const struct spec_source *src = &s->sources[i];
		struct ksource k = { 0 };
		struct snapshot_source out = { .name = src->name, .type = (char *)source_types[src->type] };
		_cleanup_free_ char *tarball = NULL;
		char hex[SHA256_HEX_LEN + 1];

		if (ksource_identify(cache, src, &k) == 0)
			out.identity = k.identity;
		switch (src->type) {
		case SOURCE_DEBIAN:
			out.where = src->package;
			/* linux-source-X ships /usr/src/linux-source-X.tar.xz */
			tarball = xasprintf("/usr/src/%s.tar.xz", src->package);
			if (out.identity && sha256_file(tarball, hex) == 0)
				out.digest = hex;
			break;
		case SOURCE_TARBALL:
			out.where = src->path;
			if (out.identity && str_startswith(out.identity, "tarball:"))
				out.digest = out.identity + strlen("tarball:");
			break;
		case SOURCE_DIRECTORY:
			out.where = src->path;
			break;
		case SOURCE_GIT:
			out.where = src->url;
			break;
		}
		add_source(snap, &out);
		ksource_release(&k);
	}
}

static int collect_kernels(struct snapshot *snap, const struct spec *s, struct diags *d)
{
	int r = 0;

	for (size_t i = 0; i < s->nkernels && r >= 0; i++) {
		const struct spec_kernel *k = &s->kernels[i];

		for (size_t j = 0; j < k->configs.n && r >= 0; j++)
			r = add_path(snap, s->dir, k->configs.v[j], SNAP_CONFIG, d);
		for (size_t j = 0; j < k->patches.n && r >= 0; j++)
			r = k->patches_dir ? add_tree(snap, s->dir, k->patches.v[j], SNAP_PATCH, 0, d)
					   : add_path(snap, s->dir, k->patches.v[j], SNAP_PATCH, d);
	}
	return r;
}

static int collect_images(struct snapshot *snap, const struct spec *s, const char *layer, struct diags *d)
{
	_cleanup_free_ char *lrel = layer ? rel_of(s->dir, layer) : NULL;
	int r = 0;

	for (size_t i = 0; i < s->nimages && r >= 0; i++) {
		_cleanup_diags_ struct diags ignored = { 0 };
		_cleanup_recipe_ struct recipe *rc = NULL;

		r = add_path(snap, s->dir, s->images[i].recipe, SNAP_RECIPE, d);
		/* a recipe that does not load is lab.yaml's error, said where it is read */
		if (r < 0 || recipe_load(s->images[i].recipe, s->images[i].name, &rc, &ignored) < 0)
			continue;
		for (size_t j = 0; j < rc->nfiles && r >= 0; j++)
			if (rc->files[j].source)
				r = add_path(snap, s->dir, rc->files[j].source, SNAP_RECIPE_FILE, d);
	}
	/* lab's own layer is part of the project only when it is in it */
	if (r >= 0 && lrel)
		r = add_tree(snap, s->dir, layer, SNAP_LAYER, 0, d);
	return r;
}

static int collect_built(struct snapshot *snap, const struct snapshot_built *b, size_t n, const char *fmt,
			 enum snapshot_role role, struct diags *d)
{
	int r = 0;

	for (size_t i = 0; i < n && r >= 0; i++) {
		char *rel = xasprintf(fmt, b[i].name);

		if (!path_is_safe_relative(rel)) {
			free(rel);
			continue;
		}
		r = add_file(snap, b[i].path, rel, role, d);
	}
	return r;
}

int snapshot_collect(const struct snapshot_input *in, struct snapshot *ret, struct diags *d)
{
	const struct spec *s = in->s;
	struct snapshot snap = { .experiment = xstrdup(in->experiment) };
	int r;

	for (size_t i = 0; in->set && i < in->set->n; i++)
		strv_push(&snap.set, in->set->v[i]);
	for (size_t i = 0; in->kernels && i < in->kernels->n; i++)
		strv_push(&snap.kernels, in->kernels->v[i]);
	if (in->sources)
		for (size_t i = 0; i < in->nsources; i++)
			add_source(&snap, &in->sources[i]);
	else
		identify_sources(s, &snap);
	{
		char *rel = rel_of(s->dir, s->path);

		r = rel ? add_file(&snap, in->spec_file ? in->spec_file : s->path, rel, SNAP_SPEC, d) : 0;
	}
	if (r >= 0 && !snap.nfiles) {
		struct pos pos = { .file = s->path };

		diags_add(d, &pos, "cannot keep it in the run's snapshot: not a file below %s", s->dir);
		r = -EINVAL;
	}
	if (r >= 0)
		r = add_tree(&snap, s->dir, s->settings.catalogue, SNAP_CATALOGUE, 0, d);
	/* after the catalogue: its declarations are read as lab.yaml's files too */
	for (size_t i = 0; r >= 0 && i < s->files.names.n; i++)
		r = add_path(&snap, s->dir, s->files.names.v[i], SNAP_INCLUDE, d);
	if (r >= 0)
		r = collect_kernels(&snap, s, d);
	if (r >= 0)
		r = collect_images(&snap, s, in->layer, d);
	if (r >= 0)
		r = collect_built(&snap, in->configs, in->nconfigs, "built/kernels/%s.config", SNAP_KERNEL_CONFIG, d);
	if (r >= 0)
		r = collect_built(&snap, in->packages, in->npackages, "built/images/%s.packages.txt", SNAP_PACKAGES, d);
	if (r < 0) {
		snapshot_release(&snap);
		return r;
	}
	*ret = snap;
	return 0;
}

/* ---- the listing ---- */

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct snapshot_file *)a)->path, ((const struct snapshot_file *)b)->path);
}

static int cmp_absent(const void *a, const void *b)
{
	return strcmp(((const struct snapshot_absent *)a)->path, ((const struct snapshot_absent *)b)->path);
}

void snapshot_format(const struct snapshot *snap, struct strbuf *out)
{
	_cleanup_free_ struct snapshot_file *files = xcalloc(snap->nfiles + 1, sizeof(*files));
	_cleanup_free_ struct snapshot_absent *absent = xcalloc(snap->nabsent + 1, sizeof(*absent));

	if (snap->nfiles)
		memcpy(files, snap->files, snap->nfiles * sizeof(*files));
	if (snap->nabsent)
		memcpy(absent, snap->absent, snap->nabsent * sizeof(*absent));
	qsort(files, snap->nfiles, sizeof(*files), cmp_file);
	qsort(absent, snap->nabsent, sizeof(*absent), cmp_absent);
	strbuf_addf(out, "lab-snapshot %d\n", SNAPSHOT_FORMAT);
	strbuf_addstr(out, "# what the run's lab.yaml names; each file's content in objects/SHA256 (lab(1): SNAPSHOTS)\n");
	strbuf_addf(out, "experiment %s\n", snap->experiment);
	for (size_t i = 0; i < snap->set.n; i++)
		strbuf_addf(out, "set %s\n", snap->set.v[i]);
	for (size_t i = 0; i < snap->kernels.n; i++)
		strbuf_addf(out, "kernels %s\n", snap->kernels.v[i]);
	for (size_t i = 0; i < snap->nsources; i++) {
		const struct snapshot_source *src = &snap->sources[i];

		strbuf_addf(out, "source %s %s %s %s %s\n", src->name, src->type, src->identity ? src->identity : "-",
			    src->digest ? src->digest : "-", src->where);
	}
	for (size_t i = 0; i < snap->nfiles; i++)
		strbuf_addf(out, "file %s %" PRIu64 " %o %s %s\n", files[i].sha256, files[i].size, files[i].mode,
			    role_names[files[i].role], files[i].path);
	for (size_t i = 0; i < snap->nabsent; i++)
		strbuf_addf(out, "absent %s %s\n", role_names[absent[i].role], absent[i].path);
}

/* ---- objects ---- */

/*
 * Copy in to out while hashing; *ret_size the bytes copied (stopping past
 * max). Objects are small (patches, configs, scripts): plain read/write.
 */
static int copy_hashed(int in, int out, uint64_t max, char hex[SHA256_HEX_LEN + 1], uint64_t *ret_size)
{
	struct hasher *h = hasher_new();
	char buf[1 << 16];
	uint64_t total = 0;
	ssize_t n;
	int r = 0;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		total += (uint64_t)n;
		if (total > max) {
			r = -EFBIG;
			break;
		}
		hasher_add(h, buf, (size_t)n);
		if (out >= 0 && (r = fs_write_all(out, buf, (size_t)n)) < 0)
			break;
	}
	hasher_finish(h, hex);
	*ret_size = total;
	return r;
}

/* One object from f->from, unless it is there already. */
static int store_object(int objfd, const char *objdir, const struct snapshot_file *f, struct diags *d)
{
	_cleanup_free_ char *tmp = xasprintf("%s/.tmp-XXXXXX", objdir), *final = path_join(objdir, f->sha256);
	_cleanup_close_ int in = -1, out = -1;
	struct pos pos = { .file = f->from };
	char hex[SHA256_HEX_LEN + 1];
	uint64_t size;
	int r;

	if (faccessat(objfd, f->sha256, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0; /* content-addressed: the same bytes, kept once for every run of the folder */
	if ((in = open(f->from, O_RDONLY | O_CLOEXEC)) < 0) {
		diags_add(d, &pos, "cannot read it for the run's snapshot: %s", strerror(errno));
		return -errno;
	}
	if ((out = mkostemp(tmp, O_CLOEXEC)) < 0) {
		pos.file = objdir;
		diags_add(d, &pos, "cannot write the run's snapshot: %s", strerror(errno));
		return -errno;
	}
	r = copy_hashed(in, out, SNAPSHOT_MAX_OBJECT, hex, &size);
	if (r == 0 && (!streq(hex, f->sha256) || size != f->size)) {
		diags_add(d, &pos, "it changed while lab kept it in the run's snapshot");
		r = -EAGAIN;
	} else if (r < 0) {
		diags_add(d, &pos, "cannot copy it into the run's snapshot: %s", strerror(-r));
	}
	if (r == 0 && (fchmod(out, 0644) < 0 || fsync(out) < 0 || rename(tmp, final) < 0)) {
		r = -errno;
		pos.file = final;
		diags_add(d, &pos, "cannot write: %s", strerror(errno));
	}
	if (r < 0)
		unlink(tmp);
	return r;
}

int snapshot_store(const struct snapshot *snap, const char *rundir, struct diags *d)
{
	_cleanup_free_ char *objdir = path_join(rundir, OBJECTS), *listing = path_join(rundir, SNAPSHOT_LISTING);
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	_cleanup_close_ int objfd = -1;
	struct pos pos = { .file = objdir };
	int r;

	if ((r = path_mkdir_p(objdir, 0755)) < 0 ||
	    (objfd = open(objdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		diags_add(d, &pos, "cannot create the run's snapshot folder: %s", strerror(r < 0 ? -r : errno));
		return r < 0 ? r : -errno;
	}
	for (size_t i = 0; i < snap->nfiles; i++)
		if ((r = store_object(objfd, objdir, &snap->files[i], d)) < 0)
			return r;
	snapshot_format(snap, &text);
	if ((r = fs_write_atomic(listing, text.buf, text.len, 0644)) < 0) {
		pos.file = listing;
		diags_add(d, &pos, "cannot write: %s", strerror(-r));
		return r;
	}
	return 0;
}

int snapshot_write(const struct snapshot_input *in, const char *rundir, struct diags *d)
{
	struct snapshot snap = { 0 };
	int r = snapshot_collect(in, &snap, d);

	if (r >= 0)
		r = snapshot_store(&snap, rundir, d);
	snapshot_release(&snap);
	return r;
}

/* ---- reading ---- */

static bool is_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The next space-separated field of *p (NULL: none left); `last` takes the rest of the line. */
static char *field(char **p, bool last)
{
	char *f = *p, *sp;

	if (!f || !*f)
		return NULL;
	if (last) {
		*p = NULL;
		return f;
	}
	sp = strchr(f, ' ');
	if (sp) {
		*sp = '\0';
		*p = sp + 1;
	} else {
		*p = NULL;
	}
	return *f ? f : NULL;
}

static bool parse_size(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 20)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ret = v;
	return v <= SNAPSHOT_MAX_OBJECT;
}

/* parsing state: the folders the files are in, to refuse a file that is also a folder */
struct reader {
	struct snapshot *snap;
	struct strv dirs; /* owns the keys of dirmap */
	struct strmap dirmap;
	struct pos pos;
	struct diags *d;
	bool spec;
};

static int bad(struct reader *rd, const char *fmt, ...) _printf_(2, 3);
static int bad(struct reader *rd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diags_addv(rd->d, &rd->pos, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_file(struct reader *rd, char *rest)
{
	struct snapshot *snap = rd->snap;
	char *sha = field(&rest, false), *size = field(&rest, false), *mode = field(&rest, false);
	char *role = field(&rest, false), *path = field(&rest, true);
	struct snapshot_file f = { .line = rd->pos.line };
	size_t one;
	int ro;

	if (!sha || !size || !mode || !role || !path)
		return bad(rd, "malformed file line (want: file SHA256 SIZE MODE ROLE PATH)");
	if (strlen(sha) != SHA256_HEX_LEN || !is_lower_hex(sha, SHA256_HEX_LEN))
		return bad(rd, "'%s' is not a sha256 (64 lowercase hex digits)", sha);
	if (!parse_size(size, &f.size))
		return bad(rd, "'%s' is not a size (a decimal number of bytes, at most %" PRIu64 ")", size,
			   SNAPSHOT_MAX_OBJECT);
	if (!streq(mode, "644") && !streq(mode, "755"))
		return bad(rd, "mode '%s' is not 644 or 755", mode);
	if ((ro = role_parse(role)) < 0)
		return bad(rd, "unknown role '%s'", role);
	if (!path_is_safe_relative(path))
		return bad(rd, "refused: '%s' is not a path inside the project (absolute, '..', '.', '~', an empty "
			   "part or a control character)", path);
	if (strmap_get(&snap->paths, path, &one))
		return bad(rd, "refused: '%s' is listed twice (first on line %u)", path, snap->files[one].line);
	if (strmap_get(&rd->dirmap, path, &one))
		return bad(rd, "refused: '%s' is a file and a folder of other files", path);
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		_cleanup_free_ char *dir = xstrndup(path, (size_t)(s - path));

		if (strmap_get(&snap->paths, dir, &one))
			return bad(rd, "refused: '%s' is a file (line %u) and a folder of '%s'", dir, snap->files[one].line,
				   path);
		if (!strmap_get(&rd->dirmap, dir, &one)) {
			strv_push_take(&rd->dirs, TAKE_PTR(dir));
			strmap_put(&rd->dirmap, rd->dirs.v[rd->dirs.n - 1], 0);
		}
	}
	if (snap->nfiles >= SNAPSHOT_MAX_FILES)
		return bad(rd, "refused: more than %d files", SNAPSHOT_MAX_FILES);
	if (ro == SNAP_SPEC) {
		if (rd->spec)
			return bad(rd, "refused: a second lab.yaml ('%s'); a snapshot has one", path);
		rd->spec = true;
	}
	memcpy(f.sha256, sha, SHA256_HEX_LEN + 1);
	f.mode = streq(mode, "755") ? 0755 : 0644;
	f.role = (enum snapshot_role)ro;
	f.path = xstrdup(path);
	GROW(snap->files, snap->files_alloc, snap->nfiles + 1);
	snap->files[snap->nfiles] = f;
	strmap_put(&snap->paths, f.path, snap->nfiles);
	snap->nfiles++;
	return 0;
}

static int parse_source(struct reader *rd, char *rest)
{
	char *name = field(&rest, false), *type = field(&rest, false), *id = field(&rest, false);
	char *digest = field(&rest, false), *where = field(&rest, true);
	struct snapshot_source src = { .name = name, .type = type, .where = where };
	bool known = false;

	if (!name || !type || !id || !digest || !where)
		return bad(rd, "malformed source line (want: source NAME TYPE IDENTITY DIGEST WHERE)");
	if (!str_is_name(name))
		return bad(rd, "'%s' is not a source name", name);
	for (size_t i = 0; i < ELEMENTSOF(source_types); i++)
		known |= streq(type, source_types[i]);
	if (!known)
		return bad(rd, "unknown source type '%s' (debian, tarball, directory or git)", type);
	if (!streq(digest, "-") && (strlen(digest) != SHA256_HEX_LEN || !is_lower_hex(digest, SHA256_HEX_LEN)))
		return bad(rd, "'%s' is not a sha256 or '-'", digest);
	for (size_t i = 0; i < rd->snap->nsources; i++)
		if (streq(rd->snap->sources[i].name, name))
			return bad(rd, "refused: source '%s' is listed twice", name);
	src.identity = streq(id, "-") ? NULL : id;
	src.digest = streq(digest, "-") ? NULL : digest;
	add_source(rd->snap, &src);
	return 0;
}

static int parse_line(struct reader *rd, char *line)
{
	char *rest = line, *kw = field(&rest, false), *v;
	int ro;

	if (!kw)
		return bad(rd, "an empty line or one that starts with a space");
	if (streq(kw, "file"))
		return parse_file(rd, rest);
	if (streq(kw, "source"))
		return parse_source(rd, rest);
	v = field(&rest, true);
	if (streq(kw, "experiment")) {
		if (rd->snap->experiment)
			return bad(rd, "refused: a second experiment line");
		if (!v || !str_is_name(v))
			return bad(rd, "'%s' is not an experiment name", v ? v : "");
		rd->snap->experiment = xstrdup(v);
	} else if (streq(kw, "set")) {
		if (!v || v[0] == '=' || !strchr(v, '='))
			return bad(rd, "malformed set line (want: set NAME=VALUE)");
		strv_push(&rd->snap->set, v);
	} else if (streq(kw, "kernels")) {
		if (!v || !str_is_variant_name(v))
			return bad(rd, "'%s' is not a kernel variant name", v ? v : "");
		strv_push(&rd->snap->kernels, v);
	} else if (streq(kw, "absent")) {
		char *role = v ? field(&v, false) : NULL, *path = field(&v, true);

		if (!role || !path)
			return bad(rd, "malformed absent line (want: absent ROLE PATH)");
		if ((ro = role_parse(role)) < 0)
			return bad(rd, "unknown role '%s'", role);
		add_absent(rd->snap, path, (enum snapshot_role)ro);
	} else {
		return bad(rd, "unknown line '%s' (file, source, absent, experiment, set or kernels)", kw);
	}
	return 0;
}

static int parse_header(struct reader *rd, const char *line)
{
	const char *magic = "lab-snapshot ";
	char *end;
	unsigned long v;

	if (!str_startswith(line, magic) || !line[strlen(magic)])
		return bad(rd, "not a lab snapshot listing (the first line is not 'lab-snapshot %d')", SNAPSHOT_FORMAT);
	errno = 0;
	v = strtoul(line + strlen(magic), &end, 10);
	if (*end || errno || line[strlen(magic)] < '1' || line[strlen(magic)] > '9')
		return bad(rd, "not a lab snapshot listing (the first line is not 'lab-snapshot %d')", SNAPSHOT_FORMAT);
	if (v != SNAPSHOT_FORMAT)
		return bad(rd, "a snapshot of format %lu, from a newer lab (this one reads format %d)", v,
			   SNAPSHOT_FORMAT);
	return 0;
}

int snapshot_parse(const char *buf, size_t len, const char *file, struct snapshot *ret, struct diags *d)
{
	struct snapshot snap = { 0 };
	struct reader rd = { .snap = &snap, .pos = { .file = file }, .d = d };
	bool header = false;
	int r = 0;

	if (len > SNAPSHOT_MAX_BYTES) {
		r = bad(&rd, "refused: the listing is larger than %u bytes", SNAPSHOT_MAX_BYTES);
		goto out;
	}
	for (const char *l = buf, *end = buf + len; l < end && r >= 0;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		_cleanup_free_ char *line = xstrndup(l, n);

		rd.pos.line++;
		l = nl ? nl + 1 : end;
		if (strlen(line) != n)
			r = bad(&rd, "refused: a NUL byte in the listing");
		for (size_t i = 0; r >= 0 && i < n; i++)
			if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
				r = bad(&rd, "refused: a control character in the listing");
		if (r < 0 || line[0] == '#')
			continue;
		if (!header) {
			r = parse_header(&rd, line);
			header = true;
			continue;
		}
		r = parse_line(&rd, line);
	}
	rd.pos.line = 0;
	if (r >= 0 && !header)
		r = bad(&rd, "an empty snapshot listing");
	else if (r >= 0 && !snap.experiment)
		r = bad(&rd, "the listing names no experiment");
	else if (r >= 0 && !rd.spec)
		r = bad(&rd, "the listing has no lab.yaml (a file of role spec)");
out:
	strv_release(&rd.dirs);
	strmap_release(&rd.dirmap);
	if (r < 0) {
		snapshot_release(&snap);
		return r;
	}
	*ret = snap;
	return 0;
}

static int open_run(const char *rundir, struct diags *d)
{
	struct pos pos = { .file = rundir };
	int fd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		diags_add(d, &pos, "cannot open the run folder: %s", strerror(errno));
	return fd < 0 ? -errno : fd;
}

int snapshot_load(const char *rundir, struct snapshot *ret, struct diags *d)
{
	_cleanup_free_ char *listing = path_join(rundir, SNAPSHOT_LISTING);
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	_cleanup_close_ int dirfd = open_run(rundir, d), fd = -1;
	struct pos pos = { .file = listing };

	if (dirfd < 0)
		return dirfd;
	fd = fs_open_beneath(dirfd, SNAPSHOT_LISTING, O_RDONLY, 0);
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd < 0) {
		diags_add(d, &pos, "cannot read: %s", fd == -ELOOP ? "it is a symbolic link" : strerror(-fd));
		return fd;
	}
	{
		struct stat st;

		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			diags_add(d, &pos, "cannot read: not a regular file");
			return -EINVAL;
		}
		if ((uint64_t)st.st_size > SNAPSHOT_MAX_BYTES) {
			diags_add(d, &pos, "refused: the listing is larger than %u bytes", SNAPSHOT_MAX_BYTES);
			return -EFBIG;
		}
	}
	{
		char b[1 << 16];
		ssize_t n;

		while ((n = read(fd, b, sizeof(b))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				diags_add(d, &pos, "cannot read: %s", strerror(errno));
				return -errno;
			}
			strbuf_add(&buf, b, (size_t)n);
			if (buf.len > SNAPSHOT_MAX_BYTES) {
				diags_add(d, &pos, "refused: the listing is larger than %u bytes", SNAPSHOT_MAX_BYTES);
				return -EFBIG;
			}
		}
	}
	return snapshot_parse(buf.buf ? buf.buf : "", buf.len, listing, ret, d);
}

/* The object of f below dirfd, opened without following a link; diagnosed when it is not a regular file. */
static int open_object(int dirfd, const char *rundir, const struct snapshot_file *f, struct diags *d)
{
	_cleanup_free_ char *rel = xasprintf(OBJECTS "/%s", f->sha256), *listing = path_join(rundir, SNAPSHOT_LISTING);
	struct pos pos = { .file = listing, .line = f->line };
	int fd = fs_open_beneath(dirfd, rel, O_RDONLY, 0);
	struct stat st;

	if (fd < 0) {
		diags_add(d, &pos, "%s (%s) %s", rel, f->path,
			  fd == -ENOENT ? "is missing" : fd == -ELOOP ? "is a symbolic link" : strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		diags_add(d, &pos, "%s (%s) is not a regular file", rel, f->path);
		return -EINVAL;
	}
	return fd;
}

/* The copy's sha256 and size against the listing's. */
static int check_object(const char *rundir, const struct snapshot_file *f, int r, const char *hex, uint64_t size,
			struct diags *d)
{
	_cleanup_free_ char *listing = path_join(rundir, SNAPSHOT_LISTING);
	struct pos pos = { .file = listing, .line = f->line };

	if (r == -EFBIG || (r == 0 && size != f->size)) {
		diags_add(d, &pos, "refused: %s (snapshot/objects/%s) has %s bytes than the listing's %" PRIu64, f->path,
			  f->sha256, r == -EFBIG || size > f->size ? "more" : "fewer", f->size);
		return -EINVAL;
	}
	if (r < 0) {
		diags_add(d, &pos, "cannot read %s (snapshot/objects/%s): %s", f->path, f->sha256, strerror(-r));
		return r;
	}
	if (!streq(hex, f->sha256)) {
		diags_add(d, &pos, "refused: %s (snapshot/objects/%s) does not match its sha256: it was changed",
			  f->path, f->sha256);
		return -EINVAL;
	}
	return 0;
}

int snapshot_verify(const char *rundir, const struct snapshot *snap, struct diags *d)
{
	_cleanup_close_ int dirfd = open_run(rundir, d);

	if (dirfd < 0)
		return dirfd;
	for (size_t i = 0; i < snap->nfiles; i++) {
		const struct snapshot_file *f = &snap->files[i];
		_cleanup_close_ int fd = open_object(dirfd, rundir, f, d);
		char hex[SHA256_HEX_LEN + 1];
		uint64_t size;
		int r;

		if (fd < 0)
			return fd;
		r = copy_hashed(fd, -1, f->size, hex, &size);
		if ((r = check_object(rundir, f, r, hex, size, d)) < 0)
			return r;
	}
	return 0;
}

int snapshot_read(const char *rundir, const struct snapshot *snap, const char *path, struct strbuf *out,
		  struct diags *d)
{
	const struct snapshot_file *f;
	_cleanup_close_ int dirfd = -1, fd = -1;
	char hex[SHA256_HEX_LEN + 1];
	size_t start = out->len;
	ssize_t n;
	size_t at;

	if (!strmap_get(&snap->paths, path, &at))
		return -ENOENT;
	f = &snap->files[at];
	if (f->size > SNAPSHOT_MAX_BYTES * 16)
		return check_object(rundir, f, -EFBIG, "", 0, d);
	if ((dirfd = open_run(rundir, d)) < 0)
		return dirfd;
	if ((fd = open_object(dirfd, rundir, f, d)) < 0)
		return fd;
	for (;;) {
		char buf[65536];

		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		strbuf_add(out, buf, (size_t)n);
		if (out->len - start > f->size)
			break;
	}
	if (n < 0)
		return check_object(rundir, f, -errno, "", 0, d);
	sha256_hex(out->buf ? out->buf + start : "", out->len - start, hex);
	return check_object(rundir, f, 0, hex, out->len - start, d);
}

/* target made (its parents too) or found empty; its descriptor */
static int open_target(const char *target, struct diags *d)
{
	struct pos pos = { .file = target };
	int r = path_mkdir_p(target, 0755), fd;
	DIR *dh;
	struct dirent *de;

	if (r < 0) {
		diags_add(d, &pos, "cannot create: %s", strerror(-r));
		return r;
	}
	if ((fd = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		diags_add(d, &pos, "cannot open: %s", strerror(errno));
		return -errno;
	}
	if (!(dh = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 3)))) {
		close(fd);
		diags_add(d, &pos, "cannot read: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(dh)))
		if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
			closedir(dh);
			close(fd);
			diags_add(d, &pos, "refused: not an empty folder (a snapshot is checked out into an empty one)");
			return -ENOTEMPTY;
		}
	closedir(dh);
	return fd;
}

int snapshot_checkout(const char *rundir, const struct snapshot *snap, const char *target, struct diags *d)
{
	_cleanup_close_ int dirfd = open_run(rundir, d), tfd = -1;

	if (dirfd < 0)
		return dirfd;
	if ((tfd = open_target(target, d)) < 0)
		return tfd;
	for (size_t i = 0; i < snap->nfiles; i++) {
		const struct snapshot_file *f = &snap->files[i];
		_cleanup_close_ int in = open_object(dirfd, rundir, f, d), out = -1;
		char hex[SHA256_HEX_LEN + 1];
		uint64_t size;
		int r;

		if (in < 0)
			return in;
		out = fs_open_beneath(tfd, f->path, O_WRONLY | O_CREAT | O_EXCL, f->mode);
		if (out < 0) {
			_cleanup_free_ char *p = path_join(target, f->path);
			struct pos pos = { .file = p };

			diags_add(d, &pos, "cannot write: %s", strerror(-out));
			return out;
		}
		r = copy_hashed(in, out, f->size, hex, &size);
		if ((r = check_object(rundir, f, r, hex, size, d)) < 0)
			return r;
		if (fchmod(out, f->mode) < 0)
			return -errno;
	}
	return 0;
}

/* ---- runs stored before snapshots ---- */

static void missing_path(struct strv *ret, const char *rundir, const struct spec *s, const char *what,
			 const char *path)
{
	_cleanup_free_ char *rel = rel_of(s->dir, path), *there = rel ? path_join(rundir, rel) : NULL;
	_cleanup_free_ char *line = xasprintf("%s %s", what, rel ? rel : path);

	if (there && access(there, F_OK) == 0)
		return;
	if (!strv_contains(ret, line))
		strv_push(ret, line);
}

static void missing_name(struct strv *ret, const char *what, const char *name)
{
	_cleanup_free_ char *line = xasprintf("%s %s", what, name);

	if (!strv_contains(ret, line))
		strv_push(ret, line);
}

int snapshot_missing(const char *rundir, struct strv *ret, struct diags *d)
{
	_cleanup_free_ char *yaml = path_join(rundir, "lab.yaml");
	_cleanup_spec_ struct spec *s = NULL;
	/* a bundle's lab.yaml: nothing it names is read, an include neither */
	const struct spec_load_opts o = { .no_include = true, .no_filesystem = true };
	int r;

	strv_push(ret, SNAPSHOT_LISTING " (the run was stored before lab kept snapshots)");
	if ((r = spec_load(yaml, &o, &s, d)) < 0)
		return r;
	for (size_t i = 0; i < s->nkernels; i++) {
		const struct spec_kernel *k = &s->kernels[i];

		for (size_t j = 0; j < k->configs.n; j++)
			missing_path(ret, rundir, s, "config fragment", k->configs.v[j]);
		for (size_t j = 0; j < k->patches.n; j++)
			missing_path(ret, rundir, s, k->patches_dir ? "patches folder" : "patch", k->patches.v[j]);
	}
	for (size_t i = 0; i < s->nimages; i++)
		missing_path(ret, rundir, s, "image recipe", s->images[i].recipe);
	for (size_t i = 0; i < s->nexperiments; i++) {
		const struct spec_experiment *e = &s->experiments[i];

		for (size_t j = 0; j < e->njobs; j++) {
			missing_name(ret, "workload", e->jobs[j].workload.name);
			for (size_t m = 0; m < e->jobs[j].monitors.n; m++)
				missing_name(ret, "monitor", e->jobs[j].monitors.v[m].name);
		}
		for (size_t m = 0; m < e->monitors.n; m++)
			missing_name(ret, "monitor", e->monitors.v[m].name);
	}
	for (size_t i = 0; i < s->nsources; i++)
		missing_name(ret, "identity of source", s->sources[i].name);
	return 0;
}
