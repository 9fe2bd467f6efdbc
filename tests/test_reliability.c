/*
 * test_reliability.c - what users trust a capacity plan on: a run killed at
 * any moment leaves its database whole, processes appending to one database
 * lose nothing, and every example scenario gives byte-identical results when
 * run again.
 */
#include <criterion/criterion.h>

#include "gpuplan/placement.h"

#include "scratch.h"
#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* --- hostile import input (issue 42) ------------------------------------------ */

TestSuite(hostile, .init = scratch_make, .fini = scratch_remove);

/* Writes text to dir/name; returns the path (static buffer per slot). */
static const char *put(int slot, const char *name, const char *text)
{
	static char paths[4][128];
	snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir, name);
	FILE *f = fopen(paths[slot], "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return paths[slot];
}

/* One L4 node n1 with gpus nvidia.com/gpu (a JSON value). */
static const char *node_json(const char *gpus)
{
	static char buf[1024];
	snprintf(buf, sizeof buf,
		 "{\"kind\": \"List\", \"items\": [{\"kind\": \"Node\", \"metadata\": {\"name\": "
		 "\"n1\", \"labels\": {\"nvidia.com/gpu.product\": \"NVIDIA-L4\"}}, \"spec\": {}, "
		 "\"status\": {\"allocatable\": {\"cpu\": \"8\", \"memory\": \"64Gi\", "
		 "\"nvidia.com/gpu\": %s}}}]}\n",
		 gpus);
	return put(0, "n.json", buf);
}

/* One pending pod: metadata members meta (after name), containers' JSON. */
static const char *pod_json(const char *meta, const char *containers)
{
	static char buf[8192];
	snprintf(buf, sizeof buf,
		 "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": "
		 "\"p\"%s}, \"spec\": {\"containers\": %s}, \"status\": {\"phase\": "
		 "\"Pending\"}}]}\n",
		 meta, containers);
	return put(1, "p.json", buf);
}

#define ONE_GPU "[{\"name\": \"c\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}]"

/* Runs import of nodes and pods to dir/out.yaml; returns its exit code, the
 * output in out. */
static int import(const char *nodes, const char *pods, char *out, size_t size)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes %s --pods %s --at 2026-11-30T12:00:00Z -o %s/out.yaml",
		 nodes, pods, dir);
	return capture(cmd, out, size);
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* Kubernetes names a namespace by a DNS-1123 label (<= 63 characters) and a
 * pod or owner by a DNS-1123 subdomain (<= 253; apimachinery
 * pkg/util/validation IsDNS1123Label, IsDNS1123Subdomain); a kind is a
 * DNS-1035 label once lower-cased (apiextensions validation of CRD names).
 * A 400-character namespace or a 330-character owner kind crashed import
 * (a key cut at 320 bytes); now they are refused at their JSON path. */
