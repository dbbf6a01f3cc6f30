/* SPDX-License-Identifier: MIT */
#pragma once
#include <time.h>

/* Seconds on the monotonic clock: for measuring how long something took. */
static inline double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Now in UTC as ISO 8601 ("2026-12-02T06:30:00Z"), allocated. */
char *utc_now(void);
