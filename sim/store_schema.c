/*
 * store_schema.c - the results database's schema (docs/results.md) and the
 * migrations that bring a database made by an older gpuplan up to it: columns
 * added since a table shipped, jobs as a table before job_texts, the jobs
 * view before its team column; the schema version and application id.
 */
#include "gpuplan/store.h"

#include <stdio.h>

#include "store_int.h"

/* The columns allocations and node_allocations share (OpenCost's allocation,
 * by workload and by node). */
#define ALLOCATION_COLUMNS                                     \
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n" \
	"  name TEXT NOT NULL,\n"                              \
	"  start_s REAL,\n"                                    \
	"  end_s REAL,\n"                                      \
	"  gpu_hours REAL,\n"                                  \
	"  gpu_cost REAL,\n"                                   \
	"  cpu_core_hours REAL,\n"                             \
	"  cpu_cost REAL,\n"                                   \
	"  ram_byte_hours REAL,\n"                             \
	"  ram_cost REAL,\n"                                   \
	"  total_cost REAL,\n"                                 \
	"  gpu_efficiency REAL,\n"                             \
	"  namespace TEXT,\n"                                  \
	"  queue TEXT,\n"                                      \
	"  team TEXT,\n"                                       \
	"  pool TEXT"

/* The schema of docs/results.md.  Names are the contract; the types,
 * NOT NULLs and indexes are ours.  Idempotent. */
