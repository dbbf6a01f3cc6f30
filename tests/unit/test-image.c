/* SPDX-License-Identifier: MIT */
/*
 * Image recipes, their keys, the NoCloud seed formatters (golden files in
 * tests/data/seed; t0600-image.sh runs `cloud-init schema` over them) and
 * the YAML/JSON writers and readers they use.
 */
#include "unit.h"
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "image/recipe.h"
#include "image/seed.h"
#include "ssh/key.h"
#include "spec/spec.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/json-read.h"
#include "util/path.h"
#include "util/yamlw.h"

#define SEED "tests/data/seed"

static const char full_recipe[] =
	"description: test\n"
	"suite: bookworm\n"
	"packages: [stress-ng, rt-tests]\n"
	"files:\n"
	"  - {path: /etc/lab-test, content: \"x\\n\", mode: \"0600\"}\n"
	"commands: [\"echo hi\"]\n"
	"services: {disable: [postgresql.service], mask: [cron.service]}\n";

static struct recipe *load(const char *text)
{
	_cleanup_diags_ struct diags d = { 0 };
	struct recipe *r = NULL;

	if (recipe_load_buffer("test.yaml", text, strlen(text), "t", &r, &d) < 0) {
		for (size_t i = 0; i < d.n; i++)
			print_error("%u:%u: %s\n", d.v[i].line, d.v[i].col, d.v[i].msg);
		fail_msg("recipe did not load");
	}
	return r;
}

static void test_recipe_defaults(void **state)
{
	_cleanup_recipe_ struct recipe *r = load(full_recipe);

	(void)state;
	assert_string_equal(r->suite, "bookworm");
	assert_string_equal(r->mirror, RECIPE_DEFAULT_MIRROR);
	assert_string_equal(r->variant, "apt");
	assert_int_equal(r->components.n, 1);
	assert_string_equal(r->components.v[0], "main");
	assert_true(r->size == RECIPE_DEFAULT_SIZE);
	assert_int_equal(r->packages.n, 2);
	assert_int_equal(r->nfiles, 1);
	assert_int_equal(r->files[0].mode, 0600);
	assert_string_equal(r->files[0].content, "x\n");
	assert_int_equal(r->disable.n, 1);
	assert_int_equal(r->mask.n, 1);
	assert_int_equal(r->commands.n, 1);
}

static void test_recipe_errors_positioned(void **state)
{
	static const char bad[] = "suite: bookworm\nsize: 12\nfiles:\n  - {path: /a/../b, content: x}\n";
	_cleanup_diags_ struct diags d = { 0 };
	struct recipe *r = NULL;

	(void)state;
	assert_int_equal(recipe_load_buffer("bad.yaml", bad, strlen(bad), "t", &r, &d), -EINVAL);
	assert_null(r);
	assert_int_equal(d.n, 2);
	diags_sort(&d);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 7);
	assert_int_equal(d.v[1].line, 4);
	assert_int_equal(d.v[1].col, 12);
	assert_non_null(strstr(d.v[1].msg, "absolute and plain"));
}

static void key_of(const char *text, const char *layer, char out[SHA256_HEX_LEN + 1])
{
	_cleanup_recipe_ struct recipe *r = load(text);
	_cleanup_diags_ struct diags d = { 0 };

	assert_int_equal(recipe_key(r, layer, out, &d), 0);
}

static void test_recipe_key(void **state)
{
	char a[SHA256_HEX_LEN + 1], b[SHA256_HEX_LEN + 1], c[SHA256_HEX_LEN + 1];
	char tmpl[] = "/tmp/lab-layer-XXXXXX";
	_cleanup_free_ char *f = NULL;

	(void)state;
	key_of("suite: bookworm\npackages: [a1, b1]\n", NULL, a);
	key_of("suite: bookworm\npackages: [b1, a1]\n", NULL, b);
	assert_string_equal(a, b); /* package order does not matter */
	key_of("suite: bookworm\npackages: [a1, b2]\n", NULL, c);
	assert_string_not_equal(a, c);
	key_of("suite: bookworm\npackages: [a1, b1]\ncommands: [x]\n", NULL, c);
	assert_string_not_equal(a, c);
	key_of("suite: trixie\npackages: [a1, b1]\n", NULL, c);
	assert_string_not_equal(a, c);
	key_of("suite: bookworm\npackages: [a1, b1]\nsize: 8G\n", NULL, c);
	assert_string_not_equal(a, c);

	/* every file of the layer is part of the key */
	assert_non_null(mkdtemp(tmpl));
	f = path_join(tmpl, "packages");
	assert_int_equal(fs_write_atomic(f, "udev\n", 5, 0644), 0);
	key_of("suite: bookworm\npackages: [a1, b1]\n", tmpl, b);
	assert_string_not_equal(a, b);
	assert_int_equal(fs_write_atomic(f, "udev\ncloud-init\n", 16, 0644), 0);
	key_of("suite: bookworm\npackages: [a1, b1]\n", tmpl, c);
	assert_string_not_equal(b, c);
	{
		_cleanup_recipe_ struct recipe *r = load("suite: bookworm\npackages: [a1, udev]\n");
		_cleanup_strv_ struct strv all = STRV_INIT;

		recipe_all_packages(r, tmpl, &all);
		assert_int_equal(all.n, 3); /* udev once */
		assert_string_equal(all.v[0], "udev");
		assert_string_equal(all.v[2], "a1");
	}
	unlink(f);
	rmdir(tmpl);
}

