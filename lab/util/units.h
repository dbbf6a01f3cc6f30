/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the units lab.yaml speaks: sizes ("4G", "512M", "1024"),
 * durations ("60s", "5m", "1h30m", "250ms"), CPU counts ("8" or "75%") and
 * CPU lists ("0-3,8,10-11"). Each returns 0 or -EINVAL and leaves its
 * output untouched on failure.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Bytes; suffixes K M G T (powers of 1024), optional "iB"/"B". */
int parse_size(const char *s, uint64_t *ret_bytes);
/* Microseconds. A bare number means seconds. */
int parse_duration(const char *s, uint64_t *ret_usec);
/* Non-negative integer that fits in `max`. */
int parse_uint(const char *s, uint64_t max, uint64_t *ret);
/* Float, finite. */
int parse_double(const char *s, double *ret);
/* "75%" -> percent=true, value=75; "8" -> percent=false, value=8. */
int parse_count_or_percent(const char *s, bool *ret_percent, double *ret_value);
/* Signed percentage with optional sign: "5%", "-2.5%". Returned as a fraction. */
int parse_percent(const char *s, double *ret_fraction);

/* CPU lists, as the kernel prints them. Sets bits in a byte array of `nbits`. */
int parse_cpulist(const char *s, uint8_t *bits, size_t nbits, size_t *ret_max);
char *format_size(uint64_t bytes);
char *format_duration(uint64_t usec);
