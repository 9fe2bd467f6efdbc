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
 * TTFT at p = t_w + the prefill stage's tail + half a decode step (a
 * request waits for the iteration in flight).  The prefill stage: the
 * tail prompt's prefill, in chunks of the token budget less the running
 * decodes (min(B, a) of them ride along), gives the rate r at which the
 * budget prefills; the prompts wait for each other there (M/G/1, Kingman),
 * and the stage's tail is that of the wait and the request's own prefill
 * convolved (see struct stage), over the classes of a varying rate (a
 * trace's minutes).  The slot wait is added to it, which overstates the
 * tail of the sum: a first cut errs on the side of more replicas, and a
 * search confirms it.
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

/*
 * The prefill stage of a replica: the token budget is a server that prefills
 * prompts in arrival order, so a request waits for the prompts ahead of it,
 * then takes its own prefill.  Its wait is M/G/1's (Kingman): none with
 * chance 1 - rho, else exponential of mean m = E[S] (ca^2 + cs^2) / (2 (1 -
 * rho)), S = X / r the prefill of a prompt of X tokens at r tokens/s (the
 * tail prompt's rate beside the running decodes), X lognormal with the
 * prompts' mean and their tail at the percentile.  A request is late past t
 * with chance P(W + X / r > t), the wait and its own prompt convolved (not
 * their percentiles added).  With a varying rate (a trace's minutes), the
 * share late is the mean over its classes, a class past saturation all late.
 */
struct stage {
	double mu, sigma;                   /* of ln X */
	double r;                           /* tokens prefilled a second */
	int classes;                        /* of the rate: 1 when steady */
	double p0[FIRSTCUT_RATE_CLASSES];   /* a request waits for neither slot nor prefill */
	double mean[FIRSTCUT_RATE_CLASSES]; /* the wait's mean when it waits; 0: saturated */
};

#define LATE_STEPS 64 /* midpoints of the wait's density */

/* P(X / r > y). */
static double own_over(const struct stage *g, double y)
{
	if (y <= 0)
		return 1;
	double lx = log(y * g->r);
	if (g->sigma <= 0)
		return lx < g->mu ? 1 : 0;
	return gsl_cdf_ugaussian_Q((lx - g->mu) / g->sigma);
}

/* P(W + X / r > t) in class k. */
static double late_at(const struct stage *g, int k, double t)
{
	double p0 = g->p0[k], m = g->mean[k];
	if (!(m > 0))
		return p0 >= 1 ? own_over(g, t) : 1;
	if (t <= 0)
		return 1;
	double h = t / LATE_STEPS, sum = 0;
	for (int i = 0; i < LATE_STEPS; i++) {
		double w = (i + 0.5) * h;
		sum += exp(-w / m) * own_over(g, t - w);
	}
	return p0 * own_over(g, t) + (1 - p0) * (exp(-t / m) + sum * h / m);
}

static double late_share(const struct stage *g, double t)
{
	double sum = 0;
	for (int k = 0; k < g->classes; k++)
		sum += late_at(g, k, t);
	return sum / g->classes;
}

/* The lognormal of mean P whose quantile at p is the tail prompt: sigma
 * solves sigma^2 / 2 - z sigma + ln(tail / P) = 0 (its smaller root). */
static double prompt_sigma(const struct firstcut_service *s)
{
	double z = gsl_cdf_ugaussian_Pinv(s->percentile / 100);
	double l = log(s->prompt_tail / s->prompt_mean), d = z * z - 2 * l;
	if (d < 0)
		return z; /* heavier than any lognormal of that mean: the widest */
	double sigma = z - sqrt(d);
	return sigma >= 0 ? sigma : z + sqrt(d);
}

/* The stage at lambda requests a second a replica (the mean; each class's
 * rate a factor of it): the slot wait (Erlang C: chance pw, then
 * exponential of mean slot / (B - a) x (ca^2 + cs^2) / 2) and the prefill
 * queue's (chance rho, mean m above) merged into one wait of their
 * chance and mean, convolved with the request's own prefill. */
static void stage_init(const struct firstcut_service *s, const struct prep *pr, double lambda,
		       double prefill_tail_s, double ca2, struct stage *g)
{
	g->sigma = prompt_sigma(s);
	g->mu = log(s->prompt_mean) - g->sigma * g->sigma / 2;
	g->r = s->prompt_tail / prefill_tail_s;
	double mean_s = s->prompt_mean / g->r, cs2 = exp(g->sigma * g->sigma) - 1;
	double b = pr->batch, slot = b / pr->mu;
	g->classes = s->n_rate_classes > 0 ? s->n_rate_classes : 1;
	for (int k = 0; k < g->classes; k++) {
		double l = lambda * (s->n_rate_classes > 0 ? s->rate_class[k] : 1);
		double rho = l * mean_s, a = l * slot;
		g->p0[k] = 0, g->mean[k] = 0;
		if (rho >= 1 || a >= b)
			continue; /* saturated: every request late */
		double pw = erlang_c(pr->batch, a);
		double wait = pw * slot / (b - a) * (ca2 + s->output_cv2) / 2 +
			      rho * mean_s * (ca2 + cs2) / (2 * (1 - rho));
		g->p0[k] = (1 - pw) * (1 - rho);
		g->mean[k] = g->p0[k] < 1 ? wait / (1 - g->p0[k]) : 0;
		if (g->p0[k] >= 1)
			g->mean[k] = 0;
	}
}

/* The t at which the share late is 1 - p (bisection); +inf past 1e4 s. */
static double stage_tail(const struct firstcut_service *s, const struct stage *g, double from)
{
	double q = 1 - s->percentile / 100, lo = 0, hi = from > 0 ? from : 1e-3;
	while (late_share(g, hi) > q) {
		lo = hi;
		if ((hi *= 2) > 1e4)
			return INFINITY;
	}
	for (int i = 0; i < 48; i++) {
		double mid = (lo + hi) / 2;
		if (late_share(g, mid) > q)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* The figures at n replicas but the TTFT tail; *g the prefill stage. */
static void at_n(const struct firstcut_service *s, const struct prep *pr, int n,
		 struct firstcut *out, struct stage *g)
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
	out->wait_tail_s = INFINITY;
	double q = 1 - s->percentile / 100, pw = a < b ? erlang_c(pr->batch, a) : 1;
	double ca2 = s->arrival_cv2 > 0 ? s->arrival_cv2 : 1;
	if (a < b)
		out->wait_tail_s =
			pw > q ? slot / (b - a) * log(pw / q) * (ca2 + s->output_cv2) / 2 : 0;
	double running = a < b ? a : b;
	out->prefill_tail_s = prefill_tail(s, pr, running);
	out->ttft_tail_s =
		a < b ? out->prefill_tail_s + decode_step(pr, running > 1 ? running : 1) / 2
		      : INFINITY;
	stage_init(s, pr, lambda, out->prefill_tail_s, ca2, g);
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
}

/* The TTFT tail at n (at_n done): the prefill stage's tail for the prefill. */
static double ttft_at_n(const struct firstcut_service *s, int n, const struct stage *g,
			struct firstcut *out)
{
	if (!isfinite(out->ttft_tail_s))
		return out->ttft_tail_s = INFINITY;
	(void)n;
	double t = stage_tail(s, g, out->prefill_tail_s);
	out->prefill_wait_s = fmax(0, t - out->prefill_tail_s);
	return out->ttft_tail_s += out->prefill_wait_s;
}

double firstcut_ttft_tail(const struct firstcut_service *s, int n, struct firstcut *out)
{
	struct prep pr;
	*out = (struct firstcut){0};
	if ((out->verdict = prepare(s, &pr, out)) != FIRSTCUT_OK || n < 1)
		return INFINITY;
	struct stage g;
	at_n(s, &pr, n, out, &g);
	return ttft_at_n(s, n, &g, out);
}

double firstcut_late_share(const struct firstcut_service *s, int n, double t)
{
	struct prep pr;
	struct firstcut f = {0};
	struct stage g;
	if (prepare(s, &pr, &f) != FIRSTCUT_OK || n < 1)
		return 1;
	at_n(s, &pr, n, &f, &g);
	return isfinite(f.ttft_tail_s) ? late_share(&g, t) : 1;
}

/* The share of requests late past t at n replicas (at_n done): the prefill
 * stage's, with half a decode step taken off t (firstcut_size's test). */
static double late_ttft(const struct firstcut *f, const struct stage *g, double t)
{
	if (!isfinite(f->ttft_tail_s))
		return 1;
	return late_share(g, t - (f->ttft_tail_s - f->prefill_tail_s));
}

double firstcut_load_at_tail(const struct firstcut_service *s, double t)
{
	struct prep pr;
	struct firstcut f = {0};
	struct stage g;
	if (prepare(s, &pr, &f) != FIRSTCUT_OK)
		return NAN;
	struct firstcut_service one = *s;
	double q = 1 - s->percentile / 100, lo = 0, hi = pr.mu;
	one.rate = 1e-9 * pr.mu;
	at_n(&one, &pr, 1, &f, &g);
	if (late_ttft(&f, &g, t) > q)
		return 0; /* an idle replica's tail is longer */
	one.rate = hi * (1 - 1e-6);
	at_n(&one, &pr, 1, &f, &g);
	if (late_ttft(&f, &g, t) <= q)
		return INFINITY; /* longer than the model's tail at capacity */
	/* the late share grows with the load: bisect it to 2^-16 of the capacity */
	for (int i = 0; i < 16; i++) {
		one.rate = (lo + hi) / 2;
		at_n(&one, &pr, 1, &f, &g);
		if (late_ttft(&f, &g, t) > q)
			hi = one.rate;
		else
			lo = one.rate;
	}
	return lo;
}

/* firstcut_size, and with tail the TTFT tail's figures at the answer. */
static enum firstcut_verdict size(const struct firstcut_service *s, struct firstcut *out, bool tail)
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
	struct stage g;
	for (; n < MAX_REPLICAS; n++) {
		at_n(s, &pr, n, out, &g);
		/* the stage's time left within the bound after half a decode
		 * step: late for at most 1 - p of requests */
		double left = s->ttft_slo_s - (out->ttft_tail_s - out->prefill_tail_s);
		if (out->utilisation <= MAX_UTILISATION && isfinite(out->ttft_tail_s) &&
		    (s->ttft_slo_s <= 0 || late_share(&g, left) <= 1 - s->percentile / 100))
			break;
	}
	if (tail)
		ttft_at_n(s, n, &g, out);
	return out->verdict;
}

enum firstcut_verdict firstcut_size(const struct firstcut_service *s, struct firstcut *out)
{
	return size(s, out, true);
}

enum firstcut_verdict firstcut_replicas(const struct firstcut_service *s, struct firstcut *out)
{
	return size(s, out, false);
}
