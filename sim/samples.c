/*
 * samples.c - exact order statistics within a budget, a log histogram
 * beyond it (see samples.h).
 */
#include "gpuplan/samples.h"

#include "gpuplan/common.h"
#include "gpuplan/sort.h"

#include <assert.h>
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

/* Moves s's values into a sketch and gives their place in b back: its
 * zeros are counted already. */
static void to_sketch(struct samples *s, struct samples_budget *b)
{
	s->sketch = new_sketch();
	s->count = s->zeros;
	for (size_t i = 0; i < s->n; i++)
		sketch_add(s, s->v[i]);
	b->held -= s->n + (size_t)s->zeros;
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void samples_reserve(struct samples *s, const struct samples_budget *b, size_t n)
{
	if (s->sketch || n <= s->cap || n > b->max)
		return;
	double *v = gp_xmalloc(n * sizeof *v);
	if (s->n)
		memcpy(v, s->v, s->n * sizeof *v);
	free(s->v);
	s->v = v;
	s->cap = n;
}

void samples_sort(struct samples *s)
{
	if (!s->sketch && !s->sorted)
		sort_doubles(s->v, s->n);
	s->sorted = !s->sketch;
}

void samples_add(struct samples *s, struct samples_budget *b, double x)
{
	/* a +0 (never a -0): the zeros counted are ranked first as +0 */
	assert((x > 0 || (x == 0 && !signbit(x))) && "a sample is +0 or more");
	if (!s->sketch && b->held >= b->max)
		to_sketch(s, b);
	if (s->sketch) {
		sketch_add(s, x);
		return;
	}
	b->held++;
	if (x == 0) {
		s->zeros++;
		return;
	}
	s->sorted = false;
	GP_GROW(s->v, s->cap, s->n + 1);
	s->v[s->n++] = x;
}

int64_t samples_count(const struct samples *s)
{
	return s->sketch ? s->count : (int64_t)s->n + s->zeros;
}

void samples_free(struct samples *s)
{
	free(s->v);
	if (s->sketch)
		gsl_histogram_free(s->sketch);
	memset(s, 0, sizeof *s);
}

/* --- figures ------------------------------------------------------------------ */

/* The value of rank r (0-based) of a sketch: a zero, or the positive values'
 * histogram inverted at the middle of the rank, which lands in the bin that
 * holds it. */
static double sketch_value(const struct samples *s, const gsl_histogram_pdf *pdf, int64_t r)
{
	if (r < s->zeros)
		return 0;
	double u = ((double)(r - s->zeros) + 0.5) / (double)(s->count - s->zeros);
	double x = gsl_histogram_pdf_sample(pdf, u);
	return x < s->max ? x : s->max;
}

void samples_view_init(struct samples_view *view, const struct samples *const *parts, size_t n)
{
	memset(view, 0, sizeof *view);
	bool exact = true;
	const struct samples *held = NULL; /* a part with values */
	size_t with_values = 0;
	for (size_t k = 0; k < n; k++) {
		exact = exact && !parts[k]->sketch;
		view->n += parts[k]->n;
		view->zeros += parts[k]->zeros;
		if (parts[k]->n) {
			held = parts[k];
			with_values++;
		}
	}
	if (exact && (!held || (with_values == 1 && held->sorted))) { /* the union's values */
		view->v = held ? held->v : NULL;
		view->borrowed = true;
		return;
	}
	if (exact) { /* the positive values as gsl_sort orders them, in O(n) */
		view->v = gp_xmalloc((view->n ? view->n : 1) * sizeof *view->v);
		if (n == 1) {
			sort_doubles_copy(view->v, parts[0]->v, view->n);
			return;
		}
		size_t at = 0;
		for (size_t k = 0; k < n; k++) {
			if (parts[k]->n)
				memcpy(view->v + at, parts[k]->v, parts[k]->n * sizeof *view->v);
			at += parts[k]->n;
		}
		sort_doubles(view->v, view->n);
		return;
	}
	struct samples *all = &view->all;
	all->sketch = new_sketch();
	for (size_t k = 0; k < n; k++) {
		const struct samples *p = parts[k];
		for (size_t i = 0; i < p->n; i++)
			sketch_add(all, p->v[i]);
		all->zeros += p->zeros;
		if (!p->sketch) {
			all->count += p->zeros;
			continue;
		}
		gsl_histogram_add(all->sketch, p->sketch);
		all->count += p->count;
		all->sum += p->sum;
		all->max = p->max > all->max ? p->max : all->max;
	}
	if (all->zeros < all->count) {
		view->pdf = gsl_histogram_pdf_alloc(all->sketch->n);
		gsl_histogram_pdf_init(view->pdf, all->sketch);
	}
}

int64_t samples_view_count(const struct samples_view *view)
{
	return view->all.sketch ? view->all.count : (int64_t)view->n + view->zeros;
}

/* One step of gsl_stats_mean's recurrence: the mean of the first i + 1
 * values, from that of the first i and value i, in long double as GSL's is. */
static inline long double mean_step(long double mean, double x, size_t i)
{
	return mean + (x - mean) / (long double)(i + 1);
}

/* gsl_stats_mean of an exact view's values, bit for bit, from its first
 * positive value: the zeros before it leave the mean at +0 (each step is a
 * long double division, about 20 cycles). */
static double exact_mean(const struct samples_view *view)
{
	long double mean = 0;
	for (size_t j = 0; j < view->n; j++)
		mean = mean_step(mean, view->v[j], (size_t)view->zeros + j);
	return (double)mean;
}

double samples_view_mean(const struct samples_view *view)
{
	if (!samples_view_count(view))
		return NAN;
	if (view->all.sketch)
		return view->all.sum / (double)view->all.count;
	return exact_mean(view);
}

/* The value of rank r (0-based). */
static double value_at(const struct samples_view *view, int64_t r)
{
	if (!view->all.sketch)
		return r < view->zeros ? 0 : view->v[r - view->zeros];
	return view->pdf ? sketch_value(&view->all, view->pdf, r) : 0;
}

double samples_view_quantile(const struct samples_view *view, double f)
{
	int64_t n = samples_view_count(view);
	if (!n)
		return NAN;
	/* as gsl_stats_quantile_from_sorted_data: between the ranks around f (n - 1) */
	double index = f * (double)(n - 1);
	int64_t lhs = (int64_t)index;
	double delta = index - (double)lhs;
	if (lhs == n - 1)
		return value_at(view, lhs);
	return (1 - delta) * value_at(view, lhs) + delta * value_at(view, lhs + 1);
}

void samples_view_free(struct samples_view *view)
{
	if (!view->borrowed)
		free(view->v);
	if (view->pdf)
		gsl_histogram_pdf_free(view->pdf);
	samples_free(&view->all);
	memset(view, 0, sizeof *view);
}

/* Sorted exact parts merged in order, at most: a merge looks at each one's
 * next value (more are sorted as one copy, samples_view_init). */
#define MERGE_PARTS 8

/* samples_stats of the k sorted exact parts with positive values, n values
 * and zeros zeros in all, read in order by merging them instead of sorting a
 * copy of their union (80 MB and as much again for the sort at 10 M jobs):
 * the mean's recurrence runs along the merge from the first positive value
 * (exact_mean), and the values at the quantiles' ranks are kept as it passes
 * them (samples_view_quantile's figure). */
static struct samples_stats merged_stats(const struct samples *const *p, size_t k, size_t n,
					 size_t zeros)
{
	static const double f[3] = {0.50, 0.95, 0.99};
	size_t rank[6];
	double at[6] = {0}; /* ranks below zeros: zeros */
	for (size_t q = 0; q < 3; q++) {
		rank[2 * q] = (size_t)(f[q] * (double)(n - 1));
		rank[2 * q + 1] = rank[2 * q] + 1;
	}
	size_t next[MERGE_PARTS] = {0};
	double max = 0;
	for (size_t i = 0; i < k; i++)
		max = p[i]->v[p[i]->n - 1] > max ? p[i]->v[p[i]->n - 1] : max;
	long double mean = 0;
	for (size_t r = zeros; r < n; r++) {
		size_t from = k;
		for (size_t i = 0; i < k; i++)
			if (next[i] < p[i]->n &&
			    (from == k || p[i]->v[next[i]] < p[from]->v[next[from]]))
				from = i;
		double x = p[from]->v[next[from]++];
		mean = mean_step(mean, x, r);
		for (size_t q = 0; q < 6; q++)
			at[q] = rank[q] == r ? x : at[q];
	}
	struct samples_stats st = {(double)mean, 0, 0, 0, max};
	double *quantile[3] = {&st.p50, &st.p95, &st.p99};
	for (size_t q = 0; q < 3; q++) {
		const double index = f[q] * (double)(n - 1);
		const double delta = index - (double)rank[2 * q];
		*quantile[q] = rank[2 * q] == n - 1
				       ? at[2 * q]
				       : (1 - delta) * at[2 * q] + delta * at[2 * q + 1];
	}
	return st;
}

struct samples_stats samples_stats(const struct samples *const *parts, size_t n)
{
	const struct samples *held[MERGE_PARTS];
	size_t k = 0, values = 0, zeros = 0;
	bool sorted = true;
	for (size_t i = 0; i < n && sorted; i++) {
		sorted = !parts[i]->sketch && (parts[i]->sorted || !parts[i]->n);
		if (parts[i]->n && k < MERGE_PARTS)
			held[k] = parts[i];
		k += parts[i]->n > 0;
		values += parts[i]->n + (size_t)parts[i]->zeros;
		zeros += (size_t)parts[i]->zeros;
	}
	if (sorted && k > 1 && k <= MERGE_PARTS)
		return merged_stats(held, k, values, zeros);
	struct samples_view view;
	samples_view_init(&view, parts, n);
	struct samples_stats st = {NAN, NAN, NAN, NAN, NAN};
	int64_t count = samples_view_count(&view);
	if (count) {
		st.mean = samples_view_mean(&view);
		st.p50 = samples_view_quantile(&view, 0.50);
		st.p95 = samples_view_quantile(&view, 0.95);
		st.p99 = samples_view_quantile(&view, 0.99);
		st.max = view.all.sketch ? view.all.max : view.n ? view.v[view.n - 1] : 0;
	}
	samples_view_free(&view);
	return st;
}
