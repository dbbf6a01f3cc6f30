/* SPDX-License-Identifier: MIT */
/* lab doctor's checks from a described machine (no probing) and its pure
 * formatters: a ready KVM machine, and one with TCG, no libvirt, no
 * mmdebstrap and a small disk. The cluster checks' pure parts (sinfo's
 * lines, a node probe's JSON, a node's check from it) and the whole
 * cluster check against canned sinfo and srun answers (a command hook). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "unit.h"
#include "doctor/cluster.h"
#include "doctor/doctor.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/json.h"
#include "util/path.h"
#include "util/strbuf.h"

static char *have_all(void *userdata, const char *prog)
{
	(void)userdata;
	return xasprintf("/usr/bin/%s", prog);
}

/* everything but what userdata names (space separated, padded) */
static char *have_but(void *userdata, const char *prog)
{
	char pad[64];

	snprintf(pad, sizeof(pad), " %s ", prog);
	return strstr((const char *)userdata, pad) ? NULL : xasprintf("/usr/bin/%s", prog);
}

#define GIB (1024ULL * 1024 * 1024)

static void run(const struct doctor_machine *m, const char *txt, const char *js, enum doctor_status want)
{
	struct doctor_check *c = NULL;
	struct strbuf t = STRBUF_INIT, j = STRBUF_INIT;
	struct json w;
	size_t n = 0;

	doctor_checks(m, &c, &n);
	assert_int_equal(doctor_worst(c, n), want);
	doctor_format_text(c, n, &t);
	assert_golden(txt, t.buf);
	if (js) {
		json_init(&w, &j, true);
		doctor_format_json(c, n, &w);
		json_finish(&w);
		assert_golden(js, j.buf);
	}
	doctor_checks_free(c, n);
	strbuf_release(&t);
	strbuf_release(&j);
}

static void test_ready(void **state)
{
	struct doctor_machine m = {
		.kvm = true, .root = true, .cgroup2 = true, .cgroup_controllers = (char *)"cpuset cpu io memory pids",
		.libvirt = (char *)"libvirt 9.0.0, QEMU 7.2.0", .cache_free = 120 * GIB,
		.cache_dir = (char *)"/var/cache/lab", .mem_total = 64 * GIB, .cpus = 32, .kernel_source = true,
		.libelf = true, .which = have_all,
	};

	(void)state;
	run(&m, "tests/data/doctor/ready.txt", NULL, DOCTOR_OK);
}

static void test_missing(void **state)
{
	struct doctor_machine m = {
		.kvm = false, .root = false, .cgroup2 = false,
		.libvirt_error = (char *)"cannot open qemu:///embed?root=/tmp/x: no QEMU driver",
		.cache_free = 3 * GIB + GIB / 2, .cache_dir = (char *)"/home/u/.cache/lab", .mem_total = 8 * GIB,
		.cpus = 1, .kernel_source = false, .libelf = true, .which = have_but,
		.userdata = (void *)" mmdebstrap ccache perf ",
	};

	(void)state;
	run(&m, "tests/data/doctor/missing.txt", "tests/data/doctor/missing.json", DOCTOR_MISSING);
}

static void test_warnings_only(void **state)
{
	/* TCG and a mid-size disk: ready, with warnings (exit 0) */
	struct doctor_machine m = {
		.kvm = false, .root = true, .cgroup2 = true, .cgroup_controllers = (char *)"cpu",
		.libvirt = (char *)"libvirt 9.0.0, QEMU 7.2.22", .cache_free = 10 * GIB, .cache_dir = (char *)"/c",
		.mem_total = 24 * GIB, .cpus = 2, .kernel_source = true, .libelf = true, .which = have_all,
	};
	struct doctor_check *c = NULL;
	struct strbuf t = STRBUF_INIT;
	size_t n = 0;

	(void)state;
	doctor_checks(&m, &c, &n);
	assert_int_equal(doctor_worst(c, n), DOCTOR_WARN);
	doctor_format_text(c, n, &t);
	assert_non_null(strstr(t.buf, "\nready, with 2 warnings\n"));
	assert_non_null(strstr(t.buf, "warn disk ("));
	assert_null(strstr(t.buf, "missing "));
	doctor_checks_free(c, n);
	strbuf_release(&t);
}


