/*
 * test_store_writer.c - `gpuplan run` writes its rows on a writer thread
 * while it simulates (store.h's store_writer): the database holds the same
 * rows as with GPUPLAN_THREADS=1 and as when the run is written at its end,
 * a failure of the writer fails the run with the message of the
 * single-threaded path and leaves the database as it was, and a run that
 * fails leaves no file behind.
 *
 * GPUPLAN_WRITER_ROWS=N makes batches of N job rows, so that the example
 * scenarios' few hundred jobs go through many hand-offs, and a large N
 * writes the run at its end (no batch ever fills).
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(writer, .init = scratch_make, .fini = scratch_remove);

/* Runs `gpuplan run scenario --db db` with env before it; its exit code,
 * its output in out. */
static int run(const char *env, const char *scenario, const char *db, const char *extra, char *out,
	       size_t size)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "%s bin/gpuplan run %s --db %s --quiet %s", env, scenario, db,
		 extra ? extra : "");
	return capture(cmd, out, size);
}

/* The columns of table in the database h, runs' wall-clock ones left out,
 * and its rowid first where it has one: the order of the rows (sqlite3
 * .dump's) is part of what must be the same. */
static void columns(sqlite3 *h, const char *table, char *cols, size_t size)
{
	char sql[256];
	sqlite3_stmt *st;
	snprintf(sql, sizeof sql, "SELECT rowid FROM main.\"%s\" LIMIT 0", table);
	bool rowid = sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK;
	sqlite3_finalize(st);
	snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s')", table);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	snprintf(cols, size, "%s", rowid ? "rowid" : "");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		if (!strcmp(table, "runs") &&
		    (!strcmp(c, "started_at") || !strcmp(c, "wall_seconds")))
			continue;
		snprintf(cols + strlen(cols), size - strlen(cols), "%s\"%s\"", cols[0] ? "," : "",
			 c);
	}
	sqlite3_finalize(st);
}

static long long one(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Every table of a holds the rows of b's table of the same name, and as
 * many (the run's start and wall time aside); returns the rows compared. */
static long long expect_same_rows(const char *a, const char *b, const char *what)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char sql[8192], cols[2048];
	long long rows = 0;
	cr_assert_eq(sqlite3_open(a, &h), SQLITE_OK);
	snprintf(sql, sizeof sql, "ATTACH '%s' AS b", b);
	cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(h,
					"SELECT name FROM main.sqlite_master WHERE type = 'table' "
					"AND name NOT LIKE 'sqlite_%' ORDER BY name",
					-1, &st, NULL),
		     SQLITE_OK);
	int tables = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		char table[128];
		snprintf(table, sizeof table, "%s", (const char *)sqlite3_column_text(st, 0));
		columns(h, table, cols, sizeof cols);
		char *diff = sqlite3_mprintf(
			"SELECT (SELECT count(*) FROM (SELECT %s FROM main.\"%w\" EXCEPT SELECT %s "
			"FROM b.\"%w\")) + (SELECT count(*) FROM (SELECT %s FROM b.\"%w\" EXCEPT "
			"SELECT %s FROM main.\"%w\"))",
			cols, table, cols, table, cols, table, cols, table);
		cr_expect_eq(one(h, diff), 0, "%s: rows of %s differ", what, table);
		sqlite3_free(diff);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM main.\"%s\"", table);
		long long n = one(h, sql);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM b.\"%s\"", table);
		cr_expect_eq(one(h, sql), n, "%s: %s has %lld rows in %s", what, table, n, a);
		rows += n;
		tables++;
	}
	sqlite3_finalize(st);
	sqlite3_close(h);
	cr_assert_geq(tables, 10);
	return rows;
}

/* Whether a scenario reads ../shared/data and this checkout lacks it. */
static bool lacks_data(const char *path)
{
	char line[512];
	bool needs = false;
	FILE *f = fopen(path, "r");
	while (f && !needs && fgets(line, sizeof line, f))
		needs = strstr(line, "shared/data") && line[strspn(line, " ")] != '#';
	if (f)
		fclose(f);
	return needs && access("../shared/data", R_OK) != 0;
}

/* The same rows, byte for byte in every column and in the same order,
 * whether the rows go to a writer thread in batches of 5 (default), are
 * written on the run's thread at the same points (GPUPLAN_THREADS=1), or all
 * at the end (no batch fills).  openb is an inflation experiment, written at
 * its end; writer-allocations has its timeseries and allocation rows stored
 * while it goes on, and writer-merges merges its windows after the writer
 * stored some of their rows. */
