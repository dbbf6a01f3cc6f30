/* SPDX-License-Identifier: MIT */
/* The host facts formatters (pure): text and JSON goldens, and a host
 * without NUMA nodes or lscpu figures. The GRUB path: its pure readers of
 * grub.cfg and /etc/default/grub, and host_boot/host_restore with
 * boot: grub against a host that is a command hook answering as a Debian
 * machine with GRUB would (the VM playing a host in t1500 boots its kernel
 * directly, without a boot loader). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "host/host.h"
#include "util/command.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"

#define OWN "6.1.0-13-amd64"
#define LABK "6.1.192-lab-tg-ratelimit-ed243fe0"
#define UUID "0b7e1c59-6a5e-4e1f-9d0c-3c2f4d3a1b11"

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(strbuf_read_file(&sb, path, 1 << 20), 0);
	return strbuf_detach(&sb, NULL);
}

static void test_grub_entry(void **state)
{
	char *cfg = slurp("tests/data/host/grub.cfg"), *noid = slurp("tests/data/host/grub-noid.cfg"), *e = NULL;

	(void)state;
	/* the entry named for it, not the generic first one that boots whichever is newest */
	assert_int_equal(host_grub_entry(cfg, LABK, &e), 0);
	assert_string_equal(e, "gnulinux-advanced-" UUID ">gnulinux-" LABK "-advanced-" UUID);
	free(e);
	assert_int_equal(host_grub_entry(cfg, OWN, &e), 0);
	assert_string_equal(e, "gnulinux-advanced-" UUID ">gnulinux-" OWN "-advanced-" UUID);
	free(e);
	assert_int_equal(host_grub_entry(cfg, "6.1.0-13", &e), -ENOENT);
	assert_null(e);
	assert_int_equal(host_grub_entry(cfg, "6.1.192-lab-tg-ratelimit", &e), -ENOENT);
	/* no ids: titles; never the recovery twin; /vmlinuz-... of a /boot partition; quotes undone */
	assert_int_equal(host_grub_entry(noid, "6.1.9-lab-x", &e), 0);
	assert_string_equal(e, "Old Linux");
	free(e);
	assert_int_equal(host_grub_entry(noid, "5.10.0-1", &e), 0);
	assert_string_equal(e, "It's quoted");
	free(e);
	assert_int_equal(host_grub_entry("", "x", &e), -ENOENT);
	assert_int_equal(host_grub_entry("}\n}\nmenuentry 'a' {\n", "x", &e), -ENOENT);
	free(cfg);
	free(noid);
}

static void test_grub_default(void **state)
{
	char *v;

	(void)state;
	v = host_grub_default("GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\n");
	assert_string_equal(v, "0");
	free(v);
	/* grub.d after the main file: the last one wins; quotes go */
	v = host_grub_default("GRUB_DEFAULT=0\n# GRUB_DEFAULT=saved\n  GRUB_DEFAULT=\"saved\"\n");
	assert_string_equal(v, "saved");
	free(v);
	v = host_grub_default("GRUB_DEFAULT='Advanced options>Debian'\n");
	assert_string_equal(v, "Advanced options>Debian");
	free(v);
	assert_null(host_grub_default("GRUB_TIMEOUT=5\n"));
	assert_null(host_grub_default(""));
}

/* The host the hook plays. */
struct fake {
	const char *grub_default; /* its GRUB_DEFAULT line */
	const char *editenv;      /* grub-editenv list */
	const char *cfg;          /* grub.cfg after update-grub */
	const char *comes_up;     /* uname -r after the reboot */
	bool rebooted;
	struct strv seen;         /* every command: ssh's remote part, else the whole line */
};

static int fake_host(struct command *c, void *userdata)
{
	struct fake *f = userdata;
	const char *prog = c->argv.v[0], *last = c->argv.v[c->argv.n - 1];

	/* ssh: the remote command as the host's shell gets it; else the local line */
	if (streq(prog, "ssh"))
		strv_push(&f->seen, last);
	else
		strv_push_take(&f->seen, command_to_string(c));
	c->status = 0;
	if (!streq(prog, "ssh") || strv_contains(&c->argv, "-O"))
		return 0;
	if (c->in && strstr(c->in, "== lscpu-json") && c->out)
		strbuf_addf(c->out, "== release\n%s\n== boot_id\n%s\n== cmdline\nroot=/dev/sda1 ro\n== nodes\n"
				    "0 0-3\n== lscpu\nCPU(s): 4\n== lscpu-json\n{}\n== end\n",
			    f->rebooted ? f->comes_up : OWN, f->rebooted ? "new-boot" : "old-boot");
	else if (c->in && strstr(c->in, "grub-reboot $(command -v") && c->out)
		/* lab host check's script, as a Debian host with GRUB answers it */
		strbuf_addf(c->out, "kexec /usr/sbin/kexec\nkexec_load_disabled 0\nperf /usr/bin/perf\n"
				    "cgroup2 cpuset,cpu,io,memory,pids\ndisk 20000000\n"
				    "grub-reboot /usr/sbin/grub-reboot\nupdate-grub /usr/sbin/update-grub\n"
				    "mkinitramfs /usr/sbin/mkinitramfs\n== default\nGRUB_TIMEOUT=5\n%s\nend\n",
			    f->grub_default);
	else if (streq(last, "'cat' '/boot/grub/grub.cfg'"))
		strbuf_addstr(c->out, f->cfg);
	else if (streq(last, "'grub-editenv' 'list'"))
		strbuf_addstr(c->out, f->editenv);
	else if (streq(last, "'cat' '/proc/sys/kernel/random/boot_id'"))
		strbuf_addstr(c->out, f->rebooted ? "new-boot\n" : "old-boot\n");
	else if (streq(last, "'uname' '-r'"))
		strbuf_addf(c->out, "%s\n", f->rebooted ? f->comes_up : OWN);
	else if (strstr(last, "reboot") && strstr(last, "nohup"))
		f->rebooted = true;
	return 0;
}

