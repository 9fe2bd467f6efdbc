/*
 * arrivals.c - per-workload arrival streams drawn with GSL (see arrivals.h).
 */
#include "gpuplan/arrivals.h"
#include "gpuplan/hash.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

/* splitmix64: a well-mixed 64-bit hash step, so nearby seeds give unrelated streams. */
static uint64_t mix(uint64_t x)
{
	x += UINT64_C(0x9E3779B97F4A7C15);
	x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
	return x ^ (x >> 31);
}

uint64_t arrivals_stream_seed(uint64_t seed, const char *workload)
{
	return mix(seed ^ mix(hash_str(workload))); /* FNV-1a of the name */
}

double arrivals_dist_draw(const struct dist *d, gsl_rng *rng)
{
	switch (d->kind) {
	case DIST_FIXED: return d->mean;
	case DIST_EXPONENTIAL: return gsl_ran_exponential(rng, d->mean);
	case DIST_LOGNORMAL:
		/* mean of a lognormal is exp(zeta + sigma^2/2) */
		return gsl_ran_lognormal(rng, log(d->mean) - d->sigma * d->sigma / 2, d->sigma);
	case DIST_GAMMA: return gsl_ran_gamma(rng, d->shape, d->mean / d->shape);
	case DIST_UNIFORM: return gsl_ran_flat(rng, d->min, d->max);
	case DIST_EMPIRICAL: return d->values[gsl_rng_uniform_int(rng, d->n_values)];
	}
	return d->mean;
}

gsl_rng *arrivals_rng(gsl_rng **rng, uint64_t seed, const char *name)
{
	if (!*rng) {
		*rng = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(*rng, (unsigned long)arrivals_stream_seed(seed, name));
	}
	return *rng;
}

/* A stream's generator (arrivals_rng). */
static gsl_rng *stream_rng(const struct scenario *sc, const struct workload_spec *ws,
			   struct stream *st)
{
	return arrivals_rng(&st->rng, sc->seed, ws->name);
}

/* Time of the next poisson arrival (or schedule firing) after t, or
 * SIM_NEVER past the horizon or the count. */
static sim_time poisson_next(const struct scenario *sc, const struct workload_spec *w,
			     struct stream *st, sim_time t)
{
	sim_time next;
	if (w->arrival.kind == ARRIVAL_SCHEDULE) {
		next = arrivals_cron_next(&w->arrival.cron, sc->start_epoch, t, st->emitted > 0);
	} else if (w->arrival.weekly.on) {
		next = arrivals_weekly_next(&w->arrival.weekly, sc->start_epoch, t,
					    gsl_ran_exponential(stream_rng(sc, w, st), 1.0));
	} else {
		double gap = gsl_ran_exponential(stream_rng(sc, w, st), 1.0 / w->arrival.rate);
		/* A gap past the end of representable time is an arrival that never
		 * comes (a tiny rate with a horizon); without this the sum would
		 * overflow. */
		if (gap >= sim_seconds(SIM_NEVER - t) / 2)
			return SIM_NEVER;
		next = t + sim_from_seconds(gap);
	}
	if ((w->count >= 0 && st->emitted >= w->count) || (sc->horizon && next > sc->horizon))
		return SIM_NEVER;
	return next;
}

/* The first failure is the one reported. */
static void fail(struct arrivals *a, int rc, const struct gp_err *err)
{
	if (!a->failed) {
		a->failed = rc;
		gp_err_copy(&a->err, err);
	}
}

/* The trace's next row goes ahead; its time is the stream's next arrival.
 * At the end, or when the trace cannot be read as it was, the stream ends. */
static void read_ahead(struct arrivals *a, struct stream *st)
{
	bool got = false;
	struct gp_err err GP_ERR_SCOPE = {0};
	int rc = trace_stream_next(st->reader, &st->ahead, &got, &err);
	if (rc) {
		got = false;
		fail(a, rc, &err);
	}
	st->next = got ? st->ahead.submit : SIM_NEVER;
}

