/*
 * search_bracket.c - the first cut of a minimum-replica question
 * (search_int.h): which replica count `search` probes first.
 *
 * The question is one when the search is --min over workloads.NAME.replicas
 * (whole numbers), NAME is an inference workload with a fixed replica count,
 * Poisson arrivals at one rate (or an Azure trace: its rate, mean prompt and
 * output and its prompt at the SLO percentile, from the rows), and the
 * condition bounds its TTFT tail (ttft_p50_s, ttft_p95_s or ttft_p99_s, <= or
 * <, of NAME or of all when NAME is the only service), or that NAME meet its
 * goal or SLO (goal_met or slo_met >= 1: its own SLO's TTFT and TPOT bound
 * it, as advise's sizing asks).  firstcut.h sizes it
 * on the first pool that offers the workload, with the server's keys, the
 * tokenization time taken off the bound; a trace's gaps give the arrivals'
 * burstiness.  A disaggregated workload's roles have their own question
 * (role_first_cut); a routed service's group has none.  Anything else: no
 * first cut, and the search bisects as before.
 */
#include "gpuplan/firstcut.h"
#include "gpuplan/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

static int cmp_int(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The token counts of a distribution: mean, the tail at p, cv^2. */
static bool tokens_of(const struct dist *d, double p, double *mean, double *tail, double *cv2)
{
	*mean = d->mean;
	switch (d->kind) {
	case DIST_FIXED: *tail = d->mean, *cv2 = 0; return true;
	case DIST_LOGNORMAL:
		*tail = ceil(firstcut_lognormal_quantile(d->mean, d->sigma, p));
		*cv2 = exp(d->sigma * d->sigma) - 1;
		return true;
	case DIST_EXPONENTIAL: *tail = ceil(-d->mean * log(1 - p / 100)), *cv2 = 1; return true;
	default: return false;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define RATE_WINDOW_S 60.0 /* of trace time: the minutes the conversation trace's rate moves by */

/* The rate each request of a trace arrives at, its minute's over the mean,
 * in FIRSTCUT_RATE_CLASSES classes of equally many requests (their means):
 * the first cut's waits at the rates the requests meet, not at the mean. */
static void rate_classes(const struct request_spec *rs, struct firstcut_service *s)
{
	size_t n = rs->n_rows, windows = (size_t)(sim_seconds(rs->period) / RATE_WINDOW_S) + 1;
	if (n < 2 * FIRSTCUT_RATE_CLASSES)
		return;
	size_t *count = gp_xcalloc(windows, sizeof *count);
	double *factor = gp_xcalloc(n, sizeof *factor);
	double t0 = sim_seconds(rs->rows[0].at), mean = (double)n / sim_seconds(rs->period);
	for (size_t i = 0; i < n; i++) {
		size_t w = (size_t)((sim_seconds(rs->rows[i].at) - t0) / RATE_WINDOW_S);
		count[w < windows ? w : windows - 1]++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t w = (size_t)((sim_seconds(rs->rows[i].at) - t0) / RATE_WINDOW_S);
		factor[i] = (double)count[w < windows ? w : windows - 1] / RATE_WINDOW_S / mean;
	}
	qsort(factor, n, sizeof *factor, cmp_double);
	for (int k = 0; k < FIRSTCUT_RATE_CLASSES; k++) {
		size_t from = n * (size_t)k / FIRSTCUT_RATE_CLASSES,
		       to = n * (size_t)(k + 1) / FIRSTCUT_RATE_CLASSES;
		double sum = 0;
		for (size_t i = from; i < to; i++)
			sum += factor[i];
		s->rate_class[k] = sum / (double)(to - from);
	}
	s->n_rate_classes = FIRSTCUT_RATE_CLASSES;
	free(count);
	free(factor);
}

/* A trace's rate and token counts, from its rows. */
static bool trace_of(const struct request_spec *rs, double p, struct firstcut_service *s)
{
	if (!rs->n_rows || rs->period <= 0)
		return false;
	int32_t *prompts = gp_xcalloc(rs->n_rows, sizeof *prompts);
	double sum_p = 0, sum_o = 0, sum_o2 = 0;
	for (size_t i = 0; i < rs->n_rows; i++) {
		prompts[i] = rs->rows[i].prompt;
		sum_p += rs->rows[i].prompt;
		sum_o += rs->rows[i].output;
		sum_o2 += (double)rs->rows[i].output * rs->rows[i].output;
	}
	qsort(prompts, rs->n_rows, sizeof *prompts, cmp_int);
	double n = (double)rs->n_rows;
	size_t k = (size_t)ceil(p / 100 * n);
	s->prompt_tail = prompts[k ? k - 1 : 0];
	free(prompts);
	s->prompt_mean = sum_p / n;
	s->output_mean = sum_o / n;
	s->output_cv2 = sum_o2 / n / (s->output_mean * s->output_mean) - 1;
	s->rate = n / sim_seconds(rs->period) * rs->speedup;
	/* the gaps' squared cv: a trace is burstier than Poisson */
	double g = 0, g2 = 0;
	for (size_t i = 1; i < rs->n_rows; i++) {
		double d = sim_seconds(rs->rows[i].at - rs->rows[i - 1].at);
		g += d, g2 += d * d;
	}
	if (rs->n_rows > 2 && g > 0) {
		double m = g / (n - 1);
		s->arrival_cv2 = g2 / (n - 1) / (m * m) - 1;
	}
	rate_classes(rs, s);
	return true;
}

/* 99, 95 or 50 for ttft_pXX_s (and tpot_pXX_s); 0 for another metric. */
static double percentile_of(enum metric_id metric)
{
	switch (metric) {
	case METRIC_TTFT_P50_S:
	case METRIC_TPOT_P50_S: return 50;
	case METRIC_TTFT_P95_S:
	case METRIC_TPOT_P95_S: return 95;
	case METRIC_TTFT_P99_S:
	case METRIC_TPOT_P99_S: return 99;
	default: return 0;
	}
}

/* Whether metric is a TPOT tail (tpot_p50_s, ...), else a TTFT one. */
static bool tpot_metric(enum metric_id metric)
{
	return metric == METRIC_TPOT_P50_S || metric == METRIC_TPOT_P95_S ||
	       metric == METRIC_TPOT_P99_S;
}

/* The workload NAME of workloads.NAME.replicas, or NULL. */
static const struct workload_spec *varied(const struct scenario *sc, const char *key)
{
	static const char head[] = "workloads.", tail[] = ".replicas";
	size_t n = strlen(key);
	if (strncmp(key, head, sizeof head - 1) || n <= sizeof head + sizeof tail - 2 ||
	    strcmp(key + n - (sizeof tail - 1), tail))
		return NULL;
	size_t len = n - (sizeof head - 1) - (sizeof tail - 1);
	for (size_t i = 0; i < sc->n_workloads; i++)
		if (strlen(sc->workloads[i].name) == len &&
		    !strncmp(sc->workloads[i].name, key + sizeof head - 1, len))
			return &sc->workloads[i];
	return NULL;
}

static size_t services(const struct scenario *sc)
{
	size_t n = 0;
	for (size_t i = 0; i < sc->n_workloads; i++)
		n += sc->workloads[i].inference != NULL;
	return n;
}

/* The rate a service is sized for: its constant rate, or under a weekly
 * calendar (rate_by_hour, by_weekday) its busiest hour's, as a tail bound
 * over the day is missed in that hour first (a launch hour at 60/s of a day
 * at 0.5/s). */
static double peak_rate(const struct request_spec *rs)
{
	if (!rs->weekly.on)
		return rs->rate;
	double peak = 0;
	for (int d = 0; d < 7; d++)
		for (int h = 0; h < 24; h++)
			peak = fmax(peak, rs->weekly.by_hour[h] * rs->weekly.by_weekday[d]);
	return peak;
}

bool search_service(const struct scenario *sc, const struct workload_spec *w,
		    const struct gpu_type *gpu, double ttft_s, double tpot_s, double percentile,
		    struct firstcut_service *s)
{
	if (!w->inference || !w->model || w->request != REQUEST_GPUS)
		return false;
	const struct inference_spec *in = w->inference;
	const struct pool_spec *pool = NULL;
	for (size_t i = 0; i < sc->n_pools && !pool; i++)
		if (scenario_pool_offers(&sc->pools[i], w))
			pool = &sc->pools[i];
	if (!pool)
		return false;
	if (!gpu)
		gpu = pool->gpu;
	*s = (struct firstcut_service){
		.model = w->model,
		.weights = (enum quant)w->quantization,
		.kv = (enum quant)in->kv_cache,
		.gpu = gpu,
		.tp = in->tensor_parallel,
		.memory_fraction = in->vram_given            ? w->vram_bytes / gpu->memory_bytes
				   : in->memory_fraction > 0 ? in->memory_fraction
							     : 0.9,
		.max_batch = in->max_batch,
		.max_batched_tokens = in->max_batched_tokens,
		.ttft_slo_s = ttft_s > 0 ? ttft_s - sim_seconds(in->tokenize) : 0,
		.tpot_slo_s = tpot_s,
		.percentile = percentile,
	};
	const struct request_spec *rs = &in->requests;
	double unused;
	if (rs->process == REQUESTS_TRACE) {
		if (!trace_of(rs, percentile, s))
			return false;
	} else if (rs->process != REQUESTS_POISSON || !(peak_rate(rs) > 0) ||
		   !tokens_of(&rs->prompt_tokens, percentile, &s->prompt_mean, &s->prompt_tail,
			      &s->prompt_cv2) ||
		   !tokens_of(&rs->output_tokens, percentile, &s->output_mean, &unused,
			      &s->output_cv2)) {
		return false;
	} else {
		s->rate = peak_rate(rs);
	}
	return true;
}

/* Whether the condition asks that a workload meet its goal or its SLO
 * (goal_met, slo_met: 1 when met): then its own SLO bounds the first cut. */
static bool goal_condition(const struct search_condition *c)
{
	bool metric = c->metric == METRIC_GOAL_MET || c->metric == METRIC_SLO_MET;
	return metric && ((c->op == OP_GE && c->value > 0 && c->value <= 1) ||
			  (c->op == OP_GT && c->value >= 0 && c->value < 1));
}

/*
 * A disaggregated workload's role, workloads.NAME.disaggregated.ROLE.replicas:
 * the prefill workers under a TTFT tail bound, the decode workers under a
 * TPOT one (tpot_p50_s, tpot_p95_s, tpot_p99_s), as firstcut_disagg_size
 * sizes them with the role's own TP and batch keys and the link.
 */
static int role_first_cut(const struct search_spec *sp, const struct scenario *sc)
{
	static const char *const roles[] = {".disaggregated.prefill.replicas",
					    ".disaggregated.decode.replicas"};
	const struct search_condition *c = &sp->until;
	for (int k = 0; k < 2; k++) {
		size_t n = strlen(sp->key), t = strlen(roles[k]);
		if (n <= t + 10 || strncmp(sp->key, "workloads.", 10) ||
		    strcmp(sp->key + n - t, roles[k]))
			continue;
		const struct workload_spec *w = NULL;
		for (size_t i = 0; i < sc->n_workloads && !w; i++)
			if (strlen(sc->workloads[i].name) == n - t - 10 &&
			    !strncmp(sc->workloads[i].name, sp->key + 10, n - t - 10))
				w = &sc->workloads[i];
		double p = tpot_metric(c->metric) != (k == 1) ? 0 : percentile_of(c->metric);
		if (!w || !w->inference || !w->inference->disagg || !p || !w->model ||
		    (strcmp(c->scope, w->name) && (strcmp(c->scope, "all") || services(sc) != 1)))
			return 0;
		const struct disagg_spec *d = w->inference->disagg;
		const struct disagg_role *role = k ? &d->decode : &d->prefill;
		struct firstcut_service s;
		if (!search_service(sc, w, NULL, k ? 0 : c->value, 0, p, &s))
			return 0;
		s.tp = role->gpus;
		s.max_batch = role->max_batch;
		s.max_batched_tokens = role->max_batched_tokens;
		if (role->memory_fraction > 0 && !w->inference->vram_given)
			s.memory_fraction = role->memory_fraction;
		s.tpot_slo_s = k ? c->value : 0;
		if ((k && !(s.tpot_slo_s > 0)) || (!k && !(s.ttft_slo_s > 0)))
			return 0;
		struct firstcut_disagg f;
		double bw = d->link == DISAGG_LINK_NVLINK ? 0 : d->link_bandwidth;
		if (firstcut_disagg_size(&s, bw, d->link_latency_s, &f) != FIRSTCUT_OK)
			return 0;
		return k ? f.decode_replicas : f.prefill_replicas;
	}
	return 0;
}

/* The service of a minimum-replica question on sc and its workload; false
 * when the question is not one the first cut models (then role_first_cut
 * may still size a disaggregated role). */
static bool question(const struct search_spec *sp, const struct scenario *sc,
		     struct firstcut_service *s, const struct workload_spec **wl)
{
	const struct search_condition *c = &sp->until;
	if (sp->maximize || !sp->integer)
		return false;
	const struct workload_spec *w = varied(sc, sp->key);
	if (!w || !w->inference || w->inference->target_queue > 0 || w->inference->disagg ||
	    w->inference->service /* a routed group: its traffic is a share of its service's */ ||
	    (strcmp(c->scope, w->name) && (strcmp(c->scope, "all") || services(sc) != 1)))
		return false;
	const struct slo_spec *slo = &w->inference->slo;
	double p = percentile_of(c->metric), ttft = c->value, tpot = 0;
	if (goal_condition(c)) { /* the workload's own SLO */
		p = slo->percentile > 0 ? slo->percentile : 99;
		ttft = sim_seconds(slo->ttft);
		tpot = sim_seconds(slo->tpot);
	} else if (!p || (c->op != OP_LE && c->op != OP_LT)) {
		return false;
	}
	*wl = w;
	return ttft > 0 && search_service(sc, w, NULL, ttft, tpot, p, s) && s->ttft_slo_s > 0;
}

int search_first_cut(const struct search_spec *sp, const struct scenario *sc,
		     struct firstcut_service *service)
{
	const struct search_condition *c = &sp->until;
	*service = (struct firstcut_service){0};
	if (sp->maximize || !sp->integer)
		return 0;
	if (strstr(sp->key, ".disaggregated.") && (c->op == OP_LE || c->op == OP_LT))
		return role_first_cut(sp, sc);
	const struct workload_spec *w;
	struct firstcut f;
	if (!question(sp, sc, service, &w) || firstcut_replicas(service, &f) != FIRSTCUT_OK) {
		*service = (struct firstcut_service){0};
		return 0;
	}
	return f.replicas;
}

/* cal's service on sc: the first probe reads it whole; later ones take the
 * model and GPU from their own scenario (the traffic is the same). */
static bool calibration(const struct search_spec *sp, const struct scenario *sc,
			struct search_calib *cal, const struct workload_spec **w)
{
	if (cal->none)
		return false;
	if (!cal->ready && sp->has_service) { /* the traffic as search_estimate read it */
		cal->s = sp->service;
		cal->ready = true;
		cal->allowed = NAN;
	} else if (!cal->ready) {
		cal->none = !question(sp, sc, &cal->s, w);
		cal->allowed = cal->none ? NAN : firstcut_load_at_tail(&cal->s, cal->s.ttft_slo_s);
		cal->none |= !(cal->allowed > 0) || cal->s.percentile != floor(cal->s.percentile);
		cal->ready = true;
		return !cal->none;
	}
	*w = varied(sc, sp->key);
	const struct pool_spec *pool = NULL;
	for (size_t i = 0; *w && i < sc->n_pools && !pool; i++)
		if (scenario_pool_offers(&sc->pools[i], *w))
			pool = &sc->pools[i];
	if (!pool || !(*w)->model)
		return false;
	cal->s.model = (*w)->model;
	cal->s.gpu = pool->gpu;
	if (isnan(cal->allowed)) {
		cal->allowed = firstcut_load_at_tail(&cal->s, cal->s.ttft_slo_s);
		cal->none = !(cal->allowed > 0) || cal->s.percentile != floor(cal->s.percentile);
	}
	return !cal->none;
}

double search_recut(const struct search_spec *sp, const struct scenario *sc,
		    const struct results *r, int64_t n, struct search_calib *cal)
{
	const struct workload_spec *w;
	if (!calibration(sp, sc, cal, &w))
		return NAN;
	int pct = (int)cal->s.percentile; /* as "ttft_p%02d_s" named it */
	enum metric_id id = pct == 50   ? METRIC_TTFT_P50_S
			    : pct == 95 ? METRIC_TTFT_P95_S
			    : pct == 99 ? METRIC_TTFT_P99_S
					: METRIC_COUNT;
	double tail = NAN;
	if (id != METRIC_COUNT && results_get(r, w->name, id, &tail))
		tail -= sim_seconds(w->inference->tokenize);
	if (!isfinite(tail))
		return NAN; /* no such metric (ttft_p90_s): nothing to calibrate by */
	if (tail > 2 * cal->s.ttft_slo_s)
		return INFINITY; /* a queue that grew through the run: past capacity */
	double at = firstcut_load_at_tail(&cal->s, tail);
	return isnan(at) ? NAN : (double)n * at / cal->allowed;
}
