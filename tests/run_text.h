/*
 * run_text.h - the fixture of the tests that run scenarios written in the
 * test: a private folder for the files a scenario names (a trace, a model
 * config), the scenario text loaded with its --set overrides and simulated,
 * the scenario and its results kept for the assertions.  Use run_text_init
 * and run_text_fini as the suite's .init and .fini.  Included by one test
 * file each, so the statics are per file; static inline, so a file that uses
 * only some of it compiles without warnings.
 */
#ifndef GPUPLAN_TESTS_RUN_TEXT_H
#define GPUPLAN_TESTS_RUN_TEXT_H

#include "gpuplan/run.h"
#include "gpuplan/scenario.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];
static struct scenario *sc;
static struct results r;

static inline void run_text_init(void)
{
	strcpy(dir, "/tmp/gpuplan-text-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	results_init(&r);
}

static inline void run_text_fini(void)
{
	results_free(&r);
	scenario_free(sc);
	sc = NULL;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Writes text to the file name in the test's folder. */
static inline void write_file(const char *name, const char *text)
{
	char p[160];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "cannot write %s", p);
	fputs(text, f);
	fclose(f);
}

/* Loads the scenario text (with its sets) and runs it into r. */
static inline void run_with(const char *text, const char *const *sets, size_t n)
{
	char p[160];
	struct gp_err err GP_ERR_SCOPE = {0};
	write_file("s.yaml", text);
	snprintf(p, sizeof p, "%s/s.yaml", dir);
	cr_assert_eq(scenario_load(p, sets, n, &sc, &err), GP_OK, "%s\n%s", err.msg, text);
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK, "%s", err.msg);
}

static inline void run(const char *text) { run_with(text, NULL, 0); }

#endif
