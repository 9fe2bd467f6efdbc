/*
 * test_week.c - the week in a scenario (issue 44): CronJob schedules,
 * arrivals by hour of the day and day of the week (batch jobs and inference
 * requests), a workload's own windows, idle culling, the warnings of
 * `check`, and the located errors of every new key.  Figures are worked by
 * hand in the comments.  2026-11-02 is a Monday.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/arrivals.h"
#include "gpuplan/results.h"
#include "named_metric.h"
#include "gpuplan/run.h"
#include "gpuplan/scenario.h"
#include "gpuplan/units.h"

#include "run.h"

static char dir[64];
static char spath[128];

static void make_dir(void)
{
	strcpy(dir, "/tmp/gpuplan-week-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(spath, sizeof spath, "%s/s.yaml", dir);
}

static void remove_dir(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(cron);
TestSuite(weekly);
TestSuite(week, .init = make_dir, .fini = remove_dir);

#define MONDAY INT64_C(1793577600) /* 2026-11-02T00:00:00Z */
#define HOUR   3600
#define DAY    86400

/* The first n firings at or after `from` (epoch seconds) into at. */
static void firings(const char *spec, int64_t from, int64_t *at, int n)
{
	struct cron c;
	char why[256] = "";
	cr_assert_eq(units_cron(spec, &c, why, sizeof why), 0, "%s: %s", spec, why);
	int64_t t = from;
	for (int i = 0; i < n; i++) {
		at[i] = units_cron_next(&c, t);
		t = at[i] + 1;
	}
}

static void expect_firings(const char *spec, int64_t from, const int64_t *want, int n)
{
	int64_t got[16];
	firings(spec, from, got, n);
	for (int i = 0; i < n; i++)
		cr_expect_eq(got[i], want[i], "%s firing %d: got %+lld s from Monday, want %+lld",
			     spec, i, (long long)(got[i] - MONDAY), (long long)(want[i] - MONDAY));
}

/* Kubernetes' CronJob schedule syntax (kubernetes.io/docs/concepts/workloads/
 * controllers/cron-jobs/#schedule-syntax), parsed by robfig/cron v3's
 * ParseStandard: parser.go getRange, spec.go dayMatches. */
Test(cron, lists_every_firing_of_daily_stepped_and_ranged_schedules)
{
	const int64_t M = MONDAY;
	expect_firings(
		"0 22 * * *", M,
		(const int64_t[]){M + 22 * HOUR, M + DAY + 22 * HOUR, M + 2 * DAY + 22 * HOUR}, 3);
	/* weekdays only: Friday 22:00, then Monday 22:00 of the next week */
	expect_firings("0 22 * * 1-5", M + 4 * DAY + 23 * HOUR,
		       (const int64_t[]){M + 7 * DAY + 22 * HOUR, M + 8 * DAY + 22 * HOUR}, 2);
	expect_firings("*/20 9-10 * * mon", M,
		       (const int64_t[]){M + 9 * HOUR, M + 9 * HOUR + 1200, M + 9 * HOUR + 2400,
					 M + 10 * HOUR, M + 10 * HOUR + 1200, M + 10 * HOUR + 2400,
					 M + 7 * DAY + 9 * HOUR},
		       7);
	/* "n/step" runs from n to the end of the field (robfig's "N-max/step") */
	expect_firings("45/10 0 * * *", M, (const int64_t[]){M + 2700, M + 3300, M + DAY + 2700},
		       3);
	/* @daily is "0 0 * * *"; firing at the very second asked for counts */
	expect_firings("@daily", M, (const int64_t[]){M, M + DAY}, 2);
	/* Sunday is 0 and 7; names are case-insensitive */
	expect_firings("30 6 * * 7", M, (const int64_t[]){M + 6 * DAY + 6 * HOUR + 1800}, 1);
	expect_firings("30 6 * * SUN", M, (const int64_t[]){M + 6 * DAY + 6 * HOUR + 1800}, 1);
	/* a second in a minute waits for the next minute */
	expect_firings("* * * * *", M + 1, (const int64_t[]){M + 60}, 1);
}

