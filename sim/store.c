/*
 * store.c - the results database (see store.h and docs/results.md).
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
 * the statement's step; bindings are cleared before store_write_run returns.
 *
 * The insert statements are prepared once per connection and kept:
 * compiling a 64-row INSERT costs more than running it, and a sweep writes
 * thousands of small runs on one connection, each holding the write lock
 * while it inserts (without the cache, 3/4 of a small run's time went to
 * compiling, under the lock, so sweep workers could not overlap).  Batches
 * are powers of two rows (64, then 32, 16, ... for the remainder), so that
 * a table needs at most STORE_BATCH_SIZES statements.
 */
#include "gpuplan/store.h"
#include "gpuplan/units.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STORE_BUSY_TIMEOUT_MS 60000
#define STORE_RETRY_MS 10

/* Tables whose insert statements are kept, and batch sizes per table:
 * 1, 2, 4, .. STORE_BATCH_ROWS rows. */
#define STORE_CACHED_TABLES 17
#define STORE_BATCH_ROWS 64
#define STORE_BATCH_SIZES 7

struct store {
	sqlite3 *db;
	char *path;
	/* insert[t][b]: the INSERT of 2^b rows into the t-th table of write_rows */
	sqlite3_stmt *insert[STORE_CACHED_TABLES][STORE_BATCH_SIZES];
};

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
	"  step_s REAL\n"
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
	"  cost REAL,\n"
	"  reason TEXT,\n"
	"  trace_queue_s REAL\n"
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
	"  running REAL,\n"
	"  requests_running REAL,\n"
	"  requests_waiting REAL,\n"
	"  kv_cache_usage REAL,\n"
	"  preemptions REAL\n"
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
	"  evidence TEXT,\n"
	"  kind TEXT,\n"
	"  scope TEXT,\n"
	"  fix TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS findings_run ON findings(run_id);\n"
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
	"  cost_per_verified_result REAL\n"
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
	"  gpu TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS scopes_run ON scopes(run_id);\n";

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
	/* Checked first: a path the system cannot open must not leave thousands
	 * of folders behind on its way to failing. */
	if (strlen(path) >= PATH_MAX)
		return gp_errorf(err, GP_ERUNTIME, "%.80s...: a path of %zu characters; expected "
				 "at most %d", path, strlen(path), PATH_MAX - 1);
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

/* Columns added after a table first shipped: a database made before them
 * gets them (NULL in its older rows) so that its runs and new ones share
 * one schema. */
static const struct {
	const char *table, *column, *type;
} added_columns[] = {
	{"jobs", "reason", "TEXT"}, /* last pending reason, kube-scheduler's message */
	{"jobs", "trace_queue_s", "REAL"}, /* the trace's own wait (openb), beside queue_s */
	{"runs", "step_s", "REAL"}, /* the timeseries step used (chosen when output.step is absent) */
	{"findings", "kind", "TEXT"},  /* enum finding_kind's name */
	{"findings", "scope", "TEXT"}, /* the pool or workload it is about */
	{"findings", "fix", "TEXT"},   /* the --set overrides of its first alternative */
	/* inference servers, as vLLM's scheduler and cache gauges */
	{"timeseries", "requests_running", "REAL"},
	{"timeseries", "requests_waiting", "REAL"},
	{"timeseries", "kv_cache_usage", "REAL"},
	{"timeseries", "preemptions", "REAL"},
};

static int add_missing_columns(struct store *st, struct gp_err *err)
{
	for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
		char sql[256];
		snprintf(sql, sizeof sql, "SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'",
			 added_columns[i].table, added_columns[i].column);
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
			return db_error(st, err, "reading the schema");
		int step = sqlite3_step(s);
		sqlite3_finalize(s);
		if (step == SQLITE_ROW)
			continue;
		if (step != SQLITE_DONE)
			return db_error(st, err, "reading the schema");
		snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", added_columns[i].table,
			 added_columns[i].column, added_columns[i].type);
		if (exec(st, sql, "adding a column", err))
			return GP_ERUNTIME;
	}
	return GP_OK;
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
	if (!rc)
		rc = add_missing_columns(st, err);
	if (!rc && version < STORE_SCHEMA_VERSION) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
		rc = exec(st, sql, "setting the schema version", err);
	}
	if (!rc) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA application_id = %d", STORE_APPLICATION_ID);
		rc = exec(st, sql, "setting the application id", err);
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
	if (set_wal(st, err))
		return GP_ERUNTIME;
	return exec(st, "PRAGMA synchronous=NORMAL", "setting synchronous mode", err);
}

/* What a file is, read before anything is written to it. */
enum db_kind { DB_EMPTY, DB_OURS, DB_FOREIGN, DB_NEWER };

static int count_rows(struct store *st, const char *sql, int64_t *n, struct gp_err *err)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc == SQLITE_NOTADB)
		return gp_errorf(err, GP_ERUNTIME,
				 "%s: not a SQLite database (%s); choose another --db path",
				 st->path, sqlite3_errmsg(st->db));
	if (rc != SQLITE_OK)
		return db_error(st, err, "reading the database");
	*n = 0;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc == SQLITE_NOTADB)
		return gp_errorf(err, GP_ERUNTIME,
				 "%s: not a SQLite database; choose another --db path", st->path);
	return rc == SQLITE_ROW ? GP_OK : db_error(st, err, "reading the database");
}

/* A gpuplan database carries STORE_APPLICATION_ID; one written before the id
 * existed is recognised by user_version 1 and the runs table's own columns.
 * Anything else is someone else's file and is left byte for byte as it was. */
