/*
 * store.c - the results database (see store.h and docs/results.md).
 *
 * One connection per struct store.  The database runs in WAL mode with
 * synchronous=NORMAL (a power cut may lose the last committed run, never
 * corrupt the file) and a busy timeout, so that sweep workers in several
 * processes append to one file: each run is one BEGIN IMMEDIATE transaction,
 * which takes the write lock up front instead of failing at its first insert.
 * A new file takes its first run through a rollback journal (configure).
 *
 * Rows go in through one prepared statement per table that inserts 64 rows
 * at a time (256 for job_rows, see insert_rows), reset and rebound for each
 * batch (job_rows: only the parameters whose value changed): a million
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
#include "gpuplan/relax.h"
#include "gpuplan/store.h"
#include "gpuplan/units.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "store_int.h"

/* Fills err with "PATH: WHAT: SQLITE MESSAGE" and returns GP_ERUNTIME.  Call
 * it before anything else touches the connection (ROLLBACK resets errmsg). */
int sti_db_error(struct store *st, struct gp_err *err, const char *what)
{
	return gp_errorf(err, GP_ERUNTIME, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

/* Runs a query that returns one integer (or none: *v = 0). */
int sti_query_int(struct store *st, const char *sql, int64_t *v, const char *what,
		  struct gp_err *err)
{
	sqlite3_stmt *s;
	*v = 0;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, what);
	int step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		*v = sqlite3_column_int64(s, 0);
	int rc = step == SQLITE_ROW || step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, what);
	sqlite3_finalize(s);
	return rc;
}

/* Runs SQL that returns no rows we need (pragmas, BEGIN, COMMIT, DDL). */
int sti_exec(struct store *st, const char *sql, const char *what, struct gp_err *err)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sti_db_error(st, err, what);
	return GP_OK;
}

/* Undoes the open transaction, if SQLite has not already done so (it does
 * by itself after some errors, such as a full disk). */
void sti_rollback(struct store *st)
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
		return gp_errkindf(err, GP_ERR_LIMIT, GP_ERUNTIME,
				   "%.80s...: a path of %zu characters; expected "
				   "at most %d",
				   path, strlen(path), PATH_MAX - 1);
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
			struct stat sb;
			if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
				rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot create folder %s: %s",
					       path, dir, strerror(errno));
				break;
			}
			if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) { /* a file on the way */
				rc = gp_errorf(
					err, GP_EINPUT,
					"%s: %s is a file, not a folder; choose another path "
					"for the results",
					path, dir);
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

/* What to do about a file that cannot hold our results, in words that fit
 * every command: a writer's path may be any new file (run, sweep, merge
 * OUT), a reader's must hold runs (report DB). */
static const char *remedy(const struct store *st)
{
	return st->reader ? "expected the results of gpuplan run"
			  : "choose another path for the results";
}

/* A file SQLite cannot read as a database is bad input, named as such. */
static int not_sqlite(const struct store *st, struct gp_err *err)
{
	return gp_errorf(err, GP_EINPUT, "%s is not a SQLite database; %s", st->path, remedy(st));
}

/* A newer gpuplan's database, read or written by this one, would be half
 * understood. */
int sti_newer_schema(const struct store *st, int64_t version, struct gp_err *err)
{
	return gp_errorf(err, GP_ERUNTIME,
			 "%s: results schema version %lld is newer than this gpuplan's (%d); "
			 "use a newer gpuplan%s",
			 st->path, (long long)version, STORE_SCHEMA_VERSION,
			 st->reader ? "" : ", or another path for the results");
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
		int rc = sqlite3_exec(st->db, "SELECT count(*) FROM sqlite_master", NULL, NULL,
				      NULL);
		if (rc == SQLITE_NOTADB)
			return not_sqlite(st, err);
		if (rc != SQLITE_OK)
			return sti_db_error(st, err, "reading the database");
		rc = sqlite3_exec(st->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			return GP_OK;
		if (rc != SQLITE_BUSY || waited >= STORE_BUSY_TIMEOUT_MS)
			return sti_db_error(st, err, "setting WAL mode");
		sqlite3_sleep(STORE_RETRY_MS);
	}
}

/* What a file is, read before anything is written to it. */
enum db_kind { DB_EMPTY, DB_OURS, DB_FOREIGN, DB_NEWER };

/*
 * Sets the connection up for several writers: busy timeout, WAL, NORMAL
 * sync (a power cut may lose the last run, never corrupt the file).
 *
 * A new database takes its first run through a rollback journal and turns
 * to WAL after it (wal_now).  WAL writes every page of a run twice, into the
 * WAL and back into the file at the checkpoint, while a rollback journal
 * keeps no copy of the pages a transaction adds to the file: the first run
 * into a new file, often its only one, is written once (0.06 s of the
 * 200,000 job rows of `make bench`'s M/M/1, 0.24 s in WAL).  FULL sync keeps
 * the journal safe against a power cut meanwhile.  The price: while that
 * first run is written (its transaction, not its simulation), a reader of
 * the file waits for the commit, and a reader's open transaction holds the
 * commit back, as in any rollback-journal database.  Another process that
 * opens the file for writing turns it to WAL itself (set_wal), and SQLite
 * then moves every connection to WAL at its next transaction.
 */
static int configure(struct store *st, enum db_kind kind, struct gp_err *err)
{
	if (kind == DB_EMPTY) {
		st->wal_later = true;
		return sti_exec(st, "PRAGMA synchronous=FULL", "setting synchronous mode", err);
	}
	if (set_wal(st, err))
		return GP_ERUNTIME;
	return sti_exec(st, "PRAGMA synchronous=NORMAL", "setting synchronous mode", err);
}

/* A new database turns to WAL once a run is in, or failing that when its
 * connection closes (configure).  The switch waits WAL_SWITCH_MS at most
 * for other connections' locks; if they outlast it, the next writer to
 * open the file makes it (set_wal). */
#define WAL_SWITCH_MS 200

void sti_wal_now(struct store *st)
{
	if (!st->wal_later)
		return;
	sqlite3_busy_timeout(st->db, WAL_SWITCH_MS);
	if (sqlite3_exec(st->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", NULL, NULL,
			 NULL) == SQLITE_OK)
		st->wal_later = false;
	sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
}

static int count_rows(struct store *st, const char *sql, int64_t *n, struct gp_err *err)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc == SQLITE_NOTADB)
		return not_sqlite(st, err);
	if (rc != SQLITE_OK)
		return sti_db_error(st, err, "reading the database");
	*n = 0;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc == SQLITE_NOTADB)
		return not_sqlite(st, err);
	return rc == SQLITE_ROW ? GP_OK : sti_db_error(st, err, "reading the database");
}

