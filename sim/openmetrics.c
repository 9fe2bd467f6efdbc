/*
 * openmetrics.c - a run as OpenMetrics text (see openmetrics.h), written as
 * a stream.
 *
 * The text is family after family, each series of a family window after
 * window.  The windows are read once, one series' rows at a time from the
 * database's ordered queries (store.h, "Streaming a run"), each gauge family
 * spooled to a temporary file and copied out in its place.
 * Memory is that of one series (a histogram's observations of one workload,
 * sorted by time), not of the run: a run of 5,000 workloads held every
 * timeseries row at once (210 MB) and took a scan of the rows per series.
 */
#include "gpuplan/openmetrics.h"
#include "gpuplan/units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

enum { ON_POOL = 1, ON_WORKLOAD = 2, ON_VLLM = 4 };

/* One pool or workload, its strings borrowed from the series cursor. */
struct series {
	int64_t ord; /* its number (store.h STORE_Q_SERIES) */
	const char *name;
	int kind;          /* ON_POOL or ON_WORKLOAD */
	const char *model; /* inference workloads with a model; NULL otherwise */
};

/* The windows of one series: each row with the end of its window (where
 * the series' next row starts, the last at the run's end), never two at one
 * time.  One row of look-ahead. */
struct windows {
	struct store_cursor *c;
	struct store_item cur, next;
	bool has_cur, any;
	double last_end, run_end;
	struct ts_row row; /* the window given out */
};

struct om {
	FILE *out;
	struct store *st;
	struct gp_err *err;
	char scenario[SCENARIO_MAX_NAME + 1]; /* the run's name, whole */
	char run[32];
	int64_t run_id;
	int64_t epoch;  /* the scenario start, Unix seconds */
	double run_end; /* seconds from the scenario start */
	struct store_cursor *series;
	struct windows win;
	bool started; /* the current family's header is out */
};

/* Writes s as an OpenMetrics label value: backslash, quote, newline escaped,
 * and a byte that is not UTF-8 (a crafted database's scope name) written as
 * U+FFFD, since the format is UTF-8 and promtool refuses the file else. */
static void put_escaped(FILE *out, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t ok = gp_utf8_check(s + i, n - i);
		for (size_t j = i; j < i + ok; j++) {
			if (s[j] == '\\' || s[j] == '"')
				fputc('\\', out);
			if (s[j] == '\n')
				fputs("\\n", out);
			else
				fputc(s[j], out);
		}
		i += ok;
		if (i < n) {
			fputs("\xEF\xBF\xBD", out); /* U+FFFD REPLACEMENT CHARACTER */
			i++;
		}
	}
}

static void put_label(FILE *out, bool first, const char *name, const char *value)
{
	fprintf(out, "%s%s=\"", first ? "" : ",", name);
	put_escaped(out, value);
	fputc('"', out);
}

/* The labels of a sample of series s; le (may be NULL) for a histogram bucket. */
static void put_labels(const struct om *om, const struct series *s, bool vllm, const char *le)
{
	fputc('{', om->out);
	if (vllm) {
		put_label(om->out, true, "model_name", s->model);
		put_label(om->out, false, "simulated", "true");
		put_label(om->out, false, "workload", s->name);
	} else {
		put_label(om->out, true, s->kind == ON_POOL ? "pool" : "workload", s->name);
	}
	put_label(om->out, false, "scenario", om->scenario);
	put_label(om->out, false, "run", om->run);
	if (le)
		put_label(om->out, false, "le", le);
	fputc('}', om->out);
}

/* The family's TYPE and HELP, before its first sample only (a family with
 * no sample is left out). */
static void header(struct om *om, const char *family, const char *type, const char *help)
{
	if (om->started)
		return;
	om->started = true;
	fprintf(om->out, "# TYPE %s %s\n# HELP %s %s\n", family, type, family, help);
}

/* " VALUE TIMESTAMP\n" as %.12g and %.3f would write them.  glibc prints a
 * double through multi-precision arithmetic, half the export's CPU; most
 * values (GPUs, pods, bytes) and every timestamp of a run sampled on whole
 * seconds are integers, written as such. */
static void put_value_time(FILE *out, double value, double t)
{
	if (value == trunc(value) && fabs(value) < 1e12 && !(value == 0 && signbit(value)))
		fprintf(out, " %lld", (long long)value);
	else
		fprintf(out, " %.12g", value);
	if (t == trunc(t) && fabs(t) < 1e15)
		fprintf(out, " %lld.000\n", (long long)t);
	else
		fprintf(out, " %.3f\n", t);
}