Test(writer, threads_one_thread_and_the_end_write_the_same_rows, .timeout = 240)
{
	static const char *const scenarios[] = {"scenarios/quickstart.yaml",
						"scenarios/inference.yaml",
						"scenarios/week.yaml",
						"scenarios/sharing.yaml",
						"scenarios/openb.yaml",
						"tests/fixtures/writer-merges.yaml",
						"tests/fixtures/writer-allocations.yaml"};
	static const char *const modes[] = {"GPUPLAN_THREADS=1 GPUPLAN_WRITER_ROWS=5",
					    "GPUPLAN_THREADS=2 GPUPLAN_WRITER_ROWS=5",
					    "GPUPLAN_WRITER_ROWS=1000000"};
	char out[4096], db[3][160];
	int compared = 0;
	for (size_t s = 0; s < sizeof scenarios / sizeof *scenarios; s++) {
		if (lacks_data(scenarios[s]))
			continue;
		for (size_t m = 0; m < 3; m++) {
			snprintf(db[m], sizeof db[m], "%s/%zu-%zu.db", dir, s, m);
			cr_assert_eq(run(modes[m], scenarios[s], db[m], NULL, out, sizeof out), 0,
				     "%s %s: %s", modes[m], scenarios[s], out);
		}
		long long rows = expect_same_rows(db[0], db[1], scenarios[s]);
		expect_same_rows(db[0], db[2], scenarios[s]);
		cr_expect_gt(rows, 100, "%s wrote rows", scenarios[s]);
		compared++;
	}
	cr_assert_geq(compared, 4);
	/* quickstart's 120 jobs went through 24 batches: each job once */
	snprintf(db[0], sizeof db[0], "%s/0-1.db", dir);
	cr_assert_eq(scratch_query(db[0], "SELECT count(DISTINCT job_id) FROM jobs WHERE job_id "
					  "BETWEEN 0 AND 119"),
		     120);
}

/* Runs after others in one database: each run's rows take the rowids that
 * follow the last run's, streamed or written at the end, also where the
 * writer deleted and stored its timeseries rows again (writer-merges). */
Test(writer, runs_after_others_take_the_same_rowids, .timeout = 120)
{
	static const char *const modes[] = {"GPUPLAN_THREADS=2 GPUPLAN_WRITER_ROWS=1",
					    "GPUPLAN_THREADS=1 GPUPLAN_WRITER_ROWS=3",
					    "GPUPLAN_WRITER_ROWS=1000000"};
	static const char *const scenarios[] = {
		"scenarios/quickstart.yaml", "tests/fixtures/writer-merges.yaml",
		"scenarios/week.yaml", "tests/fixtures/writer-merges.yaml"};
	char out[4096], db[3][160];
	for (size_t m = 0; m < 3; m++) {
		snprintf(db[m], sizeof db[m], "%s/runs-%zu.db", dir, m);
		for (size_t s = 0; s < sizeof scenarios / sizeof *scenarios; s++)
			cr_assert_eq(run(modes[m], scenarios[s], db[m], NULL, out, sizeof out), 0,
				     "%s %s: %s", modes[m], scenarios[s], out);
	}
	expect_same_rows(db[0], db[2], "four runs, batches of 1");
	expect_same_rows(db[1], db[2], "four runs, one thread");
	cr_assert_eq(scratch_query(db[0], "SELECT min(rowid) FROM timeseries WHERE run_id = 4"),
		     scratch_query(db[0], "SELECT max(rowid) FROM timeseries WHERE run_id = 3") +
			     1);
}

/* A writer that fails (here a trigger that aborts the 21st job row's insert,
 * as a full disk or a constraint would; after the insert, as a row appended
 * without a key gets it only then) fails the run with SQLite's message, the
 * one of the single-threaded path and of a run written at its end, exit code
 * 1, and the database keeps only the run it had. */
