/*
 * test_store.c - the results database (store.h, docs/results.md).
 *
 * Each test builds a small scenario and results object by hand, writes them
 * to a database in a fresh temporary folder and reads the rows back with
 * plain SQLite queries on a separate connection, as a user's script would.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <criterion/criterion.h>

#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuplan/store.h"

static char tmpdir[64];
static char dbpath[128];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void setup(void)
{
	strcpy(tmpdir, "/tmp/gpuplan-store-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	snprintf(dbpath, sizeof dbpath, "%s/results.db", tmpdir);
}

static void teardown(void) { nftw(tmpdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

TestSuite(store, .init = setup, .fini = teardown);

/* A scenario with what the store reads: identity, one workload, two params. */
struct fixture {
	struct scenario sc;
	struct workload_spec wl[2];
	struct param params[2];
	struct results r;
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof *f);
	f->sc.name = "unit";
	f->sc.path = "tests/unit.yaml";
	strcpy(f->sc.sha256, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	f->sc.seed = 42;
	f->wl[0].name = "train";
	f->wl[1].name = "eval";
	f->sc.workloads = f->wl;
	f->sc.n_workloads = 2;
	f->params[0] = (struct param){"pools.batch.nodes", "3"};
	f->params[1] = (struct param){"workloads.train.count", "10"};
	f->sc.params = f->params;
	f->sc.n_params = 2;

	struct results *r = &f->r;
	results_init(r);
	r->currency = "usd";
	results_add_metric(r, "all", METRIC_CAPACITY_GPUS, 8);
	results_add_metric(r, "train", METRIC_QUEUE_TIME_MEAN_S, 12.5);
	results_add_metric(r, "all", METRIC_COST_PER_VERIFIED_RESULT, NAN);
	r->n_nodes = 2;
	r->node_names = gp_xcalloc(2, sizeof *r->node_names);
	r->node_names[0] = gp_xstrdup("batch-0");
	r->node_names[1] = gp_xstrdup("batch-1");
	r->n_jobs = 3;
	r->cap_jobs = 3;
	r->jobs = gp_xcalloc(3, sizeof *r->jobs);
	/* finished on time */
	r->jobs[0] = (struct job_record){.job_id = 0,
					 .workload = 0,
					 .node = 1,
					 .gpus = 2,
					 .status = JOB_COMPLETED,
					 .deadline_met = true,
					 .verified = true,
					 .submit = 10 * SIM_SECOND,
					 .start = 40 * SIM_SECOND,
					 .end = 3640 * SIM_SECOND,
					 .deadline = 7200 * SIM_SECOND,
					 .cost = 5.0,
					 .preemptions = 2,
					 .oom_kills = 1};
	/* failed, no deadline, cost unknown */
	r->jobs[1] = (struct job_record){.job_id = 1,
					 .workload = 1,
					 .node = 0,
					 .gpus = 1,
					 .status = JOB_FAILED,
					 .submit = 20 * SIM_SECOND,
					 .start = 20 * SIM_SECOND,
					 .end = 500 * SIM_SECOND,
					 .deadline = SIM_NEVER,
					 .cost = NAN};
	/* never started */
	r->jobs[2] = (struct job_record){.job_id = 2,
					 .workload = 0,
					 .node = -1,
					 .gpus = 4,
					 .status = JOB_PENDING,
					 .submit = 30 * SIM_SECOND,
					 .start = SIM_NEVER,
					 .end = SIM_NEVER,
					 .deadline = 100 * SIM_SECOND,
					 .cost = 0};
	r->n_ts = 2;
	r->cap_ts = 2;
	r->ts = gp_xcalloc(2, sizeof *r->ts);
	/* Designated: fields that are not timeseries columns stay zero. */
	r->ts[0] = (struct ts_row){.t = 0,
				   .scope = "all",
				   .gpus_capacity = 8,
				   .gpus_allocated = 2,
				   .gpus_demand = 7,
				   .engine_active = 1.5,
				   .sm_active = 1.0,
				   .vram_used_gib = 30.5,
				   .pending = 1,
				   .running = 1};
	r->ts[1] = (struct ts_row){.t = 300 * SIM_SECOND,
				   .scope = "all",
				   .gpus_capacity = 8,
				   .gpus_allocated = 3,
				   .gpus_demand = 3,
				   .engine_active = 2.5,
				   .sm_active = NAN,
				   .vram_used_gib = 60,
				   .pending = 0,
				   .running = 2};
	r->events = 1234;
	r->sim_end = 3640 * SIM_SECOND + SIM_SECOND / 2;
	r->wall_seconds = 0.25;
	strcpy(r->started_at, "2026-01-01T00:00:00Z");
	r->status = "horizon";
}

static void fixture_free(struct fixture *f) { results_free(&f->r); }

/* Opens the database through its own read-only connection. */
static sqlite3 *reader(void)
{
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

static sqlite3 *reader_of(const char *path)
{
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

/* The text of the single row a query returns (valid until the next query). */
static char query_text_buf[4096];
static const char *query_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW, "%s", sql);
	const unsigned char *t = sqlite3_column_text(s, 0);
	snprintf(query_text_buf, sizeof query_text_buf, "%s", t ? (const char *)t : "");
	sqlite3_finalize(s);
	return query_text_buf;
}

/* The single integer a query returns. */
static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW, "%s", sql);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Writes the fixture to dbpath and returns the run id. */
static int64_t write_fixture(struct fixture *f)
{
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	int64_t id = -1;
	cr_assert_eq(store_write_run(st, &f->sc, &f->r, &id, &err), GP_OK, "%s", err.msg);
	store_close(st);
	return id;
}