static void open_trace(struct arrivals *a, const struct workload_spec *ws, struct stream *st)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	st->reader = gp_xcalloc(1, sizeof *st->reader);
	st->next = SIM_NEVER;
	int rc = trace_stream_open(st->reader, ws->arrival.trace_path, &ws->arrival.limits,
				   ws->arrival.n_rows, &ws->arrival.summary.file, &err);
	if (rc)
		fail(a, rc, &err);
	else
		read_ahead(a, st);
}

void arrivals_init(struct arrivals *a, const struct scenario *sc)
{
	a->sc = sc;
	a->err = (struct gp_err){0};
	a->streams = gp_xcalloc(sc->n_workloads, sizeof *a->streams);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		struct stream *st = &a->streams[w];
		switch (ws->arrival.kind) {
		case ARRIVAL_AT: st->next = ws->count > 0 ? ws->arrival.at : SIM_NEVER; break;
		case ARRIVAL_POISSON:
		case ARRIVAL_SCHEDULE: st->next = poisson_next(sc, ws, st, ws->arrival.from); break;
		case ARRIVAL_TRACE:
			if (!ws->arrival.rows)
				open_trace(a, ws, st);
			else
				st->next =
					ws->arrival.n_rows ? ws->arrival.rows[0].submit : SIM_NEVER;
			break;
		}
	}
}

void arrivals_free(struct arrivals *a)
{
	for (size_t w = 0; w < a->sc->n_workloads; w++) {
		if (a->streams[w].rng)
			gsl_rng_free(a->streams[w].rng);
		if (a->streams[w].reader)
			trace_stream_close(a->streams[w].reader);
		free(a->streams[w].reader);
	}
	free(a->streams);
	gp_err_free(&a->err);
}

static sim_time deadline_of(const struct workload_spec *w, sim_time submit)
{
	switch (w->deadline_kind) {
	case DEADLINE_AT: return w->deadline;
	case DEADLINE_WITHIN: return submit + w->deadline;
	case DEADLINE_NONE: break;
	}
	return SIM_NEVER;
}

bool arrivals_take(struct arrivals *a, size_t w, sim_time now, struct new_job *job)
{
	const struct workload_spec *ws = &a->sc->workloads[w];
	struct stream *st = &a->streams[w];
	if (st->next != now)
		return false;
	st->emitted++;
	job->trace_queue = SIM_NEVER;
	switch (ws->arrival.kind) {
	case ARRIVAL_AT:
	case ARRIVAL_POISSON:
	case ARRIVAL_SCHEDULE:
		job->gpus = ws->gpus;
		/* a long tail's draw is cut at the clock's span, as a given duration is */
		double d = ws->duration.kind == DIST_FIXED /* no draw, no generator */
				   ? ws->duration.mean
				   : arrivals_dist_draw(&ws->duration, stream_rng(a->sc, ws, st));
		job->duration =
			sim_from_seconds(gp_fmin(gp_fmax(0.0, d), sim_seconds(SCENARIO_MAX_SPAN)));
		job->deadline = deadline_of(ws, now);
		if (ws->arrival.kind == ARRIVAL_AT)
			st->next = st->emitted < ws->count ? now : SIM_NEVER;
		else
			st->next = poisson_next(a->sc, ws, st, now);
		break;
	case ARRIVAL_TRACE: {
		const struct trace_job *row =
			st->reader ? &st->ahead : &ws->arrival.rows[st->row++];
		job->gpus = row->gpus;
		job->duration = row->duration;
		job->trace_queue = row->trace_queue;
		job->deadline = row->deadline != SIM_NEVER ? row->deadline : deadline_of(ws, now);
		if (st->reader)
			read_ahead(a, st);
		else
			st->next = st->row < ws->arrival.n_rows ? ws->arrival.rows[st->row].submit
								: SIM_NEVER;
		break;
	}
	}
	if (ws->loader_fraction > 0 && ws->loader_fraction < 1) /* GPUs wait on input */
		job->duration =
			sim_from_seconds(gp_fmin(sim_seconds(job->duration) / ws->loader_fraction,
						 sim_seconds(SCENARIO_MAX_SPAN)));
	if (a->sc->horizon && st->next != SIM_NEVER && st->next > a->sc->horizon)
		st->next = SIM_NEVER;
	return true;
}
