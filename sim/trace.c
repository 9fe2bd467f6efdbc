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
#include <sys/stat.h>

#include "gpuplan/units.h"

#define TRACE_MAX_COLS 4
#define TRACE_LAYOUT   "submit_s,duration_s,gpus[,deadline_s]"

/* Larger values would overflow sim_time (microseconds) in later arithmetic. */
#define TRACE_MAX_SECONDS 1e12

static const char *const column_names[TRACE_MAX_COLS] = {"submit_s", "duration_s", "gpus",
							 "deadline_s"};

/* Errors name the trace file and line. */
#define row_error(s, err, ...) csv_error((err), (s)->path, (s)->line, __VA_ARGS__)

static const char *layout(int ncols)
{
	return ncols == 3 ? "submit_s,duration_s,gpus" : "submit_s,duration_s,gpus,deadline_s";
}

/* Whether the cells are the header; an error when they look like a wrong one. */
static int read_header(struct trace_stream *s, char **cells, int n, bool *is_header,
		       struct gp_err *err)
{
	double x;
	*is_header = units_number(cells[0], &x) != 0;
	if (!*is_header)
		return GP_OK;
	bool ok = n == 3 || n == 4;
	for (int i = 0; ok && i < n; i++)
		ok = strcmp(cells[i], column_names[i]) == 0;
	if (!ok)
		return row_error(s, err, "unknown header; expected the columns " TRACE_LAYOUT);
	s->ncols = n;
	return GP_OK;
}

/* A non-negative number of seconds in column col. */
static int seconds_cell(const struct trace_stream *s, const char *cell, int col, sim_time *out,
			struct gp_err *err)
{
	double x;
	if (units_number(cell, &x) != 0)
		return row_error(s, err, "expected a number in column %s, got '%s'",
				 column_names[col], CSV_Q(cell));
	if (x < 0)
		return row_error(s, err, "negative %s '%s'; expected seconds >= 0",
				 column_names[col], CSV_Q(cell));
	if (x > TRACE_MAX_SECONDS)
		return row_error(s, err, "%s '%s' is too large; expected at most %g seconds",
				 column_names[col], CSV_Q(cell), TRACE_MAX_SECONDS);
	*out = (sim_time)llround(x * (double)SIM_SECOND);
	return GP_OK;
}

static int gpus_cell(const struct trace_stream *s, const char *cell, int32_t *out,
		     struct gp_err *err)
{
	int64_t g;
	if (units_integer(cell, &g) != 0)
		return row_error(s, err, "expected a whole number in column gpus, got '%s'",
				 CSV_Q(cell));
	if (g < 1)
		return row_error(s, err, "gpus '%s' is below 1; expected at least 1 GPU per job",
				 CSV_Q(cell));
	if (g > s->lim.max_gpus)
		return row_error(s, err, "no node has %s GPUs; the largest pool node has %d",
				 CSV_Q(cell), (int)s->lim.max_gpus);
	*out = (int32_t)g;
	return GP_OK;
}

static int read_row(struct trace_stream *s, char **cells, int n, struct trace_job *job,
		    struct gp_err *err)
{
	if (s->ncols == 0 && (n == 3 || n == 4))
		s->ncols = n;
	if (n != s->ncols) {
		const char *more = n > TRACE_MAX_COLS ? "more than " : "";
		int got = n > TRACE_MAX_COLS ? TRACE_MAX_COLS : n;
		if (s->ncols == 0)
			return row_error(s, err,
					 "expected 3 or 4 columns (" TRACE_LAYOUT "), got %s%d",
					 more, got);
		return row_error(s, err, "expected %d columns (%s), got %s%d", s->ncols,
				 layout(s->ncols), more, got);
	}
	if ((int64_t)s->n >= s->lim.max_rows)
		return row_error(s, err,
				 "the trace has more than %lld jobs, the limit; raise it with the "
				 "environment variable GPUPLAN_MAX_JOBS",
				 (long long)s->lim.max_rows);
	*job = (struct trace_job){0, 0, SIM_NEVER, 0, s->line, SIM_NEVER};
	int rc = seconds_cell(s, cells[0], 0, &job->submit, err);
	if (!rc)
		rc = seconds_cell(s, cells[1], 1, &job->duration, err);
	if (!rc && job->duration == 0) /* as a scenario's duration: 0 is refused */
		rc = row_error(s, err,
			       "duration_s '%s' is not above 0; expected a duration in seconds "
			       "greater than 0",
			       CSV_Q(cells[1]));
	if (!rc)
		rc = gpus_cell(s, cells[2], &job->gpus, err);
	if (!rc && n == 4 && cells[3][0])
		rc = seconds_cell(s, cells[3], 3, &job->deadline, err);
	if (rc)
		return rc;
	if (job->deadline != SIM_NEVER && job->deadline < job->submit)
		return row_error(s, err,
				 "deadline_s '%s' is before submit_s '%s'; expected a deadline "
				 "at or after the job's arrival (both in seconds since the start)",
				 CSV_Q(cells[3]), CSV_Q(cells[0]));
	s->n++;
	return GP_OK;
}