/* The contract: table -> columns in order (docs/results.md). */
static const struct {
	const char *table;
	const char *columns;
} contract[] = {
	{"runs", "run_id,name,scenario_path,scenario_sha256,seed,started_at,wall_seconds,events,"
		 "sim_seconds,status,start,step_s,currency"},
	{"params", "run_id,key,value"},
	{"metrics", "run_id,scope,name,value,unit"},
	{"jobs",
	 "run_id,job_id,workload,submit_s,start_s,end_s,queue_s,gpus,node,status,"
	 "deadline_s,deadline_met,verified,cost,reason,trace_queue_s,preemptions,oom_kills,flavor,"
	 "namespace,queue,team"},
	{"requests", "run_id,workload,request_id,arrival_s,ttft_s,tpot_s,e2e_s,prompt_tokens,"
		     "output_tokens,slo_met,verified"},
	{"timeseries", "run_id,t_s,scope,gpus_capacity,gpus_allocated,gpus_demand,engine_active,"
		       "sm_active,vram_used_gib,pending,running,requests_running,requests_waiting,"
		       "kv_cache_usage,preemptions,gpus_provisioning"},
	{"pending_reasons", "run_id,scope,reason,pending_seconds,pods"},
	{"allocations",
	 "run_id,name,start_s,end_s,gpu_hours,gpu_cost,cpu_core_hours,cpu_cost,"
	 "ram_byte_hours,ram_cost,total_cost,gpu_efficiency,namespace,queue,team,pool"},
	{"findings",
	 "run_id,rank,step,finding,evidence,kind,scope,fix,key,value,relaxed,pod_hours"},
	{"constraints", "run_id,kind,key,workload,pool,queue,pod_seconds"},
	{"advice", "run_id,rank,alternative,overrides,alternative_run_id,meets,peak_demand_gpus,"
		   "queue_time_p95_s,deadline_met_pct,slo_attainment_pct,cost_total,"
		   "cost_per_verified_result,forced,untrusted"},
	{"scopes", "run_id,scope,kind,workload_kind,model,gpu,namespace,queue,labels,team"},
	{"backtest", "run_id,scope,metric,observed,simulated,error"},
};

Test(store, open_creates_every_contract_table_with_its_columns)
{
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *db = reader();
	for (size_t i = 0; i < sizeof contract / sizeof contract[0]; i++) {
		char sql[128], cols[512] = "";
		snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", contract[i].table);
		sqlite3_stmt *s;
		cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
		while (sqlite3_step(s) == SQLITE_ROW) {
			if (cols[0])
				strcat(cols, ",");
			strcat(cols, (const char *)sqlite3_column_text(s, 1));
		}
		sqlite3_finalize(s);
		cr_expect_str_eq(cols, contract[i].columns, "table %s", contract[i].table);
	}
	cr_expect_eq(query_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM runs"), 0);
	sqlite3_close(db);
}

Test(store, open_sets_wal_mode_and_declares_column_types)
{
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *db = reader();
	sqlite3_stmt *s;
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 0), "wal");
	sqlite3_finalize(s);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM pragma_table_info('jobs') "
				   "WHERE type NOT IN ('INTEGER', 'REAL', 'TEXT')"),
		     0);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
				   "AND name IN ('metrics_run_scope_name')"),
		     1);
	/* job_rows is its own run index: its rowid is run_id << 32 | job_id,
	 * and the jobs view searches a run's range of it */
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'job_rows' "
				   "AND sql LIKE '%job_key INTEGER PRIMARY KEY%'"),
		     1);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
				   "AND tbl_name = 'job_rows'"),
		     0);
	sqlite3_stmt *plan;
	cr_assert_eq(sqlite3_prepare_v2(db,
					"EXPLAIN QUERY PLAN SELECT * FROM jobs WHERE run_id = 2",
					-1, &plan, NULL),
		     SQLITE_OK);
	bool ranged = false;
	while (sqlite3_step(plan) == SQLITE_ROW)
		ranged |=
			strstr((const char *)sqlite3_column_text(plan, 3),
			       "SEARCH j USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)") != NULL;
	sqlite3_finalize(plan);
	cr_expect(ranged, "the jobs view scans job_rows for one run");
	sqlite3_close(db);
}

Test(store, open_creates_missing_parent_folders)
{
	snprintf(dbpath, sizeof dbpath, "%s/a/b/run.db", tmpdir);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	store_close(st);
	cr_expect_eq(access(dbpath, F_OK), 0);
}

