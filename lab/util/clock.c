/* SPDX-License-Identifier: MIT */
#include "alloc.h"
#include "clock.h"
#include "banned.h"

char *utc_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}
