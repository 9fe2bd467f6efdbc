/*
 * import_fit.c - durations learned from history: lognormal and gamma by
 * maximum likelihood (GSL's digamma, trigamma and CDFs), ranked by the
 * Kolmogorov-Smirnov distance, or the sample itself (see import.h).
 */
#include "gpuplan/import.h"
#include "gpuplan/sort.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_psi.h>
#include <math.h>
#include <stdlib.h>

/* sup |F_n(x) - F(x)| over sorted x, F given as a CDF of (x, a, b). */
static double ks_distance(const double *x, size_t n, double (*cdf)(double, double, double),
			  double a, double b)
{
	double d = 0;
	for (size_t i = 0; i < n; i++) {
		double f = cdf(x[i], a, b);
		double lo = f - (double)i / (double)n, hi = (double)(i + 1) / (double)n - f;
		d = fmax(d, fmax(lo, hi));
	}
	return d;
}

double import_ks_pvalue(double d, size_t n)
{
	if (n == 0 || d <= 0)
		return 1;
	double sn = sqrt((double)n), lambda = (sn + 0.12 + 0.11 / sn) * d;
	/* Q_KS(lambda) = 2 sum_{j>=1} (-1)^{j-1} exp(-2 j^2 lambda^2) */
	if (lambda < 0.3)
		return 1;
	double q = 0, sign = 1;
	for (int j = 1; j <= 100; j++) {
		double term = sign * exp(-2.0 * j * j * lambda * lambda);
		q += term;
		if (fabs(term) < 1e-12)
			break;
		sign = -sign;
	}
	return fmin(1, fmax(0, 2 * q));
}

void import_fit_lognormal(const double *x, size_t n, struct import_fit *out)
{
	double mu = 0, s2 = 0;
	for (size_t i = 0; i < n; i++)
		mu += log(x[i]);
	mu /= (double)n;
	for (size_t i = 0; i < n; i++)
		s2 += (log(x[i]) - mu) * (log(x[i]) - mu);
	double sigma = sqrt(s2 / (double)n); /* the MLE divides by n */
	*out = (struct import_fit){.kind = IMPORT_FIT_LOGNORMAL, .sigma = sigma};
	out->mean = exp(mu + sigma * sigma / 2);
	if (sigma <= 0) {
		out->ks_d = 1, out->p = 0;
		return;
	}
	out->ks_d = ks_distance(x, n, gsl_cdf_lognormal_P, mu, sigma);
	out->p = import_ks_pvalue(out->ks_d, n);
}

/* The shape k solves log k - psi(k) = s, s = log(mean) - mean(log x) (the
 * MLE; Choi and Wette's start, then Newton's steps with trigamma). */
void import_fit_gamma(const double *x, size_t n, struct import_fit *out)
{
	double mean = 0, ml = 0;
	for (size_t i = 0; i < n; i++) {
		mean += x[i];
		ml += log(x[i]);
	}
	mean /= (double)n;
	ml /= (double)n;
	double s = log(mean) - ml;
	*out = (struct import_fit){.kind = IMPORT_FIT_GAMMA, .mean = mean};
	if (!(s > 1e-12)) {
		out->shape = 1e6, out->ks_d = 1, out->p = 0;
		return;
	}
	double k = (3 - s + sqrt((s - 3) * (s - 3) + 24 * s)) / (12 * s);
	for (int it = 0; it < 50; it++) {
		double f = log(k) - gsl_sf_psi(k) - s, df = 1 / k - gsl_sf_psi_1(k);
		double step = f / df;
		if (k - step <= 0)
			step = k / 2;
		k -= step;
		if (fabs(step) < 1e-10 * k)
			break;
	}
	out->shape = k;
	out->ks_d = ks_distance(x, n, gsl_cdf_gamma_P, k, mean / k);
	out->p = import_ks_pvalue(out->ks_d, n);
}

void import_fit_choose(double *x, size_t n, struct import_fit *out, struct import_fit *lognormal,
		       struct import_fit *gamma)
{
	struct import_fit ln = {.kind = IMPORT_FIT_LOGNORMAL}, ga = {.kind = IMPORT_FIT_GAMMA};
	sort_doubles(x, n);
	double mean = 0;
	for (size_t i = 0; i < n; i++)
		mean += x[i];
	mean = n ? mean / (double)n : 0;
	*out = (struct import_fit){.kind = IMPORT_FIT_EMPIRICAL, .mean = mean};
	if (n >= IMPORT_FIT_MIN_N && x[0] > 0) {
		import_fit_lognormal(x, n, &ln);
		import_fit_gamma(x, n, &ga);
		const struct import_fit *best = ln.p >= ga.p ? &ln : &ga;
		if (best->p >= IMPORT_FIT_MIN_P)
			*out = *best;
	}
	if (lognormal)
		*lognormal = ln;
	if (gamma)
		*gamma = ga;
}

size_t import_fit_quantiles(const double *x, size_t n, double *out, size_t max)
{
	if (n <= max) {
		for (size_t i = 0; i < n; i++)
			out[i] = x[i];
		return n;
	}
	for (size_t i = 0; i < max; i++) {
		double pos = ((double)i + 0.5) / (double)max * (double)n - 0.5;
		size_t lo = (size_t)fmax(0, floor(pos));
		size_t hi = lo + 1 < n ? lo + 1 : lo;
		double w = pos - (double)lo;
		out[i] = x[lo] * (1 - w) + x[hi] * w;
	}
	return max;
}