/* A gpuplan database carries STORE_APPLICATION_ID; one written before the id
 * existed is recognised by user_version 1 and the runs table's own columns.
 * Anything else is someone else's file and is left byte for byte as it was. */
static int identify(struct store *st, enum db_kind *kind, struct gp_err *err)
{
	int64_t objects, app_id, version, legacy;
	/* One read transaction: the four figures from one snapshot.  Read one by
	 * one, another process creating the schema between them made a new
	 * database look like 0 objects with user_version 2: someone else's. */
	sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
	int rc = count_rows(st, "SELECT count(*) FROM sqlite_master", &objects, err);
	if (!rc)
		rc = count_rows(st, "PRAGMA application_id", &app_id, err);
	if (!rc)
		rc = count_rows(st, "PRAGMA user_version", &version, err);
	if (!rc)
		rc = count_rows(st,
				"SELECT count(*) FROM pragma_table_info('runs') WHERE name IN "
				"('scenario_sha256', 'events', 'sim_seconds', 'wall_seconds')",
				&legacy, err);
	sqlite3_exec(st->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
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
				 "user_version %lld, %lld schema objects); %s",
				 st->path, (long long)app_id, (long long)version,
				 (long long)objects, remedy(st));
	if (*kind == DB_NEWER)
		return sti_newer_schema(st, version, err);
	return GP_OK;
}

/* A reader needs the tables every report reads, and a writer would append a
 * run whose rows some of them lack: one of ours without them (cut by hand, or
 * a crafted file) is a bad input, exit 2, not an SQL error or a table made
 * again empty under the runs it had. */
static int whole_schema(struct store *st, struct gp_err *err)
{
	/* The tables every version of the schema has had (store_schema.c), that
	 * the reports read: one dropped is a damaged database (exit 2), not a
	 * runtime error halfway through a report. */
	static const char *const needed[] = {"runs",        "params",   "metrics",
					     "timeseries",  "requests", "pending_reasons",
					     "allocations", "findings"};
	for (size_t i = 0; i < sizeof needed / sizeof *needed; i++) {
		char sql[128];
		int64_t n = 0;
		snprintf(sql, sizeof sql,
			 "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
			 needed[i]);
		int rc = count_rows(st, sql, &n, err);
		if (rc)
			return rc;
		if (!n)
			return gp_errorf(err, GP_EINPUT,
					 "%s: a gpuplan results database without its %s table; %s",
					 st->path, needed[i], remedy(st));
	}
	return GP_OK;
}

