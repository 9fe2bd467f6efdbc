/*
 * units.c - parsers for the units of the scenario format (units.h,
 * docs/scenario.md).
 *
 * Every parser consumes the whole string or fails: no whitespace, no signs
 * (quantities are never negative), no trailing junk.  Numbers are scanned by
 * hand first and only the validated span is handed to strtod, because strtod
 * alone is more liberal than the format (leading blanks, "inf", hex, an
 * exponent that would swallow a unit).  Calendar arithmetic uses the
 * days-from-civil algorithm (H. Hinnant) instead of timegm, so that results
 * are portable and do not depend on the C library's time zone handling.
 */
#include "gpuplan/units.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A unit suffix and what one of it is worth in the parser's base unit. */
struct unit {
	const char *name;
	double scale;
};

/* Largest magnitude we let a double turn into an int64_t (just under 2^63). */
#define INT64_SAFE 9.2e18

/* Durations, largest first: components of "1h30m" must come in this order. */
static const struct unit duration_units[] = {
	{"d", 86400e6},     {"h", 3600e6}, {"min", 60e6},      {"m", 60e6}, {"s", 1e6},
	{"ms", 1e3},        {"us", 1.0},   {"\xc2\xb5s", 1.0}, /* U+00B5 micro sign */
	{"\xce\xbcs", 1.0},                                    /* U+03BC Greek mu */
};

/* Sizes: SI (GB = 10^9) and IEC (GiB = 2^30), plus the Kubernetes quantity
 * suffixes (Gi, G) so that pod specs can be pasted as they are. */
static const struct unit size_units[] = {
	{"B", 1.0},
	{"kB", 1e3},
	{"KB", 1e3},
	{"MB", 1e6},
	{"GB", 1e9},
	{"TB", 1e12},
	{"PB", 1e15},
	{"KiB", 1024.0},
	{"MiB", 1048576.0},
	{"GiB", 1073741824.0},
	{"TiB", 1099511627776.0},
	{"PiB", 1125899906842624.0},
	{"k", 1e3},
	{"K", 1e3},
	{"M", 1e6},
	{"G", 1e9},
	{"T", 1e12},
	{"P", 1e15},
	{"Ki", 1024.0},
	{"Mi", 1048576.0},
	{"Gi", 1073741824.0},
	{"Ti", 1099511627776.0},
	{"Pi", 1125899906842624.0},
};

