/*
 * test_requests.c - the Azure LLM trace reader and the tile period
 * (requests.h), on small traces whose rows are worked by hand.  The layout is
 * the Azure LLM inference trace's (Azure/AzurePublicDataset,
 * AzureLLMInferenceDataset2023.md): TIMESTAMP,ContextTokens,GeneratedTokens.
 */
#include "gpuplan/requests.h"

#include "scratch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

TestSuite(requests, .init = scratch_make, .fini = scratch_remove);

static char path[128];
static struct request_row *rows;
static size_t n;
static struct gp_err err;

/* Writes text to a trace in the test's folder and reads it. */
static int read_text(const char *text, int64_t max_rows, sim_time max_span)
{
	snprintf(path, sizeof path, "%s/t.csv", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	rows = NULL;
	n = 0;
	struct srcloc ref = {"s.yaml", 7, 12};
	return requests_read_azure(path, ref, max_rows, max_span, &rows, &n, &err);
}

#define YEAR (365 * SIM_DAY)

/* CRLF lines, the header, a last line without its end.  Times from the first
 * row: 18:17:04.4799600 - 18:17:03.9799600 = 0.5 s; 18:17:06 - 18:17:03.97996
 * = 2.02004 s = 2,020,040 us.  0 generated tokens count 1. */
Test(requests, reads_the_azure_layout_relative_to_the_first_request)
{
	int rc = read_text("TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
			   "2023-11-16 18:17:03.9799600,100,20\r\n"
			   "2023-11-16 18:17:04.4799600,7,0\r\n"
			   "2023-11-16 18:17:06,1,3",
			   100, YEAR);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(n, 3);
	cr_assert_eq(rows[0].at, 0);
	cr_assert_eq(rows[0].prompt, 100);
	cr_assert_eq(rows[0].output, 20);
	cr_assert_eq(rows[1].at, 500000);
	cr_assert_eq(rows[1].prompt, 7);
	cr_assert_eq(rows[1].output, 1, "the prefill still returns one token");
	cr_assert_eq(rows[2].at, 2020040);
	cr_assert_eq(rows[2].output, 3);
	free(rows);
}

/* Rows out of order are sorted by time, ties kept in file order: 10 s
 * (prompt 1), 5 s (2), 10 s (3) become 5 s (2), 10 s (1), 10 s (3), at 0, 5 s,
 * 5 s from the earliest.  No header: the first cell is a digit. */
Test(requests, rows_out_of_order_are_sorted_ties_in_file_order)
{
	int rc = read_text("2023-11-16 00:00:10,1,1\n"
			   "2023-11-16 00:00:05,2,1\n"
			   "2023-11-16 00:00:10,3,1\n",
			   100, YEAR);
	cr_assert_eq(rc, GP_OK, "%s", err.msg);
	cr_assert_eq(n, 3);
	int32_t prompts[] = {2, 1, 3};
	sim_time at[] = {0, 5 * SIM_SECOND, 5 * SIM_SECOND};
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(rows[i].prompt, prompts[i], "row %zu", i);
		cr_assert_eq(rows[i].at, at[i], "row %zu", i);
	}
	free(rows);
}

/* Period = span + mean gap: rows at 0, 2 s, 4 s: 4 s + 4 s / 2 = 6 s; 0, 1 s,
 * 9 s: 9 s + 4.5 s = 13.5 s; one row: 1 s; two at the same time: 0 + 1 us. */
Test(requests, the_tile_period_is_the_span_and_one_mean_gap)
{
	struct request_row even[] = {{0, 1, 1}, {2 * SIM_SECOND, 1, 1}, {4 * SIM_SECOND, 1, 1}};
	cr_assert_eq(requests_period(even, 3), 6 * SIM_SECOND);
	struct request_row uneven[] = {{0, 1, 1}, {SIM_SECOND, 1, 1}, {9 * SIM_SECOND, 1, 1}};
	cr_assert_eq(requests_period(uneven, 3), 13 * SIM_SECOND + SIM_SECOND / 2);
	cr_assert_eq(requests_period(even, 1), SIM_SECOND);
	struct request_row same[] = {{0, 1, 1}, {0, 1, 1}};
	cr_assert_eq(requests_period(same, 2), 1);
}

