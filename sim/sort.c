/*
 * sort.c - radix sort of doubles (see sort.h).
 */
#include "gpuplan/sort.h"

#include "gpuplan/common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 11
#define DIGITS     (1u << DIGIT_BITS)
#define PASSES     6  /* 6 x 11 >= 64 */
#define SMALL      64 /* below this, insertion sort */

/* A key whose unsigned order is the doubles' order: negative numbers have
 * every bit flipped, others only the sign bit. */
static uint64_t key_of(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u >> 63 ? ~u : u | UINT64_C(1) << 63;
}

static double double_of(uint64_t k)
{
	uint64_t u = k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k;
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static void insertion_sort(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The keys live in the caller's array of doubles while they are sorted:
 * may_alias lets one storage hold both (GCC and clang). */
typedef uint64_t key_word __attribute__((may_alias));

void sort_doubles_copy(double *dst, const double *src, size_t n)
{
	if (n < SMALL) {
		if (dst != src && n)
			memmove(dst, src, n * sizeof *dst);
		insertion_sort(dst, n);
		return;
	}
	key_word *from = (key_word *)dst, *to = gp_xmalloc(n * sizeof *to), *scratch = to;
	size_t(*count)[DIGITS] = gp_xcalloc(PASSES, sizeof *count);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_of(src[i]);
		from[i] = k;
		for (int p = 0; p < PASSES; p++)
			count[p][(k >> (p * DIGIT_BITS)) & (DIGITS - 1)]++;
	}
	for (int p = 0; p < PASSES; p++) {
		unsigned shift = (unsigned)(p * DIGIT_BITS);
		if (count[p][(from[0] >> shift) & (DIGITS - 1)] == n)
			continue; /* every key has this digit: the pass would not move anything */
		size_t sum = 0;
		for (size_t d = 0; d < DIGITS; d++) {
			size_t c = count[p][d];
			count[p][d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[p][(from[i] >> shift) & (DIGITS - 1)]++] = from[i];
		key_word *t = from;
		from = to;
		to = t;
	}
	for (size_t i = 0; i < n; i++) /* in place, or back from the scratch array */
		dst[i] = double_of(from[i]);
	free(scratch);
	free(count);
}

void sort_doubles(double *v, size_t n) { sort_doubles_copy(v, v, n); }
