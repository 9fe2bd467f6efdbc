/*
 * test_common.c - the allocation wrappers: a large block starts on a huge-page
 * boundary, and growing an array keeps its elements across that size.
 */
#include "gpuplan/common.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

Test(common, large_blocks_start_on_a_huge_page)
{
	for (size_t bytes = GP_HUGE_PAGE; bytes <= 5 * GP_HUGE_PAGE; bytes += GP_HUGE_PAGE / 3) {
		unsigned char *p = gp_xmalloc(bytes);
		cr_assert_eq((uintptr_t)p % GP_HUGE_PAGE, 0, "%zu bytes at %p", bytes, (void *)p);
		memset(p, 0xab, bytes); /* all of it is ours */
		free(p);
	}
	void *small = gp_xmalloc(GP_HUGE_PAGE - 1);
	free(small);
}

Test(common, growing_keeps_the_elements_across_a_huge_page)
{
	uint32_t *v = NULL;
	size_t cap = 0, n = 3 * GP_HUGE_PAGE / sizeof *v + 7;
	for (size_t i = 0; i < n; i++) {
		GP_GROW(v, cap, i + 1);
		v[i] = (uint32_t)(i * 2654435761u);
	}
	cr_assert_geq(cap, n);
	cr_assert_eq((uintptr_t)v % GP_HUGE_PAGE, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(v[i], (uint32_t)(i * 2654435761u), "element %zu", i);
	free(v);
}

Test(common, large_realloc_and_calloc_keep_their_contracts)
{
	/* in small steps, as the readers that grow by one element do */
	uint64_t *v = NULL;
	size_t n = GP_HUGE_PAGE / sizeof *v + 1000;
	for (size_t i = 0; i < n; i += 1000) {
		v = gp_xrealloc(v, (i + 1000) * sizeof *v);
		for (size_t k = i; k < i + 1000; k++)
			v[k] = k;
	}
	for (size_t k = 0; k < n; k++)
		cr_assert_eq(v[k], k);
	free(v);
	unsigned char *z = gp_xcalloc(3, GP_HUGE_PAGE);
	for (size_t k = 0; k < 3 * GP_HUGE_PAGE; k += 4093)
		cr_assert_eq(z[k], 0, "byte %zu", k);
	free(z);
}
