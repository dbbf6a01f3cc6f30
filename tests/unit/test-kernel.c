/* SPDX-License-Identifier: MIT */
/*
 * The kernel layer without a kernel: patch parsing, the work tree that
 * switches between series (on a small fixture tree, with real git apply),
 * touched objects, .config checks and diffs, variant resolution, and the
 * source tarball unpacked in-process (util/tarball.c) against hostile
 * member names.
 */
#include "unit.h"
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kernel/build.h"
#include "kernel/kconfig.h"
#include "kernel/source.h"
#include "kernel/patch.h"
#include "kernel/variant.h"
#include "kernel/worktree.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/tarball.h"

#define DATA "tests/data"

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 1 << 20) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static void test_patch_parse(void **state)
{
	struct diags d = { 0 };
	struct patch *p = NULL;
	const struct patch_file *pf = NULL;
	const struct patch_hunk *h;
	char *text;

	(void)state;
	assert_int_equal(patch_load(DATA "/kpatches/0002-demo-change-2.patch", &p, &d), 0);
	assert_string_equal(p->subject, "[PATCH 2/3] demo change 2");
	assert_int_equal(p->nfiles, 2);
	assert_string_equal(p->files[0].path, "kernel/sched/new.c");
	assert_true(p->files[0].created);
	assert_string_equal(p->files[1].path, "kernel/sched/rt.c");
	assert_false(p->files[1].created);
	assert_int_equal(p->files[1].nhunks, 1);
	h = patch_find_hunk(p, "kernel/sched/rt.c", 1, &pf);
	assert_non_null(h);
	assert_ptr_equal(pf, &p->files[1]);
	text = patch_lines(p, h->first_line, h->last_line);
	assert_string_equal(text, "@@ -1,4 +1,4 @@\n int rt(void)\n {\n-\treturn 3;\n+\treturn 30;\n }\n");
	free(text);
	assert_null(patch_find_hunk(p, "kernel/sched/rt.c", 7, NULL));
	assert_int_equal(strlen(p->sha256), 64);
	patch_free(p);
	/* a file without a diff is refused */
	assert_int_equal(patch_load(DATA "/patches/demo/0001-demo.patch", &p, &d), -EINVAL);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "no diff in this file"));
	diags_release(&d);
}

static void test_series_list(void **state)
{
	struct strv v = STRV_INIT;

	(void)state;
	assert_int_equal(patch_series_list(DATA "/kpatches", &v), 0);
	assert_int_equal(v.n, 3);
	assert_true(str_endswith(v.v[0], "0001-demo-change-1.patch"));
	assert_true(str_endswith(v.v[2], "0003-demo-change-3.patch"));
	strv_release(&v);
	assert_int_equal(patch_series_list(DATA "/nope", &v), -ENOENT);
}

/* A scratch work folder and the three fixture patches. */
struct wt {
	char *work;
	char *pristine;
	struct patch *p[3];
};

static int wt_setup(void **state)
{
	struct wt *w = xcalloc(1, sizeof(*w));
	char tmpl[] = "/tmp/lab-wt-XXXXXX";
	struct diags d = { 0 };
	struct strv files = STRV_INIT;

	assert_non_null(mkdtemp(tmpl));
	w->work = xstrdup(tmpl);
	w->pristine = realpath(DATA "/ktree", NULL);
	patch_series_list(DATA "/kpatches", &files);
	for (int i = 0; i < 3; i++) {
		char *abs = realpath(files.v[i], NULL);

		assert_int_equal(patch_load(abs, &w->p[i], &d), 0);
		free(abs);
	}
	strv_release(&files);
	*state = w;
	return 0;
}

static int wt_teardown(void **state)
{
	struct wt *w = *state;
	struct command c;

	command_init(&c, "rm");
	command_args(&c, "-rf", "--", w->work, NULL);
	command_run(&c);
	command_release(&c);
	for (int i = 0; i < 3; i++)
		patch_free(w->p[i]);
	free(w->work);
	free(w->pristine);
	free(w);
	return 0;
}

static char *wt_file(const struct wt *w, const char *rel)
{
	char *p = xasprintf("%s/src/%s", w->work, rel);
	char *s = slurp(p);

	free(p);
	return s;
}

