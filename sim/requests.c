/*
 * requests.c - the Azure LLM trace reader (see requests.h).
 */
#include "gpuplan/requests.h"

#include "gpuplan/csv.h"

#include "gpuplan/units.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define AZURE_LAYOUT    "TIMESTAMP,ContextTokens,GeneratedTokens"
#define AZURE_TIME_HINT "a time like 2023-11-16 18:17:03.9799600"

sim_time requests_period(const struct request_row *rows, size_t n)
{
	if (n < 2)
		return SIM_SECOND;
	sim_time span = rows[n - 1].at - rows[0].at;
	sim_time gap = span / (sim_time)(n - 1);
	return span + (gap > 0 ? gap : 1);
}

/* --- the Azure reader ------------------------------------------------------ */

struct reader {
	const char *path;
	int line;
	sim_time max_span;
	sim_time first, last; /* the earliest and latest TIMESTAMP so far */
	int first_line, last_line;
	struct gp_err *err;
};

/* Errors name the trace file and line. */
#define row_error(r, ...) csv_error((r)->err, (r)->path, (r)->line, __VA_ARGS__)

/* "2023-11-16 18:17:03.9799600" (or RFC 3339) -> microseconds since the
 * epoch; units_timestamp refuses dates that do not exist (2023-02-30). */
static bool parse_time(const char *s, sim_time *out)
{
	int64_t secs;
	int32_t usec;
	if (units_timestamp(s, &secs, &usec))
		return false;
	*out = secs * SIM_SECOND + usec;
	return true;
}

static int tokens_cell(const struct reader *r, const char *cell, const char *column, int64_t lo,
		       int32_t *out)
{
	int64_t v;
	if (units_integer(cell, &v) || v < lo || v > REQUESTS_MAX_TOKENS)
		return row_error(
			r, "invalid %s '%s'; expected a whole number of tokens from %lld to %d",
			column, CSV_Q(cell), (long long)lo, REQUESTS_MAX_TOKENS);
	*out = (int32_t)v;
	return GP_OK;
}

struct timed_row {
	struct request_row row;
	size_t index; /* file order, for a stable sort */
};

/* A run replays the trace from its first request: one that spans more than
 * max_span (years 0000 and 9999) would be a run of millennia.  Names the row
 * that widens the span past it, and the row at the other end. */
static int check_span(struct reader *r, const char *cell, sim_time at)
{
	bool earlier = !r->first_line || at < r->first;
	bool later = !r->first_line || at > r->last;
	if (earlier) {
		r->first = at;
		r->first_line = r->line;
	}
	if (later) {
		r->last = at;
		r->last_line = r->line;
	}
	if (r->last - r->first <= r->max_span)
		return GP_OK;
	return row_error(r,
			 "TIMESTAMP '%s' is %.0f years %s the request on line %d; expected a "
			 "trace that spans at most %.0f years",
			 CSV_Q(cell), (double)(r->last - r->first) / (365.0 * SIM_DAY),
			 earlier ? "before" : "after", earlier ? r->last_line : r->first_line,
			 (double)r->max_span / (365.0 * SIM_DAY));
}

