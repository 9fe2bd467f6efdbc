/*
 * placement.c - filter and score pools and nodes (see placement.h).
 */
#include "gpuplan/placement.h"

/* Whether the pool may start this pod now, before looking at free capacity. */
static bool pool_admits(const struct pool_state *ps, const struct pod_request *pod, sim_time now)
{
	if (!ps->open)
		return false;
	/* window_policy fit: the expected duration must end by the close. */
	return ps->closes_at == SIM_NEVER || pod->duration <= ps->closes_at - now;
}

static double score(const struct cluster *c, int32_t node, int32_t gpus, enum sched_scoring how)
{
	const struct node *nd = &c->nodes[node];
	double cap = nd->gpus, used = nd->gpus - nd->free;
	return how == SCORING_MOST_ALLOCATED ? (used + gpus) / cap : (cap - used - gpus) / cap;
}

int32_t placement_find(const struct cluster *c, const struct pod_request *pod, sim_time now)
{
	enum sched_scoring how = c->sc->scheduler.scoring;
	int32_t best = -1;
	double best_score = -1;
	for (size_t p = 0; p < c->n_pools; p++) {
		if (!pool_admits(&c->pools[p], pod, now))
			continue;
		int32_t node = cluster_find(c, p, pod->gpus, how);
		if (node < 0)
			continue;
		double s = score(c, node, pod->gpus, how);
		if (s > best_score) {
			best = node;
			best_score = s;
		}
	}
	return best;
}
