/*
 * requests.c - the Azure LLM trace reader (see requests.h).
 */
#include "gpuplan/requests.h"

#include "gpuplan/csv.h"

#include "gpuplan/units.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct gp_err *err;
};

/* Errors name the trace file and line. */
#define row_error(r, ...) csv_error((r)->err, (r)->path, (r)->line, __VA_ARGS__)

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at *p into *v; false unless all are digits. */
static bool digits(const char **p, int n, int64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

/* "2023-11-16 18:17:03.9799600" (or with 'T') -> microseconds since the epoch. */
static bool parse_time(const char *s, sim_time *out)
{
	int64_t y, mo, d, h, mi, sec;
	const char *p = s;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d) || (*p != ' ' && *p != 'T') || !*p++ || !digits(&p, 2, &h) ||
	    *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' || !digits(&p, 2, &sec))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	double frac = 0;
	if (*p == '.') {
		double scale = 0.1;
		if (*++p < '0' || *p > '9')
			return false;
		for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	if (*p == 'Z')
		p++;
	if (*p)
		return false;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	*out = secs * SIM_SECOND + (sim_time)llround(frac * (double)SIM_SECOND);
	return true;
}

static int tokens_cell(const struct reader *r, const char *cell, const char *column, int64_t lo,
		       int32_t *out)
{
	int64_t v;
	if (units_integer(cell, &v) || v < lo || v > REQUESTS_MAX_TOKENS)
		return row_error(
			r, "invalid %s '%s'; expected a whole number of tokens from %lld to %d",
			column, cell, (long long)lo, REQUESTS_MAX_TOKENS);
	*out = (int32_t)v;
	return GP_OK;
}

struct timed_row {
	struct request_row row;
	size_t index; /* file order, for a stable sort */
};

static int cmp_rows(const void *a, const void *b)
{
	const struct timed_row *x = a, *y = b;
	if (x->row.at != y->row.at)
		return x->row.at < y->row.at ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* One data line into *out; the header is recognized and skipped (*skip). */
static int read_line(const struct reader *r, char *line, bool first, struct request_row *out,
		     bool *skip)
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
		return row_error(r, "invalid TIMESTAMP '%s'; expected " AZURE_TIME_HINT, cells[0]);
	int rc = tokens_cell(r, cells[1], "ContextTokens", 1, &out->prompt);
	if (!rc)
		rc = tokens_cell(r, cells[2], "GeneratedTokens", 0, &out->output);
	if (!rc && out->output == 0)
		out->output = 1; /* the prefill still returns one token */
	return rc;
}

static int read_text(const char *path, struct srcloc ref, char **text, struct gp_err *err)
{
	const char *why;
	size_t len;
	if (gp_read_input(path, text, &len, &why))
		return gp_located(err, ref, "cannot read trace %s: %s", path, why);
	return GP_OK;
}

int requests_read_azure(const char *path, struct srcloc ref, int64_t max_rows,
			struct request_row **rows, size_t *n_rows, struct gp_err *err)
{
	char *text = NULL;
	int rc = read_text(path, ref, &text, err);
	if (rc)
		return rc;
	struct reader r = {path, 0, err};
	struct timed_row *t = NULL;
	size_t n = 0, cap = 0;
	bool sorted = true;
	for (char *line = text, *next; line && !rc; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		r.line++;
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
		GP_GROW(t, cap, n + 1);
		sorted = sorted && (n == 0 || row.at >= t[n - 1].row.at);
		t[n] = (struct timed_row){row, n};
		n++;
	}
	free(text);
	if (!rc && n == 0)
		rc = gp_errorf(err, GP_EINPUT,
			       "%s: error: no requests; expected rows of " AZURE_LAYOUT, path);
	if (rc) {
		free(t);
		return rc;
	}
	if (!sorted)
		qsort(t, n, sizeof *t, cmp_rows);
	*rows = gp_xcalloc(n, sizeof **rows);
	for (size_t i = 0; i < n; i++) {
		(*rows)[i] = t[i].row;
		(*rows)[i].at -= t[0].row.at;
	}
	*n_rows = n;
	free(t);
	return GP_OK;
}
