/*
 * units_cron.c - CronJob schedules (units.h): parsing five cron fields and
 * finding the next firing.
 *
 * The syntax is what a Kubernetes CronJob accepts: its controller parses
 * .spec.schedule with robfig/cron v3's standard parser (cron.ParseStandard;
 * kubernetes/pkg/controller/cronjob/utils.go), whose getRange (parser.go)
 * reads `*` or `?`, `n`, `a-b`, each optionally `/step`, where `n/step`
 * runs from n to the field's maximum and a `*` with a step above 1 no
 * longer counts as a star for the day rule.  Day of week also takes 7 for
 * Sunday, as crontab(5) does (robfig refuses it).  The day rule is Vixie
 * cron's (crontab(5): "If both fields are restricted (i.e., aren't *), the
 * command will be run when either field matches the current time"), as in
 * robfig's dayMatches (spec.go).
 */
#include "gpuplan/units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct field {
	const char *name;
	int lo, hi;
	const char *const *names; /* names[i] is value lo + i; NULL: numbers only */
	int n_names;
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
					  "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const wday_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const struct field fields[5] = {
	{"minute", 0, 59, NULL, 0},           {"hour", 0, 23, NULL, 0},
	{"day of month", 1, 31, NULL, 0},     {"month", 1, 12, month_names, 12},
	{"day of week", 0, 7, wday_names, 7}, /* 7: Sunday again */
};

static const struct {
	const char *macro, *spec;
} macros[] = {
	{"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
	{"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
	{"@hourly", "0 * * * *"},
};

/* A whole number, all of [s, e). */
static int number_of(const char *s, const char *e, int *out)
{
	if (e == s || e - s > 9)
		return -1;
	int v = 0;
	for (const char *p = s; p < e; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return 0;
}

/* A number or (where the field has them) a three-letter name, all of [s, e). */
static int value_of(const struct field *f, const char *s, const char *e, int *out)
{
	if (e > s && isdigit((unsigned char)*s))
		return number_of(s, e, out);
	if (!f->names || e - s != 3)
		return -1;
	for (int i = 0; i < f->n_names; i++)
		if (tolower((unsigned char)s[0]) == f->names[i][0] &&
		    tolower((unsigned char)s[1]) == f->names[i][1] &&
		    tolower((unsigned char)s[2]) == f->names[i][2]) {
			*out = f->lo + i;
			return 0;
		}
	return -1;
}

/* One comma-separated part of a field: its bits into *bits; *star when it is
 * `*` or `?` without a step above 1. */
static int parse_range(const struct field *f, const char *s, const char *e, uint64_t *bits,
		       bool *star, char *why, size_t len)
{
	const char *slash = memchr(s, '/', (size_t)(e - s));
	const char *re = slash ? slash : e;
	int lo, hi, step = 1;
	bool any = (re - s == 1) && (*s == '*' || *s == '?');
	if (slash) {
		if (number_of(slash + 1, e, &step) || step < 1) {
			snprintf(why, len, "%s: the step of '%.*s' is not a whole number >= 1",
				 f->name, (int)(e - s), s);
			return -1;
		}
	}
	if (any) {
		lo = f->lo;
		hi = f == &fields[4] ? 6 : f->hi;
	} else {
		const char *dash = memchr(s, '-', (size_t)(re - s));
		if (value_of(f, s, dash ? dash : re, &lo) ||
		    (dash && value_of(f, dash + 1, re, &hi))) {
			snprintf(why, len, "%s: '%.*s' is not a value from %d to %d%s", f->name,
				 (int)(e - s), s, f->lo, f->hi,
				 f->names ? (f == &fields[3] ? " or a name like jan"
							     : " or a name like mon")
					  : "");
			return -1;
		}
		if (!dash)
			hi = slash ? f->hi : lo; /* "n/step" runs to the end, as robfig's */
	}
	if (lo < f->lo || hi > f->hi || lo > hi) {
		snprintf(why, len, "%s: '%.*s' is outside %d-%d or runs backwards", f->name,
			 (int)(e - s), s, f->lo, f->hi);
		return -1;
	}
	for (int v = lo; v <= hi; v += step)
		*bits |= UINT64_C(1) << (f == &fields[4] ? v % 7 : v);
	*star = *star || (any && step == 1);
	return 0;
}

int units_cron(const char *s, struct cron *c, char *why, size_t len)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; s[0] == '@' && i < sizeof macros / sizeof *macros; i++)
		if (!strcmp(s, macros[i].macro))
			s = macros[i].spec;
	if (s[0] == '@') {
		snprintf(why, len,
			 "'%s' is not a macro; expected @yearly, @monthly, @weekly, @daily or "
			 "@hourly",
			 s);
		return -1;
	}
	uint64_t bits[5] = {0};
	bool star[5] = {false};
	const char *p = s;
	int k = 0;
	for (; k < 5; k++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *end = p;
		while (*end && *end != ' ' && *end != '\t')
			end++;
		for (const char *q = p; q <= end;) {
			const char *comma = q;
			while (comma < end && *comma != ',')
				comma++;
			if (comma == q) {
				snprintf(why, len, "%s: an empty value in '%.*s'", fields[k].name,
					 (int)(end - p), p);
				return -1;
			}
			if (parse_range(&fields[k], q, comma, &bits[k], &star[k], why, len))
				return -1;
			q = comma + 1;
		}
		p = end;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (k < 5 || *p) {
		snprintf(why, len, "'%s' has %s than five fields", s, k < 5 ? "fewer" : "more");
		return -1;
	}
	c->minutes = bits[0];
	c->hours = (uint32_t)bits[1];
	c->mdays = (uint32_t)bits[2];
	c->months = (uint16_t)bits[3];
	c->wdays = (uint8_t)bits[4];
	c->mday_star = star[2];
	c->wday_star = star[4];
	return 0;
}

static bool day_matches(const struct cron *c, int mday, int wday)
{
	bool dm = c->mdays >> mday & 1, wm = c->wdays >> wday & 1;
	return c->mday_star || c->wday_star ? dm && wm : dm || wm;
}

int64_t units_cron_next(const struct cron *c, int64_t s)
{
	int64_t minute = s >= 0 ? (s + 59) / 60 : -((-s) / 60); /* ceil */
	int64_t day = minute >= 0 ? minute / 1440 : -((-minute + 1439) / 1440);
	int64_t last = day + (int64_t)UNITS_CRON_YEARS * 366;
	int m0 = (int)(minute - day * 1440); /* first minute of the day to look at */
	for (; day <= last; day++, m0 = 0) {
		int64_t y;
		int mon, mday;
		units_civil_from_days(day, &y, &mon, &mday);
		int wday = (int)((day % 7 + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
		if (!(c->months >> mon & 1) || !day_matches(c, mday, wday))
			continue;
		for (int m = m0; m < 1440; m++)
			if ((c->hours >> (m / 60) & 1) && (c->minutes >> (m % 60) & 1))
				return (day * 1440 + m) * 60;
	}
	return INT64_MAX;
}
