/*
 * firstcut_disagg.c - the first cut of a disaggregated service (firstcut.h):
 * prefill workers and decode workers sized separately, as infer_disagg.c
 * simulates them.
 *
 * Prefill workers, per GPU of a TP group on the roofline: a worker prefills
 * full token budgets back to back, theta = budget / t(budget / P prompts of
 * P tokens) tokens/s, so a request of P tokens holds it S = P / theta (the
 * prompts' cs^2 = exp(sigma^2) - 1).  The requests are spread evenly over n
 * workers, each an M/G/1 queue in tokens at rho = lambda / n x S; its wait
 * at percentile p is the M/M/1 tail with the Allen-Cunneen factor,
 *   t_w = S / (1 - rho) x ln(rho / (1 - p)) x (ca^2 + cs^2) / 2,
 * 0 when rho <= 1 - p.  TTFT at p = t_w + the tail prompt's prefill (alone,
 * in chunks of the budget) + its KV transfer (latency + tail x KV bytes per
 * token per GPU / bandwidth) + a decode worker's step and a half (the one
 * in flight, then the request's first) at the batch it holds at the
 * percentile (below).  The fewest workers whose TTFT
 * holds at a utilisation of at most 95 %.
 * Decode workers: each decodes B sequences together, B = max_batch, the
 * sequences of context P + O/2 its KV cache holds, and the largest batch
 * whose step t_d(B) meets the TPOT bound; a request holds a slot for O
 * steps, so mu = B / (O x t_d(B)); the fewest workers at a utilisation of
 * at most 95 % whose sequences at the percentile stay within B: a worker
 * holds a Poisson number of them (M/G/inf) of mean a = lambda / n x O x
 * t_d(B), and a + z_p sqrt(a) <= B (normal approximation; per step, which
 * is stricter than a request's mean TPOT).
 * The parts of the TTFT are added, which overstates the tail: the search
 * confirms the sizes by simulation.
 */
#include "gpuplan/firstcut.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

#define MAX_UTILISATION 0.95
#define MAX_WORKERS     1000000

/* The role's TP degree (s->tp, else the smallest that fits a typical request),
 * its roofline and the sequences of `context` tokens its KV cache holds. */
static enum firstcut_verdict role_init(const struct firstcut_service *s, struct roofline *r,
				       int *tp, int64_t *fits)
{
	double cap = s->gpu->memory_bytes * s->memory_fraction;
	int64_t typical = (int64_t)ceil(s->prompt_mean + s->output_mean);
	*tp = s->tp ? s->tp : footprint_min_tp(s->model, s->weights, s->kv, cap, typical);
	if (!*tp || !footprint_tp_valid(s->model, *tp))
		return FIRSTCUT_NO_FIT;
	struct footprint fp;
	footprint_compute(s->model, s->weights, s->kv, *tp, cap, &fp);
	*fits = footprint_max_sequences(&fp, typical);
	if (*fits < 1)
		return FIRSTCUT_NO_FIT;
	roofline_init(r, s->model, s->weights, s->kv, s->gpu, NULL, GPU_SHARE_WHOLE, *tp);
	return FIRSTCUT_OK;
}

/* The decode workers: batch, step, capacity and count. */
static enum firstcut_verdict size_decode(const struct firstcut_service *s, const struct roofline *r,
					 int64_t fits, struct firstcut_disagg *out)
{
	double context = s->prompt_mean + s->output_mean / 2;
	if (s->tpot_slo_s > 0 && roofline_decode_time(r, 1, context) > s->tpot_slo_s)
		return FIRSTCUT_TPOT;
	int b = s->max_batch < fits ? s->max_batch : (int)fits;
	while (b > 1 && s->tpot_slo_s > 0 && roofline_decode_time(r, b, context) > s->tpot_slo_s)
		b = b * 7 / 8 < b - 1 ? b * 7 / 8 : b - 1;
	out->batch = b;
	out->decode_step_s = roofline_decode_time(r, b, context);
	out->decode_capacity_rps = b / (s->output_mean * out->decode_step_s);
	/* The sequences a worker holds are Poisson (M/G/inf) of mean a = lambda / n x
	 * O x t_d(B); at the percentile (normal approximation) they stay within B. */
	double z = gsl_cdf_ugaussian_Pinv(s->percentile / 100);
	int n = (int)ceil(s->rate / (out->decode_capacity_rps * MAX_UTILISATION));
	for (n = n < 1 ? 1 : n; n < MAX_WORKERS; n++) {
		double a = s->rate / n * s->output_mean * out->decode_step_s;
		if (a + z * sqrt(a) <= b)
			break;
	}
	out->decode_replicas = n;
	/* the step a new request joins: at the batch a worker holds at the percentile */
	double a = s->rate / n * s->output_mean * out->decode_step_s;
	double held = ceil(a + z * sqrt(a));
	out->first_step_s = roofline_decode_time(r, held < b ? held : b, context);
	out->decode_utilisation = s->rate / out->decode_replicas / out->decode_capacity_rps;
	return FIRSTCUT_OK;
}

