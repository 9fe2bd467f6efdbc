/*
 * store_writer.c - a run's job rows written while the run goes on
 * (store.h: store_writer_*).
 *
 * The run hands its final job rows over in batches (results.h's
 * results_sink).  On a writer thread, each batch is copied into one of
 * STREAM_DEPTH buffers allocated once and recycled, and a mutex with two
 * condition variables passes them to the writer, which owns the SQLite
 * connection from its first batch to the end of the run: memory is bounded
 * by the batches in flight, and the run waits only when every buffer is
 * full.  With GPUPLAN_THREADS=1 the same writer runs on the caller's
 * thread, at the same points: the statements, and so the database, are the
 * same either way.
 *
 * The first batch opens the database and takes its write lock (BEGIN
 * IMMEDIATE), inserts the runs row with its figures NULL, and from then on
 * every batch is inserted as it comes; once the run is whole
 * (sink.simulated) the rest of its job rows follow while the caller reduces
 * metrics and diagnoses, and store_writer_finish writes the other tables,
 * the run's figures, and commits.  The timeseries rows of the windows closed
 * meanwhile go with each batch, once the step is one the run can end with
 * (collect_least_step), and with one pool their allocation rows
 * (cost_window_rows): an adaptive step that merges its windows after that
 * rewrites the rows, and the writer deletes the ones it stored and stores
 * them again (results.ts_merges); the end makes the allocation rows stored
 * again and compares them with the run's, and stores them again if any
 * differs.  So the tables get the rows, and the rowids, that one insert at
 * the end gives.  The writer also marks the text ids of the job rows it
 * stores, which job_texts lists at the end.  One transaction still holds
 * the whole run.  A run whose rows never fill a batch, or whose database another
 * writer holds at its first batch (the lock is then not waited for while
 * the run goes on), is written at its end in one go, as store_write_run
 * writes it: sweeps and small runs keep the lock for the commit only.
 *
 * The writer records its first error (a full disk, a constraint, a lock
 * timeout, a limit) and stops; the run sees it at its next hand-off (and
 * then hands nothing more) and store_writer_finish returns it, having rolled
 * the transaction back.  A run that fails itself leaves the database as it
 * was: rolled back, and a file this run created removed.
 */
#include "gpuplan/store.h"

#include "gpuplan/collect.h"
#include "gpuplan/cost.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_int.h"

/* Rows per batch: a batch is about 400 KB of records and a few
 * milliseconds of SQLite's work, so the hand-offs cost nothing beside it. */
#define STREAM_BATCH_ROWS 4096
#define STREAM_DEPTH      4 /* batches in flight */

struct stream_slot {
	struct job_record *rows; /* STREAM_BATCH_ROWS, or sink.batch */
	size_t n, n_nodes;
	struct ts_row *ts; /* timeseries rows ts_first.. of results.ts */
	size_t n_ts, cap_ts, ts_first;
	uint32_t ts_merges;       /* results.ts_merges when they were copied */
	struct allocation *alloc; /* the allocation rows of their windows */
	size_t n_alloc, cap_alloc;
};

struct store_writer {
	struct results_sink sink;
	char *path;
	const struct scenario *sc;
	const struct results *r;
	bool threaded;
	/* The writer's: the connection and where the run's rows are. */
	struct store *st;
	bool began;     /* the transaction is open, the runs row in */
	bool created;   /* the file did not exist before this run */
	size_t existed; /* the length of path's longest folder that existed then */
	int64_t id;
	size_t written;              /* job rows inserted */
	struct sti_texts_used texts; /* the text ids they use */
	size_t ts_written;           /* timeseries rows inserted */
	uint32_t ts_merges_written;  /* the results.ts_merges they were made at */
	size_t n_alloc;              /* allocation rows inserted, */
	size_t alloc_windows;        /* of so many windows from the first */
	struct sti_jobs jc;
	struct gp_err err; /* the writer's first error; read after it stopped */
	int rc;
	/* What the run reads at each hand-off: nothing more to hand. */
	atomic_bool skip;
	/* The hand-off: a ring of slots, head the writer's, the rest free. */
	pthread_mutex_t mu;
	pthread_cond_t put, take;
	struct stream_slot ring[STREAM_DEPTH];
	size_t head, count;
	bool whole, stop, started;
	pthread_t thread;
	double writer_cpu; /* the writer thread's CPU seconds, once it ended */
	size_t batches;
	/* The run's: the timeseries rows handed on (ts_take), and the allocation
	 * rows of their windows (alloc_take). */
	sim_time ts_step; /* collect_least_step: rows made at a finer step wait */
	size_t ts_handed;
	uint32_t ts_merges_handed;
	size_t alloc_handed;      /* windows whose allocation rows went with them */
	bool alloc_stop;          /* some did not: the rest wait for the end */
	int32_t *pool_of;         /* one pool: every workload's is it (cost.h) */
	struct stream_slot local; /* the hand-off without a thread */
};

