/*
 * test_search.c - `gpuplan search` on monotone cases whose answers are known
 * by hand, its exit codes, and the probes it records.
 */
#include "gpuplan/search.h"

#include <criterion/criterion.h>

#include "scratch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char out[16384];

TestSuite(search, .init = scratch_make, .fini = scratch_remove);

/* Runs bin/gpuplan search ARGS --db DIR/s.db; returns the exit code, output in out. */
static int search(const char *args)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "bin/gpuplan search %s --db %s/s.db", args, dir);
	return capture(cmd, out, sizeof out);
}

static const char *last_line(void)
{
	size_t n = strlen(out);
	while (n && out[n - 1] == '\n')
		out[--n] = '\0';
	const char *nl = strrchr(out, '\n');
	return nl ? nl + 1 : out;
}

static long long count(const char *sql)
{
	char path[128];
	snprintf(path, sizeof path, "%s/s.db", dir);
	return scratch_query(path, sql);
}

#define ONE_HOUR_WINDOW                                                   \
	"--set 'pools.batch.windows=[{from: \"12:00\", to: \"13:00\"}]' " \
	"--set 'workloads.eval.deadline=\"13:00\"'"

/* Four 2-GPU one-hour jobs due at 13:00 in a 12:00-13:00 window need 8 GPUs: 2 nodes. */
Test(search, min_finds_the_smallest_pool_that_meets_every_deadline)
{
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 8 --min "
		       "--until 'deadline_met_pct >= 100' " ONE_HOUR_WINDOW),
		0, "%s", out);
	cr_assert_str_eq(last_line(), "pools.batch.nodes=2");
	long long probes = count("SELECT count(*) FROM runs");
	cr_assert_geq(probes, 3);
	cr_assert_eq(count("SELECT count(*) FROM params WHERE key = 'pools.batch.nodes'"), probes,
		     "every probe records its value");
}

/* 12:00-17:00 on 4 GPUs runs two 2-GPU jobs at a time: five waves, 10 jobs. */
Test(search, max_finds_the_most_jobs_the_window_holds)
{
	cr_assert_eq(search("scenarios/eval-window.yaml --vary workloads.eval.count --lo 1 --hi 40 "
			    "--max --until 'eval.deadline_met_pct >= 100'"),
		     0, "%s", out);
	cr_assert_str_eq(last_line(), "workloads.eval.count=10");
}

/* The search records its answer, and `report` without --run shows the
 * answer's run, not the last probe: bisecting 1..40 for 10 probes 11 (too
 * many) last. */
Test(search, report_defaults_to_the_answer_not_the_last_probe)
{
	cr_assert_eq(search("scenarios/eval-window.yaml --vary workloads.eval.count --lo 1 --hi 40 "
			    "--max --until 'eval.deadline_met_pct >= 100'"),
		     0, "%s", out);
	cr_assert_str_eq(last_line(), "workloads.eval.count=10");
	long long answer =
		count("SELECT run_id FROM searches WHERE key = 'workloads.eval.count' "
		      "AND answer = '10' AND condition = 'eval.deadline_met_pct >= 100' "
		      "AND first_run_id = 1 AND last_run_id = (SELECT max(run_id) FROM runs)");
	cr_assert_gt(answer, 0, "one searches row");
	char sql[256];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM params WHERE run_id = %lld AND "
		 "key = 'workloads.eval.count' AND value = '10'",
		 answer);
	cr_assert_eq(count(sql), 1, "the row names the answer's run");
	cr_assert_lt(answer, count("SELECT max(run_id) FROM runs"), "a failed probe came last");
	char path[128];
	snprintf(path, sizeof path, "%s/s.db", dir);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store_run run;
	cr_assert_eq(store_open_read(path, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_run_info(st, 0, &run, &err), GP_OK, "%s", err.msg);
	store_close(st);
	cr_expect_eq(run.run_id, answer);
	/* A run appended later is the latest again. */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "bin/gpuplan run scenarios/eval-window.yaml --db %s --quiet",
		 path);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_assert_eq(store_open_read(path, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_run_info(st, 0, &run, &err), GP_OK, "%s", err.msg);
	store_close(st);
	cr_expect_eq(run.run_id, count("SELECT max(run_id) FROM runs"));
}