/* The tail prompt alone on a prefill worker, in chunks of the budget. */
static double tail_prefill(const struct firstcut_service *s, const struct roofline *r)
{
	double t = 0, done = 0, budget = s->max_batched_tokens;
	for (double left = s->prompt_tail; left > 0;) {
		double chunk = left < budget ? left : budget;
		t += roofline_prefill_time(r, chunk, done);
		left -= chunk;
		done += chunk;
	}
	return t;
}

/* The TTFT tail with n prefill workers (+inf when saturated); fills out. */
static double ttft_at(const struct firstcut_service *s, double service_s, double cs2, int n,
		      struct firstcut_disagg *out)
{
	double rho = s->rate / n * service_s, q = 1 - s->percentile / 100;
	double ca2 = s->arrival_cv2 > 0 ? s->arrival_cv2 : 1;
	out->prefill_replicas = n;
	out->prefill_utilisation = rho;
	if (rho >= 1)
		return out->ttft_tail_s = INFINITY;
	out->wait_tail_s = rho > q ? service_s / (1 - rho) * log(rho / q) * (ca2 + cs2) / 2 : 0;
	out->ttft_tail_s = out->wait_tail_s + out->prefill_tail_s + out->transfer_tail_s +
			   1.5 * out->first_step_s;
	return out->ttft_tail_s;
}

enum firstcut_verdict firstcut_disagg_size(const struct firstcut_service *s,
					   double link_bytes_per_s, double link_latency_s,
					   struct firstcut_disagg *out)
{
	*out = (struct firstcut_disagg){0};
	struct roofline r;
	int64_t fits;
	if ((out->verdict = role_init(s, &r, &out->tp, &fits)) != FIRSTCUT_OK)
		return out->verdict;
	if ((out->verdict = size_decode(s, &r, fits, out)) != FIRSTCUT_OK)
		return out->verdict;
	/* a full budget is budget / P whole prompts, each attending to its own keys */
	double budget = s->max_batched_tokens, k = budget / s->prompt_mean;
	struct roofline_work w = ROOFLINE_WORK_NONE;
	roofline_add_prefill(&w, s->prompt_mean, 0);
	w.tokens *= k, w.keys *= k, w.kv_read *= k;
	double theta = budget / roofline_iteration_time(&r, &w);
	out->prefill_capacity_rps = theta / s->prompt_mean;
	out->prefill_tail_s = tail_prefill(s, &r);
	if (!(link_bytes_per_s > 0)) /* nvlink: the GPU type's, as its TP peers use it */
		link_bytes_per_s = r.link_bandwidth, link_latency_s = r.link_latency_s;
	out->transfer_tail_s =
		link_latency_s + s->prompt_tail * r.kv_bytes_per_token / link_bytes_per_s;
	if (s->ttft_slo_s > 0 &&
	    out->prefill_tail_s + out->transfer_tail_s + 1.5 * out->first_step_s > s->ttft_slo_s)
		return out->verdict = FIRSTCUT_TAIL_PROMPT;
	double service_s = 1 / out->prefill_capacity_rps, cs2 = s->prompt_cv2;
	int n = (int)ceil(s->rate * service_s / MAX_UTILISATION);
	for (n = n < 1 ? 1 : n; n < MAX_WORKERS; n++) {
		double t = ttft_at(s, service_s, cs2, n, out);
		if (out->prefill_utilisation <= MAX_UTILISATION &&
		    (s->ttft_slo_s <= 0 || t <= s->ttft_slo_s))
			break;
	}
	out->gpus = (out->prefill_replicas + out->decode_replicas) * out->tp;
	return out->verdict;
}
