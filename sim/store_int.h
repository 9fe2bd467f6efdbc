/*
 * store_int.h - the results store's private header, shared by its files:
 *   store.c        opening and recognising a database, writing runs
 *   store_schema.c the schema, and the migrations of older databases to it
 *   store_merge.c  merging another results database into this one
 *   store_read.c   reading runs back for reports
 *   store_stream.c reading a run row by row (cursors) for streamed exports
 *   store_backtest.c  the backtest table: its rows, and the latest backtest of a scenario
 *   store_showback.c  the rows that say whose a cost is: scopes, allocations
 *   store_jobs.c   job rows: the ids of their texts, binding job_rows and requests
 *   store_writer.c a run's rows written on a thread while the run goes on
 * Names shared between them carry the prefix sti_ (store internal).
 */
#ifndef GPUPLAN_STORE_INT_H
#define GPUPLAN_STORE_INT_H

#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "gpuplan/store.h"

#define STORE_BUSY_TIMEOUT_MS 60000
#define STORE_RETRY_MS        10

/* Tables whose insert statements are kept, and batch sizes per table:
 * 1, 2, 4, .. STORE_BATCH_ROWS rows (job_rows: to 256, store.c). */
#define STORE_CACHED_TABLES 17
#define STORE_BATCH_ROWS    64
#define STORE_BATCH_SIZES   9

/* What a kept job_rows statement holds bound, parameter by parameter, so
 * that a value bound again as it is is not bound again (store_jobs.c): the
 * rows of a run repeat most of their columns (its id, the workload, node
 * and status of most jobs, the NULLs), and a bind costs about 90
 * instructions, a quarter of the writer's work on an M/M/1.  Valid because
 * SQLite keeps a statement's bindings across sqlite3_reset and a re-prepare,
 * and only sti_bind_job binds these statements. */
enum sti_kept_kind { STI_KEPT_UNKNOWN, STI_KEPT_NULL, STI_KEPT_INT, STI_KEPT_REAL };
struct sti_kept {
	sqlite3_stmt *s; /* NULL until the statement is prepared */
	uint8_t *kind;   /* per parameter, enum sti_kept_kind */
	int64_t *bits;   /* the integer, or the double's bits */
};

struct store {
	sqlite3 *db;
	char *path;
	bool reader;    /* opened by store_open_read: the file must hold results */
	bool wal_later; /* a new database: WAL once its first run is in (store.c) */
	/* insert[t][b]: the INSERT of 2^b rows into the t-th table of write_rows */
	sqlite3_stmt *insert[STORE_CACHED_TABLES][STORE_BATCH_SIZES];
	struct sti_kept job_kept[STORE_BATCH_SIZES]; /* of insert[STI_JOB_SLOT] */
};

void sti_bind_text(sqlite3_stmt *s, int i, const char *v);
/* A copy of v (SQLITE_TRANSIENT); NULL as NULL. */
void sti_bind_copy(sqlite3_stmt *s, int i, const char *v);
/* NAN as NULL. */
void sti_bind_real(sqlite3_stmt *s, int i, double v);
/* Seconds; SIM_NEVER as NULL. */
void sti_bind_time(sqlite3_stmt *s, int i, sim_time t);
/* Whether kept (a statement's struct sti_kept, or NULL) has parameter p
 * bound to a value of this kind and bits (none for a NULL). */
static inline bool sti_kept_holds(const struct sti_kept *kept, int p, enum sti_kept_kind kind,
				  int64_t bits)
{
	return kept && kept->kind[p - 1] == kind &&
	       (kind == STI_KEPT_NULL || kept->bits[p - 1] == bits);
}

/* Records what sqlite3_bind_* returned rc for at parameter p: unknown if it
 * failed, so that the next row binds it again. */
static inline void sti_kept_record(struct sti_kept *kept, int p, enum sti_kept_kind kind,
				   int64_t bits, int rc)
{
	if (kept) {
		kept->kind[p - 1] = rc == SQLITE_OK ? (uint8_t)kind : STI_KEPT_UNKNOWN;
		kept->bits[p - 1] = bits;
	}
}

/* sqlite3_bind_int64, _null, sti_bind_real and sti_bind_time, skipped when
 * kept (a statement's struct sti_kept, or NULL) has the value bound at p
 * already; what is bound is recorded.  Inline: a call costs more than the
 * test, and most of a job row's columns are skipped. */
static inline void sti_keep_int(sqlite3_stmt *s, struct sti_kept *kept, int p, int64_t v)
{
	if (!sti_kept_holds(kept, p, STI_KEPT_INT, v))
		sti_kept_record(kept, p, STI_KEPT_INT, v, sqlite3_bind_int64(s, p, v));
}