Test(hostile, names_are_checked_as_kubernetes_checks_them)
{
	char out[4096], meta[1024];
	char *longer = repeat('a', 400);
	snprintf(meta, sizeof meta, ", \"namespace\": \"%s\"", longer);
	cr_assert_eq(import(node_json("\"1\""), pod_json(meta, ONE_GPU), out, sizeof out), 2, "%s",
		     out);
	cr_assert(strstr(out, "p.json:1:") &&
			  strstr(out, ".items[0].metadata.namespace: invalid "
				      "namespace") &&
			  strstr(out, "(400 characters)"),
		  "%s", out);
	/* 63 is a namespace; 64 is not. */
	snprintf(meta, sizeof meta, ", \"namespace\": \"%.63s\"", longer);
	cr_assert_eq(import(node_json("\"1\""), pod_json(meta, ONE_GPU), out, sizeof out), 0, "%s",
		     out);
	snprintf(meta, sizeof meta, ", \"namespace\": \"%.64s\"", longer);
	cr_assert_eq(import(node_json("\"1\""), pod_json(meta, ONE_GPU), out, sizeof out), 2, "%s",
		     out);
	/* An owner's kind of 330 letters. */
	char *kind = repeat('K', 330);
	snprintf(meta, sizeof meta,
		 ", \"ownerReferences\": [{\"kind\": \"%.330s\", \"name\": \"j\", \"controller\": "
		 "true}]",
		 kind);
	cr_assert_eq(import(node_json("\"1\""), pod_json(meta, ONE_GPU), out, sizeof out), 2, "%s",
		     out);
	cr_assert(strstr(out, ".items[0].metadata.ownerReferences[0].kind: invalid owner kind"),
		  "%s", out);
	/* An owner name of 253 characters is a name (a workload named by its
	 * first 56); 254 is not. */
	char *parts = repeat('b', 253);
	for (size_t i = 50; i < 253; i += 51)
		parts[i] = '.';
	snprintf(meta, sizeof meta,
		 ", \"ownerReferences\": [{\"kind\": \"Job\", \"name\": \"%s\", \"controller\": "
		 "true}]",
		 parts);
	cr_assert_eq(import(node_json("\"1\""), pod_json(meta, ONE_GPU), out, sizeof out), 0, "%s",
		     out);
	snprintf(meta, sizeof meta,
		 ", \"ownerReferences\": [{\"kind\": \"Job\", \"name\": \"%sb\", \"controller\": "
		 "true}]",
		 parts);
	cr_assert_eq(import(node_json("\"1\""), pod_json(meta, ONE_GPU), out, sizeof out), 2, "%s",
		     out);
	cr_assert(strstr(out, "ownerReferences[0].name: invalid owner name"), "%s", out);
	/* A pod name with a capital, and a node name with a space. */
	cr_assert_eq(import(node_json("\"1\""),
			    put(1, "p.json",
				"{\"kind\": \"List\", \"items\": "
				"[{\"kind\": \"Pod\", \"metadata\": "
				"{\"name\": \"P\"}}]}\n"),
			    out, sizeof out),
		     2, "%s", out);
	cr_assert(strstr(out, ".items[0].metadata.name: invalid pod name 'P'"), "%s", out);
	free(parts);
	free(kind);
	free(longer);
}

/* A namespace holding a newline and YAML used to end the comment line it
 * was written into and add a workload of its own; now it is refused as a
 * name, and what reaches a comment is escaped (here a file name). */
Test(hostile, no_name_can_end_a_comment_line_of_the_scenario)
{
	char out[4096];
	cr_assert_eq(import(node_json("\"1\""),
			    pod_json(", \"namespace\": \"x\\n  - name: evil\\n    count: 1000\"",
				     ONE_GPU),
			    out, sizeof out),
		     2, "%s", out);
	cr_assert(strstr(out, ".items[0].metadata.namespace: invalid namespace 'x?  - name"), "%s",
		  out);
	/* A file name with a newline, named in the header comment. */
	char nodes[256], cmd[1024];
	snprintf(nodes, sizeof nodes, "%s/n\nname: evil.json", dir);
	rename(node_json("\"1\""), nodes);
	snprintf(
		cmd, sizeof cmd,
		"bin/gpuplan import --nodes '%s' --pods %s --at 2026-11-30T12:00:00Z -o %s/out.yaml",
		nodes, pod_json("", ONE_GPU), dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	snprintf(cmd, sizeof cmd, "%s/out.yaml", dir);
	size_t n;
	char *yaml = scratch_slurp(cmd, &n);
	cr_assert(strstr(yaml, "from \"") && strstr(yaml, "/n\\x0aname: evil.json\""), "%s", yaml);
	cr_assert_null(strstr(yaml, "\nname: evil"), "%s", yaml);
	free(yaml);
}

/* Container GPU limits were summed into an int32: 2147483647 + 2147483647 +
 * 3 wrapped to 1 GPU.  The sum is 64-bit and refused past int32. */
Test(hostile, gpu_limits_that_overflow_int32_are_refused)
{
	char out[4096];
	const char *three =
		"[{\"name\": \"a\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"2147483647\"}}}, "
		"{\"name\": \"b\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"2147483647\"}}}, "
		"{\"name\": \"c\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": \"3\"}}}]";
	cr_assert_eq(import(node_json("\"1\""), pod_json("", three), out, sizeof out), 2, "%s",
		     out);
	cr_assert(strstr(out, ".items[0].spec.containers[1].resources.limits[\"nvidia.com/gpu\"]: "
			      "the pod's containers ask for 4294967294 GPUs in all"),
		  "%s", out);
	/* One limit past int32, and half a GPU. */
	cr_assert_eq(import(node_json("\"1\""),
			    pod_json("", "[{\"name\": \"c\", \"resources\": {\"limits\": "
					 "{\"nvidia.com/gpu\": \"2147483648\"}}}]"),
			    out, sizeof out),
		     2, "%s", out);
	cr_assert(strstr(out, "expected a whole number of units, at most 2147483647"), "%s", out);
}

/* A node's GPU count of 1e18 or "1Ei" went through an undefined
 * float-to-int cast and came out as -2147483648, past the 64 check. */
Test(hostile, a_node_gpu_count_past_int32_is_refused_where_it_is_read)
{
	char out[4096];
	static const char *const counts[] = {"\"1Ei\"", "\"1e18\"", "1e18", "\"0.5\"", "\"800m\""};
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
		cr_assert_eq(import(node_json(counts[i]), pod_json("", ONE_GPU), out, sizeof out),
			     2, "%s: %s", counts[i], out);
		cr_assert(strstr(out, "n.json:1:") &&
				  strstr(out, ".items[0].status.allocatable[\"nvidia.com/gpu\"]: "
					      "expected a whole number of devices, at most "
					      "2147483647"),
			  "%s: %s", counts[i], out);
	}
	/* Within int32 but past gpuplan's 64: the existing check speaks. */
	cr_assert_eq(import(node_json("\"2147483647\""), pod_json("", ONE_GPU), out, sizeof out),
		     2);
	cr_assert(strstr(out, "2147483647 physical GPUs; expected at most 64"), "%s", out);
}