static ino_t inode(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void assert_file(const struct wt *w, const char *rel, const char *want)
{
	char *got = wt_file(w, rel);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_worktree_switch(void **state)
{
	struct wt *w = *state;
	struct diags d = { 0 };
	char *applied, *wcore, *pcore, *wfair, *pfair;

	assert_int_equal(worktree_ensure(w->work, w->pristine, NULL, &d, NULL), 0);
	/* an untouched file stays a hard link to the pristine tree */
	wcore = xasprintf("%s/src/kernel/sched/core.c", w->work);
	pcore = xasprintf("%s/kernel/sched/core.c", w->pristine);
	assert_int_equal(inode(wcore), inode(pcore));

	assert_int_equal(worktree_switch(w->work, w->pristine, w->p, 3, NULL, &d), 0);
	assert_file(w, "kernel/sched/fair.c", "#include \"sched.h\"\nint fair(void)\n{\n\treturn 21;\n}\n");
	assert_file(w, "kernel/sched/new.c", "int added(void) { return 4; }\n");
	assert_file(w, "kernel/sched/rt.c", "int rt(void)\n{\n\treturn 30;\n}\n");
	/* patching never writes through the links into the pristine tree */
	pfair = xasprintf("%s/kernel/sched/fair.c", w->pristine);
	applied = slurp(pfair);
	assert_non_null(strstr(applied, "return 2;"));
	free(applied);
	assert_int_equal(inode(wcore), inode(pcore));

	/* back to the first patch only: rt.c and new.c return to pristine */
	assert_int_equal(worktree_switch(w->work, w->pristine, w->p, 1, NULL, &d), 0);
	assert_file(w, "kernel/sched/new.c", NULL);
	assert_file(w, "kernel/sched/rt.c", "int rt(void)\n{\n\treturn 3;\n}\n");
	assert_file(w, "kernel/sched/fair.c", "#include \"sched.h\"\nint fair(void)\n{\n\treturn 20;\n}\n");
	applied = xasprintf("%s/applied", w->work);
	free(wfair = slurp(applied));
	(void)wfair;

	/* 1 -> 1..2 applies only the second: fair.c (touched by 1 only) is not rewritten */
	wfair = xasprintf("%s/src/kernel/sched/fair.c", w->work);
	{
		ino_t before = inode(wfair);

		assert_int_equal(worktree_switch(w->work, w->pristine, w->p, 2, NULL, &d), 0);
		assert_int_equal(inode(wfair), before);
	}
	assert_file(w, "kernel/sched/new.c", "int added(void) { return 4; }\n");
	{
		char *rec = slurp(applied);

		assert_non_null(strstr(rec, w->p[0]->sha256));
		assert_non_null(strstr(rec, w->p[1]->sha256));
		assert_null(strstr(rec, w->p[2]->sha256));
		free(rec);
	}
	/* and to none */
	assert_int_equal(worktree_switch(w->work, w->pristine, w->p, 0, NULL, &d), 0);
	assert_file(w, "kernel/sched/fair.c", "#include \"sched.h\"\nint fair(void)\n{\n\treturn 2;\n}\n");
	assert_file(w, "kernel/sched/new.c", NULL);
	assert_int_equal(d.n, 0);
	free(applied);
	free(wcore);
	free(pcore);
	free(wfair);
	free(pfair);
	diags_release(&d);
}

static void test_worktree_reject(void **state)
{
	struct wt *w = *state;
	struct diags d = { 0 };
	struct patch *order[2] = { w->p[2], w->p[0] };
	char *rec, *appliedf;

	/* patch 3 alone does not apply: its fair.c hunk expects patch 1's "return 20" */
	assert_int_equal(worktree_ensure(w->work, w->pristine, NULL, &d, NULL), 0);
	assert_int_equal(worktree_switch(w->work, w->pristine, order, 2, NULL, &d), -EIO);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, w->p[2]->path);
	assert_non_null(strstr(d.v[0].msg, "of kernel/sched/fair.c (patch lines"));
	assert_non_null(strstr(d.v[0].msg, "does not apply at line"));
	assert_non_null(strstr(d.v[0].msg, "-\treturn 20;\n+\treturn 21;"));
	assert_true(d.v[0].line > 0);
	/* git apply is all or nothing: Kconfig of the same patch was not changed */
	assert_file(w, "kernel/sched/Kconfig", "config SCHED_DEMO\n\tbool \"demo\"\n");
	appliedf = xasprintf("%s/applied", w->work);
	rec = slurp(appliedf);
	assert_true(!rec || !*rec);
	free(rec);
	free(appliedf);
	diags_release(&d);
}

/*
 * The cache outlives the projects that use it: patches applied from a
 * folder removed since (a test's, a bundle's) are still undone, from the
 * files recorded before each was applied.
 */
static void test_worktree_patches_gone(void **state)
{
	struct wt *w = *state;
	struct diags d = { 0 };
	char tmpl[] = "/tmp/lab-gone.XXXXXX";
	struct patch *gone[2] = { NULL, NULL };
	struct command c;

	assert_non_null(mkdtemp(tmpl));
	for (int i = 0; i < 2; i++) {
		char *copy = xasprintf("%s/%d.patch", tmpl, i);
		char *text = slurp(w->p[i]->path);
		FILE *f = fopen(copy, "w");

		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		assert_int_equal(patch_load(copy, &gone[i], &d), 0);
		free(copy);
		free(text);
	}
	assert_int_equal(worktree_ensure(w->work, w->pristine, NULL, &d, NULL), 0);
	assert_int_equal(worktree_switch(w->work, w->pristine, gone, 2, NULL, &d), 0);
	assert_file(w, "kernel/sched/new.c", "int added(void) { return 4; }\n");
	command_init(&c, "rm");
	command_args(&c, "-rf", "--", tmpl, NULL);
	assert_int_equal(command_run(&c), 0);
	command_release(&c);
	/* another project's series: back to pristine first, with no patch file to read */
	assert_int_equal(worktree_switch(w->work, w->pristine, &w->p[2], 0, NULL, &d), 0);
	assert_int_equal(d.n, 0);
	assert_file(w, "kernel/sched/fair.c", "#include \"sched.h\"\nint fair(void)\n{\n\treturn 2;\n}\n");
	assert_file(w, "kernel/sched/new.c", NULL);
	for (int i = 0; i < 2; i++)
		patch_free(gone[i]);
	diags_release(&d);
}

static void test_touched_objects(void **state)
{
	struct strv files = STRV_INIT, objs = STRV_INIT;

	(void)state;
	strv_push(&files, "kernel/sched/fair.c");  /* built directly */
	strv_push(&files, "kernel/sched/rt.c");    /* #included by build_policy.c */
	strv_push(&files, "kernel/sched/Kconfig"); /* feeds no object */
	kernel_touched_objects(DATA "/ktree", &files, &objs);
	assert_int_equal(objs.n, 2);
	assert_string_equal(objs.v[0], "kernel/sched/fair.o");
	assert_string_equal(objs.v[1], "kernel/sched/build_policy.o");
	strv_release(&objs);
	strv_release(&files);
	/* a private header: every object whose source includes it */
	strv_push(&files, "kernel/sched/sched.h");
	kernel_touched_objects(DATA "/ktree", &files, &objs);
	assert_true(strv_contains(&objs, "kernel/sched/core.o"));
	assert_true(strv_contains(&objs, "kernel/sched/fair.o"));
	assert_true(strv_contains(&objs, "kernel/sched/build_policy.o"));
	assert_int_equal(objs.n, 3);
	strv_release(&objs);
	strv_release(&files);
}

static void test_touched_objects_cycle(void **state)
{
	struct strv files = STRV_INIT, objs = STRV_INIT;

	(void)state;
	/* a.c and b.c #include each other; only top.c is built: no endless recursion */
	strv_push(&files, "d/a.c");
	kernel_touched_objects(DATA "/ktree-cycle", &files, &objs);
	assert_int_equal(objs.n, 1);
	assert_string_equal(objs.v[0], "d/top.o");
	strv_release(&objs);
	strv_release(&files);
}

static void test_patch_symbols(void **state)
{
	struct strv patches = STRV_INIT, syms = STRV_INIT;

	(void)state;
	patch_series_list(DATA "/kpatches", &patches);
	kernel_patch_symbols(&patches, &syms);
	assert_int_equal(syms.n, 1);
	assert_string_equal(syms.v[0], "CONFIG_SCHED_RATELIMIT");
	strv_release(&patches);
	strv_release(&syms);
}

static void test_kconfig(void **state)
{
	struct kconfig a = { 0 }, b = { 0 };
	struct strbuf diff = STRBUF_INIT;
	struct strv allowed = STRV_INIT;
	struct spec_require r1 = { .symbol = (char *)"CONFIG_NUMA", .value = (char *)"y" };
	struct spec_require r2 = { .symbol = (char *)"CONFIG_CPUMASK_OFFSTACK", .value = (char *)"y" };
	struct spec_require r3 = { .symbol = (char *)"CONFIG_LOCALVERSION", .value = (char *)"-x" };
	struct spec_require r4 = { .symbol = (char *)"CONFIG_KASAN", .value = (char *)"n" };
	const struct spec_require *req[] = { &r1, &r2, &r3, &r4 };
	struct kconfig_check checks[4];

	(void)state;
	kconfig_parse("# comment\nCONFIG_NUMA=y\n# CONFIG_CPUMASK_OFFSTACK is not set\nCONFIG_NR_CPUS=64\n"
		      "CONFIG_LOCALVERSION=\"-x\"\n",
		      &a);
	assert_int_equal(a.n, 4);
	assert_string_equal(kconfig_get(&a, "CONFIG_NR_CPUS"), "64");
	assert_string_equal(kconfig_get(&a, "CONFIG_CPUMASK_OFFSTACK"), "n");
	assert_string_equal(kconfig_get(&a, "CONFIG_ABSENT"), "n");
	assert_int_equal(kconfig_check_require(&a, req, 4, checks), 1);
	assert_true(checks[0].ok);
	assert_false(checks[1].ok);
	assert_string_equal(checks[1].actual, "n");
	assert_true(checks[2].ok); /* quoted strings compare by content */
	assert_true(checks[3].ok); /* absent reads as n */

	kconfig_parse("CONFIG_NUMA=y\nCONFIG_CPUMASK_OFFSTACK=y\nCONFIG_NR_CPUS=64\nCONFIG_LOCALVERSION=\"-x\"\n"
		      "CONFIG_SCHED_RATELIMIT=y\n",
		      &b);
	assert_int_equal(kconfig_diff(&a, &b, NULL, &diff), 2);
	assert_string_equal(diff.buf, "CONFIG_CPUMASK_OFFSTACK: n -> y\nCONFIG_SCHED_RATELIMIT: n -> y\n");
	strbuf_reset(&diff);
	strv_push(&allowed, "CONFIG_SCHED_RATELIMIT");
	assert_int_equal(kconfig_diff(&a, &b, &allowed, &diff), 1);
	kconfig_release(&a);
	kconfig_release(&b);
	strbuf_release(&diff);
	strv_release(&allowed);
}

/* start: the nearest up the chain, defconfig when none; a bad value names its place */
static void test_variant_start(void **state)
{
	static const char *const y =
		"version: 1\n"
		"kernels:\n"
		"  small:\n"
		"    start: tinyconfig\n"
		"  child:\n"
		"    from: small\n"
		"  none:\n"
		"    start: allnoconfig\n"
		"  grand:\n"
		"    from: child\n"
		"    start: defconfig\n";
	static const char *const bad = "version: 1\nkernels:\n  k:\n    start: smallconfig\n";
	static const struct spec_load_opts opts = { .no_include = true };
	struct diags d = { 0 };
	struct spec *s = NULL;
	struct kvariant v = { 0 };

	(void)state;
	assert_int_equal(spec_load_buffer("k.yaml", y, strlen(y), &opts, &s, &d), 0);
	assert_int_equal(kvariant_resolve(s, "child", &v, &d), 0);
	assert_string_equal(v.start, "tinyconfig");
	kvariant_release(&v);
	assert_int_equal(kvariant_resolve(s, "none", &v, &d), 0);
	assert_string_equal(v.start, "allnoconfig");
	kvariant_release(&v);
	assert_int_equal(kvariant_resolve(s, "grand", &v, &d), 0);
	assert_string_equal(v.start, "defconfig");
	kvariant_release(&v);
	spec_free(s);
	s = NULL;
	assert_true(spec_load_buffer("k.yaml", bad, strlen(bad), &opts, &s, &d) < 0);
	assert_true(d.n >= 1);
	assert_string_equal(d.v[0].file, "k.yaml");
	assert_int_equal(d.v[0].line, 4);
	assert_int_equal(d.v[0].col, 12);
	assert_non_null(strstr(d.v[0].msg, "start must be defconfig, tinyconfig or allnoconfig, not 'smallconfig'"));
	spec_free(s);
	diags_release(&d);
}

static void test_variants(void **state)
{
	static const char *const y =
		"version: 1\n"
		"kernels:\n"
		"  base:\n"
		"    config: [" DATA "/configs/guest.config]\n"
		"    require: {CONFIG_NUMA: y, CONFIG_SMP: y}\n"
		"    cmdline: quiet\n"
		"  mid:\n"
		"    from: base\n"
		"    patches: [" DATA "/kpatches/0001-demo-change-1.patch]\n"
		"    config: [" DATA "/configs/guest.config]\n"
		"    require: {CONFIG_SMP: n}\n"
		"  top:\n"
		"    from: mid\n"
		"    patches: " DATA "/kpatches\n"
		"    sweep: [1, 2]\n";
	static const struct spec_load_opts opts = { .no_include = true };
	struct diags d = { 0 };
	struct spec *s = NULL;
	struct kvariant v = { 0 };
	struct strv names = STRV_INIT;
	char *lv;

	(void)state;
	assert_int_equal(spec_load_buffer("k.yaml", y, strlen(y), &opts, &s, &d), 0);
	assert_int_equal(kvariant_resolve(s, "top@2", &v, &d), 0);
	/* ancestors first: mid's one patch, then the first two of top's folder */
	assert_int_equal(v.patches.n, 3);
	assert_true(str_endswith(v.patches.v[0], "0001-demo-change-1.patch"));
	assert_true(str_endswith(v.patches.v[2], "0002-demo-change-2.patch"));
	assert_true(v.patches.v[0][0] == '/'); /* absolute for commands run elsewhere */
	assert_int_equal(v.configs.n, 2);
	assert_int_equal(v.nrequire, 2);
	assert_string_equal(v.require[0]->symbol, "CONFIG_NUMA");
	assert_string_equal(v.require[1]->value, "n"); /* mid overrides base */
	assert_string_equal(v.cmdline, "quiet");
	assert_string_equal(v.source->package, "linux-source-6.1");
	assert_string_equal(v.start, "defconfig"); /* none given up the chain */
	kvariant_release(&v);
	assert_int_equal(kvariant_resolve(s, "top@3", &v, &d), -ENOENT);
	assert_int_equal(kvariant_resolve(s, "nope", &v, &d), -ENOENT);
	kvariant_names(s, &names);
	assert_int_equal(names.n, 5);
	assert_string_equal(names.v[3], "top@1");
	lv = kvariant_localversion("Top@2", "0123456789abcdef");
	assert_string_equal(lv, "-lab-top.2-01234567");
	free(lv);
	strv_release(&names);
	spec_free(s);
	diags_release(&d);
}

/* One member of a test archive: a file (data), a folder (type 'd'), a
 * symlink ('l', data is its target), a hard link ('h', data names the
 * member) or a FIFO ('p'). */
struct member {
	char type;
	const char *name, *data;
	unsigned mode;
};

static char *make_tar(const char *dir, const struct member *m, size_t n, bool xz)
{
	char *path = xasprintf("%s/t.tar%s", dir, xz ? ".xz" : "");
	struct archive *a = archive_write_new();

	archive_write_set_format_pax_restricted(a);
	if (xz)
		archive_write_add_filter_xz(a);
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		size_t len = m[i].type == 'f' ? strlen(m[i].data) : 0;

		archive_entry_set_pathname(e, m[i].name);
		archive_entry_set_perm(e, m[i].mode ? m[i].mode : 0644);
		archive_entry_set_mtime(e, 1000000000, 0);
		archive_entry_set_size(e, (la_int64_t)len);
		switch (m[i].type) {
		case 'd': archive_entry_set_filetype(e, AE_IFDIR); break;
		case 'l': archive_entry_set_filetype(e, AE_IFLNK); archive_entry_set_symlink(e, m[i].data); break;
		case 'h': archive_entry_set_filetype(e, AE_IFREG); archive_entry_set_hardlink(e, m[i].data); break;
		case 'p': archive_entry_set_filetype(e, AE_IFIFO); break;
		default: archive_entry_set_filetype(e, AE_IFREG);
		}
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (len)
			assert_int_equal(archive_write_data(a, m[i].data, len), (la_ssize_t)len);
		archive_entry_free(e);
	}
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	return path;
}