static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS runs (\n"
	"  run_id INTEGER PRIMARY KEY,\n"
	"  name TEXT NOT NULL,\n"
	"  scenario_path TEXT,\n"
	"  scenario_sha256 TEXT,\n"
	"  seed INTEGER,\n"
	"  started_at TEXT,\n"
	"  wall_seconds REAL,\n"
	"  events INTEGER,\n"
	"  sim_seconds REAL,\n"
	"  status TEXT,\n"
	"  start TEXT,\n"
	"  step_s REAL,\n"
	"  currency TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS runs_identity ON runs(started_at, wall_seconds);\n"
	"CREATE TABLE IF NOT EXISTS params (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  key TEXT NOT NULL,\n"
	"  value TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS params_run ON params(run_id);\n"
	"CREATE TABLE IF NOT EXISTS metrics (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  scope TEXT NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  value REAL,\n"
	"  unit TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS metrics_run_scope_name ON metrics(run_id, scope, name);\n"
	/* jobs is a view: a run's job rows hold integers where the texts
	 * repeat (workload, node, status, last pending message), and each
	 * distinct text is stored once per run in job_texts.  A column added
	 * to jobs goes into job_rows and into the view (and, for databases
	 * made before it, into added_columns and the migration). */
	"CREATE TABLE IF NOT EXISTS job_texts (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  text_id INTEGER NOT NULL,\n"
	"  text TEXT NOT NULL,\n"
	"  PRIMARY KEY (run_id, text_id)\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS job_rows (\n"
	"  job_key INTEGER PRIMARY KEY,\n"
	"  workload_id INTEGER NOT NULL,\n"
	"  submit_s REAL,\n"
	"  start_s REAL,\n"
	"  end_s REAL,\n"
	"  queue_s REAL,\n"
	"  gpus INTEGER,\n"
	"  node_id INTEGER,\n"
	"  status_id INTEGER,\n"
	"  deadline_s REAL,\n"
	"  deadline_met INTEGER,\n"
	"  verified INTEGER,\n"
	"  cost REAL,\n"
	"  reason_id INTEGER,\n"
	"  trace_queue_s REAL,\n"
	"  preemptions INTEGER,\n"
	"  oom_kills INTEGER,\n"
	"  flavor_id INTEGER,\n"
	"  run_id INTEGER GENERATED ALWAYS AS (job_key >> 32) VIRTUAL,\n"
	"  job_id INTEGER GENERATED ALWAYS AS (job_key & 4294967295) VIRTUAL\n"
	");\n"
	/* job_rows is keyed by run_id << 32 | job_id, the order rows are
	 * written in, as its rowid: SQLite appends such rows to the table's
	 * last page, where a key of two columns (WITHOUT ROWID) rebalanced
	 * the last leaf every dozen rows (docs/benchmarks.md, twelfth round).
	 * run_id and job_id are computed from the key when read.  The view
	 * walks runs and, for each, its range of keys, so that a run_id
	 * filter on jobs is a search of the key, not a scan (CROSS JOIN keeps
	 * that order of the loops); it gives the rows in key order. */
	"CREATE VIEW IF NOT EXISTS jobs AS SELECT u.run_id AS run_id, j.job_id AS job_id,\n"
	"  w.text AS workload, j.submit_s AS submit_s, j.start_s AS start_s, j.end_s AS end_s,\n"
	"  j.queue_s AS queue_s, j.gpus AS gpus, n.text AS node, s.text AS status,\n"
	"  j.deadline_s AS deadline_s, j.deadline_met AS deadline_met, j.verified AS verified,\n"
	"  j.cost AS cost, r.text AS reason, j.trace_queue_s AS trace_queue_s,\n"
	"  j.preemptions AS preemptions, j.oom_kills AS oom_kills, f.text AS flavor,\n"
	"  o.namespace AS namespace, o.queue AS queue, o.team AS team\n"
	"FROM runs u CROSS JOIN job_rows j\n"
	"  ON j.job_key BETWEEN u.run_id << 32 AND (u.run_id << 32) | 4294967295\n"
	"LEFT JOIN job_texts w ON w.run_id = u.run_id AND w.text_id = j.workload_id\n"
	"LEFT JOIN job_texts n ON n.run_id = u.run_id AND n.text_id = j.node_id\n"
	"LEFT JOIN job_texts s ON s.run_id = u.run_id AND s.text_id = j.status_id\n"
	"LEFT JOIN job_texts r ON r.run_id = u.run_id AND r.text_id = j.reason_id\n"
	"LEFT JOIN job_texts f ON f.run_id = u.run_id AND f.text_id = j.flavor_id\n"
	"LEFT JOIN scopes o ON o.run_id = u.run_id AND o.scope = w.text AND o.kind = 'workload';\n"
	"CREATE TABLE IF NOT EXISTS requests (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  workload TEXT NOT NULL,\n"
	"  request_id INTEGER NOT NULL,\n"
	"  arrival_s REAL,\n"
	"  ttft_s REAL,\n"
	"  tpot_s REAL,\n"
	"  e2e_s REAL,\n"
	"  prompt_tokens INTEGER,\n"
	"  output_tokens INTEGER,\n"
	"  slo_met INTEGER,\n"
	"  verified INTEGER\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS requests_run ON requests(run_id);\n"
	"CREATE TABLE IF NOT EXISTS timeseries (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  t_s REAL NOT NULL,\n"
	"  scope TEXT NOT NULL,\n"
	"  gpus_capacity REAL,\n"
	"  gpus_allocated REAL,\n"
	"  gpus_demand REAL,\n"
	"  engine_active REAL,\n"
	"  sm_active REAL,\n"
	"  vram_used_gib REAL,\n"
	"  pending REAL,\n"
	"  running REAL,\n"
	"  requests_running REAL,\n"
	"  requests_waiting REAL,\n"
	"  kv_cache_usage REAL,\n"
	"  preemptions REAL,\n"
	"  gpus_provisioning REAL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS timeseries_run ON timeseries(run_id, scope, t_s);\n"
	"CREATE TABLE IF NOT EXISTS pending_reasons (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  scope TEXT NOT NULL,\n"
	"  reason TEXT NOT NULL,\n"
	"  pending_seconds REAL,\n"
	"  pods INTEGER\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS pending_reasons_run ON pending_reasons(run_id);\n"
	"CREATE TABLE IF NOT EXISTS allocations (\n" ALLOCATION_COLUMNS "\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS allocations_run ON allocations(run_id);\n"
	"CREATE TABLE IF NOT EXISTS node_allocations (\n" ALLOCATION_COLUMNS ",\n"
	"  node TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS node_allocations_run ON node_allocations(run_id);\n"
	"CREATE TABLE IF NOT EXISTS findings (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  rank INTEGER NOT NULL,\n"
	"  step TEXT NOT NULL,\n"
	"  finding TEXT NOT NULL,\n"
	"  evidence TEXT,\n"
	"  kind TEXT,\n"
	"  scope TEXT,\n"
	"  fix TEXT,\n"
	"  key TEXT,\n"
	"  value TEXT,\n"
	"  relaxed TEXT,\n"
	"  pod_hours REAL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS findings_run ON findings(run_id);\n"
	"CREATE TABLE IF NOT EXISTS constraints (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  kind TEXT NOT NULL,\n"
	"  key TEXT NOT NULL,\n"
	"  workload TEXT,\n"
	"  pool TEXT,\n"
	"  queue TEXT,\n"
	"  pod_seconds REAL NOT NULL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS constraints_run ON constraints(run_id);\n"
	"CREATE TABLE IF NOT EXISTS advice (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  rank INTEGER NOT NULL,\n"
	"  alternative TEXT NOT NULL,\n"
	"  overrides TEXT,\n"
	"  alternative_run_id INTEGER,\n"
	"  meets INTEGER NOT NULL,\n"
	"  peak_demand_gpus REAL,\n"
	"  queue_time_p95_s REAL,\n"
	"  deadline_met_pct REAL,\n"
	"  slo_attainment_pct REAL,\n"
	"  cost_total REAL,\n"
	"  cost_per_verified_result REAL,\n"
	"  forced INTEGER NOT NULL DEFAULT 0,\n"
	"  untrusted TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS advice_run ON advice(run_id);\n"
	"CREATE TABLE IF NOT EXISTS sweep_points (\n"
	"  sweep TEXT NOT NULL,\n"
	"  point TEXT NOT NULL,\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  UNIQUE (sweep, point)\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS sweep_points_run ON sweep_points(run_id);\n"
	"CREATE TABLE IF NOT EXISTS inflation_curve (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  arrived_pct INTEGER NOT NULL,\n"
	"  allocated_pct REAL,\n"
	"  fragmentation_pct REAL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS inflation_curve_run ON inflation_curve(run_id);\n"
	"CREATE TABLE IF NOT EXISTS scopes (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  scope TEXT NOT NULL,\n"
	"  kind TEXT NOT NULL,\n"
	"  workload_kind TEXT,\n"
	"  model TEXT,\n"
	"  gpu TEXT,\n"
	"  namespace TEXT,\n"
	"  queue TEXT,\n"
	"  labels TEXT,\n"
	"  team TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS scopes_run ON scopes(run_id);\n"
	"CREATE INDEX IF NOT EXISTS scopes_run_scope ON scopes(run_id, scope);\n"
	"CREATE TABLE IF NOT EXISTS backtest (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  scope TEXT NOT NULL,\n"
	"  metric TEXT NOT NULL,\n"
	"  observed REAL,\n"
	"  simulated REAL,\n"
	"  error REAL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS backtest_run ON backtest(run_id);\n"
	"CREATE TABLE IF NOT EXISTS searches (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  key TEXT NOT NULL,\n"
	"  answer TEXT NOT NULL,\n"
	"  condition TEXT NOT NULL,\n"
	"  first_run_id INTEGER NOT NULL,\n"
	"  last_run_id INTEGER NOT NULL\n"
	");\n";

/* Reads PRAGMA user_version into *version. */
static int read_user_version(struct store *st, int *version, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading the schema version");
	int rc = GP_OK;
	if (sqlite3_step(s) == SQLITE_ROW)
		*version = sqlite3_column_int(s, 0);
	else
		rc = sti_db_error(st, err, "reading the schema version");
	sqlite3_finalize(s);
	return rc;
}

/* Columns added after a table first shipped: a database made before them
 * gets them (NULL in its older rows) so that its runs and new ones share
 * one schema. */
static const struct {
	const char *table, *column, *type;
} added_columns[] = {
	{"jobs", "reason", "TEXT"},           /* last pending reason, kube-scheduler's message */
	{"jobs", "trace_queue_s", "REAL"},    /* the trace's own wait (openb), beside queue_s */
	{"jobs", "preemptions", "INTEGER"},   /* times the job was stopped and requeued */
	{"jobs", "oom_kills", "INTEGER"},     /* times a pod of the job was OOM-killed */
	{"job_rows", "flavor_id", "INTEGER"}, /* its Kueue flavor, a job_texts id */
	{"runs", "step_s", "REAL"},    /* the step used (chosen when output.step is absent) */
	{"runs", "currency", "TEXT"},  /* the prices' ISO 4217 code (price.currency) */
	{"findings", "kind", "TEXT"},  /* enum finding_kind's name */
	{"findings", "scope", "TEXT"}, /* the pool or workload it is about */
	{"findings", "fix", "TEXT"},   /* the --set overrides of its first alternative */
	/* the binding constraint a finding names (relax.h) */
	{"findings", "key", "TEXT"},
	{"findings", "value", "TEXT"},
	{"findings", "relaxed", "TEXT"},
	{"findings", "pod_hours", "REAL"},
	/* inference servers, as vLLM's scheduler and cache gauges */
	{"timeseries", "requests_running", "REAL"},
	{"timeseries", "requests_waiting", "REAL"},
	{"timeseries", "kv_cache_usage", "REAL"},
	{"timeseries", "preemptions", "REAL"},
	/* nodes being provisioned by the Cluster Autoscaler, in GPUs */
	{"timeseries", "gpus_provisioning", "REAL"},
	/* advise on a model not trusted (advise.h, "Trust") */
	{"advice", "forced", "INTEGER NOT NULL DEFAULT 0"},
	{"advice", "untrusted", "TEXT"},
	/* showback: a workload's namespace, queue, team label and labels; its pool */
	{"allocations", "namespace", "TEXT"},
	{"allocations", "queue", "TEXT"},
	{"allocations", "team", "TEXT"},
	{"allocations", "pool", "TEXT"},
	{"scopes", "namespace", "TEXT"},
	{"scopes", "queue", "TEXT"},
	{"scopes", "labels", "TEXT"},
	{"scopes", "team", "TEXT"}, /* its team label, for the jobs view */
};

static int add_missing_columns(struct store *st, struct gp_err *err)
{
	for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'",
			 added_columns[i].table, added_columns[i].column);
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
			return sti_db_error(st, err, "reading the schema");
		int step = sqlite3_step(s);
		sqlite3_finalize(s);
		if (step == SQLITE_ROW)
			continue;
		if (step != SQLITE_DONE)
			return sti_db_error(st, err, "reading the schema");
		snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", added_columns[i].table,
			 added_columns[i].column, added_columns[i].type);
		if (sti_exec(st, sql, "adding a column", err))
			return GP_ERUNTIME;
	}
	return GP_OK;
}