static void stream_fail(struct store_writer *w, int rc)
{
	w->rc = rc;
	atomic_store(&w->skip, true);
}

/* Opens the database and, unless another writer holds it, begins the run's
 * transaction with its runs row.  The lock is tried, not waited for: the
 * run goes on meanwhile, and is written at its end instead. */
static void begin(struct store_writer *w, size_t n_nodes)
{
	int rc = store_open(w->path, &w->st, &w->err);
	if (rc) {
		stream_fail(w, rc);
		return;
	}
	sqlite3_busy_timeout(w->st->db, 0);
	int step = sqlite3_exec(w->st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (step != SQLITE_OK && step != SQLITE_BUSY)
		rc = sti_db_error(w->st, &w->err, "starting the run's transaction");
	sqlite3_busy_timeout(w->st->db, STORE_BUSY_TIMEOUT_MS);
	if (rc || step == SQLITE_BUSY) {
		if (rc)
			stream_fail(w, rc);
		else
			atomic_store(&w->skip, true); /* written at the end */
		return;
	}
	w->began = true;
	sti_job_ids(&w->jc, w->sc, n_nodes);
	w->jc.path = w->st->path;
	if ((rc = sti_write_run_row(w->st, w->sc, NULL, &w->id, &w->err)))
		stream_fail(w, rc);
}

/* Inserts the rows (the writer's side of a hand-off). */
static void write_jobs(struct store_writer *w, const struct job_record *rows, size_t n,
		       size_t n_nodes)
{
	if (atomic_load(&w->skip))
		return;
	if (!w->began)
		begin(w, n_nodes);
	if (!w->began || atomic_load(&w->skip))
		return;
	w->jc.jobs = rows;
	int rc = sti_insert_jobs(w->st, &w->jc, n, w->id, &w->err);
	if (rc)
		stream_fail(w, rc);
	sti_job_mark(&w->texts, &w->jc, rows, n); /* job_texts' ids, for the end */
	w->written += n;
}

/* Inserts timeseries rows first.. and the allocation rows of their windows
 * (the writer's side); rows stored at an earlier results.ts_merges are
 * deleted first, as a merge rewrote them. */
static void write_ts(struct store_writer *w, const struct ts_row *rows, size_t first, size_t n,
		     uint32_t merges, const struct allocation *alloc, size_t n_alloc)
{
	if (!w->began || atomic_load(&w->skip))
		return;
	int rc = GP_OK;
	if (merges != w->ts_merges_written) {
		if (w->ts_written)
			rc = sti_delete_run_rows(w->st, "timeseries", w->id, &w->err);
		if (!rc && w->n_alloc)
			rc = sti_delete_run_rows(w->st, "allocations", w->id, &w->err);
		w->ts_written = w->n_alloc = w->alloc_windows = 0;
		w->ts_merges_written = merges;
	}
	assert(rc || first == w->ts_written);
	(void)first;
	if (!rc && n)
		rc = sti_insert_ts(w->st, rows, n, w->id, &w->err);
	if (!rc && n_alloc)
		rc = sti_insert_allocations(w->st, w->sc, alloc, n_alloc, w->id, &w->err);
	if (rc) {
		stream_fail(w, rc);
		return;
	}
	w->ts_written += n;
	w->n_alloc += n_alloc;
	if (n_alloc)
		w->alloc_windows += n / (1 + w->sc->n_pools + w->sc->n_workloads);
}

/* The job rows after the last batch, from the whole results. */
static void write_rest(struct store_writer *w)
{
	if (w->began && !atomic_load(&w->skip))
		write_jobs(w, w->r->jobs + w->written, w->r->n_jobs - w->written, w->jc.n_nodes);
}

static void *writer_main(void *arg)
{
	struct store_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->count && !w->whole && !w->stop)
			pthread_cond_wait(&w->take, &w->mu);
		if (w->stop || !w->count)
			break;
		struct stream_slot *s = &w->ring[w->head];
		pthread_mutex_unlock(&w->mu);
		write_jobs(w, s->rows, s->n, s->n_nodes);
		write_ts(w, s->ts, s->ts_first, s->n_ts, s->ts_merges, s->alloc, s->n_alloc);
		pthread_mutex_lock(&w->mu);
		w->head = (w->head + 1) % STREAM_DEPTH;
		w->count--;
		pthread_cond_signal(&w->put);
	}
	bool rest = w->whole && !w->stop;
	pthread_mutex_unlock(&w->mu);
	if (rest)
		write_rest(w);
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	w->writer_cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	return NULL;
}

