/*
 * arrivals.h - turning workloads into jobs.
 *
 * Each workload is one stream of arrivals with its own GSL random generator,
 * seeded from the scenario seed and the workload's name, so that adding a
 * workload does not change the draws of the others.  A stream knows the time
 * of its next arrival; the simulation takes the jobs due at that time one by
 * one and schedules one event for the stream's next arrival.  Draw order per
 * stream is fixed (inter-arrival time, then the job's duration), so the same
 * scenario and seed give the same jobs.  A CSV trace in submit order is read
 * a row ahead of the clock (trace_stream), so its memory is one row.
 */
#ifndef GPUPLAN_ARRIVALS_H
#define GPUPLAN_ARRIVALS_H

#include "gpuplan/scenario.h"

#include <gsl/gsl_rng.h>

struct new_job {
	sim_time duration; /* exclusive-GPU duration */
	sim_time deadline; /* absolute; SIM_NEVER: none */
	int32_t gpus;
	sim_time trace_queue; /* the trace's own wait (openb rows); SIM_NEVER: none */
};

struct stream {
	gsl_rng *rng;  /* made at its first draw (NULL until then), with the same seed */
	sim_time next; /* time of the next arrival; SIM_NEVER when done */
	int64_t emitted;
	size_t row; /* traces held in memory: next row */
	/* a CSV trace read as the clock reaches it: the file, and its next row */
	struct trace_stream *reader;
	struct trace_job ahead;
};

struct arrivals {
	const struct scenario *sc;
	struct stream *streams; /* one per workload */
	/* A trace that could not be read again, or changed since the scenario
	 * read it: its stream ended there, and the run is refused (run.c) with
	 * this error code (0: none) and err. */
	int failed;
	struct gp_err err;
};

/* The seed of a workload's stream: the scenario seed mixed with its name. */
uint64_t arrivals_stream_seed(uint64_t seed, const char *workload);

/* *rng, made at the first call, seeded with arrivals_stream_seed(seed,
 * name): the same numbers as a generator made at the start, but a Mersenne
 * Twister holds 5 KB, and most workloads of an imported cluster (one per
 * node and controller, one arrival time, a fixed duration) never draw:
 * 100,000 of them held two each, 1 GB. */
gsl_rng *arrivals_rng(gsl_rng **rng, uint64_t seed, const char *name);

void arrivals_init(struct arrivals *a, const struct scenario *sc);
void arrivals_free(struct arrivals *a);

/* If workload w has a job arriving at `now` (its stream's next time), draws it
 * into *job and advances the stream; false when none is due now. */
bool arrivals_take(struct arrivals *a, size_t w, sim_time now, struct new_job *job);

/* Draws one value of a distribution (in its unit). */
double arrivals_dist_draw(const struct dist *d, gsl_rng *rng);

/* --- the calendar (arrivals_calendar.c) ------------------------------------
 *
 * A weekly rate (rate_by_hour x by_weekday, scenario.h) at time t, per
 * second; and the time at which its integral from t reaches `mass` (a unit
 * exponential draw gives the next arrival of the inhomogeneous Poisson
 * process after t), SIM_NEVER past representable time.  Exact for the
 * piecewise-constant rate; O(hours of one week) at most.
 */
double arrivals_weekly_rate_at(const struct weekly_rate *r, int64_t start_epoch, sim_time t);
sim_time arrivals_weekly_next(const struct weekly_rate *r, int64_t start_epoch, sim_time t,
			      double mass);

/* The schedule's next firing at or after t (strictly after with `after`),
 * as a sim_time; SIM_NEVER when it fires no more (units_cron_next). */
sim_time arrivals_cron_next(const struct cron *c, int64_t start_epoch, sim_time t, bool after);

/* --- the requests of inference workloads ----------------------------------
 *
 * Synthetic: inter-arrival times are exponential (poisson) or gamma with
 * shape k and the same mean (gamma-bursty: k < 1 gives bursts, the
 * coefficient of variation is 1/sqrt(k)); prompt and output lengths are
 * drawn from their distributions and rounded to whole tokens, at least 1.
 * Draw order per request is fixed (gap, prompt, output), from one GSL stream
 * per workload seeded from the scenario seed and the workload's name, so the
 * same scenario and seed give the same requests.
 *
 * Traces: rows are replayed at (tile x period + at) / speedup after `from`,
 * tile = 0 .. repeat-1.  A tile's period is the trace's span plus one mean
 * gap, so consecutive tiles neither overlap nor leave a hole.  Rows are read
 * once; tiles are generated lazily, so a million requests cost no more
 * memory than the trace.
 */

struct new_request {
	int32_t prompt; /* tokens, >= 1 */
	int32_t output; /* tokens, >= 1 */
};

struct request_stream {
	const struct workload_spec *w;
	sim_time horizon; /* 0: none */
	int64_t start_epoch;
	gsl_rng *rng;  /* synthetic only */
	sim_time next; /* time of the next arrival; SIM_NEVER when done */
	int64_t emitted;
	size_t row; /* trace: next row of the current tile */
	int32_t tile;
};

/* Sets up the stream of inference workload w (w->inference != NULL). */
void arrivals_requests_init(struct request_stream *st, const struct scenario *sc,
			    const struct workload_spec *w);
void arrivals_requests_free(struct request_stream *st);

/* If a request arrives at `now` (the stream's next time), fills *rq and
 * advances the stream; false when none is due now. */
bool arrivals_requests_take(struct request_stream *st, sim_time now, struct new_request *rq);

#endif