/* kube-scheduler's least_allocated.go and most_allocated.go compute
 * requested x 100 / capacity; with 1 EiB of memory (2^60 bytes) the product
 * overflowed int64 (undefined; UBSan under make asan).  Computed wider, the
 * scores are the exact ones: 2^59 of 2^60 is 50 either way. */
Test(hostile, fit_scores_of_an_exbibyte_node_do_not_overflow)
{
	int64_t alloc[3] = {0, 0, 1LL << 60}, req[3] = {0, 0, 1LL << 59};
	struct scoring_spec least = {.type = SCORING_LEAST_ALLOCATED,
				     .weight = {[SCORE_MEMORY] = 1}};
	struct scoring_spec most = {.type = SCORING_MOST_ALLOCATED, .weight = {[SCORE_MEMORY] = 1}};
	cr_assert_eq(placement_fit_score(&least, req, alloc), 50);
	cr_assert_eq(placement_fit_score(&most, req, alloc), 50);
	/* 3 x 2^60 / 4 of INT64_MAX: 74 used (74.99...), 25 left. */
	int64_t big[3] = {0, 0, INT64_MAX}, three[3] = {0, 0, INT64_MAX / 4 * 3};
	cr_assert_eq(placement_fit_score(&most, three, big), 74);
	cr_assert_eq(placement_fit_score(&least, three, big), 25);
}

/* Runs md1.yaml into dir/r.db, the database the output tests read. */
static const char *results_db(void)
{
	static char db[128];
	char cmd[256], out[4096];
	snprintf(db, sizeof db, "%s/r.db", dir);
	snprintf(cmd, sizeof cmd, "bin/gpuplan run tests/fixtures/md1.yaml --quiet --db %s", db);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	return db;
}

/* On a full disk (/dev/full) every command that writes to stdout exited 0
 * with its output lost; now it says so and exits 1. */
Test(hostile, a_write_error_on_stdout_exits_1_with_a_message)
{
	const char *db = results_db();
	char cmd[512], out[4096];
	const char *const cmds[] = {"--help", "report %s --openmetrics", "report %s --opencost",
				    "check tests/fixtures/md1.yaml",
				    "run tests/fixtures/md1.yaml --json"};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char line[256];
		snprintf(line, sizeof line, cmds[i], db);
		snprintf(cmd, sizeof cmd, "(bin/gpuplan %s >/dev/full)", line);
		cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s: %s", line, out);
		cr_assert(strstr(out, "writing to standard output: No space left on device"),
			  "%s: %s", line, out);
		/* and to a file it exits 0 */
		snprintf(cmd, sizeof cmd, "bin/gpuplan %s >%s/ok", line, dir);
		cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s: %s", line, out);
	}
}