Test(store, reopening_keeps_the_schema_and_runs)
{
	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	int64_t n = -1;
	cr_assert_eq(store_run_count(st, &n, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(n, 1);
	store_close(st);
	fixture_free(&f);
}

Test(store, runs_row_round_trips)
{
	struct fixture f;
	fixture_init(&f);
	int64_t id = write_fixture(&f);
	cr_expect_eq(id, 1);
	sqlite3 *db = reader();
	sqlite3_stmt *s;
	cr_assert_eq(
		sqlite3_prepare_v2(db,
				   "SELECT run_id, name, scenario_path, scenario_sha256, seed, "
				   "started_at, wall_seconds, events, sim_seconds, status "
				   "FROM runs",
				   -1, &s, NULL),
		SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int64(s, 0), id);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 1), "unit");
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 2), "tests/unit.yaml");
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 3), f.sc.sha256);
	cr_expect_eq(sqlite3_column_type(s, 4), SQLITE_INTEGER);
	cr_expect_eq(sqlite3_column_int64(s, 4), 42);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 5), "2026-01-01T00:00:00Z");
	cr_expect_float_eq(sqlite3_column_double(s, 6), 0.25, 1e-12);
	cr_expect_eq(sqlite3_column_int64(s, 7), 1234);
	cr_expect_float_eq(sqlite3_column_double(s, 8), 3640.5, 1e-9);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 9), "horizon");
	cr_expect_eq(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, params_and_metrics_round_trip_with_nan_as_null)
{
	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM params WHERE run_id = 1"), 2);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM params WHERE run_id = 1 AND "
				   "key = 'pools.batch.nodes' AND value = '3'"),
		     1);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM metrics WHERE run_id = 1"), 3);
	cr_expect_eq(query_int(db, "SELECT value = 8 AND unit = 'gpus' FROM metrics "
				   "WHERE scope = 'all' AND name = 'capacity_gpus'"),
		     1);
	cr_expect_eq(query_int(db, "SELECT value = 12.5 FROM metrics "
				   "WHERE scope = 'train' AND name = 'queue_time_mean_s'"),
		     1);
	cr_expect_eq(query_int(db, "SELECT value IS NULL AND unit = 'usd' FROM metrics "
				   "WHERE name = 'cost_per_verified_result'"),
		     1);
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, job_rows_round_trip_in_array_order)
{
	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	sqlite3 *db = reader();
	sqlite3_stmt *s;
	cr_assert_eq(sqlite3_prepare_v2(
			     db,
			     "SELECT job_id, workload, submit_s, start_s, end_s, queue_s, "
			     "gpus, node, status, deadline_s, deadline_met, verified, cost, "
			     "preemptions, oom_kills FROM jobs WHERE run_id = 1 ORDER BY job_id",
			     -1, &s, NULL),
		     SQLITE_OK);

	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int64(s, 0), 0);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 1), "train");
	cr_expect_eq(sqlite3_column_double(s, 2), 10.0);
	cr_expect_eq(sqlite3_column_double(s, 3), 40.0);
	cr_expect_eq(sqlite3_column_double(s, 4), 3640.0);
	cr_expect_eq(sqlite3_column_double(s, 5), 30.0);
	cr_expect_eq(sqlite3_column_int(s, 6), 2);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 7), "batch-1");
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 8), "completed");
	cr_expect_eq(sqlite3_column_double(s, 9), 7200.0);
	cr_expect_eq(sqlite3_column_int(s, 10), 1);
	cr_expect_eq(sqlite3_column_int(s, 11), 1);
	cr_expect_eq(sqlite3_column_double(s, 12), 5.0);
	cr_expect_eq(sqlite3_column_int(s, 13), 2);
	cr_expect_eq(sqlite3_column_int(s, 14), 1);

	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int64(s, 0), 1);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 1), "eval");
	cr_expect_eq(sqlite3_column_double(s, 5), 0.0);
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 7), "batch-0");
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 8), "failed");
	cr_expect_eq(sqlite3_column_type(s, 9), SQLITE_NULL, "no deadline is NULL");
	cr_expect_eq(sqlite3_column_int(s, 10), 0);
	cr_expect_eq(sqlite3_column_int(s, 11), 0);
	cr_expect_eq(sqlite3_column_type(s, 12), SQLITE_NULL, "NAN cost is NULL");

	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int64(s, 0), 2);
	cr_expect_eq(sqlite3_column_double(s, 2), 30.0);
	cr_expect_eq(sqlite3_column_type(s, 3), SQLITE_NULL, "never started: start_s NULL");
	cr_expect_eq(sqlite3_column_type(s, 4), SQLITE_NULL, "never started: end_s NULL");
	cr_expect_eq(sqlite3_column_type(s, 5), SQLITE_NULL, "never started: queue_s NULL");
	cr_expect_eq(sqlite3_column_int(s, 6), 4);
	cr_expect_eq(sqlite3_column_type(s, 7), SQLITE_NULL, "never placed: node NULL");
	cr_expect_str_eq((const char *)sqlite3_column_text(s, 8), "unfinished");
	cr_expect_eq(sqlite3_column_double(s, 9), 100.0);
	cr_expect_eq(sqlite3_column_type(s, 12), SQLITE_FLOAT);

	cr_expect_eq(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, timeseries_rows_round_trip)
{
	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM timeseries WHERE run_id = 1"), 2);
	cr_expect_eq(query_int(db, "SELECT t_s = 0 AND scope = 'all' AND gpus_capacity = 8 AND "
				   "gpus_allocated = 2 AND gpus_demand = 7 AND engine_active = 1.5 "
				   "AND sm_active = 1.0 AND vram_used_gib = 30.5 AND pending = 1 "
				   "AND running = 1 FROM timeseries ORDER BY rowid LIMIT 1"),
		     1);
	cr_expect_eq(query_int(db, "SELECT t_s = 300 AND sm_active IS NULL AND running = 2 "
				   "FROM timeseries ORDER BY rowid LIMIT 1 OFFSET 1"),
		     1);
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, runs_append_with_increasing_ids)
{
	struct fixture f;
	fixture_init(&f);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	int64_t prev = 0;
	for (int i = 0; i < 3; i++) {
		int64_t id = 0;
		cr_assert_eq(store_write_run(st, &f.sc, &f.r, &id, &err), GP_OK, "%s", err.msg);
		cr_expect_gt(id, prev);
		prev = id;
	}
	int64_t n = 0;
	cr_assert_eq(store_run_count(st, &n, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(n, 3);
	store_close(st);
	prev = write_fixture(&f) - 1; /* a new connection appends too */
	cr_expect_eq(prev, 3);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs"), 12);
	cr_expect_eq(query_int(db, "SELECT count(DISTINCT run_id) FROM metrics"), 4);
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, second_connection_reads_while_the_store_is_open)
{
	struct fixture f;
	fixture_init(&f);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_write_run(st, &f.sc, &f.r, NULL, &err), GP_OK, "%s", err.msg);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE run_id = 1"), 3);
	sqlite3_close(db);
	store_close(st);
	fixture_free(&f);
}

/* The database holds exactly `runs` runs and no orphan rows. */
static void expect_only_runs(int64_t runs)
{
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM runs"), runs);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM params WHERE run_id > (SELECT "
				   "coalesce(max(run_id), 0) FROM runs)"),
		     0);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM metrics WHERE run_id > (SELECT "
				   "coalesce(max(run_id), 0) FROM runs)"),
		     0);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE run_id > (SELECT "
				   "coalesce(max(run_id), 0) FROM runs)"),
		     0);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs"), 3 * runs);
	sqlite3_close(db);
}

