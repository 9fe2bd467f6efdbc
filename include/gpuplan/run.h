/*
 * run.h - one run of a validated scenario, whatever its protocol: what
 * main, sweep, search and advise call.
 *
 * run_simulate dispatches on experiment.protocol: the inflation protocol
 * (inflation.h) fills its curve; a timed run drives the loop (sim.h),
 * reduces its metrics (metrics.h) and diagnoses it (diagnose.h).  The
 * results object gets everything the store writes, the wall-clock start
 * and duration included.  Same scenario and seed, same results.
 *
 * The module sits with metrics, cost and diagnose (layer 6 of
 * docs/design.md): it calls them and the loop below them.
 */
#ifndef GPUPLAN_RUN_H
#define GPUPLAN_RUN_H

#include "gpuplan/infer.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#include <stdatomic.h>

/* Runs the scenario; *out must be results_init'ed.  Returns GP_OK, or the
 * protocol's error status with err filled. */
int run_simulate(const struct scenario *sc, struct results *out, struct gp_err *err);

/* The same, handing the job rows to sink (may be NULL) as they become final
 * and calling sink->simulated once results.jobs is whole (results.h); an
 * inflation experiment hands nothing.  Same results as run_simulate. */
int run_simulate_to(const struct scenario *sc, struct results *out, const struct results_sink *sink,
		    struct gp_err *err);

/* The same with a stop rule (infer.h, infer_set_stop; NULL: none): the
 * run ends as soon as the rule's quantile is certain to exceed its bound,
 * with status "stopped" and the figures of the part it ran (the requests in
 * flight unfinished); otherwise its results are run_simulate's.  *stopped
 * says which (may be NULL).  cancel (may be NULL) is a flag another thread
 * may set: the run then ends at the next instant, stopped, and its results
 * are for the bin (a search's probe run ahead that is not needed). */
int run_simulate_stop(const struct scenario *sc, struct results *out, const struct infer_stop *stop,
		      const atomic_bool *cancel, bool *stopped, struct gp_err *err);

/* A timed run's placements only: its job rows, node names and pending
 * reasons, without the metrics, diagnosis and findings (import's
 * self-check, which reads where each pod went or why it waits: with 100,000
 * pinned workloads the metrics were a third of its time).  Same rows as
 * run_simulate's. */
int run_placements(const struct scenario *sc, struct results *out, struct gp_err *err);

#endif