/* SQLite opens ":memory:" and "file:" URIs (mode=memory) in memory: the run
 * was reported as stored and kept nowhere.  Refused as --db, exit 2. */
Test(hostile, sqlite_special_names_are_refused_as_a_database)
{
	char cmd[1024], out[4096], cwd[256];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	const char *const names[] = {":memory:", "file:x.db?mode=memory", "FILE:y.db", "file:z.db"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(cmd, sizeof cmd,
			 "cd %s && %s/bin/gpuplan run %s/tests/fixtures/md1.yaml --quiet --db '%s'",
			 dir, cwd, cwd, names[i]);
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s: %s", names[i], out);
		cr_assert(strstr(out, "SQLite reads this name as an in-memory database or a URI"),
			  "%s", out);
		snprintf(cmd, sizeof cmd, "bin/gpuplan report '%s' --openmetrics", names[i]);
		cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s: %s", names[i], out);
	}
	/* nothing was created beside */
	snprintf(cmd, sizeof cmd, "ls %s", dir);
	capture(cmd, out, sizeof out);
	cr_assert_null(strstr(out, "db"), "%s", out);
}

/* --dcgm was opened with fopen: a FIFO without a writer hung forever.  It
 * goes through the opener every other input uses, which refuses it. */
Test(hostile, a_dcgm_fifo_is_refused_not_waited_on, .timeout = 20)
{
	char fifo[128], cmd[1024], out[4096];
	snprintf(fifo, sizeof fifo, "%s/dcgm.prom", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
		 "tests/fixtures/import/pods.json --dcgm %s --at 2026-11-30T12:00:00Z -o %s/o.yaml",
		 fifo, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "dcgm.prom: error: cannot read: not a regular file"), "%s", out);
}

/* A read error in the DCGM text was taken for its end: the samples after it
 * were dropped and import exited 0.  /proc/self/mem is a regular file whose
 * first read fails with EIO (address 0 is not mapped). */
Test(hostile, a_dcgm_read_error_is_not_the_end_of_the_file)
{
	char cmd[1024], out[4096];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
		 "tests/fixtures/import/pods.json --dcgm /proc/self/mem --at 2026-11-30T12:00:00Z "
		 "-o %s/o.yaml",
		 dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "/proc/self/mem: error: cannot read: Input/output error"), "%s", out);
	snprintf(cmd, sizeof cmd, "%s/o.yaml", dir);
	cr_assert_neq(access(cmd, F_OK), 0, "nothing written");
}

/* import -o onto a results database replaced it with the scenario. */
Test(hostile, an_output_never_replaces_a_database)
{
	const char *db = results_db();
	long long runs = scratch_query(db, "SELECT count(*) FROM runs");
	char cmd[1024], out[4096];
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
		 "tests/fixtures/import/pods.json --at 2026-11-30T12:00:00Z -o %s",
		 db);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "r.db: is an SQLite database; expected another path"), "%s", out);
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM runs"), runs);
	/* and so for report --html */
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --html %s", db, db);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert_eq(scratch_query(db, "SELECT count(*) FROM runs"), runs);
}

/* A results database without its timeseries table exited 1 (an SQL error);
 * the docs say a bad database file is 2. */
Test(hostile, a_database_without_its_timeseries_table_exits_2)
{
	const char *db = results_db();
	char cmd[512], out[4096];
	snprintf(cmd, sizeof cmd, "sqlite3 %s 'DROP TABLE timeseries'", db);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --openmetrics", db);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "r.db: a gpuplan results database without its timeseries table"),
		  "%s", out);
}

/* scan_interval had no lower bound: at 10us a 3-job hour took 86 s.  At
 * least 1s (Cluster Autoscaler's --scan-interval defaults to 10s,
 * cluster-autoscaler FAQ.md), refused by the loader. */
