/*
 * inflation.h - the workload-inflation experiment of Weng et al. (USENIX
 * ATC'23), `experiment: {protocol: inflation, inflate: 1.3}`.
 *
 * Pods arrive one after another and never leave; the scheduler's gpu_policy
 * (gpupolicy.h) places each on arrival or it stays unscheduled for good.  The
 * pods are those of the scenario's workloads (an openb pod list, or `count`
 * pods of a workload's request), re-sampled at random until their GPU
 * requests reach `inflate` x the cluster's GPUs (or thinned at random while
 * above it), then shuffled; both draws come from the scenario seed.  The run
 * records the inflation curve (results.curve): for every whole percent k of
 * arrived GPU demand, 0 .. 100 x inflate, the GPU allocation ratio and the
 * paper's fragmentation when arrived demand first reached k%.
 *
 * It runs in place of the timed simulation (run_simulate calls it); the cluster is
 * the scenario's pools, modelled as the policies see them (gpupolicy_node).
 */
#ifndef GPUPLAN_INFLATION_H
#define GPUPLAN_INFLATION_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

/* Runs the experiment of sc into *out (results_init'ed).  Returns GP_OK. */
int inflation_run(const struct scenario *sc, struct results *out, struct gp_err *err);

#endif