/* One sample: NAME{LABELS} VALUE TIMESTAMP. */
static void sample(struct om *om, const char *name, const struct series *s, bool vllm,
		   const char *le, double value, double end)
{
	fputs(name, om->out);
	put_labels(om, s, vllm, le);
	put_value_time(om->out, value, (double)om->epoch + end);
}

/* A write error (a full disk) ends the export at once rather than after
 * formatting the rest of the run into a failing stream. */
static int written(struct om *om)
{
	return ferror(om->out) ? gp_errorf(om->err, GP_ERUNTIME, "writing the OpenMetrics text: %s",
					   strerror(errno))
			       : GP_OK;
}

/* --- the series and their windows ----------------------------------------------- */

/* The next series (*got false after the last). */
static int next_series(struct om *om, struct series *s, bool *got)
{
	struct store_item it;
	int rc = store_cursor_next(om->series, &it, got, om->err);
	if (!rc && *got)
		*s = (struct series){it.series, it.name, it.pool ? ON_POOL : ON_WORKLOAD, it.text};
	return rc ? rc : written(om);
}

static int windows_start(struct om *om, const struct series *s)
{
	struct windows *w = &om->win;
	store_cursor_rewind(w->c, s->name, NULL);
	w->any = false;
	w->run_end = om->run_end;
	return store_cursor_next(w->c, &w->cur, &w->has_cur, om->err);
}

/* The next window of the series: *row and the end of its window. */
static int windows_next(struct om *om, const struct ts_row **row, double *end, bool *got)
{
	struct windows *w = &om->win;
	*got = false;
	while (w->has_cur) {
		bool more;
		int rc = store_cursor_next(w->c, &w->next, &more, om->err);
		if (rc)
			return rc;
		double e = more ? sim_seconds(w->next.ts.t) : w->run_end;
		bool keep = !w->any || e > w->last_end; /* never two samples at one time */
		if (keep)
			w->row = w->cur.ts;
		w->cur = w->next;
		w->has_cur = more;
		if (keep) {
			w->any = true;
			w->last_end = e;
			*row = &w->row;
			*end = e;
			*got = true;
			return GP_OK;
		}
	}
	return GP_OK;
}

/* --- gauges ----------------------------------------------------------------- */

static double ratio(double num, double den) { return den > 0 ? num / den : NAN; }

static double v_capacity(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->gpus_capacity;
}
static double v_provisioning(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->gpus_provisioning;
}
static double v_allocated(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->gpus_allocated;
}
static double v_demand(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->gpus_demand;
}
static double v_memory(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->vram_used_gib * GIB;
}
static double v_pending(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->pending;
}
static double v_running(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->running;
}
static double v_req_running(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->requests_running;
}
static double v_req_waiting(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->requests_waiting;
}
static double v_kv(const struct ts_row *r, bool pool)
{
	(void)pool;
	return r->kv_cache_usage;
}

/* A pool's activity is over its GPUs; a workload's over the GPUs it holds. */
static double v_engine(const struct ts_row *r, bool pool)
{
	return ratio(r->engine_active, pool ? r->gpus_capacity : r->gpus_allocated);
}

static double v_sm(const struct ts_row *r, bool pool)
{
	return ratio(r->sm_active, pool ? r->gpus_capacity : r->gpus_allocated);
}

static const struct gauge_family {
	const char *name;
	int on;
	double (*value)(const struct ts_row *r, bool pool);
	const char *help;
} gauges[] = {
	{"gpuplan_gpus_capacity", ON_POOL, v_capacity, "GPUs in the pool (simulated)"},
	{"gpuplan_gpus_provisioning", ON_POOL, v_provisioning,
	 "GPUs of nodes the autoscaler launched that are not Ready yet (simulated)"},
	{"gpuplan_gpus_allocated", ON_POOL | ON_WORKLOAD, v_allocated,
	 "GPUs allocated to pods, whole-GPU equivalents (simulated)"},
	{"gpuplan_gpus_demand", ON_WORKLOAD, v_demand,
	 "GPUs requested by work that has arrived and not finished (simulated)"},
	{"gpuplan_gpu_engine_active_ratio", ON_POOL | ON_WORKLOAD, v_engine,
	 "Mean graphics engine activity of the pool's GPUs or the workload's allocated GPUs, "
	 "as DCGM_FI_PROF_GR_ENGINE_ACTIVE (simulated)"},
	{"gpuplan_gpu_sm_active_ratio", ON_POOL | ON_WORKLOAD, v_sm,
	 "Mean SM activity of the pool's GPUs or the workload's allocated GPUs, as "
	 "DCGM_FI_PROF_SM_ACTIVE (simulated)"},
	{"gpuplan_gpu_memory_used_bytes", ON_POOL | ON_WORKLOAD, v_memory,
	 "GPU memory held by pods (simulated)"},
	{"gpuplan_pods_pending", ON_WORKLOAD, v_pending,
	 "Pods waiting to be scheduled (simulated)"},
	{"gpuplan_pods_running", ON_POOL | ON_WORKLOAD, v_running, "Pods running (simulated)"},
	{"vllm:num_requests_running", ON_VLLM, v_req_running,
	 "Number of requests currently running on GPU."},
	{"vllm:num_requests_waiting", ON_VLLM, v_req_waiting,
	 "Number of requests waiting to be processed."},
	{"vllm:gpu_cache_usage_perc", ON_VLLM, v_kv,
	 "GPU KV-cache usage. 1 means 100 percent usage."},
};

