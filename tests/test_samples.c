/*
 * test_samples.c - queue-time statistics: exact (GSL's figures, bit for bit)
 * while a run's budget holds the values, within 0.5% once sets become
 * sketches, and merged sketches as close.
 */
#include "gpuplan/samples.h"

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Queue times as a busy queue gives them: a share start at once, the rest
 * exponential (mean 1 h) or lognormal (a heavy tail), in whole µs. */
static double draw(gsl_rng *rng, double zeros, bool heavy)
{
	if (gsl_rng_uniform(rng) < zeros)
		return 0;
	double x = heavy ? gsl_ran_lognormal(rng, 5, 2.5) : gsl_ran_exponential(rng, 3600);
	return fmax(1, round(x * 1e6)) / 1e6;
}

/* The figures GSL gives for v[0..n) (sorted here). */
static struct samples_stats reference(double *v, size_t n)
{
	gsl_sort(v, 1, n);
	return (struct samples_stats){gsl_stats_mean(v, 1, n),
				      gsl_stats_quantile_from_sorted_data(v, 1, n, 0.50),
				      gsl_stats_quantile_from_sorted_data(v, 1, n, 0.95),
				      gsl_stats_quantile_from_sorted_data(v, 1, n, 0.99), v[n - 1]};
}

static void expect_within(struct samples_stats got, struct samples_stats want, double rel)
{
	cr_expect(fabs(got.p50 - want.p50) <= rel * want.p50, "p50 %.9g, exact %.9g", got.p50,
		  want.p50);
	cr_expect(fabs(got.p95 - want.p95) <= rel * want.p95, "p95 %.9g, exact %.9g", got.p95,
		  want.p95);
	cr_expect(fabs(got.p99 - want.p99) <= rel * want.p99, "p99 %.9g, exact %.9g", got.p99,
		  want.p99);
	cr_expect_eq(got.max, want.max);
	cr_expect(fabs(got.mean - want.mean) <= 1e-9 * want.mean, "mean %.12g, exact %.12g",
		  got.mean, want.mean);
}

Test(samples, within_the_budget_the_figures_are_gsls_bit_for_bit)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct samples_budget b = {0, SAMPLES_EXACT_MAX};
	struct samples a = {0}, c = {0};
	size_t n = 100000;
	double *v = malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		v[i] = draw(rng, 0.3, i % 2);
		samples_add(i % 3 ? &a : &c, &b, v[i]);
	}
	const struct samples *both[] = {&a, &c};
	struct samples_stats got = samples_stats(both, 2), want = reference(v, n);
	cr_assert(!memcmp(&got, &want, sizeof got), "the exact figures are GSL's");
	cr_assert_eq(b.held, n);
	cr_assert_null(a.sketch);
	samples_free(&a);
	samples_free(&c);
	free(v);
	gsl_rng_free(rng);
}

/* Sorted sets are merged in order rather than sorted as one copy: the
 * figures are still GSL's on their union, bit for bit, for two to nine sets
 * (past eight, the copy), with and without zeros, down to two values. */
Test(samples, sorted_sets_merged_give_gsls_figures_bit_for_bit)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	const size_t sizes[] = {2, 3, 17, 40000};
	const double zeros[] = {0, 0.5, 1};
	for (size_t k = 2; k <= 9; k++)
		for (size_t z = 0; z < 3; z++)
			for (size_t m = 0; m < 4; m++) {
				struct samples_budget b = {0, SAMPLES_EXACT_MAX};
				struct samples set[9] = {0};
				const struct samples *parts[9];
				size_t n = sizes[m];
				double *v = malloc(n * sizeof *v);
				for (size_t i = 0; i < n; i++) {
					v[i] = draw(rng, zeros[z], i % 2);
					samples_add(&set[gsl_rng_uniform_int(rng, k)], &b, v[i]);
				}
				for (size_t i = 0; i < k; i++) {
					samples_sort(&set[i]);
					parts[i] = &set[i];
				}
				struct samples_stats got = samples_stats(parts, k);
				struct samples_stats want = reference(v, n);
				cr_assert(
					!memcmp(&got, &want, sizeof got),
					"%zu sets, %zu values, %.1f zeros: mean %.17g against %.17g, "
					"p99 %.17g against %.17g",
					k, n, zeros[z], got.mean, want.mean, got.p99, want.p99);
				for (size_t i = 0; i < k; i++)
					samples_free(&set[i]);
				free(v);
			}
	gsl_rng_free(rng);
}

