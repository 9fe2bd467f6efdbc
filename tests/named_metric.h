/*
 * named_metric.h - the tests' reading of a metric by its name, as the tests
 * and docs/results.md spell them: the name goes through metric.h's table
 * (a misspelt one fails the test instead of reading NAN), then results_or.
 * NAN: the run has no such metric in scope, or it does not apply.
 */
#ifndef GPUPLAN_TESTS_NAMED_METRIC_H
#define GPUPLAN_TESTS_NAMED_METRIC_H

#include "gpuplan/metric.h"
#include "gpuplan/results.h"

#include <criterion/criterion.h>
#include <math.h>

static inline double named_metric(const struct results *res, const char *scope, const char *name)
{
	int id = metric_of(name);
	cr_assert_geq(id, 0, "no metric is named '%s' (metric.h)", name);
	return results_or(res, scope, (enum metric_id)id, NAN);
}

#endif