Test(writer, a_failing_writer_fails_the_run_and_leaves_the_database, .timeout = 120)
{
	char db[160], out[4096];
	snprintf(db, sizeof db, "%s/f.db", dir);
	cr_assert_eq(run("", "scenarios/quickstart.yaml", db, NULL, out, sizeof out), 0, "%s", out);
	sqlite3 *h;
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(
		sqlite3_exec(h,
			     "CREATE TRIGGER full AFTER INSERT ON job_rows WHEN NEW.job_id = 20 "
			     "AND NEW.run_id > 1 BEGIN SELECT RAISE(ABORT, 'database or disk is "
			     "full (injected)'); END",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(h);
	long long rows = scratch_query(db, "SELECT count(*) FROM job_rows") +
			 scratch_query(db, "SELECT count(*) FROM timeseries") +
			 scratch_query(db, "SELECT count(*) FROM metrics");
	static const char *const modes[] = {"GPUPLAN_THREADS=1 GPUPLAN_WRITER_ROWS=4",
					    "GPUPLAN_THREADS=2 GPUPLAN_WRITER_ROWS=4",
					    "GPUPLAN_WRITER_ROWS=1000000"};
	char expected[256];
	snprintf(expected, sizeof expected,
		 "%s: writing job_rows: database or disk is full (injected)", db);
	for (size_t m = 0; m < 3; m++) {
		cr_assert_eq(run(modes[m], "scenarios/quickstart.yaml", db, NULL, out, sizeof out),
			     1, "%s: %s", modes[m], out);
		cr_expect(strstr(out, expected), "%s: %s", modes[m], out);
		cr_expect_eq(scratch_query(db, "SELECT count(*) FROM runs"), 1, "%s", modes[m]);
		cr_expect_eq(scratch_query(db, "SELECT count(*) FROM job_rows") +
				     scratch_query(db, "SELECT count(*) FROM timeseries") +
				     scratch_query(db, "SELECT count(*) FROM metrics"),
			     rows, "%s", modes[m]);
	}
}

/* A run that fails after its writer opened a new database (the work runs
 * past the windows GPUPLAN_MAX_WINDOWS allows, found while simulating)
 * leaves no file, as when the database was only opened at the end; an
 * existing database keeps its bytes. */
Test(writer, a_failed_run_leaves_no_file_and_an_old_one_as_it_was, .timeout = 120)
{
	char db[160], out[4096];
	static const char *const modes[] = {"GPUPLAN_THREADS=1", "GPUPLAN_THREADS=2"};
	static const char set[] =
		"--set output.step=1m --set workloads.finetune.duration.mean=100h";
	for (size_t m = 0; m < 2; m++) {
		char env[128];
		snprintf(db, sizeof db, "%s/new%zu.db", dir, m);
		snprintf(env, sizeof env, "GPUPLAN_MAX_WINDOWS=1300 GPUPLAN_WRITER_ROWS=1 %s",
			 modes[m]);
		cr_assert_eq(run(env, "scenarios/quickstart.yaml", db, set, out, sizeof out), 2,
			     "%s", out);
		cr_expect(strstr(out, "made more than 1300 timeseries windows"), "%s", out);
		cr_expect_neq(access(db, F_OK), 0, "%s: %s is left", modes[m], db);
		snprintf(db, sizeof db, "%s/old.db", dir);
		if (m == 0)
			cr_assert_eq(run("", "scenarios/sharing.yaml", db, NULL, out, sizeof out),
				     0);
		size_t n;
		char *before = scratch_slurp(db, &n);
		cr_assert_eq(run(env, "scenarios/quickstart.yaml", db, set, out, sizeof out), 2,
			     "%s", out);
		scratch_expect_same_bytes(db, before, n);
		free(before);
		cr_expect_eq(scratch_query(db, "SELECT count(*) FROM runs"), 1);
	}
}

/* A writer that fails on a file this run created (here the file size limit,
 * as a full disk: `ulimit -f` with SIGXFSZ ignored, so a write past it
 * fails with EFBIG) fails the run with SQLite's message and leaves neither
 * the file nor the folders made for it (docs/design.md); an empty folder
 * that was there stays. */
Test(writer, a_writer_failing_on_a_new_file_leaves_no_file_nor_folder, .timeout = 120)
{
	char db[256], out[4096], kept[200];
	static const char *const modes[] = {"GPUPLAN_THREADS=1", "GPUPLAN_THREADS=2"};
	snprintf(kept, sizeof kept, "%s/kept", dir);
	cr_assert_eq(mkdir(kept, 0777), 0);
	for (size_t m = 0; m < 2; m++) {
		char env[160];
		snprintf(env, sizeof env, "trap '' XFSZ; ulimit -f 1000; %s", modes[m]);
		snprintf(db, sizeof db, "%s/made/deeper/full.db", dir);
		cr_assert_eq(run(env, "tests/bench/mm1-200k.yaml", db, NULL, out, sizeof out), 1,
			     "%s: %s", modes[m], out);
		cr_expect(strstr(out, "writing job_rows: "), "%s: %s", modes[m], out);
		snprintf(db, sizeof db, "%s/made", dir);
		cr_expect_neq(access(db, F_OK), 0, "%s: %s is left", modes[m], db);
		snprintf(db, sizeof db, "%s/full.db", kept);
		cr_assert_eq(run(env, "tests/bench/mm1-200k.yaml", db, NULL, out, sizeof out), 1,
			     "%s: %s", modes[m], out);
		cr_expect_neq(access(db, F_OK), 0, "%s: %s is left", modes[m], db);
		cr_expect_eq(access(kept, F_OK), 0, "%s: the folder that was there stays",
			     modes[m]);
	}
}