/* Fixed inputs: a real ed25519 key pair made for these tests, used nowhere else. */
static const char host_key[] =
	"-----BEGIN OPENSSH PRIVATE KEY-----\n"
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
	"QyNTUxOQAAACApSTSFaw94pboZij6cB17h3r4RxyAGGeGML7tFlIfADwAAAJBTzMfPU8zH\n"
	"zwAAAAtzc2gtZWQyNTUxOQAAACApSTSFaw94pboZij6cB17h3r4RxyAGGeGML7tFlIfADw\n"
	"AAAEBd/hSaOepkzwEO1kdGgrr3D61I9E8L6AedG4ZJzK1bySlJNIVrD3iluhmKPpwHXuHe\n"
	"vhHHIAYZ4Ywvu0WUh8APAAAAC2xhYi10ZXN0LXZtAQI=\n"
	"-----END OPENSSH PRIVATE KEY-----\n";
static const char host_pub[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClJNIVrD3iluhmKPpwHXuHevhHHIAYZ4Ywvu0WUh8AP lab-test-vm";
static const char lab_pub[] = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAZppvx6Gq0sW2Xdurgxcv1gaFClxCbbMcueVPkX0qeY lab";

static void format_case(const char *name, const struct seed_config *c)
{
	void (*fmt[])(const struct seed_config *, struct strbuf *) = {
		seed_format_meta_data, seed_format_user_data, seed_format_network_config, seed_format_lab_seed,
	};
	static const char *const files[] = { "meta-data", "user-data", "network-config", "lab-seed.sh" };
	_cleanup_diags_ struct diags d = { 0 };

	assert_int_equal(seed_config_check(c, &d), 0);
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		_cleanup_free_ char *path = xasprintf(SEED "/%s.%s", name, files[i]);

		fmt[i](c, &sb);
		assert_golden(path, sb.buf);
	}
}

static void test_seed_plain(void **state)
{
	struct seed_config c = {
		.instance_id = "lab-test-vm-1",
		.hostname = "test-vm",
		.authorized_key = lab_pub,
		.host_key = host_key,
		.host_key_pub = host_pub,
	};

	(void)state;
	format_case("plain", &c);
}

static void test_seed_experiment(void **state)
{
	static const struct spec_kv sysctl[] = {
		{ .key = (char *)"kernel.sched_autogroup_enabled", .value = (char *)"0" },
		{ .key = (char *)"vm.percpu_pagelist_high_fraction", .value = (char *)"0" },
		/* a value that must be escaped, not pasted */
		{ .key = (char *)"kernel.core_pattern", .value = (char *)"|/bin/sh -c \"x\\y\" 'z'" },
	};
	struct strv cg = STRV_INIT;
	struct seed_config c = {
		.instance_id = "lab-exp.0001",
		.hostname = "exp-0001",
		.authorized_key = lab_pub,
		.host_key = host_key,
		.host_key_pub = host_pub,
		.sysctl = sysctl,
		.nsysctl = ELEMENTSOF(sysctl),
		.cgroups = &cg,
		.modules_disk = true,
	};

	(void)state;
	strv_push(&cg, "lab/pg");
	strv_push(&cg, "lab/stress");
	format_case("experiment", &c);
	strv_release(&cg);
}

