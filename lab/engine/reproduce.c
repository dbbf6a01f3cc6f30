/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "reproduce.h"
#include "../kernel/kconfig.h"
#include "../kernel/source.h"
#include "../kernel/variant.h"
#include "../util/alloc.h"
#include "../util/hash.h"
#include "../util/strbuf.h"
#include "../util/banned.h"

char *reproduce_config_path(const char *variant)
{
	return xasprintf("built/kernels/%s.config", variant);
}

char *reproduce_packages_path(const char *image)
{
	return xasprintf("built/images/%s.packages.txt", image);
}

static const struct snapshot_source *recorded_source(const struct snapshot *snap, const char *name)
{
	for (size_t i = 0; i < snap->nsources; i++)
		if (streq(snap->sources[i].name, name))
			return &snap->sources[i];
	return NULL;
}

int reproduce_check_sources(const struct spec *s, const struct strv *variants, const struct snapshot *snap,
			    struct strv *refused, struct diags *d)
{
	_cleanup_free_ char *cache = spec_cache_dir(s);
	_cleanup_strv_ struct strv seen = STRV_INIT;

	for (size_t i = 0; i < variants->n; i++) {
		_cleanup_(kvariant_release) struct kvariant v = { 0 };
		const struct snapshot_source *rec;
		struct ksource k = { 0 };
		int r;

		if ((r = kvariant_resolve(s, variants->v[i], &v, d)) < 0)
			return r;
		if (strv_contains(&seen, v.source->name))
			continue;
		strv_push(&seen, v.source->name);
		rec = recorded_source(snap, v.source->name);
		if (!rec || !rec->identity)
			continue; /* nothing recorded to hold it to: the .config and patches still are */
		r = ksource_identify(cache, v.source, &k);
		if (r == -ENOENT)
			continue; /* not unpacked here yet: kernel_build installs it; its .config is checked */
		if (r < 0) {
			ksource_release(&k);
			strv_pushf(refused, "source %s: %s cannot be read here (%s): the run was built from %s",
				   v.source->name, rec->where ? rec->where : "it", strerror(-r), rec->identity);
			continue;
		}
		if (!streq(k.identity, rec->identity))
			strv_pushf(refused, "source %s: the run was built from %s, this machine has %s", v.source->name,
				   rec->identity, k.identity);
		ksource_release(&k);
	}
	return 0;
}

/* The merged .config a build of v has here: the cached artifact's, else configured now. */
static int config_here(const struct spec *s, const struct kvariant *v, const struct kbuild_progress *p,
		       struct kartifact *a, bool *cached, struct diags *d)
{
	struct kbuild_opts o = { .config_only = true };
	int r = kernel_lookup(s, v, a, d);

	*cached = r == 0;
	if (r == 0)
		return 0;
	if (r != -ENOENT)
		return r;
	kartifact_release(a);
	return kernel_build(s, v, &o, p, a, d);
}

/* Each line of text, indented, onto the last entry of v. */
static void indent_lines(struct strv *v, const char *text)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, v->v[v->n - 1]);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		strbuf_addf(&sb, "\n  %.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
	free(v->v[v->n - 1]);
	v->v[v->n - 1] = strbuf_detach(&sb, NULL);
}

int reproduce_check_configs(const struct spec *s, const struct strv *variants, const char *rundir,
			    const struct snapshot *snap, const struct kbuild_progress *p, struct strv *refused,
			    struct strv *notes, struct diags *d)
{
	for (size_t i = 0; i < variants->n; i++) {
		_cleanup_(kvariant_release) struct kvariant v = { 0 };
		_cleanup_(kartifact_release) struct kartifact a = { 0 };
		_cleanup_free_ char *path = reproduce_config_path(variants->v[i]);
		_cleanup_strbuf_ struct strbuf rec = STRBUF_INIT, here = STRBUF_INIT, diff = STRBUF_INIT;
		_cleanup_(kconfig_release) struct kconfig kr = { 0 }, kh = { 0 };
		char hr[SHA256_HEX_LEN + 1], hh[SHA256_HEX_LEN + 1];
		const struct snapshot_source *rs;
		bool cached = false;
		int r = snapshot_read(rundir, snap, path, &rec, d);

		if (r == -ENOENT) {
			strv_pushf(refused, "kernel %s: the run recorded no merged .config (%s): nothing to hold a "
					    "rebuild to", variants->v[i], path);
			continue;
		}
		if (r < 0)
			return r;
		if ((r = kvariant_resolve(s, variants->v[i], &v, d)) < 0 ||
		    (r = config_here(s, &v, p, &a, &cached, d)) < 0)
			return r;
		/* a source known only once fetched (a git ref, a first install) */
		rs = recorded_source(snap, v.source->name);
		if (rs && rs->identity && a.source_identity && !streq(rs->identity, a.source_identity)) {
			strv_pushf(refused, "kernel %s: built from source %s %s, the run was built from %s", variants->v[i],
				   v.source->name, a.source_identity, rs->identity);
			continue;
		}
		if ((r = strbuf_read_file(&here, a.config, SNAPSHOT_MAX_BYTES * 16)) < 0) {
			struct pos pos = { .file = a.config };

			diags_add(d, &pos, "cannot read the merged .config: %s", strerror(-r));
			return r;
		}
		sha256_hex(rec.buf ? rec.buf : "", rec.len, hr);
		sha256_hex(here.buf ? here.buf : "", here.len, hh);
		if (streq(hr, hh)) {
			strv_pushf(notes, "kernel %s: merged .config %.12s as recorded (%s)", variants->v[i], hh,
				   cached ? "the cached build's" : "configured here");
			continue;
		}
		kconfig_parse(rec.buf ? rec.buf : "", &kr);
		kconfig_parse(here.buf ? here.buf : "", &kh);
		if (!kconfig_diff(&kr, &kh, NULL, &diff))
			strbuf_addstr(&diff, "the same options, but not the same file (comments or order)\n");
		strv_pushf(refused, "kernel %s: its merged .config differs from the recorded one (%s, sha256 %.12s; "
				    "here %.12s), recorded value first:",
			   variants->v[i], path, hr, hh);
		indent_lines(refused, diff.buf);
	}
	return 0;
}

