/*
 * run.h - the fixture of the whole-run tests: load a scenario with --set
 * overrides, simulate it, and keep the scenario and its results for the
 * assertions.  cleanup() frees both (use it as the suite's .fini, and
 * between two runs of one test).  Included by one test file each, so the
 * statics are per file.
 */
#ifndef GPUPLAN_TESTS_RUN_H
#define GPUPLAN_TESTS_RUN_H

#include "gpuplan/scenario.h"
#include "gpuplan/run.h"

#include <criterion/criterion.h>

static struct scenario *sc;
static struct results r;

static void run(const char *path, const char *const *sets, size_t n_sets)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, sets, n_sets, &sc, &err), GP_OK, "%s", err.msg);
	results_init(&r);
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK);
}

static void cleanup(void)
{
	results_free(&r);
	scenario_free(sc);
	sc = NULL;
}

/* run(path) with the overrides given as arguments: RUN_WITH(path, "a=1", "b=2"). */
#define RUN_WITH(path, ...)                                     \
	do {                                                    \
		const char *const sets_[] = {__VA_ARGS__};      \
		run(path, sets_, sizeof sets_ / sizeof *sets_); \
	} while (0)

#endif