static int identify(struct store *st, enum db_kind *kind, struct gp_err *err)
{
	int64_t objects, app_id, version, legacy;
	int rc = count_rows(st, "SELECT count(*) FROM sqlite_master", &objects, err);
	if (!rc)
		rc = count_rows(st, "PRAGMA application_id", &app_id, err);
	if (!rc)
		rc = count_rows(st, "PRAGMA user_version", &version, err);
	if (!rc)
		rc = count_rows(st, "SELECT count(*) FROM pragma_table_info('runs') WHERE name IN "
				"('scenario_sha256', 'events', 'sim_seconds', 'wall_seconds')",
				&legacy, err);
	if (rc)
		return rc;
	if (objects == 0 && app_id == 0 && version == 0)
		*kind = DB_EMPTY;
	else if (app_id == STORE_APPLICATION_ID || (app_id == 0 && version == 1 && legacy == 4))
		*kind = version > STORE_SCHEMA_VERSION ? DB_NEWER : DB_OURS;
	else
		*kind = DB_FOREIGN;
	if (*kind == DB_FOREIGN)
		return gp_errorf(err, GP_EINPUT,
				 "%s: not a gpuplan results database (application_id %lld, "
				 "user_version %lld, %lld schema objects); choose another --db path",
				 st->path, (long long)app_id, (long long)version, (long long)objects);
	if (*kind == DB_NEWER)
		return gp_errorf(err, GP_ERUNTIME,
				 "%s: results schema version %lld is newer than this gpuplan's (%d); "
				 "use a newer gpuplan or another --db",
				 st->path, (long long)version, STORE_SCHEMA_VERSION);
	return GP_OK;
}

static int open_db(const char *path, bool write, struct store **out, struct gp_err *err)
{
	struct store *st = gp_xcalloc(1, sizeof *st);
	st->path = gp_xstrdup(path);
	int rc;
	/* NOMUTEX: a store is used from one thread at a time (store.h), so the
	 * per-call locking of SQLite's serialized mode only costs time, under
	 * the write lock that sweep workers share. */
	int flags = (write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
		    SQLITE_OPEN_NOMUTEX;
	enum db_kind kind;
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		if (st->db)
			rc = db_error(st, err, "cannot open database");
		else
			rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot open database: out of memory",
				       path);
	} else {
		sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
		rc = identify(st, &kind, err);
		if (!rc && !write && kind == DB_EMPTY)
			rc = gp_errorf(err, GP_ERUNTIME, "%s: an empty database; expected the "
				       "results of gpuplan run", path);
		if (!rc && write)
			rc = configure(st, err);
		if (!rc && write)
			rc = ensure_schema(st, err);
	}
	if (rc) {
		store_close(st);
		return rc;
	}
	*out = st;
	return GP_OK;
}

int store_open(const char *path, struct store **out, struct gp_err *err)
{
	assert(path && out && err);
	*out = NULL;
	if (make_parents(path, err))
		return GP_ERUNTIME;
	return open_db(path, true, out, err);
}

