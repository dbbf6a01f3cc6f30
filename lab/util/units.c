/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "strbuf.h"
#include "units.h"
#include "banned.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int parse_uint(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (!is_digit(*p))
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_double(const char *s, double *ret)
{
	char *end;
	double v;

	if (!*s || strchr(" \t\n", *s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -EINVAL;
	/* refuse hex floats and "inf"/"nan" spellings that strtod takes */
	for (const char *p = s; *p; p++)
		if (!(is_digit(*p) || *p == '.' || *p == '-' || *p == '+' || *p == 'e' || *p == 'E'))
			return -EINVAL;
	*ret = v;
	return 0;
}

/* A decimal number (integer part and optional fraction) followed by a unit. */
static int split_number(const char **p, double *ret)
{
	const char *s = *p;
	double v = 0, scale = 0.1;
	bool any = false;

	while (is_digit(*s)) {
		v = v * 10 + (*s - '0');
		any = true;
		s++;
	}
	if (*s == '.') {
		s++;
		while (is_digit(*s)) {
			v += (*s - '0') * scale;
			scale /= 10;
			any = true;
			s++;
		}
	}
	if (!any || v > 1e18)
		return -EINVAL;
	*p = s;
	*ret = v;
	return 0;
}

int parse_size(const char *s, uint64_t *ret_bytes)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{ "", 1 },
		{ "B", 1 },
		{ "K", 1024.0 }, { "KiB", 1024.0 }, { "k", 1024.0 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 },
		{ "T", 1099511627776.0 }, { "TiB", 1099511627776.0 },
	};
	const char *p = s;
	double v;

	if (split_number(&p, &v) < 0)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (streq(p, units[i].suffix)) {
			double b = v * units[i].mult;

			if (b >= 1.8e19 || b != floor(b))
				return -EINVAL;
			*ret_bytes = (uint64_t)b;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_duration(const char *s, uint64_t *ret_usec)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		/* longest first so "ms" is not read as "m" + "s" */
		{ "ms", 1e3 }, { "us", 1 }, { "h", 3600e6 }, { "m", 60e6 }, { "s", 1e6 },
	};
	const char *p = s;
	double total = 0;
	bool bare = true;

	if (!*s)
		return -EINVAL;
	while (*p) {
		double v;
		size_t i;

		if (split_number(&p, &v) < 0)
			return -EINVAL;
		if (!*p) {
			if (!bare)
				return -EINVAL; /* "1m30" is ambiguous */
			total += v * 1e6;
			break;
		}
		bare = false;
		for (i = 0; i < ELEMENTSOF(units); i++) {
			size_t l = strlen(units[i].suffix);

			if (strncmp(p, units[i].suffix, l) == 0) {
				total += v * units[i].mult;
				p += l;
				break;
			}
		}
		if (i == ELEMENTSOF(units))
			return -EINVAL;
	}
	if (total >= 1.8e19)
		return -EINVAL;
	*ret_usec = (uint64_t)llround(total);
	return 0;
}

int parse_count_or_percent(const char *s, bool *ret_percent, double *ret_value)
{
	size_t l = strlen(s);
	const char *p = s;
	double v;

	if (l && s[l - 1] == '%') {
		_cleanup_free_ char *num = xstrndup(s, l - 1);

		p = num;
		if (split_number(&p, &v) < 0 || *p || v <= 0 || v > 1000)
			return -EINVAL;
		*ret_percent = true;
		*ret_value = v;
		return 0;
	}
	if (split_number(&p, &v) < 0 || *p || v != floor(v) || v < 1)
		return -EINVAL;
	*ret_percent = false;
	*ret_value = v;
	return 0;
}

int parse_percent(const char *s, double *ret_fraction)
{
	size_t l = strlen(s);
	_cleanup_free_ char *num = NULL;
	const char *p;
	double v, sign = 1;

	if (l < 2 || s[l - 1] != '%')
		return -EINVAL;
	num = xstrndup(s, l - 1);
	p = num;
	if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		p++;
	}
	if (split_number(&p, &v) < 0 || *p)
		return -EINVAL;
	*ret_fraction = sign * v / 100.0;
	return 0;
}

int parse_cpulist(const char *s, uint8_t *bits, size_t nbits, size_t *ret_max)
{
	const char *p = s;
	size_t max = 0;
	bool any = false;

	while (*p) {
		uint64_t a = 0, b;
		bool digits = false;

		while (is_digit(*p)) {
			a = a * 10 + (uint64_t)(*p++ - '0');
			digits = true;
			if (a >= nbits)
				return -ERANGE;
		}
		if (!digits)
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			digits = false;
			b = 0;
			while (is_digit(*p)) {
				b = b * 10 + (uint64_t)(*p++ - '0');
				digits = true;
				if (b >= nbits)
					return -ERANGE;
			}
			if (!digits || b < a)
				return -EINVAL;
		}
		for (uint64_t c = a; c <= b; c++)
			bits[c / 8] |= (uint8_t)(1u << (c % 8));
		if (b > max)
			max = (size_t)b;
		any = true;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	if (!any)
		return -EINVAL;
	if (ret_max)
		*ret_max = max;
	return 0;
}

