/*
 * test_backtest.c - `gpuplan backtest`: the replay of a twin's history
 * beside the history, on hand-written twins whose every figure is worked out
 * below (tests/fixtures/backtest/); the backtest table written in the run's
 * transaction; the page's table; what the replay could not model.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "gpuplan/backtest.h"
#include "gpuplan/results.h"
#include "scratch.h"
#include <sys/stat.h>

static char out[16384];

TestSuite(backtest, .init = scratch_make, .fini = scratch_remove);

static int gpuplan(const char *fmt, const char *a)
{
	char args[1024], cmd[1200];
	snprintf(args, sizeof args, fmt, a, a);
	snprintf(cmd, sizeof cmd, "bin/gpuplan %s", args);
	return capture(cmd, out, sizeof out);
}

static const struct backtest_row *row(const struct results *r, const char *scope,
				      const char *metric)
{
	for (size_t i = 0; i < r->n_backtest; i++)
		if (!strcmp(r->backtest[i].scope, scope) && !strcmp(r->backtest[i].metric, metric))
			return &r->backtest[i];
	cr_assert_fail("no row %s %s", scope, metric);
	return NULL;
}

static void expect(const struct results *r, const char *scope, const char *metric, double obs,
		   double sim)
{
	const struct backtest_row *b = row(r, scope, metric);
	cr_expect_float_eq(b->observed, obs, 1e-9, "%s %s observed %g, expected %g", scope, metric,
			   b->observed, obs);
	cr_expect_float_eq(b->simulated, sim, 1e-9, "%s %s simulated %g, expected %g", scope,
			   metric, b->simulated, sim);
}

static void run_backtest(const char *path, struct backtest *b, struct results *r)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	results_init(r);
	cr_assert_eq(backtest_prepare(b, path, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(backtest_run(b, r, &err), GP_OK, "%s", err.msg);
}

/*
 * tiny.yaml: one node of 2 GPUs; pods of 1 GPU each (seconds since FROM):
 *   a created -900, started -600, ended 3000 (ran when the period began)
 *   b created 600, started 600, ended 4200
 *   c created 1200, started 3000 (a's GPU), still running at 7200
 *   d created 1800, started 4200 (b's GPU), ended 6000
 * Queue times of the pods created inside the period: 0, 1800, 2400: mean
 * 1400, p95 1800 + 0.9 x 600 = 2340 (GSL's interpolated quantile).
 * GPU-hours: 3000 + 3600 + 4200 + 1800 = 12600 s = 3.5 h; peak 2.  The
 * replay on the same node starts each pod when it started: the same.
 */
Test(backtest, a_replay_on_the_same_cluster_reproduces_the_history)
{
	struct backtest b;
	struct results r;
	run_backtest("tests/fixtures/backtest/tiny.yaml", &b, &r);
	cr_assert_eq(r.n_backtest, 10, "all and train, five figures each");
	cr_assert_str_eq(r.backtest[0].scope, "all");
	cr_assert_str_eq(r.backtest[5].scope, "train");
	const char *scopes[] = {"all", "train"};
	for (int k = 0; k < 2; k++) {
		expect(&r, scopes[k], "pods_started", 4, 4);
		expect(&r, scopes[k], "queue_time_mean_s", 1400, 1400);
		expect(&r, scopes[k], "queue_time_p95_s", 2340, 2340);
		expect(&r, scopes[k], "gpu_hours", 3.5, 3.5);
		expect(&r, scopes[k], "peak_allocated_gpus", 2, 2);
	}
	for (size_t i = 0; i < r.n_backtest; i++) {
		cr_expect_eq(r.backtest[i].error, 0, "%s %s", r.backtest[i].scope,
			     r.backtest[i].metric);
		cr_expect(results_backtest_within(&r.backtest[i], 0.25));
	}
	cr_expect_eq(r.n_gaps, 0, "nothing the history shows that the replay lacks");
	cr_expect_eq(b.map.n_workloads, 2, "train/running (pod a) ahead of train");
	cr_expect(b.map.running_at_start[0]);
	cr_expect_str_eq(b.replay->workloads[0].name, "train/running");
	cr_expect_str_eq(b.replay->workloads[1].name, "train");
	results_free(&r);
	backtest_free(&b);
}

/*
 * tiny1.yaml: the same history (plus e: created and started 3600, ended
 * 3700 on node-2; f: created 5000, deleted 5100 before it was scheduled) on
 * one node of ONE GPU.
 * History: started a b c d e = 5; queue times 0 (b), 1800 (c), 2400 (d),
 * 0 (e): mean 1050, p95 1800 + 0.85 x 600 = 2310; GPU-hours (12600 + 100) /
 * 3600; peak 3 (b, c and e from 3600 to 3700).
 * Replay (f left out): a 0-3000; b waits to 3000, runs 3600 s to 6600; c
 * waits to 6600 and holds to the horizon; d and e never start.  Started 3;
 * queue 2400 (b), 5400 (c): mean 3900, p95 2400 + 0.95 x 3000 = 5250;
 * GPU-hours (3000 + 3600 + 600) / 3600 = 2; peak 1.
 */
