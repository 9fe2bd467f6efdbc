/*
 * test_csv.c - what the trace readers share: how an error quotes a cell
 * (control bytes escaped, long fields cut) and the NUL-byte check.
 */
#include "gpuplan/csv.h"

#include <criterion/criterion.h>
#include <string.h>

Test(csv, a_quoted_cell_escapes_control_bytes)
{
	cr_assert_str_eq(CSV_Q("36\00100"), "36\\x0100"); /* \001, then "00" */
	cr_assert_str_eq(CSV_Q("a\tb\x7f"), "a\\x09b\\x7f");
	cr_assert_str_eq(CSV_Q("V100M16"), "V100M16");
}

Test(csv, a_long_cell_is_cut_with_an_ellipsis)
{
	char cell[5001];
	memset(cell, '9', 5000);
	cell[5000] = '\0';
	const char *q = CSV_Q(cell);
	cr_assert_eq(strlen(q), CSV_QUOTE_MAX + 3);
	cr_assert_str_eq(q + CSV_QUOTE_MAX, "...");
	memset(cell, '9', CSV_QUOTE_MAX);
	cell[CSV_QUOTE_MAX] = '\0';
	cr_assert_str_eq(CSV_Q(cell), cell, "a cell of exactly the limit is whole");
}

Test(csv, the_cut_never_splits_a_utf8_character)
{
	char cell[64];
	memset(cell, 'a', CSV_QUOTE_MAX - 1);
	strcpy(cell + CSV_QUOTE_MAX - 1, "\xc3\xa9tail"); /* é across the limit */
	const char *q = CSV_Q(cell);
	cr_assert_eq(strlen(q), CSV_QUOTE_MAX - 1 + 3);
	cr_assert_str_eq(q + CSV_QUOTE_MAX - 1, "...");
}

Test(csv, escapes_of_a_whole_cell_of_control_bytes_fit)
{
	char cell[CSV_QUOTE_MAX + 2];
	memset(cell, '\x1b', CSV_QUOTE_MAX + 1);
	cell[CSV_QUOTE_MAX + 1] = '\0';
	cr_assert_eq(strlen(CSV_Q(cell)), 4 * CSV_QUOTE_MAX + 3);
}

Test(csv, a_nul_byte_is_named_with_its_place)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(csv_check_text(&err, "t.csv", 3, "10,36\00000,1", 10), GP_EINPUT);
	cr_assert_str_eq(err.msg, "t.csv:3: error: a NUL byte at byte 6 of the line; expected "
				  "text (is this a binary file?)");
	cr_assert_eq(csv_check_text(&err, "t.csv", 3, "10,3600,1", 9), GP_OK);
}
