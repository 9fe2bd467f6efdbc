/*
 * test_sweep.c - sweeps (sweep.h), shards and merge (store.h), and the
 * `sweep` / `merge` commands as shell scripts use them.
 *
 * Sweep files and their tiny base scenario are in tests/fixtures/sweep/.
 * Databases go to a fresh temporary folder per test.  Whole sweeps are
 * compared point by point (sweep_points joined with params, metrics and
 * jobs), so "the same results" means the same rows for the same point
 * whatever the run ids, the number of workers or the shards were.  The
 * kill and concurrency tests run bin/gpuplan (built by `make test`).
 */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>

#include "scratch.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuplan/store.h"
#include "gpuplan/sweep.h"

#define FIX "tests/fixtures/sweep/"

static char out[8192];

TestSuite(sweep, .init = scratch_make, .fini = scratch_remove, .timeout = 60);

/* dir/name, in a static buffer per call site's choice (four rotate). */
static const char *tmp(const char *name)
{
	static char bufs[4][192];
	static int next;
	char *b = bufs[next++ % 4];
	snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
	return b;
}

/* Runs a shell command line; returns its exit code, stdout+stderr in out. */
static int shell(const char *cmdline) { return capture(cmdline, out, sizeof out); }

static int gpuplan(const char *args)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "bin/gpuplan %s", args);
	return shell(cmd);
}

/* The single integer a query returns; -1 when the query fails (no database
 * or table yet, while a sweep starts). */
static long long query(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return -1;
	}
	sqlite3_busy_timeout(h, 10000);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return v;
}

static struct sweep *load(const char *path)
{
	struct sweep *sw = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(sweep_load(path, &sw, &err), GP_OK, "%s", err.msg);
	return sw;
}

/* Runs the sweep (or a shard of it) into db through the library. */
static struct sweep_progress run(const struct sweep *sw, const char *db, unsigned jobs,
				 struct sweep_shard shard, bool resume)
{
	struct sweep_options o = {db, jobs, shard, resume, NULL, NULL};
	struct sweep_progress p;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(sweep_run(sw, &o, &p, &err), GP_OK, "%s", err.msg);
	return p;
}

static const struct sweep_shard whole = {0, 0};

/* Rows of one database that the other lacks, both ways, keyed by point:
 * params, metrics and jobs.  0 means the same results point by point. */
static long long differences(const char *a, const char *b)
{
	static const char *const views[] = {
		"SELECT sp.point, p.key, p.value FROM %s.sweep_points sp "
		"JOIN %s.params p ON p.run_id = sp.run_id",
		"SELECT sp.point, m.scope, m.name, m.value, m.unit FROM %s.sweep_points sp "
		"JOIN %s.metrics m ON m.run_id = sp.run_id",
		"SELECT sp.point, j.job_id, j.start_s, j.end_s, j.node FROM %s.sweep_points sp "
		"JOIN %s.jobs j ON j.run_id = sp.run_id",
	};
	sqlite3 *h;
	cr_assert_eq(sqlite3_open_v2(a, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	char *attach = sqlite3_mprintf("ATTACH %Q AS b", b);
	cr_assert_eq(sqlite3_exec(h, attach, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
	sqlite3_free(attach);
	long long diff = 0;
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		for (int dir_ab = 0; dir_ab < 2; dir_ab++) {
			const char *x = dir_ab ? "b" : "main", *y = dir_ab ? "main" : "b";
			char vx[256], vy[256], sql[700];
			snprintf(vx, sizeof vx, views[i], x, x);
			snprintf(vy, sizeof vy, views[i], y, y);
			snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s EXCEPT %s)", vx, vy);
			sqlite3_stmt *s;
			cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &s, NULL), SQLITE_OK, "%s",
				     sqlite3_errmsg(h));
			cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
			diff += sqlite3_column_int64(s, 0);
			sqlite3_finalize(s);
		}
	}
	sqlite3_close(h);
	return diff;
}

