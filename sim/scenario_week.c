/*
 * scenario_week.c - the week of a workload (docs/scenario.md, "The week"):
 * its windows, arrivals whose rate follows the hour of the day and the day of
 * the week, CronJob schedules, and idle culling.  The same rate_by_hour keys
 * serve an inference workload's requests (numbers there are per second).
 */
#include "scenario_int.h"

#include "gpuplan/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOWS_HINT "a list like [{from: \"22:00\", to: \"06:00\"}]"
#define BY_HOUR_HINT "a list of 24 rates, one per hour of the day from 00:00 UTC"
#define BY_DAY_HINT  "a list of 7 factors >= 0, Monday first, like [1, 1, 1, 1, 1, 0.2, 0.2]"
#define CULL_HINT    "a map like {after: 60m, threshold: 0.1}"

/* The default idle_cull threshold: below this share of busy time a pod counts
 * as idle (docs/scenario.md). */
#define CULL_DEFAULT_THRESHOLD 0.1

int ld_workload_windows(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	int rc = ld_expect_list(ld, v, "windows", WINDOWS_HINT);
	if (rc)
		return rc;
	if (v->n == 0)
		return ld_bad_value(ld, v, "windows", WINDOWS_HINT);
	w->windows = gp_xcalloc(v->n, sizeof *w->windows);
	w->n_windows = v->n;
	for (size_t i = 0; i < v->n && !rc; i++)
		rc = ld_load_window(ld, v->items[i], &w->windows[i]);
	return rc;
}

static int cull_after(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "idle_cull after", true,
			       &((struct workload_spec *)obj)->cull_after);
}

static int cull_threshold(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_fraction(ld, v, "idle_cull threshold",
			       &((struct workload_spec *)obj)->cull_threshold);
}

static const struct key_rule cull_rules[] = {{"after", cull_after}, {"threshold", cull_threshold}};

int ld_workload_idle_cull(struct loader *ld, const struct ynode *v, void *obj)
{
	struct workload_spec *w = obj;
	w->cull_threshold = CULL_DEFAULT_THRESHOLD;
	int rc = ld_walk_map(ld, v, "idle_cull", CULL_HINT, cull_rules, N_OF(cull_rules), w);
	if (!rc)
		rc = ld_require(ld, v, "after", "idle_cull", UNITS_HINT_DURATION);
	return rc;
}

int ld_arrival_schedule(struct loader *ld, const struct ynode *v, void *obj)
{
	struct arrival *a = obj;
	char why[256];
	a->kind = ARRIVAL_SCHEDULE;
	if (v->kind != YNODE_SCALAR)
		return ld_bad_value(ld, v, "schedule", UNITS_HINT_CRON);
	a->schedule = ytree_intern(ld->sc->tree, v->value); /* the nodes go once loaded */
	if (units_cron(v->value, &a->cron, why, sizeof why))
		return gp_located(ld->err, v->loc, "schedule '%s': %s; expected " UNITS_HINT_CRON,
				  v->value, why);
	if (units_cron_next(&a->cron, ld->sc->start_epoch) == INT64_MAX)
		return gp_located(ld->err, v->loc,
				  "schedule '%s' never fires in the %d years after start (a day "
				  "no month has?); expected a schedule that fires",
				  v->value, UNITS_CRON_YEARS);
	return GP_OK;
}

/* One entry of rate_by_hour: a rate with its unit, or a number in the default unit; >= 0. */
static int hour_rate(struct loader *ld, const struct ynode *v, bool per_hour, double *per_second)
{
	double x = -1;
	if (v->kind == YNODE_SCALAR) {
		if (!units_number(v->value, &x))
			x = per_hour ? x / 3600 : x;
		else if (units_rate(v->value, &x))
			x = -1;
	}
	if (x >= 0 && x <= 1e9) {
		*per_second = x;
		return GP_OK;
	}
	return ld_bad_value(ld, v, "rate_by_hour entry",
			    per_hour ? "a number of arrivals per hour >= 0, or a rate like 3/h"
				     : "a number of requests per second >= 0, or a rate like 3/s");
}

static int get_list(struct loader *ld, const struct ynode *v, const char *what, size_t n,
		    const char *hint)
{
	if (v->kind != YNODE_SEQ)
		return ld_bad_value(ld, v, what, hint);
	if (v->n != n)
		return gp_located(ld->err, v->loc, "%s has %zu entries; expected %s", what, v->n,
				  hint);
	return GP_OK;
}

/* rate_by_hour and by_weekday are read whole by ld_weekly_rate, after the walk. */
int ld_read_later(struct loader *ld, const struct ynode *v, void *obj)
{
	(void)ld;
	(void)v;
	(void)obj;
	return GP_OK;
}

