/*
 * openmetrics.c - a run as OpenMetrics text (see openmetrics.h).
 *
 * The run's timeseries rows are grouped into one series per pool and per
 * workload (the scopes table says which is which; runs written before it
 * existed fall back on the metrics: a scope with capacity_gpus is a pool).
 * Each family is then written series after series, each series window after
 * window.  Histograms sort their observations by time once and sweep them
 * against the window ends.
 */
#include "gpuplan/openmetrics.h"
#include "gpuplan/strindex.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

enum { ON_POOL = 1, ON_WORKLOAD = 2, ON_VLLM = 4 };

/* One pool or workload: its rows in time order and their window ends. */
struct series {
	const char *name;
	int kind;          /* ON_POOL or ON_WORKLOAD */
	const char *model; /* inference workloads with a model; NULL otherwise */
	const struct ts_row **rows;
	double *end; /* seconds from the scenario start */
	size_t n;
};

struct om {
	FILE *out;
	char scenario[128];
	int64_t run_id;
	int64_t epoch; /* the scenario start, Unix seconds */
	struct series *sv;
	size_t n_sv;
	struct strindex names; /* the series' names: id = index into sv */
	const struct store_latency *lat;
	size_t n_lat;
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
	char run[32];
	snprintf(run, sizeof run, "%lld", (long long)om->run_id);
	fputc('{', om->out);
	if (vllm) {
		put_label(om->out, true, "model_name", s->model);
		put_label(om->out, false, "simulated", "true");
		put_label(om->out, false, "workload", s->name);
	} else {
		put_label(om->out, true, s->kind == ON_POOL ? "pool" : "workload", s->name);
	}
	put_label(om->out, false, "scenario", om->scenario);
	put_label(om->out, false, "run", run);
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

/* One sample: NAME{LABELS} VALUE TIMESTAMP. */
static void sample(struct om *om, const char *name, const struct series *s, bool vllm,
		   const char *le, double value, double end)
{
	fputs(name, om->out);
	put_labels(om, s, vllm, le);
	fprintf(om->out, " %.12g %.3f\n", value, (double)om->epoch + end);
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

static void write_gauge(struct om *om, const struct gauge_family *g)
{
	om->started = false;
	for (size_t i = 0; i < om->n_sv; i++) {
		const struct series *s = &om->sv[i];
		if (!applies(g->on, s))
			continue;
		for (size_t k = 0; k < s->n; k++) {
			double v = g->value(s->rows[k], s->kind == ON_POOL);
			if (isnan(v))
				continue;
			header(om, g->name, "gauge", g->help);
			sample(om, g->name, s, g->on == ON_VLLM, NULL, v, s->end[k]);
		}
	}
}

/* vLLM's preemption counter: the windows' counts summed. */
static void write_preemptions(struct om *om)
{
	om->started = false;
	for (size_t i = 0; i < om->n_sv; i++) {
		const struct series *s = &om->sv[i];
		double total = 0;
		if (!applies(ON_VLLM, s))
			continue;
		for (size_t k = 0; k < s->n; k++) {
			if (isnan(s->rows[k]->preemptions))
				continue;
			total += s->rows[k]->preemptions;
			header(om, "vllm:num_preemptions", "counter",
			       "Cumulative number of preemption from the engine.");
			sample(om, "vllm:num_preemptions_total", s, true, NULL, total, s->end[k]);
		}
	}
}

/* --- cost and pending reasons -------------------------------------------------- */

/* One sample with its own first label (workload="x" or the like) and, for
 * pending time, a reason. */
static void sample_named(struct om *om, const char *name, const char *workload, const char *reason,
			 double value, double end)
{
	char run[32];
	snprintf(run, sizeof run, "%lld", (long long)om->run_id);
	fputs(name, om->out);
	fputc('{', om->out);
	put_label(om->out, true, "workload", workload);
	if (reason)
		put_label(om->out, false, "reason", reason);
	put_label(om->out, false, "scenario", om->scenario);
	put_label(om->out, false, "run", run);
	fprintf(om->out, "} %.12g %.3f\n", value, (double)om->epoch + end);
}

/* OpenCost-style allocations summed window after window: a counter per
 * workload and __idle__, at each window's end; none for an unpriced run. */
static void write_cost(struct om *om, const struct allocation *a, size_t n)
{
	bool priced = false;
	for (size_t i = 0; i < n; i++)
		priced |= a[i].total_cost > 0;
	if (!priced)
		return;
	om->started = false;
	bool *done = gp_xcalloc(n + 1, sizeof *done);
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		double total = 0;
		for (size_t k = i; k < n; k++) { /* the rows of a.name, in time order */
			if (done[k] || strcmp(a[k].name, a[i].name))
				continue;
			done[k] = true;
			total += isnan(a[k].total_cost) ? 0 : a[k].total_cost;
			header(om, "gpuplan_cost", "counter",
			       "Cost of the workload's allocations (or of idle capacity, workload "
			       "__idle__) so far, at the pools' prices, as OpenCost allocates it "
			       "(simulated)");
			sample_named(om, "gpuplan_cost_total", a[k].name, NULL, total,
				     sim_seconds(a[k].end));
		}
	}
	free(done);
}

/* Pod-seconds pending per workload and message over the whole run: one
 * sample at its end (the run keeps no time series per message). */
static void write_pending(struct om *om, const struct pending_reason *p, size_t n, double end)
{
	om->started = false;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(p[i].scope, "all"))
			continue;
		header(om, "gpuplan_pending_seconds", "counter",
		       "Pod-seconds spent pending with the scheduling message, over the run "
		       "(simulated)");
		sample_named(om, "gpuplan_pending_seconds_total", p[i].scope, p[i].reason,
			     p[i].pending_seconds, end);
	}
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
};

