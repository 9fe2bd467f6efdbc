/*
 * cost.h - what a run cost, OpenCost's way, and what each verified result cost
 * (docs/cost.md).
 *
 * A pod is charged for what it is allocated — its GPU equivalent (a whole
 * GPU, 1/R of a time-sliced or MPS GPU, g/7 of a MIG GPU, milli/1000), its
 * CPU and memory requests — at its pool's prices, from allocation to release
 * (start-up included).  The bill spans the scenario start to the horizon (or
 * the end of the run): capacity powered before the first arrival is idle
 * (struct cost_span), and a powered: window pool is powered exactly in its
 * windows.  The simulation integrates these as $/h gauges, so the
 * allocations of each output.step window are the windows of the timeseries.
 * Capacity that is powered but unallocated is __idle__: per pool, powered
 * GPUs, cores and memory (nodes' cpu and memory in proportion to the powered
 * GPUs) minus what is allocated, at the pool's prices.  Idle held for one
 * workload (a pool only it may use) is charged to it; the rest is shared as
 * cost: {share_idle: weighted|even|none, idle_by: cluster|pool|node} says
 * (OpenCost's shareIdle: per resource, in proportion to each workload's cost
 * of that resource, over the run's span as one window), so
 *   cost per verified result = (cost + share of idle) / verified results.
 * Metrics: a workload's cost_total and cost_allocated are its allocations,
 * its cost_idle its share of idle; at scope all, cost_allocated is every
 * allocation, cost_idle the idle, and cost_total the bill, both together
 * (OpenCost's total with __idle__).  Idle is never negative and a window
 * never ends before it starts.
 * gpu_efficiency is GPU usage over request: engine activity over allocation.
 */
#ifndef GPUPLAN_COST_H
#define GPUPLAN_COST_H

#include "gpuplan/results.h"

#define COST_IDLE_NAME "__idle__"

/* What the run gives the bill beyond its rows.  From the scenario start to
 * `until` (collect_span_from), pool p had powered_gpu_hours[p] GPU-hours
 * powered (collect_powered_before), all of them idle.  collect: each
 * workload's cost by pool and resource, which idle is shared by.  usable
 * [w * n_pools + p]: whether workload w's pods may run in pool p (NULL: all
 * may); a pool only one workload may use holds its idle for it. */
struct collect;
struct cluster;
struct cost_run {
	sim_time until;
	const double *powered_gpu_hours;
	const double *committed_gpu_hours; /* of them, committed GPUs' (price.committed) */
	const struct collect *collect;
	const bool *usable;
	const struct cluster *cluster; /* its nodes, for idle_by: node */
};

/* Adds the allocation rows (per workload and window, and __idle__) and the
 * cost metrics (cost_total, cost_idle, verified_results,
 * cost_per_verified_result) to r.  verified[w]: verified results of workload
 * w.  Idle is shared as the scenario's cost: {share_idle, idle_by} says. */
void cost_account(const struct scenario *sc, struct results *r, const int64_t *verified,
		  const struct cost_run *run);

/* The allocation rows cost_account makes for one closed timeseries window
 * of a run whose windows are step long, row its first row (its scopes: all,
 * the pools, the workloads), pool_of[w] the pool of workload w (-1: several
 * or none): each workload's with any use, then __idle__, appended to *rows
 * (*n of *cap).  Returns how many.  A writer stores them while the run goes
 * on (store_writer), and compares them with the run's at its end. */
size_t cost_window_rows(const struct scenario *sc, const struct ts_row *row, sim_time step,
			const int32_t *pool_of, struct allocation **rows, size_t *n, size_t *cap);

/* How idle was shared, for the summary: "weighted per resource over the
 * cluster", ... */
const char *cost_rule_text(const struct scenario *sc);

#endif
