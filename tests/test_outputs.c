/*
 * test_outputs.c - what gpuplan writes never destroys what was there: an
 * output file is replaced whole or not at all (never the database it reads,
 * never through a FIFO or device, a symbolic link keeps pointing at it), and
 * a SQLite file that is not a gpuplan results database is left byte for
 * byte as it was, by `run --db` and by `report`.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(outputs, .init = scratch_make, .fini = scratch_remove);

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A results database with one run of the quickstart scenario. */
static void make_results(char *db, size_t size)
{
	char cmd[512], out[4096];
	snprintf(db, size, "%s/r.db", dir);
	snprintf(cmd, sizeof cmd, "bin/gpuplan run scenarios/quickstart.yaml --quiet --db %s", db);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
}

Test(outputs, report_html_refuses_to_overwrite_its_own_database)
{
	char db[128], cmd[512], out[4096];
	make_results(db, sizeof db);
	size_t n;
	char *before = scratch_slurp(db, &n);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --html %s", db, db);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(strstr(out, "is the input"), "%s", out);
	scratch_expect_same_bytes(db, before, n);
	free(before);
}

Test(outputs, a_failed_report_keeps_the_file_that_was_there)
{
	char db[128], html[160], cmd[512], out[4096];
	make_results(db, sizeof db);
	snprintf(html, sizeof html, "%s/out.html", dir);
	write_text(html, "keep me\n");
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --run 999 --html %s", db, html);
	cr_expect_neq(capture(cmd, out, sizeof out), 0, "%s", out);
	scratch_expect_same_bytes(html, "keep me\n", 8);
	/* ... and no temporary file is left beside it */
	snprintf(cmd, sizeof cmd, "ls %s | grep -c tmp", dir);
	capture(cmd, out, sizeof out);
	cr_expect_eq(atoi(out), 0, "temporary files left: %s", out);
}