static int64_t to_us(double s) { return llround(s * 1e6); }

static int by_time(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	return (x->at_us > y->at_us) - (x->at_us < y->at_us);
}

/* The observations of workload name, by time; *n of them, malloc'ed. */
static struct obs *observations(const struct om *om, const char *name, enum obs_kind kind,
				size_t *n)
{
	struct obs *o = gp_xcalloc(om->n_lat, sizeof *o);
	*n = 0;
	for (size_t i = 0; i < om->n_lat; i++) {
		const struct store_latency *q = &om->lat[i];
		if (strcmp(q->workload, name))
			continue;
		if (kind == OBS_TTFT && !isnan(q->ttft_s))
			o[(*n)++] = (struct obs){to_us(q->arrival_s + q->ttft_s), q->ttft_s, 1};
		else if (kind == OBS_TPOT && !isnan(q->tpot_s) && !isnan(q->e2e_s))
			o[(*n)++] = (struct obs){to_us(q->arrival_s + q->e2e_s), q->tpot_s,
						 (double)(q->output_tokens - 1)};
		else if (kind == OBS_E2E && !isnan(q->e2e_s))
			o[(*n)++] = (struct obs){to_us(q->arrival_s + q->e2e_s), q->e2e_s, 1};
	}
	qsort(o, *n, sizeof *o, by_time);
	return o;
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

static void write_histogram(struct om *om, const struct hist_family *h)
{
	double le[MAX_BUCKETS], counts[MAX_BUCKETS];
	size_t nb = 0;
	for (; h->buckets[nb]; nb++)
		le[nb] = strtod(h->buckets[nb], NULL);
	om->started = false;
	for (size_t i = 0; i < om->n_sv; i++) {
		const struct series *s = &om->sv[i];
		size_t n, j = 0;
		if (!applies(ON_VLLM, s))
			continue;
		struct obs *o = observations(om, s->name, h->kind, &n);
		double count = 0, sum = 0;
		memset(counts, 0, sizeof counts);
		for (size_t k = 0; k < s->n && n > 0; k++) {
			for (; j < n && o[j].at_us <= to_us(s->end[k]); j++) {
				for (size_t b = 0; b < nb; b++)
					if (o[j].value <= le[b])
						counts[b] += o[j].weight;
				count += o[j].weight;
				sum += o[j].value * o[j].weight;
			}
			header(om, h->name, "histogram", h->help);
			hist_point(om, h, s, counts, nb, count, sum, s->end[k]);
		}
		free(o);
	}
}

/* --- the run's series ----------------------------------------------------------- */

/* What each scope is: from the scopes table, else from the metrics. */
static int scope_kinds(struct store *st, int64_t run_id, struct om *om, const struct ts_row *ts,
		       size_t n_ts, struct gp_err *err)
{
	struct store_scope *sc = NULL;
	size_t n_sc = 0;
	int rc = store_read_scopes(st, run_id, &sc, &n_sc, err);
	struct metric *m = NULL;
	size_t n_m = 0;
	if (!rc && n_sc == 0)
		rc = store_read_metrics(st, run_id, &m, &n_m, err);
	/* The scope names, in the order of the first window's rows; hashed (a
	 * scan of the series per row made 1,000 workloads take 31 s). */
	struct strindex kinds = {0}, capacity = {0}; /* scopes rows; pools by metrics */
	size_t *first_row = gp_xcalloc(n_sc + 1, sizeof *first_row); /* per kinds id */
	for (size_t k = 0; k < n_sc; k++) {
		bool added;
		size_t id = strindex_add(&kinds, sc[k].scope, &added);
		if (added)
			first_row[id] = k;
	}
	for (size_t k = 0; k < n_m; k++)
		if (!strcmp(m[k].name, "capacity_gpus"))
			strindex_add(&capacity, m[k].scope, NULL);
	for (size_t i = 0; i < n_ts && !rc; i++) {
		const char *name = ts[i].scope;
		if (!strcmp(name, "all") || strindex_find(&om->names, name) != STRINDEX_NONE)
			continue;
		strindex_add(&om->names, name, NULL);
		struct series *s = &om->sv[om->n_sv++];
		s->name = name;
		s->kind = ON_WORKLOAD;
		size_t k = strindex_find(&kinds, name);
		if (k != STRINDEX_NONE) {
			k = first_row[k]; /* the scope's first row, as the scan found it */
			s->kind = !strcmp(sc[k].kind, "pool") ? ON_POOL : ON_WORKLOAD;
			if (!strcmp(sc[k].workload_kind, "inference") && sc[k].model[0])
				s->model = gp_xstrdup(sc[k].model);
		}
		if (strindex_find(&capacity, name) != STRINDEX_NONE)
			s->kind = ON_POOL;
	}
	strindex_free(&kinds);
	strindex_free(&capacity);
	free(first_row);
	store_free_scopes(sc, n_sc);
	store_free_metrics(m, n_m);
	return rc;
}

/* Each series' rows and window ends: a window ends where the series' next
 * one starts, the last at the end of the run.  Rows are bucketed by series
 * in one pass: memory is the rows once, not once per series. */
static void collect_rows(struct om *om, const struct ts_row *ts, size_t n_ts, double run_end)
{
	size_t *series_of = gp_xcalloc(n_ts + 1, sizeof *series_of);
	for (size_t i = 0; i < n_ts; i++) {
		size_t k = series_of[i] = strindex_find(&om->names, ts[i].scope);
		if (k != STRINDEX_NONE)
			om->sv[k].n++;
	}
	for (size_t k = 0; k < om->n_sv; k++) {
		om->sv[k].rows = gp_xcalloc(om->sv[k].n + 1, sizeof *om->sv[k].rows);
		om->sv[k].end = gp_xcalloc(om->sv[k].n + 1, sizeof *om->sv[k].end);
		om->sv[k].n = 0;
	}
	for (size_t i = 0; i < n_ts; i++)
		if (series_of[i] != STRINDEX_NONE) {
			struct series *s = &om->sv[series_of[i]];
			s->rows[s->n++] = &ts[i];
		}
	free(series_of);
	for (size_t k = 0; k < om->n_sv; k++) {
		struct series *s = &om->sv[k];
		size_t kept = 0;
		for (size_t i = 0; i < s->n; i++) {
			double end = i + 1 < s->n ? sim_seconds(s->rows[i + 1]->t) : run_end;
			if (kept && end <= s->end[kept - 1])
				continue; /* never two samples at one time */
			s->rows[kept] = s->rows[i];
			s->end[kept++] = end;
		}
		s->n = kept;
	}
}

/* Each inference workload's energy over the run (metrics energy_kwh and
 * tokens_per_joule, docs/gpus.md), one sample at the run's end. */
static int write_energy(struct om *om, struct store *st, double run_end, struct gp_err *err)
{
	struct metric *m = NULL;
	size_t n_m = 0;
	int rc = store_read_metrics(st, om->run_id, &m, &n_m, err);
	static const struct {
		const char *family, *sample, *type, *metric, *help;
		double scale;
	} fams[] = {
		{"gpuplan_inference_energy_joules", "gpuplan_inference_energy_joules_total",
		 "counter", "energy_kwh",
		 "Energy of the workload's GPUs while serving: held-idle power plus up to TDP in "
		 "iterations (simulated)",
		 3.6e6},
		{"gpuplan_inference_tokens_per_joule", "gpuplan_inference_tokens_per_joule",
		 "gauge", "tokens_per_joule",
		 "Output tokens per joule of the workload's GPUs (simulated)", 1},
	};
	for (size_t f = 0; f < sizeof fams / sizeof fams[0] && !rc; f++) {
		om->started = false;
		for (size_t i = 0; i < om->n_sv; i++) {
			const struct series *s = &om->sv[i];
			for (size_t k = 0; s->kind == ON_WORKLOAD && k < n_m; k++) {
				if (strcmp(m[k].scope, s->name) ||
				    strcmp(m[k].name, fams[f].metric) || isnan(m[k].value))
					continue;
				header(om, fams[f].family, fams[f].type, fams[f].help);
				sample(om, fams[f].sample, s, false, NULL,
				       m[k].value * fams[f].scale, run_end);
			}
		}
	}
	store_free_metrics(m, n_m);
	return rc;
}

static void free_series(struct om *om)
{
	for (size_t k = 0; k < om->n_sv; k++) {
		free((char *)om->sv[k].model);
		free(om->sv[k].rows);
		free(om->sv[k].end);
	}
	free(om->sv);
	strindex_free(&om->names);
}

int openmetrics_write(FILE *out, struct store *st, int64_t run_id, struct gp_err *err)
{
	struct store_run run;
	int rc = store_run_info(st, run_id, &run, err);
	if (rc)
		return rc;
	struct om om = {.out = out, .run_id = run.run_id};
	snprintf(om.scenario, sizeof om.scenario, "%s", run.name);
	if (units_rfc3339(run.start, &om.epoch))
		return gp_errorf(err, GP_EINPUT,
				 "run %lld has no scenario start time to stamp samples with",
				 (long long)run.run_id);
	struct ts_row *ts = NULL;
	struct store_latency *lat = NULL;
	struct allocation *alloc = NULL;
	struct pending_reason *pend = NULL;
	size_t n_ts = 0, n_lat = 0, n_alloc = 0, n_pend = 0;
	rc = store_read_timeseries(st, run.run_id, &ts, &n_ts, err);
	if (!rc)
		rc = store_read_latencies(st, run.run_id, &lat, &n_lat, err);
	if (!rc)
		rc = store_read_allocations(st, run.run_id, &alloc, &n_alloc, err);
	if (!rc)
		rc = store_read_pending_reasons(st, run.run_id, &pend, &n_pend, err);
	om.sv = gp_xcalloc(n_ts + 1, sizeof *om.sv);
	om.lat = lat;
	om.n_lat = n_lat;
	if (!rc)
		rc = scope_kinds(st, run.run_id, &om, ts, n_ts, err);
	if (!rc) {
		collect_rows(&om, ts, n_ts, run.sim_seconds);
		for (size_t i = 0; i < sizeof gauges / sizeof gauges[0]; i++)
			write_gauge(&om, &gauges[i]);
		write_cost(&om, alloc, n_alloc);
		write_pending(&om, pend, n_pend, run.sim_seconds);
		write_preemptions(&om);
		for (size_t i = 0; i < sizeof hists / sizeof hists[0]; i++)
			write_histogram(&om, &hists[i]);
		rc = write_energy(&om, st, run.sim_seconds, err);
		if (!rc)
			fputs("# EOF\n", out);
	}
	free_series(&om);
	store_free_timeseries(ts, n_ts);
	store_free_latencies(lat, n_lat);
	store_free_allocations(alloc, n_alloc);
	store_free_pending_reasons(pend, n_pend);
	return rc;
}
