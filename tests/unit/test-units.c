/* SPDX-License-Identifier: MIT */
/* Units lab.yaml speaks: sizes, durations, CPU counts, cpu lists. */
#include "unit.h"
#include "util/alloc.h"
#include "util/units.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>

static void test_size(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(parse_size("4G", &v), 0);
	assert_int_equal(v, 4ULL << 30);
	assert_int_equal(parse_size("512M", &v), 0);
	assert_int_equal(v, 512ULL << 20);
	assert_int_equal(parse_size("1.5G", &v), 0);
	assert_int_equal(v, 3ULL << 29);
	assert_int_equal(parse_size("2GiB", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	v = 7;
	assert_int_equal(parse_size("4X", &v), -EINVAL);
	assert_int_equal(parse_size("", &v), -EINVAL);
	assert_int_equal(parse_size("G", &v), -EINVAL);
	assert_int_equal(parse_size("-1G", &v), -EINVAL);
	assert_int_equal(parse_size("0.3", &v), -EINVAL); /* fractional bytes */
	assert_int_equal(parse_size("99999999999T", &v), -EINVAL);
	assert_int_equal(v, 7); /* untouched on failure */
}

static void test_duration(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_duration("60s", &v), 0);
	assert_int_equal(v, 60000000ULL);
	assert_int_equal(parse_duration("5m", &v), 0);
	assert_int_equal(v, 300000000ULL);
	assert_int_equal(parse_duration("1h30m", &v), 0);
	assert_int_equal(v, 5400000000ULL);
	assert_int_equal(parse_duration("250ms", &v), 0);
	assert_int_equal(v, 250000ULL);
	assert_int_equal(parse_duration("10", &v), 0);
	assert_int_equal(v, 10000000ULL);
	assert_int_equal(parse_duration("1m30", &v), -EINVAL);
	assert_int_equal(parse_duration("5 min", &v), -EINVAL);
	assert_int_equal(parse_duration("s", &v), -EINVAL);
	assert_int_equal(parse_duration("", &v), -EINVAL);
}

static void test_count_or_percent(void **state)
{
	bool pct = false;
	double v = 0;

	(void)state;
	assert_int_equal(parse_count_or_percent("75%", &pct, &v), 0);
	assert_true(pct);
	assert_true(v == 75);
	assert_int_equal(parse_count_or_percent("8", &pct, &v), 0);
	assert_false(pct);
	assert_true(v == 8);
	assert_int_equal(parse_count_or_percent("0", &pct, &v), -EINVAL);
	assert_int_equal(parse_count_or_percent("0%", &pct, &v), -EINVAL);
	assert_int_equal(parse_count_or_percent("1.5", &pct, &v), -EINVAL);
	assert_int_equal(parse_count_or_percent("%", &pct, &v), -EINVAL);
}

static void test_percent(void **state)
{
	double f = 0;

	(void)state;
	assert_int_equal(parse_percent("5%", &f), 0);
	assert_true(f > 0.0499 && f < 0.0501);
	assert_int_equal(parse_percent("-2.5%", &f), 0);
	assert_true(f < -0.0249 && f > -0.0251);
	assert_int_equal(parse_percent("5", &f), -EINVAL);
	assert_int_equal(parse_percent("%", &f), -EINVAL);
}

static void test_cpulist(void **state)
{
	uint8_t bits[16] = { 0 };
	size_t max = 0;

	(void)state;
	assert_int_equal(parse_cpulist("0-3,8,10-11", bits, 128, &max), 0);
	assert_int_equal(bits[0], 0x0f);
	assert_int_equal(bits[1], 0x0d);
	assert_int_equal(max, 11);
	assert_int_equal(parse_cpulist("3-1", bits, 128, NULL), -EINVAL);
	assert_int_equal(parse_cpulist("1,,2", bits, 128, NULL), -EINVAL);
	assert_int_equal(parse_cpulist("", bits, 128, NULL), -EINVAL);
	assert_int_equal(parse_cpulist("200", bits, 128, NULL), -ERANGE);
	assert_int_equal(parse_cpulist("0-", bits, 128, NULL), -EINVAL);
}

static void test_uint(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
	assert_int_equal(parse_uint("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	assert_int_equal(parse_uint("11", 10, &v), -ERANGE);
	assert_int_equal(parse_uint("+1", 10, &v), -EINVAL);
	assert_int_equal(parse_uint(" 1", 10, &v), -EINVAL);
}

static void test_format(void **state)
{
	char *s;

	(void)state;
	s = format_size(4ULL << 30);
	assert_string_equal(s, "4G");
	free(s);
	s = format_size(1536ULL << 20);
	assert_string_equal(s, "1536M");
	free(s);
	s = format_duration(90ULL * 1000000);
	assert_string_equal(s, "90s");
	free(s);
	s = format_duration(2ULL * 3600 * 1000000);
	assert_string_equal(s, "2h");
	free(s);
	s = format_duration(1500);
	assert_string_equal(s, "1500us");
	free(s);
}

/* Each call's text against the expected one, freed. */
static void expect_text(char *got, const char *want)
{
	assert_string_equal(got, want);
	free(got);
}

static void test_human_number(void **state)
{
	(void)state;
	expect_text(human_number(15180, 0), "15.2k");
	expect_text(human_number(23850000, 0), "23.9M");
	expect_text(human_number(1.518e9, 0), "1.52G");
	expect_text(human_number(2.5e12, 0), "2.5T");
	expect_text(human_number(22, 0), "22");
	expect_text(human_number(22.0001, 4), "22");
	expect_text(human_number(21.96, 4), "21.96");
	expect_text(human_number(999.96, 3), "1k");     /* rounding carries into the prefix */
	expect_text(human_number(100020, 5), "100.02k");
	/* negative */
	expect_text(human_number(-3.5, 0), "-3.5");
	expect_text(human_number(-15180, 0), "-15.2k");
	expect_text(human_number(-0.00004, 0), "-40µ");
	/* tiny */
	expect_text(human_number(0.0152, 0), "0.0152");
	expect_text(human_number(0.001, 0), "0.001");
	expect_text(human_number(0.000152, 0), "152µ");
	expect_text(human_number(0.000999999, 0), "0.001"); /* not "1000µ" */
	expect_text(human_number(1.5e-7, 0), "150n");
	expect_text(human_number(2.76e-25, 0), "2.76×10⁻²⁵");
	/* huge */
	expect_text(human_number(4e24, 0), "4×10²⁴");
	expect_text(human_number(1.7976931348623157e308, 0), "1.8×10³⁰⁸");
	/* zero, NaN, infinities */
	expect_text(human_number(0, 0), "0");
	expect_text(human_number(-0.0, 0), "0");
	expect_text(human_number(NAN, 0), "n/a");
	expect_text(human_number(INFINITY, 0), "∞");
	expect_text(human_number(-INFINITY, 0), "-∞");
	expect_text(human_scientific(2.76e-7, 3), "2.76×10⁻⁷");
	expect_text(human_scientific(6.02e23, 0), "6.02×10²³");
}

static void test_human_seconds(void **state)
{
	(void)state;
	expect_text(human_seconds(0.0095, 0), "9.5 ms");
	expect_text(human_seconds(1.2, 0), "1.2 s");
	expect_text(human_seconds(0.00015, 0), "150 µs");
	expect_text(human_seconds(3e-9, 0), "3 ns");
	expect_text(human_seconds(0.99996, 0), "1 s"); /* not "1000 ms" */
	expect_text(human_seconds(150, 0), "150 s");
	expect_text(human_seconds(900, 0), "15 min");
	expect_text(human_seconds(5400, 0), "90 min");
	expect_text(human_seconds(10800, 0), "3 h");
	expect_text(human_seconds(-0.0095, 0), "-9.5 ms");
	expect_text(human_seconds(0, 0), "0 s");
	expect_text(human_seconds(NAN, 0), "n/a");
}

static void test_elapsed(void **state)
{
	static const struct {
		double s;
		const char *want;
	} cases[] = {
		{ 0, "0s" }, { 42.4, "42s" }, { 59.4, "59s" }, { 59.6, "1m00s" }, { 185, "3m05s" },
		{ 3599, "59m59s" }, { 3600, "1h00m" }, { 5460, "1h31m" }, { -3, "0s" }, { 1e300, "277777h46m" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_free_ char *s = format_elapsed(cases[i].s);

		assert_string_equal(s, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_elapsed),
		cmocka_unit_test(test_count_or_percent),
		cmocka_unit_test(test_percent),
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_human_number),
		cmocka_unit_test(test_human_seconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
