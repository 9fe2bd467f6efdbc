/* test_units.c - the unit parsers of the scenario format (units.h). */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "gpuplan/units.h"

/* 2026-10-27T00:00:00Z, the start of the worked example (scenarios/eval-window.yaml). */
#define START_2026_10_27 INT64_C(1793059200)

static sim_time dur(const char *s)
{
	sim_time t = -1;
	cr_assert_eq(units_duration(s, &t), 0, "\"%s\" should parse as a duration", s);
	return t;
}

static void dur_bad(const char *s)
{
	sim_time t = 12345;
	cr_assert_eq(units_duration(s, &t), -1, "\"%s\" should be rejected", s);
	cr_assert_eq(t, 12345, "a rejected duration must not write its output");
}

static double size(const char *s)
{
	double b = -1;
	cr_assert_eq(units_size(s, &b), 0, "\"%s\" should parse as a size", s);
	return b;
}

static void size_bad(const char *s)
{
	double b;
	cr_assert_eq(units_size(s, &b), -1, "\"%s\" should be rejected", s);
}

/* ---- durations ------------------------------------------------------- */

Test(units_duration, single_units_convert_to_microseconds)
{
	cr_assert_eq(dur("90s"), 90 * SIM_SECOND);
	cr_assert_eq(dur("500ms"), 500000);
	cr_assert_eq(dur("250us"), 250);
	cr_assert_eq(dur("15m"), 15 * SIM_MINUTE);
	cr_assert_eq(dur("15min"), 15 * SIM_MINUTE);
	cr_assert_eq(dur("2h"), 2 * SIM_HOUR);
	cr_assert_eq(dur("2d"), 2 * SIM_DAY);
}

Test(units_duration, compound_durations_add_up)
{
	cr_assert_eq(dur("1h30m"), 90 * SIM_MINUTE);
	cr_assert_eq(dur("1d2h3m4s"), SIM_DAY + 2 * SIM_HOUR + 3 * SIM_MINUTE + 4 * SIM_SECOND);
	cr_assert_eq(dur("1s500ms"), 1500000);
}

Test(units_duration, fractions_round_to_nearest_microsecond)
{
	cr_assert_eq(dur("1.5h"), 90 * SIM_MINUTE);
	cr_assert_eq(dur("0.1s"), 100000);
	cr_assert_eq(dur("0.0004ms"), 0);
	cr_assert_eq(dur("0.0006ms"), 1);
	cr_assert_eq(dur("1.4us"), 1);
	cr_assert_eq(dur(".5s"), 500000);
}

Test(units_duration, bare_number_is_seconds)
{
	cr_assert_eq(dur("15"), 15 * SIM_SECOND);
	cr_assert_eq(dur("2.5"), 2500000);
}

Test(units_duration, zero_is_valid)
{
	cr_assert_eq(dur("0s"), 0);
	cr_assert_eq(dur("0"), 0);
}

Test(units_duration, micro_sign_spelling_is_accepted)
{
	cr_assert_eq(dur("7\xc2\xb5s"), 7);
	cr_assert_eq(dur("7\xce\xbcs"), 7);
}

Test(units_duration, negatives_are_rejected)
{
	dur_bad("-5m");
	dur_bad("-0s");
	dur_bad("+5m");
}

Test(units_duration, empty_and_null_are_rejected)
{
	dur_bad("");
	sim_time t;
	cr_assert_eq(units_duration(NULL, &t), -1);
}

Test(units_duration, junk_is_rejected)
{
	dur_bad("10x");
	dur_bad("1h h");
	dur_bad(" 1h");
	dur_bad("1h ");
	dur_bad("1 h");
	dur_bad("h");
	dur_bad("s");
	dur_bad("1.2.3s");
	dur_bad(".s");
	dur_bad("1e3s");
	dur_bad("inf");
	dur_bad("nan");
	dur_bad("1H");
}

Test(units_duration, components_must_be_largest_first_and_not_repeated)
{
	dur_bad("30m1h");
	dur_bad("1m30m");
	dur_bad("1min30m");
}

Test(units_duration, bare_number_after_a_unit_is_rejected) { dur_bad("1h30"); }

