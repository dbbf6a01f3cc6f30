/* SPDX-License-Identifier: MIT */
/*
 * The VM layer without QEMU: the libvirt API paths on libvirt's test
 * driver (define, start, find by lab's metadata, destroy, undefine), the
 * kernel command line, remote-argument quoting checked by a real shell,
 * the holder process on the test driver, and the two backends' choice and
 * local preparation. Real boots are in t1200-vm.sh.
 */
#include "unit.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>
#include <errno.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include "util/alloc.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strv.h"
#include "image/seed.h"
#include "vm/backend.h"
#include "vm/domain.h"
#include "vm/remote.h"
#include "ssh/ssh.h"
#include "vm/vm.h"

static struct spec_topology two_cells(void)
{
	static struct spec_cell cells[2];
	static unsigned dist[4] = { 10, 21, 21, 10 };
	struct spec_topology t = {
		.name = (char *)"t", .sockets = 2, .dies = 1, .cores = 2, .threads = 1,
		.cells = cells, .ncells = 2, .distances = dist, .ndistances = 2,
	};

	memset(cells, 0, sizeof(cells));
	cells[0].cpus[0] = 0x3;
	cells[0].cpulist = (char *)"0-1";
	cells[0].memory = 512ULL << 20;
	cells[1].cpus[0] = 0xc;
	cells[1].cpulist = (char *)"2-3";
	cells[1].memory = 512ULL << 20;
	return t;
}

static void format(const char *name, struct strbuf *xml)
{
	struct spec_topology t = two_cells();
	struct domain_host h = { .cpus = "0-1", .ncpus = 2 };
	struct domain_config c = {
		.name = name, .topo = &t, .accel = ACCEL_TCG, .host = &h,
		.kernel = "/k/bzImage", .cmdline = "console=ttyS0", .disk = "/v/disk.qcow2",
		.seed = "/v/seed.iso", .console = "/v/console.log", .ssh_port = 2222, .vm = name,
		.owner = "/state", .variant = "base",
	};

	domain_format_xml(&c, xml);
}

static bool listed(const char *name)
{
	virConnectPtr conn = virConnectOpen("test:///default");
	_cleanup_strv_ struct strv names = STRV_INIT;
	bool found;

	assert_non_null(conn);
	assert_int_equal(vm_domains_owned(conn, &names), 0);
	found = strv_contains(&names, name);
	virConnectClose(conn);
	return found;
}

static void test_libvirt_test_driver(void **state)
{
	_cleanup_strbuf_ struct strbuf xml = STRBUF_INIT, err = STRBUF_INIT;
	void *conn = NULL, *dom = NULL;

	(void)state;
	format("lab-unit", &xml);
	if (vm_domain_start("test:///default", xml.buf, &conn, &dom, &err) < 0)
		fail_msg("test driver refused the domain: %s", err.buf);
	assert_int_equal(virDomainIsActive(dom), 1);
	/* found through lab's metadata, not through its name; test's own domain is not lab's */
	assert_true(listed("lab-unit"));
	assert_false(listed("test"));
	vm_domain_stop(conn, dom);
	assert_false(listed("lab-unit"));
}

static void test_libvirt_bad_xml(void **state)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	void *conn = NULL, *dom = NULL;

	(void)state;
	assert_true(vm_domain_start("test:///default", "<domain type='test'><name>x</name></domain>", &conn, &dom,
				    &err) < 0);
	assert_non_null(strstr(err.buf, "defining the domain"));
	strbuf_reset(&err);
	assert_true(vm_domain_start("nosuch:///x", "<domain/>", &conn, &dom, &err) < 0);
	assert_non_null(strstr(err.buf, "cannot open"));
}

