/*
 * bench.c - `make bench`: the benchmarks of docs/benchmarks.md.
 *
 * Each benchmark runs in a child process so that its peak RSS is its own
 * (wait4 reports the child's rusage).  Results are printed and appended to
 * the `bench` table of the database named on the command line.  These are
 * measurements, never assertions: a slow machine does not fail a build.
 * A second argument runs only the benchmarks whose name contains it:
 * build-bench/bench/bench results/bench.db M/M/1
 */
#include "gpuplan/engine.h"
#include "gpuplan/scenario.h"
#include "gpuplan/sort.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"
#include "gpuplan/sweep.h"
#include "gpuplan/units.h"
#include "gpuplan/ytree.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct outcome {
	double wall_seconds;
	double events;
	double db_mib;        /* size of the database written; 0: none */
	double write_seconds; /* the caller's CPU after the simulation: the end of the writing */
	double sim_seconds;   /* the caller's CPU up to the end of the simulation */
	double floor_seconds; /* SQLite alone writing the run's job rows (sqlite_floor) */
	double cpu_seconds;   /* the child's user + system time (all its threads) */
};

static double cpu_of(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time of this process (its threads), the figure of the cases that
 * run in one process: on a machine shared with other work, wall time says
 * more about the load than about the code (sweeps and commands, which fork,
 * keep wall time). */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CPU time of the calling thread. */
static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Runs fn(ctx, out) in a child of its own and copies the child's `size` bytes
 * of out back; *ru gets the child's resource usage.  Every measurement runs
 * so, that each starts from a fresh address space (runs in this process would
 * reuse the pages their predecessors touched).  Non-zero: the child failed.
 */
static int in_child(int (*fn)(const void *ctx, void *out), const void *ctx, void *out, size_t size,
		    struct rusage *ru)
{
	int fd[2];
	if (pipe(fd))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		int rc = fn(ctx, out);
		if (write(fd[1], out, size) != (ssize_t)size)
			rc = 1;
		_exit(rc);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], out, size);
	close(fd[0]);
	int status;
	return pid < 0 || wait4(pid, &status, 0, ru) < 0 || !WIFEXITED(status) ||
	       WEXITSTATUS(status) || got != (ssize_t)size;
}

/*
 * The classic hold model: keep `pending` events in the queue; each step pops
 * the earliest and schedules one at now + an exponential increment.  The
 * increments are drawn beforehand so that the figure is the queue's own.
 */
#define HOLD_PENDING 100000
#define HOLD_STEPS   10000000
#define HOLD_DRAWS   (1 << 16)

static sim_time *hold_draws(void)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	sim_time *draw = malloc(HOLD_DRAWS * sizeof *draw);
	for (size_t i = 0; i < HOLD_DRAWS; i++)
		draw[i] = 1 + (sim_time)gsl_ran_exponential(rng, 1e6);
	gsl_rng_free(rng);
	return draw;
}

static int bench_engine_hold(struct outcome *o)
{
	sim_time *draw = hold_draws();
	struct engine e;
	engine_init(&e);
	for (size_t i = 0; i < HOLD_PENDING; i++)
		engine_push(&e, draw[i % HOLD_DRAWS], 0, (uint32_t)i, 0);
	double t0 = cpu_s();
	struct event ev;
	for (size_t i = 0; i < HOLD_STEPS; i++) {
		engine_pop(&e, &ev);
		engine_push(&e, ev.t + draw[i & (HOLD_DRAWS - 1)], 0, ev.id, 0);
	}
	o->wall_seconds = cpu_s() - t0;
	o->events = (double)HOLD_STEPS;
	engine_free(&e);
	free(draw);
	return 0;
}

/* A peer for the figure above, run beside it: the same hold model on a
 * plain binary heap ordered by (time, scheduling order).  Returns its wall
 * seconds. */
struct heap_entry {
	sim_time t;
	uint32_t order, id;
};

static bool heap_before(const struct heap_entry *a, const struct heap_entry *b)
{
	return a->t != b->t ? a->t < b->t : a->order < b->order;
}