static void test_seed_rejects(void **state)
{
	struct strv cg = STRV_INIT;
	static const struct spec_kv bad_sysctl[] = { { .key = (char *)"vm.x y", .value = (char *)"1\n2" } };
	struct seed_config c = {
		.instance_id = "a\nb",
		.hostname = "bad_host",
		.authorized_key = "not a key",
		.host_key = "nope",
		.host_key_pub = host_pub,
		.sysctl = bad_sysctl,
		.nsysctl = 1,
		.cgroups = &cg,
	};
	_cleanup_diags_ struct diags d = { 0 };

	(void)state;
	strv_push(&cg, "../escape");
	strv_push(&cg, "/abs");
	strv_push(&cg, "lab/cgroup.procs");
	assert_int_equal(seed_config_check(&c, &d), -EINVAL);
	/* instance id, hostname, authorized key, host key, sysctl key and value, 3 cgroups */
	assert_int_equal(d.n, 9);
	strv_release(&cg);
}

static void test_seed_cgroups_of_experiment(void **state)
{
	char *a[] = { (char *)"lab/a" }, *ab[] = { (char *)"lab/a", (char *)"lab/b" }, *c[] = { (char *)"lab/c" };
	struct spec_param p1[] = { { .key = (char *)"cgroup", .values = a, .nvalues = 1 } };
	struct spec_param p2[] = { { .key = (char *)"cgroup", .values = ab, .nvalues = 2, .is_list = true } };
	struct spec_param p3[] = { { .key = (char *)"other", .values = c, .nvalues = 1 } };
	struct spec_job jobs[] = {
		{ .params = p1, .nparams = 1 },
		{ .params = p2, .nparams = 1 },
		{ .params = p3, .nparams = 1 },
	};
	struct spec_experiment e = { .jobs = jobs, .njobs = ELEMENTSOF(jobs) };
	_cleanup_strv_ struct strv cg = STRV_INIT;

	(void)state;
	seed_experiment_cgroups(&e, &cg);
	assert_int_equal(cg.n, 2);
	assert_string_equal(cg.v[0], "lab/a");
	assert_string_equal(cg.v[1], "lab/b");
}

/* A variant's modules reach the guest on a disk labelled lab-modules, made once per kernel. */
static void test_modules_disk(void **state)
{
	char tmpl[] = "/tmp/lab-kmod-XXXXXX";
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *ko = NULL, *disk = NULL, *again = NULL, *none = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_command_ struct command c = { 0 };
	struct stat st1, st2;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	/* no modules: no disk */
	assert_int_equal(image_modules_disk(tmpl, &none, &d), 0);
	assert_null(none);
	ko = xasprintf("%s/modules/lib/modules/6.1.0-lab/kernel/drivers/demo.ko", tmpl);
	{
		_cleanup_free_ char *dir = path_dirname(ko);

		assert_int_equal(path_mkdir_p(dir, 0755), 0);
	}
	assert_int_equal(fs_write_atomic(ko, "not really an ELF", 17, 0644), 0);
	assert_int_equal(image_modules_disk(tmpl, &disk, &d), 0);
	assert_non_null(disk);
	command_init(&c, "debugfs");
	command_args(&c, "-R", "ls -p /6.1.0-lab/kernel/drivers", disk, NULL);
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	assert_non_null(strstr(out.buf, "/demo.ko/"));
	command_release(&c);
	strbuf_reset(&out);
	command_init(&c, "e2label");
	command_arg(&c, disk);
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	assert_string_equal(out.buf, "lab-modules\n");
	/* made once: a second call reuses the file */
	assert_int_equal(stat(disk, &st1), 0);
	assert_int_equal(image_modules_disk(tmpl, &again, &d), 0);
	assert_string_equal(disk, again);
	assert_int_equal(stat(again, &st2), 0);
	assert_true(st1.st_ino == st2.st_ino && st1.st_mtime == st2.st_mtime);
	{
		_cleanup_command_ struct command rm = { 0 };

		command_init(&rm, "rm");
		command_args(&rm, "-rf", tmpl, NULL);
		command_run(&rm);
	}
}