/* A reader's connection is read-write with every write refused: one opened
 * SQLITE_OPEN_READONLY cannot remove the -wal and -shm files of a WAL
 * database when it closes, and left them beside the file after each report.
 * A file the process may not write still opens, read-only. */
static int forbid_writes(struct store *st, struct gp_err *err)
{
	return sti_exec(st, "PRAGMA query_only = 1", "opening the database read-only", err);
}

/* SQLite's special names: ":memory:" (and "") open a database in memory that
 * a run would be written to and lost, and a "file:" URI may too
 * (mode=memory) or open another file than the one named (sqlite.org/uri.html,
 * sqlite.org/inmemorydb.html). */
int sti_special_name(const char *path, struct gp_err *err)
{
	if (!path[0] || !strcmp(path, ":memory:") || !strncasecmp(path, "file:", 5))
		return gp_errorf(err, GP_EINPUT,
				 "'%s': SQLite reads this name as an in-memory database or a URI, "
				 "not a file; expected a database file's path (./%s for a file of "
				 "that name)",
				 path, path);
	return GP_OK;
}

static int open_db(const char *path, bool write, struct store **out, struct gp_err *err)
{
	if (sti_special_name(path, err))
		return GP_EINPUT;
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) /* SQLite: "unable to open" */
		return gp_errorf(err, GP_EINPUT, "%s is a directory; expected a database file",
				 path);
	/* SQLite opens a FIFO read-write and waits on its first read forever; a
	 * device is no database either: the one opener's rule (common.h) */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return gp_errorf(err, GP_EINPUT,
				 "%s is not a regular file (a device, FIFO or socket); expected a "
				 "database file",
				 path);
	struct store *st = gp_xcalloc(1, sizeof *st);
	st->path = gp_xstrdup(path);
	st->reader = !write;
	int rc;
	/* NOMUTEX: a store is used from one thread at a time (store.h), so the
	 * per-call locking of SQLite's serialized mode only costs time, under
	 * the write lock that sweep workers share. */
	int flags = SQLITE_OPEN_READWRITE | (write ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
	enum db_kind kind = DB_FOREIGN; /* identify sets it; read only when it succeeded */
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		if (st->db)
			rc = sti_db_error(st, err, "cannot open database");
		else
			rc = gp_errorf(err, GP_ERUNTIME, "%s: cannot open database: out of memory",
				       path);
	} else {
		sqlite3_busy_timeout(st->db, STORE_BUSY_TIMEOUT_MS);
		rc = write ? GP_OK : forbid_writes(st, err);
		if (!rc)
			rc = identify(st, &kind, err);
		if (!rc && !write && kind == DB_EMPTY)
			rc = gp_errorf(err, GP_EINPUT, "%s: an empty database; %s", path,
				       remedy(st));
		if (!rc && (!write || kind == DB_OURS)) /* a writer would append to it */
			rc = whole_schema(st, err);
		if (!rc && write)
			rc = configure(st, kind, err);
		if (!rc && write)
			rc = sti_ensure_schema(st, err);
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
	if (sti_special_name(path, err)) /* before any folder is made for it */
		return GP_EINPUT;
	int rc = make_parents(path, err);
	if (rc)
		return rc;
	return open_db(path, true, out, err);
}

int store_open_read(const char *path, struct store **out, struct gp_err *err)
{
	assert(path && out && err);
	*out = NULL;
	return open_db(path, false, out, err);
}

int store_checkpoint(const char *path, struct gp_err *err)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_CANTOPEN) {
		sqlite3_close(db);
		return GP_OK;
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	/* Busy: another process (a sweep beside this one) has the database open;
	 * the last connection to close folds the log in, so nothing is lost and
	 * this sweep's points are written: it is not this sweep's failure. */
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		rc = SQLITE_OK;
	int out = rc == SQLITE_OK
			  ? GP_OK
			  : gp_errorf(err, GP_ERUNTIME, "%s: checkpointing the database: %s", path,
				      sqlite3_errmsg(db));
	sqlite3_close(db);
	return out;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (size_t t = 0; t < STORE_CACHED_TABLES; t++)
		for (size_t b = 0; b < STORE_BATCH_SIZES; b++)
			sqlite3_finalize(st->insert[t][b]);
	for (size_t b = 0; b < STORE_BATCH_SIZES; b++) {
		free(st->job_kept[b].kind);
		free(st->job_kept[b].bits);
	}
	sti_wal_now(st);
	sqlite3_close(st->db); /* other statements are finalized before we return */
	free(st->path);
	free(st);
}

