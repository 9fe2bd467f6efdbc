/*
 * store.c - the results database (see store.h and DESIGN.md section 6).
 *
 * One connection per struct store.  The database runs in WAL mode with
 * synchronous=NORMAL (a power cut may lose the last committed run, never
 * corrupt the file) and a busy timeout, so that sweep workers in several
 * processes append to one file: each run is one BEGIN IMMEDIATE transaction,
 * which takes the write lock up front instead of failing at its first insert.
 *
 * Rows go in through one prepared statement per table that inserts 64 rows
 * at a time (see insert_rows), reset and rebound for each batch: a million
 * job rows take about 2.5 s on a 2-core machine where a bare one-row-per-
 * statement insert of the same rows takes 4.5 s.  Strings are bound
 * SQLITE_STATIC: they belong to the scenario and the results, which outlive
 * the statements (finalized before store_write_run returns).
 */
#include "gpuplan/store.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STORE_BUSY_TIMEOUT_MS 60000
#define STORE_RETRY_MS 10

struct store {
	sqlite3 *db;
	char *path;
};

/* The schema of DESIGN.md section 6.  Names are the contract; the types,
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
	"  status TEXT\n"
	");\n"
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
	"CREATE TABLE IF NOT EXISTS jobs (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  job_id INTEGER NOT NULL,\n"
	"  workload TEXT NOT NULL,\n"
	"  submit_s REAL,\n"
	"  start_s REAL,\n"
	"  end_s REAL,\n"
	"  queue_s REAL,\n"
	"  gpus INTEGER,\n"
	"  node TEXT,\n"
	"  status TEXT,\n"
	"  deadline_s REAL,\n"
	"  deadline_met INTEGER,\n"
	"  verified INTEGER,\n"
	"  cost REAL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS jobs_run ON jobs(run_id);\n"
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
	"  running REAL\n"
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
	"CREATE TABLE IF NOT EXISTS allocations (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  name TEXT NOT NULL,\n"
	"  start_s REAL,\n"
	"  end_s REAL,\n"
	"  gpu_hours REAL,\n"
	"  gpu_cost REAL,\n"
	"  cpu_core_hours REAL,\n"
	"  cpu_cost REAL,\n"
	"  ram_byte_hours REAL,\n"
	"  ram_cost REAL,\n"
	"  total_cost REAL,\n"
	"  gpu_efficiency REAL\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS allocations_run ON allocations(run_id);\n"
	"CREATE TABLE IF NOT EXISTS findings (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id),\n"
	"  rank INTEGER NOT NULL,\n"
	"  step TEXT NOT NULL,\n"
	"  finding TEXT NOT NULL,\n"
	"  evidence TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS findings_run ON findings(run_id);\n";

/* Fills err with "PATH: WHAT: SQLITE MESSAGE" and returns GP_ERUNTIME.  Call
 * it before anything else touches the connection (ROLLBACK resets errmsg). */
static int db_error(struct store *st, struct gp_err *err, const char *what)
{
	return gp_errorf(err, GP_ERUNTIME, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

/* Runs SQL that returns no rows we need (pragmas, BEGIN, COMMIT, DDL). */
static int exec(struct store *st, const char *sql, const char *what, struct gp_err *err)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(st, err, what);
	return GP_OK;
}

/* Undoes the open transaction, if SQLite has not already done so (it does
 * by itself after some errors, such as a full disk). */
static void rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Creates the folders above the file at path, like mkdir -p on its dirname.
 * A folder that already exists is fine. */
static int make_parents(const char *path, struct gp_err *err)
{
	char *dir = gp_xstrdup(path);
	char *slash = strrchr(dir, '/');
	int rc = GP_OK;
	if (slash && slash != dir) {
		*slash = '\0';
		for (char *p = dir + 1;; p++) {
			if (*p != '/' && *p != '\0')
				continue;
			char c = *p;
			*p = '\0';
			if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
				rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot create folder %s: %s", path,
					       dir, strerror(errno));
				break;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	free(dir);
	return rc;
}

/* Reads PRAGMA user_version into *version. */
static int read_user_version(struct store *st, int *version, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "reading the schema version");
	int rc = GP_OK;
	if (sqlite3_step(s) == SQLITE_ROW)
		*version = sqlite3_column_int(s, 0);
	else
		rc = db_error(st, err, "reading the schema version");
	sqlite3_finalize(s);
	return rc;
}

/* Creates the schema if absent, under the write lock so that processes
 * opening a new database at the same time do not race.  Refuses a schema
 * newer than ours. */
static int ensure_schema(struct store *st, struct gp_err *err)
{
	if (exec(st, "BEGIN IMMEDIATE", "creating the schema", err))
		return GP_ERUNTIME;
	int version = 0;
	int rc = read_user_version(st, &version, err);
	if (!rc && version > STORE_SCHEMA_VERSION)
		rc = gp_errorf(err, GP_ERUNTIME,
			       "%s: results schema version %d is newer than this gpuplan's (%d); "
			       "use a newer gpuplan or another --db",
			       st->path, version, STORE_SCHEMA_VERSION);
	if (!rc)
		rc = exec(st, schema_sql, "creating the schema", err);
	if (!rc && version < STORE_SCHEMA_VERSION) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
		rc = exec(st, sql, "setting the schema version", err);
	}
	if (!rc)
		rc = exec(st, "COMMIT", "creating the schema", err);
	if (rc)
		rollback(st);
	return rc;
}