Test(backtest, a_smaller_cluster_shows_as_errors_with_the_evidence)
{
	struct backtest b;
	struct results r;
	run_backtest("tests/fixtures/backtest/tiny1.yaml", &b, &r);
	expect(&r, "all", "pods_started", 5, 3);
	expect(&r, "all", "queue_time_mean_s", 1050, 3900);
	expect(&r, "all", "queue_time_p95_s", 2310, 5250);
	expect(&r, "all", "gpu_hours", 12700.0 / 3600, 2);
	expect(&r, "all", "peak_allocated_gpus", 3, 1);
	const struct backtest_row *p95 = row(&r, "train", "queue_time_p95_s");
	cr_expect_float_eq(p95->error, (5250.0 - 2310) / 2310, 1e-12);
	cr_expect_not(results_backtest_within(p95, 0.25));
	cr_expect(results_backtest_within(row(&r, "all", "pods_started"), 0.40),
		  "-40%% is within a 40%% tolerance");
	cr_expect_not(results_backtest_within(row(&r, "all", "pods_started"), 0.39));
	cr_assert_eq(r.n_gaps, 2);
	cr_expect_eq(r.gaps[0].kind, GAP_DELETED_PENDING);
	cr_expect_eq(r.gaps[0].pods, 1);
	cr_expect_str_eq(r.gaps[0].example, "train-f");
	cr_expect_eq(r.gaps[1].kind, GAP_NODES);
	cr_expect_eq(r.gaps[1].pods, 2, "node-1 and node-2");
	cr_expect_eq(r.gaps[1].figure, 1, "the pool has one node");
	results_free(&r);
	backtest_free(&b);
}

Test(backtest, queue_times_within_five_minutes_pass_whatever_the_ratio)
{
	struct backtest_row q = {"all", "queue_time_p95_s", 10, 290, 28};
	cr_expect(results_backtest_within(&q, 0.25));
	q.simulated = 311;
	q.error = 30.1;
	cr_expect_not(results_backtest_within(&q, 0.25));
	struct backtest_row g = {"all", "gpu_hours", 10, 10.2, 0.02};
	cr_expect(results_backtest_within(&g, 0.25));
	struct backtest_row none = {"all", "queue_time_mean_s", NAN, NAN, NAN};
	cr_expect(results_backtest_within(&none, 0.25), "no pod queued on either side");
	struct backtest_row one = {"all", "queue_time_mean_s", 100, NAN, NAN};
	cr_expect_not(results_backtest_within(&one, 0.25), "no pod started in the replay");
}

Test(backtest, the_command_prints_stores_and_shows_the_figures)
{
	char db[128];
	snprintf(db, sizeof db, "%s/bt.db", dir);
	cr_assert_eq(gpuplan("backtest tests/fixtures/backtest/tiny1.yaml --db %s", db), 0, "%s",
		     out);
	cr_expect(strstr(out, "train  queue_time_p95_s          2310       5250   +127%  over"),
		  "%s", out);
	cr_expect(strstr(out, "  train: pods_started 5 -> 3 (-40%), queue_time_mean_s 1050 -> 3900 "
			      "(+271%), queue_time_p95_s 2310 -> 5250 (+127%)"),
		  "%s", out);
	cr_expect(strstr(out, "pods ran on 2 distinct nodes (node-1, ...) but the pools have 1"),
		  "%s", out);
	cr_expect(strstr(out, "1 pod deleted before it was ever scheduled (e.g. train-f)"), "%s",
		  out);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM backtest WHERE run_id = 1"), 10);
	cr_expect_eq(scratch_query(db,
				   "SELECT round(observed) FROM backtest WHERE scope = 'all' AND "
				   "metric = 'queue_time_p95_s'"),
		     2310);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM runs r JOIN backtest b USING "
				       "(run_id) WHERE r.scenario_sha256 IS NOT NULL"),
		     10, "the run records the twin's hash");
	char html[160];
	snprintf(html, sizeof html, "%s/bt.html", dir);
	char args[400];
	snprintf(args, sizeof args, "report %s --html %s", db, html);
	cr_assert_eq(gpuplan("%s", args), 0, "%s", out);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "grep -c '<tr class=\"over\">' %s", html);
	cr_assert_eq(capture(cmd, out, sizeof out), 0);
	cr_expect_eq(atoi(out), 10, "every figure of tiny1 is past 25%%");
	cr_assert_eq(gpuplan("backtest tests/fixtures/backtest/tiny.yaml --db %s --json", db), 0,
		     "%s", out);
	cr_expect(strstr(out, "\"within_tolerance\": true"), "%s", out);
	cr_expect(strstr(out, "\"could_not_model\": []"), "%s", out);
}

Test(backtest, a_scenario_without_history_is_refused_and_nothing_is_written)
{
	char db[128];
	snprintf(db, sizeof db, "%s/none.db", dir);
	cr_assert_eq(gpuplan("backtest scenarios/quickstart.yaml --db %s", db), 2, "%s", out);
	cr_expect(strstr(out, "scenarios/quickstart.yaml:1:1: error: no history section"), "%s",
		  out);
	cr_assert_eq(
		gpuplan("backtest tests/fixtures/backtest/tiny.yaml --tolerance 0 --db %s", db), 2,
		"%s", out);
	cr_expect(strstr(out, "--tolerance expects a percentage above 0 like 25%, got '0'"), "%s",
		  out);
	struct stat sb;
	cr_expect_neq(stat(db, &sb), 0, "no database was created");
}