/* One line: comment, blank, header or row; *got says whether it was a row. */
static int read_line(struct trace_stream *s, char *line, struct trace_job *job, bool *got,
		     struct gp_err *err)
{
	*got = false;
	char *hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	if (*csv_trim(line) == '\0')
		return GP_OK;
	char *cells[TRACE_MAX_COLS];
	int n = csv_split(line, cells, TRACE_MAX_COLS);
	if (s->n == 0 && s->ncols == 0 && n <= TRACE_MAX_COLS) {
		bool is_header;
		int rc = read_header(s, cells, n, &is_header, err);
		if (rc || is_header)
			return rc;
	}
	int rc = read_row(s, cells, n, job, err);
	*got = rc == GP_OK;
	return rc;
}

/* The next row of the file; *got is false at its end.  A read error is
 * reported at ref. */
static int next_row(struct trace_stream *s, struct srcloc ref, struct trace_job *job, bool *got,
		    struct gp_err *err)
{
	*got = false;
	for (ssize_t n; (n = getline(&s->buf, &s->cap, s->f)) >= 0;) {
		s->line++;
		int rc = csv_check_text(err, s->path, s->line, s->buf, (size_t)n);
		if (!rc)
			rc = read_line(s, s->buf, job, got, err);
		if (!rc && *got) {
			s->sorted &= job->submit >= s->submit; /* ties in file order are sorted */
			s->submit = job->submit;
		}
		if (rc || *got)
			return rc;
	}
	if (ferror(s->f) || !feof(s->f)) /* getline's -1 on ENOMEM is no end */
		return gp_located(err, ref, "cannot read trace %s: %s", s->path, strerror(errno));
	return GP_OK;
}