static bool applies(int on, const struct series *s)
{
	return on == ON_VLLM ? s->model != NULL : (on & s->kind) != 0;
}

#define N_GAUGES    (sizeof gauges / sizeof gauges[0])
#define PREEMPTIONS N_GAUGES /* the spool after the gauges' */

/* The families written in one read of the windows: a family's samples are
 * contiguous in the text, so each is spooled to a temporary file of its own
 * and copied out in its place.  Reading the windows once per family read the
 * run 13 times (28 s of CPU for 1,000 workloads over a week); the spools take
 * disk, the size of the text, not memory. */
struct spools {
	FILE *f[N_GAUGES + 1];
	bool started[N_GAUGES + 1];
};

/* Writes one window of series s into each spool whose family applies. */
static void spool_window(struct om *om, struct spools *sp, const struct series *s,
			 const struct ts_row *r, double end, double *preempted)
{
	FILE *out = om->out;
	for (size_t i = 0; i < N_GAUGES; i++) {
		const struct gauge_family *g = &gauges[i];
		double v = applies(g->on, s) ? g->value(r, s->kind == ON_POOL) : NAN;
		if (isnan(v))
			continue;
		om->out = sp->f[i];
		om->started = sp->started[i];
		header(om, g->name, "gauge", g->help);
		sample(om, g->name, s, g->on == ON_VLLM, NULL, v, end);
		sp->started[i] = true;
	}
	if (applies(ON_VLLM, s) && !isnan(r->preemptions)) {
		*preempted += r->preemptions; /* vLLM's counter: the windows' counts summed */
		om->out = sp->f[PREEMPTIONS];
		om->started = sp->started[PREEMPTIONS];
		header(om, "vllm:num_preemptions", "counter",
		       "Cumulative number of preemption from the engine.");
		sample(om, "vllm:num_preemptions_total", s, true, NULL, *preempted, end);
		sp->started[PREEMPTIONS] = true;
	}
	om->out = out;
}

static int spool_series(struct om *om, struct spools *sp)
{
	store_cursor_rewind(om->series, NULL, NULL);
	struct series s;
	bool got;
	int rc;
	while (!(rc = next_series(om, &s, &got)) && got) {
		const struct ts_row *r;
		double end = 0, preempted = 0; /* windows_next sets end whenever got */
		rc = windows_start(om, &s);
		while (!rc && !(rc = windows_next(om, &r, &end, &got)) && got)
			spool_window(om, sp, &s, r, end, &preempted);
		if (rc)
			break;
	}
	return rc;
}

/* Copies spool *fp to the text and closes it. */
static int unspool(struct om *om, FILE **fp)
{
	char buf[1 << 16];
	size_t n;
	FILE *f = *fp;
	*fp = NULL;
	rewind(f);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, om->out);
	bool failed = ferror(f);
	fclose(f);
	if (failed)
		return gp_errorf(om->err, GP_ERUNTIME, "reading back a spooled family: %s",
				 strerror(errno));
	return written(om);
}

static int spools_open(struct om *om, struct spools *sp)
{
	*sp = (struct spools){0};
	for (size_t i = 0; i <= N_GAUGES; i++)
		if (!(sp->f[i] = tmpfile()))
			return gp_errorf(om->err, GP_ERUNTIME,
					 "a temporary file for the OpenMetrics text: %s",
					 strerror(errno));
	return GP_OK;
}