int store_open_read(const char *path, struct store **out, struct gp_err *err)
{
	assert(path && out && err);
	*out = NULL;
	return open_db(path, false, out, err);
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (size_t t = 0; t < STORE_CACHED_TABLES; t++)
		for (size_t b = 0; b < STORE_BATCH_SIZES; b++)
			sqlite3_finalize(st->insert[t][b]);
	sqlite3_close(st->db); /* other statements are finalized before we return */
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

/* Binds text that is freed before the statement steps (SQLite copies it). */
static void bind_copy(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
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

/* The kept statement inserting 2^b rows into table slot t, prepared on
 * first use. */
static int insert_stmt(struct store *st, size_t slot, const struct rows *t, int b,
		       sqlite3_stmt **s, struct gp_err *err)
{
	assert(slot < STORE_CACHED_TABLES && b < STORE_BATCH_SIZES);
	sqlite3_stmt **kept = &st->insert[slot][b];
	if (!*kept && prepare_insert(st, t, 1 << b, kept, err))
		return GP_ERUNTIME;
	*s = *kept;
	return GP_OK;
}

/* Inserts the rows in order, in batches of the largest power of two rows
 * that fits what is left, the statement's parameter limit and
 * STORE_BATCH_ROWS.  slot names the table's kept statements. */
static int insert_rows(struct store *st, size_t slot, const struct rows *t, int64_t id,
		       struct gp_err *err)
{
	int rc = GP_OK;
	for (size_t i = 0; i < t->n && !rc;) {
		int b = STORE_BATCH_SIZES - 1;
		while (b > 0 && ((size_t)1 << b > t->n - i || (1 << b) * t->ncols > STORE_MAX_PARAMS))
			b--;
		sqlite3_stmt *s;
		if ((rc = insert_stmt(st, slot, t, b, &s, err)))
			break;
		for (int r = 0; r < 1 << b && !rc; r++, i++) {
			int p = r * t->ncols + 1;
			sqlite3_bind_int64(s, p, id);
			rc = t->bind(s, p + 1, i, t->ctx, err);
		}
		if (!rc)
			rc = step_reset(st, s, t->table, err);
		sqlite3_clear_bindings(s);
	}
	return rc;
}

/* Writes the runs row and returns its id. */
static int write_run_row(struct store *st, const struct scenario *sc, const struct results *r,
			 int64_t *id, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO runs (name, scenario_path, scenario_sha256, seed, "
			       "started_at, wall_seconds, events, sim_seconds, status, start, step_s) "
			       "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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
	char start[32];
	units_format_rfc3339(sc->start_epoch, start, sizeof start);
	bind_text(s, 10, start);
	if (r->step > 0 && r->n_ts)
		bind_time(s, 11, r->step);
	else
		sqlite3_bind_null(s, 11);
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
	bool reason = j->reason >= 0 && (size_t)j->reason < c->r->n_reason_texts;
	bind_text(s, p + 13, reason ? c->r->reason_texts[j->reason] : NULL);
	bind_time(s, p + 14, j->has_trace_queue ? j->trace_queue : SIM_NEVER);
	return GP_OK;
}

/* Binds an inference request (ctx: a job_ctx, for the workload's name).
 * Latencies the request never reached are NULL. */
static int bind_request(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct job_ctx *c = ctx;
	const struct request_record *q = &c->r->requests[i];
	if (q->workload < 0 || (size_t)q->workload >= c->sc->n_workloads)
		return gp_errorf(err, GP_ERUNTIME, "%s: writing requests: request %lld has workload %d of %zu",
				 c->path, (long long)q->request_id, (int)q->workload, c->sc->n_workloads);
	bool first = q->first_token != SIM_NEVER, done = q->done != SIM_NEVER;
	sqlite3_bind_text(s, p, c->sc->workloads[q->workload].name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, p + 1, q->request_id);
	bind_time(s, p + 2, q->arrival);
	bind_time(s, p + 3, first ? q->first_token - q->arrival : SIM_NEVER);
	if (done && first && q->output_tokens > 1)
		sqlite3_bind_double(s, p + 4, sim_seconds(q->done - q->first_token) /
						      (q->output_tokens - 1));
	else
		sqlite3_bind_null(s, p + 4);
	bind_time(s, p + 5, done ? q->done - q->arrival : SIM_NEVER);
	sqlite3_bind_int(s, p + 6, q->prompt_tokens);
	sqlite3_bind_int(s, p + 7, q->output_tokens);
	sqlite3_bind_int(s, p + 8, q->slo_met ? 1 : 0);
	sqlite3_bind_int(s, p + 9, q->verified ? 1 : 0);
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
	bind_real(s, p + 10, t->requests_running);
	bind_real(s, p + 11, t->requests_waiting);
	bind_real(s, p + 12, t->kv_cache_usage);
	bind_real(s, p + 13, t->preemptions);
	return GP_OK;
}

/* Binds scope i of the scenario: all, then the pools, then the workloads
 * (ctx: the scenario), in the order of the timeseries rows. */
static int bind_scope(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct scenario *sc = ctx;
	(void)err;
	const char *name = "all", *kind = "all", *wkind = NULL, *model = NULL, *gpu = NULL;
	if (i >= 1 && i <= sc->n_pools) {
		name = sc->pools[i - 1].name;
		kind = "pool";
		gpu = sc->pools[i - 1].gpu->name;
	} else if (i > sc->n_pools) {
		const struct workload_spec *w = &sc->workloads[i - 1 - sc->n_pools];
		name = w->name;
		kind = "workload";
		wkind = w->kind == WORKLOAD_INFERENCE ? "inference" : "batch";
		model = w->model ? w->model->name : NULL;
	}
	bind_text(s, p, name);
	bind_text(s, p + 1, kind);
	bind_text(s, p + 2, wkind);
	bind_text(s, p + 3, model);
	bind_text(s, p + 4, gpu);
	return GP_OK;
}

/* Binds a pending_reasons row (ctx: the results). */
static int bind_pending_reason(sqlite3_stmt *s, int p, size_t i, const void *ctx,
			       struct gp_err *err)
{
	const struct pending_reason *pr = &((const struct results *)ctx)->pending_reasons[i];
	(void)err;
	bind_text(s, p, pr->scope);
	bind_text(s, p + 1, pr->reason);
	bind_real(s, p + 2, pr->pending_seconds);
	sqlite3_bind_int64(s, p + 3, pr->pods);
	return GP_OK;
}

/* Binds an allocation row (ctx: the results). */
static int bind_allocation(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct allocation *a = &((const struct results *)ctx)->allocations[i];
	(void)err;
	bind_text(s, p, a->name);
	bind_time(s, p + 1, a->start);
	bind_time(s, p + 2, a->end);
	bind_real(s, p + 3, a->gpu_hours);
	bind_real(s, p + 4, a->gpu_cost);
	bind_real(s, p + 5, a->cpu_core_hours);
	bind_real(s, p + 6, a->cpu_cost);
	bind_real(s, p + 7, a->ram_byte_hours);
	bind_real(s, p + 8, a->ram_cost);
	bind_real(s, p + 9, a->total_cost);
	bind_real(s, p + 10, a->gpu_efficiency);
	return GP_OK;
}

/* Binds a finding (ctx: a job_ctx): its step and kind by name, its scope
 * (the pool's or workload's name), and its first alternative's overrides. */
static int bind_finding(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct job_ctx *jc = ctx;
	const struct finding *f = &jc->r->findings[i];
	(void)err;
	sqlite3_bind_int(s, p, f->rank);
	bind_text(s, p + 1, finding_step_name((enum finding_step)f->step));
	bind_text(s, p + 2, f->text);
	bind_text(s, p + 3, f->evidence);
	bind_text(s, p + 4, finding_kind_name((enum finding_kind)f->kind));
	const char *scope = f->workload >= 0 && (size_t)f->workload < jc->sc->n_workloads
				    ? jc->sc->workloads[f->workload].name
			    : f->pool >= 0 && (size_t)f->pool < jc->sc->n_pools ? jc->sc->pools[f->pool].name
										 : NULL;
	bind_text(s, p + 5, scope);
	char *fix = f->n_fixes ? finding_fix_text(&f->fixes[0]) : NULL;
	bind_copy(s, p + 6, fix);
	free(fix);
	return GP_OK;
}

/* Binds a point of the inflation curve (ctx: the results). */
static int bind_curve(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct curve_row *c = &((const struct results *)ctx)->curve[i];
	(void)err;
	sqlite3_bind_int(s, p, c->arrived_pct);
	bind_real(s, p + 1, c->allocated_pct);
	bind_real(s, p + 2, c->fragmentation_pct);
	return GP_OK;
}

/* Writes every row of run id: params, metrics, jobs, timeseries, allocations,
 * pending reasons, requests, findings, the inflation curve. */
static int write_rows(struct store *st, const struct scenario *sc, const struct results *r,
		      int64_t id, struct gp_err *err)
{
	struct job_ctx jc = {sc, r, st->path};
	const struct rows tables[] = {
		{"params", "run_id, key, value", 3, sc->n_params, bind_param, sc},
		{"metrics", "run_id, scope, name, value, unit", 5, r->n_metrics, bind_metric, r},
		{"jobs",
		 "run_id, job_id, workload, submit_s, start_s, end_s, queue_s, gpus, node, status, "
		 "deadline_s, deadline_met, verified, cost, reason, trace_queue_s",
		 16, r->n_jobs, bind_job, &jc},
		{"timeseries",
		 "run_id, t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active, "
		 "sm_active, vram_used_gib, pending, running, requests_running, requests_waiting, "
		 "kv_cache_usage, preemptions",
		 15, r->n_ts, bind_ts, r},
		{"allocations",
		 "run_id, name, start_s, end_s, gpu_hours, gpu_cost, cpu_core_hours, cpu_cost, "
		 "ram_byte_hours, ram_cost, total_cost, gpu_efficiency",
		 12, r->n_allocations, bind_allocation, r},
		{"pending_reasons", "run_id, scope, reason, pending_seconds, pods", 5,
		 r->n_pending_reasons, bind_pending_reason, r},
		{"requests",
		 "run_id, workload, request_id, arrival_s, ttft_s, tpot_s, e2e_s, prompt_tokens, "
		 "output_tokens, slo_met, verified",
		 11, r->n_requests, bind_request, &jc},
		{"findings", "run_id, rank, step, finding, evidence, kind, scope, fix", 8,
		 r->n_findings, bind_finding, &jc},
		{"inflation_curve", "run_id, arrived_pct, allocated_pct, fragmentation_pct", 4,
		 r->n_curve, bind_curve, r},
		{"scopes", "run_id, scope, kind, workload_kind, model, gpu", 6,
		 1 + sc->n_pools + sc->n_workloads, bind_scope, sc},
	};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (insert_rows(st, i, &tables[i], id, err))
			return GP_ERUNTIME;
	return GP_OK;
}

/* Looks (sweep, point) up; *has tells whether it is there. */
static int point_exists(struct store *st, const char *sweep, const char *point, bool *has,
			struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sweep_points WHERE sweep = ? AND point = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "looking up a sweep point");
	bind_text(s, 1, sweep);
	bind_text(s, 2, point);
	int step = sqlite3_step(s);
	int rc = step == SQLITE_ROW || step == SQLITE_DONE
			 ? GP_OK
			 : db_error(st, err, "looking up a sweep point");
	*has = step == SQLITE_ROW;
	sqlite3_finalize(s);
	return rc;
}

/* Records that run id is the point (sweep, point). */
static int write_point_row(struct store *st, const char *sweep, const char *point, int64_t id,
			   struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO sweep_points (sweep, point, run_id) VALUES (?,?,?)", -1,
			       &s, NULL) != SQLITE_OK)
		return write_error(st, "sweep_points", err);
	bind_text(s, 1, sweep);
	bind_text(s, 2, point);
	sqlite3_bind_int64(s, 3, id);
	int rc = step_reset(st, s, "sweep_points", err);
	sqlite3_finalize(s);
	return rc;
}

