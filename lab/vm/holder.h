/* SPDX-License-Identifier: MIT */
/*
 * The holder: a process per VM that keeps the libvirt connection open
 * with the event loop running (with libvirt's embedded driver a domain
 * lives only as long as the connection that made it). It defines and
 * starts the domain, says "ok" or "error WHY" on a pipe, and on SIGTERM or
 * when the domain stops destroys and undefines it and exits; SIGUSR1
 * presses the domain's reset button. The libvirt part is usable on any
 * URI (test:///default in the tests). Handles are virConnectPtr and
 * virDomainPtr, opaque here so callers need no libvirt headers.
 */
#pragma once
#include <sys/types.h>

struct strbuf;
struct strv;

/* Open, define, start: 0, or negative with libvirt's reason in err. */
int vm_domain_start(const char *uri, const char *xml, void **ret_conn, void **ret_dom, struct strbuf *err);
/* Destroy, undefine, close. */
void vm_domain_stop(void *conn, void *dom);
/* Names of the domains on conn that carry lab's metadata. */
int vm_domains_owned(void *conn, struct strv *names);

/* Run the holder in this process (never returns); `lab vm up` internals and a test hook. */
_Noreturn void vm_holder_main(const char *uri, const char *xml_path, const char *domain, int ready_fd);
/*
 * Fork the holder, detached (its own session, stdio appended to `log`):
 * its pid and the pipe its word comes on. The caller records the pid
 * before it waits (vm_holder_wait), so a lab killed meanwhile leaves a VM
 * that vm_gc finds.
 */
int vm_holder_spawn(const char *uri, const char *xml_path, const char *domain, const char *log, pid_t *ret_pid,
		    int *ret_ready_fd);
/* The holder's word: 0 when the domain started; else -EIO, the holder reaped and why in `why`. Closes ready_fd. */
int vm_holder_wait(pid_t pid, int ready_fd, struct strbuf *why);

/* libvirt's last error message, or a stand-in. */
const char *vm_virt_error(void);
/* libvirt prints no error of its own from now on (lab reports the one that matters). */
void vm_virt_quiet(void);