Test(units_duration, overflowing_values_are_rejected)
{
	dur_bad("200000000d");
	cr_assert_eq(dur("100000d"), 100000 * SIM_DAY);
}

/* ---- sizes ----------------------------------------------------------- */

Test(units_size, binary_units_are_powers_of_1024)
{
	cr_assert_eq(size("80GiB"), 80.0 * 1073741824.0);
	cr_assert_eq(size("512MiB"), 512.0 * 1048576.0);
	cr_assert_eq(size("1TiB"), 1099511627776.0);
	cr_assert_eq(size("64KiB"), 65536.0);
	cr_assert_eq(size("1.5GiB"), 1.5 * 1073741824.0);
}

Test(units_size, decimal_units_are_powers_of_1000)
{
	cr_assert_eq(size("80GB"), 80e9);
	cr_assert_eq(size("500MB"), 500e6);
	cr_assert_eq(size("2TB"), 2e12);
	cr_assert_eq(size("3kB"), 3000.0);
	cr_assert_eq(size("100B"), 100.0);
}

Test(units_size, kubernetes_quantity_suffixes_are_accepted)
{
	cr_assert_eq(size("64Gi"), 64.0 * 1073741824.0);
	cr_assert_eq(size("1G"), 1e9);
	cr_assert_eq(size("512Mi"), 512.0 * 1048576.0);
}

Test(units_size, bare_number_is_bytes)
{
	cr_assert_eq(size("4096"), 4096.0);
	cr_assert_eq(size("8e10"), 8e10);
	cr_assert_eq(size("0"), 0.0);
}

Test(units_size, invalid_sizes_are_rejected)
{
	size_bad("");
	size_bad("-1GiB");
	size_bad("GiB");
	size_bad("80gib");
	size_bad("80 GiB");
	size_bad("80GiBs");
	size_bad("80Gb/s");
	size_bad("1e999GB");
	size_bad("0x10");
}

/* ---- rates and bandwidth --------------------------------------------- */

Test(units_rate, rates_convert_to_per_second)
{
	double r = -1;
	cr_assert_eq(units_rate("10/s", &r), 0);
	cr_assert_float_eq(r, 10.0, 1e-12);
	cr_assert_eq(units_rate("5/m", &r), 0);
	cr_assert_float_eq(r, 5.0 / 60.0, 1e-12);
	cr_assert_eq(units_rate("5/min", &r), 0);
	cr_assert_float_eq(r, 5.0 / 60.0, 1e-12);
	cr_assert_eq(units_rate("300/h", &r), 0);
	cr_assert_float_eq(r, 300.0 / 3600.0, 1e-12);
	cr_assert_eq(units_rate("20/d", &r), 0);
	cr_assert_float_eq(r, 20.0 / 86400.0, 1e-12);
	cr_assert_eq(units_rate("0.5/s", &r), 0);
	cr_assert_float_eq(r, 0.5, 1e-12);
}

Test(units_rate, invalid_rates_are_rejected)
{
	double r;
	const char *bad[] = {"",     "10",     "10/",   "/s",    "10/x",
			     "-1/s", "10/s/s", "10 /s", "ten/s", "10/S"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_rate(bad[i], &r), -1, "\"%s\" should be rejected", bad[i]);
}

Test(units_bandwidth, bandwidth_converts_to_bytes_per_second)
{
	double b = -1;
	cr_assert_eq(units_bandwidth("2039GB/s", &b), 0);
	cr_assert_eq(b, 2039e9);
	cr_assert_eq(units_bandwidth("1.5TB/s", &b), 0);
	cr_assert_eq(b, 1.5e12);
	cr_assert_eq(units_bandwidth("900GiB/s", &b), 0);
	cr_assert_eq(b, 900.0 * 1073741824.0);
}

Test(units_bandwidth, invalid_bandwidths_are_rejected)
{
	double b;
	const char *bad[] = {"",   "2039GB", "2039GB/h", "GB/s",
			     "/s", "-5GB/s", "2039XB/s", "2039GB/s "};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_bandwidth(bad[i], &b), -1, "\"%s\" should be rejected", bad[i]);
}

/* ---- RFC 3339 -------------------------------------------------------- */