int ld_weekly_rate(struct loader *ld, const struct ynode *v, bool per_hour, struct weekly_rate *r)
{
	const struct ynode *hours = ynode_get(v, "rate_by_hour"),
			   *days = ynode_get(v, "by_weekday");
	for (int d = 0; d < 7; d++)
		r->by_weekday[d] = 1;
	if (!hours) {
		if (days)
			return gp_located(ld->err, days->loc,
					  "by_weekday multiplies rate_by_hour; expected "
					  "rate_by_hour beside it");
		return GP_OK;
	}
	if (ynode_get(v, "rate"))
		return gp_located(ld->err, ynode_get(v, "rate")->loc,
				  "rate and rate_by_hour both give the rate; expected one of them");
	int rc = get_list(ld, hours, "rate_by_hour", 24, BY_HOUR_HINT);
	for (size_t h = 0; h < 24 && !rc; h++)
		rc = hour_rate(ld, hours->items[h], per_hour, &r->by_hour[h]);
	if (!rc && days)
		rc = get_list(ld, days, "by_weekday", 7, BY_DAY_HINT);
	for (size_t d = 0; days && d < 7 && !rc; d++) {
		const struct ynode *x = days->items[d];
		if (x->kind != YNODE_SCALAR || units_number(x->value, &r->by_weekday[d]) ||
		    !(r->by_weekday[d] >= 0) || r->by_weekday[d] > 1e6)
			rc = ld_bad_value(ld, x, "by_weekday entry", "a factor from 0 to 1000000");
	}
	if (rc)
		return rc;
	r->on = true;
	r->week_mass = 0;
	for (int d = 0; d < 7; d++)
		for (int h = 0; h < 24; h++)
			r->week_mass += r->by_hour[h] * r->by_weekday[d] * 3600;
	if (!(r->week_mass > 0))
		return gp_located(ld->err, hours->loc,
				  "rate_by_hour x by_weekday is 0 all week: nothing would arrive; "
				  "expected a rate above 0 in some hour");
	return GP_OK;
}

/* A service is what idle culling can stop: a batch job's work would be lost,
 * an inference service is scaled by its own autoscaler. */
int ld_finish_week(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct ynode *cull = ynode_get(item, "idle_cull");
	if (cull && w->kind != WORKLOAD_SERVICE)
		return gp_located(ld->err, cull->loc,
				  "idle_cull applies to kind: service (notebooks, dev pods); "
				  "expected kind: service beside it");
	const struct ynode *windows = ynode_get(item, "windows");
	if (windows && w->inference)
		return gp_located(ld->err, windows->loc,
				  "windows does not apply to kind: inference (its replicas serve "
				  "all the time); expected windows on a batch or service workload, "
				  "or on the pool");
	return GP_OK;
}

/* Firings per second of a schedule, on average: over the 28 days from the
 * start, or over UNITS_CRON_YEARS for a rarer one (@yearly). */
double ld_cron_rate(const struct cron *c, int64_t start_epoch)
{
	int64_t spans[2] = {28 * 86400, (int64_t)UNITS_CRON_YEARS * 365 * 86400};
	for (int k = 0; k < 2; k++) {
		int64_t n = 0, end = start_epoch + spans[k];
		for (int64_t t = units_cron_next(c, start_epoch); t < end;
		     t = units_cron_next(c, t + 1))
			n++;
		if (n >= 2 || k == 1)
			return (double)(n ? n : 1) / (double)spans[k];
	}
	return 0;
}

/* --- warnings: a count squeezed by its rate, a horizon that cuts work off,
 * a deadline shorter than the work, a selector no node matches ------------ */

/* When the arrivals of w end, on average (seconds after start): its `at`, its
 * trace's last row, or from + count / rate for a stream with a count (the
 * mean rate under rate_by_hour, the schedule's firings per second); -1 for a
 * stream without count, which the horizon ends. */
static double arrivals_end(const struct workload_spec *w)
{
	const struct arrival *a = &w->arrival;
	switch (a->kind) {
	case ARRIVAL_AT: return sim_seconds(a->at);
	case ARRIVAL_TRACE: return a->n_rows ? sim_seconds(a->summary.last_submit) : 0;
	case ARRIVAL_POISSON:
	case ARRIVAL_SCHEDULE:
		return w->count < 0 ? -1 : sim_seconds(a->from) + (double)w->count / a->rate;
	}
	return 0;
}

static void warn(struct scenario_warning **out, size_t *n, struct srcloc loc, const char *fmt, ...)
	GP_PRINTF(4, 5);

static void warn(struct scenario_warning **out, size_t *n, struct srcloc loc, const char *fmt, ...)
{
	*out = gp_xrealloc(*out, (*n + 1) * sizeof **out);
	struct scenario_warning *x = &(*out)[(*n)++];
	x->loc = loc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->text, sizeof x->text, fmt, ap);
	va_end(ap);
}