/* Index of the first command containing `what` at or after `from`; fails when there is none. */
static size_t seen_at(const struct fake *f, size_t from, const char *what)
{
	for (size_t i = from; i < f->seen.n; i++)
		if (strstr(f->seen.v[i], what))
			return i;
	for (size_t i = 0; i < f->seen.n; i++)
		print_message("#%zu %s\n", i, f->seen.v[i]);
	fail_msg("no command with '%s' after #%zu", what, from);
	return 0;
}

static bool seen_any(const struct fake *f, const char *what)
{
	for (size_t i = 0; i < f->seen.n; i++)
		if (strstr(f->seen.v[i], what))
			return true;
	return false;
}

struct rig {
	char tmpl[64];
	struct spec_host sh;
	struct host h;
	struct kartifact k;
	struct fake f;
	struct diags d;
};

static void rig_up(struct rig *r, const char *grub_default, const char *editenv, const char *comes_up)
{
	char *kh;

	memset(r, 0, sizeof(*r));
	strcpy(r->tmpl, "/tmp/lab-unit-host.XXXXXX");
	assert_non_null(mkdtemp(r->tmpl));
	r->sh = (struct spec_host){ .name = (char *)"metal", .type = HOST_SSH, .address = (char *)"192.0.2.7",
				    .port = 22, .identity = (char *)"/nonexistent/id", .boot = HOST_BOOT_GRUB };
	assert_int_equal(host_open(r->tmpl, r->tmpl, &r->sh, &r->h, &r->d), 0);
	kh = path_join(r->h.dir, "known_hosts");
	assert_int_equal(fs_write_atomic(kh, "192.0.2.7 ssh-ed25519 AAAA\n", 27, 0600), 0);
	free(kh);
	r->k = (struct kartifact){ .name = (char *)"tg-ratelimit", .release = (char *)LABK,
				   .bzimage = (char *)"/nonexistent/bzImage", .dir = r->tmpl };
	r->f = (struct fake){ .grub_default = grub_default, .editenv = editenv, .comes_up = comes_up };
	r->f.cfg = slurp("tests/data/host/grub.cfg");
	command_set_hook(fake_host, &r->f);
}

static void rig_down(struct rig *r)
{
	command_set_hook(NULL, NULL);
	host_close(&r->h);
	strv_release(&r->f.seen);
	free((char *)r->f.cfg);
	diags_release(&r->d);
	{
		char *argv[] = { (char *)"rm", (char *)"-rf", r->tmpl, NULL };
		struct command c;

		command_init(&c, argv[0]);
		command_args(&c, argv[1], argv[2], NULL);
		assert_int_equal(command_run(&c), 0);
		command_release(&c);
	}
}

static const char *last_diag(const struct rig *r)
{
	return r->d.n ? r->d.v[r->d.n - 1].msg : "";
}

static void test_grub_boot_and_restore(void **state)
{
	struct rig r;
	struct host_boot_opts o = { .timeout_usec = 30ULL * 1000000 };
	char *rel = NULL, *list;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	(void)state;
	rig_up(&r, "GRUB_DEFAULT=saved", "", LABK);
	assert_int_equal(host_boot(&r.h, &r.k, &o, &r.d), 0);
	/* in order: checked, copied, put in /boot + update-grub, own kernel
	 * saved as the default (none was), the lab kernel once, reboot */
	i = seen_at(&r.f, 0, "'sh' '-s'"); /* facts */
	i = seen_at(&r.f, i + 1, "'sh' '-s'"); /* the GRUB checks */
	i = seen_at(&r.f, i, "scp");
	i = seen_at(&r.f, i, "'cp' '/var/lib/lab/kernels/" LABK "/bzImage' '/boot/vmlinuz-" LABK ".new'");
	i = seen_at(&r.f, i, "'mv' '/boot/vmlinuz-" LABK ".new' '/boot/vmlinuz-" LABK "'");
	i = seen_at(&r.f, i, "update-grub");
	i = seen_at(&r.f, i, "'grub-set-default' 'gnulinux-advanced-" UUID ">gnulinux-" OWN "-advanced-" UUID "'");
	i = seen_at(&r.f, i, "'grub-reboot' 'gnulinux-advanced-" UUID ">gnulinux-" LABK "-advanced-" UUID "'");
	i = seen_at(&r.f, i, "reboot");
	assert_false(seen_any(&r.f, "kexec"));
	list = path_join(r.h.dir, "grub-installed");
	assert_int_equal(strbuf_read_file(&sb, list, 4096), 0);
	assert_string_equal(sb.buf, LABK "\n");
	strbuf_release(&sb);

	/* restore: a reboot lands on the saved default; lab's kernel leaves /boot */
	r.f.rebooted = false;
	r.f.comes_up = OWN;
	strv_release(&r.f.seen);
	assert_int_equal(host_restore(&r.h, &o, &rel, &r.d), 0);
	assert_string_equal(rel, OWN);
	i = seen_at(&r.f, 0, "reboot");
	i = seen_at(&r.f, i, "'rm' '-f' '/boot/vmlinuz-" LABK "' '/boot/initrd.img-" LABK "'");
	i = seen_at(&r.f, i, "update-grub");
	assert_false(path_is_file(list));
	free(rel);
	free(list);
	rig_down(&r);
}