/* The body of the run's transaction.  With a sweep point, the point is
 * checked first: BEGIN IMMEDIATE holds the write lock, so no other writer
 * can add it between the check and the insert. */
static int write_run_tx(struct store *st, const struct scenario *sc, const struct results *r,
			const char *sweep, const char *point, int64_t *id, bool *written,
			struct gp_err *err)
{
	*written = false;
	if (sweep) {
		bool has = false;
		int rc = point_exists(st, sweep, point, &has, err);
		if (rc || has)
			return rc;
	}
	int rc = write_run_row(st, sc, r, id, err);
	if (!rc)
		rc = write_rows(st, sc, r, *id, err);
	if (!rc && sweep)
		rc = write_point_row(st, sweep, point, *id, err);
	*written = rc == GP_OK;
	return rc;
}

/* One transaction: the whole run (and its point), or nothing. */
static int write_run(struct store *st, const struct scenario *sc, const struct results *r,
		     const char *sweep, const char *point, int64_t *run_id, bool *written,
		     struct gp_err *err)
{
	if (exec(st, "BEGIN IMMEDIATE", "starting the run's transaction", err))
		return GP_ERUNTIME;
	int64_t id = 0;
	int rc = write_run_tx(st, sc, r, sweep, point, &id, written, err);
	if (!rc)
		rc = exec(st, *written ? "COMMIT" : "ROLLBACK", "committing the run", err);
	if (rc) {
		rollback(st);
		*written = false;
		return rc;
	}
	if (run_id && *written)
		*run_id = id;
	return GP_OK;
}

int store_write_run(struct store *st, const struct scenario *sc, const struct results *r,
		    int64_t *run_id, struct gp_err *err)
{
	assert(st && sc && r && err);
	bool written;
	return write_run(st, sc, r, NULL, NULL, run_id, &written, err);
}

int store_write_advice(struct store *st, int64_t base_run, const struct store_advice *rows,
		       size_t n, struct gp_err *err)
{
	static const char sql[] =
		"INSERT INTO advice (run_id, rank, alternative, overrides, alternative_run_id, meets, "
		"peak_demand_gpus, queue_time_p95_s, deadline_met_pct, slo_attainment_pct, "
		"cost_total, cost_per_verified_result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
		"?10, ?11, ?12)";
	if (exec(st, "BEGIN IMMEDIATE", "writing advice", err))
		return GP_ERUNTIME;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		int rc = db_error(st, err, "writing advice");
		rollback(st);
		return rc;
	}
	int rc = GP_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct store_advice *a = &rows[i];
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, base_run);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)(i + 1));
		bind_text(s, 3, a->alternative);
		bind_text(s, 4, a->overrides);
		sqlite3_bind_int64(s, 5, a->run_id);
		sqlite3_bind_int(s, 6, a->meets);
		bind_real(s, 7, a->peak_demand);
		bind_real(s, 8, a->queue_p95);
		bind_real(s, 9, a->deadline_pct);
		bind_real(s, 10, a->slo_pct);
		bind_real(s, 11, a->cost);
		bind_real(s, 12, a->cost_per_verified);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = db_error(st, err, "writing advice");
	}
	sqlite3_finalize(s);
	if (!rc)
		rc = exec(st, "COMMIT", "writing advice", err);
	if (rc)
		rollback(st);
	return rc;
}

int store_write_point_run(struct store *st, const struct scenario *sc, const struct results *r,
			  const char *sweep, const char *point, int64_t *run_id, bool *written,
			  struct gp_err *err)
{
	assert(st && sc && r && sweep && point && written && err);
	return write_run(st, sc, r, sweep, point, run_id, written, err);
}

int store_has_point(struct store *st, const char *sweep, const char *point, bool *has,
		    struct gp_err *err)
{
	assert(st && sweep && point && has && err);
	return point_exists(st, sweep, point, has, err);
}

int store_sweep_points(struct store *st, const char *sweep, char ***points, size_t *n,
		       struct gp_err *err)
{
	assert(st && sweep && points && n && err);
	*points = NULL;
	*n = 0;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT point FROM sweep_points WHERE sweep = ?", -1, &s,
			       NULL) != SQLITE_OK)
		return db_error(st, err, "reading sweep points");
	bind_text(s, 1, sweep);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(s, 0);
		GP_GROW(*points, cap, *n + 1);
		(*points)[(*n)++] = gp_xstrdup(p ? p : "");
	}
	int rc = step == SQLITE_DONE ? GP_OK : db_error(st, err, "reading sweep points");
	sqlite3_finalize(s);
	return rc;
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

/* --- merge ------------------------------------------------------------------ */

/* The input database is attached under this name for the merge. */
#define MERGE_SRC "merge_src"

/* Refuses an input that is missing or is the output's own file (merging a
 * database into itself would read the rows it is writing). */
