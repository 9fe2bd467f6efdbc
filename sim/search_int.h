/*
 * search_int.h - what search.c shares with search_bracket.c.
 */
#ifndef GPUPLAN_SEARCH_INT_H
#define GPUPLAN_SEARCH_INT_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"

#include <stdatomic.h>

/* The first cut's answer to a minimum-replica question on sc (the scenario
 * with the search's --set overrides), or 0 when the search is not one
 * (search_bracket.c says which are); *service receives the question's
 * service (its model NULL for a disaggregated role's, which is not
 * calibrated). */
int search_first_cut(const struct search_spec *sp, const struct scenario *sc,
		     struct firstcut_service *service);

/* What the search keeps of the first cut between probes: its service (the
 * traffic read once from the trace; the model and GPU taken again from each
 * probe's scenario, which owns them) and the load per replica the bound
 * allows. */
struct search_calib {
	bool ready, none; /* none: the question has no first cut */
	struct firstcut_service s;
	double allowed;
	/* the next probe closes the bracket if it holds, if it fails: then no
	 * probe follows it and its calibration is not computed (search.c) */
	bool closes_if_holds, closes_if_fails;
};

/* The first cut calibrated by a probe at n replicas whose run on sc gave r:
 * the probe's TTFT tail (at the question's percentile) stands for a load per
 * replica in the first cut's model (firstcut_load_at_tail), and the answer
 * is n times that load over the load the bound allows, a real number: 0
 * when the tail is shorter than an idle replica's in the model (far fewer),
 * +inf when it is over twice the bound or longer than the model's at
 * capacity (saturated: far more); NAN when the question has no first cut. */
double search_recut(const struct search_spec *sp, const struct scenario *sc,
		    const struct results *r, int64_t n, struct search_calib *cal);

/* One run of a probe, KEY=value with the search's overrides and seed +
 * seed_offset: simulated on any thread (search_simulate), then written by
 * the search on its own, in the walk's order (search.c). */
struct search_sim {
	struct scenario *sc;
	struct results r;
	bool stopped; /* the stop rule (or cancel) ended it */
	int rc;
	struct gp_err err;
};

/* Loads the probe's scenario and simulates it under the condition's stop
 * rule and cancel (run_simulate_stop); out owns what it made. */
void search_simulate(const struct search_spec *s, const char *value, uint64_t seed_offset,
		     const atomic_bool *cancel, struct search_sim *out);
void search_sim_free(struct search_sim *p);

/* Probes simulated ahead of their turn (search_ahead.c): NULL (every probe
 * on the search's thread) with one processor (spec->jobs, else
 * GPUPLAN_THREADS or the processors, at most SEARCH_AHEAD_THREADS) or more
 * than one seed. */
#define SEARCH_AHEAD_THREADS 2 /* the probe and the guess of the next */
struct search_ahead;
struct search_ahead *search_ahead_create(const struct search_spec *s);

/* Before the walk probes `now` inside the bracket (bad, good) and, it
 * guesses, `next` after it (next_text NULL: no guess): starts both where
 * threads are free, cancels runs under way for other values and drops
 * finished ones outside the bracket.  a may be NULL. */
void search_ahead_plan(struct search_ahead *a, double bad, double good, double now,
		       const char *now_text, double next, const char *next_text);

/* Hands value's run over to out (waiting for it to finish) and returns
 * true, or false when none was started. */
bool search_ahead_take(struct search_ahead *a, double value, struct search_sim *out);

/* Cancels what is under way and frees what is held. */
void search_ahead_free(struct search_ahead *a);

#endif