/* ---- the cluster ---- */

static void test_sinfo_parse(void **state)
{
	static const char text[] = "n1|lab*|idle\nn2|lab*|down\nn3|big|mixed\nn1|big|idle\nn2|lab*|down\n\n";
	struct doctor_partition p;
	char *err = NULL;

	(void)state;
	/* the default partition, a node listed twice kept once */
	assert_int_equal(doctor_sinfo_parse(text, NULL, &p, &err), 0);
	assert_string_equal(p.name, "lab");
	assert_true(p.is_default);
	assert_int_equal(p.nodes.n, 2);
	assert_string_equal(p.nodes.v[0], "n1");
	assert_string_equal(p.states.v[0], "idle");
	assert_string_equal(p.nodes.v[1], "n2");
	assert_string_equal(p.states.v[1], "down");
	doctor_partition_release(&p);
	/* a named one */
	assert_int_equal(doctor_sinfo_parse(text, "big", &p, &err), 0);
	assert_string_equal(p.name, "big");
	assert_false(p.is_default);
	assert_int_equal(p.nodes.n, 2);
	assert_string_equal(p.nodes.v[0], "n3");
	assert_string_equal(p.states.v[0], "mixed");
	doctor_partition_release(&p);
	/* one Slurm does not have: the ones it has, and the closest */
	assert_int_equal(doctor_sinfo_parse(text, "bgi", &p, &err), -ENOENT);
	assert_string_equal(err, "Slurm has no partition 'bgi' (it has lab, big; did you mean 'big'?)");
	free(err);
	assert_int_equal(doctor_sinfo_parse(text, "gpu-partition", &p, &err), -ENOENT);
	assert_string_equal(err, "Slurm has no partition 'gpu-partition' (it has lab, big)");
	free(err);
	/* no default */
	assert_int_equal(doctor_sinfo_parse("n1|a|idle\nn2|b|idle\n", NULL, &p, &err), -ENOENT);
	assert_string_equal(err, "Slurm has no default partition (it has a, b)");
	free(err);
	assert_int_equal(doctor_sinfo_parse("", NULL, &p, &err), -ENOENT);
	assert_string_equal(err, "Slurm lists no partitions");
	free(err);
	/* lines that are not NODE|PARTITION|STATE */
	assert_int_equal(doctor_sinfo_parse("n1 lab* idle\n", NULL, &p, &err), -EINVAL);
	assert_string_equal(err, "sinfo: cannot read 'n1 lab* idle' (want NODE|PARTITION|STATE)");
	free(err);
	assert_int_equal(doctor_sinfo_parse("n1|*|idle\n", NULL, &p, &err), -EINVAL);
	free(err);
	assert_int_equal(doctor_sinfo_parse("n1|lab||\n", NULL, &p, &err), -EINVAL);
	free(err);

	assert_true(doctor_node_state_idle("idle"));
	assert_false(doctor_node_state_idle("idle*"));
	assert_false(doctor_node_state_idle("idle~"));
	assert_false(doctor_node_state_idle("mixed"));
	assert_false(doctor_node_state_idle("drained"));
	assert_false(doctor_node_state_idle(NULL));
}

static void parse_ok(const char *text, struct doctor_node_report *r)
{
	char *err = NULL;

	if (doctor_node_report_parse(text, strlen(text), r, &err) < 0)
		fail_msg("%s: %s", text, err);
}

static void parse_bad(const char *text, const char *want)
{
	struct doctor_node_report r = { 0 };
	char *err = NULL;

	assert_int_equal(doctor_node_report_parse(text, strlen(text), &r, &err), -EINVAL);
	assert_non_null(err);
	if (!strstr(err, want))
		fail_msg("'%s': the error '%s' does not say '%s'", text, err, want);
	assert_null(r.version);
	free(err);
}

