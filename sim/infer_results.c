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

/* --- what a request leaves behind ------------------------------------------------ */

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

static void write_figures(struct results *out, const char *scope, struct figures *f,
			  const char *money_unit)
{
	double span =
		f->last_done != SIM_NEVER ? sim_seconds(f->last_done - f->first_arrival) : NAN;
	double done = (double)f->completed;
	results_add_metric(out, scope, "requests_submitted", (double)f->submitted, "requests");
	results_add_metric(out, scope, "requests_completed", done, "requests");
	results_add_metric(out, scope, "requests_rejected", (double)f->rejected, "requests");
	results_add_metric(out, scope, "requests_unfinished",
			   (double)(f->submitted - f->rejected) - done, "requests");
	results_add_metric(out, scope, "throughput_rps", span > 0 ? done / span : NAN, "rps");
	results_add_metric(out, scope, "tokens_per_s", span > 0 ? (double)f->tokens / span : NAN,
			   "tokens/s");
	results_add_metric(out, scope, "ttft_p50_s", pct(&f->ttft, 50), "s");
	results_add_metric(out, scope, "ttft_p95_s", pct(&f->ttft, 95), "s");
	results_add_metric(out, scope, "ttft_p99_s", pct(&f->ttft, 99), "s");
	results_add_metric(out, scope, "ttft_mean_s", samples_view_mean(&f->ttft), "s");
	results_add_metric(out, scope, "tpot_p50_s", pct(&f->tpot, 50), "s");
	results_add_metric(out, scope, "tpot_p95_s", pct(&f->tpot, 95), "s");
	results_add_metric(out, scope, "tpot_p99_s", pct(&f->tpot, 99), "s");
	results_add_metric(out, scope, "e2e_p50_s", pct(&f->e2e, 50), "s");
	results_add_metric(out, scope, "e2e_p99_s", pct(&f->e2e, 99), "s");
	results_add_metric(out, scope, "e2e_mean_s", samples_view_mean(&f->e2e), "s");
	results_add_metric(out, scope, "request_queue_mean_s", samples_view_mean(&f->queue), "s");
	results_add_metric(out, scope, "tokenize_wait_mean_s",
			   samples_view_count(&f->queue)
				   ? f->tok_wait / (double)samples_view_count(&f->queue)
				   : NAN,
			   "s");
	results_add_metric(out, scope, "slo_attainment_pct",
			   f->submitted ? 100.0 * (double)f->slo_met / (double)f->submitted : NAN,
			   "pct");
	results_add_metric(out, scope, "slo_met", f->slo_holds ? 1 : 0, "bool");
	results_add_metric(out, scope, "preemptions", (double)f->preemptions, "count");
	results_add_metric(out, scope, "duty_cycle_pct",
			   f->ready_us > 0 ? 100 * f->busy_us / f->ready_us : NAN, "pct");
	/* Energy of the replicas' GPUs while serving (docs/gpus.md). */
	double wh = f->energy_j / 3600;
	results_add_metric(out, scope, "energy_kwh", wh / 1000, "kwh");
	results_add_metric(out, scope, "energy_per_1k_tokens_wh",
			   f->tokens > 0 ? wh / (double)f->tokens * 1000 : NAN, "wh");
	results_add_metric(out, scope, "energy_per_verified_result_wh",
			   f->verified > 0 ? wh / (double)f->verified : NAN, "wh");
	results_add_metric(out, scope, "tokens_per_joule",
			   f->energy_j > 0 ? (double)f->tokens / f->energy_j : NAN, "tokens/j");
	/* The workload's cost with its share of idle, as $/verified counts it
	 * (at scope all cost_total is already the bill, idle included). */
	double cost = results_metric(out, scope, "cost_total");
	if (strcmp(scope, "all"))
		cost += results_metric(out, scope, "cost_idle");
	results_add_metric(out, scope, "cost_per_million_tokens",
			   f->tokens > 0 && !isnan(cost) ? cost / (double)f->tokens * 1e6 : NAN,
			   money_unit);
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
		results_add_metric(out, scope, "slo_ttft_s", sim_seconds(slo->ttft), "s");
	if (slo->tpot)
		results_add_metric(out, scope, "slo_tpot_s", sim_seconds(slo->tpot), "s");
}

/* Sums metric name over the groups' scopes into the service's scope. */
static void sum_groups(struct results *out, const struct service *g, const char *name,
		       const char *unit)
{
	double sum = 0;
	for (int32_t k = 0; k < g->is->n_groups; k++)
		sum += results_metric(out, g[k].ws->name, name);
	results_add_metric(out, g->is->service, name, sum, unit);
}

/* The figures of routed service whose groups start at g (contiguous, as their
 * items: scenario_route.c), under the service's name: every request of every
 * group, the GPUs and cost of all of them; its SLO is judged over all its
 * requests.  Returns whether it holds. */
static bool route_results(struct infer *in, const struct service *g, struct results *out)
{
	const char *scope = g->is->service, *money = scenario_money_unit(in->sc);
	sum_groups(out, g, "peak_allocated_gpus", "gpus");
	sum_groups(out, g, "gpu_hours_allocated", "gpu_hours");
	sum_groups(out, g, "cost_total", money);
	sum_groups(out, g, "cost_idle", money);
	struct figures f;
	figures_init(&f, in, g, (size_t)g->is->n_groups);
	f.slo_holds = slo_holds(&g->is->slo, &f);
	bool holds = f.slo_holds;
	write_figures(out, scope, &f, money);
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
		write_figures(out, s->ws->name, &f, scenario_money_unit(in->sc));
		figures_free(&f);
		write_slo(out, s->ws->name, &s->is->slo);
		results_add_metric(out, s->ws->name, "replicas_evicted", (double)s->evicted,
				   "count");
		double wait = s->wait_max; /* and the replicas still waiting at the end */
		for (int32_t k = 0; k < s->n_reps; k++) {
			const struct replica *r = &in->reps[s->first_rep + k];
			if (r->state == RS_PENDING)
				wait = fmax(wait, sim_seconds(out->sim_end - r->pending_since));
		}
		results_add_metric(out, s->ws->name, "replica_wait_max_s", wait, "s");
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
	write_figures(out, "all", &all, scenario_money_unit(in->sc));
	figures_free(&all);
	if (in->sc->output.requests)
		request_rows(in, out);
}