static int64_t epoch(const char *s)
{
	int64_t e = -1;
	cr_assert_eq(units_rfc3339(s, &e), 0, "\"%s\" should parse as RFC 3339", s);
	return e;
}

Test(units_rfc3339, utc_times_match_known_epochs)
{
	cr_assert_eq(epoch("1970-01-01T00:00:00Z"), 0);
	cr_assert_eq(epoch("2026-10-27T00:00:00Z"), START_2026_10_27);
	cr_assert_eq(epoch("2026-01-01T00:00:00Z"), INT64_C(1767225600));
	cr_assert_eq(epoch("2000-03-01T12:34:56Z"), INT64_C(951914096));
	cr_assert_eq(epoch("1969-12-31T23:59:59Z"), -1);
}

Test(units_rfc3339, offsets_are_subtracted_to_get_utc)
{
	cr_assert_eq(epoch("2026-10-27T02:00:00+02:00"), START_2026_10_27);
	cr_assert_eq(epoch("2026-10-26T19:30:00-04:30"), START_2026_10_27);
	cr_assert_eq(epoch("2026-10-27T00:00:00+00:00"), START_2026_10_27);
	cr_assert_eq(epoch("2026-10-27T00:00:00-00:00"), START_2026_10_27);
}

Test(units_rfc3339, fractional_seconds_are_accepted_and_dropped)
{
	cr_assert_eq(epoch("2026-10-27T00:00:00.999999Z"), START_2026_10_27);
	cr_assert_eq(epoch("2026-10-27T00:00:01.5Z"), START_2026_10_27 + 1);
	cr_assert_eq(epoch("2026-10-27T00:00:00.123456789+00:00"), START_2026_10_27);
}

Test(units_rfc3339, lowercase_and_space_separators_are_accepted)
{
	cr_assert_eq(epoch("2026-10-27t00:00:00z"), START_2026_10_27);
	cr_assert_eq(epoch("2026-10-27 00:00:00Z"), START_2026_10_27);
}

Test(units_rfc3339, date_only_is_midnight_utc)
{
	cr_assert_eq(epoch("2026-10-27"), START_2026_10_27);
}

Test(units_rfc3339, leap_years_have_february_29)
{
	cr_assert_eq(epoch("2024-02-29T00:00:00Z"), INT64_C(1709164800));
	cr_assert_eq(epoch("2000-02-29T00:00:00Z"), INT64_C(951782400));
	cr_assert_eq(epoch("2024-03-01T00:00:00Z") - epoch("2024-02-28T00:00:00Z"), 2 * 86400);
	cr_assert_eq(epoch("2025-03-01T00:00:00Z") - epoch("2025-02-28T00:00:00Z"), 86400);
}

Test(units_rfc3339, invalid_dates_are_rejected)
{
	int64_t e;
	const char *bad[] = {
		"",
		"2026-10-27T00:00:00",
		"2025-02-29T00:00:00Z",
		"1900-02-29T00:00:00Z",
		"2026-13-01T00:00:00Z",
		"2026-00-10T00:00:00Z",
		"2026-04-31T00:00:00Z",
		"2026-10-27T24:00:00Z",
		"2026-10-27T12:60:00Z",
		"2026-10-27T12:00:61Z",
		"2026-10-27T12:00:00.Z",
		"2026-10-27T12:00:00+2:00",
		"2026-10-27T12:00:00+24:00",
		"2026-10-27T12:00:00+02:60",
		"2026-10-27T12:00:00Zjunk",
		"2026-10-27T12:00Z",
		"26-10-27T12:00:00Z",
		"2026/10/27T12:00:00Z",
		"2026-10-27X12:00:00Z",
		"13:00",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_rfc3339(bad[i], &e), -1, "\"%s\" should be rejected", bad[i]);
}

/* A trace's timestamp (the Azure LLM trace's) has no offset: it is UTC, and
 * its date must exist as a scenario's must. */
