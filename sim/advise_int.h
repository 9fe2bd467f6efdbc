/*
 * advise_int.h - private to advise*.c: the plan of alternatives, how one is
 * added, and the planning of them by kind (advise_plan.c).
 */
#ifndef GPUPLAN_ADVISE_INT_H
#define GPUPLAN_ADVISE_INT_H

#include "gpuplan/advise.h"
#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

#include <stddef.h>

struct plan {
	struct advise_row *alts; /* labels and sets only */
	size_t n, cap;
};

/* A new alternative, unless one with the same label is planned already. */
struct advise_row *advise_plan_add(struct plan *pl, const char *fmt, ...) GP_PRINTF(2, 3);
void advise_set(struct advise_row *a, const char *fmt, ...) GP_PRINTF(2, 3);
/* The alternatives the base run's scenario and findings suggest. */
struct plan advise_plan_alternatives(const struct scenario *sc, const struct results *r);

#endif
