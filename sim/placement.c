/*
 * placement.c - filter and score pools and nodes (see placement.h).
 */
#include "gpuplan/placement.h"

#include <stdlib.h>

void placement_init(struct placer *pl, const struct cluster *c)
{
	const struct scenario *sc = c->sc;
	pl->c = c;
	pl->n_pools = sc->n_pools;
	pl->equivalent = gp_xcalloc(sc->n_workloads * sc->n_pools, sizeof *pl->equivalent);
	for (size_t w = 0; w < sc->n_workloads; w++) {
		/* Per unit: trace jobs ask for different numbers of GPUs. */
		struct workload_spec one = sc->workloads[w];
		if (one.request == REQUEST_GPUS)
			one.gpus = 1;
		for (size_t p = 0; p < sc->n_pools; p++)
			pl->equivalent[w * sc->n_pools + p] =
				scenario_gpu_equivalent(&sc->pools[p], &one);
	}
}

void placement_free(struct placer *pl)
{
	free(pl->equivalent);
	pl->equivalent = NULL;
}

/* Whether the pool may start this pod now, before looking at free capacity. */
static bool pool_admits(const struct pool_state *ps, const struct pod_request *pod, sim_time now)
{
	if (!ps->open)
		return false;
	/* window_policy fit: the expected duration must end by the close. */
	return ps->closes_at == SIM_NEVER || pod->duration <= ps->closes_at - now;
}

static double score(const struct node *nd, double equivalent, enum sched_scoring how)
{
	double cap = nd->gpus;
	return how == SCORING_MOST_ALLOCATED ? (nd->allocated + equivalent) / cap
					     : (cap - nd->allocated - equivalent) / cap;
}

int32_t placement_find(const struct placer *pl, const struct pod_request *pod, sim_time now)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	enum sched_scoring how = c->sc->scheduler.scoring;
	int32_t best = -1;
	double best_score = -1;
	for (size_t p = 0; p < c->n_pools; p++) {
		double eq = placement_equivalent(pl, (size_t)pod->workload, p, pod->gpus);
		if (eq <= 0 || !pool_admits(&c->pools[p], pod, now))
			continue;
		int32_t node = cluster_find(c, p, w, pod->gpus, how);
		if (node < 0)
			continue;
		double s = score(&c->nodes[node], eq, how);
		if (s > best_score) {
			best = node;
			best_score = s;
		}
	}
	return best;
}