Test(units_rfc3339, a_timestamp_without_offset_is_utc_on_a_real_date)
{
	int64_t e;
	int32_t usec;
	cr_assert_eq(units_timestamp("2026-10-27 00:00:01.9799600", &e, &usec), 0);
	cr_assert_eq(e, START_2026_10_27 + 1);
	cr_assert_eq(usec, 979960);
	cr_assert_eq(units_timestamp("2026-10-27T02:00:00+02:00", &e, &usec), 0);
	cr_assert_eq(e, START_2026_10_27);
	cr_assert_eq(units_timestamp("2024-02-29 12:00:00", &e, &usec), 0);
	const char *bad[] = {"2023-11-31 18:40:46.68", "2023-02-29 18:40:46.68",
			     "2023-02-30 00:00:00", "2023-11-16 18:40:46 junk"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_timestamp(bad[i], &e, &usec), -1, "\"%s\" should be rejected",
			     bad[i]);
	cr_assert_eq(units_rfc3339("2026-10-27 00:00:00", &e), -1,
		     "a scenario's time has an offset");
}

Test(units_rfc3339, formatting_round_trips)
{
	const char *times[] = {"1970-01-01T00:00:00Z", "2026-10-27T00:00:00Z",
			       "2024-02-29T23:59:59Z", "1969-07-20T20:17:40Z",
			       "2100-12-31T12:00:00Z", "0001-01-01T00:00:00Z"};
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		char buf[32];
		units_format_rfc3339(epoch(times[i]), buf, sizeof buf);
		cr_assert_str_eq(buf, times[i]);
	}
}

Test(units_rfc3339, formatting_fits_in_21_bytes)
{
	char buf[21];
	units_format_rfc3339(START_2026_10_27 + 13 * 3600 + 5 * 60 + 7, buf, sizeof buf);
	cr_assert_str_eq(buf, "2026-10-27T13:05:07Z");
}

/* ---- clock times and times of day ------------------------------------ */

static int32_t tod(const char *s)
{
	int32_t v = -1;
	cr_assert_eq(units_time_of_day(s, &v), 0, "\"%s\" should parse as a time of day", s);
	return v;
}

Test(units_time_of_day, hours_minutes_and_seconds_since_midnight)
{
	cr_assert_eq(tod("13:00"), 13 * 3600);
	cr_assert_eq(tod("13:00:30"), 13 * 3600 + 30);
	cr_assert_eq(tod("00:00"), 0);
	cr_assert_eq(tod("9:05"), 9 * 3600 + 5 * 60);
	cr_assert_eq(tod("23:59:59"), 86399);
	cr_assert_eq(tod("24:00"), 86400);
	cr_assert_eq(tod("24:00:00"), 86400);
}

Test(units_time_of_day, out_of_range_or_malformed_times_are_rejected)
{
	int32_t v;
	const char *bad[] = {"",       "25:00",  "24:01",  "24:00:01", "12:60",       "12:00:60",
			     "12",     "12:0",   "123:00", "12:00:0",  "12:00:00:00", "-1:00",
			     " 12:00", "12:00 ", "12h00"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_time_of_day(bad[i], &v), -1, "\"%s\" should be rejected",
			     bad[i]);
}

Test(units_clock, clock_time_is_relative_to_the_start_day)
{
	sim_time t;
	cr_assert_eq(units_clock("13:00", START_2026_10_27, &t), 0);
	cr_assert_eq(t, 13 * SIM_HOUR);
	cr_assert_eq(units_clock("17:00:30", START_2026_10_27, &t), 0);
	cr_assert_eq(t, 17 * SIM_HOUR + 30 * SIM_SECOND);
}

Test(units_clock, clock_time_before_a_mid_day_start_is_negative)
{
	sim_time t;
	int64_t start = START_2026_10_27 + 14 * 3600; /* 14:00 */
	cr_assert_eq(units_clock("13:00", start, &t), 0);
	cr_assert_eq(t, -SIM_HOUR);
	cr_assert_eq(units_clock("24:00", start, &t), 0);
	cr_assert_eq(t, 10 * SIM_HOUR);
}

