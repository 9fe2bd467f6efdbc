/*
 * test_scenarios.c - whole runs: the worked example with its exact figures,
 * M/M/c against Erlang C, Little's law, windows, queue strategies and
 * determinism.
 */
#include "gpuplan/scenario.h"
#include "gpuplan/metrics.h"
#include "gpuplan/run.h"
#include "gpuplan/sim.h"

#include <criterion/criterion.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "named_metric.h"

TestSuite(scenarios, .fini = cleanup);

static double metric(const char *scope, const char *name)
{
	double v = named_metric(&r, scope, name);
	cr_assert(!isnan(v) || strstr(name, "makespan"), "metric %s/%s present", scope, name);
	return v;
}

static const struct job_record *job(size_t i) { return &r.jobs[i]; }

Test(scenarios, eval_window_runs_in_two_waves_on_four_gpus)
{
	run("scenarios/eval-window.yaml", NULL, 0);
	cr_assert_eq(r.n_jobs, 4);
	int at12 = 0, at13 = 0;
	for (size_t i = 0; i < 4; i++) {
		at12 += job(i)->start == 12 * SIM_HOUR;
		at13 += job(i)->start == 13 * SIM_HOUR;
		cr_assert_leq(job(i)->end, 14 * SIM_HOUR);
		cr_assert(job(i)->deadline_met);
	}
	cr_assert_eq(at12, 2, "two jobs start at 12:00");
	cr_assert_eq(at13, 2, "two jobs start at 13:00");
	cr_assert_float_eq(metric("all", "peak_demand_gpus"), 8, 1e-9);
	cr_assert_float_eq(metric("all", "peak_allocated_gpus"), 4, 1e-9);
	cr_assert_float_eq(metric("all", "queue_time_mean_s"), 1800, 1e-9);
	cr_assert_float_eq(metric("all", "queue_time_max_s"), 3600, 1e-9);
	cr_assert_float_eq(metric("all", "gpu_hours_allocated"), 8, 1e-9);
	cr_assert_float_eq(metric("all", "deadline_met_pct"), 100, 1e-9);
	cr_assert_float_eq(metric("all", "makespan_s"), 7200, 1e-9);
	cr_assert_float_eq(metric("all", "jobs_completed"), 4, 1e-9);
	cr_assert_float_eq(metric("all", "capacity_gpus"), 4, 1e-9);
	cr_assert_float_eq(metric("all", "gpu_allocation_pct"), 100, 1e-9);
	cr_assert_float_eq(metric("all", "engine_active_pct"), 90, 1e-9);
	cr_assert_float_eq(metric("batch", "peak_allocated_gpus"), 4, 1e-9);
	cr_assert_float_eq(metric("eval", "queue_time_p50_s"), 1800, 1e-9);
	cr_assert_str_eq(r.status, "ok");
	cr_assert_eq(r.sim_end, 14 * SIM_HOUR);
}

Test(scenarios, eval_window_on_eight_gpus_needs_no_queue)
{
	const char *sets[] = {"pools.batch.gpus_per_node=8"};
	run("scenarios/eval-window.yaml", sets, 1);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(job(i)->start, 12 * SIM_HOUR);
		cr_assert_eq(job(i)->end, 13 * SIM_HOUR);
	}
	cr_assert_float_eq(metric("all", "queue_time_max_s"), 0, 1e-9);
	cr_assert_float_eq(metric("all", "peak_allocated_gpus"), 8, 1e-9);
	cr_assert_float_eq(metric("all", "gpu_hours_allocated"), 8, 1e-9);
}

Test(scenarios, a_one_hour_window_lets_only_the_first_wave_finish)
{
	const char *sets[] = {"pools.batch.windows=[{from: \"12:00\", to: \"13:00\"}]",
			      "workloads.eval.deadline=\"13:00\""};
	run("scenarios/eval-window.yaml", sets, 2);
	int met = 0;
	for (size_t i = 0; i < 4; i++)
		met += job(i)->deadline_met;
	cr_assert_eq(met, 2);
	/* The second wave waits for the next day's window under `fit`. */
	for (size_t i = 0; i < 4; i++)
		if (!job(i)->deadline_met)
			cr_assert_eq(job(i)->start, (24 + 12) * SIM_HOUR);
	cr_assert_float_eq(metric("all", "deadline_met_pct"), 50, 1e-9);
}

