/*
 * requests.c - request arrivals of inference workloads (see requests.h).
 */
#include "gpuplan/requests.h"

#include "gpuplan/csv.h"

#include "gpuplan/arrivals.h"
#include "gpuplan/units.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AZURE_LAYOUT "TIMESTAMP,ContextTokens,GeneratedTokens"
#define AZURE_TIME_HINT "a time like 2023-11-16 18:17:03.9799600"
#define MAX_TOKENS 10000000 /* far above any model's context; keeps sums exact */

/* --- synthetic and replayed streams --------------------------------------- */

static sim_time to_sim(double seconds)
{
	return (sim_time)llround(seconds * (double)SIM_SECOND);
}

static int32_t draw_tokens(const struct dist *d, gsl_rng *rng)
{
	double x = round(dist_draw(d, rng));
	return x < 1 ? 1 : x > MAX_TOKENS ? MAX_TOKENS : (int32_t)x;
}

/* The gap to the next synthetic arrival, in seconds. */
static double draw_gap(const struct request_spec *rs, gsl_rng *rng)
{
	double mean = 1.0 / rs->rate;
	if (rs->process == REQUESTS_GAMMA)
		return gsl_ran_gamma(rng, rs->shape, mean / rs->shape);
	return gsl_ran_exponential(rng, mean);
}

/* Time of trace request (tile, row). */
static sim_time trace_time(const struct request_spec *rs, int32_t tile, size_t row)
{
	double at = (double)tile * (double)rs->period + (double)rs->rows[row].at;
	return rs->from + (sim_time)llround(at / rs->speedup);
}

/* Moves st->next past the request just emitted at `now`. */
static void advance(struct request_stream *st, sim_time now)
{
	const struct request_spec *rs = &st->w->inference->requests;
	if (rs->process == REQUESTS_TRACE) {
		if (++st->row == rs->n_rows) {
			st->row = 0;
			st->tile++;
		}
		st->next = st->tile < rs->repeat ? trace_time(rs, st->tile, st->row) : SIM_NEVER;
	} else if (rs->count >= 0 && st->emitted >= rs->count) {
		st->next = SIM_NEVER;
	} else {
		st->next = now + to_sim(draw_gap(rs, st->rng));
	}
	if (st->horizon && st->next != SIM_NEVER && st->next > st->horizon)
		st->next = SIM_NEVER;
}

void request_stream_init(struct request_stream *st, const struct scenario *sc,
			 const struct workload_spec *w)
{
	const struct request_spec *rs = &w->inference->requests;
	memset(st, 0, sizeof *st);
	st->w = w;
	st->horizon = sc->horizon;
	if (rs->process == REQUESTS_TRACE) {
		st->next = rs->n_rows && rs->repeat > 0 ? trace_time(rs, 0, 0) : SIM_NEVER;
	} else {
		/* Not the batch stream's seed: the two must not draw the same numbers. */
		char name[160];
		snprintf(name, sizeof name, "%s/requests", w->name);
		st->rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(st->rng, (unsigned long)arrivals_stream_seed(sc->seed, name));
		st->next = rs->count == 0 ? SIM_NEVER : rs->from + to_sim(draw_gap(rs, st->rng));
	}
	if (st->horizon && st->next != SIM_NEVER && st->next > st->horizon)
		st->next = SIM_NEVER;
}

void request_stream_free(struct request_stream *st)
{
	if (st->rng)
		gsl_rng_free(st->rng);
	st->rng = NULL;
}

bool request_stream_take(struct request_stream *st, sim_time now, struct new_request *rq)
{
	const struct request_spec *rs = &st->w->inference->requests;
	if (st->next != now)
		return false;
	st->emitted++;
	if (rs->process == REQUESTS_TRACE) {
		rq->prompt = rs->rows[st->row].prompt;
		rq->output = rs->rows[st->row].output;
	} else {
		rq->prompt = draw_tokens(&rs->prompt_tokens, st->rng);
		rq->output = draw_tokens(&rs->output_tokens, st->rng);
	}
	advance(st, now);
	return true;
}

int64_t requests_expected(const struct workload_spec *w, sim_time horizon)
{
	const struct request_spec *rs = &w->inference->requests;
	if (rs->process == REQUESTS_TRACE)
		return (int64_t)rs->n_rows * rs->repeat;
	if (rs->count >= 0)
		return rs->count;
	double span = sim_seconds(horizon - rs->from);
	double n = span > 0 ? ceil(rs->rate * span) : 0;
	return n >= 9.2e18 ? INT64_MAX : (int64_t)n;
}

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
	if (units_integer(cell, &v) || v < lo || v > MAX_TOKENS)
		return row_error(r, "invalid %s '%s'; expected a whole number of tokens from %lld to %d",
				 column, cell, (long long)lo, MAX_TOKENS);
	*out = (int32_t)v;
	return GP_OK;
}

struct timed_row {
	struct request_row row;
	size_t index;      /* file order, for a stable sort */
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
		if (n == 3 && !strcmp(cells[0], "TIMESTAMP") && !strcmp(cells[1], "ContextTokens") &&
		    !strcmp(cells[2], "GeneratedTokens"))
			return GP_OK;
		return row_error(r, "unknown header; expected the columns " AZURE_LAYOUT);
	}
	if (n != 3)
		return row_error(r, "expected 3 columns (" AZURE_LAYOUT "), got %s", n > 3 ? "more" :
				 n == 2 ? "2" : "1");
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
			rc = row_error(&r, "more than %lld requests; expected fewer, or raise the "
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
		rc = gp_errorf(err, GP_EINPUT, "%s: error: no requests; expected rows of " AZURE_LAYOUT,
			       path);
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