/* Puts the database in WAL mode.  The mode is stored in the file, so
 * normally only the process that creates the database switches it.  Reading
 * the schema first makes SQLite look at the file: a file that is not a
 * database fails here, and a database already in WAL mode is recognized, so
 * setting WAL again is a no-op that needs no lock.  Two processes creating
 * one database at once can still collide on the switch, which takes an
 * exclusive lock without calling the busy handler: retry while busy. */
static int set_wal(struct store *st, struct gp_err *err)
{
	for (int waited = 0;; waited += STORE_RETRY_MS) {
		int rc = sqlite3_exec(st->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		if (rc == SQLITE_NOTADB)
			return gp_errorf(err, GP_ERUNTIME,
					 "%s: not a SQLite database (%s); choose another --db path",
					 st->path, sqlite3_errmsg(st->db));
		if (rc != SQLITE_OK)
			return db_error(st, err, "reading the database");
		rc = sqlite3_exec(st->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return GP_OK;
		if (rc != SQLITE_BUSY || waited >= STORE_BUSY_TIMEOUT_MS)
			return db_error(st, err, "setting WAL mode");
		sqlite3_sleep(STORE_RETRY_MS);
	}
}

/* Sets the connection up for several writers: busy timeout, WAL, NORMAL
 * sync (a power cut may lose the last run, never corrupt the file). */
static int configure(struct store *st, struct gp_err *err)
{
	sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
	if (set_wal(st, err))
		return GP_ERUNTIME;
	return exec(st, "PRAGMA synchronous=NORMAL", "setting synchronous mode", err);
}

int store_open(const char *path, struct store **out, struct gp_err *err)
{
	assert(path && out && err);
	*out = NULL;
	if (make_parents(path, err))
		return GP_ERUNTIME;
	struct store *st = gp_xcalloc(1, sizeof *st);
	st->path = gp_xstrdup(path);
	int rc;
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		if (st->db)
			rc = db_error(st, err, "cannot open database");
		else
			rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot open database: out of memory",
				       path);
	} else {
		rc = configure(st, err);
		if (!rc)
			rc = ensure_schema(st, err);
	}
	if (rc) {
		store_close(st);
		return rc;
	}
	*out = st;
	return GP_OK;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	sqlite3_close(st->db); /* statements are always finalized before we return */
	free(st->path);
	free(st);
}

/* Binds text, or NULL for a NULL pointer. */
static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* Binds a real, or NULL for NAN (a metric that does not apply). */
static void bind_real(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

/* Binds a time in seconds, or NULL for SIM_NEVER. */
static void bind_time(sqlite3_stmt *s, int i, sim_time t)
{
	if (t == SIM_NEVER)
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, sim_seconds(t));
}

/* Fills err with "PATH: writing TABLE: SQLITE MESSAGE". */
static int write_error(struct store *st, const char *table, struct gp_err *err)
{
	char what[64];
	snprintf(what, sizeof what, "writing %s", table);
	return db_error(st, err, what);
}

/* Runs a bound statement that returns no rows and resets it (bindings stay). */
static int step_reset(struct store *st, sqlite3_stmt *s, const char *table, struct gp_err *err)
{
	int rc = sqlite3_step(s) == SQLITE_DONE ? GP_OK : write_error(st, table, err);
	sqlite3_reset(s);
	return rc;
}

/* Rows per INSERT statement.  Many rows per statement keep the cursors open
 * from one row to the next, so appending to the run_id indexes does not
 * search them from the root for every row: about twice as fast as one row
 * per statement.  Kept under SQLite's oldest limit of 999 parameters. */
#define STORE_BATCH_ROWS 64
#define STORE_MAX_PARAMS 999

