/*
 * infer_results.c - an inference run's figures (infer.h): TTFT, TPOT and
 * end-to-end percentiles, SLO attainment, throughput and cost per service
 * and for all, and the request rows.
 */
#include "gpuplan/infer.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_int.h"

/* --- the stop rule (infer.h) ------------------------------------------------------ */

/* Counts completed request q against the stop rule: its value of the
 * rule's figure, as served_add adds it to the samples (a one-token answer
 * has no TPOT). */
static void stop_count(struct infer *in, const struct req *q)
{
	double x = in->stop.figure == INFER_TTFT  ? sim_seconds(q->first - q->arrival)
		   : in->stop.figure == INFER_E2E ? sim_seconds(q->done - q->arrival)
		   : q->output > 1 ? sim_seconds(q->done - q->first) / (q->output - 1)
				   : NAN;
	if (x > in->stop.late && ++in->stop.n_late == in->stop.need)
		in->news |= INFER_STOP;
}

/* Whether service s (a front service: the one its requests count in)
 * reports under scope. */
static bool in_scope(const struct service *s, const char *scope)
{
	return !strcmp(scope, "all") || !strcmp(s->ws->name, scope) ||
	       (s->is->service && !strcmp(s->is->service, scope));
}

bool infer_set_stop(struct infer *in, const struct infer_stop *stop)
{
	if (!in)
		return false;
	in->stop.on = false;
	int64_t all = 0, n = 0;
	for (size_t i = 0; i < in->n_svcs; i++) {
		struct service *s = &in->svcs[i];
		const struct request_spec *rs = &s->is->requests;
		/* a trace's rows x repeat, a synthetic stream's count: at most */
		int64_t count = rs->process == REQUESTS_TRACE ? (int64_t)rs->n_rows * rs->repeat
							      : rs->count;
		s->stop_scope = false;
		if (s->front != (int32_t)i)
			continue; /* decode workers: their requests count in their prefill's */
		if (count < 0)
			return false; /* to the horizon: no bound on the requests */
		all += count;
		if (in_scope(s, stop->scope)) {
			s->stop_scope = true;
			n += count;
		}
	}
	/* ttft, e2e, tpot, queue and a transfer per request at most: all exact */
	if (!n || !(stop->quantile > 0 && stop->quantile < 1) || all > (int64_t)in->held.max / 5)
		return false;
	int64_t need = 0;
	for (int64_t k = 1; k <= n; k++) { /* as samples_view_quantile ranks them */
		int64_t lhs = (int64_t)(stop->quantile * (double)(k - 1));
		need = k - lhs > need ? k - lhs : need;
	}
	in->stop.on = true;
	in->stop.figure = stop->figure;
	in->stop.late = stop->bound + fabs(stop->bound) * 1e-9;
	in->stop.need = need;
	in->stop.n_late = 0;
	return true;
}

/* --- what a request leaves behind ------------------------------------------------ */

/* A uniform draw in [0, 1) fixed by the seed, the workload and the request. */
static double quality_draw(uint64_t seed, size_t i)
{
	uint64_t x = seed ^ (uint64_t)i * UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	x ^= x >> 31;
	return (double)(x >> 11) / 9007199254740992.0;
}

static bool within_slo(const struct slo_spec *slo, const struct req *q)
{
	if (q->state != RQ_DONE)
		return false;
	if (slo->ttft && q->first - q->arrival > slo->ttft)
		return false;
	if (slo->e2e && q->done - q->arrival > slo->e2e)
		return false;
	/* TPOT bound against the request's mean time per output token after the first. */
	if (slo->tpot && q->output > 1 && (q->done - q->first) > slo->tpot * (q->output - 1))
		return false;
	return true;
}