Test(scenarios, window_fit_holds_a_job_that_would_run_past_the_close)
{
	const char *sets[] = {"workloads.eval.arrival.at=\"16:30\"",
			      "workloads.eval.deadline={within: 2d}"};
	run("scenarios/eval-window.yaml", sets, 2);
	for (size_t i = 0; i < 4; i++)
		cr_assert_geq(job(i)->start, (24 + 12) * SIM_HOUR, "nothing starts at 16:30");
}

/* Erlang C: probability that an arrival waits in M/M/c with offered load a. */
static double erlang_c(int c, double a)
{
	double sum = 0;
	for (int k = 0; k < c; k++)
		sum += pow(a, k) / gsl_sf_fact((unsigned)k);
	double top = pow(a, c) / gsl_sf_fact((unsigned)c) * c / (c - a);
	return top / (sum + top);
}

/*
 * 200,000 jobs through M/M/4 at utilization 0.8.  Waiting times are strongly
 * autocorrelated, so the tolerance comes from the run itself: 20 batch means
 * give a standard error, and the mean must lie within 4 of them (a false
 * alarm about once in 15,000 seeds) and within 10% of Erlang C.
 */
Test(scenarios, mmc_mean_wait_matches_erlang_c, .timeout = 120)
{
	run("tests/fixtures/mmc.yaml", NULL, 0);
	const double lambda = 3.2 / 3600, mu = 1.0 / 3600;
	const int c = 4;
	double wq = erlang_c(c, lambda / mu) / (c * mu - lambda);
	size_t n = r.n_jobs, batches = 20, per = n / batches;
	double means[20];
	for (size_t b = 0; b < batches; b++) {
		double s = 0;
		for (size_t i = b * per; i < (b + 1) * per; i++)
			s += sim_seconds(job(i)->start - job(i)->submit);
		means[b] = s / (double)per;
	}
	double mean = gsl_stats_mean(means, 1, batches);
	double se = gsl_stats_sd(means, 1, batches) / sqrt((double)batches);
	cr_assert_float_eq(wq, 2683.6, 1.0, "Erlang C by hand: %f", wq);
	cr_assert_lt(fabs(mean - wq), 4 * se, "mean wait %.1f s vs Erlang C %.1f s (se %.1f)", mean,
		     wq, se);
	cr_assert_lt(fabs(mean - wq) / wq, 0.10);
	cr_assert_float_eq(metric("all", "queue_time_mean_s"), gsl_stats_mean(means, 1, batches),
			   1e-6 * wq);
	/* Server utilization tends to rho = 0.8. */
	cr_assert_float_eq(metric("all", "gpu_allocation_pct"), 80, 1.5);
}

/*
 * Little's law, L = lambda W, holds exactly on a run that starts and ends
 * empty: the integral of the number waiting over time equals the sum of the
 * waits.  That ties the collector's timeseries to the job records.
 */
Test(scenarios, littles_law_links_timeseries_and_jobs, .timeout = 60)
{
	const char *sets[] = {"workloads.jobs.count=20000"};
	run("tests/fixtures/mmc.yaml", sets, 1);
	double waits = 0, busy = 0;
	for (size_t i = 0; i < r.n_jobs; i++) {
		waits += sim_seconds(job(i)->start - job(i)->submit);
		busy += sim_seconds(job(i)->end - job(i)->start);
	}
	double pending = 0, running = 0;
	for (size_t i = 0; i < r.n_ts; i++) {
		if (strcmp(r.ts[i].scope, "all"))
			continue;
		sim_time end = r.ts[i].t + r.step;
		if (end > r.sim_end)
			end = r.sim_end;
		pending += r.ts[i].pending * sim_seconds(end - r.ts[i].t);
		running += r.ts[i].running * sim_seconds(end - r.ts[i].t);
	}
	cr_assert_float_eq(pending, waits, 1e-6 * waits);
	cr_assert_float_eq(running, busy, 1e-6 * busy);
	double span = metric("all", "makespan_s");
	double lambda = (double)r.n_jobs / span;
	cr_assert_float_eq(pending / span, lambda * waits / (double)r.n_jobs, 1e-6);
}

