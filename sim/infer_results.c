/*
 * infer_results.c - an inference run's figures (infer.h): TTFT, TPOT and
 * end-to-end percentiles, SLO attainment, throughput and cost per service
 * and for all, and the request rows.
 */
#include "gpuplan/infer.h"
#include "gpuplan/sort.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_int.h"

/* --- results ---------------------------------------------------------------- */

/* The p-th percentile of v[0..n) as gsl_stats_quantile_from_sorted_data
 * defines it (linear between order statistics); sorts v. */
static double pct(double *v, size_t n, double p)
{
	if (!n)
		return NAN;
	size_t k = 1;
	while (k < n && v[k - 1] <= v[k])
		k++;
	if (k < n) /* sorted by the previous percentile of the same figures */
		sort_doubles(v, n);
	double at = (double)(n - 1) * p / 100;
	size_t i = (size_t)floor(at);
	double frac = at - (double)i;
	return frac == 0 || i + 1 >= n ? v[i] : v[i] + frac * (v[i + 1] - v[i]);
}

static double mean_of(const double *v, size_t n) { return n ? gsl_stats_mean(v, 1, n) : NAN; }

/* Latencies of the completed requests of one scope, plus what the SLO
 * check needs: each bound at its percentile, with requests that failed or
 * never finished counting as infinitely late. */
struct figures {
	double *ttft, *tpot, *e2e, *queue;
	size_t n_done, n_tpot, n_queue;
	int64_t submitted, rejected, tokens, slo_met, verified, preemptions;
	sim_time first_arrival, last_done;
	double busy_us, ready_us;
	bool slo_holds;
	double tok_wait; /* seconds admitted requests waited for a tokenizer worker */
};

static void add_service(struct infer *in, const struct service *s, struct figures *f)
{
	for (size_t i = 0; i < s->n_reqs; i++) {
		const struct req *q = &s->reqs[i];
		f->submitted++;
		if (f->first_arrival == SIM_NEVER || q->arrival < f->first_arrival)
			f->first_arrival = q->arrival;
		f->rejected += q->state == RQ_REJECTED;
		f->slo_met += q->slo_met;
		f->verified += q->verified;
		if (q->admitted != SIM_NEVER) {
			f->queue[f->n_queue++] = sim_seconds(q->admitted - q->ready);
			f->tok_wait +=
				fmax(0, sim_seconds(q->ready - q->arrival - s->is->tokenize));
		}
		if (q->state != RQ_DONE)
			continue;
		f->tokens += q->output;
		f->ttft[f->n_done] = sim_seconds(q->first - q->arrival);
		f->e2e[f->n_done++] = sim_seconds(q->done - q->arrival);
		if (q->output > 1)
			f->tpot[f->n_tpot++] = sim_seconds(q->done - q->first) / (q->output - 1);
		if (f->last_done == SIM_NEVER || q->done > f->last_done)
			f->last_done = q->done;
	}
	f->preemptions += s->preemptions;
	sim_time end = in->h.engine->now;
	for (int32_t k = 0; k < s->n_reps; k++) {
		const struct replica *r = &in->reps[s->first_rep + k];
		f->busy_us += r->busy_us + (r->busy ? (double)(end - r->iter_start) : 0);
		f->ready_us += r->ready_us +
			       (r->ready_since != SIM_NEVER ? (double)(end - r->ready_since) : 0);
	}
}

/* Whether each SLO bound holds at its percentile over all submitted requests. */
static bool slo_holds(const struct slo_spec *slo, const struct figures *f)
{
	size_t n = (size_t)f->submitted;
	if (!n)
		return true;
	/* Requests that did not complete are later than any bound. */
	double missing = (double)(n - f->n_done) / (double)n * 100;
	const sim_time bounds[] = {slo->ttft, slo->e2e};
	const double *values[] = {f->ttft, f->e2e};
	for (size_t b = 0; b < 2; b++) {
		if (!bounds[b])
			continue;
		if (missing > 100 - slo->percentile)
			return false;
		/* The percentile over n when the missing ones sort last. */
		double at = pct((double *)values[b], f->n_done,
				fmin(100, slo->percentile * (double)n / (double)f->n_done));
		if (at > sim_seconds(bounds[b]))
			return false;
	}
	if (slo->tpot && f->n_tpot &&
	    pct(f->tpot, f->n_tpot, slo->percentile) > sim_seconds(slo->tpot))
		return false;
	return true;
}