Test(outputs, a_report_through_a_symlink_replaces_the_target_and_keeps_the_link)
{
	char db[128], target[160], link[160], cmd[512], out[4096];
	make_results(db, sizeof db);
	snprintf(target, sizeof target, "%s/target.html", dir);
	snprintf(link, sizeof link, "%s/link.html", dir);
	write_text(target, "old\n");
	cr_assert_eq(symlink(target, link), 0);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --html %s", db, link);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	struct stat st;
	cr_expect(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");
	size_t n;
	char *page = scratch_slurp(target, &n);
	cr_expect(page && strstr(page, "<html"), "the target holds no report");
	free(page);
}

Test(outputs, a_fifo_as_output_is_refused_and_kept)
{
	char db[128], fifo[160], cmd[512], out[4096];
	make_results(db, sizeof db);
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --html %s", db, fifo);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(strstr(out, "not a regular file"), "%s", out);
	struct stat st;
	cr_expect(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was removed");
}

/* A SQLite file of some other application, in rollback-journal mode. */
static void make_foreign(const char *path, const char *sql)
{
	sqlite3 *h;
	cr_assert_eq(sqlite3_open(path, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
	sqlite3_close(h);
}

static void expect_foreign_untouched(const char *sql)
{
	char db[128], cmd[512], out[4096], wal[160];
	snprintf(db, sizeof db, "%s/foreign.db", dir);
	make_foreign(db, sql);
	size_t n;
	char *before = scratch_slurp(db, &n);
	snprintf(cmd, sizeof cmd, "bin/gpuplan run scenarios/quickstart.yaml --quiet --db %s", db);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(strstr(out, "not a gpuplan results database"), "%s", out);
	scratch_expect_same_bytes(db, before, n);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --opencost", db);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	scratch_expect_same_bytes(db, before, n);
	snprintf(wal, sizeof wal, "%s-wal", db);
	cr_expect_neq(access(wal, F_OK), 0, "a WAL file appeared beside %s", db);
	free(before);
}

Test(outputs, a_foreign_database_is_left_byte_identical)
{
	expect_foreign_untouched("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);"
				 "INSERT INTO notes(text) VALUES ('mine');");
}

Test(outputs, a_foreign_database_with_its_own_runs_table_is_refused_untouched)
{
	expect_foreign_untouched("CREATE TABLE runs(id INTEGER PRIMARY KEY, who TEXT);"
				 "PRAGMA user_version = 7;");
}

/* One of ours with a table every version had dropped (docs/cli.md, exit
 * codes): a run appended to it would leave its earlier runs without their
 * rows there, and without runs the job rows' keys would collide.  Refused,
 * exit 2, the file left as it was, for each such table. */
Test(outputs, a_results_database_without_a_table_is_refused_untouched)
{
	static const char *const tables[] = {"runs", "metrics", "params", "findings"};
	char db[128], cmd[512], out[4096], sql[64];
	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
		snprintf(db, sizeof db, "%s/r.db", dir);
		unlink(db); /* a new results database each time */
		make_results(db, sizeof db);
		snprintf(sql, sizeof sql, "DROP TABLE %s", tables[i]);
		make_foreign(db, sql); /* opened as any SQLite file, the table dropped */
		size_t n;
		char *before = scratch_slurp(db, &n);
		snprintf(cmd, sizeof cmd,
			 "bin/gpuplan run scenarios/quickstart.yaml --quiet --db %s", db);
		cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s: %s", tables[i], out);
		char want[96];
		snprintf(want, sizeof want, "a gpuplan results database without its %s table",
			 tables[i]);
		cr_expect(strstr(out, want), "%s", out);
		scratch_expect_same_bytes(db, before, n);
		free(before);
	}
}

Test(outputs, report_only_reads_the_results_database)
{
	char db[128], cmd[512], out[65536];
	make_results(db, sizeof db);
	/* fold the WAL into the file so that the file alone is the database */
	make_foreign(db, "PRAGMA wal_checkpoint(TRUNCATE);");
	size_t n;
	char *before = scratch_slurp(db, &n);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --opencost", db);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	scratch_expect_same_bytes(db, before, n);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --html %s/r.html", db, dir);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	scratch_expect_same_bytes(db, before, n);
	free(before);
	/* a read-only connection to a WAL database cannot remove these on close */
	static const char *const left[] = {"-wal", "-shm"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(cmd, sizeof cmd, "%s%s", db, left[i]);
		cr_expect_neq(access(cmd, F_OK), 0, "report left %s behind", cmd);
	}
}

Test(outputs, a_database_from_before_the_application_id_is_adopted)
{
	char db[128], cmd[512], out[4096];
	make_results(db, sizeof db);
	make_foreign(db, "PRAGMA application_id = 0; PRAGMA user_version = 1;"); /* before both */
	snprintf(cmd, sizeof cmd, "bin/gpuplan run scenarios/quickstart.yaml --quiet --db %s", db);
	cr_expect_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	sqlite3 *h;
	sqlite3_stmt *s;
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(h, "PRAGMA application_id", -1, &s, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int(s, 0), 0x47504C4E);
	sqlite3_finalize(s);
	sqlite3_close(h);
}

/* A results database is data from elsewhere (merge takes any file): markup in
 * it stays text in the report, and absurd times draw no gigabytes of ticks. */
Test(outputs, a_crafted_database_cannot_inject_markup_or_blow_up_the_report, .timeout = 60)
{
	char db[128], html[160], cmd[512], out[4096];
	make_results(db, sizeof db);
	make_foreign(
		db, "INSERT INTO findings(run_id, rank, step, finding, evidence) VALUES "
		    "(1, 0, '\"><script>alert(1)</script>', '<img src=x onerror=alert(2)>', "
		    "'<b>bold</b>');"
		    "UPDATE timeseries SET t_s = 1e308 WHERE rowid = (SELECT max(rowid) FROM "
		    "timeseries);"
		    "UPDATE timeseries SET gpus_allocated = 1e308 WHERE rowid = (SELECT min(rowid) "
		    "FROM timeseries);");
	snprintf(html, sizeof html, "%s/r.html", dir);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --html %s", db, html);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	size_t n;
	char *page = scratch_slurp(html, &n);
	cr_assert_not_null(page);
	cr_expect_lt(n, 4u << 20, "the page is %zu bytes", n);
	cr_expect_null(strstr(page, "<script"), "markup from the database reached the page");
	cr_expect_null(strstr(page, "<img"), "markup from the database reached the page");
	cr_expect_null(strstr(page, "<b>bold"), "markup from the database reached the page");
	free(page);
}

/* A damaged merge input is refused before the output exists: attached to the
 * output's connection its error named OUT.db and left an empty one. */
Test(outputs, a_damaged_merge_input_leaves_no_output_and_is_named)
{
	char db[128], bad[160], outdb[160], cmd[1024], out[4096];
	make_results(db, sizeof db);
	make_foreign(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
	snprintf(bad, sizeof bad, "%s/bad.db", dir);
	snprintf(cmd, sizeof cmd,
		 "cp %s %s && dd if=/dev/zero of=%s bs=4096 seek=2 count=1 "
		 "conv=notrunc 2>/dev/null",
		 db, bad, bad);
	cr_assert_eq(system(cmd), 0);
	snprintf(outdb, sizeof outdb, "%s/out.db", dir);
	snprintf(cmd, sizeof cmd, "bin/gpuplan merge %s %s", outdb, bad);
	cr_expect_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_expect(!strncmp(out, bad, strlen(bad)), "the error does not name the input: %s", out);
	cr_expect_neq(access(outdb, F_OK), 0, "an output database was created");
}