/* Binds row i of a table's rows into statement s, its first column (after
 * run_id) at parameter p.  Returns GP_OK, or an error filled in err. */
typedef int (*bind_row_fn)(sqlite3_stmt *s, int p, size_t i, const void *ctx,
			   struct gp_err *err);

/* One table's rows: "table", "run_id, col, ..." and the binder of the other
 * ncols - 1 columns. */
struct rows {
	const char *table;
	const char *columns;
	int ncols;
	size_t n;
	bind_row_fn bind;
	const void *ctx;
};

/* Prepares "INSERT INTO table (columns) VALUES (?,..),(?,..)" for k rows. */
static int prepare_insert(struct store *st, const struct rows *t, int k, sqlite3_stmt **s,
			  struct gp_err *err)
{
	size_t row = 2 * (size_t)t->ncols + 2;  /* "(?,?)," */
	size_t len = strlen(t->table) + strlen(t->columns) + 32 + (size_t)k * row;
	char *sql = gp_xmalloc(len);
	char *p = sql + snprintf(sql, len, "INSERT INTO %s (%s) VALUES ", t->table, t->columns);
	for (int r = 0; r < k; r++) {
		if (r)
			*p++ = ',';
		*p++ = '(';
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				*p++ = ',';
			*p++ = '?';
		}
		*p++ = ')';
	}
	*p = '\0';
	int rc = sqlite3_prepare_v2(st->db, sql, -1, s, NULL) == SQLITE_OK
			 ? GP_OK
			 : write_error(st, t->table, err);
	free(sql);
	return rc;
}

/* Inserts the rows in order, STORE_BATCH_ROWS per statement; the last
 * statement is prepared for the remainder. */
static int insert_rows(struct store *st, const struct rows *t, int64_t id, struct gp_err *err)
{
	int per = STORE_MAX_PARAMS / t->ncols;
	if (per > STORE_BATCH_ROWS)
		per = STORE_BATCH_ROWS;
	sqlite3_stmt *s = NULL;
	int have = 0; /* rows the prepared statement takes */
	int rc = GP_OK;
	for (size_t i = 0; i < t->n && !rc;) {
		size_t left = t->n - i;
		int k = left < (size_t)per ? (int)left : per;
		if (k != have) {
			sqlite3_finalize(s);
			s = NULL;
			have = 0;
			if ((rc = prepare_insert(st, t, k, &s, err)))
				break;
			have = k;
		}
		for (int r = 0; r < k && !rc; r++, i++) {
			int p = r * t->ncols + 1;
			sqlite3_bind_int64(s, p, id);
			rc = t->bind(s, p + 1, i, t->ctx, err);
		}
		if (!rc)
			rc = step_reset(st, s, t->table, err);
	}
	sqlite3_finalize(s);
	return rc;
}

/* Writes the runs row and returns its id. */
static int write_run_row(struct store *st, const struct scenario *sc, const struct results *r,
			 int64_t *id, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO runs (name, scenario_path, scenario_sha256, seed, "
			       "started_at, wall_seconds, events, sim_seconds, status) "
			       "VALUES (?,?,?,?,?,?,?,?,?)",
			       -1, &s, NULL) != SQLITE_OK)
		return write_error(st, "runs", err);
	bind_text(s, 1, sc->name);
	bind_text(s, 2, sc->path);
	bind_text(s, 3, sc->sha256[0] ? sc->sha256 : NULL);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)sc->seed); /* seeds >= 2^63 read back negative */
	bind_text(s, 5, r->started_at[0] ? r->started_at : NULL);
	bind_real(s, 6, r->wall_seconds);
	sqlite3_bind_int64(s, 7, (sqlite3_int64)r->events);
	bind_time(s, 8, r->sim_end);
	bind_text(s, 9, r->status);
	int rc = step_reset(st, s, "runs", err);
	sqlite3_finalize(s);
	if (!rc)
		*id = sqlite3_last_insert_rowid(st->db);
	return rc;
}

/* Binds a --set / sweep override (ctx: the scenario). */
static int bind_param(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct scenario *sc = ctx;
	(void)err;
	bind_text(s, p, sc->params[i].key);
	bind_text(s, p + 1, sc->params[i].value);
	return GP_OK;
}

/* Binds a metric, NAN as NULL (ctx: the results). */
static int bind_metric(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct metric *m = &((const struct results *)ctx)->metrics[i];
	(void)err;
	bind_text(s, p, m->scope);
	bind_text(s, p + 1, m->name);
	bind_real(s, p + 2, m->value);
	bind_text(s, p + 3, m->unit);
	return GP_OK;
}