Test(units_clock, rfc3339_is_accepted_with_fraction_kept)
{
	sim_time t;
	cr_assert_eq(units_clock("2026-10-28T01:00:00Z", START_2026_10_27, &t), 0);
	cr_assert_eq(t, 25 * SIM_HOUR);
	cr_assert_eq(units_clock("2026-10-27T15:00:00+02:00", START_2026_10_27, &t), 0);
	cr_assert_eq(t, 13 * SIM_HOUR);
	cr_assert_eq(units_clock("2026-10-27T00:00:01.25Z", START_2026_10_27, &t), 0);
	cr_assert_eq(t, 1250000);
	cr_assert_eq(units_clock("2026-10-26T23:00:00Z", START_2026_10_27, &t), 0);
	cr_assert_eq(t, -SIM_HOUR);
}

Test(units_clock, invalid_clock_times_are_rejected)
{
	sim_time t;
	cr_assert_eq(units_clock("25:00", START_2026_10_27, &t), -1);
	cr_assert_eq(units_clock("13h", START_2026_10_27, &t), -1);
	cr_assert_eq(units_clock("", START_2026_10_27, &t), -1);
	cr_assert_eq(units_clock("2026-10-27T13:00:00", START_2026_10_27, &t), -1);
}

/* ---- numbers, integers, bools ---------------------------------------- */

/* units_number's fast path for plain decimals must give strtod's very
 * double: a million decimals of every length around its limits (15
 * significant digits, 22 after the point), signs, leading zeros and points
 * at either end, compared bit for bit. */
Test(units_number, plain_decimals_give_strtods_very_double)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	char s[64];
	for (int i = 0; i < 1000000; i++) {
		size_t n = 0;
		unsigned long sign = gsl_rng_uniform_int(rng, 3);
		if (sign)
			s[n++] = sign == 1 ? '-' : '+';
		unsigned long zeros = gsl_rng_uniform_int(rng, 3),
			      whole = gsl_rng_uniform_int(rng, 18),
			      frac = gsl_rng_uniform_int(rng, 26);
		for (unsigned long k = 0; k < zeros; k++)
			s[n++] = '0';
		for (unsigned long k = 0; k < whole; k++)
			s[n++] = (char)('0' + gsl_rng_uniform_int(rng, 10));
		if (frac || gsl_rng_uniform_int(rng, 4) == 0)
			s[n++] = '.';
		for (unsigned long k = 0; k < frac; k++)
			s[n++] = (char)('0' + gsl_rng_uniform_int(rng, 10));
		s[n] = '\0';
		char *end;
		double want = strtod(s, &end), got = NAN;
		bool valid = end != s && *end == '\0';
		int rc = units_number(s, &got);
		cr_assert_eq(rc, valid ? 0 : -1, "'%s'", s);
		if (valid)
			cr_assert(memcmp(&want, &got, sizeof want) == 0,
				  "'%s': %.17g, strtod %.17g", s, got, want);
	}
	gsl_rng_free(rng);
}

Test(units_number, decimal_and_exponent_forms_parse)
{
	double v;
	cr_assert_eq(units_number("0.9", &v), 0);
	cr_assert_float_eq(v, 0.9, 1e-15);
	cr_assert_eq(units_number("-2.5", &v), 0);
	cr_assert_eq(v, -2.5);
	cr_assert_eq(units_number("1e-3", &v), 0);
	cr_assert_float_eq(v, 1e-3, 1e-18);
	cr_assert_eq(units_number("42", &v), 0);
	cr_assert_eq(v, 42.0);
}

Test(units_number, non_finite_empty_and_trailing_junk_are_rejected)
{
	double v;
	const char *bad[] = {"", "inf", "-inf", "nan", "1e999", "1.5x", " 1", "1 ", "0x10", "abc"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_number(bad[i], &v), -1, "\"%s\" should be rejected", bad[i]);
}

Test(units_integer, plain_and_exact_exponent_forms_parse)
{
	int64_t v;
	cr_assert_eq(units_integer("42", &v), 0);
	cr_assert_eq(v, 42);
	cr_assert_eq(units_integer("-7", &v), 0);
	cr_assert_eq(v, -7);
	cr_assert_eq(units_integer("1e6", &v), 0);
	cr_assert_eq(v, 1000000);
	cr_assert_eq(units_integer("2.0", &v), 0);
	cr_assert_eq(v, 2);
	cr_assert_eq(units_integer("9223372036854775807", &v), 0);
	cr_assert_eq(v, INT64_MAX);
	cr_assert_eq(units_integer("-9223372036854775808", &v), 0);
	cr_assert_eq(v, INT64_MIN);
}

