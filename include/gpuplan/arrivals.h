/*
 * arrivals.h - turning workloads into jobs.
 *
 * Each workload is one stream of arrivals with its own GSL random generator,
 * seeded from the scenario seed and the workload's name, so that adding a
 * workload does not change the draws of the others.  A stream knows the time
 * of its next arrival; the simulation takes the jobs due at that time one by
 * one and schedules one event for the stream's next arrival.  Draw order per
 * stream is fixed (inter-arrival time, then the job's duration), so the same
 * scenario and seed give the same jobs.
 */
#ifndef GPUPLAN_ARRIVALS_H
#define GPUPLAN_ARRIVALS_H

#include "gpuplan/scenario.h"

#include <gsl/gsl_rng.h>

struct new_job {
	sim_time duration;  /* exclusive-GPU duration */
	sim_time deadline;  /* absolute; SIM_NEVER: none */
	int32_t gpus;
	sim_time trace_queue; /* the trace's own wait (openb rows); SIM_NEVER: none */
};

struct stream {
	gsl_rng *rng;
	sim_time next;      /* time of the next arrival; SIM_NEVER when done */
	int64_t emitted;
	size_t row;         /* traces: next row */
};

struct arrivals {
	const struct scenario *sc;
	struct stream *streams;   /* one per workload */
};

/* The seed of a workload's stream: the scenario seed mixed with its name. */
uint64_t arrivals_stream_seed(uint64_t seed, const char *workload);

void arrivals_init(struct arrivals *a, const struct scenario *sc);
void arrivals_free(struct arrivals *a);

/* If workload w has a job arriving at `now` (its stream's next time), draws it
 * into *job and advances the stream; false when none is due now. */
bool arrivals_take(struct arrivals *a, size_t w, sim_time now, struct new_job *job);

/* Draws one value of a distribution (in its unit). */
double dist_draw(const struct dist *d, gsl_rng *rng);

/* The distribution's mean. */
double dist_mean(const struct dist *d);

#endif
