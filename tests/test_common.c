/*
 * test_common.c - the allocation wrappers: a large block starts on a huge-page
 * boundary, and growing an array keeps its elements across that size; errors
 * carry their kind, which decides what main prints before them; a scratch
 * string grows to what it carries and is reused.
 */
#include "gpuplan/common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* What main.c's fail prints for err returned with status rc: the prefix the
 * kind asks for, then the message. */
static const char *report(int rc, const struct gp_err *err)
{
	static char line[8192];
	snprintf(line, sizeof line, "%s%s", gp_err_prefix(rc, err), err->msg);
	return line;
}

Test(common, each_kind_of_error_is_reported_by_its_kind)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = gp_located(&err, (struct srcloc){"s.yaml", 3, 7}, "expected a number");
	cr_assert_eq(rc, GP_EINPUT);
	cr_assert_eq(err.kind, GP_ERR_LOCATED);
	cr_assert_eq(err.place_len, strlen("s.yaml:3:7"));
	cr_assert_str_eq(report(rc, &err), "s.yaml:3:7: error: expected a number");
	rc = gp_located(&err, (struct srcloc){"t.csv", 0, 0}, "cannot read");
	cr_assert_eq(err.place_len, strlen("t.csv"));
	cr_assert_str_eq(report(rc, &err), "t.csv: error: cannot read");

	rc = gp_errorf(&err, GP_EINPUT, "--seed expects a non-negative integer");
	cr_assert_eq(err.kind, GP_ERR_INPUT);
	cr_assert_eq(err.place_len, 0);
	cr_assert_str_eq(report(rc, &err), "gpuplan: error: --seed expects a non-negative integer");
	/* the text alone decides nothing: an input error quoting ": error: " */
	rc = gp_errorf(&err, GP_EINPUT, "--name 'a: error: b' is not a name");
	cr_assert_str_eq(report(rc, &err), "gpuplan: error: --name 'a: error: b' is not a name");

	rc = gp_errorf(&err, GP_ERUNTIME, "r.db: cannot open database");
	cr_assert_eq(err.kind, GP_ERR_IO);
	cr_assert_str_eq(report(rc, &err), "gpuplan: error: r.db: cannot open database");

	rc = gp_errkindf(&err, GP_ERR_LIMIT, GP_EINPUT, "--goal: at most %d of them", 16);
	cr_assert_eq(rc, GP_EINPUT);
	cr_assert_eq(err.kind, GP_ERR_LIMIT);
	cr_assert_str_eq(report(rc, &err), "gpuplan: error: --goal: at most 16 of them");

	rc = gp_errkindf(&err, GP_ERR_INTERNAL, GP_ERUNTIME, "job %d has workload %d of %d", 4, 9,
			 2);
	cr_assert_eq(rc, GP_ERUNTIME);
	cr_assert_eq(err.kind, GP_ERR_INTERNAL);
	cr_assert_str_eq(report(rc, &err), "gpuplan: error: job 4 has workload 9 of 2");

	/* A located error returned as a runtime failure is said as one. */
	gp_located(&err, (struct srcloc){"trace.csv", 2, 0}, "changed since it was read");
	cr_assert_str_eq(report(GP_ERUNTIME, &err),
			 "gpuplan: error: trace.csv:2: error: changed since it was read");
}

/* A message quoting another keeps its kind, and may quote the error it
 * overwrites. */
Test(common, a_wrapped_error_keeps_the_inner_kind)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	gp_located(&err, (struct srcloc){"trace.csv", 4, 0}, "a NUL byte");
	int rc = gp_wrapf(&err, &err, GP_EINPUT, "import: the check failed: %s", err.msg);
	cr_assert_eq(err.kind, GP_ERR_LOCATED);
	cr_assert_eq(err.place_len, 0, "the place is no longer at the start");
	cr_assert_str_eq(report(rc, &err),
			 "import: the check failed: trace.csv:4: error: a NUL byte");
	struct gp_err inner GP_ERR_SCOPE = {0};
	gp_errorf(&inner, GP_EINPUT, "expected a number");
	rc = gp_wrapf(&err, &inner, GP_EINPUT, "--lo %s", inner.msg);
	cr_assert_eq(err.kind, GP_ERR_INPUT);
	cr_assert_str_eq(report(rc, &err), "gpuplan: error: --lo expected a number");
}