static int check_merge_input(const char *in_path, const char *out_path, struct gp_err *err)
{
	struct stat in, out;
	if (stat(in_path, &in) != 0)
		return gp_errorf(err, GP_EINPUT, "%s: error: cannot read: %s", in_path,
				 strerror(errno));
	if (!S_ISREG(in.st_mode))
		return gp_errorf(err, GP_EINPUT, "%s: error: not a file", in_path);
	if (out_path && stat(out_path, &out) == 0 && in.st_dev == out.st_dev &&
	    in.st_ino == out.st_ino)
		return gp_errorf(err, GP_EINPUT,
				 "%s: error: is the output database itself; name it once", in_path);
	return GP_OK;
}

/* Runs a query that returns one integer (or none: *v = 0). */
static int query_int(struct store *st, const char *sql, int64_t *v, const char *what,
		     struct gp_err *err)
{
	sqlite3_stmt *s;
	*v = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, what);
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	int rc = step == SQLITE_ROW || step == SQLITE_DONE ? GP_OK : db_error(st, err, what);
	sqlite3_finalize(s);
	return rc;
}

/* Whether table exists in schema (main or MERGE_SRC). */
static int has_table(struct store *st, const char *schema, const char *table, bool *has,
		     struct gp_err *err)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master "
				    "WHERE type = 'table' AND name = %Q",
				    schema, table);
	int64_t n = 0;
	int rc = query_int(st, sql, &n, "reading the schema", err);
	sqlite3_free(sql);
	*has = n > 0;
	return rc;
}

/* Checks that schema (of a connection to in_path) is a gpuplan results
 * database we can read: a SQLite file, a schema no newer than ours, a runs
 * table. */
static int check_merge_schema(struct store *st, const char *schema, const char *in_path,
			      struct gp_err *err)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master", schema);
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_NOTADB)
		return gp_errorf(err, GP_EINPUT, "%s: error: not a SQLite database", in_path);
	if (rc != SQLITE_OK)
		return gp_errorf(err, GP_ERUNTIME, "%s: reading the database: %s", in_path,
				 sqlite3_errmsg(st->db));
	int64_t version = 0;
	bool runs = false;
	sql = sqlite3_mprintf("PRAGMA \"%w\".user_version", schema);
	rc = query_int(st, sql, &version, "reading the schema version", err);
	sqlite3_free(sql);
	if (rc || has_table(st, schema, "runs", &runs, err))
		return GP_ERUNTIME;
	if (version > STORE_SCHEMA_VERSION)
		return gp_errorf(err, GP_EINPUT,
				 "%s: error: results schema version %lld is newer than this "
				 "gpuplan's (%d); merge with a newer gpuplan",
				 in_path, (long long)version, STORE_SCHEMA_VERSION);
	if (!runs)
		return gp_errorf(err, GP_EINPUT,
				 "%s: error: not a gpuplan results database (it has no runs table)",
				 in_path);
	return GP_OK;
}

