/*
 * samples.h - order statistics of a stream of non-negative values (queue
 * times, request latencies), in memory that stops growing.
 *
 * Sample sets share a budget of values held exactly: a run's queue times
 * one, its request latencies another, of SAMPLES_EXACT_MAX each.
 * While a sample set is exact its figures are those of its sorted values:
 * the mean and percentiles gsl_stats_mean and
 * gsl_stats_quantile_from_sorted_data give, bit for bit.  Its zeros (the
 * waits of jobs that started as they arrived: every one at 10 M jobs on
 * 100,000 GPUs) are counted, not held, as they lead the sorted values; they
 * take their place in the budget all the same.  A set that would
 * take the budget past its max becomes a sketch and frees its values: zeros
 * are counted, positive values go to a GSL histogram of logarithmic bins,
 * each bound 1.005 times the one before (1 µs to 1e13 s), about 140 KiB.  A
 * sketched set's percentiles are within 0.5% of the exact ones (the
 * histogram inverted at the same ranks, interpolated in the bin); its count,
 * zeros and max are exact, its mean is the running sum over the count.
 * Sketches merge bin by bin, so a union (scope all) of sketched sets is
 * again within 0.5%.
 */
#ifndef GPUPLAN_SAMPLES_H
#define GPUPLAN_SAMPLES_H

#include <gsl/gsl_histogram.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values a run holds exactly, at most: 80 MB of doubles, and as much again
 * to sort them at the end (in place, samples_sort).  The figures of a union
 * of a few sorted sets read them merged in order; a union of more, or of
 * unsorted sets, sorts a copy (twice as much again). */
#define SAMPLES_EXACT_MAX 10000000

/* The values held exactly by a run's sample sets, against max. */
struct samples_budget {
	size_t held, max;
};

struct samples {
	double *v; /* the positive values, while sketch is NULL */
	size_t n, cap;
	gsl_histogram *sketch; /* positive values, once the set is a sketch */
	int64_t zeros;         /* the zeros added */
	int64_t count;         /* once a sketch: every value added */
	double sum, max;       /* once a sketch: of every value added */
	bool sorted;           /* v is in order (samples_sort); a view of this set
				* alone then reads v without a copy */
};

struct samples_stats {
	double mean, p50, p95, p99, max; /* NaN without values */
};

/* The union of sample sets, ready for its figures: its zeros and sorted
 * positive values, or one sketch of them all. */
struct samples_view {
	int64_t zeros; /* when every part was exact: the zeros, ranked first */
	double *v;     /* and the positive values after them, sorted */
	size_t n;
	bool borrowed;          /* v is a sorted part's own (samples_sort) */
	struct samples all;     /* the sketch, otherwise */
	gsl_histogram_pdf *pdf; /* its positive values' distribution; NULL: none */
};

/* Adds x >= 0 to s, charging b while s is exact. */
void samples_add(struct samples *s, struct samples_budget *b, double x);

/* Makes room for n values in s at once, when they fit b's max: a set whose
 * size is known ahead (a workload's count) then grows without copies.  The
 * pages are touched only as values arrive. */
void samples_reserve(struct samples *s, const struct samples_budget *b, size_t n);

/* Puts s's positive values in order, in place: no figure depends on their
 * order, and a view of s alone then borrows them instead of sorting a copy. */
void samples_sort(struct samples *s);

/* The number of values added to s. */
int64_t samples_count(const struct samples *s);

/* The figures of the union of parts[0..n): exact when every part is,
 * else from one sketch of them all.  Up to eight sorted parts with values
 * are merged in order, without a copy. */
struct samples_stats samples_stats(const struct samples *const *parts, size_t n);

/* The union of parts[0..n) as a view (exact when every part is); its
 * number of values, their mean (NaN without values) and the f-quantile,
 * 0 <= f <= 1, as gsl_stats_quantile_from_sorted_data defines it. */
void samples_view_init(struct samples_view *view, const struct samples *const *parts, size_t n);
int64_t samples_view_count(const struct samples_view *view);
double samples_view_mean(const struct samples_view *view);
double samples_view_quantile(const struct samples_view *view, double f);
void samples_view_free(struct samples_view *view);

/* Frees what s holds; s is then empty. */
void samples_free(struct samples *s);

#endif
