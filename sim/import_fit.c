/*
 * import_fit.c - durations learned from history: lognormal and gamma by
 * maximum likelihood (GSL's digamma, trigamma and CDFs), ranked by the
 * Kolmogorov-Smirnov distance, or the sample itself (see import.h).
 */
#include "gpuplan/import.h"
#include "gpuplan/sort.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_sf_erf.h>
#include <gsl/gsl_sf_gamma.h>
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

/* --- right-censored runs ------------------------------------------------------ */

struct censored {
	const double *x, *c; /* complete runs; lower bounds of runs still going */
	size_t n, m;
	enum import_fit_kind kind;
};

/* log P(X > c), kept finite far in the tail. */
static double log_survival(enum import_fit_kind kind, double c, double a, double b)
{
	if (kind == IMPORT_FIT_LOGNORMAL) /* a = mu, b = sigma */
		return gsl_sf_log_erfc((log(c) - a) / (b * M_SQRT2)) - M_LN2;
	double q = gsl_cdf_gamma_Q(c, a, b); /* a = shape, b = scale */
	return q > 0 ? log(q) : -745;
}

/* The negative log-likelihood at (p0, log p1): lognormal (mu, log sigma),
 * gamma (log k, log theta). */
static double neg_loglik(const gsl_vector *v, void *params)
{
	const struct censored *d = params;
	double p0 = gsl_vector_get(v, 0), p1 = exp(gsl_vector_get(v, 1));
	double ll = 0;
	if (d->kind == IMPORT_FIT_LOGNORMAL) {
		for (size_t i = 0; i < d->n; i++) {
			double z = (log(d->x[i]) - p0) / p1;
			ll += -0.5 * z * z - log(p1) - log(d->x[i]);
		}
	} else {
		double k = exp(p0), lg = gsl_sf_lngamma(k);
		for (size_t i = 0; i < d->n; i++)
			ll += (k - 1) * log(d->x[i]) - d->x[i] / p1 - lg - k * log(p1);
	}
	for (size_t i = 0; i < d->m; i++)
		ll += log_survival(d->kind, d->c[i], d->kind == IMPORT_FIT_LOGNORMAL ? p0 : exp(p0),
				   p1);
	return isfinite(ll) ? -ll : GSL_POSINF;
}

/* f's parameters re-estimated with the runs still going at c[0..m) as
 * lower bounds (Nelder and Mead's simplex from f's complete-run MLE). */
static void refit_censored(const double *x, size_t n, const double *c, size_t m,
			   struct import_fit *f)
{
	struct censored d = {x, c, n, m, f->kind};
	gsl_multimin_function fn = {neg_loglik, 2, &d};
	gsl_vector *v = gsl_vector_alloc(2), *step = gsl_vector_alloc(2);
	if (f->kind == IMPORT_FIT_LOGNORMAL) {
		gsl_vector_set(v, 0, log(f->mean) - f->sigma * f->sigma / 2);
		gsl_vector_set(v, 1, log(f->sigma));
	} else {
		gsl_vector_set(v, 0, log(f->shape));
		gsl_vector_set(v, 1, log(f->mean / f->shape));
	}
	gsl_vector_set_all(step, 0.1);
	gsl_multimin_fminimizer *s =
		gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
	gsl_multimin_fminimizer_set(s, &fn, v, step);
	for (int it = 0; it < 500; it++) {
		if (gsl_multimin_fminimizer_iterate(s))
			break;
		if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(s), 1e-7) == GSL_SUCCESS)
			break;
	}
	double p0 = gsl_vector_get(s->x, 0), p1 = exp(gsl_vector_get(s->x, 1));
	if (f->kind == IMPORT_FIT_LOGNORMAL) {
		f->sigma = p1;
		f->mean = exp(p0 + p1 * p1 / 2);
	} else {
		f->shape = exp(p0);
		f->mean = f->shape * p1;
	}
	gsl_multimin_fminimizer_free(s);
	gsl_vector_free(v);
	gsl_vector_free(step);
}

struct timed {
	double t;
	bool event; /* a complete run; false: still going at t */
};

static int by_time(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (int)y->event - (int)x->event; /* runs that ended before those cut off */
}

/* sup |F_KM - F| over the complete runs, F_KM the Kaplan-Meier estimate of
 * the distribution from the complete and the cut-off runs. */
static double ks_kaplan_meier(const struct timed *d, size_t n, const struct import_fit *f)
{
	double s = 1, dmax = 0, at_risk = (double)n;
	double a =
		f->kind == IMPORT_FIT_LOGNORMAL ? log(f->mean) - f->sigma * f->sigma / 2 : f->shape;
	double b = f->kind == IMPORT_FIT_LOGNORMAL ? f->sigma : f->mean / f->shape;
	for (size_t i = 0; i < n;) {
		size_t j = i, events = 0;
		while (j < n && d[j].t == d[i].t) {
			events += d[j].event;
			j++;
		}
		if (events) {
			double fit = f->kind == IMPORT_FIT_LOGNORMAL
					     ? gsl_cdf_lognormal_P(d[i].t, a, b)
					     : gsl_cdf_gamma_P(d[i].t, a, b);
			double before = 1 - s;
			s *= 1 - (double)events / at_risk;
			dmax = fmax(dmax, fmax(fabs(before - fit), fabs(1 - s - fit)));
		}
		at_risk -= (double)(j - i);
		i = j;
	}
	return dmax;
}

void import_fit_choose_censored(double *x, size_t n, const double *c, size_t m,
				struct import_fit *out, struct import_fit *lognormal,
				struct import_fit *gamma)
{
	import_fit_choose(x, n, out, lognormal, gamma);
	if (!m || n < IMPORT_FIT_MIN_N || x[0] <= 0)
		return;
	/* both families again with the cut-off runs, judged against the
	 * Kaplan-Meier estimate (the complete runs alone are the short ones) */
	struct import_fit ln, ga;
	import_fit_lognormal(x, n, &ln);
	import_fit_gamma(x, n, &ga);
	refit_censored(x, n, c, m, &ln);
	refit_censored(x, n, c, m, &ga);
	struct timed *d = malloc((n + m) * sizeof *d);
	for (size_t i = 0; i < n; i++)
		d[i] = (struct timed){x[i], true};
	for (size_t i = 0; i < m; i++)
		d[n + i] = (struct timed){c[i], false};
	qsort(d, n + m, sizeof *d, by_time);
	struct import_fit *fits[2] = {&ln, &ga};
	for (int k = 0; k < 2; k++) {
		fits[k]->ks_d = ks_kaplan_meier(d, n + m, fits[k]);
		fits[k]->p = import_ks_pvalue(fits[k]->ks_d, n);
		fits[k]->censored = m;
	}
	free(d);
	const struct import_fit *best = ln.p >= ga.p ? &ln : &ga;
	if (best->p >= IMPORT_FIT_MIN_P)
		*out = *best;
	else
		*out = (struct import_fit){.kind = IMPORT_FIT_EMPIRICAL, .mean = out->mean};
	if (lognormal)
		*lognormal = ln;
	if (gamma)
		*gamma = ga;
}