void infer_finish_request(struct infer *in, struct service *s, uint32_t id, enum req_state st)
{
	struct req *q = &s->reqs[id];
	struct service *home = &in->svcs[s->front]; /* a decode worker's: its prefill's */
	q->state = (uint8_t)st;
	q->done = now_of(in);
	q->slo_met = within_slo(&s->is->slo, q);
	q->verified = q->slo_met && quality_draw(s->quality_seed, q->seq) < s->ws->pass_rate;
	home->verified += q->verified;
	s->outstanding--;
	in->news |= INFER_PROGRESS;
	in->progress_at = q->done;
	infer_served_add(in, home, q); /* it leaves: its slot goes to the next arrival */
	GP_GROW(s->free_reqs, s->cap_free, s->n_free + 1);
	s->free_reqs[s->n_free++] = id;
}

void infer_served_add(struct infer *in, struct service *s, const struct req *q)
{
	struct served *v = &s->served;
	struct samples_budget *b = &in->held;
	if (q->admitted != SIM_NEVER) {
		samples_add(&v->queue, b, sim_seconds(q->admitted - q->ready));
		v->tok_wait += fmax(0, sim_seconds(q->ready - q->arrival - s->is->tokenize));
	}
	v->rejected += q->state == RQ_REJECTED;
	v->slo_met += q->slo_met;
	if (q->state == RQ_DONE) {
		v->completed++;
		v->tokens += q->output;
		samples_add(&v->ttft, b, sim_seconds(q->first - q->arrival));
		samples_add(&v->e2e, b, sim_seconds(q->done - q->arrival));
		if (q->output > 1)
			samples_add(&v->tpot, b, sim_seconds(q->done - q->first) / (q->output - 1));
		if (v->last_done == SIM_NEVER || q->done > v->last_done)
			v->last_done = q->done;
		if (in->stop.on && s->stop_scope)
			stop_count(in, q);
	}
	if (!in->sc->output.requests)
		return;
	uint8_t st = q->state == RQ_DONE       ? REQUEST_COMPLETED
		     : q->state == RQ_REJECTED ? REQUEST_REJECTED
					       : REQUEST_UNFINISHED;
	GP_GROW(v->rows, v->cap_rows, v->n_rows + 1);
	struct request_record *row = &v->rows[v->n_rows++];
	memset(row, 0, sizeof *row); /* padding too: rows compare whole */
	row->request_id = q->seq;
	row->workload = s->w;
	row->prompt_tokens = q->prompt;
	row->output_tokens = q->output;
	row->status = st;
	row->slo_met = q->slo_met;
	row->verified = q->verified;
	row->arrival = q->arrival;
	row->first_token = q->first;
	row->done = q->state == RQ_DONE ? q->done : SIM_NEVER;
}

void infer_served_free(struct served *v)
{
	samples_free(&v->ttft);
	samples_free(&v->tpot);
	samples_free(&v->e2e);
	samples_free(&v->queue);
	free(v->rows);
	memset(v, 0, sizeof *v);
}

/* --- figures ------------------------------------------------------------------- */

/* The figures of a run of services together (one, or all of them). */
struct figures {
	struct samples_view ttft, tpot, e2e, queue;
	int64_t submitted, completed, rejected, tokens, slo_met, preemptions;
	sim_time first_arrival, last_done;
	double tok_wait, busy_us, ready_us, energy_j;
	int64_t verified;
	bool slo_holds;
};