char *format_size(uint64_t bytes)
{
	static const char *const suffix[] = { "", "K", "M", "G", "T" };
	size_t i = 0;

	while (i + 1 < ELEMENTSOF(suffix) && bytes && bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	return xasprintf("%llu%s", (unsigned long long)bytes, suffix[i]);
}

char *format_duration(uint64_t usec)
{
	if (usec % 1000000 == 0) {
		uint64_t s = usec / 1000000;

		if (s && s % 3600 == 0)
			return xasprintf("%lluh", (unsigned long long)(s / 3600));
		if (s && s % 60 == 0)
			return xasprintf("%llum", (unsigned long long)(s / 60));
		return xasprintf("%llus", (unsigned long long)s);
	}
	if (usec % 1000 == 0)
		return xasprintf("%llums", (unsigned long long)(usec / 1000));
	return xasprintf("%lluus", (unsigned long long)usec);
}

char *format_elapsed(double s)
{
	if (!(s >= 0))
		s = 0;
	if (s > 1e9)
		s = 1e9;
	s = floor(s + 0.5);
	if (s < 60)
		return xasprintf("%.0fs", s);
	if (s < 3600)
		return xasprintf("%dm%02ds", (int)s / 60, (int)s % 60);
	return xasprintf("%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

/* v rounded to `digits` significant digits. */
static double round_sig(double v, unsigned digits)
{
	double p, r;

	if (v == 0 || !isfinite(v))
		return v;
	p = pow(10, floor(log10(fabs(v))) - (digits - 1));
	r = round(v / p) * p;
	return isfinite(r) ? r : v; /* near DBL_MAX: as it is */
}

/* m (rounded already) in `digits` significant digits, trailing zeros dropped. */
static char *plain_digits(double m, unsigned digits)
{
	int dec = m == 0 ? 0 : (int)digits - 1 - (int)floor(log10(fabs(m)) + 1e-9);
	char *s = xasprintf("%.*f", dec > 0 ? dec : 0, m);
	char *dot = strchr(s, '.');

	if (dot) {
		char *end = s + strlen(s);

		while (end > dot + 1 && end[-1] == '0')
			*--end = '\0';
		if (end == dot + 1)
			*dot = '\0';
	}
	if (streq(s, "-0"))
		memmove(s, s + 1, 2);
	return s;
}

char *human_scientific(double v, unsigned digits)
{
	static const char *const sup[] = { "⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹" };
	_cleanup_free_ char *m = NULL;
	char pow_digits[16];
	int e;
	struct strbuf sb = STRBUF_INIT;

	if (!digits)
		digits = 3;
	if (v == 0 || !isfinite(v))
		return human_number(v, digits);
	v = round_sig(v, digits);
	e = (int)floor(log10(fabs(v)) + 1e-9);
	m = plain_digits(v / pow(10, e), digits);
	strbuf_addf(&sb, "%s×10", m);
	if (e < 0)
		strbuf_addstr(&sb, "⁻");
	snprintf(pow_digits, sizeof(pow_digits), "%d", abs(e));
	for (const char *p = pow_digits; *p; p++)
		strbuf_addstr(&sb, sup[*p - '0']);
	return strbuf_detach(&sb, NULL);
}

char *human_number(double v, unsigned digits)
{
	static const char *const big[] = { "", "k", "M", "G", "T", "P", "E" };
	static const char *const small[] = { "", "m", "µ", "n", "p", "f", "a" };
	_cleanup_free_ char *m = NULL;
	double a;
	int k;

	if (!digits)
		digits = 3;
	if (isnan(v))
		return xstrdup("n/a");
	if (isinf(v))
		return xstrdup(v > 0 ? "∞" : "-∞");
	if (v == 0)
		return xstrdup("0");
	v = round_sig(v, digits);
	a = fabs(v);
	if (a >= 1e21 || a < 1e-18)
		return human_scientific(v, digits);
	if (a >= 1000) {
		k = (int)floor(log10(a) / 3 + 1e-9);
		m = plain_digits(v / pow(1000, k), digits);
		return xasprintf("%s%s", m, big[k]);
	}
	if (a >= 0.001) /* no milli: 0.0152 reads as a number, 15.2m as metres */
		return plain_digits(v, digits);
	k = (int)ceil(-log10(a) / 3 - 1e-9);
	m = plain_digits(v * pow(1000, k), digits);
	return xasprintf("%s%s", m, small[k]);
}

char *human_seconds(double s, unsigned digits)
{
	static const struct {
		double below, scale;
		const char *unit;
	} units[] = {
		/* 100 s reads better than 1.67 min, 90 min than 1.5 h */
		{ 1e-6, 1e9, "ns" }, { 1e-3, 1e6, "µs" }, { 1, 1e3, "ms" }, { 600, 1, "s" }, { 7200, 1.0 / 60, "min" },
	};
	_cleanup_free_ char *n = NULL;
	double a;

	if (!digits)
		digits = 3;
	if (isnan(s))
		return xstrdup("n/a");
	if (s == 0)
		return xstrdup("0 s");
	s = round_sig(s, digits);
	a = fabs(s);
	for (size_t i = 0; i < ELEMENTSOF(units); i++)
		if (a < units[i].below) {
			n = human_number(s * units[i].scale, digits);
			return xasprintf("%s %s", n, units[i].unit);
		}
	n = human_number(s / 3600, digits);
	return xasprintf("%s h", n);
}
