/*
 * history.c - reading a twin's observed pods CSV (see history.h).
 *
 * Strict, like the other trace readers: a row that cannot be read exactly is
 * an error at its line, because the backtest compares the replay with these
 * rows figure by figure.  Columns are found by the header's names.
 */
#include "gpuplan/history.h"

#include "gpuplan/csv.h"
#include "gpuplan/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum col {
	COL_WORKLOAD,
	COL_NAMESPACE,
	COL_POD,
	COL_NODE,
	COL_CREATED,
	COL_SCHEDULED,
	COL_FINISHED,
	COL_GPUS,
	COL_CPU,
	COL_MEMORY,
	COL_PHASE,
	N_COLS
};

static const char *const col_names[N_COLS] = {"workload",  "namespace",    "pod",        "node",
					      "created_s", "scheduled_s",  "finished_s", "gpus",
					      "cpu_milli", "memory_bytes", "phase"};

#define HISTORY_LAYOUT                                                                 \
	"workload,namespace,pod,node,created_s,scheduled_s,finished_s,gpus,cpu_milli," \
	"memory_bytes,phase"
#define HISTORY_MAX_SECONDS 1e12 /* past this, sim_time arithmetic overflows */
#define HISTORY_SLACK_S     1.0  /* timestamps are whole seconds: rounding at the end */
#define HISTORY_MAX_COLS    32

const char *const history_phase_names[5] = {"Succeeded", "Failed", "Running", "Pending", "Deleted"};

struct reader {
	const char *path;
	int line;
	double span_s;
	int at[N_COLS]; /* cell index of each column */
	int ncells;     /* cells a row has (the header's) */
	bool header;    /* read */
	int first;      /* the first line of the row being read */
};

#define row_error(r, err, ...) csv_error((err), (r)->path, (r)->line, __VA_ARGS__)

static int read_header(struct reader *r, char **cells, int n, struct gp_err *err)
{
	if (n > HISTORY_MAX_COLS)
		return row_error(r, err,
				 "more than %d columns; expected the header " HISTORY_LAYOUT,
				 HISTORY_MAX_COLS);
	for (int c = 0; c < N_COLS; c++)
		r->at[c] = -1;
	for (int i = 0; i < n; i++) {
		int c = 0;
		while (c < N_COLS && strcmp(cells[i], col_names[c]))
			c++;
		if (c == N_COLS)
			return row_error(r, err,
					 "unknown column '%s'; expected the header " HISTORY_LAYOUT,
					 CSV_Q(cells[i]));
		if (r->at[c] >= 0)
			return row_error(r, err,
					 "column %s twice; expected the header " HISTORY_LAYOUT,
					 col_names[c]);
		r->at[c] = i;
	}
	for (int c = 0; c < N_COLS; c++)
		if (r->at[c] < 0)
			return row_error(r, err,
					 "no column %s; expected the header " HISTORY_LAYOUT,
					 col_names[c]);
	r->ncells = n;
	r->header = true;
	return GP_OK;
}

/* A time in column c, seconds since the period's start; empty gives NAN when
 * allowed.  Not past the period's end, and not absurdly far before it. */
static int time_cell(const struct reader *r, char **cells, enum col c, bool may_be_empty,
		     double *out, struct gp_err *err)
{
	const char *cell = cells[r->at[c]];
	if (!*cell && may_be_empty) {
		*out = NAN;
		return GP_OK;
	}
	if (units_number(cell, out))
		return row_error(r, err, "expected a number of seconds in column %s, got '%s'",
				 col_names[c], CSV_Q(cell));
	if (*out > r->span_s + HISTORY_SLACK_S)
		return row_error(r, err,
				 "%s '%s' is after the history's end (%.0f s); expected seconds "
				 "since its start up to its end",
				 col_names[c], CSV_Q(cell), r->span_s);
	if (*out < -HISTORY_MAX_SECONDS)
		return row_error(r, err,
				 "%s '%s' is too far before the history; expected at least "
				 "%g",
				 col_names[c], CSV_Q(cell), -HISTORY_MAX_SECONDS);
	return GP_OK;
}

static int amount_cell(const struct reader *r, char **cells, enum col c, double *out,
		       struct gp_err *err)
{
	const char *cell = cells[r->at[c]];
	if (units_number(cell, out) || *out < 0)
		return row_error(r, err, "expected a number >= 0 in column %s, got '%s'",
				 col_names[c], CSV_Q(cell));
	return GP_OK;
}

