/*
 * search_int.h - what search.c shares with search_bracket.c.
 */
#ifndef GPUPLAN_SEARCH_INT_H
#define GPUPLAN_SEARCH_INT_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"

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

#endif