/* Each bad row is named by file and line with what was expected. */
Test(requests, bad_rows_name_the_line_and_what_was_expected)
{
	char want[256];
	cr_assert_eq(read_text("TIMESTAMP,ContextTokens,GeneratedTokens\n"
			       "2023-11-16 00:00:10,0,1\n",
			       100, YEAR),
		     GP_EINPUT);
	snprintf(want, sizeof want,
		 "%s:2: error: invalid ContextTokens '0'; expected a whole number of tokens "
		 "from 1 to 10000000",
		 path);
	cr_assert_str_eq(err.msg, want);

	cr_assert_eq(read_text("2023-11-16 00:00:10,5\n", 100, YEAR), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: expected 3 columns"), "%s", err.msg);

	cr_assert_eq(read_text("2023-02-30 00:00:10,5,5\n", 100, YEAR), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: invalid TIMESTAMP '2023-02-30 00:00:10'"),
			   "%s", err.msg);

	cr_assert_eq(read_text("Time,In,Out\n", 100, YEAR), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":1: error: unknown header"), "%s", err.msg);

	cr_assert_eq(read_text("TIMESTAMP,ContextTokens,GeneratedTokens\n", 100, YEAR), GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, "error: no requests"), "%s", err.msg);
}

/* The request limit: a third row past max_rows 2 is refused at line 3. */
Test(requests, more_rows_than_the_limit_are_refused_at_the_row_past_it)
{
	cr_assert_eq(read_text("2023-11-16 00:00:01,1,1\n"
			       "2023-11-16 00:00:02,1,1\n"
			       "2023-11-16 00:00:03,1,1\n",
			       2, YEAR),
		     GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":3: error: more than 2 requests"), "%s", err.msg);
}

/* The span limit names the row that widens it and the row at the other end:
 * line 2 is 2 years after line 1, the limit 1 year. */
Test(requests, a_trace_longer_than_the_span_limit_is_refused)
{
	cr_assert_eq(read_text("2020-01-01 00:00:00,1,1\n"
			       "2022-01-01 00:00:00,1,1\n",
			       100, YEAR),
		     GP_EINPUT);
	cr_assert_not_null(strstr(err.msg, ":2: error: TIMESTAMP '2022-01-01 00:00:00' is 2 years "
					   "after the request on line 1; expected a trace that "
					   "spans at most 1 years"),
			   "%s", err.msg);
}

/* A trace that cannot be opened is reported where the scenario names it. */
Test(requests, a_missing_trace_is_reported_at_the_scenario)
{
	struct srcloc ref = {"s.yaml", 7, 12};
	int rc = requests_read_azure("/nonexistent/t.csv", ref, 100, YEAR, &rows, &n, &err);
	cr_assert_eq(rc, GP_EINPUT);
	cr_assert_not_null(
		strstr(err.msg, "s.yaml:7:12: error: cannot read trace /nonexistent/t.csv"), "%s",
		err.msg);
}

/* The rows of the last trace read are kept: the same file again is a copy
 * of them, the caller's own; a file that changed is read again. */
Test(requests, a_trace_read_again_is_the_same_rows_and_a_changed_one_is_read_again)
{
	const char *text = "2023-11-16 18:17:03.9799600,100,20\n2023-11-16 18:17:04,7,3\n";
	cr_assert_eq(read_text(text, 100, YEAR), GP_OK, "%s", err.msg);
	struct request_row *first = rows;
	size_t n_first = n;
	struct srcloc ref = {"s.yaml", 7, 12};
	cr_assert_eq(requests_read_azure(path, ref, 100, YEAR, &rows, &n, &err), GP_OK);
	cr_assert_neq(rows, first, "a copy of its own for each caller");
	cr_assert_eq(n, n_first);
	cr_assert_eq(memcmp(rows, first, n * sizeof *rows), 0);
	free(first);
	free(rows);
	/* another size: the file changed */
	cr_assert_eq(read_text("2023-11-16 18:17:03,5,6\n", 100, YEAR), GP_OK, "%s", err.msg);
	cr_assert_eq(n, 1);
	cr_assert_eq(rows[0].prompt, 5);
	free(rows);
	/* the same file under a tighter limit is checked again */
	cr_assert_eq(read_text(text, 100, YEAR), GP_OK, "%s", err.msg);
	free(rows);
	cr_assert_eq(requests_read_azure(path, ref, 1, YEAR, &rows, &n, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "more than 1 requests"), "%s", err.msg);
}