/* Binds text, or NULL for a NULL pointer. */
void sti_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* Binds text that is freed before the statement steps (SQLite copies it). */
void sti_bind_copy(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

/* Binds a real, or NULL for NAN (a metric that does not apply). */
void sti_bind_real(sqlite3_stmt *s, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(s, i);
	else
		sqlite3_bind_double(s, i, v);
}

/* Binds a time in seconds, or NULL for SIM_NEVER. */
void sti_bind_time(sqlite3_stmt *s, int i, sim_time t)
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
	return sti_db_error(st, err, what);
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
 * per statement.  Kept under SQLite's oldest limit of 999 parameters, but
 * for job_rows, which a big run fills with hundreds of thousands of rows:
 * up to STORE_JOB_BATCH_ROWS rows a statement, as many parameters as the
 * SQLite linked allows (32,766 by default since 3.32), 3.6% fewer
 * instructions on the writer thread of `make bench`'s M/M/1 than 32 rows. */
#define STORE_MAX_PARAMS     999
#define STORE_JOB_BATCH_ROWS 256

/* Prepares "INSERT INTO table (columns) VALUES (?,..),(?,..)" for k rows. */
static int prepare_insert(struct store *st, const struct sti_rows *t, int k, sqlite3_stmt **s,
			  struct gp_err *err)
{
	size_t row = 2 * (size_t)t->ncols + 2; /* "(?,?)," */
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
static int insert_stmt(struct store *st, size_t slot, const struct sti_rows *t, int b,
		       sqlite3_stmt **s, struct gp_err *err)
{
	assert(slot < STORE_CACHED_TABLES && b < STORE_BATCH_SIZES);
	sqlite3_stmt **kept = &st->insert[slot][b];
	if (!*kept && prepare_insert(st, t, 1 << b, kept, err))
		return GP_ERUNTIME;
	if (slot == STI_JOB_SLOT && !st->job_kept[b].s) { /* nothing bound yet */
		size_t n = (size_t)sqlite3_bind_parameter_count(*kept);
		st->job_kept[b] =
			(struct sti_kept){*kept, gp_xcalloc(n, 1), gp_xcalloc(n, sizeof(int64_t))};
	}
	*s = *kept;
	return GP_OK;
}

/* Inserts the rows in order, in batches of the largest power of two rows
 * that fits what is left, the statement's parameter limit and
 * STORE_BATCH_ROWS (STORE_JOB_BATCH_ROWS for job_rows, whose statements
 * bind only what changed, struct sti_kept).  slot names the table's kept
 * statements. */
static int insert_rows(struct store *st, size_t slot, const struct sti_rows *t, int64_t id,
		       struct gp_err *err)
{
	int rc = GP_OK;
	int max_rows = slot == STI_JOB_SLOT ? STORE_JOB_BATCH_ROWS : STORE_BATCH_ROWS;
	int max_params = slot == STI_JOB_SLOT
				 ? sqlite3_limit(st->db, SQLITE_LIMIT_VARIABLE_NUMBER, -1)
				 : STORE_MAX_PARAMS;
	for (size_t i = 0; i < t->n && !rc;) {
		int b = STORE_BATCH_SIZES - 1;
		while (b > 0 && ((1 << b) > max_rows || (size_t)1 << b > t->n - i ||
				 (1 << b) * t->ncols > max_params))
			b--;
		sqlite3_stmt *s;
		if ((rc = insert_stmt(st, slot, t, b, &s, err)))
			break;
		struct sti_kept *kept = slot == STI_JOB_SLOT ? &st->job_kept[b] : NULL;
		for (int r = 0; r < 1 << b && !rc; r++, i++) {
			int p = r * t->ncols + 1;
			if (slot != STI_JOB_SLOT) /* job_rows' key holds the run id */
				sti_keep_int(s, kept, p++, id);
			rc = t->bind(s, p, i, t->ctx, err);
		}
		if (!rc)
			rc = step_reset(st, s, t->table, err);
		/* not cleared: the next batch binds every parameter (sti_bind_fn) */
	}
	return rc;
}

/* Readies c to key n job rows of run id: each row's key holds the run's id,
 * and *append (c->append_key) gets the key SQLite gives a row inserted
 * without one, one past the largest in job_rows (sti_bind_job). */
static int key_jobs(struct store *st, struct sti_jobs *c, int64_t id, int64_t *append, size_t n,
		    struct gp_err *err)
{
	c->run_id = id;
	c->append_key = append;
	*append = 1;
	return n ? sti_query_int(st, "SELECT coalesce(max(job_key), 0) + 1 FROM job_rows", append,
				 "reading job_rows' last key", err)
		 : GP_OK;
}

/* Binds the run's figures from started_at to step_s at parameter p; NULL
 * while the run goes on (r NULL). */
static void bind_run_figures(sqlite3_stmt *s, int p, const struct results *r)
{
	if (!r) {
		for (int k = 0; k < 5; k++)
			sqlite3_bind_null(s, p + k);
		return;
	}
	sti_bind_text(s, p, r->started_at[0] ? r->started_at : NULL);
	sti_bind_real(s, p + 1, r->wall_seconds);
	sqlite3_bind_int64(s, p + 2, (sqlite3_int64)r->events);
	sti_bind_time(s, p + 3, r->sim_end);
	sti_bind_text(s, p + 4, r->status);
}

static void bind_run_step(sqlite3_stmt *s, int p, const struct results *r)
{
	sti_bind_time(s, p, r && r->step > 0 && r->n_ts ? r->step : SIM_NEVER);
}

int sti_write_run_row(struct store *st, const struct scenario *sc, const struct results *r,
		      int64_t *id, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(
		    st->db,
		    "INSERT INTO runs (name, scenario_path, scenario_sha256, seed, "
		    "started_at, wall_seconds, events, sim_seconds, status, start, step_s, "
		    "currency) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
		    -1, &s, NULL) != SQLITE_OK)
		return write_error(st, "runs", err);
	sti_bind_text(s, 1, sc->name);
	sti_bind_text(s, 2, sc->path);
	sti_bind_text(s, 3, sc->sha256[0] ? sc->sha256 : NULL);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)sc->seed); /* seeds >= 2^63 read back negative */
	bind_run_figures(s, 5, r);
	char start[32];
	units_format_rfc3339(sc->start_epoch, start, sizeof start);
	sti_bind_text(s, 10, start);
	bind_run_step(s, 11, r);
	sti_bind_text(s, 12, sc->currency[0] ? sc->currency : "USD");
	int rc = step_reset(st, s, "runs", err);
	sqlite3_finalize(s);
	if (!rc)
		*id = sqlite3_last_insert_rowid(st->db);
	return rc;
}

