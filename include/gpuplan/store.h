/*
 * store.h - the results database (SQLite, docs/results.md).
 *
 * store_open creates the schema if needed and sets WAL mode and a busy
 * timeout, so several processes can append to one database.  store_write_run
 * writes one run (runs, params, metrics, jobs, timeseries rows) in a single
 * transaction: either the whole run is there or none of it.  Runs append.
 *
 * The schema is every table of docs/results.md with declared column types
 * (times in seconds as REAL, NULL where a time never happened, flags as 0/1
 * INTEGER); tables the results object has no rows for yet (requests,
 * allocations, findings) are created empty.  timeseries has four more
 * columns for inference servers, as vLLM's gauges: requests_running,
 * requests_waiting (means over the window), kv_cache_usage (0..1) and
 * preemptions (a count in the window).  The table scopes(run_id, scope,
 * kind, workload_kind, model, gpu) says what each scope name is, so that
 * exports can label pools, workloads and models.  jobs has one more column
 * than the original schema: reason, the job's last pending reason in kube-scheduler's
 * words (added to older databases when they are opened).  jobs is a view
 * (schema version 2): job_rows holds a row per job with integer ids where
 * texts repeat (workload_id, node_id, status_id, reason_id), job_texts
 * (run_id, text_id, text) each distinct text of a run once, and the view
 * joins them into the documented columns; a version 1 database is migrated
 * when it is opened, and merged from as it is.  Since version 3 job_rows is
 * keyed by its rowid, job_key = run_id << 32 | job_id (run_id and job_id are
 * computed from it), and the view searches each run's range of keys; a
 * version 2 database is keyed when opened, merged from as it is.  The schema
 * version is the database's `PRAGMA user_version` (STORE_SCHEMA_VERSION); a
 * database written by a newer schema is refused rather than half-understood.
 *
 * Sweep points (docs/sweeps.md): the table
 * sweep_points(sweep, point, run_id) with UNIQUE(sweep, point) names the run
 * each point of a sweep produced.  store_write_point_run writes the run and
 * its point in the same transaction, after checking under the write lock
 * that the point is not there yet, so a point is never written twice, even
 * by sweeps racing on one database or a sweep resumed after a kill.
 *
 * store_merge copies the runs of another results database into this one
 * with new run ids, skipping the runs this one already holds: sweep points
 * by (sweep, point), other runs by their identity (name, scenario hash,
 * seed, start time, wall time, events).  Merging the same file twice adds
 * nothing the second time.
 *
 * A struct store owns one SQLite connection: use it from one thread at a
 * time; other processes open their own.  store_close releases it.  Every
 * error is GP_ERUNTIME with a message that names the database path, except
 * a path that cannot be a results database, which is bad input (GP_EINPUT):
 * a directory, a file that is not SQLite or is another application's, an
 * empty one to read, a merge input that is missing or not gpuplan's.
 */
#ifndef GPUPLAN_STORE_H
#define GPUPLAN_STORE_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#define STORE_SCHEMA_VERSION 3
/* PRAGMA application_id of every gpuplan results database: "GPLN". */
#define STORE_APPLICATION_ID 0x47504C4E

struct store;

/* Opens (creating the file, its parent folders and the schema if needed).
 * A file that is not a SQLite database is an error, and is left untouched. */
int store_open(const char *path, struct store **out, struct gp_err *err);

/* Opens an existing gpuplan database read-only, for commands that only read
 * (report): nothing is created, migrated or switched to WAL, and no -wal or
 * -shm file is left beside it.  store_open, too, writes only what is
 * missing: opening a current database changes none of its bytes.  Both opens
 * refuse, before writing anything, a database that is not gpuplan's (another
 * application_id, or tables without ours) or has a newer schema. */
int store_open_read(const char *path, struct store **out, struct gp_err *err);

/* Folds what the write-ahead log of the database at path still holds into
 * the file, once every writer is done (after a sweep's workers).  The last
 * connection to close does this, but two closing at once may each see the
 * other open and leave the log whole; the next reader to close then
 * rewrites the file (a refused sweep changed a database it left alone).
 * A file that does not exist is left so; a database another process holds
 * open is left to the last connection that closes. */
int store_checkpoint(const char *path, struct gp_err *err);

/* Writes the run; *run_id (may be NULL) receives its id.  Rows are inserted
 * in the order of the results arrays.  On error nothing of the run is left. */
int store_write_run(struct store *st, const struct scenario *sc, const struct results *r,
		    int64_t *run_id, struct gp_err *err);