/* Copies the rows of the view temp.old_jobs (k1, k2, run_id and the
 * columns jobs had as a table, before job_texts) into job_texts and
 * job_rows, in (k1, k2) order; each run's distinct texts are numbered in
 * text order.  The caller makes the view and drops it. */
static const char copy_old_jobs_sql[] =
	"CREATE INDEX job_texts_copying ON job_texts(run_id, text);\n"
	"INSERT INTO job_texts (run_id, text_id, text)\n"
	"  SELECT run_id, row_number() OVER (PARTITION BY run_id ORDER BY text) - 1, text FROM\n"
	"  (SELECT run_id, workload AS text FROM temp.old_jobs WHERE workload IS NOT NULL\n"
	"   UNION SELECT run_id, node FROM temp.old_jobs WHERE node IS NOT NULL\n"
	"   UNION SELECT run_id, status FROM temp.old_jobs WHERE status IS NOT NULL\n"
	"   UNION SELECT run_id, reason FROM temp.old_jobs WHERE reason IS NOT NULL);\n"
	"INSERT INTO job_rows (job_key, workload_id, submit_s, start_s, end_s, queue_s,\n"
	"  gpus, node_id, status_id, deadline_s, deadline_met, verified, cost, reason_id,\n"
	"  trace_queue_s, preemptions, oom_kills)\n"
	"  SELECT j.run_id << 32 | j.job_id,\n"
	"  (SELECT text_id FROM job_texts t WHERE t.run_id = j.run_id AND t.text = j.workload),\n"
	"  j.submit_s, j.start_s, j.end_s, j.queue_s, j.gpus,\n"
	"  (SELECT text_id FROM job_texts t WHERE t.run_id = j.run_id AND t.text = j.node),\n"
	"  (SELECT text_id FROM job_texts t WHERE t.run_id = j.run_id AND t.text = j.status),\n"
	"  j.deadline_s, j.deadline_met, j.verified, j.cost,\n"
	"  (SELECT text_id FROM job_texts t WHERE t.run_id = j.run_id AND t.text = j.reason),\n"
	"  j.trace_queue_s, j.preemptions, j.oom_kills FROM temp.old_jobs j ORDER BY j.k1, j.k2;\n"
	"DROP INDEX job_texts_copying;\n";