/* A set reserved for its known size and sorted in place gives the figures
 * of the same values added to a set that was not: a view of it alone
 * borrows its values (no copy), and a union with an empty set too; a value
 * added after the sort makes it unsorted again, and a set past its
 * reservation grows. */
Test(samples, a_reserved_set_sorted_in_place_gives_the_same_figures)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct samples_budget b = {0, SAMPLES_EXACT_MAX}, b2 = b;
	struct samples plain = {0}, kept = {0}, empty = {0};
	size_t n = 50000;
	samples_reserve(&kept, &b2, n / 2); /* its positive values grow it past that */
	for (size_t i = 0; i < n; i++) {
		double x = draw(rng, 0.2, i % 2);
		samples_add(&plain, &b, x);
		samples_add(&kept, &b2, x);
	}
	cr_assert_gt(kept.n, n / 2);
	cr_assert_geq(kept.cap, kept.n);
	cr_assert_eq(samples_count(&kept), (int64_t)n, "its zeros are counted");
	cr_assert_eq(b2.held, n, "and take their place in the budget");
	samples_sort(&kept);
	cr_assert(kept.sorted);
	const struct samples *p1[] = {&plain}, *k1[] = {&kept}, *k2[] = {&empty, &kept};
	struct samples_stats want = samples_stats(p1, 1);
	struct samples_stats alone = samples_stats(k1, 1), with_empty = samples_stats(k2, 2);
	cr_assert(!memcmp(&alone, &want, sizeof want), "sorted in place: the same figures");
	cr_assert(!memcmp(&with_empty, &want, sizeof want), "beside an empty set too");
	struct samples_view view;
	samples_view_init(&view, k2, 2);
	cr_assert_eq(view.v, kept.v, "the view borrows the sorted values");
	samples_view_free(&view);
	samples_add(&kept, &b2, 1e9);
	cr_assert(!kept.sorted, "a value added after the sort");
	samples_view_init(&view, k1, 1);
	cr_assert_neq(view.v, kept.v, "an unsorted set is sorted into a copy");
	cr_assert_eq(view.v[view.n - 1], 1e9);
	samples_view_free(&view);
	samples_free(&plain);
	samples_free(&kept);
	gsl_rng_free(rng);
}

/* A budget of 1,000: the first set takes 800, the second its 200 and then
 * becomes a sketch, giving its place back; the first then grows to 1,000
 * and becomes one in turn.  The budget is never passed. */
Test(samples, a_set_that_would_pass_the_budget_becomes_a_sketch)
{
	struct samples_budget b = {0, 1000};
	struct samples a = {0}, c = {0};
	for (int i = 0; i < 800; i++)
		samples_add(&a, &b, i);
	for (int i = 0; i < 201; i++) {
		cr_assert_null(c.sketch, "exact at %d", i);
		samples_add(&c, &b, i);
		cr_assert_leq(b.held, 1000);
	}
	cr_assert_not_null(c.sketch);
	cr_assert_eq(b.held, 800);
	cr_assert_eq(samples_count(&c), 201);
	cr_assert_eq(c.zeros, 1);
	cr_assert_null(c.v);
	for (int i = 0; i < 201; i++)
		samples_add(&a, &b, 1);
	cr_assert_not_null(a.sketch);
	cr_assert_eq(b.held, 0);
	cr_assert_eq(samples_count(&a), 1001);
	samples_free(&a);
	samples_free(&c);
}