/* A run written while it goes on (store_writer.c): the run hands its job
 * rows to store_writer_sink(w) (run.h's run_simulate_to) and a writer
 * thread inserts them meanwhile, into the database at path, in the run's
 * one transaction; GPUPLAN_THREADS=1 writes them on the caller's thread at
 * the same points, with the same statements.  sc and r (the results the
 * run fills) outlive the stream.  The database is opened at the first
 * batch of rows, so a run that fails before it leaves no file. */
struct store_writer;
struct store_writer *store_writer_create(const char *path, const struct scenario *sc,
					 const struct results *r);
const struct results_sink *store_writer_sink(struct store_writer *w);
/* ok: the run succeeded: writes the rest of it and commits; *st receives
 * the open database (NULL if it could not be opened; the caller closes
 * it) and *run_id the run's id.  An error of the writer, or of the end,
 * is returned with the message store_write_run would give, and nothing of
 * the run is left.  !ok: the run failed; nothing of it is written, a file
 * it created is removed.  stats (may be NULL) receives what the writer did.
 * Frees w. */
struct store_writer_stats {
	size_t batches;    /* handed to the writer */
	bool thread;       /* a writer thread wrote them */
	double writer_cpu; /* its CPU seconds (make bench: the run's critical path) */
};
int store_writer_finish(struct store_writer *w, bool ok, struct store **st, int64_t *run_id,
			struct store_writer_stats *stats, struct gp_err *err);

/* One ranked alternative of `gpuplan advise`, a row of the advice table. */
struct store_advice {
	const char *alternative; /* its label */
	const char *overrides;   /* "--set 'KEY=VALUE' ...", or NULL for the base */
	int64_t run_id;          /* the alternative's run */
	bool meets;
	double peak_demand, queue_p95, deadline_pct, slo_pct, cost, cost_per_verified;
	bool forced;           /* --force recommended from a model not trusted */
	const char *untrusted; /* why the model is not trusted; NULL: it is */
};

/* Writes advise's ranking of the alternatives to base_run's scenario (rank
 * 1 first) in one transaction.  The advice table's run_id is the base run;
 * alternative_run_id each alternative's own. */
int store_write_advice(struct store *st, int64_t base_run, const struct store_advice *rows,
		       size_t n, struct gp_err *err);

/* Like store_write_run, for the sweep point (sweep, point).  When the
 * database already holds that point, nothing is written, *written is false
 * and *run_id (may be NULL) is left alone; otherwise *written is true. */
int store_write_point_run(struct store *st, const struct scenario *sc, const struct results *r,
			  const char *sweep, const char *point, int64_t *run_id, bool *written,
			  struct gp_err *err);

/* *has = whether the database holds the point (sweep, point). */
int store_has_point(struct store *st, const char *sweep, const char *point, bool *has,
		    struct gp_err *err);

/* The points of sweep the database holds, in no particular order: *points
 * is a malloc'ed array of *n malloc'ed strings that the caller frees. */
int store_sweep_points(struct store *st, const char *sweep, char ***points, size_t *n,
		       struct gp_err *err);

/* What store_merge did with the runs of one input database. */
struct store_merge_stats {
	int64_t copied;     /* runs added, with new run ids */
	int64_t duplicates; /* runs skipped because this database already held them */
};

/* Checks, without writing anything, that in_path is a results database
 * store_merge can read and is not the file at out_path (may be NULL):
 * GP_EINPUT "IN: error: ..." otherwise.  Lets a merge refuse bad inputs
 * before it creates or changes its output. */
int store_check_merge_input(const char *in_path, const char *out_path, struct gp_err *err);

/* Copies the runs of the database at in_path into st in one transaction
 * (all rows of every table keyed by run_id, the columns both databases
 * have).  in_path must not be st's own file. */
int store_merge(struct store *st, const char *in_path, struct store_merge_stats *stats,
		struct gp_err *err);

/* The output of a merge.  An existing database is opened and merged into
 * (each input one transaction: a failure leaves it as it was).  A new one is
 * built in a temporary file beside out_path ("OUT.partial-PID") that
 * store_merge_finish renames to out_path when every input merged, and removes
 * otherwise: a full disk never leaves a 0-byte or partial OUT.db. */
struct store_merge_out {
	struct store *st;
	char *path; /* out_path */
	char *tmp;  /* the temporary file; NULL: out_path existed */
};
int store_merge_open(struct store_merge_out *m, const char *out_path, struct gp_err *err);
/* Closes the output; ok: keep it (rename a new one into place), else drop a
 * new one.  Returns GP_ERUNTIME when closing or the rename fails (the
 * temporary file then removed). */
int store_merge_finish(struct store_merge_out *m, bool ok, struct gp_err *err);

/* Number of runs in the database. */
int store_run_count(struct store *st, int64_t *n, struct gp_err *err);

