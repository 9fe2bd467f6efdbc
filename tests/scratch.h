/*
 * scratch.h - what the tests that drive bin/gpuplan share: a private folder
 * for each test (Criterion runs every test in a process of its own), and
 * running a shell command with its output captured.  Functions are static
 * inline so a file that uses only some of them compiles without warnings.
 */
#ifndef GPUPLAN_TESTS_SCRATCH_H
#define GPUPLAN_TESTS_SCRATCH_H

#include <criterion/criterion.h>
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

#endif