int store_check_merge_input(const char *in_path, const char *out_path, struct gp_err *err)
{
	assert(in_path && err);
	if (check_merge_input(in_path, out_path, err))
		return GP_EINPUT;
	struct store in = {.db = NULL, .path = (char *)in_path};
	int rc;
	if (sqlite3_open_v2(in_path, &in.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		rc = gp_errorf(err, GP_EINPUT, "%s: error: cannot open: %s", in_path,
			       in.db ? sqlite3_errmsg(in.db) : "out of memory");
	else
		rc = check_merge_schema(&in, "main", in_path, err);
	sqlite3_close(in.db);
	return rc;
}

/* A run of the input that the output already holds: the same sweep point,
 * or, for a run outside any sweep, the same identity (looked up through the
 * runs_identity index: without it, merging 20,000 runs into 20,000 took two
 * minutes). */
static const char dup_point_sql[] =
	"EXISTS (SELECT 1 FROM " MERGE_SRC ".sweep_points sp JOIN main.sweep_points mp"
	" ON mp.sweep = sp.sweep AND mp.point = sp.point WHERE sp.run_id = r.run_id)";
static const char in_sweep_sql[] =
	"EXISTS (SELECT 1 FROM " MERGE_SRC ".sweep_points sp WHERE sp.run_id = r.run_id)";
static const char dup_run_sql[] =
	"EXISTS (SELECT 1 FROM main.runs o WHERE o.name IS r.name"
	" AND o.scenario_sha256 IS r.scenario_sha256 AND o.seed IS r.seed"
	" AND o.started_at IS r.started_at AND o.wall_seconds IS r.wall_seconds"
	" AND o.events IS r.events AND o.sim_seconds IS r.sim_seconds)";

/* Fills temp.merge_map with the input runs to copy, in run_id order, and
 * their new ids after the output's last run. */
static int map_new_runs(struct store *st, bool src_points, struct gp_err *err)
{
	if (exec(st,
		 "CREATE TEMP TABLE IF NOT EXISTS merge_map (seq INTEGER PRIMARY KEY,"
		 " old INTEGER NOT NULL UNIQUE, new INTEGER);"
		 "DELETE FROM temp.merge_map;",
		 "preparing the merge", err))
		return GP_ERUNTIME;
	char *sql;
	if (src_points)
		sql = sqlite3_mprintf("INSERT INTO temp.merge_map (old) SELECT r.run_id FROM " MERGE_SRC
				      ".runs r WHERE NOT %s AND (%s OR NOT %s) ORDER BY r.run_id",
				      dup_point_sql, in_sweep_sql, dup_run_sql);
	else
		sql = sqlite3_mprintf("INSERT INTO temp.merge_map (old) SELECT r.run_id FROM " MERGE_SRC
				      ".runs r WHERE NOT %s ORDER BY r.run_id",
				      dup_run_sql);
	int rc = exec(st, sql, "choosing the runs to merge", err);
	sqlite3_free(sql);
	if (!rc)
		rc = exec(st,
			  "UPDATE temp.merge_map SET new = seq + "
			  "(SELECT coalesce(max(run_id), 0) FROM main.runs)",
			  "numbering the merged runs", err);
	return rc;
}

/* The columns of table other than run_id that both databases have, as a
 * comma-separated list with the prefix before each name ("t." or "").
 * Returns NULL when there are none; sqlite3_free the result. */
static char *common_columns(struct store *st, const char *table, const char *prefix)
{
	sqlite3_stmt *s;
	char *sql = sqlite3_mprintf("SELECT m.name FROM pragma_table_info(%Q, 'main') m"
				    " JOIN pragma_table_info(%Q, '" MERGE_SRC "') i ON i.name = m.name"
				    " WHERE m.name <> 'run_id' ORDER BY m.cid",
				    table, table);
	int ok = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK;
	sqlite3_free(sql);
	if (!ok)
		return NULL;
	char *list = NULL;
	while (sqlite3_step(s) == SQLITE_ROW) {
		char *next = sqlite3_mprintf("%z%s%s\"%w\"", list, list ? ", " : "", prefix,
					     (const char *)sqlite3_column_text(s, 0));
		list = next;
	}
	sqlite3_finalize(s);
	return list;
}

/* Copies the rows of one table for the mapped runs, in their order. */
static int copy_table(struct store *st, const char *table, struct gp_err *err)
{
	char *cols = common_columns(st, table, "");
	char *tcols = common_columns(st, table, "t.");
	const char *order = strcmp(table, "runs") ? "m.seq, t.rowid" : "m.seq";
	char *sql = sqlite3_mprintf("INSERT INTO main.\"%w\" (run_id%s%s) SELECT m.new%s%s FROM " MERGE_SRC
				    ".\"%w\" t JOIN temp.merge_map m ON m.old = t.run_id ORDER BY %s",
				    table, cols ? ", " : "", cols ? cols : "", tcols ? ", " : "",
				    tcols ? tcols : "", table, order);
	char what[128];
	snprintf(what, sizeof what, "merging %s", table);
	int rc = exec(st, sql, what, err);
	sqlite3_free(sql);
	sqlite3_free(cols);
	sqlite3_free(tcols);
	return rc;
}

/* The output's tables other than runs that have a run_id column, and that
 * the input has too: every row there belongs to a run. */
static const char run_tables_sql[] =
	"SELECT t.name FROM main.sqlite_master t WHERE t.type = 'table' AND t.name <> 'runs'"
	" AND EXISTS (SELECT 1 FROM pragma_table_info(t.name, 'main') c WHERE c.name = 'run_id')"
	" AND EXISTS (SELECT 1 FROM " MERGE_SRC ".sqlite_master s WHERE s.type = 'table'"
	" AND s.name = t.name) ORDER BY t.name";

/* Copies runs first (the other tables reference them), then the rest. */
static int copy_tables(struct store *st, struct gp_err *err)
{
	if (copy_table(st, "runs", err))
		return GP_ERUNTIME;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, run_tables_sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "listing tables to merge");
	char **names = NULL;
	size_t n = 0, cap = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		GP_GROW(names, cap, n + 1);
		names[n++] = gp_xstrdup((const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	int rc = GP_OK;
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = copy_table(st, names[i], err);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* The merge proper, inside one transaction on the attached input. */
static int merge_tx(struct store *st, struct store_merge_stats *stats, struct gp_err *err)
{
	bool src_points = false;
	int64_t total = 0, copied = 0;
	int rc = has_table(st, MERGE_SRC, "sweep_points", &src_points, err);
	if (!rc)
		rc = map_new_runs(st, src_points, err);
	if (!rc)
		rc = copy_tables(st, err);
	if (!rc)
		rc = query_int(st, "SELECT count(*) FROM temp.merge_map", &copied, "counting runs",
			       err);
	if (!rc)
		rc = query_int(st, "SELECT count(*) FROM " MERGE_SRC ".runs", &total, "counting runs",
			       err);
	stats->copied = copied;
	stats->duplicates = total - copied;
	return rc;
}

int store_merge(struct store *st, const char *in_path, struct store_merge_stats *stats,
		struct gp_err *err)
{
	assert(st && in_path && stats && err);
	*stats = (struct store_merge_stats){0, 0};
	if (check_merge_input(in_path, st->path, err))
		return GP_EINPUT;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "ATTACH ? AS " MERGE_SRC, -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "attaching the input");
	bind_text(s, 1, in_path);
	int rc = sqlite3_step(s) == SQLITE_DONE
			 ? GP_OK
			 : gp_errorf(err, GP_ERUNTIME, "%s: cannot open database: %s", in_path,
				     sqlite3_errmsg(st->db));
	sqlite3_finalize(s);
	if (rc)
		return rc;
	rc = check_merge_schema(st, MERGE_SRC, in_path, err);
	if (!rc)
		rc = exec(st, "BEGIN IMMEDIATE", "starting the merge", err);
	if (!rc) {
		rc = merge_tx(st, stats, err);
		if (!rc)
			rc = exec(st, "COMMIT", "committing the merge", err);
		if (rc) {
			rollback(st);
			*stats = (struct store_merge_stats){0, 0};
		}
	}
	sqlite3_exec(st->db, "DETACH " MERGE_SRC, NULL, NULL, NULL);
	return rc;
}

/* --- reading back ---------------------------------------------------------- */

int store_run_info(struct store *st, int64_t run_id, struct store_run *out, struct gp_err *err)
{
	sqlite3_stmt *s;
	const char *sql = run_id > 0 ? "SELECT run_id, name, start, sim_seconds FROM runs WHERE run_id = ?"
				     : "SELECT run_id, name, start, sim_seconds FROM runs "
				       "ORDER BY run_id DESC LIMIT 1";
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "reading runs");
	if (run_id > 0)
		sqlite3_bind_int64(s, 1, run_id);
	int step = sqlite3_step(s);
	int rc = GP_OK;
	if (step == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(s, 1);
		const unsigned char *start = sqlite3_column_text(s, 2);
		out->run_id = sqlite3_column_int64(s, 0);
		snprintf(out->name, sizeof out->name, "%s", name ? (const char *)name : "");
		snprintf(out->start, sizeof out->start, "%s", start ? (const char *)start : "");
		out->sim_seconds = sqlite3_column_double(s, 3);
	} else if (step == SQLITE_DONE) {
		rc = run_id > 0 ? gp_errorf(err, GP_EINPUT, "%s: no run %lld", st->path, (long long)run_id)
				: gp_errorf(err, GP_EINPUT, "%s: no runs yet", st->path);
	} else {
		rc = db_error(st, err, "reading runs");
	}
	sqlite3_finalize(s);
	return rc;
}

int store_read_allocations(struct store *st, int64_t run_id, struct allocation **rows, size_t *n,
			   struct gp_err *err)
{
	sqlite3_stmt *s;
	*rows = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db,
			       "SELECT name, start_s, end_s, gpu_hours, gpu_cost, cpu_core_hours, "
			       "cpu_cost, ram_byte_hours, ram_cost, total_cost, gpu_efficiency "
			       "FROM allocations WHERE run_id = ? ORDER BY rowid",
			       -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, "reading allocations");
	sqlite3_bind_int64(s, 1, run_id);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		GP_GROW(*rows, cap, *n + 1);
		struct allocation *a = &(*rows)[(*n)++];
		const unsigned char *name = sqlite3_column_text(s, 0);
		a->name = gp_xstrdup(name ? (const char *)name : "");
		a->start = (sim_time)llround(sqlite3_column_double(s, 1) * (double)SIM_SECOND);
		a->end = (sim_time)llround(sqlite3_column_double(s, 2) * (double)SIM_SECOND);
		double *f[] = {&a->gpu_hours, &a->gpu_cost, &a->cpu_core_hours, &a->cpu_cost,
			       &a->ram_byte_hours, &a->ram_cost, &a->total_cost, &a->gpu_efficiency};
		for (int k = 0; k < 8; k++)
			*f[k] = sqlite3_column_type(s, 3 + k) == SQLITE_NULL ? NAN
									     : sqlite3_column_double(s, 3 + k);
	}
	int rc = step == SQLITE_DONE ? GP_OK : db_error(st, err, "reading allocations");
	sqlite3_finalize(s);
	return rc;
}