/* Every point exactly once, every run a point, no rows of missing runs. */
static void expect_exactly_once(const char *db, const char *sweep, long long points)
{
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM sweep_points WHERE sweep = '%s'", sweep);
	cr_expect_eq(query(db, sql), points, "%s: points of %s", db, sweep);
	snprintf(sql, sizeof sql,
		 "SELECT count(DISTINCT point) FROM sweep_points WHERE sweep = '%s'", sweep);
	cr_expect_eq(query(db, sql), points, "%s: distinct points of %s", db, sweep);
	cr_expect_eq(query(db, "SELECT count(*) FROM runs WHERE run_id NOT IN "
			       "(SELECT run_id FROM sweep_points)"),
		     0, "every run is a point");
	cr_expect_eq(query(db, "SELECT count(*) FROM sweep_points WHERE run_id NOT IN "
			       "(SELECT run_id FROM runs)"),
		     0, "every point is a run");
	cr_expect_eq(query(db, "SELECT count(*) FROM metrics WHERE run_id NOT IN "
			       "(SELECT run_id FROM runs)"),
		     0, "no metrics of a run that is not there");
	cr_expect_eq(query(db, "SELECT count(*) FROM jobs WHERE run_id NOT IN "
			       "(SELECT run_id FROM runs)"),
		     0, "no jobs of a run that is not there");
}

/* --- expansion --------------------------------------------------------------- */

Test(sweep, grid_expands_in_nested_loop_order_with_seeds_innermost)
{
	struct sweep *sw = load(FIX "grid.yaml");
	cr_assert_eq(sw->n_points, 12, "3 nodes x 2 orders x 2 seeds");
	cr_expect_str_eq(sw->name, "grid");
	cr_expect_str_eq(sw->base, FIX "tiny.yaml");
	cr_expect_str_eq(sw->db, "results/grid.db");
	static const char *const expect[][3] = {
		{"pools.batch.nodes=1", "scheduler.order=fifo", "seed=1"},
		{"pools.batch.nodes=1", "scheduler.order=fifo", "seed=2"},
		{"pools.batch.nodes=1", "scheduler.order=sjf", "seed=1"},
	};
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(sw->points[i].n_sets, 3);
		for (size_t j = 0; j < 3; j++)
			cr_expect_str_eq(sw->points[i].sets[j], expect[i][j], "point %zu set %zu",
					 i, j);
	}
	const struct sweep_point *last = &sw->points[11];
	cr_expect_str_eq(last->sets[0], "pools.batch.nodes=3");
	cr_expect_str_eq(last->sets[1], "scheduler.order=sjf");
	cr_expect_str_eq(last->sets[2], "seed=2");
	cr_expect_str_eq(
		last->key,
		"{\"pools.batch.nodes\":\"3\",\"scheduler.order\":\"sjf\",\"seed\":\"2\"}");
	for (size_t i = 0; i < 12; i++)
		for (size_t j = 0; j < i; j++)
			cr_expect_str_neq(sw->points[i].key, sw->points[j].key);
	sweep_free(sw);
}

Test(sweep, zip_pairs_its_lists_and_crosses_them_with_the_grid)
{
	struct sweep *sw = load(FIX "zip.yaml");
	cr_assert_eq(sw->n_points, 6, "2 nodes x 3 zip rows");
	cr_expect_str_eq(sw->name, "zip-test", "name: wins over the file name");
	static const char *const counts[] = {"3", "6", "9"}, *const rates[] = {"2/h", "4/h", "6/h"};
	for (size_t i = 0; i < 6; i++) {
		const struct sweep_point *p = &sw->points[i];
		char nodes[32], count[64], rate[64];
		snprintf(nodes, sizeof nodes, "pools.batch.nodes=%zu", i / 3 + 1);
		snprintf(count, sizeof count, "workloads.train.count=%s", counts[i % 3]);
		snprintf(rate, sizeof rate, "workloads.train.arrival.rate=%s", rates[i % 3]);
		cr_assert_eq(p->n_sets, 3);
		cr_expect_str_eq(p->sets[0], nodes);
		cr_expect_str_eq(p->sets[1], count, "the i-th values go together");
		cr_expect_str_eq(p->sets[2], rate, "the i-th values go together");
	}
	sweep_free(sw);
}

Test(sweep, point_keys_do_not_depend_on_key_order_or_on_how_seeds_are_written)
{
	struct sweep *a = load(FIX "grid.yaml"), *b = load(FIX "reordered.yaml");
	cr_assert_eq(a->n_points, b->n_points);
	for (size_t i = 0; i < a->n_points; i++) {
		bool found = false;
		for (size_t j = 0; j < b->n_points && !found; j++)
			found = !strcmp(a->points[i].key, b->points[j].key);
		cr_expect(found, "point %s", a->points[i].key);
	}
	sweep_free(a);
	sweep_free(b);
}