/* One rule for vm up --name, vm xml --name and a topology's name. */
static void test_vm_name_check(void **state)
{
	static const char *const bad[] = { "", "a.b", "-x", "x;y", "../e", "a b", "é",
					   "12345678901234567890123456789012345678901" };
	struct diags d = { 0 };

	(void)state;
	assert_int_equal(vm_name_check("quick-2x2", &d), 0);
	assert_int_equal(vm_name_check("my_vm", &d), 0);
	assert_int_equal(vm_name_check("1234567890123456789012345678901234567890", &d), 0);
	assert_int_equal(d.n, 0);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		assert_int_equal(vm_name_check(bad[i], &d), -EINVAL);
	assert_int_equal(d.n, ELEMENTSOF(bad));
	assert_non_null(strstr(d.v[1].msg, "'a.b' is not a VM name"));
	diags_release(&d);
}

/* The housekeeping set: the host CPUs pinned vCPUs leave (lab's own work,
 * QEMU's with emulator: auto). */
static void hk_is(const struct domain_host *h, const struct spec_topology *t, char *const *cpusets, const char *want)
{
	_cleanup_free_ char *got = domain_housekeeping_cpus(h, t, cpusets);

	if (!want)
		assert_null(got);
	else
		assert_string_equal(got, want);
}

static void test_housekeeping_cpus(void **state)
{
	struct spec_topology one = { .name = (char *)"one", .sockets = 1, .dies = 1, .cores = 1, .threads = 1 };
	struct spec_topology four = two_cells();
	struct domain_host two = { .cpus = "0-1", .ncpus = 2 }, eight = { .cpus = "0-7", .ncpus = 8 };
	struct domain_host three = { .ncpus = 3 }; /* no online list: 0..ncpus-1 */
	struct domain_host numa = { .cpus = "0-7", .ncpus = 8, .nnodes = 2, .node_cpus = { "0-3", "4-7" } };
	char *slots[] = { (char *)"0-1", (char *)"2-3", NULL };

	(void)state;
	hk_is(&two, &one, NULL, NULL); /* pinning: none floats: nothing is kept off */
	one.pin = PIN_AUTO;
	hk_is(&two, &one, NULL, "1");
	hk_is(&three, &one, NULL, "1-2");
	hk_is(NULL, &one, NULL, NULL);
	four.pin = PIN_AUTO;
	hk_is(&two, &four, NULL, NULL); /* 4 vCPUs wrap around 2 host CPUs: none left */
	hk_is(&eight, &four, NULL, "4-7");
	hk_is(&numa, &four, NULL, "2-3,6-7"); /* a cell per host node: 0,1 and 4,5 */
	four.pin = PIN_LIST;
	four.pin_cpus = (char *)"2-5";
	hk_is(&eight, &four, NULL, "0-1,6-7");
	four.pin = PIN_NONE;
	hk_is(&eight, &four, slots, "4-7"); /* --jobs slots pin even a floating topology */
}

static void test_cmdline(void **state)
{
	_cleanup_free_ char *a = domain_cmdline(NULL), *b = domain_cmdline("mitigations=off");

	(void)state;
	assert_string_equal(a, "console=ttyS0 root=/dev/vda rw net.ifnames=0 panic=-1 no_timer_check");
	assert_string_equal(b, "console=ttyS0 root=/dev/vda rw net.ifnames=0 panic=-1 no_timer_check mitigations=off");
}

/* What ssh sends is one line for the remote shell; a real sh must split it back into argv. */
static void test_remote_quoting(void **state)
{
	char *argv[] = {
		(char *)"printf", (char *)"%s\\0", (char *)"it's", (char *)"$(touch /tmp/lab-pwned)",
		(char *)"a\nb", (char *)"-rf", (char *)"", (char *)"`id`", (char *)"\"q\" \\ *",
	};
	_cleanup_command_ struct command ssh = { 0 };
	_cleanup_command_ struct command sh = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct ssh_target t = { .port = 22, .identity = "/id", .known_hosts = "/kh" };
	const char *line;
	size_t off = 0;

	(void)state;
	unlink("/tmp/lab-pwned");
	ssh_command(&ssh, &t, false);
	ssh_remote_argv(&ssh, argv, ELEMENTSOF(argv));
	line = ssh.argv.v[ssh.argv.n - 1];
	command_init(&sh, "sh");
	command_args(&sh, "-c", line, NULL);
	sh.out = &out;
	assert_int_equal(command_run(&sh), 0);
	for (size_t i = 2; i < ELEMENTSOF(argv); i++) {
		assert_true(off < out.len + 1);
		assert_string_equal(out.buf + off, argv[i]);
		off += strlen(argv[i]) + 1;
	}
	assert_int_equal(off, out.len);
	assert_int_not_equal(access("/tmp/lab-pwned", F_OK), 0);
}