Test(scenarios, best_effort_fifo_lets_work_past_a_head_that_does_not_fit)
{
	/* A 4-GPU job arrives behind a running 2-GPU job; a 1-GPU job follows.
	 * StrictFIFO and quota: tests/test_kueue.c. */
	const char *best[] = {"workloads.big.arrival.at=\"00:01\"",
			      "workloads.small.arrival.at=\"00:02\""};
	run("tests/fixtures/strategy.yaml", best, 2);
	cr_assert_eq(job(2)->start, 2 * SIM_MINUTE, "BestEffortFIFO lets the small job through");
}

Test(scenarios, priority_order_starts_urgent_work_first)
{
	const char *sets[] = {"scheduler.order=priority"};
	run("tests/fixtures/strategy.yaml", sets, 1);
	/* All three arrive at once; small has priority 5, first 0, big 1. */
	cr_assert_eq(job(2)->start, 0);
}

Test(scenarios, same_seed_gives_identical_results)
{
	run("scenarios/quickstart.yaml", NULL, 0);
	struct results first = r;
	results_init(&r);
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK);
	cr_assert_eq(first.n_metrics, r.n_metrics);
	for (size_t i = 0; i < r.n_metrics; i++) {
		cr_assert_str_eq(first.metrics[i].name, r.metrics[i].name);
		cr_assert(first.metrics[i].value == r.metrics[i].value ||
			  (isnan(first.metrics[i].value) && isnan(r.metrics[i].value)));
	}
	cr_assert_eq(first.n_jobs, r.n_jobs);
	for (size_t i = 0; i < r.n_jobs; i++) {
		const struct job_record *a = &first.jobs[i], *b = &r.jobs[i];
		cr_assert(a->submit == b->submit && a->start == b->start && a->end == b->end &&
				  a->node == b->node && a->status == b->status &&
				  a->cost == b->cost && a->verified == b->verified,
			  "job %zu differs", i);
	}
	cr_assert_eq(first.n_ts, r.n_ts);
	cr_assert_eq(memcmp(first.ts, r.ts, r.n_ts * sizeof *r.ts), 0);
	results_free(&first);
}

Test(scenarios, another_seed_gives_other_draws)
{
	const char *sets[] = {"seed=43"};
	run("scenarios/quickstart.yaml", sets, 1);
	double q43 = metric("all", "gpu_hours_allocated");
	cleanup();
	run("scenarios/quickstart.yaml", NULL, 0);
	cr_assert_neq(q43, metric("all", "gpu_hours_allocated"));
}

Test(scenarios, horizon_stops_the_run_and_counts_unfinished_work)
{
	const char *sets[] = {"horizon=12h30m"};
	run("scenarios/eval-window.yaml", sets, 1);
	cr_assert_str_eq(r.status, "horizon");
	cr_assert_eq(r.sim_end, 12 * SIM_HOUR + 30 * SIM_MINUTE);
	cr_assert_float_eq(metric("all", "jobs_unfinished"), 4, 1e-9);
	cr_assert_float_eq(metric("all", "jobs_completed"), 0, 1e-9);
}

/* Runs tests/fixtures/mmc.yaml with sets into sc and r, as run() does, and
 * returns how many job slots the simulation held at the end. */
static size_t run_counting_slots(const char **sets, size_t n_sets)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load("tests/fixtures/mmc.yaml", sets, n_sets, &sc, &err), GP_OK, "%s",
		     err.msg);
	results_init(&r);
	struct sim *s = sim_create(sc, &r);
	sim_advance(s, &r);
	size_t slots;
	sim_jobs(s, &slots);
	metrics_reduce(s, sc, &r);
	sim_finish(s, &r);
	return slots;
}

/*
 * With job rows too, a finished job retires: its row goes to the results at
 * its submission number and its slot to the next arrival, so the M/M/4 of
 * 20,000 jobs keeps a few dozen slots, and the rows come out in submission
 * order, every one completed after it started.
 */
Test(scenarios, job_rows_are_written_as_jobs_retire, .timeout = 60)
{
	const char *sets[] = {"workloads.jobs.count=20000"};
	cr_expect_lt(run_counting_slots(sets, 1), 200, "job slots for 20,000 jobs");
	cr_assert_eq(r.n_jobs, 20000);
	for (size_t i = 0; i < r.n_jobs; i++) {
		const struct job_record *j = &r.jobs[i];
		cr_assert_eq(j->job_id, (int64_t)i);
		cr_assert_eq(j->status, JOB_COMPLETED, "job %zu", i);
		cr_assert(j->submit <= j->start && j->start < j->end, "job %zu", i);
		cr_assert(i == 0 || j->submit >= r.jobs[i - 1].submit, "job %zu", i);
	}
}