/* What a job row needs besides the record: names for its indexes. */
struct job_ctx {
	const struct scenario *sc;
	const struct results *r;
	const char *path;
};

/* Binds a job.  A workload or node index out of range is a bug upstream; it
 * fails the write (and so the whole run) instead of reading out of bounds. */
static int bind_job(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct job_ctx *c = ctx;
	const struct job_record *j = &c->r->jobs[i];
	if (j->workload < 0 || (size_t)j->workload >= c->sc->n_workloads ||
	    (j->node >= 0 && (size_t)j->node >= c->r->n_nodes))
		return gp_errorf(err, GP_ERUNTIME,
				 "%s: writing jobs: job %lld has workload %d of %zu and node %d of %zu",
				 c->path, (long long)j->job_id, (int)j->workload, c->sc->n_workloads,
				 (int)j->node, c->r->n_nodes);
	sqlite3_bind_int64(s, p, j->job_id);
	bind_text(s, p + 1, c->sc->workloads[j->workload].name);
	bind_time(s, p + 2, j->submit);
	bind_time(s, p + 3, j->start);
	bind_time(s, p + 4, j->end);
	bind_time(s, p + 5, j->start == SIM_NEVER ? SIM_NEVER : j->start - j->submit);
	sqlite3_bind_int(s, p + 6, j->gpus);
	bind_text(s, p + 7, j->node >= 0 ? c->r->node_names[j->node] : NULL);
	bind_text(s, p + 8, job_status_name((enum job_status)j->status));
	bind_time(s, p + 9, j->deadline);
	sqlite3_bind_int(s, p + 10, j->deadline_met ? 1 : 0);
	sqlite3_bind_int(s, p + 11, j->verified ? 1 : 0);
	bind_real(s, p + 12, j->cost);
	return GP_OK;
}

/* Binds a timeseries row (ctx: the results). */
static int bind_ts(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct ts_row *t = &((const struct results *)ctx)->ts[i];
	(void)err;
	bind_time(s, p, t->t);
	bind_text(s, p + 1, t->scope);
	bind_real(s, p + 2, t->gpus_capacity);
	bind_real(s, p + 3, t->gpus_allocated);
	bind_real(s, p + 4, t->gpus_demand);
	bind_real(s, p + 5, t->engine_active);
	bind_real(s, p + 6, t->sm_active);
	bind_real(s, p + 7, t->vram_used_gib);
	bind_real(s, p + 8, t->pending);
	bind_real(s, p + 9, t->running);
	return GP_OK;
}

/* Writes every row of run id: params, metrics, jobs, timeseries. */
static int write_rows(struct store *st, const struct scenario *sc, const struct results *r,
		      int64_t id, struct gp_err *err)
{
	struct job_ctx jc = {sc, r, st->path};
	const struct rows tables[] = {
		{"params", "run_id, key, value", 3, sc->n_params, bind_param, sc},
		{"metrics", "run_id, scope, name, value, unit", 5, r->n_metrics, bind_metric, r},
		{"jobs",
		 "run_id, job_id, workload, submit_s, start_s, end_s, queue_s, gpus, node, status, "
		 "deadline_s, deadline_met, verified, cost",
		 14, r->n_jobs, bind_job, &jc},
		{"timeseries",
		 "run_id, t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active, "
		 "sm_active, vram_used_gib, pending, running",
		 11, r->n_ts, bind_ts, r},
	};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (insert_rows(st, &tables[i], id, err))
			return GP_ERUNTIME;
	return GP_OK;
}

int store_write_run(struct store *st, const struct scenario *sc, const struct results *r,
		    int64_t *run_id, struct gp_err *err)
{
	assert(st && sc && r && err);
	if (exec(st, "BEGIN IMMEDIATE", "starting the run's transaction", err))
		return GP_ERUNTIME;
	int64_t id = 0;
	int rc = write_run_row(st, sc, r, &id, err);
	if (!rc)
		rc = write_rows(st, sc, r, id, err);
	if (!rc)
		rc = exec(st, "COMMIT", "committing the run", err);
	if (rc) {
		rollback(st);
		return rc;
	}
	if (run_id)
		*run_id = id;
	return GP_OK;
}

int store_run_count(struct store *st, int64_t *n, struct gp_err *err)
{
	assert(st && n && err);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM runs", -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "counting runs");
	int rc = GP_OK;
	if (sqlite3_step(s) == SQLITE_ROW)
		*n = sqlite3_column_int64(s, 0);
	else
		rc = db_error(st, err, "counting runs");
	sqlite3_finalize(s);
	return rc;
}
