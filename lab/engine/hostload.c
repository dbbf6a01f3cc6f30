/* SPDX-License-Identifier: MIT */
/*
 * Host CPU load around a run (see hostload.h). A guest under TCG shares
 * the host's CPUs with whatever else runs there; pcp-auto's base run 2 took
 * 292 s instead of 104 s because a kernel build shared them. These numbers
 * put that next to every run, and the report compares them between the
 * kernels like any metric.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hostload.h"
#include "../util/alloc.h"
#include "../util/banned.h"

int host_stat_parse(const char *proc_stat, unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	const char *p = proc_stat;
	char *end;
	int n = 0;

	if (strncmp(p, "cpu ", 4))
		return -EINVAL;
	p += 4;
	/* user nice system idle iowait irq softirq steal (guest, guest_nice are in user, nice) */
	while (n < 8) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		v[n++] = strtoull(p, &end, 10);
		if (errno)
			return -EINVAL;
		p = end;
	}
	if (n < 4)
		return -EINVAL;
	*total = 0;
	for (int i = 0; i < n; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];
	return 0;
}

int host_pid_cputime(const char *pid_stat, unsigned long long *ticks)
{
	const char *p = strrchr(pid_stat, ')');
	unsigned long long utime, stime;

	/* after the comm: state (field 3) ... utime (14) stime (15) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return -EINVAL;
	*ticks = utime + stime;
	return 0;
}

int host_cpu_sample(pid_t qemu, struct host_cpu_sample *s)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	memset(s, 0, sizeof(*s));
	if ((r = strbuf_read_file(&sb, "/proc/stat", 1 << 20)) < 0)
		return r;
	if ((r = host_stat_parse(sb.buf ? sb.buf : "", &s->busy, &s->total)) < 0)
		return r;
	if (qemu > 0) {
		_cleanup_free_ char *path = xasprintf("/proc/%d/stat", (int)qemu);

		strbuf_reset(&sb);
		if (strbuf_read_file(&sb, path, 1 << 16) == 0 && host_pid_cputime(sb.buf ? sb.buf : "", &s->qemu) == 0)
			s->has_qemu = true;
	}
	return 0;
}

void host_load_format(const struct host_cpu_sample *a, const struct host_cpu_sample *b, struct strbuf *out)
{
	double total, busy, qemu;

	if (b->total <= a->total || b->busy < a->busy)
		return;
	total = (double)(b->total - a->total);
	busy = 100.0 * (double)(b->busy - a->busy) / total;
	strbuf_addf(out, "host.busy_pct %.4g\n", busy);
	if (a->has_qemu && b->has_qemu && b->qemu >= a->qemu) {
		/* /proc/stat and /proc/PID/stat count in the same USER_HZ ticks */
		qemu = 100.0 * (double)(b->qemu - a->qemu) / total;
		if (qemu > busy)
			qemu = busy;
		strbuf_addf(out, "host.qemu_pct %.4g\nhost.other_pct %.4g\n", qemu, busy - qemu);
	}
}
