/*
 * test_docs.c - README.md and docs/ say what bin/gpuplan does: every command
 * and option they name exists, every link resolves, no page points to a
 * design file outside the repository, and the README's console blocks run
 * as written (tests/docs.sh does the work; these tests run it and check that
 * it catches each kind of mistake).
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <stdio.h>
#include <string.h>

static char out[65536];

TestSuite(docs, .init = scratch_make, .fini = scratch_remove, .timeout = 60);

/* README's outputs are compared too: they are what a new user sees first. */
Test(docs, readme_and_docs_match_the_program)
{
	int rc = capture("sh tests/docs.sh --diff", out, sizeof out);
	cr_assert_eq(rc, 0, "tests/docs.sh found problems:\n%s", out);
}

/* A page with one mistake of each kind, all of which must be reported. */
Test(docs, the_checker_reports_every_kind_of_mistake)
{
	char page[128], cmd[512];
	snprintf(page, sizeof page, "%s/bad.md", dir);
	FILE *f = fopen(page, "w");
	cr_assert_not_null(f);
	fputs("# A bad page\n"
	      "\n"
	      "Run `gpuplan run x.yaml --no-such-flag`, or `gpuplan frobnicate`; see [x](missing.md).\n"
	      "\n"
	      "```console\n"
	      "$ bin/gpuplan check scenarios/quickstart.yaml\n"
	      "$ bin/gpuplan check scenarios/no-such-file.yaml\n"
	      "$ bin/gpuplan check tests/fixtures/bad/unknown-key.yaml \\\n"
	      "    --seed 3\n"
	      "tests/fixtures/bad/unknown-key.yaml:1:1: error: shown as an error\n"
	      "```\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "GPUPLAN_DOCS_PAGES=%s sh tests/docs.sh %s", page, page);
	cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
	cr_expect(strstr(out, "bad.md:3: 'gpuplan run --no-such-flag': no such option"), "%s", out);
	cr_expect(strstr(out, "bad.md:3: 'gpuplan frobnicate' is not a command"), "%s", out);
	cr_expect(strstr(out, "bad.md:3: the link to missing.md names no file"), "%s", out);
	/* The second command fails (exit 2) without an error shown. */
	cr_expect(strstr(out, "bad.md:7: exit code 2, expected 0"), "%s", out);
	cr_expect(!strstr(out, "bad.md:6:"), "%s", out);
}

/* --diff compares the output shown with the real one; "..." skips lines. */
Test(docs, diff_mode_compares_outputs)
{
	char page[128], cmd[512];
	snprintf(page, sizeof page, "%s/diff.md", dir);
	FILE *f = fopen(page, "w");
	cr_assert_not_null(f);
	fputs("```console\n"
	      "$ bin/gpuplan run scenarios/eval-window.yaml\n"
	      "eval-window: seed 42, run 1 in results/eval-window.db\n"
	      "...\n"
	      "$ bin/gpuplan run scenarios/eval-window.yaml --seed 7\n"
	      "eval-window: seed 7, run 3 in results/eval-window.db\n"
	      "...\n"
	      "```\n",
	      f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "GPUPLAN_DOCS_PAGES=%s sh tests/docs.sh --diff %s", page, page);
	cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
	cr_expect(!strstr(out, "diff.md:2:"), "%s", out);
	cr_expect(strstr(out, "diff.md:5: the output shown is not the real one"), "%s", out);
	cr_expect(strstr(out, "real:         eval-window: seed 7, run 2 in results/eval-window.db"),
		  "%s", out);
}

/* The console blocks of the reference pages run too, and show their real
 * outputs (wall-clock figures aside; "..." abridges). */
/* Every console block of every page: a few hundred runs, so more time than
 * the suite's 60 s on a loaded machine. */
Test(docs, reference_pages_run_as_written, .timeout = 180)
{
	int rc = capture("sh tests/docs.sh --diff docs/*.md", out, sizeof out);
	cr_assert_eq(rc, 0, "tests/docs.sh found problems:\n%s", out);
}

/* docs/results.md must list every table with its columns in order, and
 * every metric the runs write. */
Test(docs, the_checker_compares_the_results_page_with_the_database)
{
	char page[128], results[128], cmd[1024];
	snprintf(results, sizeof results, "%s/results.md", dir);
	snprintf(cmd, sizeof cmd,
		 "sed -e 's/^| params | run_id, key, value:/| params | run_id, key:/'"
		 " -e 's/makespan_s/makespan/' docs/results.md >%s",
		 results);
	cr_assert_eq(system(cmd), 0);
	snprintf(page, sizeof page, "%s/page.md", dir);
	FILE *f = fopen(page, "w");
	cr_assert_not_null(f);
	fputs("```console\n$ bin/gpuplan run scenarios/eval-window.yaml --quiet\n```\n", f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "GPUPLAN_DOCS_PAGES=%s GPUPLAN_DOCS_RESULTS=%s sh tests/docs.sh %s", page, results,
		 page);
	cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
	cr_expect(
		strstr(out,
		       "table params has columns 'run_id key value'; the page lists 'run_id key'"),
		"%s", out);
	cr_expect(strstr(out, "metric makespan_s (written by the commands of"), "%s", out);
}

/* Runs script (tests/layers.sh or tests/prefixes.sh) against a copy of
 * docs/design.md edited by the sed expressions edits, given to it in the
 * environment variable env, with its output in out; returns its exit code. */
static int check_edited_map(const char *edits, const char *env, const char *script)
{
	char map[128], cmd[1024];
	snprintf(map, sizeof map, "%s/design.md", dir);
	snprintf(cmd, sizeof cmd, "sed %s docs/design.md >%s", edits, map);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s=%s sh %s", env, map, script);
	return capture(cmd, out, sizeof out);
}

/* A module includes only its own layer or lower (docs/design.md), apart
 * from the exceptions the page lists. */
Test(docs, includes_follow_the_layer_map)
{
	int rc = capture("sh tests/layers.sh", out, sizeof out);
	cr_assert_eq(rc, 0, "tests/layers.sh:\n%s", out);
}

/* Moving engine to the top layer makes every include of it go up, and a
 * module without a row, or an exception that no longer holds, is named.
 * (No two modules include each other any more, so the map cannot make a
 * mutual include appear; the check for them is the same awk pass.) */
Test(docs, the_layer_check_reports_what_breaks_the_map)
{
	int rc = check_edited_map(
		"-e 's/^| L3 | engine |/| L8 | engine |/' -e '/^| L0 | sha256 |/d'"
		" -e '/^Where the includes differ/,/^```text$/ s/^```text$/```text\\nmutual: cluster <-> sched/'",
		"GPUPLAN_LAYER_MAP", "tests/layers.sh");
	cr_assert_eq(rc, 1, "%s", out);
	cr_expect(strstr(out, "(sim, L5) includes engine (L8)"), "%s", out);
	cr_expect(strstr(out, "no layer: sha256"), "%s", out);
	cr_expect(strstr(out, "fixed: mutual: cluster <-> sched"), "%s", out);
}

/* Every name an object exports carries its file's or module's prefix, or one
 * the prefix map of docs/design.md gives its file (the test binary is built
 * after the objects it links, so they are there). */
Test(docs, exported_names_follow_the_prefix_map)
{
	int rc = capture("sh tests/prefixes.sh", out, sizeof out);
	cr_assert_eq(rc, 0, "tests/prefixes.sh:\n%s", out);
}

/* A row taken out names the symbols it covered; a row given to another file
 * names them and itself. */
Test(docs, the_prefix_check_reports_what_breaks_the_map)
{
	int rc = check_edited_map(
		"-e '/^| `advice_` |/d' -e 's/^| `job_` | `results.c`/| `job_` | `sim.c`/'",
		"GPUPLAN_PREFIX_MAP", "tests/prefixes.sh");
	cr_assert_eq(rc, 1, "%s", out);
	cr_expect(strstr(out, "prefix: advice_free (sim/advise.c) begins with neither advise_ nor"),
		  "%s", out);
	cr_expect(strstr(out, "prefix: job_status_name (sim/results.c)"), "%s", out);
	cr_expect(strstr(out, "prefix: the row job_ sim.c of docs/design.md matches no name"), "%s",
		  out);
}

/* A file the page does not name is reported, and so is a row with no file. */
Test(docs, the_layer_check_names_every_file)
{
	int rc = check_edited_map(
		"-e 's/`units_cron.c`/`units_cron`/' -e 's/^| L0 | sha256 |/| L0 | sha512 |/'",
		"GPUPLAN_LAYER_MAP", "tests/layers.sh");
	cr_assert_eq(rc, 1, "%s", out);
	cr_expect(strstr(out, "unnamed: sim/units_cron.c: name it in"), "%s", out);
	cr_expect(strstr(out, "no file: the row of sha512 (L0)"), "%s", out);
}
