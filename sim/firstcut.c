/*
 * firstcut.c - the first cut of a service's size (firstcut.h).
 *
 * One replica, per GPU of its TP group, on the roofline (roofline.c):
 *   batch B     the most sequences it decodes together: max_batch, the
 *               sequences of mean context its KV cache holds, and the largest
 *               batch whose decode step stays within the TPOT bound
 *   t_d(B)      one decode step of B sequences at the mean context (prompt +
 *               half the output)
 *   t_f(B)      a full iteration: B decodes plus the prefill tokens that keep
 *               the batch full, x = B x P / O (P, O: mean prompt and output
 *               tokens), at most the token budget less B (chunked prefill:
 *               prefill chunks ride in the decode iterations, and on a
 *               memory-bound step their FLOPs are partly free)
 *   capacity    mu = min(B / (O x t_f), (budget - B) / (P x t_f)): a slot is
 *               held for O iterations, unless the budget cannot admit
 *               prompts that fast
 * The wait for a slot is M/G/c (c = B slots, slot time S = B / mu, offered
 * load a = lambda / n x S per replica, round-robin): Erlang C gives the
 * chance P_w of waiting, and the tail at percentile p is
 *   t_w = S / (B - a) x ln(P_w / (1 - p)) x (ca^2 + cs^2) / 2
 * (the M/M/c tail with the Allen-Cunneen factor: ca^2 of the gaps between
 * arrivals, 1 for Poisson, more for a bursty trace; cs^2 of the output
 * length), 0 when P_w <= 1 - p.
 * TTFT at p = t_w + the tail prompt's prefill, in chunks of the token budget
 * less the running decodes (min(B, a) of them ride along) + half a decode
 * step (a request waits for the iteration in flight).  The percentiles are
 * added, which overstates the tail of the sum: a first cut errs on the side
 * of more replicas, and a search confirms it.
 * Energy: a replica is in an iteration with probability 1 - exp(-lambda / n x
 * T1), T1 = c_p + O x t_d(1) the time one request alone keeps it busy (c_p:
 * a mean prompt's prefill less the step overhead)
 * (M/G/inf), and draws idle + (TDP - idle) x that (docs/gpus.md).
 */
#include "gpuplan/firstcut.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

#define MAX_UTILISATION 0.95
#define MAX_REPLICAS    1000000

struct prep {
	struct footprint fp;
	struct roofline r;
	const struct gpu_specs *specs;
	double context, c_p, t_d1;
	double t_full, mu; /* a full iteration, and the capacity */
	int batch;
};

double firstcut_lognormal_quantile(double mean, double sigma, double p)
{
	if (sigma <= 0)
		return mean;
	double mu = log(mean) - sigma * sigma / 2;
	return exp(mu + sigma * gsl_cdf_ugaussian_Pinv(p / 100));
}

static double decode_step(const struct prep *pr, double batch)
{
	return roofline_decode_time(&pr->r, batch, pr->context);
}

static enum firstcut_verdict prepare(const struct firstcut_service *s, struct prep *pr,
				     struct firstcut *out)
{
	double cap = s->gpu->memory_bytes * s->memory_fraction;
	int64_t typical = (int64_t)ceil(s->prompt_mean + s->output_mean);
	int tp = s->tp ? s->tp : footprint_min_tp(s->model, s->weights, s->kv, cap, typical);
	out->tp = tp;
	if (!tp || !footprint_tp_valid(s->model, tp))
		return FIRSTCUT_NO_FIT;
	footprint_compute(s->model, s->weights, s->kv, tp, cap, &pr->fp);
	int64_t fits = footprint_max_sequences(&pr->fp, typical);
	if (fits < 1)
		return FIRSTCUT_NO_FIT;
	roofline_init(&pr->r, s->model, s->weights, s->kv, s->gpu, NULL, GPU_SHARE_WHOLE, tp);
	pr->specs = catalog_gpu_specs(s->gpu);
	pr->context = s->prompt_mean + s->output_mean / 2;
	pr->c_p = roofline_prefill_time(&pr->r, s->prompt_mean, 0) - pr->r.step_overhead_s;
	pr->t_d1 = decode_step(pr, 1);
	if (s->tpot_slo_s > 0 && pr->t_d1 > s->tpot_slo_s)
		return FIRSTCUT_TPOT;
	int b = s->max_batch < fits ? s->max_batch : (int)fits;
	while (b > 1 && s->tpot_slo_s > 0 && decode_step(pr, b) > s->tpot_slo_s)
		b = b * 7 / 8 < b - 1 ? b * 7 / 8 : b - 1;
	pr->batch = b;
	double budget = s->max_batched_tokens > b ? s->max_batched_tokens - b : 1;
	double x = b * s->prompt_mean / s->output_mean;
	struct roofline_work w = ROOFLINE_WORK_NONE;
	roofline_add_prefill(&w, x < budget ? x : budget, s->prompt_mean / 2);
	roofline_add_decode(&w, b, pr->context);
	pr->t_full = roofline_iteration_time(&pr->r, &w);
	pr->mu = fmin(b / (s->output_mean * pr->t_full), budget / (s->prompt_mean * pr->t_full));
	return FIRSTCUT_OK;
}