static int cmp_rows(const void *a, const void *b)
{
	const struct timed_row *x = a, *y = b;
	if (x->row.at != y->row.at)
		return x->row.at < y->row.at ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* One data line into *out; the header is recognized and skipped (*skip). */
static int read_line(struct reader *r, char *line, bool first, struct request_row *out, bool *skip)
{
	char *cells[4];
	int n = csv_split(line, cells, 3);
	*skip = n == 1 && !cells[0][0];
	if (*skip)
		return GP_OK;
	if (first && (cells[0][0] < '0' || cells[0][0] > '9')) {
		*skip = true;
		if (n == 3 && !strcmp(cells[0], "TIMESTAMP") &&
		    !strcmp(cells[1], "ContextTokens") && !strcmp(cells[2], "GeneratedTokens"))
			return GP_OK;
		return row_error(r, "unknown header; expected the columns " AZURE_LAYOUT);
	}
	if (n != 3)
		return row_error(r, "expected 3 columns (" AZURE_LAYOUT "), got %s",
				 n > 3    ? "more"
				 : n == 2 ? "2"
					  : "1");
	if (!parse_time(cells[0], &out->at))
		return row_error(r, "invalid TIMESTAMP '%s'; expected " AZURE_TIME_HINT,
				 CSV_Q(cells[0]));
	int rc = check_span(r, cells[0], out->at);
	if (!rc)
		rc = tokens_cell(r, cells[1], "ContextTokens", 1, &out->prompt);
	if (!rc)
		rc = tokens_cell(r, cells[2], "GeneratedTokens", 0, &out->output);
	if (!rc && out->output == 0)
		out->output = 1; /* the prefill still returns one token */
	return rc;
}

/* Rows out of order, sorted by time, ties in file order. */
static void sort_rows(struct request_row *rows, size_t n)
{
	struct timed_row *t = gp_xmalloc(n * sizeof *t);
	for (size_t i = 0; i < n; i++)
		t[i] = (struct timed_row){rows[i], i};
	qsort(t, n, sizeof *t, cmp_rows);
	for (size_t i = 0; i < n; i++)
		rows[i] = t[i].row;
	free(t);
}

/*
 * The last trace read, by path, limits and the file's identity (device,
 * inode, size, modification time to the nanosecond): a search or a sweep
 * loads its scenario once per run, and the same trace is then copied, not
 * parsed again (28 M instructions for the 19,366 rows of the Azure
 * conversation trace).  One entry, kept until the process ends; the lock
 * serves loaders on threads (advise's jobs).  A trace of more than
 * CACHE_MAX_ROWS rows is not kept: a run of a week-long trace holds its rows
 * once, not twice.
 */
#define CACHE_MAX_ROWS (1 << 20) /* 16 MiB of rows */
static struct {
	pthread_mutex_t lock;
	char *path;
	int64_t max_rows;
	sim_time max_span;
	struct stat st;
	struct request_row *rows;
	size_t n;
} last = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A copy of the last trace's rows into *rows when path, the limits and the
 * file are the same; false otherwise. */
static bool cached(const char *path, int64_t max_rows, sim_time max_span, const struct stat *st,
		   struct request_row **rows, size_t *n_rows)
{
	pthread_mutex_lock(&last.lock);
	bool hit = last.path && !strcmp(last.path, path) && last.max_rows == max_rows &&
		   last.max_span == max_span && same_file(&last.st, st);
	if (hit) {
		*rows = gp_xmalloc(last.n * sizeof **rows);
		memcpy(*rows, last.rows, last.n * sizeof **rows);
		*n_rows = last.n;
	}
	pthread_mutex_unlock(&last.lock);
	return hit;
}

static void cache(const char *path, int64_t max_rows, sim_time max_span, const struct stat *st,
		  const struct request_row *rows, size_t n)
{
	pthread_mutex_lock(&last.lock);
	free(last.path);
	free(last.rows);
	last.path = gp_xstrdup(path);
	last.max_rows = max_rows;
	last.max_span = max_span;
	last.st = *st;
	last.rows = gp_xmalloc(n * sizeof *rows);
	memcpy(last.rows, rows, n * sizeof *rows);
	last.n = n;
	pthread_mutex_unlock(&last.lock);
}

/* Line by line into rows of 16 bytes: a trace costs its rows, not its text. */
int requests_read_azure(const char *path, struct srcloc ref, int64_t max_rows, sim_time max_span,
			struct request_row **rows, size_t *n_rows, struct gp_err *err)
{
	const char *why;
	FILE *f = gp_open_input(path, &why);
	if (!f)
		return gp_located(err, ref, "cannot read trace %s: %s", path, why);
	struct stat st;
	bool known = fstat(fileno(f), &st) == 0; /* a regular file (gp_open_input) */
	if (known && cached(path, max_rows, max_span, &st, rows, n_rows)) {
		fclose(f);
		return GP_OK;
	}
	struct reader r = {.path = path, .max_span = max_span, .err = err};
	struct request_row *out = NULL;
	size_t n = 0, cap = 0, line_cap = 0;
	char *line = NULL;
	bool sorted = true;
	int rc = GP_OK;
	for (ssize_t len; !rc && (len = getline(&line, &line_cap, f)) >= 0;) {
		r.line++;
		rc = csv_check_text(err, path, r.line, line, (size_t)len);
		if (rc)
			break;
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		struct request_row row;
		bool skip;
		rc = read_line(&r, line, n == 0, &row, &skip);
		if (rc || skip)
			continue;
		if ((int64_t)n >= max_rows) {
			rc = row_error(&r,
				       "more than %lld requests; expected fewer, or raise the "
				       "limit with the environment variable GPUPLAN_MAX_JOBS",
				       (long long)max_rows);
			break;
		}
		GP_GROW(out, cap, n + 1);
		sorted = sorted && (n == 0 || row.at >= out[n - 1].at);
		out[n++] = row;
	}
	if (!rc && (ferror(f) || !feof(f))) /* getline's -1 on ENOMEM is no end */
		rc = gp_located(err, ref, "cannot read trace %s: %s", path, strerror(errno));
	free(line);
	fclose(f);
	if (!rc && n == 0)
		rc = gp_located(err, (struct srcloc){path, 0, 0},
				"no requests; expected rows of " AZURE_LAYOUT);
	if (rc) {
		free(out);
		return rc;
	}
	if (!sorted)
		sort_rows(out, n);
	sim_time first = out[0].at;
	for (size_t i = 0; i < n; i++)
		out[i].at -= first;
	if (known && n <= CACHE_MAX_ROWS)
		cache(path, max_rows, max_span, &st, out, n);
	*rows = out;
	*n_rows = n;
	return GP_OK;
}
