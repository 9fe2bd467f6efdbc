/*
 * arrivals_requests.c - the request streams of inference workloads
 * (arrivals.h): synthetic processes and trace replays.
 */
#include "gpuplan/arrivals.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --- synthetic and replayed streams --------------------------------------- */

static int32_t draw_tokens(const struct dist *d, gsl_rng *rng)
{
	double x = round(arrivals_dist_draw(d, rng));
	return x < 1 ? 1 : x > REQUESTS_MAX_TOKENS ? REQUESTS_MAX_TOKENS : (int32_t)x;
}

/* The gap to the next synthetic arrival, in seconds. */
static double draw_gap(const struct request_spec *rs, gsl_rng *rng)
{
	double mean = 1.0 / rs->rate;
	if (rs->process == REQUESTS_GAMMA)
		return gsl_ran_gamma(rng, rs->shape, mean / rs->shape);
	return gsl_ran_exponential(rng, mean);
}

/* The next synthetic arrival after t: a gap, or under rate_by_hour the time
 * the weekly rate's integral reaches a unit exponential draw. */
static sim_time next_synthetic(const struct request_stream *st, sim_time t)
{
	const struct request_spec *rs = &st->w->inference->requests;
	if (rs->weekly.on)
		return arrivals_weekly_next(&rs->weekly, st->start_epoch, t,
					    gsl_ran_exponential(st->rng, 1.0));
	return t + sim_from_seconds(draw_gap(rs, st->rng));
}

/* Time of trace request (tile, row). */
static sim_time trace_time(const struct request_spec *rs, int32_t tile, size_t row)
{
	double at = (double)tile * (double)rs->period + (double)rs->rows[row].at;
	return rs->from + (sim_time)llround(at / rs->speedup);
}

/* Moves st->next past the request just emitted at `now`. */
static void advance(struct request_stream *st, sim_time now)
{
	const struct request_spec *rs = &st->w->inference->requests;
	if (rs->process == REQUESTS_TRACE) {
		if (++st->row == rs->n_rows) {
			st->row = 0;
			st->tile++;
		}
		st->next = st->tile < rs->repeat ? trace_time(rs, st->tile, st->row) : SIM_NEVER;
	} else if (rs->count >= 0 && st->emitted >= rs->count) {
		st->next = SIM_NEVER;
	} else {
		st->next = next_synthetic(st, now);
	}
	if (st->horizon && st->next != SIM_NEVER && st->next > st->horizon)
		st->next = SIM_NEVER;
}

void arrivals_requests_init(struct request_stream *st, const struct scenario *sc,
			    const struct workload_spec *w)
{
	const struct request_spec *rs = &w->inference->requests;
	memset(st, 0, sizeof *st);
	st->w = w;
	st->horizon = sc->horizon;
	st->start_epoch = sc->start_epoch;
	if (rs->process == REQUESTS_TRACE) {
		st->next = rs->n_rows && rs->repeat > 0 ? trace_time(rs, 0, 0) : SIM_NEVER;
	} else {
		/* Not the batch stream's seed: the two must not draw the same numbers.
		 * The groups of a routed service draw its one stream (each keeps the
		 * prompts of its range: infer.c). */
		const char *who = w->inference->service ? w->inference->service : w->name;
		char name[160];
		snprintf(name, sizeof name, "%s/requests", who);
		st->rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(st->rng, (unsigned long)arrivals_stream_seed(sc->seed, name));
		st->next = rs->count == 0 ? SIM_NEVER : next_synthetic(st, rs->from);
	}
	if (st->horizon && st->next != SIM_NEVER && st->next > st->horizon)
		st->next = SIM_NEVER;
}

void arrivals_requests_free(struct request_stream *st)
{
	if (st->rng)
		gsl_rng_free(st->rng);
	st->rng = NULL;
}

bool arrivals_requests_take(struct request_stream *st, sim_time now, struct new_request *rq)
{
	const struct request_spec *rs = &st->w->inference->requests;
	if (st->next != now)
		return false;
	st->emitted++;
	if (rs->process == REQUESTS_TRACE) {
		rq->prompt = rs->rows[st->row].prompt;
		rq->output = rs->rows[st->row].output;
	} else {
		rq->prompt = draw_tokens(&rs->prompt_tokens, st->rng);
		rq->output = draw_tokens(&rs->output_tokens, st->rng);
	}
	advance(st, now);
	return true;
}
