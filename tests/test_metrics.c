/*
 * test_metrics.c - the metrics a finished run is reduced to (metrics.h), on
 * tests/fixtures/metrics-cases.yaml, every figure worked by hand.
 *
 * One node of 4 GPUs; at 00:00 a 4-GPU job (big, gpu_busy 0.5) and three
 * 2-GPU jobs (small, gpu_busy 1, deadline 02:30), first in, first out:
 *   big       0-1 h on all 4 GPUs, waits 0
 *   small 1,2 1-2 h, 2 GPUs each, wait 3600 s, met
 *   small 3   2-3 h, 2 GPUs,      waits 7200 s, misses 02:30
 * The run spans 0-3 h: 12 GPU-hours of capacity.
 */
#include "gpuplan/metrics.h"
#include "gpuplan/results.h"
#include "named_metric.h"

#include "run.h"

#include <criterion/criterion.h>

#define FIXTURE "tests/fixtures/metrics-cases.yaml"

TestSuite(metrics, .fini = cleanup);

static void expect(const char *scope, const char *name, double want)
{
	double got = named_metric(&r, scope, name);
	cr_expect_float_eq(got, want, 1e-9, "%s %s: %.17g, expected %.17g", scope, name, got, want);
}

/* Waits all: 0, 3600, 3600, 7200: mean 14400 / 4 = 3600; GSL's quantile of
 * sorted data at p (n - 1): p50 at 1.5 = 3600, p95 at 2.85 = 3600 + 0.85 x
 * 3600 = 6660, p99 at 2.97 = 3600 + 0.97 x 3600 = 7092.  small: 3600, 3600,
 * 7200: mean 4800, p95 at 1.9 = 3600 + 0.9 x 3600 = 6840, p99 at 1.98 = 7128. */
Test(metrics, queue_times_are_gsl_quantiles_of_the_waits)
{
	run(FIXTURE, NULL, 0);
	expect("all", "queue_time_mean_s", 3600);
	expect("all", "queue_time_p50_s", 3600);
	expect("all", "queue_time_p95_s", 6660);
	expect("all", "queue_time_p99_s", 7092);
	expect("all", "queue_time_max_s", 7200);
	expect("small", "queue_time_mean_s", 4800);
	expect("small", "queue_time_p95_s", 6840);
	expect("small", "queue_time_p99_s", 7128);
	expect("big", "queue_time_max_s", 0);
}

/* Jobs, deadlines and makespan: a job without a deadline counts as met in
 * its own scope (big 100%), and scope all counts the workloads with a
 * deadline, small alone: 2 of 3 (66.67%, not 3 of 4 with big); makespan from
 * the first submit (0) to the last end: all and small 3 h = 10800 s, big 1 h. */
Test(metrics, job_counts_deadlines_and_makespan_per_scope)
{
	run(FIXTURE, NULL, 0);
	expect("all", "jobs_submitted", 4);
	expect("all", "jobs_completed", 4);
	expect("all", "jobs_unfinished", 0);
	expect("small", "jobs_completed", 3);
	expect("all", "deadline_met_pct", 200.0 / 3);
	expect("small", "deadline_met_pct", 200.0 / 3);
	expect("big", "deadline_met_pct", 100);
	expect("all", "makespan_s", 10800);
	expect("small", "makespan_s", 10800);
	expect("big", "makespan_s", 3600);
}

/* A horizon that cuts a job off: at 2h15m small's third job runs (2-3 h)
 * and its deadline, 02:30, is after the horizon, so the run cannot judge
 * it: small meets 2 of 2.  At 2h45m its deadline has passed unfinished: 2
 * of 3. */
Test(metrics, a_deadline_after_the_horizon_is_not_judged)
{
	const char *cut[] = {"horizon=2h15m"};
	run(FIXTURE, cut, 1);
	expect("small", "jobs_unfinished", 1);
	expect("small", "deadline_met_pct", 100);
	expect("all", "deadline_met_pct", 100);
	cleanup();
	const char *past[] = {"horizon=2h45m"};
	run(FIXTURE, past, 1);
	expect("small", "jobs_unfinished", 1);
	expect("small", "deadline_met_pct", 200.0 / 3);
}

/* Gauges: allocated 4 x 1 + 3 x 2 x 1 = 10 GPU-hours of 12 (83.33%); engine
 * busy 4 x 0.5 + 6 x 1 = 8 GPU-hours (66.67%), SM the same (s = 1 by
 * default); peak demand 4 + 3 x 2 = 10 GPUs at 00:00 (big 4, small 6),
 * peak allocated 4. */
Test(metrics, allocation_and_activity_integrate_the_gauges)
{
	run(FIXTURE, NULL, 0);
	expect("all", "capacity_gpus", 4);
	expect("all", "gpu_hours_allocated", 10);
	expect("all", "gpu_allocation_pct", 1000.0 / 12);
	expect("all", "gpu_hours_busy", 8);
	expect("all", "engine_active_pct", 800.0 / 12);
	expect("p", "gpu_allocation_pct", 1000.0 / 12);
	expect("all", "peak_demand_gpus", 10);
	expect("big", "peak_demand_gpus", 4);
	expect("small", "peak_demand_gpus", 6);
	expect("all", "peak_allocated_gpus", 4);
	expect("big", "gpu_hours_busy", 2);
	expect("small", "gpu_hours_allocated", 6);
}

/* Goals: big (no deadline, the default queue goal 3600 s, waited 0) met;
 * small missed a deadline: not met; all: 1 missed.  The bill at $2 a
 * GPU-hour over 3 h: 4 GPUs x 3 h x 2 = $24, $192 a day (24 / (3 / 24));
 * verified results are jobs done in time: 3, $8 each. */
Test(metrics, goals_and_the_bill_per_day)
{
	run(FIXTURE, NULL, 0);
	expect("big", "goal_met", 1);
	expect("small", "goal_met", 0);
	expect("all", "goals_missed", 1);
	expect("all", "goal_met", 0);
	expect("all", "cost_total", 24);
	expect("all", "cost_per_day", 192);
	expect("all", "verified_results", 3);
	expect("all", "cost_per_verified_result", 8);
}

/* Deadlines a trace gives (tests/fixtures/trace-deadlines/one-gpu.yaml): of
 * two 2-hour jobs at 0 on one GPU with deadlines at 3 h, the second ends at
 * 4 h; with the third row, which has none, 2 of 3 meet.  The goal counted
 * only a workload's own `deadline:`, so this workload met it, and a trace
 * workload with deadlines had the 1 h queue goal of work without any. */
Test(metrics, a_traces_deadlines_are_the_workloads_goal)
{
	run("tests/fixtures/trace-deadlines/one-gpu.yaml", NULL, 0);
	expect("evals", "deadline_met_pct", 200.0 / 3);
	expect("evals", "goal_met", 0);
	cr_expect(isnan(named_metric(&r, "evals", "queue_goal_s")), "no queue goal of its own");
}
