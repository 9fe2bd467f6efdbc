/*
 * test_trace.c - batch job traces in CSV (trace.h): the rows, their order,
 * the summary the scenario keeps, the stream a run reads a long trace with,
 * and the refusals, on small traces worked by hand.
 */
#include "gpuplan/trace.h"

#include "scratch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

TestSuite(trace, .init = scratch_make, .fini = scratch_remove);

static char path[128];
static struct trace_job *rows;
static size_t n;
static struct trace_summary sum;
static struct gp_err err;
static const struct trace_limits lim = {.max_gpus = 8, .max_rows = 100000};

static void write_trace(const char *text)
{
	snprintf(path, sizeof path, "%s/t.csv", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static int read_text(const char *text)
{
	write_trace(text);
	return trace_read_csv(path, (struct srcloc){"s.yaml", 4, 9}, &lim, &rows, &n, &sum, &err);
}

/* Header, comments and blank lines skipped; rows sorted by submit with ties
 * in file order: submit 0 (line 5), 5 (line 7), 10 (line 3), 10 (line 6).
 * Summary: widest 4 GPUs, durations 60 + 100 + 3600 + 30 = 3790 s, submits 0
 * to 10 s, shapes first seen in submit order: 1 GPU x1, 4 x1, 2 x2. */
Test(trace, rows_come_back_sorted_with_ties_in_file_order)
{
	int rc = read_text("submit_s,duration_s,gpus,deadline_s\n"
			   "# a comment\n"
			   "10,3600,2,7200\n"
			   "\n"
			   "0,60,1, # no deadline\n"
			   "10,30,2,\n"
			   "5,100,4,100\n");
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(n, 4);
	cr_assert_not_null(rows, "a short trace is held");
	int32_t lines[] = {5, 7, 3, 6};
	sim_time submit[] = {0, 5, 10, 10};
	sim_time duration[] = {60, 100, 3600, 30};
	int32_t gpus[] = {1, 4, 2, 2};
	sim_time deadline[] = {SIM_NEVER, 100 * SIM_SECOND, 7200 * SIM_SECOND, SIM_NEVER};
	for (size_t i = 0; i < 4; i++) {
		cr_expect_eq(rows[i].line, lines[i], "row %zu", i);
		cr_expect_eq(rows[i].submit, submit[i] * SIM_SECOND, "row %zu", i);
		cr_expect_eq(rows[i].duration, duration[i] * SIM_SECOND, "row %zu", i);
		cr_expect_eq(rows[i].gpus, gpus[i], "row %zu", i);
		cr_expect_eq(rows[i].deadline, deadline[i], "row %zu", i);
		cr_expect_eq(rows[i].trace_queue, SIM_NEVER, "row %zu", i);
	}
	cr_expect_eq(sum.max_gpus, 4);
	cr_expect_float_eq(sum.duration_s, 3790, 1e-9);
	cr_expect_eq(sum.first_submit, 0);
	cr_expect_eq(sum.last_submit, 10 * SIM_SECOND);
	cr_assert_eq(sum.n_shapes, 3);
	struct trace_shape want[] = {{1, 1}, {4, 1}, {2, 2}};
	for (size_t i = 0; i < 3; i++) {
		cr_expect_eq(sum.shapes[i].gpus, want[i].gpus, "shape %zu", i);
		cr_expect_eq(sum.shapes[i].jobs, want[i].jobs, "shape %zu", i);
	}
	free(rows);
	trace_summary_free(&sum);
}

/* A sorted trace longer than TRACE_HELD_ROWS is not kept: the run streams it.
 * 5,000 rows, row i at i s for 60 s on 1 + i % 2 GPUs: durations 300,000 s,
 * submits 0 to 4,999 s, shapes 1 GPU x2,500 then 2 x2,500; the stream gives
 * the same rows back and ends at 5,000. */
Test(trace, a_long_sorted_trace_is_streamed_not_held)
{
	size_t cap = 5000 * 24 + 1, len = 0;
	char *text = malloc(cap);
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(text + len, cap - len, "%d,60,%d\n", i, 1 + i % 2);
	int rc = read_text(text);
	free(text);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(n, 5000);
	cr_assert_null(rows);
	cr_expect_float_eq(sum.duration_s, 300000, 1e-9);
	cr_expect_eq(sum.first_submit, 0);
	cr_expect_eq(sum.last_submit, 4999 * SIM_SECOND);
	cr_assert_eq(sum.n_shapes, 2);
	cr_expect_eq(sum.shapes[0].gpus, 1);
	cr_expect_eq(sum.shapes[0].jobs, 2500);
	cr_expect_eq(sum.shapes[1].gpus, 2);
	cr_expect_eq(sum.shapes[1].jobs, 2500);

	struct trace_stream s;
	cr_assert_eq(trace_stream_open(&s, path, &lim, n, &sum.file, &err), GP_OK, "%s", err.msg);
	struct trace_job row;
	bool got;
	size_t i = 0;
	while (!(rc = trace_stream_next(&s, &row, &got, &err)) && got) {
		cr_assert_eq(row.submit, (sim_time)i * SIM_SECOND, "row %zu", i);
		cr_assert_eq(row.gpus, 1 + (int32_t)(i % 2), "row %zu", i);
		cr_assert_eq(row.line, (int32_t)i + 1, "row %zu", i);
		i++;
	}
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(i, 5000);
	trace_stream_close(&s);
	trace_summary_free(&sum);
}

/* A trace that changed after the scenario read it is refused at reopening
 * (here one more row: another size). */
Test(trace, a_trace_changed_since_it_was_read_is_refused)
{
	cr_assert_eq(read_text("0,60,1\n1,60,1\n"), GP_OK, "%s", err.msg);
	free(rows);
	FILE *f = fopen(path, "a");
	fputs("2,60,1\n", f);
	fclose(f);
	struct trace_stream s;
	cr_assert_eq(trace_stream_open(&s, path, &lim, n, &sum.file, &err), GP_ERUNTIME);
	cr_assert_not_null(strstr(err.msg, "the trace changed since the scenario was read "
					   "(another size or modification time)"),
			   "%s", err.msg);
	trace_stream_close(&s);
	trace_summary_free(&sum);
}

/* Each bad row is named by file and line, with what was expected. */
Test(trace, bad_rows_name_the_line_and_what_was_expected)
{
	char want[256];
	cr_assert_eq(read_text("0,60,1\n5,60,9\n"), GP_EINPUT);
	snprintf(want, sizeof want, "%s:2: error: no node has 9 GPUs; the largest pool node has 8",
		 path);
	cr_assert_str_eq(err.msg, want);

	cr_assert_eq(read_text("0,0,1\n"), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: duration_s '0' is not above 0"), "%s",
			   err.msg);

	cr_assert_eq(read_text("0,60,0\n"), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: gpus '0' is below 1"), "%s", err.msg);

	cr_assert_eq(read_text("100,60,1,50\n"), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: deadline_s '50' is before submit_s '100'"),
			   "%s", err.msg);

	cr_assert_eq(read_text("0,60,1\n0,60\n"), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":2: error: expected 3 columns"), "%s", err.msg);

	cr_assert_eq(read_text("-1,60,1\n"), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: negative submit_s '-1'"), "%s", err.msg);

	cr_assert_eq(read_text("# only a comment\n"), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, "the trace has no jobs"), "%s", err.msg);

	cr_assert_eq(trace_read_csv("/nonexistent/t.csv", (struct srcloc){"s.yaml", 4, 9}, &lim,
				    &rows, &n, &sum, &err),
		     GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, "s.yaml:4:9: error: cannot read trace /nonexistent"),
			   "%s", err.msg);
}

/* The job limit: the third row past max_rows 2 is refused at its line. */
Test(trace, more_jobs_than_the_limit_are_refused)
{
	const struct trace_limits two = {.max_gpus = 8, .max_rows = 2};
	write_trace("0,60,1\n1,60,1\n2,60,1\n");
	cr_assert_eq(
		trace_read_csv(path, (struct srcloc){"s.yaml", 4, 9}, &two, &rows, &n, &sum, &err),
		GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":3: error: the trace has more than 2 jobs"), "%s",
			   err.msg);
}
