/*
 * estimate_route.c - `gpuplan estimate --rate R --route L40S:2048,H100-80GB`:
 * the first cut (firstcut.h) of a routed service (docs/inference.md, "Routed
 * fleets"), each group sized on its share of the prompt-length distribution.
 *
 * Prompts are lognormal (mean m, sigma s: mu = ln m - s^2 / 2).  A group that
 * takes a < prompt <= b gets the share p = F(b) - F(a) of the rate, where F
 * is the lognormal's CDF; its prompts have the conditional mean
 *   m (Phi((ln b - mu - s^2) / s) - Phi((ln a - mu - s^2) / s)) / p
 * (the partial expectation of a lognormal), and its tail prompt at the
 * percentile q is the quantile F^-1(F(a) + q p) of the prompts in its range.
 * Each group is then a service of its own on its GPU type.  A service whose
 * every group holds its TTFT bound at q holds it over all its requests (the
 * union's q-quantile is at most the largest of the groups'), so the sum of
 * the groups is an upper estimate of the routed fleet.
 */
#include "gpuplan/estimate.h"

#include "gpuplan/firstcut.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate_int.h"

#define ROUTE_HINT "GPU:MAX,...,GPU like L40S:2048,H100-80GB (the last group takes the rest)"

/* Phi((ln x - shift) / s); x <= 0 is 0, x = inf is 1. */
static double phi_of(double x, double shift, double s)
{
	if (x <= 0)
		return 0;
	if (isinf(x))
		return 1;
	return gsl_cdf_ugaussian_P((log(x) - shift) / s);
}

/* The share, mean and tail of the lognormal's prompts in (a, b]. */
static void range_of(const struct estimate_traffic *t, double a, double b, struct estimate_group *g)
{
	double s = t->prompt_sigma, m = t->prompt_mean;
	if (s <= 0) { /* every prompt is the mean */
		bool in = m > a && m <= b;
		g->share = in ? 1 : 0;
		g->prompt_mean = g->prompt_tail = in ? m : 0;
		return;
	}
	double mu = log(m) - s * s / 2;
	double fa = phi_of(a, mu, s), fb = phi_of(b, mu, s);
	g->share = fb - fa;
	if (!(g->share > 0)) {
		g->share = 0;
		return;
	}
	g->prompt_mean = m * (phi_of(b, mu + s * s, s) - phi_of(a, mu + s * s, s)) / g->share;
	double q = fa + t->percentile / 100 * g->share;
	g->prompt_tail = exp(mu + s * gsl_cdf_ugaussian_Pinv(fmin(q, 1 - 1e-12)));
}

int estimate_route_groups(const struct estimate_traffic *t, const char *route,
			  struct estimate_group *out, size_t *n, struct gp_err *err)
{
	*n = 0;
	double lo = -1;
	const char *p = route;
	while (*n < ESTIMATE_MAX_GROUPS) {
		const char *end = p + strcspn(p, ",");
		const char *colon = memchr(p, ':', (size_t)(end - p));
		char name[64];
		size_t len = (size_t)((colon ? colon : end) - p);
		if (!len || len >= sizeof name)
			return gp_errorf(err, GP_EINPUT, "--route expects %s, got '%s'", ROUTE_HINT,
					 route);
		memcpy(name, p, len);
		name[len] = '\0';
		struct estimate_group *g = &out[(*n)++];
		memset(g, 0, sizeof *g);
		g->gpu = catalog_gpu(name);
		if (!g->gpu)
			return gp_errorf(err, GP_EINPUT,
					 "--route %s: '%s' is not a catalog GPU type", route, name);
		char *stop = NULL;
		g->prompt_hi = colon ? strtod(colon + 1, &stop) : INFINITY;
		if (colon && (stop != end || !(g->prompt_hi >= 1) ||
			      g->prompt_hi != floor(g->prompt_hi) || g->prompt_hi <= lo))
			return gp_errorf(
				err, GP_EINPUT,
				"--route %s: '%.*s' is not a whole number of tokens above the "
				"previous group's; expected %s",
				route, (int)(end - colon - 1), colon + 1, ROUTE_HINT);
		g->prompt_lo = lo;
		lo = g->prompt_hi;
		range_of(t, g->prompt_lo, g->prompt_hi, g);
		if (!*end)
			break;
		p = end + 1;
	}
	if (isfinite(lo) || *n < 2)
		return gp_errorf(err, GP_EINPUT,
				 "--route %s: expected two to %d groups, the last without a "
				 "bound; like %s",
				 route, ESTIMATE_MAX_GROUPS, ROUTE_HINT);
	return GP_OK;
}

int estimate_route(const struct estimate_request *req, const struct estimate_traffic *t,
		   const char *route, FILE *out, struct gp_err *err)
{
	struct estimate e;
	struct estimate_group groups[ESTIMATE_MAX_GROUPS];
	size_t n = 0;
	int rc = estimate_resolve(req, &e, err);
	if (!rc)
		rc = estimate_check_traffic(t, err);
	if (!rc)
		rc = estimate_route_groups(t, route, groups, &n, err);
	if (rc) {
		estimate_free(&e);
		return rc;
	}
	fprintf(out,
		"%s, %s weights, %g requests/s; prompts lognormal mean %g sigma %g, outputs "
		"mean %g",
		e.model->name, footprint_quant_name(e.quant), t->rate, t->prompt_mean,
		t->prompt_sigma, t->output_mean);
	if (t->ttft_s > 0)
		fprintf(out, "; TTFT p%g <= %g s", t->percentile, t->ttft_s);
	fprintf(out, "\nfirst-cut estimate of a routed service, each group on its share of the "
		     "prompts; confirm it with gpuplan search:\n");
	fprintf(out, "%-14s %6s %7s %6s %6s  %-11s %2s %8s %5s %8s %7s %8s %9s %6s %5s %7s\n",
		"prompts", "share%", "rps", "mean", "p-tail", "gpu", "tp", "replicas", "gpus",
		"$/h", "$/Mtok", "tokens/J", "ttft-p-s", "util%", "batch", "cap-rps");
	int gpus = 0;
	double usd = 0;
	bool all_ok = true;
	for (size_t i = 0; i < n; i++) {
		const struct estimate_group *g = &groups[i];
		char range[32];
		if (isinf(g->prompt_hi))
			snprintf(range, sizeof range, "> %.0f", g->prompt_lo);
		else
			snprintf(range, sizeof range, "<= %.0f", g->prompt_hi);
		fprintf(out, "%-14s %6.1f %7.2f %6.0f %6.0f  ", range, 100 * g->share,
			t->rate * g->share, g->prompt_mean, ceil(g->prompt_tail));
		if (!(g->share > 0)) {
			fprintf(out, "%-11s no prompt in this range\n", g->gpu->name);
			continue;
		}
		struct firstcut_service s;
		struct firstcut f;
		estimate_service_of(&e, req, t, g->gpu, &s);
		s.rate = t->rate * g->share;
		s.prompt_mean = g->prompt_mean;
		s.prompt_tail = ceil(g->prompt_tail);
		firstcut_size(&s, &f);
		estimate_row_text(out, g->gpu, &f);
		all_ok = all_ok && f.verdict == FIRSTCUT_OK;
		if (f.verdict == FIRSTCUT_OK)
			gpus += f.gpus, usd += f.usd_per_hour;
	}
	if (all_ok)
		fprintf(out, "total: %d GPUs, %.2f $/h\n", gpus, usd);
	else
		fprintf(out, "total: none (a group cannot be sized on its GPU type)\n");
	estimate_free(&e);
	return GP_OK;
}