int sti_copy_old_jobs(struct store *st, struct gp_err *err)
{
	int rc = sti_exec(st, copy_old_jobs_sql, "copying job rows to job_rows", err);
	sqlite3_exec(st->db, "DROP VIEW IF EXISTS temp.old_jobs", NULL, NULL, NULL);
	return rc;
}

/* A database made before job_texts has jobs as a table: its rows move to
 * job_rows and job_texts, and jobs becomes the view.  Runs under
 * sti_ensure_schema's lock, after add_missing_columns gave jobs every column. */
static int migrate_jobs(struct store *st, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT 1 FROM main.sqlite_master WHERE type = 'table' "
			       "AND name = 'jobs'",
			       -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "reading the schema");
	int step = sqlite3_step(s);
	sqlite3_finalize(s);
	if (step == SQLITE_DONE)
		return GP_OK;
	if (step != SQLITE_ROW)
		return sti_db_error(st, err, "reading the schema");
	if (sti_exec(st,
		     "CREATE TEMP VIEW old_jobs AS SELECT 0 AS k1, j.rowid AS k2, j.* "
		     "FROM main.jobs j",
		     "reading the jobs table", err) ||
	    sti_copy_old_jobs(st, err) || sti_exec(st, "DROP TABLE main.jobs", "moving jobs", err))
		return GP_ERUNTIME;
	return sti_exec(st, schema_sql, "creating the jobs view", err);
}

