/*
 * test_metric.c - the table of metrics (metric.h) and the results' lookup
 * by id (results.h): every id has its row, docs/results.md lists every row
 * with its unit and scopes and nothing else, a name the user types resolves
 * or is told the closest one, and an absent metric is absent, not NAN.
 */
#include "gpuplan/metric.h"
#include "gpuplan/results.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define RESULTS_PAGE "docs/results.md"

TestSuite(metric);

Test(metric, every_id_has_a_row_with_a_unique_snake_case_name)
{
	for (int i = 0; i < METRIC_COUNT; i++) {
		const struct metric_def *d = &metric_defs[i];
		cr_assert_not_null(d->name, "metric id %d has no row in sim/metric.c", i);
		cr_expect(d->what && *d->what, "%s: no description", d->name);
		cr_expect(d->scopes != 0, "%s: no scope", d->name);
		cr_expect(!d->unit || *d->unit, "%s: an empty unit", d->name);
		cr_expect_eq(strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789_"),
			     strlen(d->name), "%s: not lower_snake_case", d->name);
		cr_expect_eq(metric_of(d->name), i, "%s: named twice", d->name);
	}
}

Test(metric, a_name_resolves_to_its_id_and_an_unknown_one_to_the_closest)
{
	cr_assert_eq(metric_of("queue_time_p95_s"), METRIC_QUEUE_TIME_P95_S);
	cr_assert_eq(metric_of("queue_time_p95"), -1);
	cr_assert_eq(metric_of(""), -1);
	cr_assert_str_eq(metric_closest("deadline_met"), "deadline_met_pct");
	cr_assert_str_eq(metric_closest("queue_time_p59_s"), "queue_time_p50_s");
	cr_assert_str_eq(metric_closest("ttft"), "ttft_mean_s"); /* the first it begins */
	cr_assert_null(metric_closest("zzzzzzzzzzzzzzzz"));
}

/* "| name | unit | all, pool |" rows of the "Units and scopes" table; the
 * number read, or -1 without the section. */
static int read_docs(char names[][64], char units[][32], char scopes[][64], int max)
{
	FILE *f = fopen(RESULTS_PAGE, "r");
	cr_assert_not_null(f, "%s: cannot open (run the tests from the repository)", RESULTS_PAGE);
	char line[512];
	int n = -1;
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "### Units and scopes", 20)) {
			n = 0;
			continue;
		}
		if (n < 0)
			continue;
		if (line[0] == '#')
			break;
		char a[128], b[128], c[128];
		if (sscanf(line, "| %127[^ |] | %127[^ |] | %127[^|]|", a, b, c) != 3 ||
		    !strcmp(a, "metric") || a[0] == '-')
			continue;
		cr_assert_lt(n, max, "%s: more rows than metrics", RESULTS_PAGE);
		size_t len = strlen(c);
		while (len && c[len - 1] == ' ')
			c[--len] = '\0';
		snprintf(names[n], 64, "%.63s", a);
		snprintf(units[n], 32, "%.31s", b);
		snprintf(scopes[n], 64, "%.63s", c);
		n++;
	}
	fclose(f);
	return n;
}

static void scopes_text(uint8_t bits, char *buf, size_t len)
{
	static const char *const names[] = {"all", "pool", "workload", "service"};
	buf[0] = '\0';
	for (int k = 0; k < 4; k++)
		if (bits & (1u << k))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "",
				 names[k]);
}

Test(metric, the_results_page_lists_every_metric_with_its_unit_and_scopes)
{
	static char names[2 * METRIC_COUNT][64], units[2 * METRIC_COUNT][32],
		scopes[2 * METRIC_COUNT][64];
	int n = read_docs(names, units, scopes, 2 * METRIC_COUNT);
	cr_assert_geq(n, 0, "%s: no \"### Units and scopes\" section", RESULTS_PAGE);
	for (int i = 0; i < METRIC_COUNT; i++) {
		const struct metric_def *d = &metric_defs[i];
		const char *unit = d->unit ? d->unit : "currency";
		char want[64];
		scopes_text(d->scopes, want, sizeof want);
		int at = -1;
		for (int k = 0; k < n && at < 0; k++)
			if (!strcmp(names[k], d->name))
				at = k;
		cr_expect_geq(at, 0, "%s: metric %s (unit %s) is not in its list", RESULTS_PAGE,
			      d->name, unit);
		if (at < 0)
			continue;
		cr_expect_str_eq(units[at], unit, "%s: %s has unit %s, the table %s", RESULTS_PAGE,
				 d->name, units[at], unit);
		cr_expect_str_eq(scopes[at], want, "%s: %s has scopes '%s', the table '%s'",
				 RESULTS_PAGE, d->name, scopes[at], want);
	}
	for (int k = 0; k < n; k++)
		cr_expect_geq(metric_of(names[k]), 0,
			      "%s lists %s, which sim/metric.c does not have", RESULTS_PAGE,
			      names[k]);
	cr_expect_eq(n, METRIC_COUNT, "%s: %d rows for %d metrics", RESULTS_PAGE, n,
		     (int)METRIC_COUNT);
}

Test(metric, a_metric_is_written_with_the_tables_name_and_unit)
{
	struct results r;
	results_init(&r);
	r.currency = "eur";
	results_add_metric(&r, "all", METRIC_QUEUE_TIME_P95_S, 120);
	results_add_metric(&r, "train", METRIC_COST_TOTAL, 7);
	cr_assert_eq(r.n_metrics, 2);
	cr_assert_str_eq(r.metrics[0].name, "queue_time_p95_s");
	cr_assert_str_eq(r.metrics[0].unit, "s");
	cr_assert_str_eq(r.metrics[1].name, "cost_total");
	cr_assert_str_eq(r.metrics[1].unit, "eur");
	results_free(&r);
}

Test(metric, an_absent_metric_is_absent_and_a_nan_one_present)
{
	struct results r;
	results_init(&r);
	results_add_metric(&r, "all", METRIC_GPU_ALLOCATION_PCT, NAN); /* does not apply */
	results_add_metric(&r, "all", METRIC_GOAL_MET, 1);
	results_add_metric(&r, "train", METRIC_GOAL_MET, 0);
	double v = 5;
	cr_assert(results_get(&r, "all", METRIC_GPU_ALLOCATION_PCT, &v));
	cr_assert(isnan(v));
	cr_assert_not(results_get(&r, "all", METRIC_SLO_MET, &v));
	cr_assert(isnan(v));
	cr_assert_not(results_get(&r, "train", METRIC_GPU_ALLOCATION_PCT, &v));
	cr_assert_eq(results_or(&r, "all", METRIC_SLO_MET, 1), 1);
	cr_assert(results_holds(&r, "all", METRIC_GOAL_MET));
	cr_assert_not(results_holds(&r, "train", METRIC_GOAL_MET));
	/* an absent goal is not a met one (NAN < 1 is false: it used to pass) */
	cr_assert_not(results_holds(&r, "serve", METRIC_GOAL_MET));
	results_free(&r);
}

/* The first metric added under (scope, id) is the one read, as before the
 * index: with the index and by the scan once rows come around it. */
Test(metric, the_first_of_two_adds_is_read)
{
	struct results r;
	results_init(&r);
	results_add_metric(&r, "all", METRIC_JOBS_FAILED, 1);
	results_add_metric(&r, "all", METRIC_JOBS_FAILED, 2);
	cr_assert_eq(results_or(&r, "all", METRIC_JOBS_FAILED, NAN), 1);
	results_free(&r);
}