static inline void sti_keep_null(sqlite3_stmt *s, struct sti_kept *kept, int p)
{
	if (!sti_kept_holds(kept, p, STI_KEPT_NULL, 0))
		sti_kept_record(kept, p, STI_KEPT_NULL, 0, sqlite3_bind_null(s, p));
}

/* The double's bits are compared: 0.0 and -0.0 are told apart. */
static inline void sti_keep_real(sqlite3_stmt *s, struct sti_kept *kept, int p, double v)
{
	if (isnan(v)) {
		sti_keep_null(s, kept, p);
		return;
	}
	int64_t bits;
	memcpy(&bits, &v, sizeof bits);
	if (!sti_kept_holds(kept, p, STI_KEPT_REAL, bits))
		sti_kept_record(kept, p, STI_KEPT_REAL, bits, sqlite3_bind_double(s, p, v));
}

static inline void sti_keep_time(sqlite3_stmt *s, struct sti_kept *kept, int p, sim_time t)
{
	if (t == SIM_NEVER)
		sti_keep_null(s, kept, p);
	else
		sti_keep_real(s, kept, p, sim_seconds(t));
}

/* What the showback rows are bound from (store_showback.c). */
struct sti_showback {
	const struct scenario *sc;
	const struct results *r;
	const struct allocation *rows; /* NULL: r->allocations */
};
/* Binds scope i (ctx: the scenario): all, the pools, the workloads. */
int sti_bind_scope(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);
/* Binds allocation row i (ctx: a struct sti_showback). */
int sti_bind_allocation(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);
/* Binds node_allocations row i, its node last (ctx: a struct sti_showback
 * whose rows are r->node_allocations). */
int sti_bind_node_allocation(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);
/* Binds backtest row i of the results ctx (store_backtest.c), NAN as NULL. */
int sti_bind_backtest(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);
/* GP_EINPUT for SQLite's special names (":memory:", "", "file:" URIs), which
 * would open something else than a file of that name (store.c). */
int sti_special_name(const char *path, struct gp_err *err);
int sti_db_error(struct store *st, struct gp_err *err, const char *what);
int sti_exec(struct store *st, const char *sql, const char *what, struct gp_err *err);
/* Runs a query that returns one integer (or none: *v = 0). */
int sti_query_int(struct store *st, const char *sql, int64_t *v, const char *what,
		  struct gp_err *err);
void sti_rollback(struct store *st);
/* Whether the database has the column (a table of its own, or added since;
 * a database opened read-only is not migrated).  store_read.c. */
bool sti_has_column(struct store *st, const char *table, const char *column);
/* Copies the rows of temp.old_jobs (k1, k2, run_id, then the columns jobs
 * had when it was a table) into job_rows and job_texts; drops the view. */
int sti_copy_old_jobs(struct store *st, struct gp_err *err);
/* Creates the schema if absent and brings an older one up to date, under the
 * write lock; refuses a newer one (store_schema.c). */
int sti_ensure_schema(struct store *st, struct gp_err *err);
/* The error for a database of a newer schema version (store.c). */
int sti_newer_schema(const struct store *st, int64_t version, struct gp_err *err);

/* Binds row i of a table's rows into statement s, its first column (after
 * run_id) at parameter p: every column, a NULL where there is no value (a
 * kept statement's bindings are not cleared between batches).  Returns
 * GP_OK, or an error filled in err. */
typedef int (*sti_bind_fn)(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);

/* One table's rows: "table", "run_id, col, ..." and the binder of the other
 * ncols - 1 columns. */
struct sti_rows {
	const char *table;
	const char *columns;
	int ncols;
	size_t n;
	sti_bind_fn bind;
	const void *ctx;
};

/* What job rows are bound with (store_jobs.c): the numbering of the texts
 * they refer to, and, once the run is over, the ids job_texts lists. */
struct sti_jobs {
	const struct scenario *sc;
	const struct results *r;       /* requests, findings, texts: at the end */
	const struct job_record *jobs; /* the rows bound by sti_bind_job */
	const char *path;
	size_t n_nodes, n_reasons; /* n_reasons: SIZE_MAX while the run goes on */
	int64_t status0, node0, flavor0, reason0, end; /* first id of each kind; ids end here */
	int64_t status_id[JOB_FAILED + 1];             /* one id per status text */
	int64_t *texts;                                /* the ids used */
	size_t n_texts;
	struct sti_kept *kept; /* the store's job_kept, set by the inserts (store.c) */
	int64_t run_id;        /* the run's, in each row's key; set by the inserts too */
	/* The key SQLite gives a row inserted without one, one past the largest
	 * in job_rows: read by the inserts (store.c: key_jobs), kept up to
	 * date by sti_bind_job. */
	int64_t *append_key;
};
/* Numbers the kinds of text for a run of sc on n_nodes node slots. */
void sti_job_ids(struct sti_jobs *c, const struct scenario *sc, size_t n_nodes);
/* The text ids that the job rows a writer stored while the run went on use
 * (ids[id] 1), marked as it stores them, and the numbering they follow. */