/* Erlang C: the chance an arrival waits, c servers at offered load a < c
 * (Erlang B by its stable recursion, then C from B). */
static double erlang_c(int c, double a)
{
	double b = 1;
	for (int k = 1; k <= c; k++)
		b = a * b / (k + a * b);
	double rho = a / c;
	return b / (1 - rho * (1 - b));
}

/* The tail prompt's prefill beside `running` decoding sequences. */
static double prefill_tail(const struct firstcut_service *s, const struct prep *pr, double running)
{
	double budget = s->max_batched_tokens - running, left = s->prompt_tail, t = 0, done = 0;
	if (budget < 1)
		budget = 1;
	while (left > 0) {
		double chunk = left < budget ? left : budget;
		struct roofline_work w = ROOFLINE_WORK_NONE;
		roofline_add_prefill(&w, chunk, done);
		if (running >= 1)
			roofline_add_decode(&w, running, pr->context);
		t += roofline_iteration_time(&pr->r, &w);
		left -= chunk;
		done += chunk;
	}
	return t;
}

static double at_n(const struct firstcut_service *s, const struct prep *pr, int n,
		   struct firstcut *out)
{
	double lambda = s->rate / n, b = pr->batch;
	double step = decode_step(pr, b);
	double mu = pr->mu, slot = b / mu, a = lambda * slot;
	out->replicas = n;
	out->gpus = n * out->tp;
	out->batch = pr->batch;
	out->capacity_rps = mu;
	out->decode_step_s = step;
	out->utilisation = lambda / mu;
	if (a >= b)
		return out->ttft_tail_s = INFINITY;
	double q = 1 - s->percentile / 100, pw = erlang_c(pr->batch, a);
	double ca2 = s->arrival_cv2 > 0 ? s->arrival_cv2 : 1;
	out->wait_tail_s = pw > q ? slot / (b - a) * log(pw / q) * (ca2 + s->output_cv2) / 2 : 0;
	double running = a < b ? a : b;
	out->prefill_tail_s = prefill_tail(s, pr, running);
	out->ttft_tail_s = out->wait_tail_s + out->prefill_tail_s +
			   decode_step(pr, running > 1 ? running : 1) / 2;
	/* Cost and energy of the fleet. */
	double t1 = pr->c_p + s->output_mean * pr->t_d1;
	out->duty = 1 - exp(-lambda * t1);
	double price = s->usd_per_gpu_hour > 0 ? s->usd_per_gpu_hour
		       : pr->specs             ? pr->specs->usd_per_hour
					       : 0;
	out->usd_per_hour = out->gpus * price;
	double tokens_per_s = s->rate * s->output_mean;
	out->usd_per_mtok =
		tokens_per_s > 0 ? out->usd_per_hour / (tokens_per_s * 3600) * 1e6 : NAN;
	out->watts = pr->specs ? out->gpus * catalog_gpu_power(pr->specs, out->duty) : NAN;
	out->tokens_per_joule = out->watts > 0 ? tokens_per_s / out->watts : NAN;
	return out->ttft_tail_s;
}

double firstcut_ttft_tail(const struct firstcut_service *s, int n, struct firstcut *out)
{
	struct prep pr;
	*out = (struct firstcut){0};
	if ((out->verdict = prepare(s, &pr, out)) != FIRSTCUT_OK || n < 1)
		return INFINITY;
	return at_n(s, &pr, n, out);
}

enum firstcut_verdict firstcut_size(const struct firstcut_service *s, struct firstcut *out)
{
	struct prep pr;
	*out = (struct firstcut){0};
	if ((out->verdict = prepare(s, &pr, out)) != FIRSTCUT_OK)
		return out->verdict;
	out->prefill_tail_s = prefill_tail(s, &pr, 0);
	if (s->ttft_slo_s > 0 && out->prefill_tail_s + pr.t_d1 / 2 > s->ttft_slo_s)
		return out->verdict = FIRSTCUT_TAIL_PROMPT;
	/* The fewest replicas below the utilisation cap, then up until the TTFT holds. */
	int n = (int)ceil(s->rate / (pr.mu * MAX_UTILISATION));
	if (n < 1)
		n = 1;
	for (; n < MAX_REPLICAS; n++) {
		double t = at_n(s, &pr, n, out);
		if (out->utilisation <= MAX_UTILISATION &&
		    (s->ttft_slo_s <= 0 || t <= s->ttft_slo_s))
			break;
	}
	return out->verdict;
}