/* Rate denominators, in seconds. */
static const struct unit rate_units[] = {
	{"s", 1.0}, {"m", 60.0}, {"min", 60.0}, {"h", 3600.0}, {"d", 86400.0},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Looks up the unit spelled by [p, p+len) in an exact-match table. */
static const struct unit *find_unit(const struct unit *t, size_t n, const char *p, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(t[i].name) == len && memcmp(t[i].name, p, len) == 0)
			return &t[i];
	return NULL;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static size_t count_digits(const char *p, const char *end)
{
	size_t n = 0;
	while (p + n < end && is_digit(p[n]))
		n++;
	return n;
}

/*
 * Scans an unsigned decimal number at the start of [p, end): digits with an
 * optional fraction ("5", "1.5", ".5", "5.") and, when allowed, an exponent
 * ("8e10").  Returns the number of characters used, 0 when there is no number.
 */
static size_t scan_number(const char *p, const char *end, bool exponent, double *v)
{
	size_t n = count_digits(p, end);
	size_t digits = n;
	if (p + n < end && p[n] == '.') {
		size_t f = count_digits(p + n + 1, end);
		digits += f;
		n += 1 + f;
	}
	if (digits == 0)
		return 0;
	if (exponent && p + n < end && (p[n] == 'e' || p[n] == 'E')) {
		size_t e = n + 1;
		if (p + e < end && (p[e] == '+' || p[e] == '-'))
			e++;
		size_t d = count_digits(p + e, end);
		if (d > 0)
			n = e + d;
	}
	char buf[64];
	if (n >= sizeof buf)
		return 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	*v = strtod(buf, NULL);
	return isfinite(*v) ? n : 0;
}

/* Length of the unit word at p: letters and the bytes of a UTF-8 micro sign. */
static size_t unit_span(const char *p, const char *end)
{
	size_t n = 0;
	while (p + n < end && (isalpha((unsigned char)p[n]) || (unsigned char)p[n] >= 0x80))
		n++;
	return n;
}

int units_duration(const char *s, sim_time *out)
{
	if (!s || !*s)
		return -1;
	const char *p = s, *end = s + strlen(s);
	double total = 0.0, last_scale = INFINITY;
	while (p < end) {
		double v;
		size_t n = scan_number(p, end, false, &v);
		if (n == 0)
			return -1;
		p += n;
		size_t len = unit_span(p, end);
		double scale;
		if (len == 0) {
			/* A bare number is seconds, but only on its own: "1h30" is a typo. */
			if (p != end || p - n != s)
				return -1;
			scale = 1e6;
		} else {
			const struct unit *u =
				find_unit(duration_units, N_OF(duration_units), p, len);
			/* Largest unit first and each once, so "30m1h" and "1m30m" are rejected. */
			if (!u || u->scale >= last_scale)
				return -1;
			scale = last_scale = u->scale;
			p += len;
		}
		total += v * scale;
	}
	if (!(total < INT64_SAFE))
		return -1;
	*out = (sim_time)llround(total);
	return 0;
}

/* A size in [p, end), number then optional unit (bare number = bytes). */
static int size_span(const char *p, const char *end, double *bytes)
{
	double v;
	size_t n = scan_number(p, end, true, &v);
	if (n == 0)
		return -1;
	p += n;
	double scale = 1.0;
	if (p < end) {
		const struct unit *u =
			find_unit(size_units, N_OF(size_units), p, (size_t)(end - p));
		if (!u)
			return -1;
		scale = u->scale;
	}
	*bytes = v * scale;
	return isfinite(*bytes) ? 0 : -1;
}

int units_size(const char *s, double *bytes)
{
	if (!s || !*s)
		return -1;
	return size_span(s, s + strlen(s), bytes);
}

int units_rate(const char *s, double *per_second)
{
	if (!s || !*s)
		return -1;
	const char *end = s + strlen(s);
	const char *slash = strchr(s, '/');
	double v;
	/* No bare number: per second and per hour differ by 3600, too costly to guess. */
	if (!slash || slash == s || scan_number(s, slash, true, &v) != (size_t)(slash - s))
		return -1;
	const struct unit *u =
		find_unit(rate_units, N_OF(rate_units), slash + 1, (size_t)(end - slash - 1));
	if (!u)
		return -1;
	*per_second = v / u->scale;
	return 0;
}

int units_bandwidth(const char *s, double *bytes_per_second)
{
	if (!s)
		return -1;
	size_t len = strlen(s);
	if (len < 3 || strcmp(s + len - 2, "/s") != 0)
		return -1;
	return size_span(s, s + len - 2, bytes_per_second);
}

/* ---- calendar -------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
int64_t units_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = floor_div(y, 400);
	int64_t yoe = y - era * 400;                                   /* [0, 399] */
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* [0, 146096] */
	return era * 146097 + doe - 719468;
}