Test(hostile, scan_interval_has_a_lower_bound)
{
	char out[4096];
	cr_assert_eq(capture("bin/gpuplan check tests/fixtures/autoscale.yaml --set "
			     "pools.batch.autoscale.scan_interval=10us",
			     out, sizeof out),
		     2, "%s", out);
	cr_assert(strstr(out, "invalid scan_interval '10us'; expected a duration of at least 1s"),
		  "%s", out);
	cr_assert_eq(capture("bin/gpuplan check tests/fixtures/autoscale.yaml --set "
			     "pools.batch.autoscale.scan_interval=999ms",
			     out, sizeof out),
		     2, "%s", out);
	cr_assert_eq(capture("bin/gpuplan check tests/fixtures/autoscale.yaml --set "
			     "pools.batch.autoscale.scan_interval=1s",
			     out, sizeof out),
		     0, "%s", out);
}

/* Imports the fixture cluster with --dcgm holding the len bytes of text;
 * returns the exit code, the output in out. */
static int import_dcgm(const char *text, size_t len, char *out, size_t size)
{
	char path[128], cmd[1024];
	snprintf(path, sizeof path, "%s/d.prom", dir);
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f);
	fwrite(text, 1, len, f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
		 "tests/fixtures/import/pods.json --dcgm %s --at 2026-11-30T12:00:00Z -o %s/o.yaml",
		 path, dir);
	return capture(cmd, out, size);
}

#define SAMPLE "DCGM_FI_DEV_GPU_UTIL{namespace=\"serving\",pod=\"p\"} 50"

/* The text reader took a NUL mid-line (the rest of the line unseen),
 * CR-only line ends (the whole file one comment: nothing calibrated, nothing
 * said) and a timestamp of "-".  Each is refused at its line and column; CRLF
 * is still read (the format's \n, with a \r before it). */
Test(hostile, the_dcgm_text_reader_refuses_what_is_not_the_exposition_format)
{
	char out[4096];
	static const char nul[] = "# HELP x\n" SAMPLE "\0 junk\n";
	cr_assert_eq(import_dcgm(nul, sizeof nul - 1, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "d.prom:2:53: error: a NUL byte; expected text"), "%s", out);
	static const char cr[] = "# HELP x\r" SAMPLE "\r";
	cr_assert_eq(import_dcgm(cr, sizeof cr - 1, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "d.prom:1:9: error: a carriage return inside the line"), "%s", out);
	static const char dash[] = SAMPLE " -\n";
	cr_assert_eq(import_dcgm(dash, sizeof dash - 1, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "expected an integer timestamp"), "%s", out);
	static const char crlf[] = "# HELP x\r\n" SAMPLE " -12\r\n";
	int rc = import_dcgm(crlf, sizeof crlf - 1, out, sizeof out);
	cr_assert(rc == 0 || !strstr(out, "carriage return"), "%s", out);
}

/* 5,000 pods of one Job, each with its own request, are 5,000 workloads
 * named train, train-2 ... train-5000.  Naming them scanned every name for
 * every number tried (cubic: 53 s); hashed, with each name's next number
 * kept, it is linear.  The bound is the test's timeout. */
Test(hostile, five_thousand_workloads_of_one_job_are_named_in_linear_time, .timeout = 30)
{
	char path[128], out[4096];
	snprintf(path, sizeof path, "%s/many.json", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"kind\": \"List\", \"items\": [", f);
	for (int i = 0; i < 5000; i++)
		fprintf(f,
			"%s{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p%d\", \"namespace\": \"ml\", "
			"\"ownerReferences\": [{\"kind\": \"Job\", \"name\": \"train\", "
			"\"controller\": true}]}, \"spec\": {\"containers\": [{\"name\": \"c\", "
			"\"resources\": {\"requests\": {\"cpu\": \"%dm\"}, \"limits\": "
			"{\"nvidia.com/gpu\": \"1\"}}}]}, \"status\": {\"phase\": \"Pending\"}}",
			i ? ", " : "", i, i + 1);
	fputs("]}\n", f);
	fclose(f);
	cr_assert_eq(import(node_json("\"1\""), path, out, sizeof out), 0, "%s", out);
	snprintf(path, sizeof path, "%s/out.yaml", dir);
	size_t n;
	char *yaml = scratch_slurp(path, &n);
	cr_assert(strstr(yaml, "  - name: train\n") && strstr(yaml, "  - name: train-2\n") &&
			  strstr(yaml, "  - name: train-5000\n"),
		  "%.2000s", yaml);
	cr_assert_null(strstr(yaml, "  - name: train-5001\n"));
	free(yaml);
}