struct pkg {
	const char *name, *version;
	size_t nlen, vlen;
};

/* The next "name=version" line of *p; false at the end. Lines without '=' are skipped. */
static bool next_pkg(const char **p, struct pkg *ret)
{
	while (**p) {
		const char *line = *p, *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *eq = memchr(line, '=', (size_t)(end - line));

		*p = nl ? nl + 1 : end;
		if (!eq || eq == line)
			continue;
		*ret = (struct pkg){ .name = line, .nlen = (size_t)(eq - line), .version = eq + 1,
				     .vlen = (size_t)(end - eq - 1) };
		return true;
	}
	return false;
}

static int pkg_cmp(const struct pkg *a, const struct pkg *b)
{
	size_t n = a->nlen < b->nlen ? a->nlen : b->nlen;
	int c = memcmp(a->name, b->name, n);

	return c ? c : a->nlen < b->nlen ? -1 : a->nlen > b->nlen;
}

static int pkg_qsort(const void *a, const void *b)
{
	return pkg_cmp(a, b);
}

static void pkgs_of(const char *text, struct pkg **ret, size_t *n)
{
	size_t alloc = 0;
	struct pkg p;

	*ret = NULL;
	*n = 0;
	while (next_pkg(&text, &p)) {
		GROW(*ret, alloc, *n + 1);
		(*ret)[(*n)++] = p;
	}
	if (*n)
		qsort(*ret, *n, sizeof(**ret), pkg_qsort);
}

void reproduce_package_diff(const char *recorded, const char *here, struct strv *out)
{
	_cleanup_free_ struct pkg *a = NULL, *b = NULL;
	size_t na, nb, i = 0, j = 0;

	pkgs_of(recorded ? recorded : "", &a, &na);
	pkgs_of(here ? here : "", &b, &nb);
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : pkg_cmp(&a[i], &b[j]);

		if (c < 0) {
			strv_pushf(out, "%.*s: %.*s -> (none)", (int)a[i].nlen, a[i].name, (int)a[i].vlen, a[i].version);
			i++;
		} else if (c > 0) {
			strv_pushf(out, "%.*s: (none) -> %.*s", (int)b[j].nlen, b[j].name, (int)b[j].vlen, b[j].version);
			j++;
		} else {
			if (a[i].vlen != b[j].vlen || memcmp(a[i].version, b[j].version, a[i].vlen))
				strv_pushf(out, "%.*s: %.*s -> %.*s", (int)a[i].nlen, a[i].name, (int)a[i].vlen,
					   a[i].version, (int)b[j].vlen, b[j].version);
			i++;
			j++;
		}
	}
}

int reproduce_packages(const char *a_dir, const struct snapshot *a, const char *b_dir, const struct snapshot *b,
		       const char *image, struct strv *out, struct diags *d)
{
	_cleanup_free_ char *path = reproduce_packages_path(image);
	_cleanup_strbuf_ struct strbuf ta = STRBUF_INIT, tb = STRBUF_INIT;
	int ra = snapshot_read(a_dir, a, path, &ta, d), rb;

	if (ra < 0 && ra != -ENOENT)
		return ra;
	rb = snapshot_read(b_dir, b, path, &tb, d);
	if (rb < 0 && rb != -ENOENT)
		return rb;
	if (ra == -ENOENT || rb == -ENOENT) {
		strv_pushf(out, "image %s: the %s run recorded no package list (%s)", image,
			   ra == -ENOENT ? "original" : "new", path);
		return 0;
	}
	reproduce_package_diff(ta.buf, tb.buf, out);
	return 0;
}