Test(sweep, maps_lists_and_quoted_values_pass_through_as_yaml_flow_text)
{
	struct sweep *sw = load(FIX "values.yaml");
	cr_assert_eq(sw->n_points, 4);
	cr_expect_str_eq(sw->points[0].sets[0], "pools.batch.labels={zone: a}");
	cr_expect_str_eq(sw->points[0].sets[1], "pools.batch.windows=[{from: 08:00, to: 20:00}]");
	cr_expect_str_eq(sw->points[2].sets[0], "pools.batch.labels={zone: \"null\", tier: \"\"}",
			 "quotes only where YAML needs them");
	cr_expect_str_eq(sw->points[3].sets[2], "seed=2", "seeds: 2 means 1 and 2");
	sweep_free(sw);
}

/* --- shards ------------------------------------------------------------------ */

Test(sweep, shards_cover_every_point_exactly_once)
{
	struct sweep *sw = load(FIX "many.yaml");
	cr_assert_eq(sw->n_points, 200);
	for (uint32_t n = 1; n <= 7; n++) {
		for (size_t i = 0; i < sw->n_points; i++) {
			int owners = 0;
			for (uint32_t k = 0; k < n; k++)
				owners += sweep_shard_has((struct sweep_shard){k, n}, i);
			cr_expect_eq(owners, 1, "point %zu in %u shards", i, n);
		}
	}
	sweep_free(sw);
}

Test(sweep, shard_text_is_k_of_n_from_zero)
{
	struct sweep_shard sh;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(sweep_parse_shard("2/3", &sh, &err), GP_OK, "%s", err.msg);
	cr_expect(sh.k == 2 && sh.n == 3);
	cr_assert_eq(sweep_parse_shard("0/1", &sh, &err), GP_OK, "%s", err.msg);
	static const char *const bad[] = {"3/2", "2/2",  "1/0",   "x",    "1/",
					  "/2",  "-1/2", "1/2/3", "1/2x", "1234567890/2"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(sweep_parse_shard(bad[i], &sh, &err), GP_EINPUT, "%s", bad[i]);
		char prefix[64];
		snprintf(prefix, sizeof prefix, "--shard %s:1:", bad[i]);
		cr_expect(!strncmp(err.msg, prefix, strlen(prefix)), "%s", err.msg);
	}
	sweep_parse_shard("3/2", &sh, &err);
	cr_expect(strstr(err.msg, "numbered 0 to 1"), "%s", err.msg);
}

/* --- bad input ---------------------------------------------------------------- */

Test(sweep, bad_sweep_files_exit_2_with_a_located_error_and_write_nothing)
{
	static const struct {
		const char *file;
		const char *where; /* FILE:LINE:COL */
		const char *what;
	} cases[] = {
		{"bad-path.yaml", FIX "bad-path.yaml:3:3:", "did you mean 'nodes'"},
		{"bad-item.yaml", FIX "bad-item.yaml:3:3:", "no item named 'gpu'"},
		{"bad-value.yaml", FIX "bad-value.yaml:3:26:", "invalid nodes 'two'"},
		{"combination.yaml", FIX "combination.yaml:4:29:", "no node has 4 GPUs"},
		{"empty-grid.yaml", FIX "empty-grid.yaml:2:7:", "grid is empty"},
		{"empty-list.yaml", FIX "empty-list.yaml:3:22:", "has no values"},
		{"zip-lengths.yaml", FIX "zip-lengths.yaml:4:26:", "equally long"},
		{"unknown-key.yaml", FIX "unknown-key.yaml:2:1:", "did you mean 'grid'"},
		{"no-axes.yaml", FIX "no-axes.yaml:2:1:", "nothing to sweep"},
		{"no-base.yaml", FIX "no-base.yaml:2:1:", "missing key 'base'"},
		{"base-missing.yaml",
		 FIX "base-missing.yaml:2:7:", "cannot read the base scenario"},
		{"seed-twice.yaml", FIX "seed-twice.yaml:5:8:", "both set the seed"},
		{"repeat-value.yaml", FIX "repeat-value.yaml:4:29:", "repeats the value 1"},
		{"bad-seeds.yaml", FIX "bad-seeds.yaml:3:8:", "seeds must be a count"},
		{"narrow.yaml", FIX "narrow.yaml:3:7:",
		 "point 2 of 2 {\"pools.batch.gpus_per_node\":\"1\"} does not load: " FIX
		 "wide.yaml:17:11: error: no node has 2 GPUs"},
	};
	const char *db = tmp("never.db");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char args[512];
		snprintf(args, sizeof args, "sweep " FIX "%s --db %s", cases[i].file, db);
		cr_expect_eq(gpuplan(args), 2, "%s: %s", cases[i].file, out);
		cr_expect(!strncmp(out, cases[i].where, strlen(cases[i].where)), "%s: %s",
			  cases[i].file, out);
		cr_expect(strstr(out, cases[i].what), "%s: %s", cases[i].file, out);
		cr_expect_neq(access(db, F_OK), 0, "%s wrote the database", cases[i].file);
	}
}