static void write_figures(struct results *out, const char *scope, struct figures *f)
{
	double span =
		f->last_done != SIM_NEVER ? sim_seconds(f->last_done - f->first_arrival) : NAN;
	double done = (double)f->n_done;
	results_add_metric(out, scope, "requests_submitted", (double)f->submitted, "requests");
	results_add_metric(out, scope, "requests_completed", done, "requests");
	results_add_metric(out, scope, "requests_rejected", (double)f->rejected, "requests");
	results_add_metric(out, scope, "requests_unfinished",
			   (double)(f->submitted - f->rejected) - done, "requests");
	results_add_metric(out, scope, "throughput_rps", span > 0 ? done / span : NAN, "rps");
	results_add_metric(out, scope, "tokens_per_s", span > 0 ? (double)f->tokens / span : NAN,
			   "tokens/s");
	results_add_metric(out, scope, "ttft_p50_s", pct(f->ttft, f->n_done, 50), "s");
	results_add_metric(out, scope, "ttft_p99_s", pct(f->ttft, f->n_done, 99), "s");
	results_add_metric(out, scope, "ttft_mean_s", mean_of(f->ttft, f->n_done), "s");
	results_add_metric(out, scope, "tpot_p50_s", pct(f->tpot, f->n_tpot, 50), "s");
	results_add_metric(out, scope, "tpot_p99_s", pct(f->tpot, f->n_tpot, 99), "s");
	results_add_metric(out, scope, "e2e_p50_s", pct(f->e2e, f->n_done, 50), "s");
	results_add_metric(out, scope, "e2e_p99_s", pct(f->e2e, f->n_done, 99), "s");
	results_add_metric(out, scope, "e2e_mean_s", mean_of(f->e2e, f->n_done), "s");
	results_add_metric(out, scope, "request_queue_mean_s", mean_of(f->queue, f->n_queue), "s");
	results_add_metric(out, scope, "tokenize_wait_mean_s",
			   f->n_queue ? f->tok_wait / (double)f->n_queue : NAN, "s");
	results_add_metric(out, scope, "slo_attainment_pct",
			   f->submitted ? 100.0 * (double)f->slo_met / (double)f->submitted : NAN,
			   "pct");
	results_add_metric(out, scope, "slo_met", f->slo_holds ? 1 : 0, "bool");
	results_add_metric(out, scope, "preemptions", (double)f->preemptions, "count");
	results_add_metric(out, scope, "duty_cycle_pct",
			   f->ready_us > 0 ? 100 * f->busy_us / f->ready_us : NAN, "pct");
	/* The workload's cost with its share of idle, as $/verified counts it
	 * (at scope all cost_total is already the bill, idle included). */
	double cost = results_metric(out, scope, "cost_total");
	if (strcmp(scope, "all"))
		cost += results_metric(out, scope, "cost_idle");
	results_add_metric(out, scope, "cost_per_million_tokens",
			   f->tokens > 0 && !isnan(cost) ? cost / (double)f->tokens * 1e6 : NAN,
			   "usd");
}

static void request_rows(struct infer *in, struct results *out)
{
	size_t n = 0, k = 0;
	for (size_t i = 0; i < in->n_svcs; i++)
		n += in->svcs[i].n_reqs;
	out->requests = gp_xcalloc(n ? n : 1, sizeof *out->requests);
	out->n_requests = n;
	for (size_t i = 0; i < in->n_svcs; i++) {
		const struct service *s = &in->svcs[i];
		for (size_t j = 0; j < s->n_reqs; j++) {
			const struct req *q = &s->reqs[j];
			uint8_t st = q->state == RQ_DONE       ? REQUEST_COMPLETED
				     : q->state == RQ_REJECTED ? REQUEST_REJECTED
							       : REQUEST_UNFINISHED;
			out->requests[k++] = (struct request_record){
				(int64_t)j,  s->w,
				q->prompt,   q->output,
				st,          q->slo_met,
				q->verified, q->arrival,
				q->first,    q->state == RQ_DONE ? q->done : SIM_NEVER};
		}
	}
}

/* The service's SLO bounds, for reports that draw them. */
static void write_slo(struct results *out, const char *scope, const struct slo_spec *slo)
{
	if (slo->ttft)
		results_add_metric(out, scope, "slo_ttft_s", sim_seconds(slo->ttft), "s");
	if (slo->tpot)
		results_add_metric(out, scope, "slo_tpot_s", sim_seconds(slo->tpot), "s");
}

void infer_results(struct infer *in, struct results *out)
{
	if (!in)
		return;
	size_t total = 0;
	for (size_t i = 0; i < in->n_svcs; i++)
		total += in->svcs[i].n_reqs;
	size_t cap = total ? total : 1;
	struct figures all = {gp_xmalloc(cap * sizeof(double)),
			      gp_xmalloc(cap * sizeof(double)),
			      gp_xmalloc(cap * sizeof(double)),
			      gp_xmalloc(cap * sizeof(double)),
			      0,
			      0,
			      0,
			      0,
			      0,
			      0,
			      0,
			      0,
			      0,
			      SIM_NEVER,
			      SIM_NEVER,
			      0,
			      0,
			      true,
			      0};
	for (size_t i = 0; i < in->n_svcs; i++) {
		const struct service *s = &in->svcs[i];
		struct figures f = all;
		f.n_done = f.n_tpot = f.n_queue = 0;
		f.submitted = f.rejected = f.tokens = f.slo_met = f.verified = f.preemptions = 0;
		f.first_arrival = f.last_done = SIM_NEVER;
		f.busy_us = f.ready_us = f.tok_wait = 0;
		add_service(in, s, &f);
		f.slo_holds = slo_holds(&s->is->slo, &f);
		all.slo_holds = all.slo_holds && f.slo_holds;
		write_figures(out, s->ws->name, &f);
		write_slo(out, s->ws->name, &s->is->slo);
		results_add_metric(out, s->ws->name, "replicas_evicted", (double)s->evicted,
				   "count");
	}
	/* "all": every service's requests together. */
	bool holds = all.slo_holds;
	for (size_t i = 0; i < in->n_svcs; i++)
		add_service(in, &in->svcs[i], &all);
	all.slo_holds = holds;
	write_figures(out, "all", &all);
	free(all.ttft);
	free(all.tpot);
	free(all.e2e);
	free(all.queue);
	if (in->sc->output.requests)
		request_rows(in, out);
}