/* Forks before any SQLite use: connections must not cross a fork. */
Test(store, two_processes_append_to_one_database)
{
	struct fixture f;
	fixture_init(&f);
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	int ok = 1;
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (store_open(dbpath, &st, &err) != GP_OK)
		ok = 0;
	for (int i = 0; ok && i < 5; i++)
		ok = store_write_run(st, &f.sc, &f.r, NULL, &err) == GP_OK;
	if (pid == 0) {
		if (!ok)
			fprintf(stderr, "child: %s\n", err.msg);
		_exit(ok ? 0 : 1);
	}
	cr_assert(ok, "%s", err.msg);
	int status = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	int64_t n = 0;
	cr_assert_eq(store_run_count(st, &n, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(n, 10);
	store_close(st);
	expect_only_runs(10);
	sqlite3 *db = reader(); /* whichever wrote first, the file ends in WAL mode */
	cr_expect_str_eq(query_text(db, "PRAGMA journal_mode"), "wal");
	sqlite3_close(db);
	fixture_free(&f);
}

/* Bytes of the file beside the database with this suffix; -1: none. */
static long beside_size(const char *suffix)
{
	char path[160];
	struct stat sb;
	snprintf(path, sizeof path, "%s%s", dbpath, suffix);
	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* A new file's first run goes through a rollback journal, straight into the
 * file (store.c, configure): WAL would write its pages twice.  The file is
 * in WAL mode from that commit on, and later runs go to the WAL. */
Test(store, first_run_into_a_new_file_skips_the_wal_and_later_runs_use_it)
{
	struct fixture f;
	fixture_init(&f);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(beside_size("-wal"), -1, "a new database has no WAL before its first run");
	cr_assert_eq(store_write_run(st, &f.sc, &f.r, NULL, &err), GP_OK, "%s", err.msg);
	cr_expect_leq(beside_size("-wal"), 0, "the first run's pages went to the WAL");
	cr_expect_eq(beside_size("-journal"), -1, "the rollback journal outlived its commit");
	sqlite3 *db = reader();
	cr_expect_str_eq(query_text(db, "PRAGMA journal_mode"), "wal");
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE run_id = 1"), 3);
	sqlite3_close(db);
	cr_assert_eq(store_write_run(st, &f.sc, &f.r, NULL, &err), GP_OK, "%s", err.msg);
	cr_expect_gt(beside_size("-wal"), 0, "the second run did not go to the WAL");
	store_close(st);
	expect_only_runs(2);
	fixture_free(&f);
}

Test(store, bad_job_index_fails_the_run_and_leaves_nothing)
{
	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	f.r.jobs[2].workload = 7; /* after two good job rows */
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	int64_t id = -5;
	cr_expect_eq(store_write_run(st, &f.sc, &f.r, &id, &err), GP_ERUNTIME);
	cr_expect_eq(id, -5, "run id untouched on failure");
	cr_expect(strstr(err.msg, dbpath) && strstr(err.msg, "job 2"), "message: %s", err.msg);
	f.r.jobs[2].workload = 0;
	f.r.jobs[2].node = 2; /* only 2 nodes */
	cr_expect_eq(store_write_run(st, &f.sc, &f.r, &id, &err), GP_ERUNTIME);
	store_close(st);
	expect_only_runs(1);
	fixture_free(&f);
}

Test(store, sqlite_error_mid_run_rolls_back_the_whole_run)
{
	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	/* timeseries is written last: runs, params, metrics and jobs go in first */
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "DROP TABLE timeseries", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	cr_expect_eq(store_write_run(st, &f.sc, &f.r, NULL, &err), GP_ERUNTIME);
	cr_expect(strstr(err.msg, dbpath) && strstr(err.msg, "timeseries"), "message: %s", err.msg);
	/* the connection is usable again after the failure */
	int64_t n = -1;
	cr_assert_eq(store_run_count(st, &n, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(n, 1);
	store_close(st);
	expect_only_runs(1);
	fixture_free(&f);
}

Test(store, non_database_file_is_bad_input_naming_it)
{
	FILE *fp = fopen(dbpath, "w");
	cr_assert_not_null(fp);
	for (int i = 0; i < 200; i++)
		fputs("submit_s,duration_s,gpus\n", fp);
	fclose(fp);
	struct store *st = (struct store *)1;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(store_open(dbpath, &st, &err), GP_EINPUT);
	cr_expect_null(st);
	cr_expect(strstr(err.msg, dbpath) && strstr(err.msg, "is not a SQLite database"),
		  "message: %s", err.msg);
	/* and the file is left as it was */
	fp = fopen(dbpath, "r");
	char line[64];
	cr_assert(fgets(line, sizeof line, fp));
	cr_expect_str_eq(line, "submit_s,duration_s,gpus\n");
	fclose(fp);
}

Test(store, folder_in_place_of_the_file_is_bad_input_named_a_directory)
{
	snprintf(dbpath, sizeof dbpath, "%s", tmpdir);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(store_open(dbpath, &st, &err), GP_EINPUT);
	cr_expect_null(st);
	cr_expect(strstr(err.msg, dbpath) && strstr(err.msg, "is a directory"), "message: %s",
		  err.msg);
	cr_expect_eq(store_open_read(dbpath, &st, &err), GP_EINPUT);
}

/* A regular file where a folder of the path should be: the path cannot hold
 * results, as a directory cannot (docs/cli.md, exit codes), named as such
 * (SQLite said "unable to open database file"). */
Test(store, parent_that_is_a_file_is_bad_input)
{
	char file[160];
	snprintf(file, sizeof file, "%s/plain", tmpdir);
	FILE *fp = fopen(file, "w");
	cr_assert_not_null(fp);
	fclose(fp);
	snprintf(dbpath, sizeof dbpath, "%s/plain/sub/run.db", tmpdir);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(store_open(dbpath, &st, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, dbpath) && strstr(err.msg, "plain is a file, not a folder"),
		  "message: %s", err.msg);
}

Test(store, newer_schema_version_is_refused)
{
	sqlite3 *db = NULL;
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	/* a newer gpuplan's database: our application id, a later schema */
	cr_assert_eq(sqlite3_exec(db,
				  "PRAGMA application_id = 1196444750; PRAGMA user_version = 99",
				  NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(store_open(dbpath, &st, &err), GP_ERUNTIME);
	cr_expect(strstr(err.msg, dbpath) && strstr(err.msg, "99"), "message: %s", err.msg);
}

Test(store, hundred_thousand_jobs_write_in_one_run)
{
	struct fixture f;
	fixture_init(&f);
	size_t n = 100000;
	free(f.r.jobs);
	f.r.jobs = gp_xcalloc(n, sizeof *f.r.jobs);
	f.r.n_jobs = f.r.cap_jobs = n;
	for (size_t i = 0; i < n; i++) {
		struct job_record *j = &f.r.jobs[i];
		j->job_id = (int64_t)i;
		j->workload = (int32_t)(i % 2);
		j->node = (int32_t)(i % 3) - 1;
		j->gpus = 1;
		j->status = j->node < 0 ? JOB_PENDING : JOB_COMPLETED;
		j->submit = (sim_time)i * SIM_SECOND;
		j->start = j->node < 0 ? SIM_NEVER : j->submit + 5 * SIM_SECOND;
		j->end = j->node < 0 ? SIM_NEVER : j->start + SIM_HOUR;
		j->deadline = SIM_NEVER;
		j->cost = 1.0;
	}
	write_fixture(&f);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs"), (int64_t)n);
	cr_expect_eq(query_int(db, "SELECT sum(job_id) FROM jobs"), (int64_t)(n * (n - 1) / 2));
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE node IS NULL"), 33334);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE queue_s = 5"), 66666);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE workload = 'eval'"), 50000);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM (SELECT job_id, row_number() OVER () - 1 "
				   "AS k FROM jobs) WHERE job_id <> k"),
		     0, "the view gives the rows in job order");
	/* Each text once per run: 2 workloads, 2 nodes, 2 statuses. */
	cr_expect_eq(query_int(db, "SELECT count(*) FROM job_texts"), 6);
	sqlite3_close(db);
	fixture_free(&f);
}

/* --- sweep points and merge ----------------------------------------------- */

/* The path of another database in the test's folder. */
static const char *other_db(const char *name)
{
	static char path[160];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	return path;
}

/* n jobs whose columns go from NULL to an integer to a real and back, each
 * by a pattern that salt shifts, so that two runs differ in every column
 * of every row at some point. */
static void patterned_jobs(struct fixture *f, size_t n, size_t salt)
{
	free(f->r.jobs);
	f->r.jobs = gp_xcalloc(n, sizeof *f->r.jobs);
	f->r.n_jobs = f->r.cap_jobs = n;
	for (size_t i = 0; i < n; i++) {
		struct job_record *j = &f->r.jobs[i];
		size_t k = (i / 3 + salt) % 5;
		j->job_id = (int64_t)i;
		j->workload = (int32_t)(k % 2);
		j->node = k == 0 ? -1 : (int32_t)(k % 2);
		j->gpus = (int32_t)(k % 3);
		j->status = j->node < 0 ? JOB_PENDING : JOB_COMPLETED;
		j->submit = (sim_time)(i / 7) * SIM_SECOND / 2;
		j->start = j->node < 0 ? SIM_NEVER : j->submit + (sim_time)k * SIM_SECOND;
		j->end = j->node < 0 ? SIM_NEVER : j->start + SIM_HOUR;
		j->deadline = k == 1 ? SIM_NEVER : (sim_time)k * SIM_HOUR;
		j->deadline_met = k > 2;
		j->verified = k % 2;
		j->cost = k == 2 ? NAN : k == 3 ? -0.0 : k == 4 ? 0.0 : 0.25 * (double)k;
		j->preemptions = (int32_t)(k % 2);
		j->oom_kills = (int32_t)(k / 4);
	}
}

/* A connection keeps its job_rows statements and what they hold bound,
 * and binds only what changed from the row before at the same place
 * (store_int.h's struct sti_kept): runs written in turn on one connection
 * give the rows, values and types, that a new connection per run gives. */
Test(store, runs_written_in_turn_on_one_connection_bind_every_change)
{
	struct fixture x, y;
	fixture_init(&x);
	fixture_init(&y);
	patterned_jobs(&x, 1000, 0); /* statements of several sizes */
	patterned_jobs(&y, 1001, 2);
	struct fixture *order[] = {&x, &y, &x};
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store *st;
	int64_t id;
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(store_write_run(st, &order[i]->sc, &order[i]->r, &id, &err), GP_OK,
			     "%s", err.msg);
	store_close(st);
	const char *fresh = other_db("fresh.db");
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(store_open(fresh, &st, &err), GP_OK, "%s", err.msg);
		cr_assert_eq(store_write_run(st, &order[i]->sc, &order[i]->r, &id, &err), GP_OK,
			     "%s", err.msg);
		store_close(st);
	}
	static const char *const cols[] = {
		"run_id",        "job_id",       "workload_id", "submit_s", "start_s",
		"end_s",         "queue_s",      "gpus",        "node_id",  "status_id",
		"deadline_s",    "deadline_met", "verified",    "cost",     "reason_id",
		"trace_queue_s", "preemptions",  "oom_kills",   "flavor_id"};
	char list[2048] = "";
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
		snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s, typeof(%s)",
			 c ? ", " : "", cols[c], cols[c]);
	char sql[4 * sizeof list + 256]; /* the four lists and the query around them */
	snprintf(sql, sizeof sql,
		 "SELECT (SELECT count(*) FROM (SELECT %s FROM main.job_rows EXCEPT SELECT %s "
		 "FROM b.job_rows)) + (SELECT count(*) FROM (SELECT %s FROM b.job_rows EXCEPT "
		 "SELECT %s FROM main.job_rows))",
		 list, list, list, list);
	sqlite3 *db = reader();
	char attach[512];
	snprintf(attach, sizeof attach, "ATTACH '%s' AS b", fresh);
	cr_assert_eq(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM main.job_rows"), 3001);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM b.job_rows"), 3001);
	cr_expect_eq(query_int(db, sql), 0, "the same rows, values and types");
	sqlite3_close(db);
	fixture_free(&x);
	fixture_free(&y);
}

