/*
 * test_limits.c - inputs at the edges of what gpuplan can represent are
 * refused up front with a located message and exit 2, or run; they never
 * abort, hang or take quadratic time.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuplan/sweep.h"

TestSuite(limits, .init = scratch_make, .fini = scratch_remove);

static double seconds_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* An open stream at a tiny rate draws gaps past the end of the clock: those
 * arrivals never come, and the run ends normally (it aborted in the engine). */
Test(limits, a_tiny_rate_with_a_horizon_runs_with_no_arrival)
{
	char path[128], cmd[512], out[8192];
	snprintf(path, sizeof path, "%s/open.yaml", dir);
	write_file(path, "name: open-tiny\nhorizon: 2h\npools:\n"
			 "  - {name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 8}\n"
			 "workloads:\n"
			 "  - {name: w, arrival: {process: poisson, rate: 1e-10/h}, gpus: 1, "
			 "duration: 1h}\n");
	snprintf(cmd, sizeof cmd, "bin/gpuplan run %s --quiet --db %s/o.db", path, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
}

/* libyaml loads a document nested N deep in O(N^2): 100,000 levels through
 * --set took 17 s.  The depth is refused from the event stream instead. */
Test(limits, deep_nesting_through_set_is_refused_at_once)
{
	char path[128], cmd[512], out[4096];
	snprintf(path, sizeof path, "%s/deep", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	for (int i = 0; i < 100000; i++)
		fputc('[', f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan check scenarios/quickstart.yaml --set \"name=$(cat %s)\"", path);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect_lt(seconds_since(&t0), 2.0, "took %.1f s", seconds_since(&t0));
	cr_expect(strstr(out, "nesting deeper than 128 levels"), "%s", out);
}

/* 300,000 seeds load in seconds: the repeat check sorts instead of comparing
 * every pair (4.5e10 comparisons; the documented maximum of a million took
 * minutes), and only the first seed of a combination is loaded. */
Test(limits, many_seeds_load_quickly, .timeout = 120)
{
	struct sweep *sw = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(sweep_load("tests/fixtures/sweep/many-seeds.yaml", &sw, &err), GP_OK, "%s",
		     err.msg);
	cr_expect_eq(sw->n_points, 300000);
	cr_expect_lt(seconds_since(&t0), 30.0, "took %.1f s", seconds_since(&t0));
	sweep_free(sw);
}

/* Past the limit the product is refused, not freed half-built (a segfault). */
Test(limits, a_sweep_over_the_point_limit_is_refused)
{
	struct sweep *sw = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(sweep_load("tests/fixtures/sweep/over-limit.yaml", &sw, &err), GP_EINPUT);
	cr_expect_null(sw);
	cr_expect(strstr(err.msg, "more than 1000000 points"), "%s", err.msg);
	char cmd[512], out[4096];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan sweep tests/fixtures/sweep/over-limit.yaml --db %s/s.db", dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
}

/* Inputs that are not regular files: /dev/zero never ends (it read until out
 * of memory), a FIFO with no writer blocked forever.  Both are refused. */
Test(limits, special_files_are_refused_as_inputs, .timeout = 30)
{
	char fifo[128], cmd[1024], out[4096], trace[160];
	snprintf(fifo, sizeof fifo, "%s/fifo.yaml", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	const char *scenarios[] = {"/dev/zero", fifo, "/tmp"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(cmd, sizeof cmd, "timeout 10 bin/gpuplan check %s", scenarios[i]);
		cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s: %s", scenarios[i], out);
		cr_expect(strstr(out, "not a regular file") || strstr(out, "a folder"), "%s", out);
	}
	/* a trace that is a device */
	snprintf(trace, sizeof trace, "%s/trace.yaml", dir);
	write_file(trace,
		   "name: t\npools:\n  - {name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 8}\n"
		   "workloads:\n  - {name: w, arrival: {trace: /dev/zero, format: csv}}\n");
	snprintf(cmd, sizeof cmd, "timeout 10 bin/gpuplan check %s", trace);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(strstr(out, "not a regular file"), "%s", out);
	/* a sweep whose base is a FIFO */
	snprintf(trace, sizeof trace, "%s/sweep.yaml", dir);
	snprintf(cmd, sizeof cmd, "base: %s\nseeds: 2\n", fifo);
	write_file(trace, cmd);
	snprintf(cmd, sizeof cmd, "timeout 10 bin/gpuplan sweep %s --db %s/s.db", trace, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
}

/* Spreadsheets save CSV with a UTF-8 byte order mark before the header; it
 * was read as part of the first column name ("unknown header"). */
Test(limits, a_byte_order_mark_before_a_csv_header_is_accepted)
{
	char trace[128], scen[128], cmd[512], out[8192];
	snprintf(trace, sizeof trace, "%s/jobs.csv", dir);
	write_file(trace, "\xEF\xBB\xBFsubmit_s,duration_s,gpus\n0,3600,1\n60,1800,2\n");
	snprintf(scen, sizeof scen, "%s/s.yaml", dir);
	write_file(scen,
		   "name: bom\npools:\n  - {name: p, nodes: 1, gpu: A100-80GB, gpus_per_node: 8}\n"
		   "workloads:\n  - {name: w, arrival: {trace: jobs.csv, format: csv}}\n");
	snprintf(cmd, sizeof cmd, "bin/gpuplan run %s --db %s/b.db", scen, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
}

/* A --db path the system cannot open is refused before any folder is made
 * (3,000 levels created 2,000 folders on the way to failing). */
Test(limits, an_overlong_db_path_creates_no_folder)
{
	char cmd[16384], out[4096];
	int n = snprintf(cmd, sizeof cmd,
			 "bin/gpuplan run scenarios/quickstart.yaml --quiet --db %s/", dir);
	for (int i = 0; i < 3000 && n < (int)sizeof cmd - 16; i++)
		n += snprintf(cmd + n, sizeof cmd - (size_t)n, "a/");
	snprintf(cmd + n, sizeof cmd - (size_t)n, "r.db");
	cr_expect_eq(capture(cmd, out, sizeof out), 1, "%s", out);
	char probe[256];
	snprintf(probe, sizeof probe, "%s/a", dir);
	cr_expect_neq(access(probe, F_OK), 0, "folders were created");
}

/* A results file past `ulimit -f` ends with a message and exit 1, not a
 * silent death by SIGXFSZ. */
Test(limits, a_file_size_limit_is_reported_not_fatal)
{
	char cmd[512], out[8192];
	snprintf(cmd, sizeof cmd,
		 "sh -c 'ulimit -f 64; bin/gpuplan run scenarios/quickstart.yaml "
		 "--quiet --db %s/f.db'",
		 dir);
	int rc = capture(cmd, out, sizeof out);
	cr_expect_eq(rc, 1, "exit %d: %s", rc, out);
	cr_expect(strstr(out, "error"), "%s", out);
}

/* output.step: 1ms over a long run grew memory and the database without
 * bound (4.2 GB); the windows it would make are counted up front. */
Test(limits, an_explicit_step_past_the_window_limit_is_refused)
{
	char cmd[512], out[8192];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run scenarios/quickstart.yaml --db %s/w.db "
		 "--set output.step=1ms --set horizon=1000h",
		 dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(strstr(out, "3.6e+09 timeseries windows per scope") &&
			  strstr(out, "GPUPLAN_MAX_WINDOWS"),
		  "%s", out);
	char db[160];
	snprintf(db, sizeof db, "%s/w.db", dir);
	cr_expect_neq(access(db, F_OK), 0, "a refused run created its database");
}

/* Out of memory is exit 1 with the documented message, not abort (134). */
Test(limits, out_of_memory_exits_1_with_a_message, .timeout = 60)
{
	char cmd[512], out[8192];
	snprintf(cmd, sizeof cmd,
		 "sh -c 'ulimit -v 400000; bin/gpuplan run scenarios/quickstart.yaml "
		 "--quiet --db %s/m.db --set workloads.eval.count=40000000 --set output.step=7d'",
		 dir);
	int rc = capture(cmd, out, sizeof out);
	cr_expect_eq(rc, 1, "exit %d: %s", rc, out);
	cr_expect(strstr(out, "gpuplan: error: out of memory"), "%s", out);
}

/* Scopes x windows had no limit: 5 workloads at step: 1m over 600 days took
 * 1.7 GB, 5,000 one-job workloads without a step 3 GB.  The rows a run would
 * keep are estimated at load (check says so), with the figure, the step
 * that would do, and the key that raises the limit. */
Test(limits, timeseries_rows_past_the_limit_are_refused_at_check)
{
	char cmd[512], out[8192];
	snprintf(cmd, sizeof cmd,
		 "GPUPLAN_MAX_WINDOWS=100000000 bin/gpuplan check scenarios/quickstart.yaml --set "
		 "output.step=1m --set horizon=28800h");
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "the run would keep ") &&
			  strstr(out, "timeseries and allocation rows") &&
			  strstr(out, "above the limit of 8000000; expected an output.step of at "
				      "least ") &&
			  strstr(out, "GPUPLAN_MAX_ROWS"),
		  "%s", out);
	/* raised, it loads */
	snprintf(cmd, sizeof cmd,
		 "GPUPLAN_MAX_ROWS=100000000 GPUPLAN_MAX_WINDOWS=100000000 bin/gpuplan check "
		 "scenarios/quickstart.yaml --set output.step=1m --set horizon=28800h");
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	/* 5,000 workloads without a step: 2,000 windows each */
	char path[256];
	snprintf(path, sizeof path, "%s/many.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("name: many\npools:\n  - {name: p, nodes: 1, gpu: L4, gpus_per_node: 8}\n"
	      "workloads:\n",
	      f);
	for (int i = 0; i < 5000; i++)
		fprintf(f, "  - {name: w%d, gpus: 1, duration: 1h, arrival: {at: \"00:00\"}}\n", i);
	fclose(f);
	snprintf(cmd, sizeof cmd, "bin/gpuplan check %s", path);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "5002 scopes x 2e+03 windows, and 5000 workloads' allocations"), "%s",
		  out);
}

/* 20 pools of 10^6 nodes passed check, and run relied on malloc failing.
 * The node slots of all pools are counted at load (a pool holds at most
 * 10^6; two of 600,000 are over). */
Test(limits, total_nodes_past_the_limit_are_refused_at_check)
{
	char out[8192];
#define TWO_BIG                                                                        \
	"--set 'pools.+={name: big, nodes: 600000, gpu: L4, gpus_per_node: 8}' --set " \
	"'pools.+={name: big2, nodes: 600000, gpu: L4, gpus_per_node: 8}'"
	cr_assert_eq(
		capture("bin/gpuplan check scenarios/quickstart.yaml " TWO_BIG, out, sizeof out), 2,
		"%s", out);
	cr_assert(strstr(out, "nodes in all by here, above the limit of 1000000") &&
			  strstr(out, "GPUPLAN_MAX_NODES"),
		  "%s", out);
	cr_assert_eq(
		capture("GPUPLAN_MAX_NODES=2000000 bin/gpuplan check scenarios/quickstart.yaml " TWO_BIG,
			out, sizeof out),
		0, "%s", out);
}