/* A message is sized to what it carries: a located error naming a 3,000-byte
 * path keeps it whole, place and all, and so does a message that quotes it;
 * moved, copied and freed, it stays one owner's. */
Test(common, a_long_path_is_kept_whole)
{
	char path[3001];
	memset(path, 'p', 3000);
	path[3000] = '\0';
	for (size_t i = 100; i < 3000; i += 100)
		path[i] = '/';
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_str_eq(gp_err_msg(&err), "", "an empty error says nothing");
	int rc = gp_located(&err, (struct srcloc){path, 12, 3}, "no item named '%s'", path + 2900);
	cr_assert_eq(rc, GP_EINPUT);
	cr_assert_eq(err.place_len, 3000 + strlen(":12:3"));
	cr_assert_eq(strlen(err.msg), 3000 + strlen(":12:3: error: no item named ''") + 100);
	char want[3200];
	snprintf(want, sizeof want, "%s:12:3: error: no item named '%s'", path, path + 2900);
	cr_assert_str_eq(err.msg, want);
	cr_assert_str_eq(report(rc, &err), want);

	struct gp_err copy GP_ERR_SCOPE = {0};
	gp_err_copy(&copy, &err);
	gp_wrapf(&err, &err, GP_EINPUT, "import: %s: %s", path, err.msg);
	cr_assert_eq(strlen(err.msg), strlen("import: : ") + 3000 + strlen(copy.msg));
	cr_assert_str_eq(err.msg + strlen("import: : ") + 3000, copy.msg);
	cr_assert_eq(copy.kind, GP_ERR_LOCATED);
	cr_assert_eq(copy.place_len, 3005);

	struct gp_err moved GP_ERR_SCOPE = {0};
	gp_err_move(&moved, &copy);
	cr_assert_null(copy.msg);
	cr_assert_eq(copy.kind, GP_ERR_NONE);
	cr_assert_eq(moved.place_len, 3005);
	gp_err_free(&moved);
	cr_assert_null(moved.msg);
}

Test(common, a_scratch_string_is_reused_and_keeps_what_it_carries)
{
	struct gp_sbuf b = {0};
	cr_assert_str_eq(gp_sb_str(&b), "");
	char name[254];
	memset(name, 'q', 253);
	name[253] = '\0';
	gp_sb_printf(&b, "ClusterQueue %s to be admitted", name);
	cr_assert_eq(b.n, 13 + 253 + 15);
	cr_assert_str_eq(gp_sb_str(&b) + 13 + 253, " to be admitted");
	char *before = b.s;
	size_t cap = b.cap;
	gp_sb_clear(&b);
	cr_assert_str_eq(gp_sb_str(&b), "");
	gp_sb_printf(&b, "%s", "short");
	cr_assert_eq(b.s, before, "cleared, the memory is kept");
	cr_assert_eq(b.cap, cap);
	cr_assert_str_eq(gp_sb_str(&b), "short");
	/* past the room left: it grows and formats again, whole */
	gp_sb_printf(&b, " %s %s", name, name);
	cr_assert_eq(b.n, 5 + 2 * 254);
	cr_assert_eq(strlen(b.s), b.n);
	cr_assert_str_eq(b.s + b.n - 253, name);
	gp_sb_putc(&b, '\0');
	gp_sb_putc(&b, 'x');
	cr_assert_eq(b.n, 5 + 2 * 254 + 2);
	cr_assert_str_eq(b.s + b.n - 1, "x", "strings packed one after another");
	free(b.s);
}

/* gp_fmin and gp_fmax stand in for libm's calls on the gauges' hot path: the
 * same bits for every pair, zeros of both signs and NaNs included. */
Test(common, gp_fmin_and_gp_fmax_give_the_bits_of_fmin_and_fmax)
{
	const double v[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, -1e300, INFINITY, -INFINITY, NAN};
	/* libm's calls, as the simulation made them, not GCC's builtins */
	double (*volatile lib_min)(double, double) = fmin,
					   (*volatile lib_max)(double, double) = fmax;
	size_t n = sizeof v / sizeof v[0];
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++) {
			double a = v[i], b = v[k];
			double lo = lib_min(a, b), hi = lib_max(a, b), glo = gp_fmin(a, b),
			       ghi = gp_fmax(a, b);
			cr_assert(!memcmp(&lo, &glo, sizeof lo), "fmin(%g, %g)", a, b);
			cr_assert(!memcmp(&hi, &ghi, sizeof hi), "fmax(%g, %g)", a, b);
		}
}