Test(store, a_sweep_point_is_written_once)
{
	struct fixture f;
	fixture_init(&f);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	int64_t id = -1;
	bool written = false, has = true;
	cr_assert_eq(store_has_point(st, "s", "{\"a\":\"1\"}", &has, &err), GP_OK, "%s", err.msg);
	cr_expect(!has);
	cr_assert_eq(
		store_write_point_run(st, &f.sc, &f.r, "s", "{\"a\":\"1\"}", &id, &written, &err),
		GP_OK, "%s", err.msg);
	cr_expect(written);
	cr_expect_eq(id, 1);
	id = -1;
	cr_assert_eq(
		store_write_point_run(st, &f.sc, &f.r, "s", "{\"a\":\"1\"}", &id, &written, &err),
		GP_OK, "%s", err.msg);
	cr_expect(!written, "the point is already there");
	cr_expect_eq(id, -1, "run_id untouched when nothing is written");
	cr_assert_eq(
		store_write_point_run(st, &f.sc, &f.r, "t", "{\"a\":\"1\"}", &id, &written, &err),
		GP_OK, "%s", err.msg);
	cr_expect(written, "the same point of another sweep is another point");
	cr_assert_eq(store_has_point(st, "s", "{\"a\":\"1\"}", &has, &err), GP_OK, "%s", err.msg);
	cr_expect(has);
	char **points;
	size_t n;
	cr_assert_eq(store_sweep_points(st, "s", &points, &n, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(points[0], "{\"a\":\"1\"}");
	for (size_t i = 0; i < n; i++)
		free(points[i]);
	free(points);
	store_close(st);
	expect_only_runs(2);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT run_id FROM sweep_points WHERE sweep = 't'"), 2);
	sqlite3_close(db);
	fixture_free(&f);
}

/* Writes the fixture n times into path: runs 0 .. plain-1 outside sweeps,
 * the others as sweep points "pI" of sweep "s".  Run i takes i + 0.25 s of
 * wall time, so that runs differ as real ones do. */
static void write_runs(const char *path, struct fixture *f, int n, int plain)
{
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(path, &st, &err), GP_OK, "%s", err.msg);
	for (int i = 0; i < n; i++) {
		char point[16];
		bool written;
		snprintf(point, sizeof point, "p%d", i);
		f->r.wall_seconds = 0.25 + i; /* distinct runs outside sweeps too */
		if (i >= plain)
			cr_assert_eq(store_write_point_run(st, &f->sc, &f->r, "s", point, NULL,
							   &written, &err),
				     GP_OK, "%s", err.msg);
		else
			cr_assert_eq(store_write_run(st, &f->sc, &f->r, NULL, &err), GP_OK, "%s",
				     err.msg);
	}
	store_close(st);
}

/* A database's job rows through the jobs view, quoted, in their order. */
#define JOB_ROWS_QUOTED                                                                     \
	"SELECT group_concat(quote(run_id) || quote(job_id) || quote(workload) || "         \
	"quote(submit_s) || quote(node) || quote(status) || quote(reason) || quote(cost), " \
	"'|') FROM jobs"

/* Runs sql on the database at path, which turns it back into an older
 * schema, and returns its jobs rows then, quoted. */
static char *make_older(const char *path, const char *sql)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
	db = reader_of(path);
	char *rows = gp_xstrdup(query_text(db, JOB_ROWS_QUOTED));
	sqlite3_close(db);
	cr_assert(strchr(rows, '|'), "job rows to compare: %s", rows);
	return rows;
}