/* A million queue times with a tenth of the budget: percentiles within 0.5%
 * of the exact ones, for light and heavy tails; max and zeros exact. */
static void sketch_of_a_million(bool heavy)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct samples_budget b = {0, 100000};
	struct samples s = {0};
	size_t n = 1000000;
	double *v = malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		v[i] = draw(rng, 0.2, heavy);
		samples_add(&s, &b, v[i]);
	}
	cr_assert_not_null(s.sketch);
	const struct samples *one[] = {&s};
	expect_within(samples_stats(one, 1), reference(v, n), 0.005);
	samples_free(&s);
	free(v);
	gsl_rng_free(rng);
}

Test(samples, a_sketch_is_within_half_a_percent_on_exponential_waits)
{
	sketch_of_a_million(false);
}

Test(samples, a_sketch_is_within_half_a_percent_on_a_heavy_tail) { sketch_of_a_million(true); }

/* Waits that take few values (work released at fixed times): each rank's
 * value is read back from its bin, so the bins' width is the error. */
Test(samples, a_sketch_of_few_distinct_values_is_within_half_a_percent)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct samples_budget b = {0, 1000};
	struct samples s = {0};
	/* p50 falls inside the 60s, p95 inside the 3600s, p99 inside the
	 * 86400s, none at the max (which is exact) */
	const double values[] = {0, 60, 900, 3600, 86400, 1e6};
	const double upto[] = {0.3, 0.6, 0.9, 0.96, 0.995, 1};
	size_t n = 100000;
	double *v = malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++) {
		double u = gsl_rng_uniform(rng);
		size_t k = 0;
		while (u >= upto[k])
			k++;
		samples_add(&s, &b, v[i] = values[k]);
	}
	const struct samples *one[] = {&s};
	expect_within(samples_stats(one, 1), reference(v, n), 0.005);
	samples_free(&s);
	free(v);
	gsl_rng_free(rng);
}

/* Scope all of a run where one workload's set is a sketch and the other's
 * exact: one sketch of both, as close to the exact union. */
Test(samples, an_exact_set_and_a_sketch_merge_within_half_a_percent)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct samples_budget b = {0, 50000};
	struct samples big = {0}, small = {0};
	size_t n = 300000, n_small = 20000;
	double *v = malloc(n * sizeof *v);
	for (size_t i = 0; i < n_small; i++)
		samples_add(&small, &b, v[i] = draw(rng, 0.5, false));
	for (size_t i = n_small; i < n; i++)
		samples_add(&big, &b, v[i] = draw(rng, 0.1, true));
	cr_assert_null(small.sketch);
	cr_assert_not_null(big.sketch);
	const struct samples *both[] = {&small, &big};
	expect_within(samples_stats(both, 2), reference(v, n), 0.005);
	samples_free(&big);
	samples_free(&small);
	free(v);
	gsl_rng_free(rng);
}

/* Edge cases: no values, only zeros, one value. */
Test(samples, empty_all_zero_and_single_sets)
{
	struct samples_budget b = {0, 1};
	struct samples s = {0};
	const struct samples *one[] = {&s};
	struct samples_stats st = samples_stats(one, 1);
	cr_assert(isnan(st.mean) && isnan(st.p50) && isnan(st.max));
	for (int i = 0; i < 5; i++)
		samples_add(&s, &b, 0);
	cr_assert_not_null(s.sketch);
	st = samples_stats(one, 1);
	cr_assert(st.mean == 0 && st.p50 == 0 && st.p99 == 0 && st.max == 0);
	samples_free(&s);
	samples_add(&s, &b, 7.25);
	samples_add(&s, &b, 7.25);
	st = samples_stats(one, 1);
	cr_assert_not_null(s.sketch);
	cr_assert_float_eq(st.p50, 7.25, 7.25 * 0.005);
	cr_assert(st.p99 <= 7.25 && st.max == 7.25 && st.mean == 7.25);
	samples_free(&s);
}
