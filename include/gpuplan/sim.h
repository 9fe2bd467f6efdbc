/*
 * sim.h - one simulation run of a validated scenario.
 *
 * sim_run owns all mutable state (event queue, cluster, pending work, jobs,
 * collectors) for the duration of the run and leaves the outcome in a
 * results object: metrics (names of docs/results.md), job rows and the
 * timeseries.  Same scenario and seed, same results.
 */
#ifndef GPUPLAN_SIM_H
#define GPUPLAN_SIM_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

/* Runs the scenario; *out must be results_init'ed.  Returns GP_OK. */
int sim_run(const struct scenario *sc, struct results *out, struct gp_err *err);

#endif