static void test_grub_saved_default_kept(void **state)
{
	struct rig r;
	struct host_boot_opts o = { .timeout_usec = 30ULL * 1000000 };

	(void)state;
	rig_up(&r, "GRUB_DEFAULT=\"saved\"", "saved_entry=gnulinux-" OWN "-advanced-" UUID "\n", LABK);
	assert_int_equal(host_boot(&r.h, &r.k, &o, &r.d), 0);
	assert_false(seen_any(&r.f, "grub-set-default"));
	seen_at(&r.f, 0, "'grub-reboot'");
	rig_down(&r);
}

static void test_grub_refusals(void **state)
{
	struct rig r;
	struct host_boot_opts o = { .timeout_usec = 30ULL * 1000000 };

	(void)state;
	/* GRUB_DEFAULT=0: grub-reboot would stick; refused before anything is copied */
	rig_up(&r, "GRUB_DEFAULT=0", "", LABK);
	assert_int_equal(host_boot(&r.h, &r.k, &o, &r.d), -EINVAL);
	assert_string_equal(last_diag(&r), "host 'metal' cannot boot through GRUB: GRUB_DEFAULT=0; set GRUB_DEFAULT=saved "
					   "in /etc/default/grub and run update-grub (grub-reboot's once-only entry needs it)");
	assert_false(seen_any(&r.f, "scp"));
	rig_down(&r);

	/* the kernel that came up is not the one armed: the boot fell back */
	rig_up(&r, "GRUB_DEFAULT=saved", "", OWN);
	assert_int_equal(host_boot(&r.h, &r.k, &o, &r.d), -ESTALE);
	assert_non_null(strstr(last_diag(&r), "booted " OWN ", not " LABK " (did the boot fall back"));
	rig_down(&r);

	/* update-grub made no entry for it */
	rig_up(&r, "GRUB_DEFAULT=saved", "", LABK);
	free((char *)r.f.cfg);
	r.f.cfg = slurp("tests/data/host/grub-noid.cfg");
	assert_int_equal(host_boot(&r.h, &r.k, &o, &r.d), -ENOENT);
	assert_non_null(strstr(last_diag(&r), "made no entry for /boot/vmlinuz-" LABK));
	assert_false(seen_any(&r.f, "grub-reboot'"));
	assert_false(r.f.rebooted);
	rig_down(&r);
}

static void test_facts_goldens(void **state)
{
	char *nodes[] = { (char *)"0-1", (char *)"2-3" };
	struct host_facts f = {
		.release = (char *)"6.1.192-lab-base-45c33956",
		.boot_id = (char *)"3c178fca-e583-4645-a0ab-e359567ee451",
		.cmdline = (char *)"console=ttyS0 root=/dev/vda rw \"quoted\"",
		.model = (char *)"QEMU TCG CPU version 2.5+",
		.cpus = 4, .sockets = 2, .cores_per_socket = 2, .threads_per_core = 1,
		.nnodes = 2, .node_cpus = nodes,
	};
	struct host_facts bare = { .cpus = 1 };
	struct strbuf t = STRBUF_INIT, js = STRBUF_INIT;
	struct json j;

	(void)state;
	host_facts_format_text(&f, &t);
	host_facts_format_text(&bare, &t);
	json_init(&j, &js, true);
	json_object_begin(&j);
	host_facts_format_json(&f, &j);
	json_object_end(&j);
	json_finish(&j);
	assert_golden("tests/data/host/facts.txt", t.buf);
	assert_golden("tests/data/host/facts.json", js.buf);
	strbuf_release(&t);
	strbuf_release(&js);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts_goldens),
		cmocka_unit_test(test_grub_entry),
		cmocka_unit_test(test_grub_default),
		cmocka_unit_test(test_grub_boot_and_restore),
		cmocka_unit_test(test_grub_saved_default_kept),
		cmocka_unit_test(test_grub_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