int sti_finish_run_row(struct store *st, const struct results *r, int64_t id, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db,
			       "UPDATE runs SET started_at = ?, wall_seconds = ?, events = ?, "
			       "sim_seconds = ?, status = ?, step_s = ? WHERE run_id = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return write_error(st, "runs", err);
	bind_run_figures(s, 1, r);
	bind_run_step(s, 6, r);
	sqlite3_bind_int64(s, 7, id);
	int rc = step_reset(st, s, "runs", err);
	sqlite3_finalize(s);
	return rc;
}

/* Binds a --set / sweep override (ctx: the scenario). */
static int bind_param(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct scenario *sc = ctx;
	(void)err;
	sti_bind_text(s, p, sc->params[i].key);
	sti_bind_text(s, p + 1, sc->params[i].value);
	return GP_OK;
}

/* Binds a metric, NAN as NULL (ctx: the results). */
static int bind_metric(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct metric *m = &((const struct results *)ctx)->metrics[i];
	(void)err;
	sti_bind_text(s, p, m->scope);
	sti_bind_text(s, p + 1, m->name);
	sti_bind_real(s, p + 2, m->value);
	sti_bind_text(s, p + 3, m->unit);
	return GP_OK;
}

/* Binds a timeseries row (ctx: the rows). */
static int bind_ts(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct ts_row *t = &((const struct ts_row *)ctx)[i];
	(void)err;
	sti_bind_time(s, p, t->t);
	sti_bind_text(s, p + 1, t->scope);
	sti_bind_real(s, p + 2, t->gpus_capacity);
	sti_bind_real(s, p + 3, t->gpus_allocated);
	sti_bind_real(s, p + 4, t->gpus_demand);
	sti_bind_real(s, p + 5, t->engine_active);
	sti_bind_real(s, p + 6, t->sm_active);
	sti_bind_real(s, p + 7, t->vram_used_gib);
	sti_bind_real(s, p + 8, t->pending);
	sti_bind_real(s, p + 9, t->running);
	sti_bind_real(s, p + 10, t->requests_running);
	sti_bind_real(s, p + 11, t->requests_waiting);
	sti_bind_real(s, p + 12, t->kv_cache_usage);
	sti_bind_real(s, p + 13, t->preemptions);
	sti_bind_real(s, p + 14, t->gpus_provisioning);
	return GP_OK;
}

