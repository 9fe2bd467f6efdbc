/*
 * trace.c - reading batch CSV traces (see trace.h).
 *
 * The reader is strict: a row it cannot read exactly is an error naming the
 * line and the column, because a silently skipped job would change every
 * figure of the run.  The column count comes from the header when there is
 * one, else from the first row; every row must then have it.
 */
#include "gpuplan/trace.h"

#include "gpuplan/csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuplan/units.h"

#define TRACE_MAX_COLS 4
#define TRACE_LAYOUT   "submit_s,duration_s,gpus[,deadline_s]"

/* Larger values would overflow sim_time (microseconds) in later arithmetic. */
#define TRACE_MAX_SECONDS 1e12

static const char *const column_names[TRACE_MAX_COLS] = {"submit_s", "duration_s", "gpus",
							 "deadline_s"};

/* The state of one read. */
struct reader {
	const char *path;
	const struct trace_limits *lim;
	int line;
	int ncols; /* 0 until the header or the first row decides */
	struct trace_job *rows;
	size_t n, cap;
	struct gp_err *err;
};

/* Errors name the trace file and line. */
#define row_error(r, ...) csv_error((r)->err, (r)->path, (r)->line, __VA_ARGS__)

static const char *layout(int ncols)
{
	return ncols == 3 ? "submit_s,duration_s,gpus" : "submit_s,duration_s,gpus,deadline_s";
}

/* Whether the cells are the header; an error when they look like a wrong one. */
static int read_header(struct reader *r, char **cells, int n, bool *is_header)
{
	double x;
	*is_header = units_number(cells[0], &x) != 0;
	if (!*is_header)
		return GP_OK;
	bool ok = n == 3 || n == 4;
	for (int i = 0; ok && i < n; i++)
		ok = strcmp(cells[i], column_names[i]) == 0;
	if (!ok)
		return row_error(r, "unknown header; expected the columns " TRACE_LAYOUT);
	r->ncols = n;
	return GP_OK;
}

/* A non-negative number of seconds in column col. */
static int seconds_cell(const struct reader *r, const char *cell, int col, sim_time *out)
{
	double x;
	if (units_number(cell, &x) != 0)
		return row_error(r, "expected a number in column %s, got '%s'", column_names[col],
				 CSV_Q(cell));
	if (x < 0)
		return row_error(r, "negative %s '%s'; expected seconds >= 0", column_names[col],
				 CSV_Q(cell));
	if (x > TRACE_MAX_SECONDS)
		return row_error(r, "%s '%s' is too large; expected at most %g seconds",
				 column_names[col], CSV_Q(cell), TRACE_MAX_SECONDS);
	*out = (sim_time)llround(x * (double)SIM_SECOND);
	return GP_OK;
}

static int gpus_cell(const struct reader *r, const char *cell, int32_t *out)
{
	int64_t g;
	if (units_integer(cell, &g) != 0)
		return row_error(r, "expected a whole number in column gpus, got '%s'",
				 CSV_Q(cell));
	if (g < 1)
		return row_error(r, "gpus '%s' is below 1; expected at least 1 GPU per job",
				 CSV_Q(cell));
	if (g > r->lim->max_gpus)
		return row_error(r, "no node has %s GPUs; the largest pool node has %d",
				 CSV_Q(cell), (int)r->lim->max_gpus);
	*out = (int32_t)g;
	return GP_OK;
}