/* Two waves fit 12:00-17:00 while 2 d <= 5 h: the longest duration is 150 minutes. */
Test(search, max_over_a_real_value_with_a_unit)
{
	cr_assert_eq(search("scenarios/eval-window.yaml --vary workloads.eval.duration --lo 10m "
			    "--hi 600m --max --tolerance 0.5 --until 'deadline_met_pct >= 100'"),
		     0, "%s", out);
	double minutes;
	cr_assert_eq(sscanf(last_line(), "workloads.eval.duration=%lfm", &minutes), 1, "%s", out);
	cr_assert(minutes <= 150 && minutes > 149.5, "%f", minutes);
}

Test(search, every_seed_must_meet_the_condition)
{
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 4 --min "
		       "--seeds 3 --until 'deadline_met_pct >= 100' " ONE_HOUR_WINDOW),
		0, "%s", out);
	cr_assert_eq(count("SELECT count(DISTINCT seed) FROM runs"), 3);
}

Test(search, no_value_in_range_exits_3)
{
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 2 --min "
		       "--until 'queue_time_max_s < 0'"),
		3, "%s", out);
	cr_assert_str_eq(last_line(),
			 "no value of pools.batch.nodes in [1, 2] meets 'queue_time_max_s < 0'");
}

Test(search, bad_input_exits_2_before_any_run)
{
	cr_assert_eq(search("scenarios/eval-window.yaml --vary scheduler.order --lo 1 --hi 3 --max "
			    "--until 'deadline_met_pct >= 100'"),
		     2);
	cr_assert(strstr(out, "--set scheduler.order=1:1:17: error: unknown order '1'"), "%s", out);
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo one --hi 3 --min "
		       "--until 'deadline_met_pct >= 100'"),
		2);
	cr_assert(strstr(out, "is not numeric"), "%s", out);
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 4 --hi 3 --min "
		       "--until 'deadline_met_pct >= 100'"),
		2);
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 3 --min "
		       "--until 'deadline_met_pct about 100'"),
		2);
	cr_assert_eq(search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 3 "
			    "--until 'deadline_met_pct >= 100'"),
		     2, "needs --min or --max");
}

/* Issue 14: an unknown metric used to run every probe and fail after the
 * first; it is refused before anything runs, with the closest name. */
Test(search, an_unknown_metric_fails_before_any_probe_with_the_closest_name)
{
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 3 --min "
		       "--until 'deadline_met >= 100'"),
		2);
	cr_expect(strstr(out, "unknown metric 'deadline_met'; did you mean 'deadline_met_pct'?"),
		  "%s", out);
	char path[128];
	snprintf(path, sizeof path, "%s/s.db", dir);
	FILE *f = fopen(path, "r");
	cr_expect_null(f, "no database was written");
	if (f)
		fclose(f);
	cr_assert_eq(
		search("scenarios/eval-window.yaml --vary pools.batch.nodes --lo 1 --hi 3 --min "
		       "--until 'eval.ttft_p99 <= 2'"),
		2);
	cr_expect(strstr(out, "did you mean 'ttft_p99_s'?"), "%s", out);
}

Test(search, parses_conditions)
{
	struct search_condition c;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(search_parse_condition("chat.ttft_p99_s <= 2", &c, &err), GP_OK);
	cr_assert_str_eq(c.scope, "chat");
	cr_assert_eq(c.metric, METRIC_TTFT_P99_S);
	cr_assert_eq(c.op, OP_LE);
	cr_assert_float_eq(c.value, 2, 1e-12);
	cr_assert_eq(search_parse_condition("queue_time_p95_s<600", &c, &err), GP_OK);
	cr_assert_str_eq(c.scope, "all");
	cr_assert_eq(c.op, OP_LT);
	cr_assert_eq(search_parse_condition("x >= ", &c, &err), GP_EINPUT);
	/* "=>" is an operator, unknown: it said "unknown metric 'deadline_met_pct ='" */
	cr_assert_eq(search_parse_condition("deadline_met_pct => 100", &c, &err), GP_EINPUT);
	cr_assert_str_eq(err.msg, "--until 'deadline_met_pct => 100': unknown operator '=>'; "
				  "expected one of <= >= < > == !=");
	cr_assert_eq(search_parse_condition("slo_met = 1", &c, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "unknown operator '='"), "%s", err.msg);
}