static void spools_close(struct spools *sp)
{
	for (size_t i = 0; i <= N_GAUGES; i++)
		if (sp->f[i])
			fclose(sp->f[i]);
}

/* --- cost and pending reasons -------------------------------------------------- */

/* One sample with its own first label (workload="x" or the like) and, for
 * pending time, a reason. */
static void sample_named(struct om *om, const char *name, const char *workload, const char *reason,
			 double value, double end)
{
	fputs(name, om->out);
	fputc('{', om->out);
	put_label(om->out, true, "workload", workload);
	if (reason)
		put_label(om->out, false, "reason", reason);
	put_label(om->out, false, "scenario", om->scenario);
	put_label(om->out, false, "run", om->run);
	fputc('}', om->out);
	put_value_time(om->out, value, (double)om->epoch + end);
}

/* Runs query q over the run, calling fn on each row; the cursor is closed. */
static int each_row(struct om *om, enum store_query q,
		    int (*fn)(struct om *om, const struct store_item *it, void *ctx), void *ctx)
{
	struct store_cursor *c;
	int rc = store_cursor_open(om->st, q, om->run_id, &c, om->err);
	struct store_item it;
	bool got = !rc;
	while (!rc && !(rc = store_cursor_next(c, &it, &got, om->err)) && got)
		if (!(rc = fn(om, &it, ctx)))
			rc = written(om);
	store_cursor_close(c);
	return rc;
}

/* The name whose costs are being summed, and the sum. */
struct cost_run {
	char *name;
	size_t cap;
	double total;
};

static int cost_row(struct om *om, const struct store_item *it, void *ctx)
{
	struct cost_run *cr = ctx;
	if (!cr->name || strcmp(cr->name, it->name)) {
		size_t len = strlen(it->name) + 1;
		GP_GROW(cr->name, cr->cap, len);
		memcpy(cr->name, it->name, len);
		cr->total = 0;
	}
	cr->total += isnan(it->value) ? 0 : it->value;
	header(om, "gpuplan_cost", "counter",
	       "Cost of the workload's allocations (or of idle capacity, workload "
	       "__idle__) so far, at the pools' prices, as OpenCost allocates it "
	       "(simulated)");
	sample_named(om, "gpuplan_cost_total", it->name, NULL, cr->total, sim_seconds(it->end));
	return GP_OK;
}

static int priced_row(struct om *om, const struct store_item *it, void *ctx)
{
	(void)om;
	*(bool *)ctx = it->value > 0;
	return GP_OK;
}

/* OpenCost-style allocations summed window after window: a counter per
 * workload and __idle__, at each window's end; none for an unpriced run. */
static int write_cost(struct om *om)
{
	bool priced = false;
	int rc = each_row(om, STORE_Q_PRICED, priced_row, &priced);
	if (rc || !priced)
		return rc;
	om->started = false;
	struct cost_run cr = {0};
	rc = each_row(om, STORE_Q_COSTS, cost_row, &cr);
	free(cr.name);
	return rc;
}

static int pending_row(struct om *om, const struct store_item *it, void *ctx)
{
	(void)ctx;
	header(om, "gpuplan_pending_seconds", "counter",
	       "Pod-seconds spent pending with the scheduling message, over the run "
	       "(simulated)");
	sample_named(om, "gpuplan_pending_seconds_total", it->name, it->text, it->value,
		     om->run_end);
	return GP_OK;
}

/* Pod-seconds pending per workload and message over the whole run: one
 * sample at its end (the run keeps no time series per message). */
static int write_pending(struct om *om)
{
	om->started = false;
	return each_row(om, STORE_Q_PENDING, pending_row, NULL);
}

/* --- histograms --------------------------------------------------------------- */

/* vLLM's buckets (vllm/engine/metrics.py), as its exposition writes them. */
static const char *const ttft_buckets[] = {"0.001", "0.005", "0.01", "0.02", "0.04", "0.06",
					   "0.08",  "0.1",   "0.25", "0.5",  "0.75", "1.0",
					   "2.5",   "5.0",   "7.5",  "10.0", NULL};
static const char *const tpot_buckets[] = {"0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2",
					   "0.3",  "0.4",   "0.5",  "0.75",  "1.0", "2.5",  NULL};
static const char *const e2e_buckets[] = {"1.0",  "2.5",  "5.0",  "10.0", "15.0", "20.0",
					  "30.0", "40.0", "50.0", "60.0", NULL};

enum obs_kind { OBS_TTFT, OBS_TPOT, OBS_E2E };