/* Starts the writer thread and its buffers at the first batch; without a
 * thread, the writer runs on the caller's. */
static void start(struct store_writer *w)
{
	w->started = true;
	for (size_t k = 0; k < STREAM_DEPTH; k++)
		w->ring[k].rows = gp_xmalloc(w->sink.batch * sizeof *w->ring[k].rows);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0)
		w->threaded = false;
}

/* The timeseries rows to hand on with a batch (the run's side): those of
 * the windows closed since the last hand-off, or all of them again after a
 * merge, at most a batch, once the step is one the run can end with; *first
 * receives the first row's index and *merges results.ts_merges.  The rows
 * go to the writer while the run goes on, instead of after it, and the last
 * ones at the end. */
static size_t ts_take(struct store_writer *w, size_t *first, uint32_t *merges)
{
	const struct results *r = w->r;
	size_t per = 1 + w->sc->n_pools + w->sc->n_workloads; /* rows a window */
	if (r->ts_merges != w->ts_merges_handed) {
		w->ts_merges_handed = r->ts_merges;
		w->ts_handed = w->alloc_handed = 0;
		w->alloc_stop = false;
	}
	*first = w->ts_handed;
	*merges = w->ts_merges_handed;
	if (r->step < w->ts_step || r->n_ts <= w->ts_handed || r->n_ts % per)
		return 0;
	size_t windows = (r->n_ts - w->ts_handed) / per; /* at least 1 */
	size_t most = w->sink.batch / per ? w->sink.batch / per : 1;
	size_t n = (windows < most ? windows : most) * per; /* whole windows */
	w->ts_handed += n;
	return n;
}

/* The allocation rows of the windows whose timeseries rows go with a
 * hand-off (first.. n rows), into s (the run's side), where they are the
 * ones the run's end will make (cost_account): with one pool, whose every
 * workload that ran used it, and windows from the scenario start, so that
 * no __idle__ row of the time before them comes first.  Elsewhere, or once
 * a hand-off had none, they wait for the end.  The end compares them with
 * the run's rows and stores them again if they differ. */
static void alloc_take(struct store_writer *w, struct stream_slot *s, size_t first, size_t n)
{
	const struct results *r = w->r;
	const struct scenario *sc = w->sc;
	size_t per = 1 + sc->n_pools + sc->n_workloads;
	s->n_alloc = 0;
	if (!n)
		return;
	if (w->alloc_stop || sc->n_pools != 1 || r->ts[0].t != 0 ||
	    w->alloc_handed != first / per) {
		w->alloc_stop = true;
		return;
	}
	if (!w->pool_of)
		w->pool_of = gp_xcalloc(sc->n_workloads + 1, sizeof *w->pool_of); /* pool 0 */
	for (size_t k = first; k < first + n; k += per)
		cost_window_rows(sc, &r->ts[k], r->step, w->pool_of, &s->alloc, &s->n_alloc,
				 &s->cap_alloc);
	w->alloc_handed += n / per;
}

/* The run's side of a hand-off: rows final in submission order, and the
 * timeseries rows of the windows closed meanwhile. */