/* job_rows made before its key (schema version 2: WITHOUT ROWID, keyed by
 * the columns run_id and job_id) is made again keyed, its rows copied in
 * their order; the jobs view goes with it and is made again.  The rename is
 * SQLite's legacy one, which leaves the views of the database as they are:
 * a view of your own on job_rows then reads the new table (its run_id and
 * job_id are still columns), and one on jobs is not checked while jobs is
 * away.  Indexes and triggers of your own on job_rows go with the old table
 * and are made again, from their SQL, on the new one.  Runs after
 * add_missing_columns gave the old table every column. */
static const char migrate_job_keys_sql[] =
	"PRAGMA legacy_alter_table = ON;\n"
	"DROP VIEW IF EXISTS jobs;\n"
	"ALTER TABLE job_rows RENAME TO job_rows_unkeyed;\n"
	"%s"
	"INSERT INTO job_rows (job_key, workload_id, submit_s, start_s, end_s, queue_s, gpus,\n"
	"  node_id, status_id, deadline_s, deadline_met, verified, cost, reason_id,\n"
	"  trace_queue_s, preemptions, oom_kills, flavor_id)\n"
	"  SELECT run_id << 32 | job_id, workload_id, submit_s, start_s, end_s, queue_s, gpus,\n"
	"  node_id, status_id, deadline_s, deadline_met, verified, cost, reason_id,\n"
	"  trace_queue_s, preemptions, oom_kills, flavor_id\n"
	"  FROM job_rows_unkeyed ORDER BY run_id, job_id;\n"
	"DROP TABLE job_rows_unkeyed;\n"
	"%s;\n";