/* Turns the database at path back into schema version 1, where jobs was a
 * table with the texts in each row; returns its jobs rows, quoted. */
static char *make_version_1(const char *path)
{
	return make_older(
		path, "CREATE TABLE jobs_v1 AS SELECT * FROM jobs; DROP VIEW jobs;"
		      "DROP TABLE job_rows; DROP TABLE job_texts;"
		      "ALTER TABLE jobs_v1 RENAME TO jobs; CREATE INDEX jobs_run ON jobs(run_id);"
		      "PRAGMA user_version = 1");
}

Test(store, a_version_1_database_gets_its_jobs_moved_to_job_rows_on_open)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(dbpath, &f, 2, 2);
	char *v1 = make_version_1(dbpath);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs' "
				   "AND type = 'view'"),
		     1);
	cr_expect_str_eq(query_text(db, JOB_ROWS_QUOTED), v1, "the same rows, in their order");
	sqlite3_close(db);
	free(v1);
	fixture_free(&f);
}

/* Merges other_db(name) into the output database; its stats. */
static struct store_merge_stats merge_into_output(const char *name)
{
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store_merge_stats ms;
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_merge(st, other_db(name), &ms, &err), GP_OK, "%s", err.msg);
	store_close(st);
	return ms;
}

/* Runs sql on other_db(name) directly, as an older gpuplan would have left it. */
static void exec_on(const char *name, const char *sql)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(other_db(name), &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sql);
	sqlite3_close(db);
}

/* Turns the database at path back into schema version 2, where job_rows
 * was keyed by its columns run_id and job_id (WITHOUT ROWID) and the jobs
 * view walked it; returns its jobs rows, quoted. */
static char *make_version_2(const char *path)
{
	return make_older(
		path, "CREATE TABLE v2 (run_id INTEGER NOT NULL, job_id INTEGER NOT NULL,"
		      " workload_id INTEGER NOT NULL, submit_s REAL, start_s REAL, end_s REAL,"
		      " queue_s REAL, gpus INTEGER, node_id INTEGER, status_id INTEGER,"
		      " deadline_s REAL, deadline_met INTEGER, verified INTEGER, cost REAL,"
		      " reason_id INTEGER, trace_queue_s REAL, preemptions INTEGER,"
		      " oom_kills INTEGER, flavor_id INTEGER, PRIMARY KEY (run_id, job_id))"
		      " WITHOUT ROWID;"
		      "INSERT INTO v2 SELECT run_id, job_id, workload_id, submit_s, start_s, end_s,"
		      " queue_s, gpus, node_id, status_id, deadline_s, deadline_met, verified,"
		      " cost, reason_id, trace_queue_s, preemptions, oom_kills, flavor_id"
		      " FROM job_rows;"
		      "DROP VIEW jobs; DROP TABLE job_rows; ALTER TABLE v2 RENAME TO job_rows;"
		      "CREATE VIEW jobs AS SELECT j.run_id AS run_id, j.job_id AS job_id,"
		      " w.text AS workload, j.submit_s AS submit_s, j.start_s AS start_s,"
		      " j.end_s AS end_s, j.queue_s AS queue_s, j.gpus AS gpus, n.text AS node,"
		      " s.text AS status, j.deadline_s AS deadline_s,"
		      " j.deadline_met AS deadline_met, j.verified AS verified, j.cost AS cost,"
		      " r.text AS reason, j.trace_queue_s AS trace_queue_s,"
		      " j.preemptions AS preemptions, j.oom_kills AS oom_kills, f.text AS flavor,"
		      " o.namespace AS namespace, o.queue AS queue, o.team AS team"
		      " FROM job_rows j"
		      " LEFT JOIN job_texts w ON w.run_id = j.run_id AND w.text_id = j.workload_id"
		      " LEFT JOIN job_texts n ON n.run_id = j.run_id AND n.text_id = j.node_id"
		      " LEFT JOIN job_texts s ON s.run_id = j.run_id AND s.text_id = j.status_id"
		      " LEFT JOIN job_texts r ON r.run_id = j.run_id AND r.text_id = j.reason_id"
		      " LEFT JOIN job_texts f ON f.run_id = j.run_id AND f.text_id = j.flavor_id"
		      " LEFT JOIN scopes o ON o.run_id = j.run_id AND o.scope = w.text"
		      " AND o.kind = 'workload';"
		      "PRAGMA user_version = 2");
}

