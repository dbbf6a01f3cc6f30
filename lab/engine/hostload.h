/* SPDX-License-Identifier: MIT */
#ifndef LAB_RUN_HOSTLOAD_H
#define LAB_RUN_HOSTLOAD_H

#include <stdbool.h>
#include <sys/types.h>
#include "../util/strbuf.h"

/*
 * The host's CPU time around a run: /proc/stat's busy and total jiffies
 * and the guest's QEMU process's user+system ticks, sampled when the
 * driver starts and when it ends. Another job on the host during a run is
 * what the difference shows (lab run's host.* metrics).
 */
struct host_cpu_sample {
	unsigned long long busy, total; /* all CPUs, /proc/stat "cpu" line */
	unsigned long long qemu;        /* the QEMU process's utime + stime */
	bool has_qemu;
};

/* Pure: the "cpu " line of /proc/stat's text into busy and total jiffies
 * (busy: all but idle and iowait; guest time is already in user). 0 or -EINVAL. */
int host_stat_parse(const char *proc_stat, unsigned long long *busy, unsigned long long *total);
/* Pure: utime + stime of /proc/PID/stat's text (fields 14 and 15, after the
 * comm in parentheses, which may hold spaces). 0 or -EINVAL. */
int host_pid_cputime(const char *pid_stat, unsigned long long *ticks);
/* Read this machine's /proc/stat and, for qemu > 0, /proc/QEMU/stat. */
int host_cpu_sample(pid_t qemu, struct host_cpu_sample *s);
/*
 * Pure: "host.busy_pct V" (the host's CPUs busy over the window, percent of
 * all of them), "host.qemu_pct V" (this guest's QEMU) and "host.other_pct V"
 * (the rest: other guests, lab, ssh, any other job) as metric lines. Nothing
 * when the window is empty or the counters went backwards.
 */
void host_load_format(const struct host_cpu_sample *a, const struct host_cpu_sample *b, struct strbuf *out);

#endif