/* A node provisioned for longer than the stall detector's 8 days tripped
 * it: "simulated 0s", nothing done, advice to raise max.  A node being
 * provisioned is progress: the run waits for it and completes (Cluster
 * Autoscaler's max-node-provision-time is what gives up on a node). */
Test(hostile, a_node_provisioned_for_9_days_is_waited_for)
{
	char cmd[512], out[8192];
	const char *db = "stall.db";
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run tests/fixtures/autoscale.yaml --quiet --db %s/%s --set "
		 "pools.batch.autoscale.provision_time=9d --set "
		 "pools.batch.autoscale.max_node_provision_time=10d",
		 dir, db);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, db);
	cr_assert_eq(scratch_query(path, "SELECT count(*) FROM runs WHERE status = 'ok'"), 1);
	cr_assert_eq(scratch_query(path, "SELECT value FROM metrics WHERE scope = 'all' AND "
					 "name = 'jobs_completed'"),
		     3);
	/* the last job ends 9 days and 2 hours in (two nodes, three jobs of 1h) */
	cr_assert_eq(scratch_query(path, "SELECT max(end_s) FROM jobs"), 9 * 86400 + 2 * 3600);
}

/* Runs `gpuplan merge` under `ulimit -f` KiB (0: none); its exit code. */
static int merge_limited(int kib, const char *out_db, const char *in_db, char *out, size_t size)
{
	char cmd[1024];
	if (kib)
		snprintf(cmd, sizeof cmd, "sh -c 'ulimit -f %d; exec bin/gpuplan merge %s %s'",
			 kib * 2, out_db, in_db); /* sh counts 512-byte blocks */
	else
		snprintf(cmd, sizeof cmd, "bin/gpuplan merge %s %s", out_db, in_db);
	return capture(cmd, out, size);
}

/* merge onto a full disk left a 0-byte OUT.db.  A new output is built in a
 * temporary file and renamed into place when every input merged; a full
 * disk (here `ulimit -f`, EFBIG) leaves no file at all, and an existing
 * output exactly as it was (each input one transaction). */
Test(hostile, merge_onto_a_full_disk_leaves_no_partial_output, .timeout = 120)
{
	const char *db = results_db();
	char out[8192], merged[256], ls[512];
	snprintf(merged, sizeof merged, "%s/m.db", dir);
	cr_assert_eq(merge_limited(16, merged, db, out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "error"), "%s", out);
	cr_assert_neq(access(merged, F_OK), 0, "no OUT.db after a failed merge");
	snprintf(ls, sizeof ls, "ls %s | grep -c partial", dir);
	cr_assert_eq(capture(ls, out, sizeof out), 1, "no temporary file left: %s", out);
	/* unlimited it merges; onto that output, limited, it stays as it was */
	cr_assert_eq(merge_limited(0, merged, db, out, sizeof out), 0, "%s", out);
	long long runs = scratch_query(merged, "SELECT count(*) FROM runs");
	cr_assert_eq(runs, 1);
	char cmd[512], again[256];
	snprintf(again, sizeof again, "%s/again.db", dir);
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run tests/fixtures/md1.yaml --quiet --db %s --set seed=2", again);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	struct stat sb;
	cr_assert_eq(stat(merged, &sb), 0);
	int kib = (int)(sb.st_size / 1024) + 1;
	cr_assert_eq(merge_limited(kib, merged, again, out, sizeof out), 1, "%s", out);
	cr_assert_eq(scratch_query(merged, "SELECT count(*) FROM runs"), runs);
	snprintf(cmd, sizeof cmd, "sqlite3 %s 'PRAGMA integrity_check'", merged);
	cr_assert_eq(capture(cmd, out, sizeof out), 0);
	cr_assert_str_eq(out, "ok\n");
}

