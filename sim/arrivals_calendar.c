/*
 * arrivals_calendar.c - arrivals that follow the calendar (arrivals.h):
 * rates by hour of the day and day of the week, and CronJob firings.
 *
 * A weekly rate is piecewise constant over the hours of the week, so the
 * inhomogeneous Poisson process is generated exactly rather than by
 * thinning: the next arrival after t is where the integrated rate from t
 * reaches a unit exponential draw E (the time-change theorem: a Poisson
 * process of rate lambda(t) is a unit-rate one in the clock
 * Lambda(t) = integral of lambda).  Whole weeks of E are skipped at once
 * (every stretch of one week holds week_mass), then the hours are walked,
 * at most one week of them.  One draw per arrival, from the workload's
 * stream, so a seed gives the same arrivals.
 */
#include "gpuplan/arrivals.h"

#include <math.h>

#define WEEK (7 * SIM_DAY)

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

double arrivals_weekly_rate_at(const struct weekly_rate *r, int64_t start_epoch, sim_time t)
{
	int64_t hour = floor_div(start_epoch * SIM_SECOND + t, SIM_HOUR);
	int64_t day = floor_div(hour, 24);
	int dow = (int)((day % 7 + 7 + 3) % 7); /* 1970-01-01 was a Thursday; Monday = 0 */
	return r->by_hour[hour - day * 24] * r->by_weekday[dow];
}

sim_time arrivals_weekly_next(const struct weekly_rate *r, int64_t start_epoch, sim_time t,
			      double mass)
{
	double weeks = floor(mass / r->week_mass);
	if (weeks * sim_seconds(WEEK) >= sim_seconds(SIM_NEVER - t) / 2)
		return SIM_NEVER; /* past the end of representable time */
	t += (sim_time)weeks * WEEK;
	mass = fmax(0, mass - weeks * r->week_mass);
	int64_t origin = start_epoch * SIM_SECOND;
	/* A week of hours and the partial ones at both ends; rounding may leave
	 * a sliver of mass after them, which the loop's end absorbs. */
	for (int k = 0; k < 24 * 7 + 2; k++) {
		sim_time end = (floor_div(origin + t, SIM_HOUR) + 1) * SIM_HOUR - origin;
		double rate = arrivals_weekly_rate_at(r, start_epoch, t);
		double seg = sim_seconds(end - t);
		if (rate > 0 && rate * seg >= mass) {
			sim_time at = t + sim_from_seconds(mass / rate);
			return at < end ? at : end - 1;
		}
		mass -= rate * seg;
		t = end;
	}
	return t;
}

sim_time arrivals_cron_next(const struct cron *c, int64_t start_epoch, sim_time t, bool after)
{
	/* whole epoch seconds: at or after t, or strictly after it */
	int64_t s = start_epoch + floor_div(t, SIM_SECOND) + (after || t % SIM_SECOND ? 1 : 0);
	int64_t at = units_cron_next(c, s);
	if (at == INT64_MAX || (double)(at - start_epoch) >= sim_seconds(SIM_NEVER) / 2)
		return SIM_NEVER;
	return (at - start_epoch) * SIM_SECOND;
}
