/*
 * test_sort.c - sort_doubles (in place or into a copy) gives exactly the array a
 * comparison sort gives.
 */
#include "gpuplan/sort.h"

#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sorts a copy both ways, and v into another array, and compares the bits;
 * v itself must be left as it was. */
static void expect_as_gsl(const double *v, size_t n)
{
	size_t bytes = (n ? n : 1) * sizeof *v;
	double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *before = malloc(bytes);
	memcpy(a, v, n * sizeof *a);
	memcpy(b, v, n * sizeof *b);
	memcpy(before, v, n * sizeof *before);
	sort_doubles(a, n);
	gsl_sort(b, 1, n);
	sort_doubles_copy(c, v, n);
	cr_assert(!memcmp(a, b, n * sizeof *a), "n = %zu", n);
	cr_assert(!memcmp(c, b, n * sizeof *c), "copy, n = %zu", n);
	cr_assert(!memcmp(v, before, n * sizeof *v), "the source moved, n = %zu", n);
	free(a);
	free(b);
	free(c);
	free(before);
}

Test(sort, matches_gsl_on_exponential_samples_with_ties_and_zeros)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	size_t n = 200000;
	double *v = malloc(n * sizeof *v);
	for (size_t i = 0; i < n; i++) /* a queue: a tenth start at once, times in µs */
		v[i] = gsl_rng_uniform(rng) < 0.1 ? 0 : floor(gsl_rng_uniform(rng) * 1e12) / 1e6;
	expect_as_gsl(v, n);
	for (size_t k = 0; k < 70; k++) /* the small sizes go another way */
		expect_as_gsl(v, k);
	free(v);
	gsl_rng_free(rng);
}

Test(sort, orders_negative_numbers_and_infinities)
{
	double v[100];
	for (int i = 0; i < 100; i++)
		v[i] = (i % 7 - 3) * 1.5e10 / (i + 1);
	v[3] = -INFINITY;
	v[50] = INFINITY;
	v[60] = -0.0 + 0.0;
	expect_as_gsl(v, 100);
}

Test(sort, leaves_one_value_repeated_as_it_is)
{
	double v[1000];
	for (int i = 0; i < 1000; i++)
		v[i] = 42.5;
	expect_as_gsl(v, 1000);
}