/* The DCGM text reader kept the first 64 label names of a sample only, so a
 * label repeated after the 64th went through; and it took invalid UTF-8.
 * Both are refused at their line and column. */
Test(hostile, the_dcgm_text_reader_sees_every_label_and_refuses_invalid_utf8)
{
	char out[4096], *text = malloc(8192);
	size_t n = (size_t)sprintf(text, "DCGM_FI_DEV_GPU_UTIL{");
	for (int i = 0; i < 70; i++)
		n += (size_t)sprintf(text + n, "l%d=\"v\",", i);
	n += (size_t)sprintf(text + n, "l66=\"again\",namespace=\"serving\",pod=\"p\"} 50\n");
	cr_assert_eq(import_dcgm(text, n, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "d.prom:1:") &&
			  strstr(out,
				 "label l66 given twice in one sample; expected each label once"),
		  "%s", out);
	free(text);
	static const char bad[] = "DCGM_FI_DEV_GPU_UTIL{namespace=\"serving\",pod=\"p\xff\"} 50\n";
	cr_assert_eq(import_dcgm(bad, sizeof bad - 1, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "d.prom:1:48: error: invalid UTF-8"), "%s", out);
	static const char good[] =
		"DCGM_FI_DEV_GPU_UTIL{namespace=\"serving\",pod=\"p\xc3\xa9\"} 50\n";
	cr_assert_eq(import_dcgm(good, sizeof good - 1, out, sizeof out), 0, "%s", out);
}

/* A crafted database's scope name with bytes that are not UTF-8 reached the
 * OpenMetrics labels, and promtool refused the file.  Such a byte is written
 * as U+FFFD; promtool (when installed) reads the file whole. */
Test(hostile, a_scope_name_that_is_not_utf8_is_escaped_in_openmetrics)
{
	const char *db = results_db();
	char cmd[1024], out[8192];
	snprintf(
		cmd, sizeof cmd,
		"sqlite3 %s \"UPDATE timeseries SET scope = 'w' || CAST(X'FF' AS TEXT) || 'x' WHERE "
		"scope != 'all'\"",
		db);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "(bin/gpuplan report %s --openmetrics > %s/m.om)", db, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	snprintf(cmd, sizeof cmd, "%s/m.om", dir);
	size_t n;
	char *om = scratch_slurp(cmd, &n);
	cr_assert(strstr(om, "=\"w\xef\xbf\xbdx\""), "%.2000s", om);
	cr_assert_null(strstr(om, "\xff"));
	free(om);
	if (system("command -v promtool >/dev/null 2>&1") != 0)
		return;
	snprintf(cmd, sizeof cmd, "promtool tsdb create-blocks-from openmetrics %s/m.om %s/tsdb",
		 dir, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "promtool: %s", out);
}

/* SQLite opens a FIFO read-write and waits on its first read: `report` on a
 * FIFO hung.  Every database path goes through the one opener's rule. */
Test(hostile, a_fifo_as_a_database_is_refused_not_waited_on, .timeout = 20)
{
	char fifo[128], cmd[512], out[4096];
	snprintf(fifo, sizeof fifo, "%s/r.db", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof cmd, "bin/gpuplan report %s --openmetrics", fifo);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
	cr_assert(strstr(out, "r.db is not a regular file"), "%s", out);
	snprintf(cmd, sizeof cmd, "bin/gpuplan run tests/fixtures/md1.yaml --quiet --db %s", fifo);
	cr_assert_eq(capture(cmd, out, sizeof out), 2, "%s", out);
}

/* `advise --json` and `estimate` on a full stdout exited 0 too. */
Test(hostile, advise_and_estimate_report_a_full_stdout)
{
	char out[8192];
	const char *const cmds[] = {
		"(bin/gpuplan advise tests/fixtures/md1.yaml --json --db %s/a.db >/dev/full)",
		"(bin/gpuplan estimate --model llama-2-70b --quant fp16 --gpu A100-80GB >/dev/full)"};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, cmds[i], dir);
		cr_assert_eq(capture(cmd, out, sizeof out), 1, "%s: %s", cmd, out);
		cr_assert(strstr(out, "writing to standard output: No space left on device"),
			  "%s: %s", cmd, out);
	}
}