static int migrate_job_keys(struct store *st, struct gp_err *err)
{
	int64_t keyed = 0;
	if (sti_query_int(st,
			  "SELECT count(*) FROM pragma_table_info('job_rows') "
			  "WHERE name = 'job_key'",
			  &keyed, "reading the schema", err))
		return GP_ERUNTIME;
	if (keyed)
		return GP_OK;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT group_concat(sql, ';' || char(10)) FROM sqlite_master WHERE "
			       "tbl_name = 'job_rows' AND type IN ('index', 'trigger') AND sql IS "
			       "NOT NULL",
			       -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_step(q) != SQLITE_ROW) {
		sqlite3_finalize(q);
		return sti_db_error(st, err, "reading job_rows' indexes and triggers");
	}
	const char *own = (const char *)sqlite3_column_text(q, 0);
	char *sql = sqlite3_mprintf(migrate_job_keys_sql, schema_sql, own ? own : "");
	sqlite3_finalize(q);
	int rc = sti_exec(st, sql, "keying job_rows", err);
	sqlite3_free(sql);
	sqlite3_exec(st->db, "PRAGMA legacy_alter_table = OFF", NULL, NULL, NULL);
	return rc;
}

/* A jobs view made before its newest column (team) or before job_rows had
 * its key is made again. */
static int refresh_jobs_view(struct store *st, struct gp_err *err)
{
	int64_t has = 0;
	if (sti_query_int(
		    st,
		    "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = 'jobs' "
		    "AND (sql NOT LIKE '%AS team%' OR sql NOT LIKE '%job_key%')",
		    &has, "reading the jobs view", err))
		return GP_ERUNTIME;
	if (!has)
		return GP_OK;
	if (sti_exec(st, "DROP VIEW jobs", "making the jobs view again", err))
		return GP_ERUNTIME;
	return sti_exec(st, schema_sql, "making the jobs view again", err);
}

/* Creates the schema if absent, under the write lock so that processes
 * opening a new database at the same time do not race.  Refuses a schema
 * newer than ours.  Writes only what is missing: setting a header pragma,
 * even to the value it has, commits a page and bumps the file's change
 * counter, and a command refused after opening (a sweep whose points are
 * there) must leave the database byte for byte as it was. */
int sti_ensure_schema(struct store *st, struct gp_err *err)
{
	if (sti_exec(st, "BEGIN IMMEDIATE", "creating the schema", err))
		return GP_ERUNTIME;
	int version = 0;
	int rc = read_user_version(st, &version, err);
	if (!rc && version > STORE_SCHEMA_VERSION)
		rc = sti_newer_schema(st, version, err);
	if (!rc)
		rc = sti_exec(st, schema_sql, "creating the schema", err);
	if (!rc)
		rc = add_missing_columns(st, err);
	if (!rc)
		rc = migrate_jobs(st, err);
	if (!rc)
		rc = migrate_job_keys(st, err);
	if (!rc)
		rc = refresh_jobs_view(st, err);
	if (!rc && version < STORE_SCHEMA_VERSION) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
		rc = sti_exec(st, sql, "setting the schema version", err);
	}
	int64_t app_id = 0;
	if (!rc)
		rc = sti_query_int(st, "PRAGMA application_id", &app_id,
				   "reading the application id", err);
	if (!rc && app_id != STORE_APPLICATION_ID) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA application_id = %d", STORE_APPLICATION_ID);
		rc = sti_exec(st, sql, "setting the application id", err);
	}
	if (!rc)
		rc = sti_exec(st, "COMMIT", "creating the schema", err);
	if (rc)
		sti_rollback(st);
	return rc;
}