Test(sweep, shard_3_of_2_exits_2_and_names_the_option)
{
	char args[256];
	snprintf(args, sizeof args, "sweep " FIX "grid.yaml --shard 3/2 --db %s", tmp("x.db"));
	cr_expect_eq(gpuplan(args), 2, "%s", out);
	cr_expect(strstr(out, "--shard 3/2:1:1: error: shard 3 does not exist"), "%s", out);
	cr_expect_neq(access(tmp("x.db"), F_OK), 0);
}

/* --- running ------------------------------------------------------------------- */

Test(sweep, every_point_is_a_run_with_its_overrides_in_params)
{
	struct sweep *sw = load(FIX "grid.yaml");
	const char *db = tmp("g.db");
	struct sweep_progress p = run(sw, db, 2, whole, false);
	cr_expect_eq(p.total, 12);
	cr_expect_eq(p.written, 12);
	cr_expect_eq(p.present + p.raced, 0);
	expect_exactly_once(db, "grid", 12);
	cr_expect_eq(query(db, "SELECT count(*) FROM params"), 36);
	cr_expect_eq(query(db, "SELECT count(*) FROM params p JOIN sweep_points s USING (run_id) "
			       "WHERE p.key = 'pools.batch.nodes' AND p.value = '3' AND "
			       "s.point LIKE '%\"pools.batch.nodes\":\"3\"%'"),
		     4);
	cr_expect_eq(query(db, "SELECT count(DISTINCT seed) FROM runs"), 2, "seeds reach the run");
	cr_expect_eq(query(db, "SELECT m.value FROM metrics m JOIN params p USING (run_id) WHERE "
			       "p.key = 'pools.batch.nodes' AND p.value = '3' AND m.scope = 'all' "
			       "AND m.name = 'capacity_gpus' LIMIT 1"),
		     6, "3 nodes of 2 GPUs");
	sweep_free(sw);
}

Test(sweep, results_do_not_depend_on_the_number_of_workers)
{
	struct sweep *sw = load(FIX "grid.yaml");
	run(sw, tmp("one.db"), 1, whole, false);
	run(sw, tmp("three.db"), 3, whole, false);
	cr_expect_eq(differences(tmp("one.db"), tmp("three.db")), 0);
	sweep_free(sw);
}

Test(sweep, merged_shards_equal_a_single_database_sweep)
{
	struct sweep *sw = load(FIX "grid.yaml");
	run(sw, tmp("single.db"), 1, whole, false);
	for (uint32_t k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof name, "shard-%u.db", k);
		struct sweep_progress p = run(sw, tmp(name), 2, (struct sweep_shard){k, 3}, false);
		cr_expect_eq(p.total, 4);
		cr_expect_eq(p.written, 4);
	}
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(tmp("merged.db"), &st, &err), GP_OK, "%s", err.msg);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t k = 0; k < 3; k++) {
			char name[32];
			snprintf(name, sizeof name, "shard-%u.db", k);
			struct store_merge_stats ms;
			cr_assert_eq(store_merge(st, tmp(name), &ms, &err), GP_OK, "%s", err.msg);
			cr_expect_eq(ms.copied, pass ? 0 : 4, "pass %d", pass);
			cr_expect_eq(ms.duplicates, pass ? 4 : 0, "pass %d", pass);
		}
	}
	store_close(st);
	expect_exactly_once(tmp("merged.db"), "grid", 12);
	cr_expect_eq(query(tmp("merged.db"), "SELECT max(run_id) FROM runs"), 12, "new run ids");
	cr_expect_eq(differences(tmp("single.db"), tmp("merged.db")), 0);
	sweep_free(sw);
}