/* Binds scope i of the scenario: all, then the pools, then the workloads
 * (ctx: the scenario), in the order of the timeseries rows. */
/* Binds a pending_reasons row (ctx: the results). */
static int bind_pending_reason(sqlite3_stmt *s, int p, size_t i, const void *ctx,
			       struct gp_err *err)
{
	const struct pending_reason *pr = &((const struct results *)ctx)->pending_reasons[i];
	(void)err;
	sti_bind_text(s, p, pr->scope);
	sti_bind_text(s, p + 1, pr->reason);
	sti_bind_real(s, p + 2, pr->pending_seconds);
	sqlite3_bind_int64(s, p + 3, pr->pods);
	return GP_OK;
}

/* Binds a finding (ctx: a struct sti_jobs): its step and kind by name, its scope
 * (the pool's or workload's name), and its first alternative's overrides. */
static int bind_finding(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_jobs *jc = ctx;
	const struct finding *f = &jc->r->findings[i];
	(void)err;
	sqlite3_bind_int(s, p, f->rank);
	sti_bind_text(s, p + 1, finding_step_name((enum finding_step)f->step));
	sti_bind_text(s, p + 2, f->text);
	sti_bind_text(s, p + 3, f->evidence);
	sti_bind_text(s, p + 4, finding_kind_name((enum finding_kind)f->kind));
	sti_bind_text(s, p + 5, finding_scope(f, jc->sc));
	char *fix = f->n_fixes ? finding_fix_text(&f->fixes[0]) : NULL;
	sti_bind_copy(s, p + 6, fix);
	free(fix);
	sti_bind_text(s, p + 7, f->key);
	sti_bind_text(s, p + 8, f->value);
	sti_bind_text(s, p + 9, f->relaxed);
	if (f->key)
		sti_bind_real(s, p + 10, f->pod_hours);
	else
		sqlite3_bind_null(s, p + 10);
	return GP_OK;
}

/* Binds a binding constraint's pod-seconds (ctx: a struct sti_jobs): its kind, its
 * key with names (relax.h), the workload, pool and queue it is about. */
static int bind_constraint(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct sti_jobs *jc = ctx;
	const struct constraint *c = &jc->r->constraints[i];
	(void)err;
	char *key = relax_key(jc->sc, c);
	sti_bind_text(s, p, constraint_kind_name(c->kind));
	sti_bind_copy(s, p + 1, key);
	free(key);
	sti_bind_text(s, p + 2, c->workload >= 0 ? jc->sc->workloads[c->workload].name : NULL);
	sti_bind_text(s, p + 3, c->pool >= 0 ? jc->sc->pools[c->pool].name : NULL);
	sti_bind_text(s, p + 4, c->queue >= 0 ? jc->sc->queues[c->queue].name : NULL);
	sti_bind_real(s, p + 5, c->pod_seconds);
	return GP_OK;
}

/* Binds a point of the inflation curve (ctx: the results). */
static int bind_curve(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err)
{
	const struct curve_row *c = &((const struct results *)ctx)->curve[i];
	(void)err;
	sqlite3_bind_int(s, p, c->arrived_pct);
	sti_bind_real(s, p + 1, c->allocated_pct);
	sti_bind_real(s, p + 2, c->fragmentation_pct);
	return GP_OK;
}

/* Writes every row of run id: params, metrics, jobs, timeseries, allocations,
 * pending reasons, requests, findings, the inflation curve. */
