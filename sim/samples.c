/*
 * samples.c - exact order statistics within a budget, a log histogram
 * beyond it (see samples.h).
 */
#include "gpuplan/samples.h"

#include "gpuplan/common.h"
#include "gpuplan/sort.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The sketch's bins: [LO x RATIO^k, LO x RATIO^(k+1)) for k < BINS; the
 * first also takes what is smaller, the last what is larger.  Any point of
 * a bin is within 0.5% of any other: that is the sketch's error. */
#define SKETCH_LO    1e-6 /* s: a queue time is a whole number of µs */
#define SKETCH_RATIO 1.005
#define SKETCH_HI    1e13 /* s: past sim_time's range */

static gsl_histogram *new_sketch(void)
{
	size_t bins = (size_t)ceil(log(SKETCH_HI / SKETCH_LO) / log(SKETCH_RATIO));
	gsl_histogram *h = gsl_histogram_alloc(bins);
	double *range = gp_xmalloc((bins + 1) * sizeof *range);
	for (size_t k = 0; k <= bins; k++) /* every sketch the same bits: they merge */
		range[k] = SKETCH_LO * pow(SKETCH_RATIO, (double)k);
	gsl_histogram_set_ranges(h, range, bins + 1);
	free(range);
	return h;
}

/* The bin of x > 0: from its logarithm, then checked against the ranges
 * themselves (gsl_histogram_increment would search all of them). */
static size_t bin_of(const gsl_histogram *h, double x)
{
	double k = floor(log(x / SKETCH_LO) / log(SKETCH_RATIO));
	size_t i = k <= 0 ? 0 : k >= (double)(h->n - 1) ? h->n - 1 : (size_t)k;
	while (i > 0 && x < h->range[i])
		i--;
	while (i + 1 < h->n && x >= h->range[i + 1])
		i++;
	return i;
}

static void sketch_add(struct samples *s, double x)
{
	s->count++;
	s->sum += x;
	s->max = x > s->max ? x : s->max;
	if (x > 0)
		s->sketch->bin[bin_of(s->sketch, x)] += 1;
	else
		s->zeros++;
}

/* Moves s's values into a sketch and gives their place in b back. */
static void to_sketch(struct samples *s, struct samples_budget *b)
{
	s->sketch = new_sketch();
	for (size_t i = 0; i < s->n; i++)
		sketch_add(s, s->v[i]);
	b->held -= s->n;
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void samples_add(struct samples *s, struct samples_budget *b, double x)
{
	if (!s->sketch && b->held >= b->max)
		to_sketch(s, b);
	if (s->sketch) {
		sketch_add(s, x);
		return;
	}
	GP_GROW(s->v, s->cap, s->n + 1);
	s->v[s->n++] = x;
	b->held++;
}

int64_t samples_count(const struct samples *s) { return s->sketch ? s->count : (int64_t)s->n; }

void samples_free(struct samples *s)
{
	free(s->v);
	if (s->sketch)
		gsl_histogram_free(s->sketch);
	memset(s, 0, sizeof *s);
}

/* --- figures ------------------------------------------------------------------ */

static const struct samples_stats none = {NAN, NAN, NAN, NAN, NAN};

/* The sorted union, read as metrics always read it. */
static struct samples_stats exact_stats(const struct samples *const *parts, size_t n, size_t total)
{
	if (!total)
		return none;
	double *v = gp_xmalloc(total * sizeof *v);
	size_t at = 0;
	for (size_t k = 0; k < n; k++) {
		if (parts[k]->n)
			memcpy(v + at, parts[k]->v, parts[k]->n * sizeof *v);
		at += parts[k]->n;
	}
	sort_doubles(v, total); /* the array gsl_sort gives, in O(n) */
	struct samples_stats st = {
		gsl_stats_mean(v, 1, total),
		gsl_stats_quantile_from_sorted_data(v, 1, total, 0.50),
		gsl_stats_quantile_from_sorted_data(v, 1, total, 0.95),
		gsl_stats_quantile_from_sorted_data(v, 1, total, 0.99),
		v[total - 1],
	};
	free(v);
	return st;
}

/* The value of rank r (0-based) of the sketch: a zero, or the positive
 * values' histogram inverted at the middle of the rank, which lands in the
 * bin that holds it. */
static double value_at(const struct samples *s, const gsl_histogram_pdf *pdf, int64_t r)
{
	if (r < s->zeros)
		return 0;
	double u = ((double)(r - s->zeros) + 0.5) / (double)(s->count - s->zeros);
	double x = gsl_histogram_pdf_sample(pdf, u);
	return x < s->max ? x : s->max;
}

/* As gsl_stats_quantile_from_sorted_data, between the ranks around f (n - 1). */
static double quantile(const struct samples *s, const gsl_histogram_pdf *pdf, double f)
{
	double index = f * (double)(s->count - 1);
	int64_t lhs = (int64_t)index;
	double delta = index - (double)lhs;
	if (lhs == s->count - 1)
		return value_at(s, pdf, lhs);
	return (1 - delta) * value_at(s, pdf, lhs) + delta * value_at(s, pdf, lhs + 1);
}

static struct samples_stats sketch_stats(const struct samples *s)
{
	if (!s->count)
		return none;
	struct samples_stats st = {s->sum / (double)s->count, 0, 0, 0, s->max};
	if (s->zeros == s->count)
		return st; /* the percentiles are 0 */
	gsl_histogram_pdf *pdf = gsl_histogram_pdf_alloc(s->sketch->n);
	gsl_histogram_pdf_init(pdf, s->sketch);
	st.p50 = quantile(s, pdf, 0.50);
	st.p95 = quantile(s, pdf, 0.95);
	st.p99 = quantile(s, pdf, 0.99);
	gsl_histogram_pdf_free(pdf);
	return st;
}

struct samples_stats samples_stats(const struct samples *const *parts, size_t n)
{
	size_t total = 0;
	bool exact = true;
	for (size_t k = 0; k < n; k++) {
		exact = exact && !parts[k]->sketch;
		total += parts[k]->n;
	}
	if (exact)
		return exact_stats(parts, n, total);
	struct samples all = {.sketch = new_sketch()};
	for (size_t k = 0; k < n; k++) {
		const struct samples *p = parts[k];
		for (size_t i = 0; i < p->n; i++)
			sketch_add(&all, p->v[i]);
		if (!p->sketch)
			continue;
		gsl_histogram_add(all.sketch, p->sketch);
		all.count += p->count;
		all.zeros += p->zeros;
		all.sum += p->sum;
		all.max = p->max > all.max ? p->max : all.max;
	}
	struct samples_stats st = sketch_stats(&all);
	samples_free(&all);
	return st;
}