static void test_ssh_options(void **state)
{
	_cleanup_command_ struct command c = { 0 };
	struct ssh_target t = { .port = 2200, .identity = "/id", .known_hosts = "/kh", .alias = "lab-x",
				.control = "/c" };
	_cleanup_free_ char *s = NULL;

	(void)state;
	ssh_command(&c, &t, false);
	s = command_to_string(&c);
	assert_non_null(strstr(s, "-F /dev/null"));
	assert_non_null(strstr(s, "-oStrictHostKeyChecking=yes"));
	assert_non_null(strstr(s, "-oUserKnownHostsFile=/kh"));
	assert_non_null(strstr(s, "-oHostKeyAlias=lab-x"));
	assert_non_null(strstr(s, "-oIdentitiesOnly=yes"));
	assert_non_null(strstr(s, "-oControlPath=/c"));
	assert_null(strstr(s, "StrictHostKeyChecking=no"));
	assert_string_equal(c.argv.v[c.argv.n - 1], "root@127.0.0.1");
	assert_string_equal(c.argv.v[c.argv.n - 2], "--");
}

/* A guest behind a remote host: ssh -W through it, its options quoted for ProxyCommand's shell. */
static void test_ssh_via(void **state)
{
	_cleanup_command_ struct command c = { 0 };
	struct ssh_target via = { .user = "lab", .host = "hv1", .port = 2222, .identity = "/k's", .known_hosts = "/h%kh" };
	struct ssh_target t = { .port = 20000, .identity = "/id", .known_hosts = "/kh", .alias = "lab-x", .via = &via };
	const char *pc = NULL;

	(void)state;
	ssh_command(&c, &t, false);
	for (size_t i = 0; i < c.argv.n; i++)
		if (str_startswith(c.argv.v[i], "-oProxyCommand="))
			pc = c.argv.v[i] + strlen("-oProxyCommand=");
	assert_non_null(pc);
	assert_true(str_startswith(pc, "ssh -F /dev/null '-oIdentityFile=/k'\\''s' "));
	assert_non_null(strstr(pc, " -oUserKnownHostsFile=/h%%kh "));
	assert_true(str_endswith(pc, " -p2222 -W %h:%p -- lab@hv1"));
	assert_null(strstr(pc, "HostKeyAlias")); /* the guest's alias is not the host's */
	assert_string_equal(c.argv.v[c.argv.n - 1], "root@127.0.0.1");
}

static void test_remote_ports(void **state)
{
	static const char tcp[] =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 0100007F:5DC0 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
		"   1: 0100007F:4E20 0100007F:5DC0 01 00000000:00000000 00:00000000 00000000     0        0 2 1\n"
		"   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 0 0 0\n";

	(void)state;
	assert_true(remote_port_listening(tcp, 0x5DC0));
	assert_false(remote_port_listening(tcp, 0x4E20)); /* established, not listening */
	assert_true(remote_port_listening(tcp, 8080));    /* tcp6 */
	assert_false(remote_port_listening(tcp, 22));
	assert_false(remote_port_listening("", 22));
}