/* Unpack `m` into a fresh dir/into with tarball_extract; its result, why in err. */
static int unpack_members(const char *dir, const struct member *m, size_t n, unsigned strip, struct strbuf *err)
{
	char *tar = make_tar(dir, m, n, false), *into = path_join(dir, "into");
	int fd, r;

	fs_remove_tree(into);
	assert_int_equal(mkdir(into, 0755), 0);
	fd = open(into, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	strbuf_reset(err);
	r = tarball_extract(tar, fd, strip, NULL, err);
	close(fd);
	unlink(tar);
	free(tar);
	free(into);
	return r;
}

static void test_tarball_extract(void **state)
{
	char tmpl[] = "/tmp/lab-test-tar.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	static const struct member good[] = {
		{ 'd', "linux-6.1/", NULL, 0755 },
		{ 'f', "linux-6.1/Makefile", "VERSION = 6\n", 0644 },
		{ 'f', "linux-6.1/scripts/setlocalversion", "#!/bin/sh\n", 0755 },
		{ 'l', "linux-6.1/scripts/dtc/include-prefixes/arm", "../../../arch/arm/boot/dts", 0 },
		{ 'f', "linux-6.1/arch/arm/boot/dts/a.dts", "/dts-v1/;\n", 0644 },
		{ 'h', "linux-6.1/Makefile.copy", "linux-6.1/Makefile", 0 },
	};
	struct strbuf err = STRBUF_INIT;
	char *tar, *into, *p, *s;
	struct stat st;
	char link[256];
	size_t members = 0;
	ssize_t n;
	int fd;

	(void)state;
	assert_non_null(dir);
	/* xz-compressed, the first component stripped, as linux-source-6.1.tar.xz is unpacked */
	tar = make_tar(dir, good, sizeof(good) / sizeof(good[0]), true);
	into = path_join(dir, "into");
	assert_int_equal(mkdir(into, 0755), 0);
	fd = open(into, O_RDONLY | O_DIRECTORY);
	assert_int_equal(tarball_extract(tar, fd, 1, &members, &err), 0);
	close(fd);
	assert_int_equal(members, 5); /* the top folder itself is not one */
	p = path_join(into, "Makefile");
	s = slurp(p);
	assert_string_equal(s, "VERSION = 6\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_mtime, 1000000000);
	assert_int_equal(st.st_nlink, 2); /* Makefile.copy is a hard link to it */
	free(s);
	free(p);
	p = path_join(into, "scripts/setlocalversion");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	free(p);
	p = path_join(into, "scripts/dtc/include-prefixes/arm");
	n = readlink(p, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "../../../arch/arm/boot/dts");
	free(p);
	p = path_join(into, "scripts/dtc/include-prefixes/arm/a.dts");
	s = slurp(p);
	assert_string_equal(s, "/dts-v1/;\n");
	free(s);
	free(p);
	free(into);
	unlink(tar);
	free(tar);
	strbuf_release(&err);
	fs_remove_tree(dir);
}

static void test_tarball_hostile(void **state)
{
	char tmpl[] = "/tmp/lab-test-tar.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	static const struct member dotdot[] = { { 'f', "top/../../evil", "x", 0 } };
	static const struct member absolute[] = { { 'f', "/tmp/evil", "x", 0 } };
	static const struct member through_link[] = {
		{ 'l', "top/a/up", "..", 0 }, /* inside: top itself */
		{ 'l', "top/out", "../..", 0 },
	};
	static const struct member write_through[] = {
		{ 'l', "top/d", "sub", 0 },
		{ 'f', "top/d/x", "x", 0 },
	};
	static const struct member abs_link[] = { { 'l', "top/etc", "/etc", 0 } };
	static const struct member hard_out[] = { { 'h', "top/passwd", "/etc/passwd", 0 } };
	static const struct member fifo[] = { { 'p', "top/fifo", NULL, 0 } };
	static const struct member setuid[] = { { 'f', "top/su", "x", 04755 } };
	struct strbuf err = STRBUF_INIT;
	char *p;
	struct stat st;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(unpack_members(dir, dotdot, 1, 1, &err), -EINVAL);
	assert_int_equal(unpack_members(dir, absolute, 1, 0, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "/tmp/evil"));
	assert_int_equal(unpack_members(dir, through_link, 2, 1, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "'out': a symlink that points outside the tree"));
	/* a symlink inside is fine, but nothing is written through it */
	assert_true(unpack_members(dir, write_through, 2, 1, &err) < 0);
	p = path_join(dir, "into/sub/x");
	assert_int_not_equal(stat(p, &st), 0);
	free(p);
	assert_int_equal(unpack_members(dir, abs_link, 1, 1, &err), -EINVAL);
	assert_true(unpack_members(dir, hard_out, 1, 1, &err) < 0);
	assert_int_equal(unpack_members(dir, fifo, 1, 1, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "FIFO"));
	/* setuid and the like are not kept */
	assert_int_equal(unpack_members(dir, setuid, 1, 1, &err), 0);
	p = path_join(dir, "into/su");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	free(p);
	/* what a guest's `tar -C out -cf - .` makes: "./" names, a hard link among them */
	{
		static const struct member guest[] = {
			{ 'd', "./", NULL, 0755 },
			{ 'f', "./a.raw", "ops 1\n", 0 },
			{ 'h', "./b.raw", "./a.raw", 0 },
			{ 'd', "./mon/", NULL, 0755 },
			{ 'f', "./mon/vmstat.raw", "v\n", 0 },
		};
		char *b;

		assert_int_equal(unpack_members(dir, guest, ELEMENTSOF(guest), 0, &err), 0);
		p = path_join(dir, "into/b.raw");
		b = slurp(p);
		assert_string_equal(b, "ops 1\n");
		free(b);
		free(p);
		p = path_join(dir, "into/mon/vmstat.raw");
		assert_int_equal(stat(p, &st), 0);
		free(p);
	}
	/* nothing landed beside the folder */
	p = path_join(dir, "evil");
	assert_int_not_equal(stat(p, &st), 0);
	free(p);
	strbuf_release(&err);
	fs_remove_tree(dir);
}

/* A modules tree packed as the host gets it, read back. */
static void test_tarball_create(void **state)
{
	char tmpl[] = "/tmp/lab-test-tar.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	struct strbuf err = STRBUF_INIT;
	char *mods, *f, *out, *back, *s;
	char link[64];
	ssize_t n;
	int fd;

	(void)state;
	assert_non_null(dir);
	mods = path_join(dir, "modules");
	f = path_join(mods, "lib/modules/6.1.0-lab/kernel/a.ko");
	assert_int_equal(path_mkdir_p(f, 0755), 0);
	assert_int_equal(rmdir(f), 0);
	assert_int_equal(fs_write_atomic(f, "ko", 2, 0644), 0);
	free(f);
	f = path_join(mods, "lib/modules/6.1.0-lab/build");
	assert_int_equal(symlink("kernel/a.ko", f), 0);
	free(f);
	out = path_join(dir, "modules.tar");
	assert_int_equal(tarball_create(mods, "lib", out, &err), 0);
	/* the host's tar unpacks it at /; here: into back/ */
	back = path_join(dir, "back");
	assert_int_equal(mkdir(back, 0755), 0);
	fd = open(back, O_RDONLY | O_DIRECTORY);
	assert_int_equal(tarball_extract(out, fd, 0, NULL, &err), 0);
	close(fd);
	f = path_join(back, "lib/modules/6.1.0-lab/kernel/a.ko");
	s = slurp(f);
	assert_string_equal(s, "ko");
	free(s);
	free(f);
	f = path_join(back, "lib/modules/6.1.0-lab/build");
	n = readlink(f, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "kernel/a.ko");
	free(f);
	free(back);
	free(out);
	free(mods);
	strbuf_release(&err);
	fs_remove_tree(dir);
}

/* A kernel build's progress line. */
static void test_build_progress(void **state)
{
	static const struct {
		size_t done, expected;
		double elapsed;
		const char *want;
	} cases[] = {
		{ 812, 1948, 190, "812/1948 objects, 3m10s, ETA 4m26s" },
		{ 19, 1948, 5, "19/1948 objects, 5s" },      /* too few for an ETA */
		{ 812, 0, 190, "812 objects, 3m10s" },       /* a first build here */
		{ 2000, 1948, 600, "2000 objects, 10m00s" }, /* past the estimate */
		{ 1948, 1948, 600, "1948/1948 objects, 10m00s" },
		{ 1, 0, 0, "1 object, 0s" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		kbuild_format_progress(cases[i].done, cases[i].expected, cases[i].elapsed, &sb);
		assert_string_equal(sb.buf, cases[i].want);
	}
}

static void assert_file_contents(const char *path, const char *want)
{
	char *got = slurp(path);

	assert_string_equal(got, want);
	free(got);
}

/* git -C dir ARGS... with a fixed identity and date; its stdout in out (may be NULL). */
static void git(const char *dir, struct strbuf *out, ...)
{
	_cleanup_command_ struct command c = { 0 };
	va_list ap;
	const char *a;

	command_init(&c, "git");
	command_args(&c, "-C", dir, NULL);
	va_start(ap, out);
	while ((a = va_arg(ap, const char *)))
		command_arg(&c, a);
	va_end(ap);
	command_env(&c, "GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z");
	command_env(&c, "GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z");
	command_env(&c, "GIT_COMMITTER_NAME", "C O Mitter");
	command_env(&c, "GIT_COMMITTER_EMAIL", "c@example.org");
	command_env(&c, "GIT_CONFIG_GLOBAL", "/dev/null");
	c.out = out;
	assert_int_equal(command_run(&c), 0);
}

/* A git source (lab.yaml `type: git`): any commit or ref of a repository,
 * here a local one, exported as the tree of that commit, with its id,
 * subject and author; the id alone is its identity. */
static void test_git_source(void **state)
{
	char tmpl[] = "/tmp/lab-git-XXXXXX";
	const char *dir = mkdtemp(tmpl);
	_cleanup_free_ char *repo = NULL, *cache = NULL, *file = NULL, *got = NULL;
	_cleanup_strbuf_ struct strbuf first = STRBUF_INIT, head = STRBUF_INIT;
	struct spec_source src = { .name = "g", .type = SOURCE_GIT };
	struct ksource k = { 0 }, k2 = { 0 };
	struct diags d = { 0 };

	(void)state;
	assert_non_null(dir);
	repo = path_join(dir, "repo");
	cache = path_join(dir, "cache");
	assert_int_equal(path_mkdir_p(repo, 0755), 0);
	git(repo, NULL, "init", "-q", "-b", "master", NULL);
	file = path_join(repo, "Makefile");
	assert_int_equal(fs_write_atomic(file, "v1\n", 3, 0644), 0);
	git(repo, NULL, "add", "Makefile", NULL);
	git(repo, NULL, "-c", "user.name=A U Thor", "-c", "user.email=a@example.org", "commit", "-q", "-m",
	    "sched: first\n\nbody", NULL);
	git(repo, &first, "rev-parse", "HEAD", NULL);
	assert_int_equal(fs_write_atomic(file, "v2\n", 3, 0644), 0);
	git(repo, NULL, "-c", "user.name=B \x1b[31mRed", "-c", "user.email=b@example.org", "commit", "-q", "-a", "-m",
	    "proc: udelay(200) in every read", NULL);
	git(repo, &head, "rev-parse", "HEAD", NULL);
	strbuf_setlen(&first, 40);
	strbuf_setlen(&head, 40);

	/* a ref relative to a branch: the first commit */
	src.url = repo;
	src.ref = "master~1";
	assert_int_equal(ksource_prepare(cache, &src, NULL, &k, &d), 0);
	assert_string_equal(ksource_commit(k.identity), first.buf);
	assert_string_equal(k.subject, "sched: first");
	assert_string_equal(k.author, "A U Thor <a@example.org>");
	got = xasprintf("git:%s", first.buf);
	assert_string_equal(k.identity, got);
	free(file);
	file = path_join(k.tree, "Makefile");
	assert_file_contents(file, "v1\n");

	/* a commit id: the second, its author's words as they are (escaped where printed) */
	src.ref = head.buf;
	assert_int_equal(ksource_prepare(cache, &src, NULL, &k2, &d), 0);
	assert_string_equal(ksource_commit(k2.identity), head.buf);
	assert_string_equal(k2.subject, "proc: udelay(200) in every read");
	assert_string_equal(k2.author, "B \x1b[31mRed <b@example.org>");
	assert_string_not_equal(k.key, k2.key);
	free(file);
	file = path_join(k2.tree, "Makefile");
	assert_file_contents(file, "v2\n");

	/* no such ref: an error naming it */
	ksource_release(&k2);
	src.ref = "no-such-ref";
	assert_int_equal(ksource_prepare(cache, &src, NULL, &k2, &d), -ENOENT);
	assert_true(d.n > 0 && strstr(d.v[d.n - 1].msg, "no-such-ref"));
	/* an option in disguise is refused before git sees it */
	src.ref = "--upload-pack=touch /tmp/x";
	assert_int_equal(ksource_prepare(cache, &src, NULL, &k2, &d), -EINVAL);
	ksource_release(&k);
	ksource_release(&k2);
	diags_release(&d);
	fs_remove_tree(dir);
}

/* commit -a (or what is staged) with message m as author `who`; its id in id */
static void commit(const char *repo, const char *m, struct strbuf *id)
{
	git(repo, NULL, "add", "-A", ".", NULL);
	git(repo, NULL, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", "commit", "-q", "-m", m, NULL);
	strbuf_reset(id);
	git(repo, id, "rev-parse", "HEAD", NULL);
	strbuf_setlen(id, 40);
}

static void put(const char *repo, const char *rel, const char *text)
{
	_cleanup_free_ char *f = path_join(repo, rel), *dir = path_dirname(f);

	assert_int_equal(path_mkdir_p(dir, 0755), 0);
	assert_int_equal(fs_write_atomic(f, text, strlen(text), 0644), 0);
}

/* diff -r of two trees, symlinks compared as links: 0 when the same */
static int same_trees(const char *a, const char *b)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	int r;

	command_init(&c, "diff");
	command_args(&c, "-r", "--no-dereference", a, b, NULL);
	c.out = &out;
	c.err = &out;
	r = command_run(&c);
	if (r)
		print_message("%s", out.buf);
	return r;
}

static void set_old_mtimes(const char *tree, const char *const *rels)
{
	for (size_t i = 0; rels[i]; i++) {
		_cleanup_free_ char *f = path_join(tree, rels[i]);
		struct timespec ts[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };

		assert_int_equal(utimensat(AT_FDCWD, f, ts, AT_SYMLINK_NOFOLLOW), 0);
	}
}

static time_t mtime_of(const char *tree, const char *rel)
{
	_cleanup_free_ char *f = path_join(tree, rel);
	struct stat st;

	assert_int_equal(lstat(f, &st), 0);
	return st.st_mtime;
}

/*
 * The commits of a git source for a bisect: the range as git sees it
 * (a merge with its two parents, or the first-parent line), refused
 * ranges named; each commit exported from the last export (a hard-link
 * copy and the files they differ in: the same tree as a full export), and
 * one work tree carried from commit to commit: what the commits differ in
 * is a fresh file, everything else keeps its mtime, so make rebuilds only
 * what changed.
 */
static void test_git_commits(void **state)
{
	char tmpl[] = "/tmp/lab-gitc-XXXXXX";
	const char *dir = mkdtemp(tmpl);
	_cleanup_free_ char *repo = NULL, *cache = NULL, *work = NULL, *full = NULL, *wsrc = NULL, *tarf = NULL;
	_cleanup_strbuf_ struct strbuf c0 = STRBUF_INIT, c1 = STRBUF_INIT, c2 = STRBUF_INIT, c3 = STRBUF_INIT,
				       c4 = STRBUF_INIT, c5 = STRBUF_INIT;
	struct spec_source src = { .name = "g", .type = SOURCE_GIT };
	struct ksource k0 = { 0 }, k5 = { 0 };
	struct kcommit *r = NULL;
	size_t n = 0;
	struct diags d = { 0 };
	static const char *const olds[] = { "Makefile", "a/keep.c", "star*.c", NULL };

	(void)state;
	assert_non_null(dir);
	repo = path_join(dir, "repo");
	cache = path_join(dir, "cache");
	work = path_join(dir, "work");
	assert_int_equal(path_mkdir_p(repo, 0755), 0);
	git(repo, NULL, "init", "-q", "-b", "master", NULL);
	put(repo, "Makefile", "v1\n");
	put(repo, "a/keep.c", "keep\n");
	put(repo, "a/gone.c", "gone\n");
	put(repo, "star*.c", "s1\n");
	{
		_cleanup_free_ char *l = path_join(repo, "link");

		assert_int_equal(symlink("Makefile", l), 0);
	}
	commit(repo, "base: the good commit", &c0);
	git(repo, NULL, "checkout", "-q", "-b", "side", NULL);
	put(repo, "b/new.h", "new\n");
	commit(repo, "side: a new header", &c3);
	git(repo, NULL, "checkout", "-q", "master", NULL);
	put(repo, "star*.c", "s2\n");
	commit(repo, "star: s2", &c1);
	git(repo, NULL, "rm", "-q", "a/gone.c", NULL);
	commit(repo, "a: gone", &c2);
	git(repo, NULL, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", "merge", "-q", "--no-ff", "-m",
	    "Merge branch 'side'", "side", NULL);
	strbuf_reset(&c4);
	git(repo, &c4, "rev-parse", "HEAD", NULL);
	strbuf_setlen(&c4, 40);
	put(repo, "Makefile", "v2\n");
	{
		_cleanup_free_ char *l = path_join(repo, "link");

		unlink(l);
		assert_int_equal(symlink("a/keep.c", l), 0);
	}
	commit(repo, "make: v2", &c5);
	src.url = repo;
	src.ref = "master";

	/* the range: the good commit, then five, parents first, the merge with both parents */
	assert_int_equal(ksource_git_range(cache, &src, c0.buf, "master", false, 100, &r, &n, NULL, &d), 0);
	assert_int_equal(n, 6);
	assert_string_equal(r[0].id, c0.buf);
	assert_string_equal(r[0].subject, "base: the good commit");
	assert_string_equal(r[5].id, c5.buf);
	assert_string_equal(r[5].author, "Dev <dev@example.org>");
	for (size_t i = 1; i < n; i++) {
		for (size_t p = 0; p < r[i].nparents; p++)
			assert_true(r[i].parents[p] < i);
		if (!strcmp(r[i].id, c4.buf)) {
			assert_int_equal(r[i].nparents, 2);
			assert_true(r[i].parents[0] && r[i].parents[1]);
			assert_string_equal(r[i].subject, "Merge branch 'side'");
		} else if (!strcmp(r[i].id, c3.buf) || !strcmp(r[i].id, c1.buf)) {
			assert_int_equal(r[i].nparents, 1);
			assert_int_equal(r[i].parents[0], 0); /* the good commit's child */
		}
	}
	kcommits_free(r, n);
	/* the first-parent line: the side branch is not on it, the merge has one parent */
	assert_int_equal(ksource_git_range(cache, &src, c0.buf, c5.buf, true, 100, &r, &n, NULL, &d), 0);
	assert_int_equal(n, 5);
	assert_string_equal(r[1].id, c1.buf);
	assert_string_equal(r[2].id, c2.buf);
	assert_string_equal(r[3].id, c4.buf);
	assert_int_equal(r[3].nparents, 1);
	assert_int_equal(r[3].parents[0], 2);
	kcommits_free(r, n);
	/* refused: not an ancestor, no such ref, too many */
	assert_int_equal(ksource_git_range(cache, &src, c3.buf, c2.buf, false, 100, &r, &n, NULL, &d), -EINVAL);
	assert_non_null(strstr(d.v[d.n - 1].msg, "is not an ancestor of the bad commit"));
	assert_int_equal(ksource_git_range(cache, &src, c0.buf, "no-such", false, 100, &r, &n, NULL, &d), -ENOENT);
	assert_non_null(strstr(d.v[d.n - 1].msg, "'no-such' names no commit"));
	assert_int_equal(ksource_git_range(cache, &src, c0.buf, c5.buf, false, 4, &r, &n, NULL, &d), -E2BIG);
	assert_non_null(strstr(d.v[d.n - 1].msg, "more than 4 commits between"));
	assert_int_equal(ksource_git_range(cache, &src, "--output=/tmp/x", c5.buf, false, 4, &r, &n, NULL, &d),
			 -EINVAL);

	/* exports: c0 in full, c5 from c0's, the same tree as git archive makes */
	src.ref = c0.buf;
	assert_int_equal(ksource_prepare(cache, &src, NULL, &k0, &d), 0);
	{
		_cleanup_free_ char *want = xasprintf("git-url:%s", repo);

		assert_string_equal(k0.lineage, want);
	}
	assert_non_null(k0.lineage_key);
	src.ref = c5.buf;
	assert_int_equal(ksource_prepare(cache, &src, NULL, &k5, &d), 0);
	assert_string_equal(k0.lineage_key, k5.lineage_key);
	{
		_cleanup_free_ char *a = path_join(k0.tree, "a/keep.c"), *b = path_join(k5.tree, "a/keep.c");

		assert_int_equal(inode(a), inode(b)); /* shared, not copied */
	}
	full = path_join(dir, "full");
	tarf = path_join(dir, "c5.tar");
	git(repo, NULL, "archive", "--prefix=linux/", "-o", tarf, c5.buf, NULL);
	{
		_cleanup_close_ int fd = -1;
		_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;

		assert_int_equal(path_mkdir_p(full, 0755), 0);
		fd = open(full, O_RDONLY | O_DIRECTORY);
		assert_int_equal(tarball_extract(tarf, fd, 1, NULL, &err), 0);
	}
	assert_int_equal(same_trees(full, k5.tree), 0);

	/* one work tree, moved from c0 to c5 */
	wsrc = path_join(work, "src");
	assert_int_equal(path_mkdir_p(work, 0755), 0);
	assert_int_equal(worktree_ensure(work, k0.tree, NULL, &d, NULL), 0);
	assert_int_equal(same_trees(k0.tree, wsrc), 0);
	set_old_mtimes(wsrc, olds);
	/* a patched file: the move puts the new commit's back */
	put(wsrc, "Makefile", "patched\n");
	set_old_mtimes(wsrc, olds);
	assert_int_equal(worktree_ensure(work, k5.tree, NULL, &d, NULL), 0);
	assert_int_equal(same_trees(k5.tree, wsrc), 0);
	assert_true(mtime_of(wsrc, "a/keep.c") == 1000000000); /* unchanged: make leaves it */
	assert_true(mtime_of(wsrc, "Makefile") > 1000000000);  /* changed: rebuilt */
	assert_true(mtime_of(wsrc, "star*.c") > 1000000000);
	{
		_cleanup_free_ char *g = path_join(wsrc, "a/gone.c"), *applied = path_join(work, "applied");

		assert_int_not_equal(access(g, F_OK), 0);
		assert_int_not_equal(access(applied, F_OK), 0);
	}
	/* and back: the same again */
	assert_int_equal(worktree_ensure(work, k0.tree, NULL, &d, NULL), 0);
	assert_int_equal(same_trees(k0.tree, wsrc), 0);
	ksource_release(&k0);
	ksource_release(&k5);
	diags_release(&d);
	fs_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch_parse),
		cmocka_unit_test(test_build_progress),
		cmocka_unit_test(test_series_list),
		cmocka_unit_test_setup_teardown(test_worktree_switch, wt_setup, wt_teardown),
		cmocka_unit_test_setup_teardown(test_worktree_reject, wt_setup, wt_teardown),
		cmocka_unit_test_setup_teardown(test_worktree_patches_gone, wt_setup, wt_teardown),
		cmocka_unit_test(test_touched_objects),
		cmocka_unit_test(test_touched_objects_cycle),
		cmocka_unit_test(test_patch_symbols),
		cmocka_unit_test(test_kconfig),
		cmocka_unit_test(test_variants),
		cmocka_unit_test(test_variant_start),
		cmocka_unit_test(test_tarball_extract),
		cmocka_unit_test(test_tarball_hostile),
		cmocka_unit_test(test_tarball_create),
		cmocka_unit_test(test_git_source),
		cmocka_unit_test(test_git_commits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