struct sti_texts_used {
	uint8_t *ids;
	size_t cap;
	int64_t reason0;
};
/* Marks the ids n rows use (c: their numbering) in u. */
void sti_job_mark(struct sti_texts_used *u, const struct sti_jobs *c, const struct job_record *rows,
		  size_t n);
/* Lists the ids r's job rows use (c->texts, freed by the caller): those u
 * marked (NULL: none) and those of the rows from `from` on. */
void sti_job_texts_plan(struct sti_jobs *c, const struct results *r, const struct sti_texts_used *u,
			size_t from);
int sti_bind_job(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);
int sti_bind_job_text(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);
int sti_bind_request(sqlite3_stmt *s, int p, size_t i, const void *ctx, struct gp_err *err);

/* The columns of job_rows, and the slot of its kept statements: the first,
 * job_key, holds the run id with the job's (sti_job_key), so the inserts bind
 * no run id of their own to it. */
#define STI_JOB_COLUMNS                                                                   \
	"job_key, workload_id, submit_s, start_s, end_s, queue_s, gpus, node_id, "        \
	"status_id, deadline_s, deadline_met, verified, cost, reason_id, trace_queue_s, " \
	"preemptions, oom_kills, flavor_id"
#define STI_JOB_NCOLS  18
/* job_rows' key of job job_id of run run_id: the run in the high 32 bits. */
#define STI_JOB_ID_MAX UINT32_MAX
static inline int64_t sti_job_key(int64_t run_id, int64_t job_id)
{
	return (int64_t)((uint64_t)run_id << 32 | (uint64_t)job_id);
}
#define STI_JOB_SLOT 2

/* The columns of timeseries, and the slot of its kept statements. */
#define STI_TS_COLUMNS                                                                     \
	"run_id, t_s, scope, gpus_capacity, gpus_allocated, gpus_demand, engine_active, "  \
	"sm_active, vram_used_gib, pending, running, requests_running, requests_waiting, " \
	"kv_cache_usage, preemptions, gpus_provisioning"
#define STI_TS_SLOT 4
#define STI_ALLOC_COLUMNS                                                               \
	"run_id, name, start_s, end_s, gpu_hours, gpu_cost, cpu_core_hours, cpu_cost, " \
	"ram_byte_hours, ram_cost, total_cost, gpu_efficiency, namespace, queue, team, pool"
#define STI_ALLOC_SLOT 5

/* Inserts n rows of jobs (c->jobs) into job_rows of run id (store.c). */
int sti_insert_jobs(struct store *st, const struct sti_jobs *c, size_t n, int64_t id,
		    struct gp_err *err);
/* Inserts n timeseries rows into run id, after those it has (store.c). */
int sti_insert_ts(struct store *st, const struct ts_row *rows, size_t n, int64_t id,
		  struct gp_err *err);
/* Inserts n allocation rows into run id, after those it has (store.c). */
int sti_insert_allocations(struct store *st, const struct scenario *sc,
			   const struct allocation *rows, size_t n, int64_t id, struct gp_err *err);
/* Deletes the rows of run id from table (timeseries, allocations): rows a
 * writer stored while the run went on that its end does not keep (a merge
 * rewrote them, results.ts_merges, or the run's differ).  They are the
 * table's last rows, so the rows inserted next take their rowids again. */
int sti_delete_run_rows(struct store *st, const char *table, int64_t id, struct gp_err *err);
/* The runs row of a run still going (r NULL: its figures NULL until
 * sti_finish_run_row), or of a finished one; *id receives its id. */
int sti_write_run_row(struct store *st, const struct scenario *sc, const struct results *r,
		      int64_t *id, struct gp_err *err);
/* Sets the finished run's figures (started_at .. step_s) in its runs row. */
int sti_finish_run_row(struct store *st, const struct results *r, int64_t id, struct gp_err *err);
/* What a writer stored of a run while it went on: the first rows of these
 * tables. */
struct sti_done {
	size_t jobs, ts, allocations;
	const struct sti_texts_used *texts; /* the ids the first jobs rows use */
};
/* Writes every row of run id but those done (NULL: none), which are in. */
int sti_write_rows(struct store *st, const struct scenario *sc, const struct results *r, int64_t id,
		   const struct sti_done *done, struct gp_err *err);
/* Turns a new database to WAL once its first run is in (store.c). */
void sti_wal_now(struct store *st);

#endif
