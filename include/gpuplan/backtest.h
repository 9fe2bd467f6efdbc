/*
 * backtest.h - `gpuplan backtest TWIN.yaml`: replays the period a twin was
 * learned from (its history section and observed pods, history.h) on the
 * twin's pools, and compares the replay with what happened, per workload and
 * for `all` (docs/import.md, "backtest").
 *
 * backtest_prepare loads the twin twice (as written, for names and rules;
 * and made into the replay by scenario_replay) and reads the observed pods.
 * backtest_run simulates the replay and fills the results with the run's
 * rows, the backtest rows (results.h struct backtest_row, one per scope and
 * metric: pods_started, queue_time_mean_s, queue_time_p95_s, gpu_hours,
 * peak_allocated_gpus) and what the replay could not model, from evidence in
 * the history (struct backtest_gap).  The caller stores the results against
 * b->replay (one transaction, store.h).
 *
 * The figures, the same function of (created, started, ended, GPUs) on both
 * sides: pods started by the end; queue time (started - created) of the pods
 * created inside the period that started, mean and p95 (GSL's interpolated
 * quantile, as the metrics); GPU-hours held inside the period; the most GPUs
 * held at once.  GPUs are counted in each workload's unit (GPUs, MIG
 * instances, shared replicas), as the history gives them.
 */
#ifndef GPUPLAN_BACKTEST_H
#define GPUPLAN_BACKTEST_H

#include "gpuplan/history.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#include <stdio.h>

#define BACKTEST_DEFAULT_TOLERANCE 0.25

struct backtest {
	struct scenario *twin;   /* as written */
	struct scenario *replay; /* the replay's scenario: what the run is */
	struct scenario_replay map;
	struct history_pod *pods;
	size_t n_pods;
};

/* Loads the twin at path (GP_EINPUT, located at its first line, when it has
 * no history section) and its observed pods. */
int backtest_prepare(struct backtest *b, const char *path, struct gp_err *err);

/* Simulates the replay into *r (results_init'ed) and adds the backtest's rows and gaps. */
int backtest_run(struct backtest *b, struct results *r, struct gp_err *err);

void backtest_free(struct backtest *b);

/* `gpuplan backtest`: what the command line asked for. */
struct backtest_cmd {
	const char *scenario;
	const char *db; /* NULL: the twin's output.db */
	double tolerance;
	bool json, quiet;
};

/* Prepares, runs, writes the run to the database (one transaction) and
 * prints the report, or the JSON document, to out (nothing with quiet).
 * Nothing is written when the twin or its pods are bad input. */
int backtest_command(const struct backtest_cmd *c, FILE *out, struct gp_err *err);

#endif