static void figures_init(struct figures *f, const struct infer *in, const struct service *svcs,
			 size_t n)
{
	memset(f, 0, sizeof *f);
	f->first_arrival = f->last_done = SIM_NEVER;
	sim_time end = in->h.engine->now;
	const struct samples **parts = gp_xcalloc(4 * n + 1, sizeof *parts);
	for (size_t i = 0; i < n; i++) {
		const struct service *s = &svcs[i];
		const struct served *v = &s->served;
		parts[i] = &v->ttft, parts[n + i] = &v->tpot;
		parts[2 * n + i] = &v->e2e, parts[3 * n + i] = &v->queue;
		f->submitted += v->submitted;
		f->completed += v->completed;
		f->rejected += v->rejected;
		f->tokens += v->tokens;
		f->slo_met += v->slo_met;
		f->preemptions += s->preemptions;
		f->verified += s->verified;
		f->tok_wait += v->tok_wait;
		if (v->first_arrival < f->first_arrival) /* SIM_NEVER, none, is the latest */
			f->first_arrival = v->first_arrival;
		if (v->last_done != SIM_NEVER &&
		    (f->last_done == SIM_NEVER || v->last_done > f->last_done))
			f->last_done = v->last_done;
		for (int32_t k = 0; k < s->n_reps; k++) {
			const struct replica *r = &in->reps[s->first_rep + k];
			double busy = r->busy ? (double)(end - r->iter_start) : 0;
			double ready =
				r->ready_since != SIM_NEVER ? (double)(end - r->ready_since) : 0;
			f->busy_us += r->busy_us + busy;
			f->ready_us += r->ready_us + ready;
			f->energy_j += r->energy_j + (busy * r->busy_w + ready * r->idle_w) * 1e-6;
		}
	}
	samples_view_init(&f->ttft, parts, n);
	samples_view_init(&f->tpot, parts + n, n);
	samples_view_init(&f->e2e, parts + 2 * n, n);
	samples_view_init(&f->queue, parts + 3 * n, n);
	free(parts);
}

static void figures_free(struct figures *f)
{
	samples_view_free(&f->ttft);
	samples_view_free(&f->tpot);
	samples_view_free(&f->e2e);
	samples_view_free(&f->queue);
}

/* The p-th percentile (0 to 100) of a view; NaN without values. */
static double pct(const struct samples_view *v, double p)
{
	return samples_view_quantile(v, p / 100);
}

/* Whether each SLO bound holds at its percentile over all submitted requests. */
static bool slo_holds(const struct slo_spec *slo, const struct figures *f)
{
	if (!f->submitted)
		return true;
	double n = (double)f->submitted, done = (double)f->completed;
	/* Requests that did not complete are later than any bound. */
	double missing = (n - done) / n * 100;
	const sim_time bounds[] = {slo->ttft, slo->e2e};
	const struct samples_view *values[] = {&f->ttft, &f->e2e};
	for (size_t b = 0; b < 2; b++) {
		if (!bounds[b])
			continue;
		if (missing > 100 - slo->percentile)
			return false;
		/* The percentile over n when the missing ones sort last. */
		if (pct(values[b], fmin(100, slo->percentile * n / done)) > sim_seconds(bounds[b]))
			return false;
	}
	if (slo->tpot && samples_view_count(&f->tpot) &&
	    pct(&f->tpot, slo->percentile) > sim_seconds(slo->tpot))
		return false;
	return true;
}