/* Vixie cron (crontab(5)): both day fields restricted, either matches; one of
 * them `*`, both must.  November 2026: Sun 1, Fri 6, 13, Sun 15, Fri 20, 27. */
Test(cron, matches_either_day_field_when_both_are_restricted)
{
	const int64_t N1 = MONDAY - DAY; /* Sunday 2026-11-01 */
	expect_firings("0 0 1,15 * fri", N1,
		       (const int64_t[]){N1, N1 + 5 * DAY, N1 + 12 * DAY, N1 + 14 * DAY,
					 N1 + 19 * DAY, N1 + 26 * DAY, N1 + 30 * DAY},
		       7);
	/* day of month `*`: only Fridays */
	expect_firings("0 0 * * 5", N1, (const int64_t[]){N1 + 5 * DAY, N1 + 12 * DAY}, 2);
	/* robfig: `*` with a step above 1 is restricted, so the rule is OR:
	 * odd days (1, 3, 5 ...) or Mondays (2, 9) */
	expect_firings("0 0 */2 * mon", N1,
		       (const int64_t[]){N1, N1 + DAY, N1 + 2 * DAY, N1 + 4 * DAY, N1 + 6 * DAY,
					 N1 + 8 * DAY},
		       6);
	/* February 29th comes in 2028 */
	expect_firings("0 0 29 2 *", MONDAY, (const int64_t[]){INT64_C(1835395200)}, 1);
}

Test(cron, refuses_bad_fields_with_the_field_named)
{
	static const struct {
		const char *spec, *why;
	} cases[] = {
		{"0 24 * * *", "hour: '24' is outside 0-23 or runs backwards"},
		{"0 22 * *", "'0 22 * *' has fewer than five fields"},
		{"0 22 * * * *", "'0 22 * * * *' has more than five fields"},
		{"0 22 * * fry",
		 "day of week: 'fry' is not a value from 0 to 7 or a name like mon"},
		{"*/0 * * * *", "minute: the step of '*/0' is not a whole number >= 1"},
		{"0 5-2 * * *", "hour: '5-2' is outside 0-23 or runs backwards"},
		{"0,,5 * * * *", "minute: an empty value in '0,,5'"},
		{"@fortnightly", "'@fortnightly' is not a macro; expected @yearly, @monthly, "
				 "@weekly, @daily or @hourly"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct cron c;
		char why[256] = "";
		cr_expect_eq(units_cron(cases[i].spec, &c, why, sizeof why), -1, "%s",
			     cases[i].spec);
		cr_expect_str_eq(why, cases[i].why);
	}
	struct cron c;
	char why[256];
	cr_assert_eq(units_cron("0 0 30 2 *", &c, why, sizeof why), 0);
	cr_expect_eq(units_cron_next(&c, MONDAY), INT64_MAX, "30 February never comes");
}

/* --- the weekly rate --------------------------------------------------------- */

static struct weekly_rate office_hours(double per_hour)
{
	struct weekly_rate wr = {.on = true};
	for (int h = 9; h < 17; h++)
		wr.by_hour[h] = per_hour / 3600;
	for (int d = 0; d < 7; d++)
		wr.by_weekday[d] = d < 5 ? 1 : 0;
	wr.week_mass = per_hour * 8 * 5;
	return wr;
}

/* The integrated rate is exact: 1/h from 09:00 to 17:00 on weekdays, so a
 * mass of 0.5 from Monday 00:00 is reached at 09:30; 8.5 (a day's 8 and
 * half an hour) Tuesday 09:30; 40.5 (a week's 40 and a half) the next
 * Monday 09:30; from Friday 16:30, a mass of 1 is Monday 09:30. */
Test(weekly, integrates_the_rate_hour_by_hour)
{
	struct weekly_rate wr = office_hours(1);
	const sim_time H = SIM_HOUR, D = SIM_DAY;
	cr_expect_eq(arrivals_weekly_next(&wr, MONDAY, 0, 0.5), 9 * H + 30 * SIM_MINUTE);
	cr_expect_eq(arrivals_weekly_next(&wr, MONDAY, 0, 8.5), D + 9 * H + 30 * SIM_MINUTE);
	cr_expect_eq(arrivals_weekly_next(&wr, MONDAY, 0, 40.5), 7 * D + 9 * H + 30 * SIM_MINUTE);
	cr_expect_eq(arrivals_weekly_next(&wr, MONDAY, 4 * D + 16 * H + 30 * SIM_MINUTE, 1.0),
		     7 * D + 9 * H + 30 * SIM_MINUTE);
	cr_expect_float_eq(arrivals_weekly_rate_at(&wr, MONDAY, 12 * H), 1.0 / 3600, 1e-15);
	cr_expect_eq(arrivals_weekly_rate_at(&wr, MONDAY, 5 * D + 12 * H), 0, "Saturday");
}

/* Counts per hour of the week of an inhomogeneous Poisson process over 20
 * weeks are Poisson with mean 20 x rate(hour): each within 5 standard
 * deviations, none outside the office hours, and the whole within 5 sigma
 * of 20 x 5 x (8 x 30) = 24,000. */
Test(weekly, hourly_counts_follow_the_rates)
{
	struct weekly_rate wr = office_hours(0);
	const double per_hour[24] = {[9] = 10,  [10] = 20, [11] = 30, [12] = 5,
				     [13] = 40, [14] = 60, [15] = 50, [16] = 25};
	wr.week_mass = 0;
	for (int h = 0; h < 24; h++) {
		wr.by_hour[h] = per_hour[h] / 3600;
		wr.week_mass += per_hour[h] * 5;
	}
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 7);
	static long count[7 * 24];
	long total = 0;
	const int weeks = 20;
	for (sim_time t = arrivals_weekly_next(&wr, MONDAY, 0, gsl_ran_exponential(rng, 1));
	     t < weeks * 7 * SIM_DAY;
	     t = arrivals_weekly_next(&wr, MONDAY, t, gsl_ran_exponential(rng, 1))) {
		count[(t / SIM_HOUR) % (7 * 24)]++;
		total++;
	}
	gsl_rng_free(rng);
	for (int k = 0; k < 7 * 24; k++) {
		double mean = weeks * per_hour[k % 24] * (k / 24 < 5 ? 1 : 0);
		if (mean == 0)
			cr_expect_eq(count[k], 0, "hour %d of the week has no rate", k);
		else
			cr_expect_leq(fabs((double)count[k] - mean), 5 * sqrt(mean),
				      "hour %d: %ld arrivals, expected %.0f", k, count[k], mean);
	}
	cr_expect_leq(fabs((double)total - 24000), 5 * sqrt(24000.0), "%ld arrivals", total);
}