/* Closes the connection and frees st (NULL is fine). */
/* What a `gpuplan search` found: KEY=answer meets the condition, run_id is
 * the answer's run and first_run_id .. last_run_id its probes' runs. */
struct store_search {
	const char *key;
	const char *answer;
	const char *condition; /* the --until text */
	int64_t run_id, first_run_id, last_run_id;
};

/* Appends a row to the searches table. */
int store_write_search(struct store *st, const struct store_search *s, struct gp_err *err);

/* A run as stored: id, scenario name, scenario start (RFC 3339), simulated seconds. */
struct store_run {
	int64_t run_id;
	char name[SCENARIO_MAX_NAME + 1]; /* whole: the loader's longest name */
	char start[40];
	double sim_seconds;
	char currency[4]; /* the prices' ISO 4217 code (runs.currency); "USD" when unsaid */
};

/* The run run_id; when run_id <= 0 the latest, except that when the latest
 * is a probe of a `gpuplan search`, that search's answer (probes after the
 * answer are not what the search found).  GP_EINPUT when there is none. */
int store_run_info(struct store *st, int64_t run_id, struct store_run *out, struct gp_err *err);

/* The allocation rows of a run, in the order written; free with store_free_allocations. */
int store_read_allocations(struct store *st, int64_t run_id, struct allocation **rows, size_t *n,
			   struct gp_err *err);
void store_free_allocations(struct allocation *rows, size_t n);
/* The node_allocations rows of a run (idle_by: node), likewise; none for a
 * run without them. */
int store_read_node_allocations(struct store *st, int64_t run_id, struct allocation **rows,
				size_t *n, struct gp_err *err);

/* More of a run read back, for reports (html.h).  Each fills a malloc'ed
 * array of *n rows, in the order written, whose strings the rows own; free
 * it with the matching store_free_ function.  NULL columns read as NAN. */
int store_read_metrics(struct store *st, int64_t run_id, struct metric **rows, size_t *n,
		       struct gp_err *err);
void store_free_metrics(struct metric *rows, size_t n);
int store_read_timeseries(struct store *st, int64_t run_id, struct ts_row **rows, size_t *n,
			  struct gp_err *err);
void store_free_timeseries(struct ts_row *rows, size_t n);
int store_read_pending_reasons(struct store *st, int64_t run_id, struct pending_reason **rows,
			       size_t *n, struct gp_err *err);
void store_free_pending_reasons(struct pending_reason *rows, size_t n);
/* In rank order. */
int store_read_findings(struct store *st, int64_t run_id, struct finding **rows, size_t *n,
			struct gp_err *err);
void store_free_findings(struct finding *rows, size_t n);

/* One point of a load test: a run of the same scenario (name and file hash)
 * with a --set of some workload's requests.rate, as `search --max` probes. */
struct store_load_point {
	int64_t run_id;
	double rate;                                                      /* requests per second */
	double ttft_p99_s, e2e_p99_s, throughput_rps, slo_attainment_pct; /* scope all */
};

/* The load-test points of run_id's scenario, by rate (none: *n = 0); free(). */
int store_read_load_curve(struct store *st, int64_t run_id, struct store_load_point **pts,
			  size_t *n, struct gp_err *err);

/* One request's latencies (only with output.requests). */
struct store_latency {
	double arrival_s, ttft_s, e2e_s; /* NAN: never reached */
	double tpot_s;                   /* NAN: fewer than 2 tokens, or unfinished */
	int64_t output_tokens;
	char *workload; /* owned */
};

/* The requests of a run by arrival (none: *n = 0); free with
 * store_free_latencies. */
int store_read_latencies(struct store *st, int64_t run_id, struct store_latency **rows, size_t *n,
			 struct gp_err *err);
void store_free_latencies(struct store_latency *rows, size_t n);

/* What a scope of a run is (the scopes table): "all", a pool with its GPU
 * type, or a workload ("batch" or "inference") with its model, if any.
 * Strings are owned; "" where the column is NULL. */
struct store_scope {
	char *scope;
	char *kind;          /* "all", "pool", "workload" */
	char *workload_kind; /* "batch", "inference"; "" for all and pools */
	char *model;         /* the catalog name ("llama-2-7b"); "" for none */
	char *gpu;           /* the pool's GPU type; "" for others */
};

/* The scopes of a run in timeseries order (none for runs written before
 * the table existed: *n = 0); free with store_free_scopes. */
int store_read_scopes(struct store *st, int64_t run_id, struct store_scope **rows, size_t *n,
		      struct gp_err *err);
void store_free_scopes(struct store_scope *rows, size_t n);

