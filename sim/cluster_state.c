/*
 * cluster_state.c - what placement sees, as one number (cluster.h,
 * cluster.state): a sum over the grants held, so that a cluster given back
 * the same grants, in any order, sums the same again.  A placement that
 * failed then fails the same way now, which the scheduling pass reads
 * instead of searching again (sim_schedule.c): in a busy cluster the pod
 * that starts where one finished leaves the nodes as the failure saw them.
 */
#include "cluster_int.h"

#include <math.h>

/* splitmix64's finalizer (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", 2014): every input bit moves every
 * output bit, so that sums of mixes of different grants do not meet. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Whether x is a multiple of 1/per (a power of two) below 2^40: such
 * amounts add and subtract exactly in doubles, so a node's figures (cpu and
 * memory free, GPU equivalents and VRAM held) depend on the grants it holds
 * and not on the order they came and went. */
static bool exact(double x, double per)
{
	double q = x * per; /* exact: a power of two */
	return fabs(x) < 0x1p40 && q == (double)(int64_t)q;
}

void cluster_state_init(struct cluster *c)
{
	c->undoable = gp_xcalloc(c->sc->n_workloads + 1, sizeof *c->undoable);
	for (size_t k = 0; k < c->sc->n_workloads; k++) {
		const struct workload_spec *w = &c->sc->workloads[k];
		c->undoable[k] = exact(w->cpu, 0x1p10) && exact(w->memory_bytes, 1) &&
				 exact(w->vram_bytes, 1);
	}
}

uint64_t cluster_grant_mix(const struct cluster *c, const struct workload_spec *w,
			   const struct cluster_grant *g)
{
	/* (as addresses: a caller's own spec is in no array of the scenario) */
	uintptr_t at = (uintptr_t)w - (uintptr_t)c->sc->workloads;
	size_t k = at / sizeof *w;
	if (at >= c->sc->n_workloads * sizeof *w || !c->undoable[k] ||
	    !exact(g->equivalent, 0x1p10))
		return 0;
	/* The amounts follow from the workload, the node and the units; the
	 * workload also names whose pods a topology spread counts. */
	uint64_t where = (uint64_t)(uint32_t)g->node | (uint64_t)(uint32_t)g->units << 32;
	return mix(where * UINT64_C(0x9e3779b97f4a7c15) +
		   g->gpu_mask * UINT64_C(0xc2b2ae3d27d4eb4f) +
		   ((uint64_t)k << 8 | (uint8_t)g->mig_slot) * UINT64_C(0x165667b19e3779f9)) |
	       1;
}

void cluster_state_add(struct cluster *c, uint64_t grant_mix, int sign)
{
	c->changes++;
	if (grant_mix)
		c->state += sign > 0 ? grant_mix : -grant_mix;
	else /* not undone exactly: a state never seen */
		c->state += mix(c->changes);
}

void cluster_changed(struct cluster *c)
{
	c->ready_changes++;
	cluster_state_add(c, 0, 1);
}