Test(sweep, resume_runs_only_the_missing_points_and_is_required_to_skip)
{
	struct sweep *sw = load(FIX "grid.yaml");
	const char *db = tmp("r.db");
	run(sw, db, 1, (struct sweep_shard){1, 2}, false);
	struct sweep_options o = {db, 2, whole, false, NULL, NULL};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(sweep_run(sw, &o, NULL, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "already holds 6 of the 12 points of sweep 'grid'"), "%s",
		  err.msg);
	cr_expect(strstr(err.msg, "--resume"), "%s", err.msg);
	cr_expect_eq(query(db, "SELECT count(*) FROM runs"), 6, "nothing ran");
	struct sweep_progress p = run(sw, db, 2, whole, true);
	cr_expect_eq(p.present, 6);
	cr_expect_eq(p.written, 6);
	expect_exactly_once(db, "grid", 12);
	p = run(sw, db, 2, whole, true);
	cr_expect_eq(p.present, 12);
	cr_expect_eq(p.written, 0);
	run(sw, tmp("full.db"), 1, whole, false);
	cr_expect_eq(differences(db, tmp("full.db")), 0);
	sweep_free(sw);
}

/* Counts progress calls and keeps the last report. */
struct seen {
	int calls;
	struct sweep_progress last;
};

static void on_progress(void *ctx, const struct sweep_progress *p)
{
	struct seen *s = ctx;
	s->calls++;
	s->last = *p;
}