/*
 * With output.jobs false finished jobs are retired and their indexes reused:
 * an M/M/4 at utilisation 0.8 over 20,000 jobs keeps only the jobs in
 * flight (a few dozen at worst), and its metrics are the very figures of a
 * run that keeps every job (same draws, same waits, sorted the same).
 */
Test(scenarios, retiring_finished_jobs_keeps_memory_to_the_jobs_in_flight, .timeout = 60)
{
	const char *keep[] = {"workloads.jobs.count=20000"};
	run("tests/fixtures/mmc.yaml", keep, 1);
	struct results kept = r; /* its names point into the first scenario: keep it */
	struct scenario *kept_sc = sc;
	memset(&r, 0, sizeof r);
	const char *retire[] = {"workloads.jobs.count=20000", "output.jobs=false"};
	cr_expect_lt(run_counting_slots(retire, 2), 200, "job slots for 20,000 jobs");
	cr_assert_eq(r.n_jobs, 0);
	cr_assert_eq(kept.n_jobs, 20000);
	size_t compared = 0;
	for (size_t i = 0; i < kept.n_metrics; i++) {
		const struct metric *m = &kept.metrics[i];
		if (strncmp(m->name, "queue_time", 10) && strncmp(m->name, "jobs_", 5) &&
		    strcmp(m->name, "makespan_s") && strcmp(m->name, "deadline_met_pct"))
			continue;
		double v = named_metric(&r, m->scope, m->name);
		cr_expect(v == m->value, "%s %s: %.17g, kept %.17g", m->scope, m->name, v,
			  m->value);
		compared++;
	}
	cr_expect_eq(compared, 2 * 13); /* scopes all and jobs: 5 waits, 6 counts, 2 others */
	results_free(&kept);
	scenario_free(kept_sc);
}

/* Window events after the last of the work move no gauge: a powered pool's
 * next window (day 2, 00:00) once rolled the time series 14.6 hours past the
 * run's end and halved its time averages (it gave 575 windows of 5m and
 * 7.7% allocated).  By hand: 1999 windows of 1m, 1 GPU of 9 for the span. */
Test(scenarios, a_window_after_the_last_job_does_not_stretch_the_run)
{
	run("tests/fixtures/powered-window-tail.yaml", NULL, 0);
	cr_assert_eq(r.sim_end, 1999 * SIM_MINUTE);
	cr_assert_eq(r.step, SIM_MINUTE);
	size_t scopes = 1 + sc->n_pools + sc->n_workloads;
	cr_assert_eq(r.n_ts, 1999 * scopes);
	cr_assert_eq(r.ts[r.n_ts - 1].t, 1998 * SIM_MINUTE);
	cr_assert_float_eq(metric("all", "gpu_allocation_pct"), 100.0 / 9, 1e-9);
	cr_assert_float_eq(metric("p", "gpu_allocation_pct"), 12.5, 1e-9);
}

/* The load bounds an explicit step's windows by the span the arrivals show
 * (0 here); the run checks the real span, stops at the limit and refuses the
 * run where the step was given (it wrote 2,592,000 windows, 700 MB). */
Test(scenarios, an_explicit_step_past_the_window_limit_stops_the_run)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *path = "tests/fixtures/refused/step-windows-past-the-limit.yaml";
	cr_assert_eq(scenario_load(path, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	results_init(&r);
	cr_assert_eq(run_simulate(sc, &r, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "step-windows-past-the-limit.yaml:10:"), "%s", err.msg);
	cr_expect(strstr(err.msg, "output.step made more than 1000000 timeseries windows per "
				  "scope by 30d"),
		  "%s", err.msg);
	cr_expect_leq(r.n_ts, (1000000 + 2) * 3, "it stopped at the limit, not 2,592,000");
}

/* Without a horizon the clock stops at SCENARIO_MAX_RUN: a queue of
 * 1000-year jobs aborted in engine_push (the clock past int64). */
Test(scenarios, a_run_without_a_horizon_stops_at_the_clock_limit)
{
	run("tests/fixtures/clock-limit.yaml", NULL, 0);
	cr_assert_str_eq(r.status, "horizon");
	cr_assert_eq(r.sim_end, SCENARIO_MAX_RUN);
	cr_assert_float_eq(metric("all", "jobs_completed"), 2, 0);
}