/* The inverse: the date of a day count (Hinnant's civil_from_days). */
void units_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	z += 719468;
	int64_t era = floor_div(z, 146097);
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int64_t y, int m)
{
	static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Reads exactly n digits at p as a number; -1 if any of them is not a digit. */
static int fixed_digits(const char *p, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* "Z" or "+hh:mm" / "-hh:mm" -> seconds east of UTC. */
static int parse_offset(const char *p, int32_t *east)
{
	if ((p[0] == 'Z' || p[0] == 'z') && p[1] == '\0') {
		*east = 0;
		return 0;
	}
	if (p[0] != '+' && p[0] != '-')
		return -1;
	int hh = fixed_digits(p + 1, 2);
	if (hh < 0 || p[3] != ':')
		return -1;
	int mm = fixed_digits(p + 4, 2);
	if (mm < 0 || p[6] != '\0' || hh > 23 || mm > 59)
		return -1;
	*east = (p[0] == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
	return 0;
}

/* Fractional seconds after the '.', truncated to microseconds; returns chars used. */
static size_t parse_fraction(const char *p, int32_t *usec)
{
	size_t n = 0;
	int32_t v = 0, scale = 100000;
	while (is_digit(p[n])) {
		v += (p[n] - '0') * scale;
		scale /= 10;
		n++;
	}
	*usec = v;
	return n;
}

/*
 * RFC 3339 date-time -> epoch seconds and microseconds.  Also accepted: 't' or
 * a space for 'T' and a lower-case 'z' (RFC 3339 section 5.6 notes), a second
 * 60 (leap second, folded into the next second as POSIX time does), a bare
 * full-date, read as midnight UTC, and with utc_default no offset (UTC).  The
 * date is a real one: 2023-02-30 and 2023-11-31 are refused.
 */
static int parse_rfc3339(const char *s, bool utc_default, int64_t *sec, int32_t *usec)
{
	if (!s)
		return -1;
	int y = fixed_digits(s, 4);
	if (y < 0 || s[4] != '-')
		return -1;
	int mo = fixed_digits(s + 5, 2);
	if (mo < 0 || s[7] != '-')
		return -1;
	int d = fixed_digits(s + 8, 2);
	if (d < 0 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return -1;
	int64_t days = units_days_from_civil(y, mo, d);
	*usec = 0;
	if (s[10] == '\0') {
		*sec = days * 86400;
		return 0;
	}
	if (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
		return -1;
	const char *t = s + 11;
	int hh = fixed_digits(t, 2);
	if (hh < 0 || t[2] != ':')
		return -1;
	int mm = fixed_digits(t + 3, 2);
	if (mm < 0 || t[5] != ':')
		return -1;
	int ss = fixed_digits(t + 6, 2);
	if (ss < 0 || hh > 23 || mm > 59 || ss > 60)
		return -1;
	const char *p = t + 8;
	if (*p == '.') {
		size_t n = parse_fraction(p + 1, usec);
		if (n == 0)
			return -1;
		p += 1 + n;
	}
	int32_t east = 0;
	if (!(utc_default && *p == '\0') && parse_offset(p, &east) != 0)
		return -1;
	*sec = days * 86400 + hh * 3600 + mm * 60 + ss - east;
	return 0;
}

int units_rfc3339(const char *s, int64_t *epoch_seconds)
{
	int32_t usec;
	return parse_rfc3339(s, false, epoch_seconds, &usec);
}

int units_timestamp(const char *s, int64_t *epoch_seconds, int32_t *usec)
{
	return parse_rfc3339(s, true, epoch_seconds, usec);
}

void units_format_rfc3339(int64_t epoch_seconds, char *buf, size_t len)
{
	int64_t days = floor_div(epoch_seconds, 86400);
	int64_t rest = epoch_seconds - days * 86400;
	int64_t y;
	int m, d;
	units_civil_from_days(days, &y, &m, &d);
	snprintf(buf, len, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02dZ", y, m, d, (int)(rest / 3600),
		 (int)(rest / 60 % 60), (int)(rest % 60));
}

int units_time_of_day(const char *s, int32_t *seconds)
{
	if (!s || !is_digit(s[0]))
		return -1;
	/* One or two hour digits ("9:00", "09:00"), then exactly two per field. */
	int hlen = is_digit(s[1]) ? 2 : 1;
	int hh = fixed_digits(s, hlen);
	const char *p = s + hlen;
	if (p[0] != ':')
		return -1;
	int mm = fixed_digits(p + 1, 2);
	if (mm < 0)
		return -1;
	int ss = 0;
	p += 3;
	if (p[0] == ':') {
		ss = fixed_digits(p + 1, 2);
		if (ss < 0)
			return -1;
		p += 3;
	}
	if (*p != '\0' || hh > 24 || mm > 59 || ss > 59 || (hh == 24 && (mm || ss)))
		return -1;
	*seconds = hh * 3600 + mm * 60 + ss;
	return 0;
}

int units_clock(const char *s, int64_t start_epoch, sim_time *out)
{
	int32_t tod;
	int64_t diff;
	int32_t usec = 0;
	if (units_time_of_day(s, &tod) == 0) {
		diff = floor_div(start_epoch, 86400) * 86400 + tod - start_epoch;
	} else {
		int64_t epoch;
		if (parse_rfc3339(s, false, &epoch, &usec) != 0)
			return -1;
		diff = epoch - start_epoch;
	}
	/* Both ends are at most a few 10^11 s from the epoch; guard anyway. */
	if (diff > INT64_MAX / SIM_SECOND - 1 || diff < INT64_MIN / SIM_SECOND + 1)
		return -1;
	*out = diff * SIM_SECOND + usec;
	return 0;
}

/*
 * Clinger's fast path: a plain decimal with at most 15 significant digits
 * and at most 22 after the point is its significand, exact in a double,
 * over a power of ten, exact too; one division rounds it correctly, so it
 * is the very double strtod gives (glibc's rounds correctly).  Traces are
 * mostly such numbers, and strtod's general path was half of reading one.
 * Anything else (exponents, more digits) is left to strtod: false.
 */
static bool plain_decimal(const char *s, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *p = s + (*s == '-' || *s == '+');
	uint64_t m = 0;
	int digits = 0, after_point = 0;
	bool point = false, any = false;
	for (;; p++) {
		if (*p == '.' && !point) {
			point = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			break;
		any = true;
		if (point && ++after_point > 22)
			return false;
		if (m == 0 && *p == '0')
			continue; /* a leading zero is not a significant digit */
		if (++digits > 15)
			return false;
		m = m * 10 + (uint64_t)(*p - '0');
	}
	if (!any || *p != '\0')
		return false;
	double v = (double)m / pow10[after_point];
	*out = *s == '-' ? -v : v;
	return true;
}

int units_percent(const char *s, double *fraction)
{
	char buf[64];
	size_t n = s ? strlen(s) : 0;
	if (n && s[n - 1] == '%')
		n--;
	if (!n || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	double pct;
	if (units_number(buf, &pct) || !(pct > 0) || pct > 1000)
		return -1;
	*fraction = pct / 100;
	return 0;
}

int units_number(const char *s, double *out)
{
	/* strtod would also take leading blanks and hex floats: not in a scenario. */
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	if (plain_decimal(s, out))
		return 0;
	if (strpbrk(s, "xX"))
		return -1;
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int units_integer(const char *s, int64_t *out)
{
	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end != s && *end == '\0') {
		if (errno == ERANGE)
			return -1;
		*out = (int64_t)v;
		return 0;
	}
	/* "1e6", "2.0": only when the double holds the integer exactly (|x| <= 2^53). */
	double d;
	if (units_number(s, &d) != 0 || d != floor(d) || fabs(d) > 9007199254740992.0)
		return -1;
	*out = (int64_t)d;
	return 0;
}

int units_bool(const char *s, bool *out)
{
	static const struct {
		const char *word;
		bool value;
	} words[] = {
		{"true", true},   {"yes", true}, {"on", true},
		{"false", false}, {"no", false}, {"off", false},
	};
	if (!s)
		return -1;
	for (size_t i = 0; i < N_OF(words); i++) {
		size_t n = strlen(words[i].word);
		if (strlen(s) != n)
			continue;
		size_t k = 0;
		while (k < n && tolower((unsigned char)s[k]) == words[i].word[k])
			k++;
		if (k == n) {
			*out = words[i].value;
			return 0;
		}
	}
	return -1;
}

const char *units_format_figure(double v, int decimals, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, v);
	return buf;
}

void units_format_duration(sim_time t, char *buf, size_t len)
{
	if (t == SIM_NEVER) {
		snprintf(buf, len, "never");
		return;
	}
	if (t < 0 || (t < SIM_MINUTE && t % SIM_SECOND)) {
		snprintf(buf, len, "%.6gs", sim_seconds(t));
		return;
	}
	int64_t s = (t + SIM_SECOND / 2) / SIM_SECOND; /* to the nearest second */
	static const struct {
		const char *unit;
		int64_t secs;
	} parts[] = {{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}};
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < 4 && used < len; i++) {
		if (s >= parts[i].secs || (i == 3 && used == 0)) {
			int n = snprintf(buf + used, len - used, "%lld%s",
					 (long long)(s / parts[i].secs), parts[i].unit);
			used += n > 0 ? (size_t)n : 0;
			s %= parts[i].secs;
		}
	}
}
