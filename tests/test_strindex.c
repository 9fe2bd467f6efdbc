/*
 * test_strindex.c - strings interned to dense ids (strindex.h): the table
 * the importer finds pods in and reasons.c interns messages in.
 */
#include <criterion/criterion.h>

#include "gpuplan/strindex.h"

#include <stdio.h>

Test(strindex, ids_are_dense_in_order_of_first_addition)
{
	struct strindex x = {0};
	bool added;
	cr_expect_eq(strindex_add(&x, "b", &added), 0);
	cr_expect(added);
	cr_expect_eq(strindex_add(&x, "a", &added), 1);
	cr_expect_eq(strindex_add(&x, "b", &added), 0);
	cr_expect(!added);
	cr_expect_eq(strindex_find(&x, "a"), 1);
	cr_expect_eq(strindex_find(&x, "c"), STRINDEX_NONE);
	cr_expect_str_eq(strindex_key(&x, 0), "b");
	cr_expect_eq(strindex_add(&x, "", NULL), 2); /* the empty string is a key too */
	strindex_free(&x);
	cr_expect_eq(strindex_find(&x, "a"), STRINDEX_NONE); /* a freed table is empty */
}

Test(strindex, keys_survive_the_table_growing_many_times)
{
	struct strindex x = {0};
	char key[32];
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof key, "ns\x1fpod-%d", i);
		cr_assert_eq(strindex_add(&x, key, NULL), (size_t)i);
	}
	for (int i = 0; i < 100000; i += 997) {
		snprintf(key, sizeof key, "ns\x1fpod-%d", i);
		cr_expect_eq(strindex_find(&x, key), (size_t)i);
		cr_expect_str_eq(strindex_key(&x, (size_t)i), key);
	}
	cr_expect_eq(x.n, 100000);
	cr_expect(hash_ids_slots(&x.index) >= 2 * x.n); /* at most half full */
	strindex_free(&x);
}