/* libvirt's connection runs ssh through a wrapper with lab's options; its path is URI-escaped. */
static void test_remote_connect_uri(void **state)
{
	struct ssh_target t = { .user = "root", .host = "hv1", .port = 2222, .identity = "/id", .known_hosts = "/kh",
				.control = "/ctl" };
	char dir[] = "/tmp/lab-remote-XXXXXX";
	_cleanup_free_ char *wrapper = NULL, *uri = NULL, *uri2 = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct diags d = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	wrapper = xasprintf("%s/ssh wrapper", dir);
	uri = remote_connect_uri("qemu+ssh://root@hv1:2222/system", &t, wrapper, &d);
	assert_non_null(uri);
	assert_true(str_startswith(uri, "qemu+ssh://root@hv1:2222/system?command=/tmp/lab-remote-"));
	assert_true(str_endswith(uri, "/ssh%20wrapper"));
	uri2 = remote_connect_uri("qemu+ssh://hv1/system?keyfile=/k", &t, wrapper, &d);
	assert_non_null(strstr(uri2, "?keyfile=/k&command="));
	assert_int_equal(strbuf_read_file(&sb, wrapper, 65536), 0);
	assert_true(str_startswith(sb.buf, "#!/bin/sh\n"));
	assert_non_null(strstr(sb.buf, " -oStrictHostKeyChecking=yes "));
	assert_non_null(strstr(sb.buf, " -oUserKnownHostsFile=/kh "));
	assert_null(strstr(sb.buf, "ControlPath"));   /* libvirt's connection has its own */
	assert_null(strstr(sb.buf, "hv1"));           /* libvirt adds the host, the port and the user */
	assert_null(strstr(sb.buf, "-p2222"));
	assert_true(str_endswith(sb.buf, " \"$@\"\n"));
	unlink(wrapper);
	rmdir(dir);
	diags_release(&d);
}

/* libvirt's per-domain QEMU log after QEMU died during a boot, and after a
 * guest that was shut down: a crash is told from the other ends. */
static void test_qemu_stop_reason(void **state)
{
	static const char crashed_log[] =
		"2026-12-01 07:13:55.802+0000: starting up libvirt version: 9.0.0, qemu version: 7.2.22\n"
		"LC_ALL=C \\\n"
		"/usr/bin/qemu-system-x86_64 \\\n"
		"-name guest=lab-run-1-0,debug-threads=on \\\n"
		"2026-12-01 07:13:55.804+0000: Domain id=1 is tainted: custom-argv\n"
		"2026-12-01 07:14:02.917+0000: shutting down, reason=crashed\n";
	static const char stopped_log[] =
		"2026-12-01 07:13:55.802+0000: starting up libvirt version: 9.0.0\n"
		"/usr/bin/qemu-system-x86_64 \\\n"
		"2026-12-01T07:13:56.100000Z qemu-system-x86_64: -accel tcg: warning: tb-size\n"
		"qemu-system-x86_64: terminating on signal 15 from pid 4242 (lab)\n"
		"2026-12-01 07:14:02.917+0000: shutting down, reason=destroyed\n";
	char *why;
	bool crashed = true;

	(void)state;
	why = vm_qemu_stop_reason(crashed_log, &crashed);
	assert_non_null(why);
	assert_string_equal(why, "libvirt: QEMU stopped, reason=crashed");
	assert_true(crashed);
	free(why);

	why = vm_qemu_stop_reason(stopped_log, &crashed);
	assert_non_null(why);
	assert_string_equal(why, "libvirt: QEMU stopped, reason=destroyed; QEMU said: "
				 "qemu-system-x86_64: terminating on signal 15 from pid 4242 (lab)");
	assert_false(crashed);
	free(why);

	/* QEMU's message with libvirt's -msg timestamp=on; its command line is none */
	why = vm_qemu_stop_reason("/usr/bin/qemu-system-x86_64 \\\n"
				  "2026-12-01T07:13:56.100000Z qemu-system-x86_64: cannot set up guest memory 'pc.ram'\n"
				  "2026-12-01 07:13:56.200+0000: shutting down, reason=failed\n", &crashed);
	assert_non_null(why);
	assert_string_equal(why, "libvirt: QEMU stopped, reason=failed; QEMU said: 2026-12-01T07:13:56.100000Z "
				 "qemu-system-x86_64: cannot set up guest memory 'pc.ram'");
	assert_false(crashed);
	free(why);

	/* still running, or no log: nothing to say */
	crashed = true;
	assert_null(vm_qemu_stop_reason("2026-12-01 07:13:55.802+0000: starting up\n", &crashed));
	assert_false(crashed);
	assert_null(vm_qemu_stop_reason("", &crashed));
}

