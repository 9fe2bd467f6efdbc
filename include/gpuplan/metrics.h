/*
 * metrics.h - the metrics of a finished timed run, reduced from its jobs,
 * its per-workload counts and its integrated gauges (names and units in
 * docs/results.md).
 *
 * Per scope, in the order the metrics table keeps: capacity, allocation and
 * activity from the gauges (pools and all), peak demand (all and
 * workloads), then for all and each workload the job counts, queue-time
 * percentiles (GSL's quantiles of the waits, sorted by sort.h), deadlines met,
 * makespan, OOM kills and preemptions; then the cost metrics and
 * allocation rows (cost.h).  O(started jobs) once per run, from the counts
 * the run keeps per workload (finished jobs may be retired, sim.h).
 */
#ifndef GPUPLAN_METRICS_H
#define GPUPLAN_METRICS_H

#include "gpuplan/results.h"
#include "gpuplan/sim.h"

/* Adds the run's metrics and cost rows to r.  The run must have advanced to
 * its end (sim_advance) and not be finished yet. */
void metrics_reduce(const struct sim *s, const struct scenario *sc, struct results *r);

/* After the inference figures (sim_finish): whether each workload met its
 * goal (metrics goal_met and queue_goal_s per workload; goal_met per pool
 * over the workloads it can host; goal_met and goals_missed for all). */
void metrics_goals(const struct scenario *sc, struct results *r);

/* After the costs: the bill per day over the bill's span (the horizon, else
 * the run's end: cost_per_day), and what a verified result costs by kind,
 * each workload's allocations and share of idle over its verified results
 * (cost_per_verified_job: batch and service jobs; ..._request: inference
 * requests). */
void metrics_bill(const struct scenario *sc, struct results *r);

#endif