/* --- scenarios ------------------------------------------------------------- */

static void write_scenario(const char *text)
{
	FILE *f = fopen(spath, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static struct scenario *load(const char *text)
{
	write_scenario(text);
	struct scenario *ls = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(spath, NULL, 0, &ls, &err), GP_OK, "%s", err.msg);
	return ls;
}

static void fails(const char *text, const char *msg)
{
	write_scenario(text);
	struct scenario *ls = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(scenario_load(spath, NULL, 0, &ls, &err), GP_EINPUT, "%s", text);
	char want[1024];
	snprintf(want, sizeof want, "%s/s.yaml:%s", dir, msg);
	cr_expect_str_eq(err.msg, want);
	scenario_free(ls);
}

/* The submit times of workload w's first n jobs, in seconds. */
static size_t submits(const struct scenario *ls, size_t w, double *at, size_t n)
{
	struct arrivals a;
	struct new_job job;
	arrivals_init(&a, ls);
	size_t k = 0;
	while (k < n && a.streams[w].next != SIM_NEVER) {
		sim_time now = a.streams[w].next;
		cr_assert(arrivals_take(&a, w, now, &job));
		at[k++] = sim_seconds(now);
	}
	arrivals_free(&a);
	return k;
}

#define HEAD                                        \
	"name: week\nstart: 2026-11-02T00:00:00Z\n" \
	"pools: [{name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 8}]\n"

/* With zeros outside 09:00-17:00 nothing arrives outside; by_weekday 0 on
 * the weekend keeps Saturday and Sunday empty; count ends the stream. */
Test(week, rate_by_hour_arrives_only_in_its_hours)
{
	struct scenario *ls = load(
		HEAD "horizon: 14d\nworkloads:\n"
		     "  - name: nb\n    count: 300\n    duration: 1h\n"
		     "    arrival: {process: poisson, rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, 6, "
		     "6, 6, 6, 3/h, 6, 6, 6, 0, 0, 0, 0, 0, 0, 0], by_weekday: [1, 1, 1, 1, 1, 0, "
		     "0]}\n");
	/* mean rate: (7 x 6 + 3) x 5 per week = 225 per week */
	cr_expect_float_eq(ls->workloads[0].arrival.rate * 7 * 86400, 225, 1e-9);
	static double at[400];
	size_t n = submits(ls, 0, at, 400);
	cr_expect_eq(n, 300, "count ends the stream: %zu", n);
	for (size_t i = 0; i < n; i++) {
		long hour = (long)(at[i] / 3600) % 24, day = (long)(at[i] / 86400) % 7;
		cr_expect(hour >= 9 && hour < 17 && day < 5, "arrival at %.0f s: day %ld hour %ld",
			  at[i], day, hour);
	}
	scenario_free(ls);
}

/* One job per firing: weekdays at 22:00 from Monday, 4 of them. */
Test(week, schedule_submits_one_job_per_firing)
{
	struct scenario *ls =
		load(HEAD "workloads:\n  - {name: ev, count: 4, duration: 2h, gpus: 2, "
			  "arrival: {schedule: \"0 22 * * 1-5\"}}\n");
	double at[8];
	cr_assert_eq(submits(ls, 0, at, 8), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_float_eq(at[i], 22 * 3600 + i * 86400, 1e-9, "firing %d at %.0f", i,
				   at[i]);
	scenario_free(ls);
	/* from: the first firing at or after it; with a horizon and no count, to the horizon */
	ls = load(HEAD "horizon: 3d\nworkloads:\n  - {name: ev, duration: 2h, gpus: 2, "
		       "arrival: {schedule: \"30 */8 * * *\", from: \"09:00\"}}\n");
	double want[] = {16.5, 24.5, 32.5, 40.5, 48.5, 56.5, 64.5};
	cr_assert_eq(submits(ls, 0, at, 8), 7);
	for (int i = 0; i < 7; i++)
		cr_expect_float_eq(at[i], want[i] * 3600, 1e-9, "firing %d at %.0f", i, at[i]);
	scenario_free(ls);
}

static double metric(const char *scope, const char *name) { return named_metric(&r, scope, name); }

/* The job submitted i-th, with its times in seconds. */
struct job_times {
	double start_s, end_s; /* NAN: never */
	int32_t preemptions;
	const char *reason;
};

static struct job_times job(int64_t i)
{
	for (size_t k = 0; k < r.n_jobs; k++) {
		const struct job_record *j = &r.jobs[k];
		if (j->job_id != i)
			continue;
		return (struct job_times){j->start == SIM_NEVER ? NAN : sim_seconds(j->start),
					  j->end == SIM_NEVER ? NAN : sim_seconds(j->end),
					  j->preemptions,
					  j->reason >= 0 ? r.reason_texts[j->reason] : ""};
	}
	cr_assert_fail("no job %lld", (long long)i);
	return (struct job_times){0};
}

/* Evals arrive at 12:00 and may start only in their window 22:00-06:00:
 * 2h jobs start at 22:00 and end at 24:00 (queue 10h each). */
Test(week, workload_window_holds_its_pods_until_it_opens)
{
	write_scenario(HEAD "workloads:\n  - {name: ev, count: 2, duration: 2h, gpus: 2, "
			    "arrival: {at: \"12:00\"}, windows: [{from: \"22:00\", to: "
			    "\"06:00\"}]}\n");
	run(spath, NULL, 0);
	for (size_t i = 0; i < 2; i++) {
		cr_expect_float_eq(job(i).start_s, 22 * 3600.0, 1e-6);
		cr_expect_float_eq(job(i).end_s, 24 * 3600.0, 1e-6);
	}
	cr_expect_float_eq(metric("ev", "queue_time_mean_s"), 10 * 3600.0, 1e-6);
	cleanup();
}

/* Both windows must allow, and window_policy fit wants the job to end before
 * the earlier close: the pool's 20:00-23:00 and the workload's 22:00-06:00
 * leave 22:00-23:00, an hour.  A 45m job starts at 22:00; a 2h one never
 * starts under fit (stalled), and under preempt runs from 22:00 and is stopped
 * at 23:00, every day, until the run is stalled. */
Test(week, workload_and_pool_windows_must_both_allow)
{
	write_scenario(HEAD
		       "workloads:\n  - {name: ev, count: 1, duration: 45m, "
		       "arrival: {at: \"12:00\"}, windows: [{from: \"22:00\", to: \"06:00\"}]}\n");
	/* the pool's window by --set, on top of the file */
	RUN_WITH(spath, "pools.p.windows=[{from: \"20:00\", to: \"23:00\"}]");
	cr_expect_float_eq(job(0).start_s, 22 * 3600.0, 1e-6);
	cr_expect_float_eq(job(0).end_s, 22.75 * 3600, 1e-6);
	cleanup();
	RUN_WITH(spath, "pools.p.windows=[{from: \"20:00\", to: \"23:00\"}]",
		 "workloads.ev.duration=2h");
	cr_expect_str_eq(r.status, "stalled");
	cr_expect(isnan(job(0).start_s), "never started");
	cr_expect_str_eq(job(0).reason, "0/1 nodes are available: 1 node(s) were unschedulable. "
					"preemption: 0/1 nodes are available: 1 Preemption is "
					"not helpful for scheduling..");
	cleanup();
	RUN_WITH(spath, "pools.p.windows=[{from: \"20:00\", to: \"23:00\"}]",
		 "workloads.ev.duration=2h", "scheduler.window_policy=preempt");
	cr_expect_float_eq(job(0).start_s, 22 * 3600.0, 1e-6);
	cr_expect_gt(metric("ev", "jobs_preempted"), 1);
	cleanup();
}

/* Under preempt, the workload's own window closing at 06:00 stops a 10h job
 * started at 22:00; with a 1h checkpoint it keeps 8h of work and finishes
 * its last 2h the next night, 22:00-24:00 (end 48h). */
Test(week, workload_window_close_preempts_under_preempt)
{
	write_scenario(HEAD
		       "scheduler: {window_policy: preempt}\nworkloads:\n"
		       "  - {name: ev, count: 1, duration: 10h, checkpoint: 1h, "
		       "arrival: {at: \"12:00\"}, windows: [{from: \"22:00\", to: \"06:00\"}]}\n");
	run(spath, NULL, 0);
	cr_expect_float_eq(job(0).start_s, 22 * 3600.0, 1e-6);
	cr_expect_float_eq(job(0).end_s, 48 * 3600.0, 1e-6);
	cr_expect_eq(job(0).preemptions, 1);
	cleanup();
}

/* Idle culling as JupyterHub's jupyterhub-idle-culler (README: a server whose
 * last_activity is older than --timeout is stopped) and Kubeflow's notebook
 * controller ("Configure Culling for Notebooks": scaled to zero when no
 * kernel computed for CULL_IDLE_TIME) decide it, with gpu_busy as activity.
 * 3 notebooks of 8h at 5% busy on a 2-GPU pool, culled 1h after a 10m
 * start-up: two start at 0 and end at 1h10m, the third waits for a freed
 * GPU and runs 1h10m to 2h20m.  Culled GPU-hours: 3 x (8h - 1h) = 21. */
Test(week, idle_cull_frees_gpus_at_the_computed_time)
{
	write_scenario("name: cull\nstart: 2026-11-02T00:00:00Z\n"
		       "pools: [{name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 2}]\n"
		       "workloads:\n  - {name: nb, kind: service, count: 3, duration: 8h, "
		       "gpu_busy: 0.05, startup: 10m, arrival: {at: \"00:00\"}, "
		       "idle_cull: {after: 1h}}\n");
	run(spath, NULL, 0);
	double ends[3] = {job(0).end_s, job(1).end_s, job(2).end_s};
	cr_expect_float_eq(ends[0], 70 * 60.0, 1e-6);
	cr_expect_float_eq(ends[1], 70 * 60.0, 1e-6);
	cr_expect_float_eq(job(2).start_s, 70 * 60.0, 1e-6);
	cr_expect_float_eq(ends[2], 140 * 60.0, 1e-6);
	cr_expect_float_eq(metric("nb", "jobs_culled"), 3, 1e-9);
	cr_expect_float_eq(metric("nb", "culled_gpu_hours"), 21, 1e-9);
	cr_expect_float_eq(metric("all", "gpu_hours_allocated"), 3 * 70 / 60.0, 1e-6);
	cleanup();
	/* busy above the threshold (default 0.1): never idle, never culled */
	RUN_WITH(spath, "workloads.nb.gpu_busy=0.5");
	cr_expect_float_eq(job(0).end_s, (8 * 60 + 10) * 60.0, 1e-6);
	cr_expect_float_eq(metric("nb", "jobs_culled"), 0, 1e-9);
	cleanup();
	/* a threshold above its activity culls it again */
	RUN_WITH(spath, "workloads.nb.gpu_busy=0.5", "workloads.nb.idle_cull.threshold=0.6");
	cr_expect_float_eq(metric("nb", "jobs_culled"), 3, 1e-9);
	cleanup();
}

/* Requests follow rate_by_hour too (per second there): none outside 12:00-13:00. */
Test(week, requests_follow_rate_by_hour)
{
	struct scenario *ls = load(
		HEAD
		"horizon: 2d\nworkloads:\n  - name: chat\n    kind: inference\n"
		"    model: llama-2-7b\n    replicas: 1\n    requests: {process: poisson, "
		"rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, "
		"0, 0, 0], prompt_tokens: 100, output_tokens: 10}\n");
	struct request_stream st;
	struct new_request rq;
	arrivals_requests_init(&st, ls, &ls->workloads[0]);
	long n = 0;
	while (st.next != SIM_NEVER) {
		sim_time t = st.next;
		cr_assert(arrivals_requests_take(&st, t, &rq));
		long hour = (long)(t / SIM_HOUR) % 24;
		cr_expect_eq(hour, 12, "a request at %.3f s", sim_seconds(t));
		n++;
	}
	arrivals_requests_free(&st);
	/* 2/s for an hour on each of 2 days: 14,400 on average */
	cr_expect_leq(fabs((double)n - 14400), 5 * 120, "%ld requests", n);
	scenario_free(ls);
}

#define WL "workloads:\n  - {name: w, duration: 1h, "

Test(week, every_new_key_is_validated_with_its_location)
{
	fails(HEAD WL "arrival: {process: poisson, rate_by_hour: [1, 2]}}\n",
	      "5:71: error: rate_by_hour has 2 entries; expected a list of 24 rates, one per "
	      "hour of the day from 00:00 UTC");
	fails(HEAD WL "arrival: {process: poisson, rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
		      "0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}}\n",
	      "5:108: error: invalid rate_by_hour entry '-1'; expected a number of arrivals per "
	      "hour >= 0, or a rate like 3/h");
	fails(HEAD WL "arrival: {process: poisson, rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "
		      "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}}\n",
	      "5:71: error: rate_by_hour x by_weekday is 0 all week: nothing would arrive; "
	      "expected a rate above 0 in some hour");
	fails(HEAD WL
	      "count: 2, arrival: {process: poisson, rate: 1/h, by_weekday: [1, 1, 1, 1, 1, "
	      "1, 1]}}\n",
	      "5:90: error: by_weekday multiplies rate_by_hour; expected rate_by_hour beside it");
	fails(HEAD WL "count: 2, arrival: {schedule: \"0 25 * * *\"}}\n",
	      "5:59: error: schedule '0 25 * * *': hour: '25' is outside 0-23 or runs backwards; "
	      "expected a cron schedule of five fields like \"0 22 * * *\" (minute hour day "
	      "month weekday)");
	fails(HEAD WL "arrival: {schedule: \"0 22 * * *\"}}\n",
	      "5:38: error: a schedule without count never ends; expected a count or a scenario "
	      "horizon");
	fails(HEAD WL "count: 1, arrival: {schedule: \"0 22 * * *\", rate: 1/h}}\n",
	      "5:73: error: rate does not apply to a schedule; expected only schedule and from");
	fails(HEAD WL "arrival: {at: \"12:00\"}, idle_cull: {after: 1h}}\n",
	      "5:64: error: idle_cull applies to kind: service (notebooks, dev pods); expected "
	      "kind: service beside it");
	fails(HEAD WL "kind: service, arrival: {at: \"12:00\"}, idle_cull: {aftr: 1h}}\n",
	      "5:80: error: unknown key 'aftr' in idle_cull; did you mean 'after'?");
	fails(HEAD WL "kind: service, arrival: {at: \"12:00\"}, idle_cull: {after: 1h, threshold: "
		      "2}}\n",
	      "5:102: error: invalid idle_cull threshold '2'; expected a fraction in (0, 1] like "
	      "0.9");
	fails(HEAD WL "arrival: {at: \"12:00\"}, windows: [{from: \"22:00\"}]}\n",
	      "5:63: error: missing key 'to' in window; expected a time of day like \"12:00\" or "
	      "\"17:30\"");
	fails(HEAD WL "arrival: {at: \"12:00\"}, windows: [{from: \"22:00\", to: \"06:00\", days: "
		      "[mon, fry]}]}\n",
	      "5:104: error: unknown day 'fry'; did you mean 'fri'?");
	fails(HEAD "workloads:\n  - {name: c, kind: inference, model: llama-2-7b, windows: [{from: "
		   "\"22:00\", to: \"06:00\"}], requests: {process: poisson, rate: 1/s, "
		   "prompt_tokens: 10, output_tokens: 10, count: 5}}\n",
	      "5:60: error: windows does not apply to kind: inference (its replicas serve all the "
	      "time); expected windows on a batch or service workload, or on the pool");
	fails(HEAD
	      "workloads:\n  - {name: c, kind: inference, model: llama-2-7b, requests: "
	      "{process: gamma, shape: 0.5, rate_by_hour: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
	      "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], prompt_tokens: 10, output_tokens: 10, "
	      "count: 5}}\n",
	      "5:104: error: rate_by_hour applies to a poisson process; expected process: poisson");
}

/* The warnings of `check`, exact: 20 jobs at 30/h arrive within 40m, 3% of a
 * 1d horizon (720 would fill it); a 3h job with a deadline arriving until the
 * horizon cannot finish after 21h.  A schedule is cut only when it fires in
 * that last stretch: weekdays at 22:00 over a 7d week are not (Friday's ends
 * on Saturday), over 4d23h they are (Friday 22:00 + 2h > 4d23h). */
Test(week, check_warns_of_a_squeezed_count_and_a_cut_horizon)
{
	struct scenario *ls = load(
		"name: sq\nhorizon: 24h\n"
		"pools: [{name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 8}]\n"
		"workloads:\n"
		"  - {name: ft, count: 20, duration: 1h, arrival: {process: poisson, rate: 30/h}}\n"
		"  - {name: ev, duration: 3h, deadline: {within: 5h}, arrival: {process: "
		"poisson, rate: 1/h}}\n"
		"  - {name: ok, count: 20, duration: 1h, arrival: {process: poisson, rate: 1/h}}\n");
	struct scenario_warning *w;
	size_t n;
	scenario_warnings(ls, &w, &n);
	cr_assert_eq(n, 2);
	cr_expect_eq(w[0].loc.line, 5);
	cr_expect_str_eq(w[0].text,
			 "workload ft: its 20 jobs arrive within about 40m at 30/h, 3% of the "
			 "horizon (1d): a fixed count at a higher rate squeezes the same jobs into "
			 "fewer hours; expected a count of about 720 (rate x span) or, with a "
			 "horizon, none");
	cr_expect_eq(w[1].loc.line, 6);
	cr_expect_str_eq(
		w[1].text,
		"workload ev: the horizon 1d cuts off its jobs arriving after 21h (horizon "
		"- start-up - mean duration): they cannot finish inside it, and those "
		"whose deadline falls after it are not judged; expected a horizon past its "
		"last arrival plus a "
		"duration, or arrivals that end earlier");
	free(w);
	scenario_free(ls);
	const char *evals = HEAD "horizon: %s\nworkloads:\n  - {name: ev, gpus: 2, duration: 2h, "
				 "deadline: {within: 8h}, arrival: {schedule: \"0 22 * * 1-5\"}}\n";
	char text[512];
	snprintf(text, sizeof text, evals, "7d");
	ls = load(text);
	scenario_warnings(ls, &w, &n);
	cr_expect_eq(n, 0, "%s", n ? w[0].text : "");
	free(w);
	scenario_free(ls);
	snprintf(text, sizeof text, evals, "4d23h");
	ls = load(text);
	scenario_warnings(ls, &w, &n);
	cr_expect_eq(n, 1);
	free(w);
	scenario_free(ls);
}

/* The team's week of issue 44 loads and runs as written (scenarios/week.yaml):
 * no warning, every kind of week key used, the notebooks culled. */
Test(week, the_issue_44_week_runs_as_written)
{
	run("scenarios/week.yaml", NULL, 0);
	struct scenario_warning *w;
	size_t n;
	scenario_warnings(sc, &w, &n);
	cr_expect_eq(n, 0);
	free(w);
	cr_expect_eq(metric("notebooks", "jobs_culled"), metric("notebooks", "jobs_completed"));
	/* 5 weekday firings of the evals, each at 22:00 */
	cr_expect_float_eq(metric("nightly-evals", "jobs_submitted"), 5, 1e-9);
	cr_expect_gt(metric("chat", "requests_completed"), 0);
	cleanup();
}

/* --growth F (growth: F) scales rate_by_hour as it scales rate, for batch
 * arrivals and inference requests: twice the rate in every hour, twice the
 * week's mass and mean rate, the zero hours still zero. */
Test(week, growth_scales_rate_by_hour)
{
	const char *text =
		HEAD "horizon: 7d\nworkloads:\n  - name: nb\n    duration: 1h\n"
		     "    arrival: {process: poisson, rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, 6, "
		     "6, 6, 6, 6, 6, 6, 6, 0, 0, 0, 0, 0, 0, 0]}\n"
		     "  - name: chat\n    kind: inference\n    model: llama-2-7b\n    replicas: 1\n"
		     "    requests: {process: poisson, rate_by_hour: [0, 0, 0, 0, 0, 0, 0, 0, 0, "
		     "0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], prompt_tokens: 100, "
		     "output_tokens: 10}\n";
	write_scenario(text);
	const char *sets[] = {"growth=2"};
	struct scenario *a = NULL, *b = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(spath, NULL, 0, &a, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(scenario_load(spath, sets, 1, &b, &err), GP_OK, "%s", err.msg);
	const struct weekly_rate *x = &a->workloads[0].arrival.weekly,
				 *y = &b->workloads[0].arrival.weekly;
	cr_expect_float_eq(y->by_hour[9], 2 * x->by_hour[9], 1e-15);
	cr_expect_eq(y->by_hour[3], 0);
	cr_expect_float_eq(y->week_mass, 2 * x->week_mass, 1e-9);
	cr_expect_float_eq(b->workloads[0].arrival.rate, 2 * a->workloads[0].arrival.rate, 1e-15);
	const struct weekly_rate *rx = &a->workloads[1].inference->requests.weekly,
				 *ry = &b->workloads[1].inference->requests.weekly;
	cr_expect_float_eq(ry->by_hour[12], 2 * rx->by_hour[12], 1e-15);
	cr_expect_float_eq(ry->week_mass, 2 * rx->week_mass, 1e-9);
	/* about twice the arrivals: 7 x 8 x 6 = 336 a week, 672 grown */
	static double at[2000];
	size_t na = submits(a, 0, at, 2000), nb = submits(b, 0, at, 2000);
	cr_expect(na > 336 - 5 * 18.4 && na < 336 + 5 * 18.4, "%zu", na);
	cr_expect(nb > 672 - 5 * 26 && nb < 672 + 5 * 26, "%zu", nb);
	scenario_free(a);
	scenario_free(b);
}