static int gpus_cell(const struct reader *r, char **cells, int32_t *out, struct gp_err *err)
{
	const char *cell = cells[r->at[COL_GPUS]];
	int64_t g;
	if (units_integer(cell, &g) || g < 0 || g > 1000000)
		return row_error(r, err,
				 "expected a whole number of GPUs >= 0 in column gpus, got "
				 "'%s'",
				 CSV_Q(cell));
	*out = (int32_t)g;
	return GP_OK;
}

static int phase_cell(const struct reader *r, char **cells, enum history_phase *out,
		      struct gp_err *err)
{
	const char *cell = cells[r->at[COL_PHASE]];
	for (int k = 0; k < 5; k++)
		if (!strcmp(cell, history_phase_names[k])) {
			*out = (enum history_phase)k;
			return GP_OK;
		}
	return row_error(r, err,
			 "unknown phase '%s'; expected Succeeded, Failed, Running, Pending or "
			 "Deleted",
			 CSV_Q(cell));
}

/* The row's names, copied into one allocation that p->workload owns. */
static void keep_names(struct history_pod *p, char **cells, const struct reader *r)
{
	const char *w = cells[r->at[COL_WORKLOAD]], *ns = cells[r->at[COL_NAMESPACE]],
		   *pod = cells[r->at[COL_POD]], *node = cells[r->at[COL_NODE]];
	size_t lw = strlen(w) + 1, lns = strlen(ns) + 1, lp = strlen(pod) + 1,
	       ln = strlen(node) + 1;
	char *block = gp_xmalloc(lw + lns + lp + ln);
	memcpy(block, w, lw);
	memcpy(block + lw, ns, lns);
	memcpy(block + lw + lns, pod, lp);
	memcpy(block + lw + lns + lp, node, ln);
	p->workload = block;
	p->namespace_ = block + lw;
	p->pod = block + lw + lns;
	p->node = block + lw + lns + lp;
}

static int read_row(struct reader *r, char **cells, int n, struct history_pod *p,
		    struct gp_err *err)
{
	if (n != r->ncells)
		return row_error(r, err, "expected %d columns (" HISTORY_LAYOUT "), got %s%d",
				 r->ncells, n > HISTORY_MAX_COLS ? "more than " : "",
				 n > HISTORY_MAX_COLS ? HISTORY_MAX_COLS : n);
	*p = (struct history_pod){.line = r->line};
	if (!*cells[r->at[COL_WORKLOAD]])
		return row_error(r, err,
				 "empty workload; expected the name of a workload of the "
				 "scenario");
	if (!*cells[r->at[COL_POD]])
		return row_error(r, err, "empty pod; expected the pod's name");
	int rc = time_cell(r, cells, COL_CREATED, false, &p->created_s, err);
	if (!rc)
		rc = time_cell(r, cells, COL_SCHEDULED, true, &p->scheduled_s, err);
	if (!rc)
		rc = time_cell(r, cells, COL_FINISHED, true, &p->finished_s, err);
	if (!rc)
		rc = gpus_cell(r, cells, &p->gpus, err);
	if (!rc)
		rc = amount_cell(r, cells, COL_CPU, &p->cpu_milli, err);
	if (!rc)
		rc = amount_cell(r, cells, COL_MEMORY, &p->memory_bytes, err);
	if (!rc)
		rc = phase_cell(r, cells, &p->phase, err);
	if (rc)
		return rc;
	/* Timestamps come from different controllers' clocks: a pod scheduled
	 * before its creation was scheduled as it was created. */
	if (p->scheduled_s < p->created_s)
		p->scheduled_s = p->created_s;
	double since = isnan(p->scheduled_s) ? p->created_s : p->scheduled_s;
	if (p->finished_s < since)
		return row_error(
			r, err,
			"finished_s '%s' is before %s '%s'; expected a pod that ends "
			"after it %s",
			CSV_Q(cells[r->at[COL_FINISHED]]),
			isnan(p->scheduled_s) ? "created_s" : "scheduled_s",
			CSV_Q(cells[r->at[isnan(p->scheduled_s) ? COL_CREATED : COL_SCHEDULED]]),
			isnan(p->scheduled_s) ? "was created" : "started");
	keep_names(p, cells, r);
	return GP_OK;
}