static void write_figures(struct results *out, const char *scope, struct figures *f)
{
	double span =
		f->last_done != SIM_NEVER ? sim_seconds(f->last_done - f->first_arrival) : NAN;
	double done = (double)f->completed;
	results_add_metric(out, scope, METRIC_REQUESTS_SUBMITTED, (double)f->submitted);
	results_add_metric(out, scope, METRIC_REQUESTS_COMPLETED, done);
	results_add_metric(out, scope, METRIC_REQUESTS_REJECTED, (double)f->rejected);
	results_add_metric(out, scope, METRIC_REQUESTS_UNFINISHED,
			   (double)(f->submitted - f->rejected) - done);
	results_add_metric(out, scope, METRIC_THROUGHPUT_RPS, span > 0 ? done / span : NAN);
	results_add_metric(out, scope, METRIC_TOKENS_PER_S,
			   span > 0 ? (double)f->tokens / span : NAN);
	results_add_metric(out, scope, METRIC_TTFT_P50_S, pct(&f->ttft, 50));
	results_add_metric(out, scope, METRIC_TTFT_P95_S, pct(&f->ttft, 95));
	results_add_metric(out, scope, METRIC_TTFT_P99_S, pct(&f->ttft, 99));
	results_add_metric(out, scope, METRIC_TTFT_MEAN_S, samples_view_mean(&f->ttft));
	results_add_metric(out, scope, METRIC_TPOT_P50_S, pct(&f->tpot, 50));
	results_add_metric(out, scope, METRIC_TPOT_P95_S, pct(&f->tpot, 95));
	results_add_metric(out, scope, METRIC_TPOT_P99_S, pct(&f->tpot, 99));
	results_add_metric(out, scope, METRIC_E2E_P50_S, pct(&f->e2e, 50));
	results_add_metric(out, scope, METRIC_E2E_P99_S, pct(&f->e2e, 99));
	results_add_metric(out, scope, METRIC_E2E_MEAN_S, samples_view_mean(&f->e2e));
	results_add_metric(out, scope, METRIC_REQUEST_QUEUE_MEAN_S, samples_view_mean(&f->queue));
	results_add_metric(out, scope, METRIC_TOKENIZE_WAIT_MEAN_S,
			   samples_view_count(&f->queue)
				   ? f->tok_wait / (double)samples_view_count(&f->queue)
				   : NAN);
	results_add_metric(out, scope, METRIC_SLO_ATTAINMENT_PCT,
			   f->submitted ? 100.0 * (double)f->slo_met / (double)f->submitted : NAN);
	results_add_metric(out, scope, METRIC_SLO_MET, f->slo_holds ? 1 : 0);
	results_add_metric(out, scope, METRIC_PREEMPTIONS, (double)f->preemptions);
	results_add_metric(out, scope, METRIC_DUTY_CYCLE_PCT,
			   f->ready_us > 0 ? 100 * f->busy_us / f->ready_us : NAN);
	/* Energy of the replicas' GPUs while serving (docs/gpus.md). */
	double wh = f->energy_j / 3600;
	results_add_metric(out, scope, METRIC_ENERGY_KWH, wh / 1000);
	results_add_metric(out, scope, METRIC_ENERGY_PER_1K_TOKENS_WH,
			   f->tokens > 0 ? wh / (double)f->tokens * 1000 : NAN);
	results_add_metric(out, scope, METRIC_ENERGY_PER_VERIFIED_RESULT_WH,
			   f->verified > 0 ? wh / (double)f->verified : NAN);
	results_add_metric(out, scope, METRIC_TOKENS_PER_JOULE,
			   f->energy_j > 0 ? (double)f->tokens / f->energy_j : NAN);
	/* The workload's cost with its share of idle, as $/verified counts it
	 * (at scope all cost_total is already the bill, idle included). */
	double cost = results_or(out, scope, METRIC_COST_TOTAL, NAN);
	if (strcmp(scope, "all"))
		cost += results_or(out, scope, METRIC_COST_IDLE, NAN);
	results_add_metric(out, scope, METRIC_COST_PER_MILLION_TOKENS,
			   f->tokens > 0 && !isnan(cost) ? cost / (double)f->tokens * 1e6 : NAN);
}

/* Request rows in the order of the workloads and, within one, of arrival. */
static int cmp_row(const void *a, const void *b)
{
	const struct request_record *x = a, *y = b;
	if (x->workload != y->workload)
		return x->workload < y->workload ? -1 : 1;
	return (x->request_id > y->request_id) - (x->request_id < y->request_id);
}

static void request_rows(struct infer *in, struct results *out)
{
	size_t n = 0;
	for (size_t i = 0; i < in->n_svcs; i++)
		n += in->svcs[i].served.n_rows;
	out->requests = gp_xcalloc(n ? n : 1, sizeof *out->requests);
	out->n_requests = n;
	n = 0;
	for (size_t i = 0; i < in->n_svcs; i++) {
		const struct served *v = &in->svcs[i].served;
		if (v->n_rows)
			memcpy(out->requests + n, v->rows, v->n_rows * sizeof *v->rows);
		n += v->n_rows;
	}
	qsort(out->requests, n, sizeof *out->requests, cmp_row);
}

/* The service's SLO bounds, for reports that draw them. */
static void write_slo(struct results *out, const char *scope, const struct slo_spec *slo)
{
	if (slo->ttft)
		results_add_metric(out, scope, METRIC_SLO_TTFT_S, sim_seconds(slo->ttft));
	if (slo->tpot)
		results_add_metric(out, scope, METRIC_SLO_TPOT_S, sim_seconds(slo->tpot));
}

