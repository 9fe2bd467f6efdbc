/*
 * sweep.h - many runs of one scenario (docs/sweeps.md).
 *
 * A sweep file names a base scenario and the overrides to vary:
 *
 *   name: pool-size              # optional; default: the file name without .yaml
 *   base: ../quickstart.yaml     # relative to the sweep file's folder
 *   db: results/pool-size.db     # optional; default results/<name>.db
 *   grid:                        # every combination (cartesian product)
 *     pools.a100.nodes: [1, 2, 4]
 *     scheduler.order: [fifo, priority]
 *   zip:                         # paired: the i-th values go together
 *     workloads.eval.count: [50, 100]
 *     workloads.eval.arrival.rate: [5/h, 10/h]
 *   seeds: [1, 2, 3]             # or seeds: 3 (= 1, 2, 3)
 *
 * Keys under grid and zip are `--set` paths; values are YAML values (lists
 * and maps too).  Points are expanded in nested-loop order: grid keys in file
 * order with the last varying fastest, then zip rows, then seeds.  Each point
 * is a list of "KEY=VALUE" overrides (recorded in the params table) and a key
 * that identifies it in the database: the overrides as a JSON object with
 * sorted keys, {"pools.a100.nodes":"2","seed":"3"}.  The pair (sweep name,
 * point key) is what --resume and merge compare, so reordering the grid keys
 * or adding values keeps the points already run.
 *
 * sweep_load validates the file and every point (by loading the base
 * scenario with the point's overrides) before anything runs: errors are
 * "SWEEP:LINE:COL: error: ..." at the key or value responsible, GP_EINPUT.
 *
 * sweep_run runs the points of a shard (point i belongs to shard i mod N) in
 * `jobs` worker processes that each write their runs to the database, one
 * transaction per run with its sweep point (store_write_point_run), so a
 * killed sweep leaves whole runs only and no point is ever written twice.
 * Workers take the next point as they finish one, and each run depends only
 * on its overrides, so results do not depend on `jobs`.
 *
 * A struct sweep owns everything it points to; sweep_free releases it.
 */
#ifndef GPUPLAN_SWEEP_H
#define GPUPLAN_SWEEP_H

#include "gpuplan/common.h"

/* Refuse sweeps whose expansion would not fit a planning session (every
 * point is held in memory and checked before the first run). */
#define SWEEP_MAX_POINTS 1000000
#define SWEEP_MAX_JOBS   256

struct sweep_point {
	size_t index; /* position in the expansion, 0-based */
	char **sets;  /* "KEY=VALUE": grid keys, zip keys, then seed */
	size_t n_sets;
	char *key; /* identity in the database (JSON object) */
};

struct sweep {
	char *path; /* as given */
	char *name;
	char *base; /* base scenario path, resolved against the sweep's folder */
	char *db;   /* db:, else results/<name>.db */
	struct sweep_point *points;
	size_t n_points;
};

/* Loads, expands and validates.  On error *out is NULL. */
int sweep_load(const char *path, struct sweep **out, struct gp_err *err);

void sweep_free(struct sweep *sw);

/* A shard K of N; n == 0 means the whole sweep. */
struct sweep_shard {
	uint32_t k;
	uint32_t n;
};

/* Parses "K/N" (0 <= K < N).  Errors are located at "--shard TEXT:1:COL". */
int sweep_parse_shard(const char *text, struct sweep_shard *out, struct gp_err *err);

/* Whether point index belongs to the shard. */
bool sweep_shard_has(struct sweep_shard sh, size_t index);

/* Where a sweep stands; passed to the progress callback and returned. */
struct sweep_progress {
	size_t total;   /* points of the shard */
	size_t present; /* already in the database at the start (--resume) */
	size_t written; /* run and written by this sweep */
	size_t raced;   /* run, but another process wrote the point first */
	double elapsed_s;
};

typedef void (*sweep_progress_fn)(void *ctx, const struct sweep_progress *p);

struct sweep_options {
	const char *db; /* results database */
	unsigned jobs;  /* worker processes, 1 .. SWEEP_MAX_JOBS; 1 runs in this process */
	struct sweep_shard shard;
	bool resume;                /* skip points already in the database; without it
				  * they are an error (GP_EINPUT) and nothing runs */
	sweep_progress_fn progress; /* called in this process after each point; may be NULL */
	void *progress_ctx;
};

/* Runs the shard's points that the database does not hold.  *out (may be
 * NULL) receives the final progress.  A run that fails stops the sweep;
 * runs already written stay. */
int sweep_run(const struct sweep *sw, const struct sweep_options *o, struct sweep_progress *out,
	      struct gp_err *err);

#endif
