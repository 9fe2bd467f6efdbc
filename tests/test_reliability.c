/*
 * test_reliability.c - what users trust a capacity plan on: a run killed at
 * any moment leaves its database whole, processes appending to one database
 * lose nothing, and every example scenario gives byte-identical results when
 * run again.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TestSuite(reliability, .init = scratch_make, .fini = scratch_remove);

static pid_t spawn_run(const char *scenario, const char *db)
{
	pid_t pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		execl("bin/gpuplan", "gpuplan", "run", scenario, "--quiet", "--db", db,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * Kills `gpuplan run` with SIGKILL at moments spread over its whole life
 * (simulating, writing, committing).  After each kill the database must pass
 * SQLite's integrity check and hold only whole runs: every run has all of
 * its job rows and its metrics, and no row belongs to a missing run.
 */
Test(reliability, a_killed_run_leaves_the_whole_run_or_none, .timeout = 120)
{
	char db[128];
	snprintf(db, sizeof db, "%s/k.db", dir);
	/* How long one complete run takes here, to spread the kills over it. */
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int status;
	waitpid(spawn_run("tests/fixtures/crash.yaml", db), &status, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	long total_us = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000;
	const int kills = 12;
	for (int k = 0; k < kills; k++) {
		pid_t pid = spawn_run("tests/fixtures/crash.yaml", db);
		usleep((useconds_t)(total_us * (k + 1) / (kills + 1)));
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		char check[64];
		sqlite3 *h;
		sqlite3_stmt *st;
		cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
		sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, NULL);
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
		snprintf(check, sizeof check, "%s", (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		sqlite3_close(h);
		cr_assert_str_eq(check, "ok");
	}
	long long runs = scratch_query(db, "SELECT count(*) FROM runs");
	cr_assert_geq(runs, 1);
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM jobs"), runs * 100000,
		     "only whole runs");
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM runs r WHERE NOT EXISTS "
				       "(SELECT 1 FROM metrics m WHERE m.run_id = r.run_id)"),
		     0);
	static const char *const tables[] = {"params", "metrics", "jobs", "timeseries",
					     "allocations"};
	for (size_t i = 0; i < 5; i++) {
		char sql[160];
		snprintf(sql, sizeof sql,
			 "SELECT count(*) FROM %s WHERE run_id NOT IN (SELECT run_id FROM runs)",
			 tables[i]);
		cr_assert_eq(scratch_query(db, sql), 0, "no orphan rows in %s", tables[i]);
	}
}

Test(reliability, processes_appending_to_one_database_lose_nothing, .timeout = 60)
{
	char db[128];
	snprintf(db, sizeof db, "%s/a.db", dir);
	const int procs = 4, each = 5;
	pid_t pids[4];
	for (int p = 0; p < procs; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			for (int k = 0; k < each; k++) {
				pid_t child = spawn_run("scenarios/quickstart.yaml", db);
				int st;
				waitpid(child, &st, 0);
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					_exit(1);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < procs; p++) {
		int st;
		waitpid(pids[p], &st, 0);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "every run succeeded");
	}
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM runs"), procs * each);
	cr_assert_eq(scratch_query(db, "SELECT count(DISTINCT run_id) FROM jobs"), procs * each);
}

/* The result tables, wall-clock columns excluded, keyed by run. */
static const char *const result_tables[] = {
	"SELECT scope, name, value, unit FROM metrics",
	"SELECT job_id, workload, submit_s, start_s, end_s, queue_s, gpus, node, status, deadline_s,"
	" deadline_met, verified, cost FROM jobs",
	"SELECT t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active, sm_active,"
	" vram_used_gib, pending, running FROM timeseries",
	"SELECT name, start_s, end_s, gpu_hours, gpu_cost, cpu_core_hours, cpu_cost, ram_byte_hours,"
	" ram_cost, total_cost, gpu_efficiency FROM allocations",
	"SELECT key, value FROM params",
	"SELECT name, scenario_sha256, seed, events, sim_seconds, status, start FROM runs",
};

/* Whether a scenario reads the shared traces and they are not beside the checkout. */
static bool needs_missing_data(const char *path)
{
	if (access("../shared/data", R_OK) == 0)
		return false;
	FILE *f = fopen(path, "r");
	char line[512];
	bool needs = false;
	while (f && !needs && fgets(line, sizeof line, f))
		needs = strstr(line, "shared/data") && line[strspn(line, " ")] != '#';
	if (f)
		fclose(f);
	return needs;
}

/* Every example scenario, run twice: the two runs' rows are identical. */
Test(reliability, every_example_scenario_gives_identical_rows_twice, .timeout = 120)
{
	DIR *d = opendir("scenarios");
	cr_assert_not_null(d);
	struct dirent *e;
	int scenarios = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
			continue;
		char path[300], db[400];
		snprintf(path, sizeof path, "scenarios/%s", e->d_name);
		if (needs_missing_data(path))
			continue; /* replays ../shared/data, which this checkout lacks */
		snprintf(db, sizeof db, "%s/%s.db", dir, e->d_name);
		for (int k = 0; k < 2; k++) {
			int st;
			waitpid(spawn_run(path, db), &st, 0);
			cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s runs", path);
		}
		for (size_t t = 0; t < sizeof result_tables / sizeof *result_tables; t++) {
			char sql[2048];
			snprintf(
				sql, sizeof sql,
				"SELECT (SELECT count(*) FROM (%s WHERE run_id = 1 EXCEPT %s WHERE run_id = 2))"
				" + (SELECT count(*) FROM (%s WHERE run_id = 2 EXCEPT %s WHERE run_id = 1))",
				result_tables[t], result_tables[t], result_tables[t],
				result_tables[t]);
			cr_assert_eq(scratch_query(db, sql), 0, "%s: rows differ in: %s", path,
				     result_tables[t]);
		}
		scenarios++;
	}
	closedir(d);
	cr_assert_geq(scenarios, 3);
}