void store_free_allocations(struct allocation *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)rows[i].name);
	free(rows);
}

/* Fills row i of a query's result from the statement's current row. */
typedef void (*read_row_fn)(sqlite3_stmt *s, void *rows, size_t i);

/* Runs sql with run_id bound to ?1 and collects its rows (elem bytes each). */
static int read_rows(struct store *st, const char *sql, int64_t run_id, void **rows, size_t *n,
		     size_t elem, read_row_fn fn, const char *what, struct gp_err *err)
{
	sqlite3_stmt *s;
	*rows = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, what);
	sqlite3_bind_int64(s, 1, run_id);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		gp_grow(rows, &cap, *n + 1, elem);
		fn(s, *rows, (*n)++);
	}
	int rc = step == SQLITE_DONE ? GP_OK : db_error(st, err, what);
	sqlite3_finalize(s);
	return rc;
}

/* An owned copy of a text column ("" for NULL). */
static char *col_text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return gp_xstrdup(t ? (const char *)t : "");
}

static double col_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void read_metric(sqlite3_stmt *s, void *rows, size_t i)
{
	struct metric *m = &((struct metric *)rows)[i];
	*m = (struct metric){col_text(s, 0), col_text(s, 1), col_real(s, 2), col_text(s, 3)};
}

int store_read_metrics(struct store *st, int64_t run_id, struct metric **rows, size_t *n,
		       struct gp_err *err)
{
	return read_rows(st, "SELECT scope, name, value, unit FROM metrics WHERE run_id = ?1 ORDER BY rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_metric, "reading metrics", err);
}

void store_free_metrics(struct metric *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)rows[i].scope);
		free((char *)rows[i].name);
		free((char *)rows[i].unit);
	}
	free(rows);
}

static void read_ts(sqlite3_stmt *s, void *rows, size_t i)
{
	struct ts_row *t = &((struct ts_row *)rows)[i];
	memset(t, 0, sizeof *t);
	t->t = (sim_time)llround(sqlite3_column_double(s, 0) * (double)SIM_SECOND);
	t->scope = col_text(s, 1);
	double *f[] = {&t->gpus_capacity, &t->gpus_allocated, &t->gpus_demand, &t->engine_active,
		       &t->sm_active, &t->vram_used_gib, &t->pending, &t->running,
		       &t->requests_running, &t->requests_waiting, &t->kv_cache_usage,
		       &t->preemptions};
	for (int k = 0; k < 12; k++)
		*f[k] = col_real(s, 2 + k);
}

/* Whether the database has the column (a table of its own, or added since;
 * a database opened read-only is not migrated). */
static bool has_column(struct store *st, const char *table, const char *column)
{
	sqlite3_stmt *s;
	bool has = false;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &s,
			       NULL) != SQLITE_OK)
		return false;
	bind_text(s, 1, table);
	bind_text(s, 2, column);
	has = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return has;
}

int store_read_timeseries(struct store *st, int64_t run_id, struct ts_row **rows, size_t *n,
			  struct gp_err *err)
{
	bool servers = has_column(st, "timeseries", "preemptions");
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active, "
		 "sm_active, vram_used_gib, pending, running, %s FROM timeseries WHERE run_id = ?1 "
		 "ORDER BY rowid",
		 servers ? "requests_running, requests_waiting, kv_cache_usage, preemptions"
			 : "NULL, NULL, NULL, NULL");
	return read_rows(st, sql, run_id, (void **)rows, n, sizeof **rows, read_ts,
			 "reading timeseries", err);
}

void store_free_timeseries(struct ts_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)rows[i].scope);
	free(rows);
}

static void read_reason(sqlite3_stmt *s, void *rows, size_t i)
{
	struct pending_reason *pr = &((struct pending_reason *)rows)[i];
	*pr = (struct pending_reason){col_text(s, 0), col_text(s, 1), col_real(s, 2),
				      sqlite3_column_int64(s, 3), -1, 0};
}

int store_read_pending_reasons(struct store *st, int64_t run_id, struct pending_reason **rows,
			       size_t *n, struct gp_err *err)
{
	return read_rows(st,
			 "SELECT scope, reason, pending_seconds, pods FROM pending_reasons "
			 "WHERE run_id = ?1 ORDER BY rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_reason, "reading pending_reasons",
			 err);
}

void store_free_pending_reasons(struct pending_reason *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)rows[i].scope);
		free((char *)rows[i].reason);
	}
	free(rows);
}

static void read_finding(sqlite3_stmt *s, void *rows, size_t i)
{
	struct finding *f = &((struct finding *)rows)[i];
	memset(f, 0, sizeof *f);
	f->rank = sqlite3_column_int(s, 0);
	int step = finding_step_of((const char *)sqlite3_column_text(s, 1));
	f->step = (uint8_t)(step < 0 ? FINDING_CAPACITY : step);
	f->pool = f->workload = f->queue = -1;
	f->text = col_text(s, 2);
	f->evidence = col_text(s, 3);
}