static void test_node_report(void **state)
{
	struct doctor_node_report a = {
		.node = (char *)"n1", .version = (char *)"0.1", .kvm = false, .kvm_why = (char *)"no usable /dev/kvm",
		.libvirt = (char *)"libvirt 9.0.0, QEMU 7.2.0", .spool_checked = true,
	};
	struct doctor_node_report r;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* one line, read back the same, also after what srun said before it */
	doctor_node_report_format(&a, &sb);
	assert_string_equal(sb.buf, "{\"node\":\"n1\",\"lab\":\"0.1\",\"accel\":\"tcg\",\"accel_why\":\"no usable /dev/kvm\","
				    "\"libvirt\":\"libvirt 9.0.0, QEMU 7.2.0\",\"libvirt_error\":null,\"spool\":\"ok\"}\n");
	{
		struct strbuf noisy = STRBUF_INIT;

		strbuf_addf(&noisy, "srun: job 12 queued and waiting for resources\n%s\n", sb.buf);
		parse_ok(noisy.buf, &r);
		strbuf_release(&noisy);
	}
	assert_string_equal(r.node, "n1");
	assert_string_equal(r.version, "0.1");
	assert_false(r.kvm);
	assert_string_equal(r.kvm_why, "no usable /dev/kvm");
	assert_string_equal(r.libvirt, "libvirt 9.0.0, QEMU 7.2.0");
	assert_null(r.libvirt_error);
	assert_true(r.spool_checked);
	assert_null(r.spool_error);
	doctor_node_report_release(&r);
	strbuf_release(&sb);

	parse_ok("{\"lab\":\"0.2\",\"accel\":\"kvm\",\"accel_why\":\"stale\",\"libvirt_error\":\"no driver\","
		 "\"spool\":\"/s is not writable here: Permission denied\",\"later\":[1]}",
		 &r);
	assert_null(r.node);
	assert_true(r.kvm);
	assert_null(r.kvm_why);
	assert_null(r.libvirt);
	assert_string_equal(r.libvirt_error, "no driver");
	assert_true(r.spool_checked);
	assert_string_equal(r.spool_error, "/s is not writable here: Permission denied");
	doctor_node_report_release(&r);
	parse_ok("{\"lab\":\"0.1\",\"accel\":\"tcg\",\"spool\":null}", &r);
	assert_false(r.spool_checked);
	assert_string_equal(r.libvirt_error, "not reported");
	doctor_node_report_release(&r);

	parse_bad("", "printed nothing");
	parse_bad("\n \n", "printed nothing");
	parse_bad("lab: doctor: unknown option '--node-probe'", "is no JSON");
	parse_bad("[1, 2]", "not a JSON object");
	parse_bad("{\"accel\":\"kvm\"}", "no \"lab\" version");
	parse_bad("{\"lab\":\"\",\"accel\":\"kvm\"}", "no \"lab\" version");
	parse_bad("{\"lab\":1,\"accel\":\"kvm\"}", "\"lab\" is an integer, not a string");
	parse_bad("{\"lab\":\"0.1\"}", "\"accel\" is missing");
	parse_bad("{\"lab\":\"0.1\",\"accel\":\"hvf\"}", "\"accel\" is 'hvf', not kvm or tcg");
	parse_bad("{\"lab\":\"0.1\",\"accel\":\"kvm\",\"libvirt\":{}}", "\"libvirt\" is an object");
	parse_bad("{\"lab\":\"0.1\",\"lab\":\"0.2\",\"accel\":\"kvm\"}", "is no JSON");
}