/* lab's ssh key: made private, refused when another user could read or swap it */
static void test_ssh_key_private(void **state)
{
	char tmpl[] = "/tmp/lab-unit-key.XXXXXX";
	_cleanup_free_ char *cache = NULL, *key = NULL, *ssh = NULL, *key2 = NULL;
	struct diags d = { 0 };
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	cache = path_join(tmpl, "cache");
	ssh = path_join(cache, "ssh");
	assert_int_equal(path_mkdir_p(cache, 0755), 0);
	assert_int_equal(ssh_lab_key(cache, &key, NULL, &d), 0);
	assert_int_equal(stat(ssh, &st), 0);
	assert_int_equal(st.st_mode & 077, 0);
	/* a cache others may write to: they could swap the key */
	assert_int_equal(chmod(cache, 0777), 0);
	assert_int_equal(ssh_lab_key(cache, &key2, NULL, &d), -EPERM);
	assert_non_null(strstr(d.v[d.n - 1].msg, "other users can write to it (mode 0777"));
	assert_int_equal(chmod(cache, 0755), 0);
	/* a key others may read */
	assert_int_equal(chmod(key, 0644), 0);
	assert_int_equal(ssh_lab_key(cache, &key2, NULL, &d), -EPERM);
	assert_non_null(strstr(d.v[d.n - 1].msg, "other users can reach it (mode 0644"));
	assert_int_equal(chmod(key, 0600), 0);
	/* an ssh folder another user owns */
	if (geteuid() == 0) {
		assert_int_equal(chown(ssh, 4242, 4242), 0);
		assert_int_equal(ssh_lab_key(cache, &key2, NULL, &d), -EPERM);
		assert_non_null(strstr(d.v[d.n - 1].msg, "belongs to uid 4242"));
		assert_int_equal(chown(ssh, 0, 0), 0);
	}
	/* the key itself a symlink to another file */
	{
		_cleanup_free_ char *real = xasprintf("%s.real", key);

		assert_int_equal(rename(key, real), 0);
		assert_int_equal(symlink(real, key), 0);
		assert_int_equal(ssh_lab_key(cache, &key2, NULL, &d), -EPERM);
		assert_non_null(strstr(d.v[d.n - 1].msg, "not a regular file"));
	}
	assert_null(key2);
	diags_release(&d);
	fs_remove_tree(tmpl);
}

static void test_yaml_writers(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	(void)state;
	yaml_quote(&sb, "a\"b\\c\nd\te\x01");
	assert_string_equal(sb.buf, "\"a\\\"b\\\\c\\nd\\te\\x01\"");
	strbuf_reset(&sb);
	yaml_block(&sb, "line1\nline2\n", 2);
	assert_string_equal(sb.buf, "|\n  line1\n  line2\n");
	strbuf_reset(&sb);
	yaml_block(&sb, "no newline", 4);
	assert_string_equal(sb.buf, "|-\n    no newline\n");
	strbuf_reset(&sb);
	yaml_block(&sb, " leading blank\n", 2); /* not literal-safe: quoted */
	assert_string_equal(sb.buf, "\" leading blank\\n\"\n");
}

/* What lab writes, its one JSON reader reads back; damage is an error with its place. */
static void test_json_read_back(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *s1 = NULL, *s2 = NULL, *none = NULL, *err = NULL;
	struct json_doc *doc = NULL;
	struct json j;
	double v = 0;

	(void)state;
	json_init(&j, &sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "name", "a \"quoted\"\\ name\n\x01");
	json_kv_string(&j, "id", "abc");
	json_kv_uint(&j, "packages", 412);
	json_key(&j, "modules");
	json_bool(&j, true);
	json_object_end(&j);
	json_finish(&j);
	assert_int_equal(json_doc_parse(sb.buf, sb.len, &doc, &err), 0);
	s1 = json_doc_string(doc, "name");
	assert_string_equal(s1, "a \"quoted\"\\ name\n\x01");
	s2 = json_doc_string(doc, "id");
	assert_string_equal(s2, "abc");
	assert_int_equal(json_doc_number(doc, "packages", &v), 0);
	assert_true(v == 412);
	assert_true(json_doc_bool(doc, "modules"));
	none = json_doc_string(doc, "packages"); /* a number, not a string */
	assert_null(none);
	assert_int_equal(json_doc_number(doc, "missing", &v), -ENOENT);
	assert_int_equal(json_doc_number(doc, "id", &v), -EINVAL);
	json_doc_free(doc);
	/* damage: the place is named; duplicates and non-objects refused */
	assert_true(json_doc_parse("{\"a\": 1,\n \"b\": }", 17, &doc, &err) < 0);
	assert_non_null(strstr(err, "line 2"));
	free(err);
	assert_true(json_doc_parse("{\"a\": 1, \"a\": 2}", 16, &doc, &err) < 0);
	free(err);
	assert_true(json_doc_parse("[1]", 3, &doc, &err) < 0);
	assert_non_null(strstr(err, "not a JSON object"));
	free(err);
	err = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recipe_defaults),
		cmocka_unit_test(test_recipe_errors_positioned),
		cmocka_unit_test(test_recipe_key),
		cmocka_unit_test(test_seed_plain),
		cmocka_unit_test(test_seed_experiment),
		cmocka_unit_test(test_seed_rejects),
		cmocka_unit_test(test_seed_cgroups_of_experiment),
		cmocka_unit_test(test_modules_disk),
		cmocka_unit_test(test_ssh_key_private),
		cmocka_unit_test(test_yaml_writers),
		cmocka_unit_test(test_json_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
