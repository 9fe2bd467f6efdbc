/*
 * autoscale_scaledown.c - the Cluster Autoscaler's scale-down: unneeded
 * nodes, CA's removal simulation (can every pod move?), and the drain and
 * deletion of nodes unneeded long enough (see autoscale.h).
 */
#include "autoscale_int.h"

#include <assert.h>

/* --max-scale-down-parallelism (10): nodes removed in one scan;
 * --max-drain-parallelism (1): of them, nodes whose pods are moved. */
#define MAX_SCALE_DOWN_PARALLELISM 10
#define MAX_DRAIN_PARALLELISM      1

/* A Ready node other than `from` where a pod of the request fits beside the
 * pods moved before it, first fit in node order trying the last
 * destination first (CA's hinting simulator: filters, no scores); -1. */
static int32_t destination(const struct autoscale *as, const struct pod_request *pod, int32_t from,
			   int32_t hint, sim_time now)
{
	const struct cluster *c = as->h.cluster;
	if (hint >= 0 && placement_fits_node(as->h.placer, pod, hint, now))
		return hint;
	for (size_t node = 0; node < c->n_nodes; node++)
		if (c->nodes[node].ready && (int32_t)node != from && (int32_t)node != hint &&
		    placement_fits_node(as->h.placer, pod, (int32_t)node, now))
			return (int32_t)node;
	return -1;
}

/* The pod request of tenant id; false when a drainability rule blocks it. */
static bool movable_pod(struct autoscale *as, uint32_t id, struct pod_request *pod)
{
	if (infer_is_tenant(id)) {
		*pod = infer_replica_pod(as->h.infer, id);
		return true;
	}
	bool movable = false;
	*pod = as->h.batch_pod(as->h.ctx, id, &movable);
	return movable;
}

/*
 * Whether every pod on node could move (CA's removal simulation,
 * simulator/cluster.go SimulateNodeRemoval with the drainability rules of
 * simulator/drainability/rules): an inference replica is a Deployment's
 * pod and a batch job's a Job's (rules/replicated), each movable unless
 * its workload says safe_to_evict: false (rules/notsafetoevict) or
 * local_storage: true (rules/localstorage) without safe_to_evict: true
 * (rules/safetoevict); a movable pod moves when another Ready node passes
 * the scheduler's filters for it beside the pods moved before it.  Nothing
 * changes: the moved pods are taken back.  O(pods x nodes x GPUs of a
 * node) at worst.
 */
static bool pods_can_move(struct autoscale *as, int32_t node, sim_time now)
{
	const struct cluster *c = as->h.cluster;
	const struct node *nd = &c->nodes[node];
	size_t n = 0;
	for (int32_t i = 0; i < nd->gpus; i++) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		for (uint16_t k = 0; k < g->n_tenants; k++) {
			uint32_t id = GPU_TENANTS(g)[k].job;
			GP_GROW(as->moving, as->cap_moving, n + 1);
			as->moving[n++] = id; /* a pod of g units appears on g GPUs */
		}
	}
	size_t mark = as->n_probes;
	int32_t to = -1;
	bool ok = true;
	for (size_t j = 0; j < n && ok;) {
		uint32_t id = as->moving[j];
		struct pod_request pod;
		ok = movable_pod(as, id, &pod);
		/* the pod's entries: one per GPU it holds here, whole GPUs
		 * (one pod of `gpus`) or shares (one each) */
		size_t units = 0;
		for (size_t k = j; k < n; k++)
			units += as->moving[k] == id;
		bool whole = !infer_is_tenant(id) &&
			     as->sc->workloads[pod.workload].request == REQUEST_GPUS;
		int32_t pods = whole ? (int32_t)(units / (size_t)(pod.gpus > 0 ? pod.gpus : 1))
				     : (infer_is_tenant(id) ? 1 : (int32_t)units);
		for (int32_t k = 0; ok && k < pods; k++) {
			to = destination(as, &pod, node, to, now);
			ok = to >= 0;
			if (ok)
				autoscale_probe(as, &pod, to);
		}
		/* the same id further on is the same pods: drop every entry */
		size_t w = j;
		for (size_t k = j; k < n; k++)
			if (as->moving[k] != id)
				as->moving[w++] = as->moving[k];
		n = w;
	}
	autoscale_unprobe(as, mark);
	return ok;
}

/* Whether a Ready node is unneeded (core/scaledown/eligibility: a GPU node
 * is judged by its GPU requests against the threshold) and its pods could
 * move. */
static bool unneeded(struct autoscale *as, int32_t node, sim_time now)
{
	const struct node *nd = &as->h.cluster->nodes[node];
	double threshold = autoscale_spec_of(as, node)->autoscale.threshold;
	return nd->allocated / nd->gpus < threshold && pods_can_move(as, node, now);
}

/* Cordons and drains node (its replicas go pending: their Deployments'
 * new pods, which the run places on the other nodes), then deletes it. */
static void remove_node(struct autoscale *as, int32_t node)
{
	size_t p = (size_t)as->h.cluster->nodes[node].pool;
	struct as_pool *ap = &as->pools[p];
	autoscale_take_out(as, node);
	if (!cluster_node_empty(as->h.cluster, node))
		as->h.drain(as->h.ctx, node);
	assert(cluster_node_empty(as->h.cluster, node) && "drained");
	as->state[node] = NODE_DOWN;
	as->gen[node]++; /* its interruption draw is stale */
	as->unneeded[node] = SIM_NEVER;
	ap->size--;
	ap->out.scale_downs++;
	as->last_removal = autoscale_now(as);
	autoscale_gauge(as, p, GAUGE_POWERED, -as->h.cluster->nodes[node].gpus);
}

/* Tracks unneeded nodes; outside the cool-down after a scale-up, removes
 * those unneeded long enough, down to min: at most
 * MAX_SCALE_DOWN_PARALLELISM a scan, of which MAX_DRAIN_PARALLELISM with
 * pods to move.  Returns whether a node was drained. */
bool autoscale_scale_down(struct autoscale *as, sim_time now)
{
	bool cooldown =
		as->last_scale_up != SIM_NEVER && now < as->last_scale_up + as->delay_after_add;
	int32_t removed = 0, drained = 0;
	as->n_removable = 0;
	for (size_t p = 0; p < as->sc->n_pools; p++) {
		const struct pool_spec *ps = &as->sc->pools[p];
		const struct pool_state *cs = &as->h.cluster->pools[p];
		for (int32_t i = 0; as->pools[p].autoscaled && i < cs->n_nodes; i++) {
			int32_t node = cs->first_node + i;
			if (as->state[node] != NODE_READY)
				continue;
			if (!unneeded(as, node, now)) {
				as->unneeded[node] = SIM_NEVER;
				continue;
			}
			if (as->unneeded[node] == SIM_NEVER)
				as->unneeded[node] = now;
			if (as->pools[p].size <= ps->autoscale.min)
				continue;
			bool empty = cluster_node_empty(as->h.cluster, node);
			if (!cooldown && removed < MAX_SCALE_DOWN_PARALLELISM &&
			    (empty || drained < MAX_DRAIN_PARALLELISM) &&
			    now - as->unneeded[node] >= ps->autoscale.unneeded_time) {
				remove_node(as, node);
				removed++;
				drained += !empty;
			} else {
				as->n_removable++;
			}
		}
	}
	return drained > 0;
}