static int read_row(struct reader *r, char **cells, int n)
{
	if (r->ncols == 0 && (n == 3 || n == 4))
		r->ncols = n;
	if (n != r->ncols) {
		const char *more = n > TRACE_MAX_COLS ? "more than " : "";
		int got = n > TRACE_MAX_COLS ? TRACE_MAX_COLS : n;
		if (r->ncols == 0)
			return row_error(r, "expected 3 or 4 columns (" TRACE_LAYOUT "), got %s%d",
					 more, got);
		return row_error(r, "expected %d columns (%s), got %s%d", r->ncols,
				 layout(r->ncols), more, got);
	}
	if ((int64_t)r->n >= r->lim->max_rows)
		return row_error(r,
				 "the trace has more than %lld jobs, the limit; raise it with the "
				 "environment variable GPUPLAN_MAX_JOBS",
				 (long long)r->lim->max_rows);
	struct trace_job job = {0, 0, SIM_NEVER, 0, r->line, SIM_NEVER};
	int rc = seconds_cell(r, cells[0], 0, &job.submit);
	if (!rc)
		rc = seconds_cell(r, cells[1], 1, &job.duration);
	if (!rc && job.duration == 0) /* as a scenario's duration: 0 is refused */
		rc = row_error(r,
			       "duration_s '%s' is not above 0; expected a duration in seconds "
			       "greater than 0",
			       CSV_Q(cells[1]));
	if (!rc)
		rc = gpus_cell(r, cells[2], &job.gpus);
	if (!rc && n == 4 && cells[3][0])
		rc = seconds_cell(r, cells[3], 3, &job.deadline);
	if (rc)
		return rc;
	if (job.deadline != SIM_NEVER && job.deadline < job.submit)
		return row_error(r,
				 "deadline_s '%s' is before submit_s '%s'; expected a deadline "
				 "at or after the job's arrival (both in seconds since the start)",
				 CSV_Q(cells[3]), CSV_Q(cells[0]));
	GP_GROW(r->rows, r->cap, r->n + 1);
	r->rows[r->n++] = job;
	return GP_OK;
}

/* Handles one line: comment, blank, header or row. */
static int read_line(struct reader *r, char *line)
{
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	if (*csv_trim(line) == '\0')
		return GP_OK;
	char *cells[TRACE_MAX_COLS];
	int n = csv_split(line, cells, TRACE_MAX_COLS);
	if (r->n == 0 && r->ncols == 0 && n <= TRACE_MAX_COLS) {
		bool is_header;
		int rc = read_header(r, cells, n, &is_header);
		if (rc || is_header)
			return rc;
	}
	return read_row(r, cells, n);
}

/* Submit order; ties keep file order (lines are unique), so the sort is stable. */
static int cmp_job(const void *a, const void *b)
{
	const struct trace_job *x = a, *y = b;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

int trace_read_csv(const char *path, struct srcloc ref, const struct trace_limits *lim,
		   struct trace_job **rows, size_t *n_rows, struct gp_err *err)
{
	*rows = NULL;
	*n_rows = 0;
	const char *why;
	FILE *f = gp_open_input(path, &why);
	if (!f)
		return gp_located(err, ref, "cannot read trace %s: %s", path, why);
	struct reader r = {path, lim, 0, 0, NULL, 0, 0, err};
	char *line = NULL;
	size_t cap = 0;
	int rc = GP_OK;
	for (ssize_t n; rc == GP_OK && (n = getline(&line, &cap, f)) >= 0;) {
		r.line++;
		rc = csv_check_text(err, path, r.line, line, (size_t)n);
		if (!rc)
			rc = read_line(&r, line);
	}
	if (rc == GP_OK && ferror(f))
		rc = gp_located(err, ref, "cannot read trace %s: %s", path, strerror(errno));
	free(line);
	fclose(f);
	if (rc == GP_OK && r.n == 0)
		rc = gp_located(err, (struct srcloc){path, 0, 0},
				"the trace has no jobs; expected rows of " TRACE_LAYOUT);
	if (rc) {
		free(r.rows);
		return rc;
	}
	bool sorted = true; /* as a trace usually is: then qsort's copy is not needed */
	for (size_t i = 1; sorted && i < r.n; i++)
		sorted = cmp_job(&r.rows[i - 1], &r.rows[i]) < 0;
	if (!sorted)
		qsort(r.rows, r.n, sizeof *r.rows, cmp_job);
	*rows = r.rows;
	*n_rows = r.n;
	return GP_OK;
}
