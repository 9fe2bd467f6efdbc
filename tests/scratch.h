/*
 * scratch.h - what the tests that drive bin/gpuplan share: a private folder
 * for each test (Criterion runs every test in a process of its own), and
 * running a shell command with its output captured, and reading one number
 * from a results database, and comparing a file with its earlier bytes.
 * Functions are static inline so a file that uses only some of them
 * compiles without warnings.
 */
#ifndef GPUPLAN_TESTS_SCRATCH_H
#define GPUPLAN_TESTS_SCRATCH_H

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char dir[64]; /* the current test's folder */

static inline void scratch_make(void)
{
	strcpy(dir, "/tmp/gpuplan-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static inline void scratch_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Runs cmd with stdout and stderr into out (size bytes, NUL-terminated);
 * returns its exit code. */
static inline int capture(const char *cmd, char *out, size_t size)
{
	char line[8192], path[128];
	snprintf(path, sizeof path, "%s/out", dir);
	snprintf(line, sizeof line, "%s >%s 2>&1", cmd, path);
	int status = system(line);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(out, 1, size - 1, f) : 0;
	out[n] = '\0';
	if (f)
		fclose(f);
	cr_assert(WIFEXITED(status), "%s", cmd);
	return WEXITSTATUS(status);
}

/* The first column of the first row of sql over the database at db (-1 when
 * no row), asserting that the query runs. */
static inline long long scratch_query(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long v = -1;
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK, "%s", db);
	sqlite3_busy_timeout(h, 10000);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* The whole content of path (NUL-terminated, *n bytes), or NULL. */
static inline char *scratch_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	*n = 0;
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, len = 0, got;
	do {
		buf = realloc(buf, cap += 65536);
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	fclose(f);
	buf[len] = '\0';
	*n = len;
	return buf;
}

/* Expects the file at path to hold exactly the n_before bytes at before. */
static inline void scratch_expect_same_bytes(const char *path, const char *before, size_t n_before)
{
	size_t n;
	char *after = scratch_slurp(path, &n);
	cr_assert_not_null(after, "%s is gone", path);
	cr_expect(n == n_before && !memcmp(after, before, n), "%s changed (%zu -> %zu bytes)", path,
		  n_before, n);
	free(after);
}

#endif