static void sink_jobs(void *ctx, const struct job_record *rows, size_t n, size_t n_nodes)
{
	struct store_writer *w = ctx;
	if (atomic_load(&w->skip))
		return; /* the writer failed, or writes the run at its end */
	w->batches++;
	if (w->threaded && !w->started)
		start(w);
	size_t ts_first;
	uint32_t merges;
	size_t n_ts = ts_take(w, &ts_first, &merges);
	if (!w->threaded) {
		alloc_take(w, &w->local, ts_first, n_ts);
		write_jobs(w, rows, n, n_nodes);
		write_ts(w, n_ts ? w->r->ts + ts_first : NULL, ts_first, n_ts, merges,
			 w->local.alloc, w->local.n_alloc);
		return;
	}
	pthread_mutex_lock(&w->mu);
	while (w->count == STREAM_DEPTH)
		pthread_cond_wait(&w->put, &w->mu);
	struct stream_slot *s = &w->ring[(w->head + w->count) % STREAM_DEPTH];
	pthread_mutex_unlock(&w->mu);
	memcpy(s->rows, rows, n * sizeof *rows); /* the slot is the run's until counted */
	s->n = n;
	s->n_nodes = n_nodes;
	GP_GROW(s->ts, s->cap_ts, n_ts);
	if (n_ts)
		memcpy(s->ts, w->r->ts + ts_first, n_ts * sizeof *s->ts);
	s->n_ts = n_ts;
	s->ts_first = ts_first;
	s->ts_merges = merges;
	alloc_take(w, s, ts_first, n_ts);
	pthread_mutex_lock(&w->mu);
	w->count++;
	pthread_cond_signal(&w->take);
	pthread_mutex_unlock(&w->mu);
}

static void sink_simulated(void *ctx)
{
	struct store_writer *w = ctx;
	if (!w->started) {
		write_rest(w);
		return;
	}
	pthread_mutex_lock(&w->mu);
	w->whole = true;
	pthread_cond_signal(&w->take);
	pthread_mutex_unlock(&w->mu);
}

/* GPUPLAN_THREADS=1, or one processor: everything on the caller's thread. */
static bool use_thread(void) { return gp_default_jobs(2) > 1; }

/* GPUPLAN_WRITER_ROWS=N: rows per batch (tests use small ones). */
static size_t batch_rows(void)
{
	const char *env = getenv("GPUPLAN_WRITER_ROWS");
	long n = env && *env ? strtol(env, NULL, 10) : 0;
	return n > 0 && n <= 1 << 20 ? (size_t)n : STREAM_BATCH_ROWS;
}

/* Whether the file and the folders above it exist now: which of them a
 * failed run made, and removes. */
static void note_existing(struct store_writer *w)
{
	struct stat sb;
	w->created = stat(w->path, &sb) != 0;
	char *dir = gp_xstrdup(w->path);
	w->existed = 0;
	for (char *slash; (slash = strrchr(dir, '/')) && slash != dir;) {
		*slash = '\0';
		if (stat(dir, &sb) == 0) {
			w->existed = strlen(dir);
			break;
		}
	}
	free(dir);
}

/* Removes the file this run created, its journals, and the folders made
 * for it (each only while empty). */
static void remove_created(const struct store_writer *w)
{
	static const char *const beside[] = {"", "-journal", "-wal", "-shm"};
	char *f = gp_xmalloc(strlen(w->path) + 16);
	for (size_t k = 0; k < sizeof beside / sizeof *beside; k++) {
		sprintf(f, "%s%s", w->path, beside[k]);
		unlink(f);
	}
	strcpy(f, w->path);
	for (char *slash; (slash = strrchr(f, '/')) && (size_t)(slash - f) > w->existed;) {
		*slash = '\0';
		if (rmdir(f) != 0)
			break;
	}
	free(f);
}

struct store_writer *store_writer_create(const char *path, const struct scenario *sc,
					 const struct results *r)
{
	struct store_writer *w = gp_xcalloc(1, sizeof *w);
	w->path = gp_xstrdup(path);
	note_existing(w);
	w->sc = sc;
	w->r = r;
	w->threaded = use_thread();
	w->ts_step = collect_least_step(sc);
	w->sink = (struct results_sink){sink_jobs, sink_simulated, w, batch_rows()};
	atomic_init(&w->skip, false);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->put, NULL);
	pthread_cond_init(&w->take, NULL);
	return w;
}

const struct results_sink *store_writer_sink(struct store_writer *w) { return &w->sink; }

/* Waits for the writer; stop: drop what it has not written. */
static void join(struct store_writer *w, bool stop)
{
	if (!w->started || !w->threaded)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = stop;
	pthread_cond_signal(&w->take);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
}

/* A run that failed leaves the database as it was: rolled back, and gone
 * if this run created it (and no other process wrote a run into it since;
 * a file whose runs cannot be counted holds none: its schema was never
 * made whole), with the folders made for it. */
