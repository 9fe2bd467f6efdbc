/*
 * units.h - parsing the units of the scenario format (docs/scenario.md).
 *
 * Each parser takes a whole string and returns 0 when all of it is a valid
 * value, -1 otherwise (the caller reports the location and UNITS_HINT_*).
 * A bare number is accepted where a default unit is obvious (seconds, bytes).
 */
#ifndef GPUPLAN_UNITS_H
#define GPUPLAN_UNITS_H

#include "gpuplan/common.h"

#define UNITS_HINT_DURATION  "a duration like 90s, 500ms, 15m, 1h30m or 2d"
#define UNITS_HINT_SIZE      "a size like 80GiB, 512MiB or 80GB"
#define UNITS_HINT_RATE      "a rate like 10/s, 5/m, 300/h or 20/d"
#define UNITS_HINT_BANDWIDTH "a bandwidth like 2039GB/s"
#define UNITS_HINT_CLOCK     "a clock time like \"13:00\" or an RFC 3339 time like 2026-10-27T13:00:00Z"
#define UNITS_HINT_TIME      "an RFC 3339 time like 2026-10-27T00:00:00Z"

/* "90s", "500ms", "15m", "1h30m", "2d", "1.5h", "250us", bare number = seconds. >= 0. */
int units_duration(const char *s, sim_time *out);

/* A duration as "1d2h3m4s" (whole seconds, zero parts left out), "0.25s"
 * below a minute when not whole, "never" for SIM_NEVER. */
void units_format_duration(sim_time t, char *buf, size_t len);

/* A figure with `decimals` decimals ("12.3"), or "-" for NaN (a metric the
 * run does not have): the cells of the summary tables of run and advise.
 * Returns buf. */
const char *units_format_figure(double v, int decimals, char *buf, size_t len);

/* "80GiB", "512MiB", "1TiB", "80GB" (10^9), "64KiB", "100B", bare number = bytes. >= 0. */
int units_size(const char *s, double *bytes);

/* "10/s", "5/m", "300/h", "20/d" -> events per second.  >= 0. */
int units_rate(const char *s, double *per_second);

/* "2039GB/s", "1.5TB/s", "900GiB/s" -> bytes per second. */
int units_bandwidth(const char *s, double *bytes_per_second);

/* RFC 3339 ("2026-10-27T00:00:00Z", "2026-10-27T02:00:00+02:00", fractional seconds
 * allowed) -> seconds since the Unix epoch. */
int units_rfc3339(const char *s, int64_t *epoch_seconds);

/* A trace's timestamp: RFC 3339 as above, or without an offset for UTC
 * ("2023-11-16 18:17:03.9799600"); the fraction is truncated to microseconds. */
int units_timestamp(const char *s, int64_t *epoch_seconds, int32_t *usec);

/* Formats epoch seconds as "2026-10-27T00:00:00Z" into buf (at least 21 bytes). */
void units_format_rfc3339(int64_t epoch_seconds, char *buf, size_t len);

/* A clock time "13:00" / "13:00:30" (on the start day) or an RFC 3339 time, as a
 * sim_time relative to start_epoch (may be negative for times before the start). */
int units_clock(const char *s, int64_t start_epoch, sim_time *out);

/* "13:00" or "13:00:30" -> seconds since midnight (0 .. 86400; "24:00" allowed). */
int units_time_of_day(const char *s, int32_t *seconds);

/* A finite decimal number (strtod syntax, no trailing junk). */
int units_number(const char *s, double *out);

/* A percentage above 0 and at most 1000, "25%" or "25", as a fraction (0.25). */
int units_percent(const char *s, double *fraction);

/* An integer; also accepts exponent forms that are exact integers ("1e6"). */
int units_integer(const char *s, int64_t *out);

/* true/false/yes/no/on/off. */
int units_bool(const char *s, bool *out);

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's
 * days_from_civil and civil_from_days). */
int64_t units_days_from_civil(int64_t y, int m, int d);
void units_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

/*
 * A CronJob schedule (units_cron.c): five fields, minute hour day-of-month
 * month day-of-week, in UTC, as Kubernetes' CronJob reads them (its
 * controller parses with robfig/cron v3's standard parser): `*`, numbers,
 * lists `1,15`, ranges `1-5`, steps `*\/15` `0-30/10` `5/15` (from 5 to
 * the end), month and day names (jan, mon), Sunday as 0 or 7, and the
 * macros @yearly @annually @monthly @weekly @daily @midnight @hourly.  A day
 * matches Vixie cron's rule: when both day fields are restricted (neither
 * is `*`), either may match; else both must.
 */
struct cron {
	uint64_t minutes; /* bit m: minute m, 0..59 */
	uint32_t hours;   /* bit h, 0..23 */
	uint32_t mdays;   /* bit d, 1..31 */
	uint16_t months;  /* bit m, 1..12 */
	uint8_t wdays;    /* bit d, 0 = Sunday .. 6 */
	bool mday_star, wday_star;
};

#define UNITS_HINT_CRON \
	"a cron schedule of five fields like \"0 22 * * *\" (minute hour day month weekday)"

/* Parses s into *c; on failure writes what is wrong (a field, a value) to
 * why (at least 128 bytes) and returns -1. */
int units_cron(const char *s, struct cron *c, char *why, size_t len);

/* The first firing at or after epoch second s (rounded up to a minute), or
 * INT64_MAX when there is none within UNITS_CRON_YEARS years (30 February). */
#define UNITS_CRON_YEARS 8
int64_t units_cron_next(const struct cron *c, int64_t s);

#endif