static void test_node_check(void **state)
{
	struct doctor_node_report good = {
		.node = (char *)"n1", .version = (char *)"0.1", .kvm = true,
		.libvirt = (char *)"libvirt 9.0.0, QEMU 7.2.0", .spool_checked = true,
	};
	struct doctor_node_report bad = {
		.node = (char *)"vm3", .version = (char *)"0.0.9", .kvm = false, .kvm_why = (char *)"no /dev/kvm",
		.libvirt_error = (char *)"no QEMU driver", .spool_checked = true,
		.spool_error = (char *)"/s: No such file or directory",
	};
	struct doctor_check *c = NULL;
	size_t n = 0;

	(void)state;
	doctor_node_check("n1", &good, "0.1", true, &c, &n);
	doctor_node_check("n3", &bad, "0.1", true, &c, &n);
	doctor_node_check("n1", &good, "0.1", false, &c, &n);
	assert_int_equal(n, 3);
	assert_string_equal(c[0].name, "node n1");
	assert_int_equal(c[0].status, DOCTOR_OK);
	assert_string_equal(c[0].found, "lab 0.1, kvm, libvirt 9.0.0, QEMU 7.2.0, spool shared and writable");
	assert_null(c[0].fix);
	assert_string_equal(c[1].name, "node n3");
	assert_int_equal(c[1].status, DOCTOR_MISSING);
	assert_string_equal(c[1].found, "lab 0.0.9, not the head's 0.1, tcg (no /dev/kvm), no libvirt: no QEMU driver, "
					"spool: /s: No such file or directory (it calls itself vm3)");
	assert_string_equal(c[1].fix, "install lab 0.1 on n3 (engine: lab: is its path there); load kvm_intel or kvm_amd "
				      "on n3 and give lab /dev/kvm rw (guests run slowly under TCG); apt install "
				      "libvirt-daemon-driver-qemu libvirt-daemon-system on n3; mount the spool on n3 at "
				      "the same path, writable by lab's user");
	/* the spool given but not checked: a node lab that took no spool */
	good.spool_checked = false;
	doctor_node_check("n1", &good, "0.1", true, &c, &n);
	assert_string_equal(c[3].found, "lab 0.1, kvm, libvirt 9.0.0, QEMU 7.2.0, spool not checked");
	assert_string_equal(c[2].found, "lab 0.1, kvm, libvirt 9.0.0, QEMU 7.2.0, spool shared and writable");
	assert_int_equal(doctor_worst(c, n), DOCTOR_MISSING);
	doctor_checks_free(c, n);
}

/* Canned Slurm: sinfo answers (or not: userdata "down"); srun's argv recorded, n1 answers, n3 cannot exec. */
struct canned {
	const char *mode;
	struct strbuf log;
};

static int slurm_hook(struct command *c, void *userdata)
{
	struct canned *k = userdata;
	_cleanup_free_ char *line = command_to_string(c);

	strbuf_addf(&k->log, "%s\n", line);
	if (streq(c->argv.v[0], "sinfo") && streq(c->argv.v[1], "--version")) {
		strbuf_addstr(c->out, "slurm-wlm 22.05.8\n");
		return 0;
	}
	if (streq(c->argv.v[0], "sinfo")) {
		assert_true(c->timeout_usec > 0);
		if (streq(k->mode, "down")) {
			strbuf_addstr(c->err, "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n");
			return 1;
		}
		strbuf_addstr(c->out, "n1|lab*|idle\nn2|lab*|allocated\nn3|lab*|idle\nn4|lab*|drained*\nn9|other|idle\n");
		return 0;
	}
	if (streq(c->argv.v[0], "srun")) {
		assert_true(c->timeout_usec > 0);
		if (strv_contains(&c->argv, "--nodelist=n3")) {
			strbuf_addstr(c->err, "srun: error: n3: task 0: Exited with exit code 2\n"
					      "slurmstepd-n3: error: execve(): /opt/lab: No such file or directory\n");
			return 2;
		}
		strbuf_addstr(c->out, "{\"node\":\"n1\",\"lab\":\"0.1\",\"accel\":\"kvm\",\"libvirt\":\"libvirt 9.0.0, "
				      "QEMU 7.2.0\",\"spool\":\"ok\"}\n");
		return 0;
	}
	return -ENOENT;
}

