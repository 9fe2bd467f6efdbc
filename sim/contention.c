/*
 * contention.c - the slowdown and activity formulas (see contention.h).
 */
#include "gpuplan/contention.h"

#include <math.h>

/* fmin for the finite values here: inlined, where fmin is a call (its NaN
 * rule keeps the compiler from using minsd). */
static double least(double a, double b) { return b < a ? b : a; }

static double sum_busy(const struct tenant *t, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += t[i].f;
	return sum;
}

/* SMs the tenants use together when each is capped at its unit's share. */
static double sum_capped(const struct tenant *t, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += t[i].f * least(t[i].s, t[i].share);
	return sum;
}

double contention_slow(const struct sharing *sh, const struct tenant *tenants, size_t n,
		       const struct tenant *t)
{
	switch (sh->mode) {
	case SHARING_EXCLUSIVE: return 1;
	case SHARING_TIME_SLICING:
		/* Kernels of co-located pods are serialized, with a context switch cost. */
		return n >= 2 ? fmax(1, sum_busy(tenants, n)) * (1 + sh->overhead) : 1;
	case SHARING_MIG: return fmax(1, t->s / t->share);
	case SHARING_MPS:
	case SHARING_FRACTIONAL:
		if (t->share >= 1)
			return 1; /* a whole GPU in a fractional pool */
		/* Each pod's SMs are capped at its share (MPS's active thread
		 * percentage, a fraction's limit): the cap slows it by s/share, and
		 * only what the capped pods use together beyond the GPU slows
		 * them further.  The cap enters once, as min(s, share). */
		return fmax(1, sum_capped(tenants, n)) * fmax(1, t->s / t->share);
	}
	return 1;
}

void contention_activity(const struct sharing *sh, const struct tenant *tenants, size_t n,
			 double *engine, double *sm)
{
	double e = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tenant *t = &tenants[i];
		/* A MIG instance keeps its share of the engines busy at most. */
		e += t->f * (sh->mode == SHARING_MIG ? t->share : 1.0);
		m += t->f * least(t->s, t->share);
	}
	*engine = least(1, e);
	*sm = least(1, m);
}