static void heap_push(struct heap_entry *h, size_t *n, struct heap_entry x)
{
	size_t i = (*n)++;
	for (; i && heap_before(&x, &h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

static struct heap_entry heap_pop(struct heap_entry *h, size_t *n)
{
	struct heap_entry top = h[0], x = h[--*n];
	size_t i = 0;
	for (size_t c; (c = 2 * i + 1) < *n; i = c) {
		if (c + 1 < *n && heap_before(&h[c + 1], &h[c]))
			c++;
		if (!heap_before(&h[c], &x))
			break;
		h[i] = h[c];
	}
	h[i] = x;
	return top;
}

static double heap_hold(void)
{
	sim_time *draw = hold_draws();
	struct heap_entry *h = malloc(HOLD_PENDING * sizeof *h);
	size_t n = 0;
	uint32_t order = 0;
	for (size_t i = 0; i < HOLD_PENDING; i++)
		heap_push(h, &n, (struct heap_entry){draw[i % HOLD_DRAWS], order++, (uint32_t)i});
	double t0 = cpu_s();
	for (size_t i = 0; i < HOLD_STEPS; i++) {
		struct heap_entry x = heap_pop(h, &n);
		heap_push(h, &n,
			  (struct heap_entry){x.t + draw[i & (HOLD_DRAWS - 1)], order++, x.id});
	}
	double wall = cpu_s() - t0;
	free(h);
	free(draw);
	return wall;
}

/*
 * The peer of the 1 M-customer M/M/1: the same model written directly on
 * gpuplan's event queue, as a bare C simulation would be (arrivals at 0.9/h,
 * exponential service with mean 1 h, one server, a FIFO of arrival times),
 * with the statistics gpuplan gives by default (mean and percentiles of the
 * wait, from the sorted waits).  Returns its wall seconds; *mean_wait_h
 * (theory: 9 h) and *p99_wait_h show it simulated the queue.
 */
enum { BARE_ARRIVAL, BARE_DEPARTURE };

static double bare_mm1(size_t customers, double *mean_wait_h, double *p99_wait_h)
{
	const double hour = 3600e6; /* µs */
	double t0 = cpu_s();
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	sim_time *fifo = gp_xmalloc(customers * sizeof *fifo); /* arrival times, in order */
	double *waits = gp_xmalloc(customers * sizeof *waits);
	size_t head = 0, tail = 0, arrived = 0, served = 0;
	bool busy = false;
	struct engine e;
	engine_init(&e);
	engine_push(&e, (sim_time)(gsl_ran_exponential(rng, hour / 0.9)), BARE_ARRIVAL, 0, 0);
	struct event ev;
	while (engine_pop(&e, &ev)) {
		if (ev.type == BARE_ARRIVAL) {
			fifo[tail++] = ev.t;
			if (++arrived < customers)
				engine_push(&e,
					    ev.t + (sim_time)gsl_ran_exponential(rng, hour / 0.9),
					    BARE_ARRIVAL, 0, 0);
		} else {
			busy = false;
		}
		if (!busy && head < tail) {
			waits[served++] = (double)(ev.t - fifo[head++]) / 1e6;
			engine_push(&e, ev.t + (sim_time)gsl_ran_exponential(rng, hour),
				    BARE_DEPARTURE, 0, 0);
			busy = true;
		}
	}
	sort_doubles(waits, served);
	*mean_wait_h = gsl_stats_mean(waits, 1, served) / 3600;
	*p99_wait_h = gsl_stats_quantile_from_sorted_data(waits, 1, served, 0.99) / 3600;
	engine_free(&e);
	free(fifo);
	free(waits);
	gsl_rng_free(rng);
	return cpu_s() - t0;
}

/* The best of `runs` runs of bare_mm1, each in a child (in_child), as
 * gpuplan's runs are.  Returns HUGE_VAL when a child failed. */
struct bare_run {
	double wall, mean_wait_h, p99_wait_h;
};

static int run_bare(const void *customers, void *out)
{
	struct bare_run *b = out;
	b->wall = bare_mm1(*(const size_t *)customers, &b->mean_wait_h, &b->p99_wait_h);
	return 0;
}

static double best_bare_mm1(size_t customers, int runs, double *mean_wait_h, double *p99_wait_h)
{
	double best = HUGE_VAL;
	for (int r = 0; r < runs; r++) {
		struct bare_run b;
		struct rusage ru;
		if (in_child(run_bare, &customers, &b, sizeof b, &ru))
			return HUGE_VAL;
		best = fmin(best, b.wall);
		*mean_wait_h = b.mean_wait_h;
		*p99_wait_h = b.p99_wait_h;
	}
	return best;
}

/*
 * SQLite alone storing a run's job rows, as cheaply as we found it can: a
 * bound on any run that writes them as the jobs table of the contract
 * (docs/results.md), however fast its simulation.  The rows' 14 columns,
 * with numbers for the texts that repeat (workload, node, status; gpuplan's
 * job_rows stores them so too), go into a fresh table with neither key nor index,
 * the journal and syncing off, in one transaction, through one prepared
 * statement of 64 rows, as gpuplan's writer batches them (store.c; 256 or
 * 1,000 rows a statement were no faster).  The database goes to `file`;
 * returns the wall seconds, or a negative value when SQLite failed.
 */
#define FLOOR_BATCH 64
#define FLOOR_COLS  14

static void bind_floor_row(sqlite3_stmt *st, int p, const struct results *r, size_t i)
{
	const struct job_record *j = &r->jobs[i];
	double submit = (double)j->submit / 1e6, start = (double)j->start / 1e6;
	sqlite3_bind_int64(st, p, 1);
	sqlite3_bind_int64(st, p + 1, j->job_id);
	sqlite3_bind_int(st, p + 2, j->workload);
	sqlite3_bind_double(st, p + 3, submit);
	if (j->start != SIM_NEVER) {
		sqlite3_bind_double(st, p + 4, start);
		sqlite3_bind_double(st, p + 6, start - submit);
	}
	if (j->end != SIM_NEVER)
		sqlite3_bind_double(st, p + 5, (double)j->end / 1e6);
	sqlite3_bind_int(st, p + 7, j->gpus);
	if (j->node >= 0)
		sqlite3_bind_int(st, p + 8, j->node);
	sqlite3_bind_int(st, p + 9, j->status);
	if (j->deadline != SIM_NEVER)
		sqlite3_bind_double(st, p + 10, (double)j->deadline / 1e6);
	sqlite3_bind_int(st, p + 11, j->deadline_met);
	sqlite3_bind_int(st, p + 12, j->verified);
	sqlite3_bind_double(st, p + 13, j->cost);
}

/* A statement inserting `rows` rows of FLOOR_COLS parameters. */
static sqlite3_stmt *floor_insert(sqlite3 *db, size_t rows)
{
	static const char row[] = ",(?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
	char sql[40 + FLOOR_BATCH * sizeof row] = "INSERT INTO jobs VALUES ";
	for (size_t k = 0; k < rows; k++)
		strcat(sql, row + (k == 0));
	sqlite3_stmt *st = NULL;
	sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	return st;
}

static double sqlite_floor(const char *file, const struct results *r)
{
	static const char setup[] =
		"PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		"CREATE TABLE jobs (run_id, job_id, workload, submit_s, start_s, end_s, queue_s, gpus,"
		" node, status, deadline_s, deadline_met, verified, cost); BEGIN";
	double t0 = cpu_s();
	sqlite3 *db;
	sqlite3_stmt *batch = NULL, *one = NULL;
	bool ok = sqlite3_open(file, &db) == SQLITE_OK &&
		  sqlite3_exec(db, setup, NULL, NULL, NULL) == SQLITE_OK &&
		  (batch = floor_insert(db, FLOOR_BATCH)) && (one = floor_insert(db, 1));
	for (size_t i = 0; ok && i < r->n_jobs;) {
		bool whole = r->n_jobs - i >= FLOOR_BATCH;
		sqlite3_stmt *st = whole ? batch : one;
		sqlite3_clear_bindings(st);
		for (size_t k = 0; k < (whole ? FLOOR_BATCH : 1); k++, i++)
			bind_floor_row(st, (int)(k * FLOOR_COLS) + 1, r, i);
		ok = sqlite3_step(st) == SQLITE_DONE && sqlite3_reset(st) == SQLITE_OK;
	}
	sqlite3_finalize(batch);
	sqlite3_finalize(one);
	ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
	ok = sqlite3_close(db) == SQLITE_OK && ok;
	return ok ? cpu_s() - t0 : -1;
}

/* A whole scenario: load (with one --set, when given), simulate, and with
 * `db` write the run into a fresh database as `gpuplan run` does; the
 * figure includes the writing then, and the database's size is kept. */
#define MAX_SETS 4

static int bench_scenario(const char *path, const char *set, bool db, struct outcome *o)
{
	struct scenario *sc;
	struct gp_err err GP_ERR_SCOPE = {0};
	char dir[] = "/tmp/gpuplan-bench-XXXXXX", file[64];
	if (db && !mkdtemp(dir))
		return 1;
	snprintf(file, sizeof file, "%s/run.db", dir);
	/* set: overrides separated by spaces */
	char copy[512], *save = NULL;
	const char *sets[MAX_SETS];
	size_t n_sets = 0;
	snprintf(copy, sizeof copy, "%s", set ? set : "");
	for (char *t = strtok_r(copy, " ", &save); t && n_sets < MAX_SETS;
	     t = strtok_r(NULL, " ", &save))
		sets[n_sets++] = t;
	double t0 = cpu_s();
	if (scenario_load(path, sets, n_sets, &sc, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	struct results r;
	results_init(&r);
	int rc;
	if (db) { /* as `gpuplan run` writes: the rows on a writer thread meanwhile */
		double load = cpu_s() - t0, m0 = thread_cpu_s();
		struct store_writer *w = store_writer_create(file, sc, &r);
		struct store_writer_stats stats;
		struct store *st;
		int64_t id;
		rc = run_simulate_to(sc, &r, store_writer_sink(w), &err);
		double m1 = thread_cpu_s();
		struct gp_err werr GP_ERR_SCOPE = {0};
		int wrc = store_writer_finish(w, rc == GP_OK, &st, &id, &stats, &werr);
		store_close(st);
		if (!rc && wrc) {
			rc = wrc;
			gp_err_move(&err, &werr);
		}
		/* On two free cores the run takes the longer of its two threads:
		 * the caller's (loading, simulating, handing rows over, writing
		 * the other tables) and the writer's (the job rows). */
		double main_cpu = load + thread_cpu_s() - m0;
		o->wall_seconds = stats.thread ? fmax(main_cpu, stats.writer_cpu) : cpu_s() - t0;
		o->write_seconds = thread_cpu_s() - m1;
		o->sim_seconds = load + m1 - m0;
	} else {
		rc = run_simulate(sc, &r, &err);
		o->wall_seconds = cpu_s() - t0;
		o->write_seconds = 0;
		o->sim_seconds = o->wall_seconds;
	}
	o->events = (double)r.events;
	if (!rc && db) {
		char floor_file[80];
		snprintf(floor_file, sizeof floor_file, "%s/floor.db", dir);
		o->floor_seconds = sqlite_floor(floor_file, &r);
	}
	struct stat sb;
	if (db && stat(file, &sb) == 0)
		o->db_mib = (double)sb.st_size / (1024.0 * 1024.0);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	results_free(&r);
	scenario_free(sc);
	if (db) {
		char cmd[96];
		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		if (system(cmd) != 0)
			rc = 1;
	}
	return rc;
}

/* A sweep benchmark: the sweep file's points, run by BENCH_SWEEP_JOBS
 * workers into a fresh database, then deleted.  The figure includes
 * loading and checking every point and writing every run; events are the
 * runs' events summed. */
#define BENCH_SWEEP_JOBS 2

static double sum_events(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double events = 0;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT sum(events) FROM runs", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			events = sqlite3_column_double(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(h);
	return events;
}

static int bench_sweep(const char *path, struct outcome *o)
{
	char dir[] = "/tmp/gpuplan-bench-XXXXXX", db[64], cmd[96];
	if (!mkdtemp(dir))
		return 1;
	snprintf(db, sizeof db, "%s/sweep.db", dir);
	struct sweep *sw;
	struct gp_err err GP_ERR_SCOPE = {0};
	double t0 = now_s();
	int rc = sweep_load(path, &sw, &err);
	if (!rc) {
		struct sweep_options so = {db, BENCH_SWEEP_JOBS, {0, 0}, false, NULL, NULL};
		rc = sweep_run(sw, &so, NULL, &err);
		sweep_free(sw);
	}
	o->wall_seconds = now_s() - t0;
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	else
		o->events = sum_events(db);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}

/* A sweep file has a top-level `base:`; a scenario does not. */
static bool is_sweep(const char *path)
{
	struct ytree *t;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (ytree_load(path, &t, &err))
		return false;
	bool sweep = ynode_get(t->root, "base") != NULL;
	ytree_free(t);
	return sweep;
}

struct bench {
	const char *name;
	const char *target;
	const char *scenario; /* a scenario or a sweep file; NULL: the engine hold model */
	const char *requires; /* a data file it reads, skipped without it; NULL: none */
	const char *set;      /* a --set override of the scenario; NULL: none */
	bool db;              /* write the run into a database, as gpuplan run does */
	int runs;             /* the best of this many (it and its peer): short cases
			       * repeat, so that one busy moment of the machine does
			       * not make the figure */
};

#define BEST_OF    3
#define MM1_SIMPY  "M/M/1 200k jobs, default output, into a database"
#define MM1_BARE   "M/M/1 1 M customers, default output, no database"
#define MM1_NOJOBS "M/M/1 1 M customers, jobs: false, no database"
#define MM1_1M_DB  "M/M/1 1 M customers, default output, into a DB"
#define ADVISE_DAY "advise: a 40-GPU day, 2.6 M requests, 90 batch jobs"

static const struct bench benches[] = {
	{"engine hold model: 1e5 pending, 1e7 events", ">= 20 M events/s", NULL, NULL, NULL, false,
	 BEST_OF},
	{MM1_SIMPY, ">= 10x SimPy, DB <= 16 MiB", "tests/bench/mm1-200k.yaml", NULL, NULL, true,
	 BEST_OF},
	{MM1_BARE, "none (the case of earlier rounds)", "tests/bench/mm1-200k.yaml", NULL,
	 "workloads.customers.count=1000000", false, BEST_OF},
	{MM1_NOJOBS, "<= 2x the bare C engine (and Cimba)", "tests/bench/mm1-200k.yaml", NULL,
	 "workloads.customers.count=1000000 output.jobs=false", false, BEST_OF},
	{MM1_1M_DB, "<= 1.3x max(simulation alone, SQLite alone)", "tests/bench/mm1-200k.yaml",
	 NULL, "workloads.customers.count=1000000", true, BEST_OF},
	{"10 M batch jobs, 100,000 GPUs (12,500 nodes)", "< 10 s, < 512 MiB RSS",
	 "tests/bench/batch-10m.yaml", NULL, NULL, false, 1},
	{"10 M batch jobs, 1 M GPUs (125,000 nodes)", "< 60 s, < 2 GiB RSS",
	 "tests/bench/fleet-1m-gpus.yaml", NULL, NULL, false, 1},
	{"1 M batch jobs, 10,000 GPUs (1,250 nodes)", "< 10 s, < 1 GiB RSS",
	 "tests/bench/batch-1m.yaml", NULL, NULL, false, 1},
	{"sweep of 1,000 small scenarios, --jobs 2", "< 60 s", "tests/bench/sweep-1k.yaml", NULL,
	 NULL, false, 1},
	{"Azure conv trace, 1 M requests, 16 replicas", "< 10 s", "tests/bench/azure-1m.yaml",
	 "../shared/data/azure-llm/AzureLLMInferenceTrace_conv.csv", NULL, false, 1},
	{"openb default, inflation to 130%, FGD", "< 1 s per experiment", "scenarios/openb.yaml",
	 "../shared/data/openb/openb_pod_list_default.csv", NULL, false, 1},
	{"openb sweep: 6 policies x 24 traces x 10 seeds", "none (1,440 runs, --jobs 2)",
	 "scenarios/sweeps/openb-policies.yaml", "../shared/data/openb/openb_pod_list_default.csv",
	 NULL, false, 1},
};

static int run_bench(const void *ctx, void *out)
{
	const struct bench *b = ctx;
	struct outcome *o = out;
	return !b->scenario            ? bench_engine_hold(o)
	       : is_sweep(b->scenario) ? bench_sweep(b->scenario, o)
				       : bench_scenario(b->scenario, b->set, b->db, o);
}

/* Runs one benchmark in a child; fills wall, events and peak RSS (MiB). */
static int run_child(const struct bench *b, struct outcome *o, double *rss_mib)
{
	struct rusage ru;
	if (in_child(run_bench, b, o, sizeof *o, &ru))
		return 1;
	*rss_mib = (double)ru.ru_maxrss / 1024.0;
	o->cpu_seconds = cpu_of(&ru);
	return 0;
}

/* The best (least wall time) of the benchmark's runs, the least SQLite floor
 * of them, and the largest peak RSS. */
static int run_best(const struct bench *b, struct outcome *best, double *rss_mib)
{
	*rss_mib = 0;
	best->wall_seconds = best->floor_seconds = HUGE_VAL;
	for (int r = 0; r < (b->runs > 1 ? b->runs : 1); r++) {
		struct outcome o = {0};
		double rss;
		if (run_child(b, &o, &rss))
			return 1;
		double floor = best->floor_seconds;
		if (o.floor_seconds > 0)
			floor = fmin(floor, o.floor_seconds);
		if (o.wall_seconds < best->wall_seconds)
			*best = o;
		best->floor_seconds = floor;
		*rss_mib = fmax(*rss_mib, rss);
	}
	return 0;
}

static void record(sqlite3 *db, const struct bench *b, const struct outcome *o, double rss)
{
	char when[32];
	units_format_rfc3339((int64_t)time(NULL), when, sizeof when);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db,
			   "INSERT INTO bench(name, started_at, wall_seconds, events, events_per_s,"
			   " peak_rss_mib, target) VALUES (?,?,?,?,?,?,?)",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, b->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, when, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, o->wall_seconds);
	sqlite3_bind_double(st, 4, o->events);
	sqlite3_bind_double(st, 5, o->events / o->wall_seconds);
	sqlite3_bind_double(st, 6, rss);
	sqlite3_bind_text(st, 7, b->target, -1, SQLITE_STATIC);
	sqlite3_step(st);
	sqlite3_finalize(st);
}

/* A peer or floor measured beside benchmark `name`, and name's ratio to it
 * (how many times faster gpuplan is; below 1: slower), into bench_peers. */
static void record_peer(sqlite3 *db, const char *name, const char *peer, double seconds,
			double ratio)
{
	char when[32];
	units_format_rfc3339((int64_t)time(NULL), when, sizeof when);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db,
			   "INSERT INTO bench_peers(name, started_at, peer, peer_seconds, ratio)"
			   " VALUES (?,?,?,?,?)",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, when, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, peer, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 4, seconds);
	sqlite3_bind_double(st, 5, ratio);
	sqlite3_step(st);
	sqlite3_finalize(st);
}

/* Runs argv[0] with argv, output to /dev/null; its wall and cpu seconds
 * and peak RSS (MiB).  Non-zero: it could not run or failed. */
static int run_program(char *const *argv, double *wall, double *cpu, double *rss)
{
	fflush(stdout);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return 1;
	*wall = now_s() - t0;
	*cpu = cpu_of(&ru);
	*rss = (double)ru.ru_maxrss / 1024.0;
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/*
 * Cimba's MM1_single (C, coroutines; github.com/ambonvik/cimba, not packaged),
 * where CIMBA_MM1 names its built benchmark/MM1_single: the best of `runs`.
 * Returns its wall seconds, or a negative value when not given or failed.
 */
static double cimba_mm1(int runs)
{
	const char *bin = getenv("CIMBA_MM1");
	if (!bin || !*bin)
		return -1;
	double best = HUGE_VAL;
	for (int r = 0; r < runs; r++) {
		double wall, cpu, rss;
		char *argv[] = {(char *)bin, NULL};
		if (run_program(argv, &wall, &cpu, &rss))
			return -1;
		best = fmin(best, wall);
	}
	return best;
}

/*
 * `gpuplan advise` on a realistic day (tests/bench/advise-day.yaml), with
 * the bench's own build: its alternatives on every processor (the default
 * --jobs), beside the same with --jobs 1 in this run.
 */
static void bench_advise_day(sqlite3 *db)
{
	const char *bin =
		access("build-bench/gpuplan", X_OK) == 0 ? "build-bench/gpuplan" : "bin/gpuplan";
	char dir[] = "/tmp/gpuplan-bench-XXXXXX", file[64], cmd[96];
	if (!mkdtemp(dir))
		return;
	double wall[2], cpu[2], rss[2];
	const char *jobs[2] = {NULL, "1"};
	bool ok = true;
	for (int k = 0; k < 2 && ok; k++) {
		snprintf(file, sizeof file, "%s/advise%d.db", dir, k);
		char *argv[] = {
			(char *)bin, "advise",  "tests/bench/advise-day.yaml", "--db",
			file,        "--quiet", jobs[k] ? "--jobs" : NULL,     (char *)jobs[k],
			NULL};
		ok = !run_program(argv, &wall[k], &cpu[k], &rss[k]);
	}
	if (!ok) {
		printf("%-48s failed\n", ADVISE_DAY);
	} else {
		struct bench b = {ADVISE_DAY, "< 60 s on 2 cores", NULL, NULL, NULL, false, 1};
		struct outcome o = {.wall_seconds = wall[0], .cpu_seconds = cpu[0]};
		printf("%-48s %10.3f %14s %12.1f  %s (cpu %.1f s)\n", ADVISE_DAY, wall[0], "",
		       rss[0], b.target, cpu[0]);
		printf("%-48s %10.3f %14s %12.1f  --jobs default is %.1fx faster (cpu %.1f s)\n",
		       "  the same advise, --jobs 1", wall[1], "", rss[1], wall[1] / wall[0],
		       cpu[1]);
		record(db, &b, &o, rss[0]);
		record_peer(db, ADVISE_DAY, "advise --jobs 1", wall[1], wall[1] / wall[0]);
	}
	fflush(stdout);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
}

/*
 * The same M/M/1 in SimPy (tests/bench/mm1_simpy.py, Debian's python3-simpy,
 * which `make bench` installs), run in this process's turn so that both see
 * the same machine load.  Returns SimPy's wall seconds, or a negative value
 * when it could not run.
 */
static double simpy_mm1(void)
{
	FILE *p = popen("/usr/bin/python3 tests/bench/mm1_simpy.py 200000", "r");
	if (!p)
		return -1;
	long customers = 0;
	double wait = 0, wall = -1;
	if (fscanf(p, "customers %ld mean_wait_h %lf wall_s %lf", &customers, &wait, &wall) != 3)
		wall = -1;
	return pclose(p) == 0 ? wall : -1;
}

/*
 * `gpuplan import --history` of 30 days at 2,000 pods a day (issue 37's
 * target: under 10 s and 500 MiB).  tests/bench/history_dir.py writes the
 * history DIR directly (the Prometheus API's JSON, as scripts/export-history.sh
 * saves it; about 240 MB for 60,000 pods), then the bench's own build of
 * gpuplan imports it in a child whose wall time and peak RSS are the figures.
 * Skipped, with the reason, while gpuplan has no `import --history`.
 */
#define HISTORY_IMPORT "import --history: 30 days, 2,000 pods a day"

static bool history_import_exists(const char *bin)
{
	char cmd[256], line[512];
	bool found = false;
	snprintf(cmd, sizeof cmd, "%s import --help 2>&1", bin);
	FILE *p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof line, p))
		if (strstr(line, "--history"))
			found = true;
	pclose(p);
	return found;
}

static void bench_history_import(sqlite3 *db)
{
	const char *bin =
		access("build-bench/gpuplan", X_OK) == 0 ? "build-bench/gpuplan" : "bin/gpuplan";
	if (!history_import_exists(bin)) {
		printf("%-48s skipped: %s has no import --history\n", HISTORY_IMPORT, bin);
		return;
	}
	char dir[] = "/tmp/gpuplan-bench-XXXXXX", cmd[512], in[64], twin[64], log[64];
	if (!mkdtemp(dir))
		return;
	snprintf(in, sizeof in, "%s/history", dir);
	snprintf(twin, sizeof twin, "%s/twin.yaml", dir);
	snprintf(log, sizeof log, "%s/import.log", dir);
	snprintf(cmd, sizeof cmd, "/usr/bin/env python3 tests/bench/history_dir.py %s >/dev/null",
		 in);
	if (system(cmd) != 0) {
		printf("%-48s skipped: python3 tests/bench/history_dir.py failed\n",
		       HISTORY_IMPORT);
	} else {
		fflush(stdout); /* the child must not write the parent's buffer again */
		double t0 = now_s();
		pid_t pid = fork();
		if (pid == 0) {
			if (!freopen(log, "w", stdout) || !freopen(log, "a", stderr))
				_exit(127);
			execl(bin, bin, "import", "--history", in, "-o", twin, (char *)NULL);
			_exit(127);
		}
		int status = 0;
		struct rusage ru;
		pid_t w = pid > 0 ? wait4(pid, &status, 0, &ru) : -1;
		double wall = now_s() - t0;
		if (w != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("%-48s failed:\n", HISTORY_IMPORT);
			fflush(stdout);
			snprintf(cmd, sizeof cmd, "tail -n 5 %s", log);
			if (system(cmd) != 0)
				printf("  (no log)\n");
		} else {
			struct bench b = {
				HISTORY_IMPORT, "< 10 s, < 500 MiB", NULL, NULL, NULL, false, 1};
			struct outcome o = {.wall_seconds = wall, .events = 60000};
			double rss = (double)ru.ru_maxrss / 1024.0;
			printf("%-48s %10.3f %14.0f %12.1f  %s (pods/s)\n", HISTORY_IMPORT, wall,
			       60000 / wall, rss, b.target);
			record(db, &b, &o, rss);
		}
	}
	fflush(stdout);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "results/bench.db";
	const char *only = argc > 2 ? argv[2] : NULL; /* run the benchmarks whose name has it */
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(
		    db,
		    "CREATE TABLE IF NOT EXISTS bench(name TEXT, started_at TEXT, wall_seconds REAL,"
		    " events REAL, events_per_s REAL, peak_rss_mib REAL, target TEXT);"
		    "CREATE TABLE IF NOT EXISTS bench_peers(name TEXT, started_at TEXT, peer TEXT,"
		    " peer_seconds REAL, ratio REAL)",
		    NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "bench: cannot open %s: %s\n", path, sqlite3_errmsg(db));
		return 1;
	}
	printf("%-48s %10s %14s %12s  %s\n", "benchmark", "cpu s", "events/s", "peak RSS MiB",
	       "target");
	printf("(CPU seconds of the process for the cases run in one, SimPy's included; wall\n"
	       " seconds for the sweeps and the commands, which fork)\n");
	printf("(the engine and M/M/1 cases and their peers: the best of %d runs)\n", BEST_OF);
	printf("(a case into a database: the longer of its two threads' CPU, the run's and the\n"
	       " writer's, which stores the job rows meanwhile: its time on two free cores)\n");
	int failed = 0;
	for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++) {
		struct outcome o = {0};
		double rss = 0;
		if (only && !strstr(benches[i].name, only))
			continue;
		if (benches[i].requires && access(benches[i].requires, R_OK) != 0) {
			printf("%-48s skipped: %s is missing\n", benches[i].name,
			       benches[i].requires);
			continue;
		}
		if (run_best(&benches[i], &o, &rss)) {
			printf("%-48s failed\n", benches[i].name);
			failed = 1;
			continue;
		}
		printf("%-48s %10.3f %14.0f %12.1f  %s (cpu %.3f s)\n", benches[i].name,
		       o.wall_seconds, o.events / o.wall_seconds, rss, benches[i].target,
		       o.cpu_seconds);
		if (o.db_mib > 0)
			printf("%-48s %10s database %.1f MiB\n", "", "", o.db_mib);
		fflush(stdout);
		record(db, &benches[i], &o, rss);
		if (!benches[i].scenario) {
			double heap = HUGE_VAL;
			for (int r = 0; r < benches[i].runs; r++)
				heap = fmin(heap, heap_hold());
			printf("%-48s %10.3f %14.0f %12s  the engine is %.1fx a binary heap\n",
			       "  the same hold model on a binary heap", heap, HOLD_STEPS / heap,
			       "", heap / o.wall_seconds);
			record_peer(db, benches[i].name, "a binary heap", heap,
				    heap / o.wall_seconds);
			fflush(stdout);
		}
		if (!strcmp(benches[i].name, MM1_BARE) || !strcmp(benches[i].name, MM1_NOJOBS)) {
			double mean, p99,
				bare = best_bare_mm1(1000000, benches[i].runs, &mean, &p99);
			printf("%-48s %10.3f %14s %12s  gpuplan takes %.1fx its time (mean wait %.2f h, "
			       "p99 %.1f h)\n",
			       "  the same M/M/1, bare C on gpuplan's engine", bare, "", "",
			       o.wall_seconds / bare, mean, p99);
			record_peer(db, benches[i].name, "bare C on gpuplan's engine", bare,
				    bare / o.wall_seconds);
			double cimba = cimba_mm1(benches[i].runs);
			if (cimba > 0) {
				printf("%-48s %10.3f %14s %12s  gpuplan takes %.1fx its time\n",
				       "  Cimba's MM1_single (CIMBA_MM1)", cimba, "", "",
				       o.wall_seconds / cimba);
				record_peer(db, benches[i].name, "Cimba MM1_single", cimba,
					    cimba / o.wall_seconds);
			} else if (!strcmp(benches[i].name, MM1_NOJOBS)) {
				printf("  Cimba skipped: set CIMBA_MM1 to a build of its "
				       "benchmark/MM1_single (it is not packaged)\n");
			}
			fflush(stdout);
		}
		if (!strcmp(benches[i].name, MM1_1M_DB) && isfinite(o.floor_seconds)) {
			double sim = o.sim_seconds, bound = fmax(sim, o.floor_seconds);
			printf("%-48s %10.3f %14s %12s\n", "  of it, the simulation alone", sim, "",
			       "");
			printf("%-48s %10.3f %14s %12s  the run takes %.2fx the larger\n",
			       "  SQLite alone storing the 1 M job rows", o.floor_seconds, "", "",
			       o.wall_seconds / bound);
			record_peer(db, benches[i].name, "max(simulation alone, SQLite alone)",
				    bound, bound / o.wall_seconds);
			fflush(stdout);
		}
		if (!strcmp(benches[i].name, MM1_SIMPY)) {
			double simpy = HUGE_VAL;
			for (int r = 0; r < benches[i].runs && simpy > 0; r++)
				simpy = fmin(simpy, simpy_mm1());
			if (simpy > 0) {
				printf("%-48s %10.3f %14s %12s  gpuplan is %.1fx SimPy\n",
				       "  the same M/M/1 in SimPy 2 (python3-simpy)", simpy, "", "",
				       simpy / o.wall_seconds);
				record_peer(db, benches[i].name, "SimPy 2", simpy,
					    simpy / o.wall_seconds);
				/* SQLite's share: a bound that no simulation speed lifts */
				printf("%-48s %10.3f %14s %12s  with a free simulation: %.1fx SimPy\n",
				       "  of it, the writing left after the simulation",
				       o.write_seconds, "", "", simpy / o.write_seconds);
				/* below any writer: SQLite alone storing the job rows */
				if (isfinite(o.floor_seconds))
					printf("%-48s %10.3f %14s %12s  a run that writes them: at "
					       "most %.1fx SimPy\n",
					       "  SQLite alone storing the 200,000 job rows",
					       o.floor_seconds, "", "", simpy / o.floor_seconds);
				if (isfinite(o.floor_seconds))
					record_peer(db, benches[i].name, "SQLite alone",
						    o.floor_seconds,
						    o.floor_seconds / o.wall_seconds);
				/* the other bound: the model alone, without gpuplan */
				double mean, p99,
					bare = best_bare_mm1(200000, benches[i].runs, &mean, &p99);
				printf("%-48s %10.3f %14s %12s  bare C is %.1fx SimPy, no output "
				       "written\n",
				       "  the same M/M/1, bare C on gpuplan's engine", bare, "", "",
				       simpy / bare);
				record_peer(db, benches[i].name, "bare C on gpuplan's engine", bare,
					    bare / o.wall_seconds);
			} else
				printf("  SimPy skipped: /usr/bin/python3 with python3-simpy is missing\n");
			fflush(stdout);
		}
	}
	if (!only || strstr(ADVISE_DAY, only))
		bench_advise_day(db);
	if (!only || strstr(HISTORY_IMPORT, only))
		bench_history_import(db);
	sqlite3_close(db);
	return failed;
}