Test(sweep, progress_is_reported_after_every_point)
{
	struct sweep *sw = load(FIX "zip.yaml");
	struct seen seen = {0};
	struct sweep_options o = {tmp("p.db"), 2, whole, false, on_progress, &seen};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(sweep_run(sw, &o, NULL, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(seen.calls, 7, "once at the start, once per point");
	cr_expect_eq(seen.last.total, 6);
	cr_expect_eq(seen.last.written, 6);
	cr_expect_gt(seen.last.elapsed_s, 0);
	sweep_free(sw);
}

/* --- processes ------------------------------------------------------------------ */

/* Starts bin/gpuplan with args (NULL-terminated), output to /dev/null. */
static pid_t spawn(const char *const *args)
{
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execv("bin/gpuplan", (char *const *)args);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

Test(sweep, a_killed_sweep_resumes_with_every_point_exactly_once)
{
	const char *db = tmp("k.db");
	const char *args[] = {"bin/gpuplan", "sweep", FIX "many.yaml", "--db", db, "--jobs",
			      "2",           NULL};
	pid_t pid = spawn(args);
	long long n = 0;
	for (int waited = 0; waited < 20000 && n < 30; waited += 2) {
		sleep_ms(2);
		n = query(db, "SELECT count(*) FROM sweep_points");
	}
	cr_assert_geq(n, 30, "the sweep wrote points");
	kill(pid, SIGKILL);
	cr_expect_eq(wait_exit(pid), 128 + SIGKILL);
	/* The workers get SIGKILL as the sweep dies (PR_SET_PDEATHSIG), but one
	 * inside the write of its commit finishes that system call first: its
	 * point may land just after the sweep is reaped.  Points take about 10 ms
	 * each, so a worker that lived on would add several in the 300 ms below. */
	sleep_ms(100);
	long long at_kill = query(db, "SELECT count(*) FROM sweep_points");
	cr_expect_lt(at_kill, 200, "killed mid-way (the test needs slower points otherwise)");
	sleep_ms(300);
	cr_expect_eq(query(db, "SELECT count(*) FROM sweep_points"), at_kill,
		     "the workers died with the sweep");
	cr_expect_eq(query(db, "SELECT count(*) FROM runs"), at_kill, "only whole runs");

	char cmd[512];
	snprintf(cmd, sizeof cmd, "sweep " FIX "many.yaml --db %s --jobs 2 --resume", db);
	cr_assert_eq(gpuplan(cmd), 0, "%s", out);
	char summary[128];
	snprintf(summary, sizeof summary, "%lld run, %lld already in the database", 200 - at_kill,
		 at_kill);
	cr_expect(strstr(out, summary), "%s", out);
	expect_exactly_once(db, "many", 200);
}

Test(sweep, concurrent_sweeps_on_one_database_lose_nothing)
{
	const char *db = tmp("c.db");
	const char *a[] = {"bin/gpuplan", "sweep", FIX "many.yaml", "--db", db,
			   "--jobs",      "2",     "--resume",      NULL};
	const char *b[] = {"bin/gpuplan", "sweep", FIX "other.yaml", "--db", db, "--jobs",
			   "2",           NULL};
	pid_t pa = spawn(a), pb = spawn(b), pc = spawn(a);
	cr_expect_eq(wait_exit(pa), 0);
	cr_expect_eq(wait_exit(pb), 0);
	cr_expect_eq(wait_exit(pc), 0);
	expect_exactly_once(db, "many", 200);
	expect_exactly_once(db, "other", 60);
	cr_expect_eq(query(db, "SELECT count(*) FROM runs"), 260);
}

Test(sweep, merge_refuses_bad_inputs_before_writing_anything)
{
	const char *outdb = tmp("out.db");
	FILE *f = fopen(tmp("text.db"), "w");
	fputs("not a database, just text that is long enough to have a header......\n", f);
	fclose(f);
	char args[512];
	snprintf(args, sizeof args, "merge %s %s", outdb, tmp("missing.db"));
	cr_expect_eq(gpuplan(args), 2, "%s", out);
	cr_expect(strstr(out, "missing.db: error: cannot read"), "%s", out);
	snprintf(args, sizeof args, "merge %s %s", outdb, tmp("text.db"));
	cr_expect_eq(gpuplan(args), 2, "%s", out);
	cr_expect(strstr(out, "text.db: error: not a SQLite database"), "%s", out);
	cr_expect_neq(access(outdb, F_OK), 0, "no output on bad input");
	cr_expect_eq(gpuplan("merge"), 2, "%s", out);

	snprintf(args, sizeof args, "sweep " FIX "zip.yaml --db %s --quiet", outdb);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	snprintf(args, sizeof args, "merge %s %s", outdb, outdb);
	cr_expect_eq(gpuplan(args), 2, "%s", out);
	cr_expect(strstr(out, "is the output database itself"), "%s", out);
}

Test(sweep, merge_skips_runs_the_output_already_holds)
{
	char args[512];
	const char *a = tmp("a.db"), *m = tmp("m.db");
	for (int i = 1; i <= 2; i++) {
		snprintf(args, sizeof args,
			 "run " FIX "tiny.yaml --set pools.batch.nodes=%d --db %s --quiet", i, a);
		cr_assert_eq(gpuplan(args), 0, "%s", out);
	}
	snprintf(args, sizeof args, "merge %s %s %s", m, a, a);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	cr_expect(strstr(out, "2 runs merged, 0 already"), "%s", out);
	cr_expect(strstr(out, "0 runs merged, 2 already"), "%s", out);
	cr_expect_eq(query(m, "SELECT count(*) FROM runs"), 2);
	cr_expect_eq(query(m, "SELECT count(*) FROM params"), 2);
	cr_expect_eq(query(m, "SELECT count(*) FROM jobs"), query(a, "SELECT count(*) FROM jobs"));
}

/* A refused sweep, a sweep with nothing left to run and a merge that adds
 * nothing commit nothing: the files keep every byte, the change counter in
 * SQLite's header included (opening used to rewrite application_id). */
Test(sweep, a_refused_or_empty_sweep_or_merge_leaves_the_database_byte_identical)
{
	char args[512];
	const char *a = tmp("a.db"), *m = tmp("m.db");
	snprintf(args, sizeof args, "sweep " FIX "zip.yaml --db %s --quiet", a);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	size_t n;
	char *before = scratch_slurp(a, &n);
	snprintf(args, sizeof args, "sweep " FIX "zip.yaml --db %s", a);
	cr_expect_eq(gpuplan(args), 2, "%s", out);
	cr_expect(strstr(out, "already holds 6 of the 6 points"), "%s", out);
	scratch_expect_same_bytes(a, before, n);
	snprintf(args, sizeof args, "sweep " FIX "zip.yaml --db %s --resume", a);
	cr_expect_eq(gpuplan(args), 0, "%s", out);
	cr_expect(strstr(out, "0 run, 6 already"), "%s", out);
	scratch_expect_same_bytes(a, before, n);
	free(before);

	snprintf(args, sizeof args, "merge %s %s", m, a);
	cr_assert_eq(gpuplan(args), 0, "%s", out);
	before = scratch_slurp(m, &n);
	cr_expect_eq(gpuplan(args), 0, "%s", out);
	cr_expect(strstr(out, "0 runs merged, 6 already"), "%s", out);
	scratch_expect_same_bytes(m, before, n);
	free(before);
}

Test(sweep, gnu_parallel_script_gives_the_single_database_results)
{
	if (system("command -v parallel >/dev/null 2>&1") != 0)
		cr_skip_test("GNU parallel is not installed (make deps installs it)");
	struct sweep *sw = load(FIX "grid.yaml");
	run(sw, tmp("single.db"), 1, whole, false);
	sweep_free(sw);
	char cmd[1024];
	snprintf(cmd, sizeof cmd,
		 "GPUPLAN=bin/gpuplan SHARD_DIR=%s/shards scenarios/sweeps/run-parallel.sh " FIX
		 "grid.yaml 3 %s",
		 dir, tmp("par.db"));
	cr_assert_eq(shell(cmd), 0, "%s", out);
	cr_expect(strstr(out, "shard-2.db: 4 runs merged"), "%s", out);
	expect_exactly_once(tmp("par.db"), "grid", 12);
	cr_expect_eq(differences(tmp("single.db"), tmp("par.db")), 0);
	cr_assert_eq(shell(cmd), 0, "a second run resumes and merges nothing new: %s", out);
	cr_expect_eq(query(tmp("par.db"), "SELECT count(*) FROM runs"), 12);
}

/* The Slurm job-array script against a real one-node Slurm cluster that
 * tests/slurm-cluster.sh starts in the test's folder (slurmctld, slurmd and
 * munged as root, on their own ports, key and socket): the script submits
 * itself as an array of three tasks, each running its shard, and a merge
 * job that depends on the array (afterok).  The merged database holds the
 * same results, point by point, as a sweep run locally into one database.
 * Skips, with the reason, where Slurm cannot be started.
 * (Slurm: sbatch --array, --dependency=afterok:<array job id> waits for
 * every task of the array, https://slurm.schedmd.com/job_array.html.) */
Test(sweep, slurm_array_script_gives_the_single_database_results, .timeout = 120)
{
	char cmd[4096], cwd[256];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	struct sweep *sw = load(FIX "grid.yaml");
	run(sw, tmp("single.db"), 1, whole, false);
	sweep_free(sw);
	/* No assertion between start and stop: the daemons must not outlive us. */
	snprintf(cmd, sizeof cmd, "tests/slurm-cluster.sh start %s/slurm", dir);
	int rc = shell(cmd);
	if (rc == 77) {
		snprintf(cmd, sizeof cmd, "cat %s/slurm/why", dir);
		shell(cmd);
		cr_skip_test("Slurm cannot be started here: %s", out);
	}
	cr_assert_eq(rc, 0, "%s", out);
	/* Submitted from a folder of its own, as from a login node: the
	 * outputs, shards and merged database go under it. */
	snprintf(
		cmd, sizeof cmd,
		"{ mkdir -p %s/work && cd %s/work && export SLURM_CONF=%s/slurm/slurm.conf && "
		"GPUPLAN=%s/bin/gpuplan SHARD_DIR=%s/work/shards %s/scenarios/sweeps/slurm-array.sh "
		"%s/" FIX "grid.yaml 3 && "
		"for i in $(seq 1 400); do [ -z \"$(squeue -h -t PD,R,CG,CF)\" ] && break; sleep 0.2; done; "
		"squeue -h -t all -o '%%i %%T'; cat results/*.out; }",
		dir, dir, dir, cwd, dir, cwd, cwd);
	rc = shell(cmd);
	char log[8192];
	snprintf(log, sizeof log, "%s", out);
	snprintf(cmd, sizeof cmd, "tests/slurm-cluster.sh stop %s/slurm", dir);
	shell(cmd);
	cr_assert_eq(rc, 0, "%s", log);
	cr_expect(strstr(log, "submitted array"), "%s", log);
	cr_expect_null(strstr(log, "FAILED"), "%s", log);
	cr_expect(strstr(log, "shard-2.db: 4 runs merged"), "%s", log);
	snprintf(cmd, sizeof cmd, "%s/work/results/grid.db", dir);
	expect_exactly_once(cmd, "grid", 12);
	cr_expect_eq(differences(tmp("single.db"), cmd), 0);
}