/* A counted stream whose count / rate is under a quarter of the span it is
 * meant to fill: the horizon's (horizon - from), or without a horizon the
 * latest end of the other workloads' arrivals. */
static void check_squeeze(const struct scenario *sc, size_t i, struct scenario_warning **out,
			  size_t *n)
{
	const struct workload_spec *w = &sc->workloads[i];
	if (w->inference || w->count < 0 ||
	    (w->arrival.kind != ARRIVAL_POISSON && w->arrival.kind != ARRIVAL_SCHEDULE))
		return;
	double from = sim_seconds(w->arrival.from), span = (double)w->count / w->arrival.rate;
	double fill = 0;
	const char *what = "the horizon";
	if (sc->horizon) {
		fill = sim_seconds(sc->horizon) - from;
	} else {
		what = "the other workloads' arrivals";
		for (size_t k = 0; k < sc->n_workloads; k++)
			if (k != i && !sc->workloads[k].inference)
				fill = fmax(fill, arrivals_end(&sc->workloads[k]) - from);
	}
	if (!(fill > 0) || span >= fill / 4)
		return;
	char took[32], over[32];
	units_format_duration((sim_time)(span * (double)SIM_SECOND), took, sizeof took);
	units_format_duration((sim_time)(fill * (double)SIM_SECOND), over, sizeof over);
	warn(out, n, w->loc,
	     "workload %s: its %lld jobs arrive within about %s at %.4g/h, %.0f%% of %s "
	     "(%s): a fixed count at a higher rate squeezes the same jobs into fewer "
	     "hours; expected a count of about %.0f (rate x span) or, with a horizon, none",
	     w->name, (long long)w->count, took, w->arrival.rate * 3600, 100 * span / fill, what,
	     over, ceil(w->arrival.rate * fill));
}

/* Whether stream w, which runs to the horizon, can have an arrival in
 * (from, h] (seconds after start): a schedule that fires there, a weekly rate
 * above 0 in some hour of it, any constant rate. */
static bool arrives_within(const struct scenario *sc, const struct workload_spec *w, double from,
			   double h)
{
	const struct arrival *a = &w->arrival;
	if (a->kind == ARRIVAL_SCHEDULE) {
		int64_t t = units_cron_next(&a->cron, sc->start_epoch + (int64_t)floor(from) + 1);
		return t != INT64_MAX && (double)(t - sc->start_epoch) <= h;
	}
	if (!a->weekly.on || h - from >= 7 * 86400.0)
		return true;
	for (double t = floor(from / 3600) * 3600; t < h; t += 3600) {
		int64_t hour = (sc->start_epoch + (int64_t)t) / 3600;
		int64_t day = hour / 24;
		if (a->weekly.by_hour[hour % 24] * a->weekly.by_weekday[(day + 3) % 7] > 0)
			return true;
	}
	return false;
}

/* A horizon before the last job of a workload with deadlines can finish: jobs
 * arriving after horizon - (startup + mean duration) cannot end inside it,
 * and count as missed deadlines. */
static void check_cut(const struct scenario *sc, const struct workload_spec *w,
		      struct scenario_warning **out, size_t *n)
{
	if (!sc->horizon || w->inference || w->deadline_kind == DEADLINE_NONE)
		return;
	double h = sim_seconds(sc->horizon),
	       need = sim_seconds(w->startup) + scenario_dist_mean(&w->duration);
	double end = arrivals_end(w);
	if (end < 0 ? !arrives_within(sc, w, fmax(0, h - need), h) : fmin(end, h) + need <= h)
		return;
	char cut[32], hz[32];
	units_format_duration((sim_time)(fmax(0, h - need) * (double)SIM_SECOND), cut, sizeof cut);
	units_format_duration(sc->horizon, hz, sizeof hz);
	warn(out, n, w->loc,
	     "workload %s: the horizon %s cuts off its jobs arriving after %s (horizon - "
	     "start-up - mean duration): they cannot finish inside it, and those whose "
	     "deadline falls after it are not judged; expected a horizon past its last "
	     "arrival plus a duration, or arrivals that end earlier",
	     w->name, hz, cut);
}

/* A `within` deadline shorter than a job's start-up and mean duration: most
 * jobs miss it however soon they start (a number without a unit is seconds:
 * `within: 8` is 8 s). */
static void check_deadline(const struct workload_spec *w, struct scenario_warning **out, size_t *n)
{
	double run = sim_seconds(w->startup) + scenario_dist_mean(&w->duration);
	if (w->inference || w->deadline_kind != DEADLINE_WITHIN || sim_seconds(w->deadline) >= run)
		return;
	char within[32], need[32];
	units_format_duration(w->deadline, within, sizeof within);
	units_format_duration((sim_time)(run * (double)SIM_SECOND), need, sizeof need);
	warn(out, n, w->loc,
	     "workload %s: its deadline within %s is shorter than a job's start-up and mean "
	     "duration (%s), so most jobs miss it however soon they start; expected a "
	     "deadline of at least %s (a number without a unit is seconds)",
	     w->name, within, need, need);
}

