/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the units lab.yaml speaks: sizes ("4G", "512M", "1024"),
 * durations ("60s", "5m", "1h30m", "250ms"), CPU counts ("8" or "75%") and
 * CPU lists ("0-3,8,10-11"). Each returns 0 or -EINVAL and leaves its
 * output untouched on failure. Then the formatters back, and the ones that
 * write a measured figure for a person (human_*: reports).
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
/* A time as progress lines say it, whole seconds: 42s, 3m05s, 1h31m. */
char *format_elapsed(double seconds);

/* Numbers a person reads at a glance, never in e-notation: `digits`
 * significant digits (3 when 0), trailing zeros dropped, an SI prefix from
 * k to E and from µ to a: "15.2k", "23.9M", "1.52G", "-3.5", "0.0152",
 * "152µ", "0"; beyond those prefixes "2.5×10²⁴"; NaN "n/a", infinities
 * "∞" and "-∞". */
char *human_number(double v, unsigned digits);
/* A duration in seconds the same way, in the unit that fits: "9.5 ms",
 * "1.2 s", "150 µs", "3 ns", "100 s", "15 min", "3 h" ("0 s", "n/a"). */
char *human_seconds(double s, unsigned digits);
/* mantissa×10 to the power e, the power in superscript digits: "2.76×10⁻⁷". */
char *human_scientific(double v, unsigned digits);