struct obs {
	int64_t at_us; /* when it is observed, µs from the scenario start */
	double value;  /* seconds */
	double weight; /* observations of that value */
	size_t seq;    /* its request's place by arrival: ties keep that order */
};

/* One workload's observations: the buffer grows to the largest series. */
struct obs_buf {
	struct obs *o;
	size_t n, cap;
};

static int64_t to_us(double s) { return llround(s * 1e6); }

static int by_time(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	if (x->at_us != y->at_us)
		return (x->at_us > y->at_us) - (x->at_us < y->at_us);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Adds request q's observation of kind, if it has one. */
static void observe(struct obs_buf *b, const struct store_latency *q, enum obs_kind kind)
{
	struct obs o;
	if (kind == OBS_TTFT && !isnan(q->ttft_s))
		o = (struct obs){to_us(q->arrival_s + q->ttft_s), q->ttft_s, 1, b->n};
	else if (kind == OBS_TPOT && !isnan(q->tpot_s) && !isnan(q->e2e_s))
		o = (struct obs){to_us(q->arrival_s + q->e2e_s), q->tpot_s,
				 (double)(q->output_tokens - 1), b->n};
	else if (kind == OBS_E2E && !isnan(q->e2e_s))
		o = (struct obs){to_us(q->arrival_s + q->e2e_s), q->e2e_s, 1, b->n};
	else
		return;
	GP_GROW(b->o, b->cap, b->n + 1);
	b->o[b->n++] = o;
}

static const struct hist_family {
	const char *name;
	enum obs_kind kind;
	const char *const *buckets;
	const char *help;
} hists[] = {
	{"vllm:time_to_first_token_seconds", OBS_TTFT, ttft_buckets,
	 "Histogram of time to first token in seconds."},
	{"vllm:time_per_output_token_seconds", OBS_TPOT, tpot_buckets,
	 "Histogram of time per output token in seconds."},
	{"vllm:e2e_request_latency_seconds", OBS_E2E, e2e_buckets,
	 "Histogram of end to end request latency in seconds."},
};

#define MAX_BUCKETS 20

/* One MetricPoint: the cumulative buckets, +Inf, count and sum. */
static void hist_point(struct om *om, const struct hist_family *h, const struct series *s,
		       const double *counts, size_t nb, double count, double sum, double end)
{
	char name[96];
	snprintf(name, sizeof name, "%s_bucket", h->name);
	for (size_t b = 0; b < nb; b++)
		sample(om, name, s, true, h->buckets[b], counts[b], end);
	sample(om, name, s, true, "+Inf", count, end);
	snprintf(name, sizeof name, "%s_count", h->name);
	sample(om, name, s, true, NULL, count, end);
	snprintf(name, sizeof name, "%s_sum", h->name);
	sample(om, name, s, true, NULL, sum, end);
}

/* Series s's histogram window after window, from its observations o (by time). */
static int hist_series(struct om *om, const struct hist_family *h, const struct series *s,
		       const struct obs *o, size_t n)
{
	double le[MAX_BUCKETS], counts[MAX_BUCKETS] = {0}, count = 0, sum = 0;
	size_t nb = 0, j = 0;
	for (; h->buckets[nb]; nb++)
		le[nb] = strtod(h->buckets[nb], NULL);
	const struct ts_row *r;
	double end;
	bool got;
	int rc = windows_start(om, s);
	while (!rc && !(rc = windows_next(om, &r, &end, &got)) && got) {
		for (; j < n && o[j].at_us <= to_us(end); j++) {
			for (size_t b = 0; b < nb; b++)
				if (o[j].value <= le[b])
					counts[b] += o[j].weight;
			count += o[j].weight;
			sum += o[j].value * o[j].weight;
		}
		header(om, h->name, "histogram", h->help);
		hist_point(om, h, s, counts, nb, count, sum, end);
	}
	return rc;
}

/* The series with a model, each with its requests: the requests come by
 * series number, so one pass over both reads each workload's in turn. */
static int write_histogram(struct om *om, const struct hist_family *h, struct store_cursor *req,
			   struct obs_buf *b)
{
	om->started = false;
	store_cursor_rewind(om->series, NULL, NULL);
	store_cursor_rewind(req, NULL, NULL);
	struct store_item q;
	bool has_q, got;
	int rc = store_cursor_next(req, &q, &has_q, om->err);
	struct series s;
	while (!rc && !(rc = next_series(om, &s, &got)) && got) {
		b->n = 0;
		while (!rc && has_q && q.series <= s.ord) {
			if (q.series == s.ord)
				observe(b, &q.lat, h->kind);
			rc = store_cursor_next(req, &q, &has_q, om->err);
		}
		if (rc || !applies(ON_VLLM, &s) || b->n == 0)
			continue;
		qsort(b->o, b->n, sizeof *b->o, by_time);
		rc = hist_series(om, h, &s, b->o, b->n);
	}
	return rc;
}

/* --- energy ----------------------------------------------------------------- */

/* Each workload's energy over the run (metrics energy_kwh and
 * tokens_per_joule, docs/gpus.md), one sample at the run's end. */
static int write_energy(struct om *om)
{
	static const struct {
		const char *family, *sample, *type;
		enum metric_id metric;
		const char *help;
		double scale;
	} fams[] = {
		{"gpuplan_inference_energy_joules", "gpuplan_inference_energy_joules_total",
		 "counter", METRIC_ENERGY_KWH,
		 "Energy of the workload's GPUs while serving: held-idle power plus up to TDP in "
		 "iterations (simulated)",
		 3.6e6},
		{"gpuplan_inference_tokens_per_joule", "gpuplan_inference_tokens_per_joule",
		 "gauge", METRIC_TOKENS_PER_JOULE,
		 "Output tokens per joule of the workload's GPUs (simulated)", 1},
	};
	struct store_cursor *m;
	int rc = store_cursor_open(om->st, STORE_Q_METRIC, om->run_id, &m, om->err);
	for (size_t f = 0; f < sizeof fams / sizeof fams[0] && !rc; f++) {
		om->started = false;
		store_cursor_rewind(om->series, NULL, NULL);
		struct series s;
		bool got;
		while (!rc && !(rc = next_series(om, &s, &got)) && got) {
			if (s.kind != ON_WORKLOAD)
				continue;
			store_cursor_rewind(m, s.name, metric_name(fams[f].metric));
			struct store_item it;
			while (!(rc = store_cursor_next(m, &it, &got, om->err)) && got) {
				if (isnan(it.value))
					continue;
				header(om, fams[f].family, fams[f].type, fams[f].help);
				sample(om, fams[f].sample, &s, false, NULL,
				       it.value * fams[f].scale, om->run_end);
			}
		}
	}
	store_cursor_close(m);
	return rc;
}

/* --- the export ----------------------------------------------------------------- */

static int write_families(struct om *om)
{
	struct spools sp;
	int rc = spools_open(om, &sp);
	if (!rc)
		rc = spool_series(om, &sp);
	for (size_t i = 0; i < N_GAUGES && !rc; i++)
		rc = unspool(om, &sp.f[i]);
	if (!rc)
		rc = write_cost(om);
	if (!rc)
		rc = write_pending(om);
	if (!rc)
		rc = unspool(om, &sp.f[PREEMPTIONS]);
	spools_close(&sp);
	struct store_cursor *req = NULL;
	struct obs_buf b = {0};
	if (!rc)
		rc = store_cursor_open(om->st, STORE_Q_REQUESTS, om->run_id, &req, om->err);
	for (size_t i = 0; i < sizeof hists / sizeof hists[0] && !rc; i++)
		rc = write_histogram(om, &hists[i], req, &b);
	store_cursor_close(req);
	free(b.o);
	if (!rc)
		rc = write_energy(om);
	return rc;
}

int openmetrics_write(FILE *out, struct store *st, int64_t run_id, struct gp_err *err)
{
	struct store_run run;
	int rc = store_run_info(st, run_id, &run, err);
	if (rc)
		return rc;
	struct om om = {
		.out = out, .st = st, .err = err, .run_id = run.run_id, .run_end = run.sim_seconds};
	snprintf(om.scenario, sizeof om.scenario, "%s", run.name);
	snprintf(om.run, sizeof om.run, "%lld", (long long)run.run_id);
	if (units_rfc3339(run.start, &om.epoch))
		return gp_errorf(err, GP_EINPUT,
				 "run %lld has no scenario start time to stamp samples with",
				 (long long)run.run_id);
	rc = store_stream_begin(st, err);
	if (!rc)
		rc = store_cursor_open(st, STORE_Q_SERIES, run.run_id, &om.series, err);
	if (!rc)
		rc = store_cursor_open(st, STORE_Q_WINDOWS, run.run_id, &om.win.c, err);
	if (!rc)
		rc = write_families(&om);
	if (!rc) {
		fputs("# EOF\n", out);
		rc = written(&om);
	}
	store_cursor_close(om.series);
	store_cursor_close(om.win.c);
	return rc;
}