/* A node_selector value that no pool's nodes carry: its pods can never be
 * placed (a typo, or a product of another GPU); names the closest value of
 * the key the pools have. */
static void check_selector(const struct scenario *sc, const struct workload_spec *w,
			   struct scenario_warning **out, size_t *n)
{
	const char **values = gp_xcalloc(sc->n_pools + 1, sizeof *values);
	for (size_t i = 0; i < w->n_node_selector; i++) {
		const struct kv *s = &w->node_selector[i];
		size_t k = 0;
		bool found = false;
		for (size_t p = 0; p < sc->n_pools && !found; p++) {
			const char *v = scenario_pool_label(&sc->pools[p], s->key);
			found = v && !strcmp(v, s->value);
			if (v)
				values[k++] = v;
		}
		if (found)
			continue;
		const char *near = k ? ytree_closest(s->value, values, k) : NULL;
		if (!near && k)
			near = values[0];
		if (near)
			warn(out, n, w->loc,
			     "workload %s: node_selector %s=%s matches no node, so its pods never "
			     "start; the closest value of %s on a pool is %s",
			     w->name, s->key, s->value, s->key, near);
		else
			warn(out, n, w->loc,
			     "workload %s: node_selector %s=%s matches no node: no pool has the "
			     "label %s",
			     w->name, s->key, s->value, s->key);
	}
	free(values);
}

/* A required node affinity `In` whose values no pool carries for its key
 * (the form an imported pod's nodeSelector and affinity take): its pods
 * never start; names the key's values on the pools.  The hostname a
 * running imported pod is pinned to is a pool's node, not a label: left
 * alone. */
static void check_affinity(const struct scenario *sc, const struct workload_spec *w,
			   struct scenario_warning **out, size_t *n)
{
	for (size_t i = 0; i < w->n_affinity; i++) {
		const struct affinity_expr *e = &w->affinity[i];
		if (e->op != AFFINITY_IN || !strcmp(e->key, "kubernetes.io/hostname"))
			continue;
		bool found = false;
		const char *some = NULL;
		for (size_t p = 0; p < sc->n_pools && !found; p++) {
			const char *v = scenario_pool_label(&sc->pools[p], e->key);
			for (size_t k = 0; v && k < e->n_values && !found; k++)
				found = !strcmp(v, e->values[k]);
			some = some ? some : v;
		}
		if (found)
			continue;
		if (some)
			warn(out, n, w->loc,
			     "workload %s: its affinity %s In [%s%s] matches no node, so its pods "
			     "never start; a pool has %s=%s",
			     w->name, e->key, e->values[0], e->n_values > 1 ? ", ..." : "", e->key,
			     some);
		else
			warn(out, n, w->loc,
			     "workload %s: its affinity %s In [%s%s] matches no node: no pool has "
			     "the label %s",
			     w->name, e->key, e->values[0], e->n_values > 1 ? ", ..." : "", e->key);
	}
}

/* A MIG profile that no pool's layout has (allowed where a MIG pool's GPU
 * has it: scenario_mig_pool_for): its pods never start until a layout
 * does; names the pools whose GPUs have it. */
static void check_mig_profile(const struct scenario *sc, const struct workload_spec *w,
			      struct scenario_warning **out, size_t *n)
{
	if (w->request != REQUEST_MIG)
		return;
	struct gp_sbuf could = {0};
	for (size_t p = 0; p < sc->n_pools; p++) {
		if (scenario_pool_offers(&sc->pools[p], w)) {
			free(could.s);
			return;
		}
		if (sc->pools[p].sharing.mode == SHARING_MIG &&
		    catalog_mig_profile(sc->pools[p].gpu, w->mig_profile))
			gp_sb_printf(&could, "%s%s", could.s ? ", " : "", sc->pools[p].name);
	}
	if (could.s)
		warn(out, n, w->loc,
		     "workload %s: no pool's MIG layout has %s instances, so its pods never start "
		     "until one does; the GPUs of %s have the profile",
		     w->name, w->mig_profile, could.s);
	free(could.s);
}

void scenario_warnings(const struct scenario *sc, struct scenario_warning **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < sc->n_workloads; i++) {
		check_squeeze(sc, i, out, n);
		check_cut(sc, &sc->workloads[i], out, n);
		check_deadline(&sc->workloads[i], out, n);
		check_selector(sc, &sc->workloads[i], out, n);
		check_affinity(sc, &sc->workloads[i], out, n);
		check_mig_profile(sc, &sc->workloads[i], out, n);
	}
}