/* A job row whose key is one past the largest goes in without one, for
 * SQLite to append (store_jobs.c): the keys are the run's and the job's all
 * the same, after a gap in the job ids too, and for each run. */
Test(store, job_rows_appended_without_a_key_get_their_own)
{
	struct fixture f;
	fixture_init(&f);
	f.r.jobs[1].job_id = 5;
	f.r.jobs[2].job_id = 6;
	write_runs(dbpath, &f, 2, 2);
	sqlite3 *db = reader();
	cr_expect_str_eq(query_text(db, "SELECT group_concat(run_id || ':' || job_id, ' ') "
					"FROM jobs"),
			 "1:0 1:5 1:6 2:0 2:5 2:6");
	cr_expect_str_eq(query_text(db, "SELECT group_concat(printf('%x', job_key), ' ') "
					"FROM job_rows"),
			 "100000000 100000005 100000006 200000000 200000005 200000006");
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, a_version_2_database_gets_its_job_rows_keyed_on_open)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(dbpath, &f, 3, 2);
	char *v2 = make_version_2(dbpath);
	/* a user's own views on jobs and job_rows and index on job_rows */
	sqlite3 *own;
	cr_assert_eq(sqlite3_open(dbpath, &own), SQLITE_OK);
	cr_assert_eq(
		sqlite3_exec(
			own,
			"CREATE VIEW my_runs AS SELECT run_id, count(*) AS n FROM jobs "
			"GROUP BY run_id; CREATE VIEW my_costs AS SELECT run_id, job_id, "
			"cost FROM job_rows; CREATE INDEX my_workloads ON job_rows(workload_id)",
			NULL, NULL, NULL),
		SQLITE_OK, "%s", sqlite3_errmsg(own));
	sqlite3_close(own);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM my_runs"), 3, "a view on jobs kept");
	cr_expect_eq(query_int(db, "SELECT count(*) FROM my_costs WHERE run_id = 2"), 3,
		     "a view on job_rows reads the new table");
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = "
				   "'my_workloads' AND tbl_name = 'job_rows'"),
		     1, "an index on job_rows made again");
	cr_expect_eq(query_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM pragma_table_info('job_rows') "
				   "WHERE name = 'job_key'"),
		     1);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sqlite_master "
				   "WHERE name = 'job_rows_unkeyed'"),
		     0);
	cr_expect_str_eq(query_text(db, JOB_ROWS_QUOTED), v2, "the same rows, in their order");
	sqlite3_close(db);
	free(v2);
	fixture_free(&f);
}

Test(store, merge_reads_the_job_rows_of_a_version_2_input)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(dbpath, &f, 1, 1);
	write_runs(other_db("in.db"), &f, 3, 1);
	char *v2 = make_version_2(other_db("in.db"));
	cr_expect_eq(merge_into_output("in.db").copied, 2);
	sqlite3 *db = reader();
	char *merged = gp_xstrdup(query_text(db, JOB_ROWS_QUOTED));
	sqlite3_close(db);
	/* the output's run 1 is the input's run 1; its runs 2 and 3 are the
	 * input's, renumbered alike: the same rows */
	cr_expect_str_eq(merged, v2);
	free(merged);
	free(v2);
	fixture_free(&f);
}

Test(store, merge_reads_the_jobs_of_a_version_1_input)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(other_db("in.db"), &f, 2, 2);
	char *v1 = make_version_1(other_db("in.db"));
	cr_expect_eq(merge_into_output("in.db").copied, 2);
	sqlite3 *db = reader();
	cr_expect_str_eq(query_text(db, JOB_ROWS_QUOTED), v1);
	sqlite3_close(db);
	free(v1);
	fixture_free(&f);
}

