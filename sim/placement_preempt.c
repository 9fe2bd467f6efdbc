/*
 * placement_preempt.c - what kube-scheduler's preemption asks of the filters
 * about one node (placement.h; preempt.h): whether an eviction could make
 * it fit, and what NodeResourcesFit says of it.
 */
#include "gpuplan/placement.h"

#include "placement_int.h"

bool placement_node_resolvable(const struct placer *pl, const struct pod_request *pod, int32_t node,
			       sim_time now, bool strict_size)
{
	const struct cluster *c = pl->c;
	size_t p = (size_t)c->nodes[node].pool;
	const struct pool_rule *r = pli_pod_rule(pl, pod, p);
	int32_t local = node - c->pools[p].first_node;
	if (r->filtered >= 0 || pli_pool_closed(c, p, pod, now) >= 0 || !pli_allows(r, local))
		return false;
	if (r->unfit >= 0) /* not offered: allocatable 0 */
		return r->unfit == r->resource && !strict_size;
	return !strict_size ||
	       cluster_pods_per_node(c, p, &c->sc->workloads[pod->workload], pod->gpus) > 0;
}

void placement_node_why(const struct placer *pl, const struct pod_request *pod, int32_t node,
			int32_t *why)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	const struct pool_rule *r = pli_pod_rule(pl, pod, (size_t)c->nodes[node].pool);
	why[r->resource] += r->unfit >= 0 || !cluster_has_units(c, node, w, pod->gpus);
	why[REASON_CPU] += !cluster_cpu_fits(c, node, w);
	why[REASON_MEMORY] += !cluster_memory_fits(c, node, w);
}

int64_t placement_count_too_small(const struct placer *pl, const struct pod_request *pod,
				  sim_time now)
{
	const struct cluster *c = pl->c;
	const struct workload_spec *w = &c->sc->workloads[pod->workload];
	int64_t n = 0;
	for (size_t p = 0; p < c->n_pools; p++) {
		const struct pool_rule *r = pli_pod_rule(pl, pod, p);
		const struct pool_state *ps = &c->pools[p];
		if (r->filtered >= 0 || pli_pool_closed(c, p, pod, now) >= 0 ||
		    (r->unfit >= 0 && r->unfit != r->resource) ||
		    (r->unfit < 0 && cluster_pods_per_node(c, p, w, pod->gpus) > 0))
			continue;
		for (int32_t k = 0; r->hosts && k < r->n_allowed; k++)
			n += c->nodes[ps->first_node + r->hosts[k]].ready;
		for (int32_t i = 0; !r->hosts && i < ps->n_nodes; i++)
			n += c->nodes[ps->first_node + i].ready && pli_allows(r, i);
	}
	return n;
}