int sti_write_rows(struct store *st, const struct scenario *sc, const struct results *r, int64_t id,
		   const struct sti_done *done, struct gp_err *err)
{
	static const struct sti_done none = {0, 0, 0, NULL};
	done = done ? done : &none;
	size_t jobs_done = done->jobs, ts_done = done->ts;
	assert(jobs_done <= r->n_jobs && ts_done <= r->n_ts &&
	       done->allocations <= r->n_allocations);
	struct sti_jobs jc = {.path = st->path};
	int64_t append_key;
	if (key_jobs(st, &jc, id, &append_key, r->n_jobs - jobs_done, err))
		return GP_ERUNTIME;
	sti_job_ids(&jc, sc, r->n_nodes);
	sti_job_texts_plan(&jc, r, done->texts, jobs_done);
	jc.jobs = r->jobs + jobs_done;
	jc.kept = st->job_kept;
	struct sti_showback show = {sc, r,
				    done->allocations ? r->allocations + done->allocations : NULL},
			    by_node = {sc, r, r->node_allocations};
	const struct sti_rows tables[] = {
		{"params", "run_id, key, value", 3, sc->n_params, bind_param, sc},
		{"metrics", "run_id, scope, name, value, unit", 5, r->n_metrics, bind_metric, r},
		{"job_rows", STI_JOB_COLUMNS, STI_JOB_NCOLS, r->n_jobs - jobs_done, sti_bind_job,
		 &jc},
		{"job_texts", "run_id, text_id, text", 3, jc.n_texts, sti_bind_job_text, &jc},
		{"timeseries", STI_TS_COLUMNS, 16, r->n_ts - ts_done, bind_ts,
		 ts_done ? r->ts + ts_done : r->ts},
		{"allocations", STI_ALLOC_COLUMNS, 16, r->n_allocations - done->allocations,
		 sti_bind_allocation, &show},
		{"node_allocations",
		 "run_id, name, start_s, end_s, gpu_hours, gpu_cost, cpu_core_hours, cpu_cost, "
		 "ram_byte_hours, ram_cost, total_cost, gpu_efficiency, namespace, queue, team, pool, "
		 "node",
		 17, r->n_node_allocations, sti_bind_node_allocation, &by_node},
		{"pending_reasons", "run_id, scope, reason, pending_seconds, pods", 5,
		 r->n_pending_reasons, bind_pending_reason, r},
		{"requests",
		 "run_id, workload, request_id, arrival_s, ttft_s, tpot_s, e2e_s, prompt_tokens, "
		 "output_tokens, slo_met, verified",
		 11, r->n_requests, sti_bind_request, &jc},
		{"findings",
		 "run_id, rank, step, finding, evidence, kind, scope, fix, key, value, relaxed, "
		 "pod_hours",
		 12, r->n_findings, bind_finding, &jc},
		{"inflation_curve", "run_id, arrived_pct, allocated_pct, fragmentation_pct", 4,
		 r->n_curve, bind_curve, r},
		{"scopes",
		 "run_id, scope, kind, workload_kind, model, gpu, namespace, queue, labels, team",
		 10, 1 + sc->n_pools + sc->n_workloads, sti_bind_scope, sc},
		{"backtest", "run_id, scope, metric, observed, simulated, error", 6, r->n_backtest,
		 sti_bind_backtest, r},
		{"constraints", "run_id, kind, key, workload, pool, queue, pod_seconds", 7,
		 r->n_constraints, bind_constraint, &jc},
	};
	assert(!strcmp(tables[STI_JOB_SLOT].table, "job_rows"));  /* sti_insert_jobs' slot */
	assert(!strcmp(tables[STI_TS_SLOT].table, "timeseries")); /* sti_insert_ts' */
	assert(!strcmp(tables[STI_ALLOC_SLOT].table, "allocations"));
	int rc = GP_OK;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0] && !rc; i++)
		rc = insert_rows(st, i, &tables[i], id, err);
	free(jc.texts);
	return rc;
}

int sti_insert_jobs(struct store *st, const struct sti_jobs *c, size_t n, int64_t id,
		    struct gp_err *err)
{
	struct sti_jobs jc = *c;
	jc.kept = st->job_kept;
	int64_t append_key;
	if (key_jobs(st, &jc, id, &append_key, n, err))
		return GP_ERUNTIME;
	const struct sti_rows t = {"job_rows", STI_JOB_COLUMNS, STI_JOB_NCOLS,
				   n,          sti_bind_job,    &jc};
	return insert_rows(st, STI_JOB_SLOT, &t, id, err);
}

int sti_insert_ts(struct store *st, const struct ts_row *rows, size_t n, int64_t id,
		  struct gp_err *err)
{
	const struct sti_rows t = {"timeseries", STI_TS_COLUMNS, 16, n, bind_ts, rows};
	return insert_rows(st, STI_TS_SLOT, &t, id, err);
}

int sti_insert_allocations(struct store *st, const struct scenario *sc,
			   const struct allocation *rows, size_t n, int64_t id, struct gp_err *err)
{
	struct sti_showback show = {sc, NULL, rows};
	const struct sti_rows t = {"allocations", STI_ALLOC_COLUMNS, 16, n, sti_bind_allocation,
				   &show};
	return insert_rows(st, STI_ALLOC_SLOT, &t, id, err);
}

int sti_delete_run_rows(struct store *st, const char *table, int64_t id, struct gp_err *err)
{
	sqlite3_stmt *s;
	char sql[64];
	snprintf(sql, sizeof sql, "DELETE FROM %s WHERE run_id = ?", table);
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return write_error(st, table, err);
	sqlite3_bind_int64(s, 1, id);
	int rc = step_reset(st, s, table, err);
	sqlite3_finalize(s);
	return rc;
}