static void drop_run(struct store_writer *w)
{
	int64_t runs = 0;
	if (w->st) {
		sti_rollback(w->st);
		struct gp_err ignored GP_ERR_SCOPE = {0};
		if (w->created && sti_query_int(w->st, "SELECT count(*) FROM runs", &runs,
						"counting runs", &ignored))
			runs = 0;
		store_close(w->st);
		w->st = NULL;
	}
	if (w->created && runs == 0)
		remove_created(w);
}

static bool same_allocation(const struct allocation *a, const struct allocation *b)
{
	return !strcmp(a->name, b->name) && a->start == b->start && a->end == b->end &&
	       a->workload == b->workload && a->pool == b->pool &&
	       !memcmp(&a->gpu_hours, &b->gpu_hours,
		       (size_t)((const char *)(&a->gpu_efficiency + 1) -
				(const char *)&a->gpu_hours));
}

/* Whether the allocation rows stored while the run went on are the first
 * of the run's, field for field (their figures bit for bit): made again
 * from the same timeseries rows (the merges are the same), they are
 * compared a window at a time, so that none is kept meanwhile. */
static bool same_allocations(const struct store_writer *w)
{
	const struct results *r = w->r;
	size_t per = 1 + w->sc->n_pools + w->sc->n_workloads, at = 0, n = 0, cap = 0;
	struct allocation *rows = NULL;
	bool same = w->alloc_windows * per <= r->n_ts;
	for (size_t k = 0; same && k < w->alloc_windows; k++) {
		n = 0;
		cost_window_rows(w->sc, &r->ts[k * per], r->step, w->pool_of, &rows, &n, &cap);
		same = at + n <= r->n_allocations;
		for (size_t i = 0; same && i < n; i++)
			same = same_allocation(&rows[i], &r->allocations[at + i]);
		at += n;
	}
	free(rows);
	return same && at == w->n_alloc;
}

/* The rest of the run, its figures, the commit. */
static int write_end(struct store_writer *w, struct gp_err *err)
{
	if (!w->began) { /* written in one go, as store_write_run writes a run */
		if (!w->st && (w->rc = store_open(w->path, &w->st, err)))
			return w->rc;
		return store_write_run(w->st, w->sc, w->r, &w->id, err);
	}
	int rc = sti_finish_run_row(w->st, w->r, w->id, err);
	struct sti_done done = {w->written, w->ts_written, w->n_alloc, &w->texts};
	if (!rc && w->r->ts_merges != w->ts_merges_written) { /* merged since */
		if (done.ts)
			rc = sti_delete_run_rows(w->st, "timeseries", w->id, err);
		done.ts = 0;
	}
	if (!rc && done.allocations && (!done.ts || !same_allocations(w))) {
		rc = sti_delete_run_rows(w->st, "allocations", w->id, err);
		done.allocations = 0;
	}
	if (!rc)
		rc = sti_write_rows(w->st, w->sc, w->r, w->id, &done, err);
	if (!rc)
		rc = sti_exec(w->st, "COMMIT", "committing the run", err);
	if (rc) {
		sti_rollback(w->st);
		return rc;
	}
	sti_wal_now(w->st);
	return GP_OK;
}

static void stream_free(struct store_writer *w)
{
	for (size_t k = 0; k < STREAM_DEPTH; k++) {
		free(w->ring[k].rows);
		free(w->ring[k].ts);
		free(w->ring[k].alloc);
	}
	free(w->local.alloc);
	free(w->texts.ids);
	free(w->pool_of);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->put);
	pthread_cond_destroy(&w->take);
	free(w->path);
	gp_err_free(&w->err);
	free(w);
}

int store_writer_finish(struct store_writer *w, bool ok, struct store **st, int64_t *run_id,
			struct store_writer_stats *stats, struct gp_err *err)
{
	*st = NULL;
	join(w, !ok);
	if (stats)
		*stats = (struct store_writer_stats){w->batches, w->started && w->threaded,
						     w->writer_cpu};
	int rc = GP_OK;
	if (ok && w->rc) {
		gp_err_move(err, &w->err);
		rc = w->rc;
	} else if (ok) {
		rc = write_end(w, err);
	}
	if (!ok || rc)
		drop_run(w); /* the writer's failure fails the run: nothing of it stays */
	else
		*run_id = w->id;
	*st = w->st;
	stream_free(w);
	return rc;
}