/* Sums metric name over the groups' scopes into the service's scope. */
static void sum_groups(struct results *out, const struct service *g, enum metric_id id)
{
	double sum = 0;
	for (int32_t k = 0; k < g->is->n_groups; k++)
		sum += results_or(out, g[k].ws->name, id, NAN); /* every group has it */
	results_add_metric(out, g->is->service, id, sum);
}

/* The figures of routed service whose groups start at g (contiguous, as their
 * items: scenario_route.c), under the service's name: every request of every
 * group, the GPUs and cost of all of them; its SLO is judged over all its
 * requests.  Returns whether it holds. */
static bool route_results(struct infer *in, const struct service *g, struct results *out)
{
	const char *scope = g->is->service;
	sum_groups(out, g, METRIC_PEAK_ALLOCATED_GPUS);
	sum_groups(out, g, METRIC_GPU_HOURS_ALLOCATED);
	sum_groups(out, g, METRIC_COST_TOTAL);
	sum_groups(out, g, METRIC_COST_IDLE);
	struct figures f;
	figures_init(&f, in, g, (size_t)g->is->n_groups);
	f.slo_holds = slo_holds(&g->is->slo, &f);
	bool holds = f.slo_holds;
	write_figures(out, scope, &f);
	figures_free(&f);
	write_slo(out, scope, &g->is->slo);
	return holds;
}

void infer_results(struct infer *in, struct results *out)
{
	if (!in)
		return;
	/* the requests still in flight leave now (this is the run's last call) */
	for (size_t i = 0; i < in->n_svcs; i++) {
		struct service *s = &in->svcs[i];
		for (size_t k = 0; k < s->n_reqs; k++)
			if (s->reqs[k].state == RQ_WAITING || s->reqs[k].state == RQ_RUNNING)
				infer_served_add(in, &in->svcs[s->front], &s->reqs[k]);
	}
	bool all_hold = true;
	for (size_t i = 0; i < in->n_svcs; i++) {
		const struct service *s = &in->svcs[i];
		if (s->front != (int32_t)i)
			continue; /* decode workers: reported with their prefill workers */
		struct figures f;
		figures_init(&f, in, s, s->decode >= 0 ? 2 : 1); /* the decode service is next */
		f.slo_holds = slo_holds(&s->is->slo, &f);
		/* a routed service's goal is judged over all its requests (below) */
		all_hold = all_hold && (f.slo_holds || s->is->service);
		write_figures(out, s->ws->name, &f);
		figures_free(&f);
		write_slo(out, s->ws->name, &s->is->slo);
		results_add_metric(out, s->ws->name, METRIC_REPLICAS_EVICTED, (double)s->evicted);
		double wait = s->wait_max; /* and the replicas still waiting at the end */
		for (int32_t k = 0; k < s->n_reps; k++) {
			const struct replica *r = &in->reps[s->first_rep + k];
			if (r->state == RS_PENDING)
				wait = fmax(wait, sim_seconds(out->sim_end - r->pending_since));
		}
		results_add_metric(out, s->ws->name, METRIC_REPLICA_WAIT_MAX_S, wait);
		if (s->decode >= 0)
			infer_disagg_results(in, out, s);
	}
	for (size_t i = 0; i < in->n_svcs;) {
		const struct inference_spec *is = in->svcs[i].is;
		if (!is->service) {
			i++;
			continue;
		}
		assert(is->group == 0 && i + (size_t)is->n_groups <= in->n_svcs);
		all_hold = route_results(in, &in->svcs[i], out) && all_hold;
		i += (size_t)is->n_groups;
	}
	struct figures all; /* every service's requests together */
	figures_init(&all, in, in->svcs, in->n_svcs);
	all.slo_holds = all_hold;
	write_figures(out, "all", &all);
	figures_free(&all);
	if (in->sc->output.requests)
		request_rows(in, out);
}