/* Looks (sweep, point) up; *has tells whether it is there. */
static int point_exists(struct store *st, const char *sweep, const char *point, bool *has,
			struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sweep_points WHERE sweep = ? AND point = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "looking up a sweep point");
	sti_bind_text(s, 1, sweep);
	sti_bind_text(s, 2, point);
	int step = sqlite3_step(s);
	int rc = step == SQLITE_ROW || step == SQLITE_DONE
			 ? GP_OK
			 : sti_db_error(st, err, "looking up a sweep point");
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
	sti_bind_text(s, 1, sweep);
	sti_bind_text(s, 2, point);
	sqlite3_bind_int64(s, 3, id);
	int rc = step_reset(st, s, "sweep_points", err);
	sqlite3_finalize(s);
	return rc;
}

int store_write_search(struct store *st, const struct store_search *x, struct gp_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(
		    st->db,
		    "INSERT INTO searches (run_id, key, answer, condition, first_run_id, "
		    "last_run_id) VALUES (?,?,?,?,?,?)",
		    -1, &s, NULL) != SQLITE_OK)
		return write_error(st, "searches", err);
	sqlite3_bind_int64(s, 1, x->run_id);
	sti_bind_text(s, 2, x->key);
	sti_bind_text(s, 3, x->answer);
	sti_bind_text(s, 4, x->condition);
	sqlite3_bind_int64(s, 5, x->first_run_id);
	sqlite3_bind_int64(s, 6, x->last_run_id);
	int rc = step_reset(st, s, "searches", err);
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
	int rc = sti_write_run_row(st, sc, r, id, err);
	if (!rc)
		rc = sti_write_rows(st, sc, r, *id, NULL, err);
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
	if (sti_exec(st, "BEGIN IMMEDIATE", "starting the run's transaction", err))
		return GP_ERUNTIME;
	int64_t id = 0;
	int rc = write_run_tx(st, sc, r, sweep, point, &id, written, err);
	if (!rc)
		rc = sti_exec(st, *written ? "COMMIT" : "ROLLBACK", "committing the run", err);
	if (rc) {
		sti_rollback(st);
		*written = false;
		return rc;
	}
	if (run_id && *written)
		*run_id = id;
	sti_wal_now(st);
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
		"cost_total, cost_per_verified_result, forced, untrusted) VALUES (?1, ?2, ?3, ?4, ?5, "
		"?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
	if (sti_exec(st, "BEGIN IMMEDIATE", "writing advice", err))
		return GP_ERUNTIME;
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
		int rc = sti_db_error(st, err, "writing advice");
		sti_rollback(st);
		return rc;
	}
	int rc = GP_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct store_advice *a = &rows[i];
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, base_run);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)(i + 1));
		sti_bind_text(s, 3, a->alternative);
		sti_bind_text(s, 4, a->overrides);
		sqlite3_bind_int64(s, 5, a->run_id);
		sqlite3_bind_int(s, 6, a->meets);
		sti_bind_real(s, 7, a->peak_demand);
		sti_bind_real(s, 8, a->queue_p95);
		sti_bind_real(s, 9, a->deadline_pct);
		sti_bind_real(s, 10, a->slo_pct);
		sti_bind_real(s, 11, a->cost);
		sti_bind_real(s, 12, a->cost_per_verified);
		sqlite3_bind_int(s, 13, a->forced);
		sti_bind_text(s, 14, a->untrusted);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = sti_db_error(st, err, "writing advice");
	}
	sqlite3_finalize(s);
	if (!rc)
		rc = sti_exec(st, "COMMIT", "writing advice", err);
	if (rc)
		sti_rollback(st);
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
		return sti_db_error(st, err, "reading sweep points");
	sti_bind_text(s, 1, sweep);
	size_t cap = 0;
	int step;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(s, 0);
		GP_GROW(*points, cap, *n + 1);
		(*points)[(*n)++] = gp_xstrdup(p ? p : "");
	}
	int rc = step == SQLITE_DONE ? GP_OK : sti_db_error(st, err, "reading sweep points");
	sqlite3_finalize(s);
	return rc;
}

int store_run_count(struct store *st, int64_t *n, struct gp_err *err)
{
	assert(st && n && err);
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(st->db, "SELECT count(*) FROM runs", -1, &s, NULL) != SQLITE_OK)
		return sti_db_error(st, err, "counting runs");
	int rc = GP_OK;
	if (sqlite3_step(s) == SQLITE_ROW)
		*n = sqlite3_column_int64(s, 0);
	else
		rc = sti_db_error(st, err, "counting runs");
	sqlite3_finalize(s);
	return rc;
}