static void quiet(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

/* LAB_ACCEL decides when set; without it the answer comes with a reason when it is no. */
static void test_kvm_usable(void **state)
{
	const char *why = "unset";

	(void)state;
	setenv("LAB_ACCEL", "tcg", 1);
	assert_false(vm_kvm_usable(&why));
	assert_string_equal(why, "LAB_ACCEL=tcg");
	assert_false(vm_kvm_available());
	setenv("LAB_ACCEL", "kvm", 1);
	assert_true(vm_kvm_usable(&why));
	assert_null(why);
	unsetenv("LAB_ACCEL");
	if (!vm_kvm_usable(&why))
		assert_non_null(why);
	/* a machine with the PVM module but no /dev/kvm (seen here) says the latter */
	if (access("/sys/module/kvm_pvm", F_OK) == 0 && access("/dev/kvm", F_OK) == 0) {
		assert_false(vm_kvm_usable(&why));
		assert_non_null(strstr(why, "PVM"));
	}
}

/* The holder as vm_up runs it, on libvirt's test driver: spawned, its
 * "ok" read, the domain there while it lives, gone when it is told to stop. */
static void test_holder_spawn(void **state)
{
	char tmpl[] = "/tmp/lab-test-holder.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	_cleanup_strbuf_ struct strbuf xml = STRBUF_INIT, why = STRBUF_INIT;
	_cleanup_free_ char *xml_path = NULL, *log = NULL;
	pid_t pid = 0;
	int fd = -1, status;

	(void)state;
	assert_non_null(dir);
	xml_path = path_join(dir, "domain.xml");
	log = path_join(dir, "holder.log");
	format("lab-holder", &xml);
	assert_int_equal(fs_write_atomic(xml_path, xml.buf, xml.len, 0644), 0);
	/* the test driver's state lives in the process that opened it: the
	 * holder answers ok when it defined and started the domain there */
	assert_int_equal(vm_holder_spawn("test:///default", xml_path, "lab-holder", log, &pid, &fd), 0);
	assert_true(pid > 0);
	assert_int_equal(vm_holder_wait(pid, fd, &why), 0);
	assert_int_equal(kill(pid, SIGTERM), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	strbuf_reset(&xml);
	assert_int_equal(strbuf_read_file(&xml, log, 1 << 16), 0);
	assert_non_null(strstr(xml.buf, "lab holder: asked to stop"));
	/* a domain the driver refuses: the holder's word is the reason */
	assert_int_equal(fs_write_atomic(xml_path, "<domain/>", 9, 0644), 0);
	assert_int_equal(vm_holder_spawn("test:///default", xml_path, "lab-holder", log, &pid, &fd), 0);
	assert_int_equal(vm_holder_wait(pid, fd, &why), -EIO);
	assert_non_null(strstr(why.buf, "error defining the domain"));
	fs_remove_tree(dir);
}

/* A VM on this machine uses the local backend, one on a host the remote; vm.json says which. */
static void test_backend_choice(void **state)
{
	char tmpl[] = "/tmp/lab-test-backend.XXXXXX";
	const char *state_dir = mkdtemp(tmpl);
	_cleanup_free_ char *vms = NULL, *dir = NULL, *json = NULL, *log = NULL;
	struct diags d = { 0 };
	struct vm v = { 0 };
	static const char local[] = "{\"name\": \"a\", \"domain\": \"lab-a\", \"identity\": \"/k\", "
				    "\"known_hosts\": \"/kh\", \"port\": 2222}";
	static const char remote[] = "{\"name\": \"a\", \"domain\": \"lab-a\", \"identity\": \"/k\", "
				     "\"known_hosts\": \"/kh\", \"port\": 2222, \"host\": \"box\", "
				     "\"remote_dir\": \"/var/lib/lab/vms/a\", \"via_host\": \"10.0.0.2\"}";

	(void)state;
	assert_non_null(state_dir);
	vms = path_join(state_dir, "vms");
	dir = path_join(vms, "a");
	assert_int_equal(path_mkdir_p(dir, 0700), 0);
	json = path_join(dir, "vm.json");
	assert_int_equal(fs_write_atomic(json, local, strlen(local), 0644), 0);
	assert_int_equal(vm_load(state_dir, "a", &v, &d), 0);
	assert_ptr_equal(v.backend, &vm_backend_local);
	/* no QEMU of its own here: no pid; its log is in its folder */
	assert_int_equal(vm_qemu_pid(&v), 0);
	log = vm_backend_local.qemu_log(&v);
	assert_non_null(strstr(log, "/vms/a/libvirt/log/qemu/lab-a.log"));
	vm_release(&v);
	assert_int_equal(fs_write_atomic(json, remote, strlen(remote), 0644), 0);
	assert_int_equal(vm_load(state_dir, "a", &v, &d), 0);
	assert_ptr_equal(v.backend, &vm_backend_remote);
	assert_int_equal(vm_qemu_pid(&v), -1);
	assert_null(vm_backend_remote.qemu_log(&v));
	assert_non_null(v.via.host);
	assert_string_equal(v.via.host, "10.0.0.2");
	vm_release(&v);
	/* a struct vm made by hand says it by its host */
	v.host_name = (char *)"box";
	assert_int_equal(vm_qemu_pid(&v), -1);
	assert_int_equal(d.n, 0);
	fs_remove_tree(state_dir);
}

/* The local backend: a port, this machine's CPUs, the instance's files where
 * they are, and the embedded driver's configuration in the VM's folder. */
static void test_local_prepare(void **state)
{
	char tmpl[] = "/tmp/lab-test-local.XXXXXX";
	const char *dir = mkdtemp(tmpl);
	_cleanup_free_ char *conf = NULL, *want_uri = NULL;
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	struct kartifact k = { .bzimage = (char *)"/k/bzImage" };
	struct instance in = { .disk = (char *)"/v/overlay.qcow2", .seed = (char *)"/v/seed.iso" };
	struct vm_opts o = { .kernel = &k };
	struct vm v = { .dir = (char *)dir, .console = (char *)"/v/console.log" };
	struct vm_machine m = { 0 };
	struct diags d = { 0 };

	(void)state;
	assert_non_null(dir);
	assert_int_equal(vm_backend_local.prepare(&v, &o, &in, &m, &d), 0);
	want_uri = xasprintf("qemu:///embed?root=%s/libvirt", dir);
	assert_string_equal(v.uri, want_uri);
	assert_true(v.port >= 16384 && v.port < 32768);
	assert_true(m.host.ncpus >= 1);
	assert_string_equal(m.kernel, "/k/bzImage");
	assert_string_equal(m.disk, "/v/overlay.qcow2");
	assert_string_equal(m.seed, "/v/seed.iso");
	assert_null(m.modules);
	assert_string_equal(m.console, "/v/console.log");
	conf = xasprintf("%s/libvirt/etc/qemu.conf", dir);
	assert_int_equal(strbuf_read_file(&text, conf, 4096), 0);
	assert_non_null(strstr(text.buf, "stdio_handler = \"file\""));
	vm_machine_release(&m);
	free(v.uri);
	/* a URI given: used as it is, no embedded configuration */
	o.uri = "test:///default";
	v.uri = NULL;
	assert_int_equal(vm_backend_local.prepare(&v, &o, &in, &m, &d), 0);
	assert_string_equal(v.uri, "test:///default");
	vm_machine_release(&m);
	free(v.uri);
	assert_int_equal(d.n, 0);
	fs_remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_housekeeping_cpus),
		cmocka_unit_test(test_holder_spawn),
		cmocka_unit_test(test_backend_choice),
		cmocka_unit_test(test_local_prepare),
		cmocka_unit_test(test_kvm_usable),
		cmocka_unit_test(test_libvirt_test_driver),
		cmocka_unit_test(test_libvirt_bad_xml),
		cmocka_unit_test(test_vm_name_check),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_remote_quoting),
		cmocka_unit_test(test_ssh_options),
		cmocka_unit_test(test_ssh_via),
		cmocka_unit_test(test_remote_ports),
		cmocka_unit_test(test_remote_connect_uri),
		cmocka_unit_test(test_qemu_stop_reason),
	};

	/* libvirt prints its errors to stderr by default; the tests check them */
	virSetErrorFunc(NULL, quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