/* One logical row (or the header) of the file. */
static int read_line(struct reader *r, char *line, struct history_pod **pods, size_t *n,
		     size_t *cap, struct gp_err *err)
{
	char *cells[HISTORY_MAX_COLS];
	int k = csv_split_quoted(line, cells, HISTORY_MAX_COLS);
	if (k < 0)
		return row_error(r, err,
				 "a quoted cell is not closed, or text follows its closing "
				 "quote; expected \"...\" with \"\" for a quote");
	if (!r->header)
		return read_header(r, cells, k, err);
	GP_GROW(*pods, *cap, *n + 1);
	int rc = read_row(r, cells, k, &(*pods)[*n], err);
	if (!rc)
		(*n)++;
	return rc;
}

struct pod_ref {
	const struct history_pod *p;
};

static int cmp_pod(const void *a, const void *b)
{
	const struct history_pod *x = ((const struct pod_ref *)a)->p,
				 *y = ((const struct pod_ref *)b)->p;
	int c = strcmp(x->namespace_, y->namespace_);
	if (!c)
		c = strcmp(x->pod, y->pod);
	if (!c)
		c = (x->created_s > y->created_s) - (x->created_s < y->created_s);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A pod (namespace, name, created_s) listed twice is an error at its second
 * line.  The same name created again is another pod (a new uid): a
 * StatefulSet's pod, a Kubeflow notebook's <name>-0, keeps its name across
 * restarts. */
static int check_unique(const char *path, const struct history_pod *pods, size_t n,
			struct gp_err *err)
{
	struct pod_ref *refs = gp_xcalloc(n + 1, sizeof *refs);
	for (size_t i = 0; i < n; i++)
		refs[i].p = &pods[i];
	qsort(refs, n, sizeof *refs, cmp_pod);
	const struct history_pod *dup = NULL, *first = NULL;
	for (size_t i = 1; i < n; i++) {
		const struct history_pod *a = refs[i - 1].p, *b = refs[i].p;
		if (strcmp(a->namespace_, b->namespace_) || strcmp(a->pod, b->pod) ||
		    a->created_s != b->created_s)
			continue;
		if (!dup || b->line < dup->line) {
			dup = b;
			first = a;
		}
	}
	free(refs);
	if (!dup)
		return GP_OK;
	return csv_error(err, path, dup->line,
			 "pod %s/%s is listed twice (first at line %d); expected one row per pod",
			 CSV_Q(dup->namespace_), CSV_Q(dup->pod), (int)first->line);
}

int history_read_pods(const char *path, struct srcloc ref, double span_s, struct history_pod **pods,
		      size_t *n, struct gp_err *err)
{
	*pods = NULL;
	*n = 0;
	const char *why = NULL;
	FILE *f = gp_open_input(path, &why); /* a FIFO or a device is refused */
	if (!f)
		return gp_located(err, ref, "cannot read the observed pods %s: %s", path, why);
	struct reader r = {.path = path, .span_s = span_s};
	size_t cap = 0, bufcap = 0;
	char *buf = NULL;
	int rc = GP_OK;
	struct gp_sbuf row = {0};
	for (ssize_t len; !rc && (len = getline(&buf, &bufcap, f)) >= 0;) {
		r.line++;
		if ((rc = csv_check_text(err, path, r.line, buf, (size_t)len)))
			break;
		/* A quoted cell may go on over line ends (RFC 4180): a row ends where
		 * its quotes close, and is reported at its first line. */
		if (!row.n)
			r.first = r.line;
		gp_sb_printf(&row, "%s", buf);
		if (csv_quote_open(row.s))
			continue;
		char *text = gp_sb_take(&row);
		row = (struct gp_sbuf){0};
		int at = r.line;
		r.line = r.first;
		char *line = csv_trim(text);
		if (*line && *line != '#')
			rc = read_line(&r, line, pods, n, &cap, err);
		r.line = at;
		free(text);
	}
	if (!rc && row.n)
		rc = csv_error(err, path, r.first,
			       "a quoted cell is not closed by the end of the file");
	free(row.s);
	if (!rc && (ferror(f) || !feof(f))) /* getline's -1 on ENOMEM is no end */
		rc = gp_located(err, ref, "cannot read the observed pods %s: %s", path,
				strerror(errno));
	if (!rc && !r.header)
		rc = csv_error(err, path, r.line,
			       "no header; expected the columns " HISTORY_LAYOUT);
	if (!rc)
		rc = check_unique(path, *pods, *n, err);
	free(buf);
	fclose(f);
	if (rc) {
		history_free_pods(*pods, *n);
		*pods = NULL;
		*n = 0;
	}
	return rc;
}

void history_free_pods(struct history_pod *pods, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)pods[i].workload);
	free(pods);
}