/* --- Streaming a run (store_stream.c) ---------------------------------------
 * For exports whose memory must stay that of one series however long the
 * run (`report --openmetrics`): a cursor yields one row at a time, its
 * strings borrowed until the next call; the database is only read.
 *   STORE_Q_SERIES    each scope but all, in the order its first timeseries
 *                     row was written: series (that row's rowid), name, pool, text
 *                     (the model of an inference workload; NULL for none)
 *   STORE_Q_WINDOWS   the timeseries rows of scope key, in time order: ts
 *   STORE_Q_REQUESTS  the requests of the series with a model, by series
 *                     number then arrival: series, lat (workload NULL)
 *   STORE_Q_COSTS     allocation rows grouped by name (names in the order
 *                     first written), each name's in the order written:
 *                     name, end, value (total_cost, NAN for NULL)
 *   STORE_Q_PENDING   pending_reasons rows but scope all: name, text, value
 *   STORE_Q_METRIC    the values of metric key2 of scope key: value
 *   STORE_Q_PRICED    one row, value 1 if any allocation has a cost, else 0 */
enum store_query {
	STORE_Q_SERIES,
	STORE_Q_WINDOWS,
	STORE_Q_REQUESTS,
	STORE_Q_COSTS,
	STORE_Q_PENDING,
	STORE_Q_METRIC,
	STORE_Q_PRICED,
};

struct store_item {
	int64_t series;
	const char *name, *text;
	bool pool;
	struct ts_row ts;
	struct store_latency lat;
	sim_time end;
	double value;
};

struct store_cursor;

/* Gives the connection a fixed page cache (64 MiB) for reading a run
 * again and again; before the cursors. */
int store_stream_begin(struct store *st, struct gp_err *err);
/* A cursor of query q over run run_id, at its start with no keys bound. */
int store_cursor_open(struct store *st, enum store_query q, int64_t run_id,
		      struct store_cursor **out, struct gp_err *err);
/* Back to the start, with keys key and key2 (NULL: unbound). */
void store_cursor_rewind(struct store_cursor *c, const char *key, const char *key2);
/* The next row into *it (*got false at the end); GP_ERUNTIME on a read error. */
int store_cursor_next(struct store_cursor *c, struct store_item *it, bool *got, struct gp_err *err);
void store_cursor_close(struct store_cursor *c);

/* The jobs of a workload that Kueue admitted with a flavor, and their
 * GPU-hours (gpus x time from first start to end, or to the end of the
 * run); owned strings. */
struct store_flavor {
	char *workload;
	char *flavor;
	int64_t jobs;
	double gpu_hours;
};

/* Per workload and flavor, in name order (none for runs written before
 * the flavor column: *n = 0); free with store_free_flavors. */
int store_read_flavors(struct store *st, int64_t run_id, struct store_flavor **rows, size_t *n,
		       struct gp_err *err);
void store_free_flavors(struct store_flavor *rows, size_t n);

/* Showback by team (docs/cost.md): per value of the workloads' team label
 * (NULL: none), what their allocations cost, the idle charged to them, and
 * their verified results. */
struct store_team {
	char *team;
	double cost, idle, verified;
};

/* The teams of run_id, by name (no team last); none for a database from
 * before the team column.  Free with store_free_teams. */
int store_read_teams(struct store *st, int64_t run_id, struct store_team **rows, size_t *n,
		     struct gp_err *err);
void store_free_teams(struct store_team *rows, size_t n);

/* The backtest rows of run_id (backtest.h), in the order written; none for
 * another run or a database without the table.  Free with store_free_backtest. */
int store_read_backtest(struct store *st, int64_t run_id, struct backtest_row **rows, size_t *n,
			struct gp_err *err);
void store_free_backtest(struct backtest_row *rows, size_t n);

/* The latest run with backtest rows of the scenario whose file's SHA-256 is
 * sha256 (runs.scenario_sha256); *run_id = 0 when there is none. */
int store_latest_backtest(struct store *st, const char *sha256, int64_t *run_id,
			  struct gp_err *err);

/* One column of a row, as SQLite holds it. */
enum store_cell_type { STORE_NULL, STORE_INTEGER, STORE_REAL, STORE_TEXT };
struct store_cell {
	const char *name;
	enum store_cell_type type;
	int64_t integer;
	double real;
	const char *text; /* valid during the callback only */
};

/* Called with the columns of one row, run_id left out. */
typedef void (*store_row_fn)(void *ctx, const struct store_cell *cells, size_t n);

/* Calls fn for every row of table (one of runs, params, metrics, findings,
 * advice) whose run_id is run_id, in the order written, with whatever
 * columns the database has: exports stay whole when tables gain columns.
 * A table the database does not have yet has no rows. */
int store_each_row(struct store *st, const char *table, int64_t run_id, store_row_fn fn, void *ctx,
		   struct gp_err *err);

void store_close(struct store *st);

#endif