Test(units_integer, fractions_junk_and_out_of_range_are_rejected)
{
	int64_t v;
	const char *bad[] = {"",
			     "1.5",
			     "1e-1",
			     "12abc",
			     "9223372036854775808",
			     "-9223372036854775809",
			     "1e19",
			     "1e300",
			     "inf",
			     " 5",
			     "0x10"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_integer(bad[i], &v), -1, "\"%s\" should be rejected", bad[i]);
}

Test(units_bool, yaml_spellings_parse_ignoring_case)
{
	const char *yes[] = {"true", "True", "TRUE", "yes", "on", "ON"};
	const char *no[] = {"false", "False", "no", "NO", "off", "Off"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		bool b = false;
		cr_assert_eq(units_bool(yes[i], &b), 0, "\"%s\"", yes[i]);
		cr_assert(b, "\"%s\" should be true", yes[i]);
	}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		bool b = true;
		cr_assert_eq(units_bool(no[i], &b), 0, "\"%s\"", no[i]);
		cr_assert_not(b, "\"%s\" should be false", no[i]);
	}
}

Test(units_bool, other_words_are_rejected)
{
	bool b;
	const char *bad[] = {"", "1", "0", "y", "n", "truee", "tru", "yes ", "maybe"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_eq(units_bool(bad[i], &b), -1, "\"%s\" should be rejected", bad[i]);
}

/* gp_llround (common.h) gives llround's integer: halves away from zero,
 * the doubles next to them, negatives, and a sweep of random values at the
 * magnitudes scores use (milli-GPUs, milli-cores, bytes up to 2^45). */
Test(units, gp_llround_is_llround)
{
	const double cases[] = {0.5,
				-0.5,
				1.5,
				-1.5,
				2.5,
				0.49999999999999994,
				-0.49999999999999994,
				4503599627370495.5,
				-4503599627370495.5,
				9007199254740993.0,
				1e18,
				-1e18,
				0.0,
				-0.0,
				1999.9999999999998,
				2199023255552.5};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		cr_expect_eq(gp_llround(cases[i]), llround(cases[i]), "%.17g", cases[i]);
	uint64_t x = 88172645463325252u; /* xorshift64 */
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * ldexp(1, (int)(x % 46));
		if (i % 3 == 0)
			v = floor(v) + 0.5; /* a half */
		cr_assert_eq(gp_llround(v), llround(v), "%.17g", v);
	}
}

/* gp_popcount64 (common.h) counts as the builtin does. */
Test(units, gp_popcount64_counts_set_bits)
{
	cr_expect_eq(gp_popcount64(0), 0);
	cr_expect_eq(gp_popcount64(~UINT64_C(0)), 64);
	cr_expect_eq(gp_popcount64(UINT64_C(1) << 63), 1);
	uint64_t x = 88172645463325252u;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		cr_assert_eq(gp_popcount64(x), __builtin_popcountll(x), "%llx",
			     (unsigned long long)x);
	}
}

/* The one formatter of figures in the tables of run and advise: printf's
 * rounding to the decimals asked (12.25 is exactly representable and
 * rounds to even at 1 decimal: "12.2"; 99.95 is stored as 99.9500000000000028
 * and rounds up to "100.0"), and "-" for a metric the run does not have. */
Test(units_format, a_figure_has_its_decimals_and_a_missing_one_is_a_dash)
{
	char buf[32];
	cr_expect_str_eq(units_format_figure(1234.5678, 0, buf, sizeof buf), "1235");
	cr_expect_str_eq(units_format_figure(12.25, 1, buf, sizeof buf), "12.2");
	cr_expect_str_eq(units_format_figure(99.95, 1, buf, sizeof buf), "100.0");
	cr_expect_str_eq(units_format_figure(-0.5, 2, buf, sizeof buf), "-0.50");
	cr_expect_str_eq(units_format_figure(NAN, 1, buf, sizeof buf), "-");
	cr_expect_eq(units_format_figure(3, 0, buf, sizeof buf), buf, "returns buf");
}