int store_read_findings(struct store *st, int64_t run_id, struct finding **rows, size_t *n,
			struct gp_err *err)
{
	return read_rows(st,
			 "SELECT rank, step, finding, evidence FROM findings WHERE run_id = ?1 "
			 "ORDER BY rank, rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_finding, "reading findings", err);
}

void store_free_findings(struct finding *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		finding_free(&rows[i]);
	free(rows);
}

/* Rates as set ("12.5/s", "300/h", or a bare number of requests per second). */
static void read_load_point(sqlite3_stmt *s, void *rows, size_t i)
{
	struct store_load_point *p = &((struct store_load_point *)rows)[i];
	const unsigned char *v = sqlite3_column_text(s, 1);
	double rate = NAN;
	if (v && units_rate((const char *)v, &rate) && units_number((const char *)v, &rate))
		rate = NAN;
	*p = (struct store_load_point){sqlite3_column_int64(s, 0), rate, col_real(s, 2),
				       col_real(s, 3), col_real(s, 4), col_real(s, 5)};
}

static int by_rate(const void *a, const void *b)
{
	const struct store_load_point *x = a, *y = b;
	if (x->rate != y->rate)
		return x->rate < y->rate ? -1 : 1;
	return x->run_id < y->run_id ? -1 : x->run_id > y->run_id;
}

int store_read_load_curve(struct store *st, int64_t run_id, struct store_load_point **pts,
			  size_t *n, struct gp_err *err)
{
	static const char sql[] =
		"SELECT r.run_id, p.value,"
		" (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all' AND m.name = 'ttft_p99_s'),"
		" (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all' AND m.name = 'e2e_p99_s'),"
		" (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all' AND m.name = 'throughput_rps'),"
		" (SELECT value FROM metrics m WHERE m.run_id = r.run_id AND m.scope = 'all' AND m.name = 'slo_attainment_pct')"
		" FROM runs r JOIN runs me ON me.run_id = ?1 AND me.name = r.name"
		" AND me.scenario_sha256 IS r.scenario_sha256"
		" JOIN params p ON p.run_id = r.run_id AND p.key LIKE 'workloads.%.requests.rate'"
		" ORDER BY r.run_id";
	int rc = read_rows(st, sql, run_id, (void **)pts, n, sizeof **pts, read_load_point,
			   "reading the load test", err);
	size_t kept = 0;
	for (size_t i = 0; i < *n && !rc; i++)
		if (!isnan((*pts)[i].rate) && !isnan((*pts)[i].ttft_p99_s))
			(*pts)[kept++] = (*pts)[i];
	*n = rc ? 0 : kept;
	if (*n)
		qsort(*pts, *n, sizeof **pts, by_rate);
	return rc;
}

static void read_latency(sqlite3_stmt *s, void *rows, size_t i)
{
	((struct store_latency *)rows)[i] =
		(struct store_latency){col_real(s, 0), col_real(s, 1), col_real(s, 2), col_real(s, 3),
				       sqlite3_column_int64(s, 4), col_text(s, 5)};
}

int store_read_latencies(struct store *st, int64_t run_id, struct store_latency **rows, size_t *n,
			 struct gp_err *err)
{
	return read_rows(st,
			 "SELECT arrival_s, ttft_s, e2e_s, tpot_s, output_tokens, workload FROM requests "
			 "WHERE run_id = ?1 ORDER BY arrival_s, rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_latency, "reading requests", err);
}

void store_free_latencies(struct store_latency *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].workload);
	free(rows);
}

static void read_scope(sqlite3_stmt *s, void *rows, size_t i)
{
	((struct store_scope *)rows)[i] = (struct store_scope){
		col_text(s, 0), col_text(s, 1), col_text(s, 2), col_text(s, 3), col_text(s, 4)};
}

int store_read_scopes(struct store *st, int64_t run_id, struct store_scope **rows, size_t *n,
		      struct gp_err *err)
{
	if (!has_column(st, "scopes", "scope")) {
		*rows = NULL;
		*n = 0;
		return GP_OK;
	}
	return read_rows(st,
			 "SELECT scope, kind, workload_kind, model, gpu FROM scopes WHERE run_id = ?1 "
			 "ORDER BY rowid",
			 run_id, (void **)rows, n, sizeof **rows, read_scope, "reading scopes", err);
}

void store_free_scopes(struct store_scope *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].scope);
		free(rows[i].kind);
		free(rows[i].workload_kind);
		free(rows[i].model);
		free(rows[i].gpu);
	}
	free(rows);
}

int store_each_row(struct store *st, const char *table, int64_t run_id, store_row_fn fn, void *ctx,
		   struct gp_err *err)
{
	static const char *const tables[] = {"runs", "params", "metrics", "findings", "advice"};
	bool known = false;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		known |= !strcmp(table, tables[i]);
	assert(known && "only tables keyed by run_id");
	if (!known || !has_column(st, table, "run_id"))
		return GP_OK;
	char sql[160], what[64];
	snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE run_id = ?1 ORDER BY rowid", table);
	snprintf(what, sizeof what, "reading %s", table);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return db_error(st, err, what);
	sqlite3_bind_int64(s, 1, run_id);
	int ncols = sqlite3_column_count(s);
	struct store_cell *cells = gp_xcalloc((size_t)ncols, sizeof *cells);
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		size_t n = 0;
		for (int c = 0; c < ncols; c++) {
			const char *name = sqlite3_column_name(s, c);
			if (!strcmp(name, "run_id"))
				continue;
			struct store_cell *cell = &cells[n++];
			*cell = (struct store_cell){.name = name};
			switch (sqlite3_column_type(s, c)) {
			case SQLITE_INTEGER:
				cell->type = STORE_INTEGER;
				cell->integer = sqlite3_column_int64(s, c);
				break;
			case SQLITE_FLOAT:
				cell->type = STORE_REAL;
				cell->real = sqlite3_column_double(s, c);
				break;
			case SQLITE_NULL: cell->type = STORE_NULL; break;
			default:
				cell->type = STORE_TEXT;
				cell->text = (const char *)sqlite3_column_text(s, c);
				break;
			}
		}
		fn(ctx, cells, n);
	}
	int rc = step == SQLITE_DONE ? GP_OK : db_error(st, err, what);
	free(cells);
	sqlite3_finalize(s);
	return rc;
}