/* Submit order; ties keep file order (lines are unique), so the sort is stable. */
static int cmp_job(const void *a, const void *b)
{
	const struct trace_job *x = a, *y = b;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

void trace_summary_add(struct trace_summary *s, const struct trace_job *row)
{
	if (!s->n_shapes) /* every row adds to a shape: none yet, no row yet */
		s->first_submit = row->submit;
	s->max_gpus = row->gpus > s->max_gpus ? row->gpus : s->max_gpus;
	s->duration_s += sim_seconds(row->duration);
	s->last_submit = row->submit;
	s->deadlines += row->deadline != SIM_NEVER;
	size_t k = 0;
	while (k < s->n_shapes && s->shapes[k].gpus != row->gpus)
		k++;
	if (k == s->n_shapes) {
		s->shapes = gp_xrealloc(s->shapes, (k + 1) * sizeof *s->shapes);
		s->shapes[s->n_shapes++] = (struct trace_shape){row->gpus, 0};
	}
	s->shapes[k].jobs++;
}

void trace_summary_free(struct trace_summary *s)
{
	free(s->shapes);
	memset(s, 0, sizeof *s);
}

static void stream_start(struct trace_stream *s, FILE *f, const char *path,
			 const struct trace_limits *lim, size_t expected)
{
	*s = (struct trace_stream){
		.f = f, .path = path, .lim = *lim, .expected = expected, .sorted = true};
}

/* The file f is, now. */
static struct trace_file file_of(FILE *f)
{
	struct stat sb;
	if (fstat(fileno(f), &sb) != 0)
		return (struct trace_file){0, 0, -1, -1};
	return (struct trace_file){(uint64_t)sb.st_dev, (uint64_t)sb.st_ino, (int64_t)sb.st_size,
				   (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec};
}

/* The second pass over a trace that is held: every row, sorted, and the
 * summary of them in that order.  A file that changed between the passes is
 * refused. */
static int read_held(struct trace_stream *s, struct srcloc ref, struct trace_job **rows,
		     struct trace_summary *sum, struct gp_err *err)
{
	size_t first_pass = s->n;
	rewind(s->f);
	s->line = s->ncols = 0;
	s->n = 0;
	size_t cap = 0;
	struct trace_job job;
	bool got;
	int rc;
	while (!(rc = next_row(s, ref, &job, &got, err)) && got) {
		GP_GROW(*rows, cap, s->n);
		(*rows)[s->n - 1] = job;
	}
	if (!rc && s->n != first_pass)
		rc = gp_located(err, ref,
				"trace %s changed while it was read; expected a file that "
				"stays as it is",
				s->path);
	if (rc)
		return rc;
	qsort(*rows, s->n, sizeof **rows, cmp_job);
	struct trace_summary sorted = {.file = sum->file};
	for (size_t i = 0; i < s->n; i++)
		trace_summary_add(&sorted, &(*rows)[i]);
	trace_summary_free(sum);
	*sum = sorted;
	return GP_OK;
}

int trace_read_csv(const char *path, struct srcloc ref, const struct trace_limits *lim,
		   struct trace_job **rows, size_t *n_rows, struct trace_summary *sum,
		   struct gp_err *err)
{
	*rows = NULL;
	*n_rows = 0;
	memset(sum, 0, sizeof *sum);
	const char *why;
	FILE *f = gp_open_input(path, &why);
	if (!f)
		return gp_located(err, ref, "cannot read trace %s: %s", path, why);
	sum->file = file_of(f);
	struct trace_stream s;
	stream_start(&s, f, path, lim, 0);
	bool got;
	struct trace_job job;
	int rc;
	while (!(rc = next_row(&s, ref, &job, &got, err)) && got)
		if (s.sorted) /* else read_held sums the rows up once sorted */
			trace_summary_add(sum, &job);
	if (rc == GP_OK && s.n == 0)
		rc = gp_located(err, (struct srcloc){path, 0, 0},
				"the trace has no jobs; expected rows of " TRACE_LAYOUT);
	if (rc == GP_OK && (!s.sorted || s.n <= TRACE_HELD_ROWS))
		rc = read_held(&s, ref, rows, sum, err);
	free(s.buf);
	fclose(f);
	if (rc) {
		free(*rows);
		*rows = NULL;
		trace_summary_free(sum);
		return rc;
	}
	*n_rows = s.n;
	return GP_OK;
}

/* The trace is not the one the scenario read: a run of it would not be the
 * run that was checked.  At the line that tells, once the stream has read one. */
static int changed(const struct trace_stream *s, struct gp_err *err, const char *what)
{
	char at[16] = "";
	if (s->line)
		snprintf(at, sizeof at, ":%d", s->line);
	return gp_errorf(err, GP_ERUNTIME,
			 "%s%s: the trace changed since the scenario was read (%s); expected the "
			 "file as it was",
			 s->path, at, what);
}

int trace_stream_open(struct trace_stream *s, const char *path, const struct trace_limits *lim,
		      size_t expected, const struct trace_file *was, struct gp_err *err)
{
	const char *why;
	FILE *f = gp_open_input(path, &why);
	stream_start(s, f, path, lim, expected);
	if (!f)
		return gp_errorf(err, GP_ERUNTIME, "%s: cannot read the trace again: %s", path,
				 why);
	struct trace_file now = file_of(f);
	if (memcmp(&now, was, sizeof now) != 0)
		return changed(s, err, "another size or modification time");
	return GP_OK;
}

int trace_stream_next(struct trace_stream *s, struct trace_job *row, bool *got, struct gp_err *err)
{
	int rc = next_row(s, (struct srcloc){s->path, s->line, 0}, row, got, err);
	if (rc)
		return rc;
	if (*got && (s->n > s->expected || !s->sorted))
		return changed(s, err, s->n > s->expected ? "more rows" : "a row out of order");
	if (!*got && s->n != s->expected)
		return changed(s, err, "fewer rows");
	if (!*got)
		trace_stream_close(s); /* its descriptor is not held to the end of the run */
	return GP_OK;
}

void trace_stream_close(struct trace_stream *s)
{
	if (s->f)
		fclose(s->f);
	free(s->buf);
	s->f = NULL;
	s->buf = NULL;
}
