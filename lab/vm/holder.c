/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include "../util/alloc.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "domain.h"
#include "holder.h"
#include "../util/banned.h"

static volatile sig_atomic_t holder_stop;
static volatile sig_atomic_t holder_domain_stopped;

static volatile sig_atomic_t holder_reset;

static void holder_signal(int sig)
{
	if (sig == SIGUSR1)
		holder_reset = 1; /* lab vm reset: the machine's reset button */
	else
		holder_stop = 1;
}

static int holder_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	(void)conn;
	(void)dom;
	(void)opaque;
	if (event == VIR_DOMAIN_EVENT_STOPPED || event == VIR_DOMAIN_EVENT_CRASHED) {
		holder_domain_stopped = 1;
		fprintf(stderr, "lab holder: domain stopped (event %d, detail %d)\n", event, detail);
	}
	return 0;
}

static void holder_tick(int timer, void *opaque)
{
	(void)timer;
	(void)opaque;
}

static void holder_report(int fd, const char *fmt, ...) _printf_(2, 3);
static void holder_report(int fd, const char *fmt, ...)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (fd >= 0 && write(fd, sb.buf, sb.len) < 0)
		fprintf(stderr, "lab holder: cannot report: %s\n", strerror(errno));
}

const char *vm_virt_error(void)
{
	const virError *e = virGetLastError();

	return e && e->message ? e->message : "unknown libvirt error";
}

int vm_domain_start(const char *uri, const char *xml, void **ret_conn, void **ret_dom, struct strbuf *err)
{
	virConnectPtr conn;
	virDomainPtr dom;

	if (!(conn = virConnectOpen(uri))) {
		strbuf_addf(err, "cannot open %s: %s", uri, vm_virt_error());
		return -EIO;
	}
	if (!(dom = virDomainDefineXML(conn, xml))) {
		strbuf_addf(err, "defining the domain: %s", vm_virt_error());
		virConnectClose(conn);
		return -EINVAL;
	}
	if (virDomainCreate(dom) < 0) {
		strbuf_addf(err, "starting the domain: %s", vm_virt_error());
		virDomainUndefine(dom);
		virDomainFree(dom);
		virConnectClose(conn);
		return -EIO;
	}
	*ret_conn = conn;
	*ret_dom = dom;
	return 0;
}

void vm_domain_stop(void *conn, void *dom)
{
	if (virDomainIsActive(dom) == 1 && virDomainDestroy(dom) < 0)
		fprintf(stderr, "lab holder: destroy: %s\n", vm_virt_error());
	if (virDomainUndefine(dom) < 0)
		fprintf(stderr, "lab holder: undefine: %s\n", vm_virt_error());
	virDomainFree(dom);
	virConnectClose(conn);
}

int vm_domains_owned(void *conn, struct strv *names)
{
	virDomainPtr *doms = NULL;
	int n = virConnectListAllDomains(conn, &doms, 0);

	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++) {
		char *md = virDomainGetMetadata(doms[i], VIR_DOMAIN_METADATA_ELEMENT, LAB_XMLNS, 0);

		if (md) {
			strv_push(names, virDomainGetName(doms[i]));
			free(md);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	return 0;
}

_Noreturn void vm_holder_main(const char *uri, const char *xml_path, const char *domain, int ready_fd)
{
	_cleanup_strbuf_ struct strbuf xml = STRBUF_INIT, err = STRBUF_INIT;
	struct sigaction sa = { .sa_handler = holder_signal };
	void *conn = NULL, *dom = NULL;
	int r;

	(void)domain;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if (strbuf_read_file(&xml, xml_path, 1 << 22) < 0) {
		holder_report(ready_fd, "error cannot read %s\n", xml_path);
		_exit(1);
	}
	if (virEventRegisterDefaultImpl() < 0 || vm_domain_start(uri, xml.buf, &conn, &dom, &err) < 0) {
		holder_report(ready_fd, "error %s\n", err.len ? err.buf : vm_virt_error());
		_exit(1);
	}
	virConnectDomainEventRegisterAny(conn, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
					 VIR_DOMAIN_EVENT_CALLBACK(holder_lifecycle), NULL, NULL);
	holder_report(ready_fd, "ok\n");
	if (ready_fd >= 0)
		close(ready_fd);
	virEventAddTimeout(500, holder_tick, NULL, NULL);
	while (!holder_stop && !holder_domain_stopped) {
		r = virEventRunDefaultImpl();
		if (r < 0 && !holder_stop && !holder_reset)
			break;
		if (holder_reset) {
			holder_reset = 0;
			fprintf(stderr, "lab holder: reset: %s\n", virDomainReset(dom, 0) == 0 ? "done" : vm_virt_error());
		}
		if (virDomainIsActive(dom) == 0)
			holder_domain_stopped = 1;
	}
	fprintf(stderr, "lab holder: %s\n", holder_stop ? "asked to stop" : "the domain stopped");
	vm_domain_stop(conn, dom);
	_exit(0);
}


int vm_holder_spawn(const char *uri, const char *xml_path, const char *domain, const char *log, pid_t *ret_pid,
		    int *ret_ready_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644), nul = open("/dev/null", O_RDONLY);

		close(p[0]);
		setsid();
		if (nul >= 0)
			dup2(nul, STDIN_FILENO);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		/* The holder outlives this command: it keeps no descriptor of its
		 * caller's (a lock, the write end of a $(...) pipe) but the ready
		 * pipe, or the caller would wait on it for as long as the VM lives. */
		if (p[1] > 3)
			close_range(3, p[1] - 1, 0);
		close_range(p[1] + 1, ~0U, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_IGN);
		vm_holder_main(uri, xml_path, domain, p[1]);
	}
	close(p[1]);
	*ret_pid = pid;
	*ret_ready_fd = p[0];
	return 0;
}

int vm_holder_wait(pid_t pid, int ready_fd, struct strbuf *why)
{
	char buf[4096];
	ssize_t n;
	size_t got = 0;

	while (got < sizeof(buf) - 1 && (n = read(ready_fd, buf + got, sizeof(buf) - 1 - got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += (size_t)n;
	}
	close(ready_fd);
	buf[got] = '\0';
	if (!str_startswith(buf, "ok")) {
		int status;

		waitpid(pid, &status, 0);
		strbuf_addstr(why, got ? buf : "the holder exited without a word (see holder.log)");
		while (why->len && why->buf[why->len - 1] == '\n')
			strbuf_setlen(why, why->len - 1);
		return -EIO;
	}
	return 0;
}

static void quiet_errors(void *userdata, virErrorPtr e)
{
	(void)userdata;
	(void)e;
}

void vm_virt_quiet(void)
{
	virSetErrorFunc(NULL, quiet_errors);
}