/* Bounds in two duration units bisect in seconds: 30s..10m is 30..600 s. */
Test(search, duration_bounds_in_two_units_become_seconds)
{
	struct search_spec s = {0};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(search_parse_value("30s", &s.lo, &err), GP_OK);
	cr_assert_eq(search_parse_value("10m", &s.hi, &err), GP_OK);
	cr_assert_eq(search_check_range(&s, &err), GP_OK, "%s", err.msg);
	cr_expect_float_eq(s.lo.number, 30, 0);
	cr_expect_float_eq(s.hi.number, 600, 0);
	cr_expect_str_eq(s.lo.suffix, "s");
	cr_expect(s.integer);
	cr_assert_eq(search_parse_value("2/s", &s.lo, &err), GP_OK);
	cr_assert_eq(search_parse_value("10m", &s.hi, &err), GP_OK);
	cr_expect_eq(search_check_range(&s, &err), GP_EINPUT, "a rate and a duration do not mix");
}

/* Probes run ahead on a second thread (search_ahead.c) are written only
 * when the walk takes them, in its order: the output and every row are the
 * ones one thread writes.  The first-cut walk at 60 and 150 requests/s on
 * A100s guesses x - 1 after each probe and is wrong three times (runs
 * cancelled under way or dropped finished); the bisection of the window's
 * jobs guesses that each probe holds. */
Test(search, probes_run_ahead_write_what_one_thread_writes)
{
	static const char *const cases[] = {
		"scenarios/inference.yaml --vary workloads.chat.replicas --lo 1 --hi 64 --min "
		"--until 'ttft_p99_s <= 0.5' --set workloads.chat.requests.rate=60/s "
		"--set workloads.chat.requests.count=4000 --set pools.h100.nodes=8 "
		"--set pools.h100.gpus_per_node=8 --set pools.h100.gpu=A100-80GB",
		"scenarios/inference.yaml --vary workloads.chat.replicas --lo 1 --hi 64 --min "
		"--until 'ttft_p99_s <= 0.5' --set workloads.chat.requests.rate=150/s "
		"--set workloads.chat.requests.count=4000 --set pools.h100.nodes=8 "
		"--set pools.h100.gpus_per_node=8 --set pools.h100.gpu=A100-80GB",
		"scenarios/eval-window.yaml --vary workloads.eval.count --lo 1 --hi 40 --max "
		"--until 'eval.deadline_met_pct >= 100'",
	};
	static const char *const jobs[] = {"--jobs 1", "--jobs 2", "", "GPUPLAN_THREADS=1"};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char outs[4][4096], cmd[4096];
		for (int i = 0; i < 4; i++) {
			bool env = strchr(jobs[i], '=') != NULL;
			snprintf(cmd, sizeof cmd, "%s bin/gpuplan search %s --db %s/c%zu-%d.db %s",
				 env ? jobs[i] : "", cases[c], dir, c, i, env ? "" : jobs[i]);
			cr_assert_eq(capture(cmd, outs[i], sizeof outs[i]), 0, "%s: %s", cmd,
				     outs[i]);
			if (i)
				cr_assert_str_eq(outs[i], outs[0], "%s printed other probes",
						 jobs[i]);
		}
		cr_assert(strstr(outs[0], "probe "), "%s", outs[0]);
		for (int i = 1; i < 4; i++) {
			snprintf(
				cmd, sizeof cmd,
				"cd %s && for t in searches metrics params job_rows timeseries "
				"allocations pending_reasons; do sqlite3 c%zu-0.db \"select * from "
				"$t\" > a.$t && sqlite3 c%zu-%d.db \"select * from $t\" > b.$t && "
				"cmp -s a.$t b.$t || { echo \"$t differs\"; exit 1; }; done && "
				"q='select run_id, name, seed, events, sim_seconds, status from runs' "
				"&& sqlite3 c%zu-0.db \"$q\" > a.runs && sqlite3 c%zu-%d.db \"$q\" > "
				"b.runs && cmp a.runs b.runs && test $(wc -l < a.runs) -ge 4",
				dir, c, c, i, c, c, i);
			cr_assert_eq(capture(cmd, out, sizeof out), 0, "case %zu, %s: %s", c,
				     jobs[i], out);
		}
	}
}