Test(store, merge_copies_every_row_with_new_run_ids_and_skips_what_it_holds)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(dbpath, &f, 1, 1);            /* the output holds a plain run already */
	write_runs(other_db("in.db"), &f, 3, 1); /* that run and two sweep points */
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store_merge_stats ms;
	cr_assert_eq(store_open(dbpath, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_merge(st, other_db("in.db"), &ms, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(ms.copied, 2, "the plain run is the one already held");
	cr_expect_eq(ms.duplicates, 1);
	cr_assert_eq(store_merge(st, other_db("in.db"), &ms, &err), GP_OK, "%s", err.msg);
	cr_expect_eq(ms.copied, 0, "merging twice adds nothing");
	cr_expect_eq(ms.duplicates, 3);
	store_close(st);
	expect_only_runs(3);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM sweep_points WHERE run_id IN (2, 3)"), 2);
	cr_expect_eq(query_int(db, "SELECT run_id FROM sweep_points WHERE point = 'p2'"), 3);
	cr_expect_eq(query_int(db, "SELECT count(*) FROM params WHERE run_id = 3"), 2);
	cr_expect_eq(
		query_int(db, "SELECT count(*) FROM metrics WHERE run_id = 3 AND value IS NULL"), 1,
		"NULL stays NULL");
	cr_expect_eq(query_int(db, "SELECT count(*) FROM timeseries WHERE run_id = 2"), 2);
	cr_expect_eq(query_int(db, "SELECT group_concat(job_id) = '0,1,2' FROM (SELECT job_id "
				   "FROM jobs WHERE run_id = 3)"),
		     1, "rows keep their order");
	cr_expect_eq(query_int(db, "SELECT count(*) FROM runs WHERE wall_seconds = 1.25"), 1);
	sqlite3_close(db);
	fixture_free(&f);
}

/* Columns that name other runs (*_run_id: searches' probes and answer,
 * advice's alternatives) are renumbered with run_id; before, they kept the
 * input's numbers and pointed at the output's own runs. */
Test(store, merge_renumbers_every_column_that_names_a_run)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(dbpath, &f, 2, 2);            /* the output's runs 1 and 2 */
	write_runs(other_db("in.db"), &f, 3, 0); /* three points: runs 1..3 there */
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(other_db("in.db"), &st, &err), GP_OK, "%s", err.msg);
	struct store_search row = {"k", "7", "x <= 1", 2, 1, 3};
	cr_assert_eq(store_write_search(st, &row, &err), GP_OK, "%s", err.msg);
	store_close(st);
	cr_expect_eq(merge_into_output("in.db").copied, 3);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM searches WHERE run_id = 4 AND "
				   "first_run_id = 3 AND last_run_id = 5"),
		     1, "in's runs 1..3 are the output's 3..5");
	sqlite3_close(db);
	fixture_free(&f);
}

Test(store, merge_reads_databases_written_before_sweep_points_existed)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(other_db("old.db"), &f, 2, 2);
	exec_on("old.db", "DROP TABLE sweep_points");
	cr_expect_eq(merge_into_output("old.db").copied, 2);
	expect_only_runs(2);
	fixture_free(&f);
}

/* A database written before jobs had preemptions and oom_kills: opening it
 * adds the columns (NULL in its rows), and merge copies its runs. */
Test(store, databases_without_the_per_job_counts_open_and_merge)
{
	struct fixture f;
	fixture_init(&f);
	write_runs(other_db("old.db"), &f, 1, 1);
	free(make_version_1(other_db("old.db"))); /* jobs a table, as it then was */
	exec_on("old.db", "ALTER TABLE jobs DROP COLUMN preemptions; "
			  "ALTER TABLE jobs DROP COLUMN oom_kills");
	cr_expect_eq(merge_into_output("old.db").copied, 1);
	sqlite3 *db = reader();
	cr_expect_eq(query_int(db, "SELECT count(*) FROM jobs WHERE preemptions IS NULL"), 3,
		     "the old rows have no counts");
	sqlite3_close(db);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(other_db("old.db"), &st, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *old;
	cr_assert_eq(sqlite3_open(other_db("old.db"), &old), SQLITE_OK);
	cr_expect_eq(query_int(old, "SELECT count(*) FROM pragma_table_info('jobs') "
				    "WHERE name IN ('preemptions', 'oom_kills')"),
		     2);
	sqlite3_close(old);
	fixture_free(&f);
}

Test(store, merge_inputs_are_checked_before_anything_is_written)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_expect_eq(store_check_merge_input(other_db("missing.db"), dbpath, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "missing.db: error: cannot read"), "%s", err.msg);

	FILE *fp = fopen(other_db("text.db"), "w");
	fputs("plain text, not a database, long enough for SQLite to look at it ......\n", fp);
	fclose(fp);
	cr_expect_eq(store_check_merge_input(other_db("text.db"), dbpath, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "not a SQLite database"), "%s", err.msg);

	sqlite3 *db;
	cr_assert_eq(sqlite3_open(other_db("empty.db"), &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	cr_expect_eq(store_check_merge_input(other_db("empty.db"), dbpath, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "no runs table"), "%s", err.msg);

	cr_assert_eq(sqlite3_open(other_db("new.db"), &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db,
				  "CREATE TABLE runs(run_id INTEGER PRIMARY KEY);"
				  "PRAGMA user_version = 99",
				  NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	cr_expect_eq(store_check_merge_input(other_db("new.db"), dbpath, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "newer"), "%s", err.msg);
	cr_expect_neq(access(dbpath, F_OK), 0, "checks write nothing");

	struct fixture f;
	fixture_init(&f);
	write_fixture(&f);
	cr_expect_eq(store_check_merge_input(dbpath, dbpath, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "output database itself"), "%s", err.msg);
	cr_expect_eq(store_check_merge_input(dbpath, NULL, &err), GP_OK, "%s", err.msg);
	fixture_free(&f);
}

/* A write-ahead log that two connections closing at once each left to the
 * other (a sweep's workers, on a loaded machine: 1 sweep in 25 left 580 KB)
 * made the next reader's close rewrite the file.  The sweep's parent folds
 * it in with store_checkpoint once its workers are done; here a connection
 * told not to checkpoint on close stands for the race. */
Test(store, a_checkpoint_folds_a_log_left_behind_into_the_file)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db,
				  "PRAGMA journal_mode=WAL; CREATE TABLE t(x); "
				  "INSERT INTO t VALUES (1)",
				  NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	char wal[160];
	snprintf(wal, sizeof wal, "%s-wal", dbpath);
	cr_assert_eq(access(wal, F_OK), 0, "the log is left behind");
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_checkpoint(dbpath, &err), GP_OK, "%s", err.msg);
	cr_expect_neq(access(wal, F_OK), 0, "the log is folded in and gone");
	/* the row is in the file itself: read without any log */
	cr_assert_eq(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &st, NULL), SQLITE_OK);
	cr_expect_eq(sqlite3_step(st), SQLITE_ROW);
	cr_expect_eq(sqlite3_column_int(st, 0), 1);
	sqlite3_finalize(st);
	sqlite3_close(db);
	/* a file that is not there is left so */
	char none[160];
	snprintf(none, sizeof none, "%s/none.db", tmpdir);
	cr_expect_eq(store_checkpoint(none, &err), GP_OK);
	cr_expect_neq(access(none, F_OK), 0);
}