static void test_cluster_checks(void **state)
{
	char spool[] = "/tmp/lab-test-doctor-XXXXXX";
	struct canned k = { .mode = "up", .log = STRBUF_INIT };
	struct doctor_cluster o = {
		.file = "lab.yaml", .have_file = true, .declared = true, .account = "acct", .spool = spool,
		.lab = "/opt/lab", .version = "0.1",
	};
	struct doctor_check *c = NULL;
	struct strbuf t = STRBUF_INIT;
	size_t n = 0;

	(void)state;
	assert_non_null(mkdtemp(spool));
	command_set_hook(slurm_hook, &k);
	doctor_cluster_checks(&o, &c, &n);
	assert_int_equal(n, 8);
	assert_string_equal(c[0].name, "engine");
	assert_int_equal(c[0].status, DOCTOR_OK);
	assert_string_equal(c[1].name, "slurm");
	assert_int_equal(c[1].status, DOCTOR_OK);
	assert_string_equal(c[2].name, "partition");
	assert_string_equal(c[2].found, "lab (the default): 4 nodes: n1 idle, n2 allocated, n3 idle, n4 drained*");
	assert_string_equal(c[3].name, "spool");
	assert_int_equal(c[3].status, DOCTOR_OK);
	assert_string_equal(c[4].name, "node n1");
	assert_int_equal(c[4].status, DOCTOR_OK);
	assert_string_equal(c[5].name, "node n2");
	assert_int_equal(c[5].status, DOCTOR_WARN);
	assert_string_equal(c[5].found, "not probed: allocated");
	assert_string_equal(c[6].name, "node n3");
	assert_int_equal(c[6].status, DOCTOR_MISSING);
	assert_string_equal(c[6].found, "the probe did not run: srun failed (exit status 2): slurmstepd-n3: error: "
					"execve(): /opt/lab: No such file or directory");
	assert_string_equal(c[7].found, "not probed: drained*");
	assert_non_null(strstr(c[7].fix, "scontrol update NodeName=n4 State=RESUME"));
	/* each srun: the node alone, its partition, the site's account, the spool and the marker left in it */
	assert_non_null(strstr(k.log.buf, "srun --nodes=1 --ntasks=1 --exclusive --time=1 --quiet --job-name=lab-doctor "
					  "--immediate=30 --partition=lab --nodelist=n1 --account=acct /opt/lab doctor "
					  "--node-probe /tmp/lab-test-doctor-"));
	assert_non_null(strstr(k.log.buf, " .lab-doctor-"));
	assert_null(strstr(k.log.buf, "--nodelist=n2"));
	/* the marker is gone again */
	assert_int_equal(rmdir(spool), 0);
	doctor_format_text(c, n, &t);
	assert_non_null(strstr(t.buf, "\n1 missing, 2 warnings: lab cannot do all of its work here\n"));
	doctor_checks_free(c, n);
	c = NULL;
	n = 0;
	strbuf_release(&t);

	/* the controller down: said with sinfo's reason; no partition or node checks; no spool here either */
	k.mode = "down";
	o.spool = "/nonexistent/spool";
	o.partition = "lab";
	doctor_cluster_checks(&o, &c, &n);
	assert_int_equal(n, 3);
	assert_string_equal(c[1].name, "slurm");
	assert_int_equal(c[1].status, DOCTOR_MISSING);
	assert_string_equal(c[1].found, "cannot reach Slurm: sinfo failed (exit status 1): slurm_load_partitions: "
					"Unable to contact slurm controller (connect failure)");
	assert_string_equal(c[2].name, "spool");
	assert_string_equal(c[2].found, "/nonexistent/spool: No such file or directory");
	doctor_checks_free(c, n);
	c = NULL;
	n = 0;

	/* no engine: section */
	o.declared = false;
	doctor_cluster_checks(&o, &c, &n);
	assert_string_equal(c[0].found, "lab.yaml has no engine: section");
	assert_int_equal(c[0].status, DOCTOR_MISSING);
	doctor_checks_free(c, n);
	command_set_hook(NULL, NULL);
	strbuf_release(&k.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ready),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_warnings_only),
		cmocka_unit_test(test_sinfo_parse),
		cmocka_unit_test(test_node_report),
		cmocka_unit_test(test_node_check),
		cmocka_unit_test(test_cluster_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
