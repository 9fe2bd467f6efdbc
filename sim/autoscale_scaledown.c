/*
 * autoscale_scaledown.c - the Cluster Autoscaler's scale-down: unneeded
 * nodes, CA's removal simulation (can every pod move?), and the drain and
 * deletion of nodes unneeded long enough (see autoscale.h).
 */
#include "autoscale_int.h"

#include <assert.h>
#include <string.h>

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

/* The pods on node: as->moving gets each tenant id once, as->moving_pods
 * its pods there (a pod of g units appears on g GPUs: whole GPUs are one
 * pod of `gpus`, shares one pod each, an inference replica one pod).
 * Returns how many ids. */
static size_t node_pods(struct autoscale *as, int32_t node)
{
	const struct cluster *c = as->h.cluster;
	const struct node *nd = &c->nodes[node];
	size_t n = 0;
	for (int32_t i = 0; i < nd->gpus; i++) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		for (uint16_t k = 0; k < g->n_tenants; k++) {
			GP_GROW(as->moving, as->cap_moving, n + 1);
			as->moving[n++] = GPU_TENANTS(g)[k].job;
		}
	}
	size_t ids = 0;
	while (ids < n) { /* [0, ids) done; [ids, n) still to group */
		uint32_t id = as->moving[ids];
		size_t units = 0, w = ids + 1;
		for (size_t k = ids; k < n; k++)
			units += as->moving[k] == id;
		for (size_t k = ids + 1; k < n; k++)
			if (as->moving[k] != id)
				as->moving[w++] = as->moving[k];
		n = w;
		int32_t pods = 1;
		if (!infer_is_tenant(id)) {
			bool movable;
			struct pod_request pod = as->h.batch_pod(as->h.ctx, id, &movable);
			bool whole = as->sc->workloads[pod.workload].request == REQUEST_GPUS;
			pods = whole ? (int32_t)(units / (size_t)(pod.gpus > 0 ? pod.gpus : 1))
				     : (int32_t)units;
		}
		GP_GROW(as->moving_pods, as->cap_moving_pods, ids + 1);
		as->moving_pods[ids++] = pods;
	}
	return ids;
}

static int32_t workload_of(struct autoscale *as, uint32_t id)
{
	bool movable;
	return infer_is_tenant(id) ? infer_replica_pod(as->h.infer, id).workload
				   : as->h.batch_pod(as->h.ctx, id, &movable).workload;
}

/*
 * PodDisruptionBudgets at the start of a scan: each workload's
 * DisruptionsAllowed as the disruption controller computes it
 * (kubernetes pkg/controller/disruption/disruption.go, getExpectedPodCount
 * and updatePdbStatus): healthy = its pods running now;
 *   min_available N:   healthy - N;
 *   max_unavailable N: healthy - (expected - N), expected the scale of the
 *     pods' controller: a Deployment's replicas (an inference workload's
 *     running and pending replicas; a service's pods, all running); a Job
 *     has no scale subresource, so the controller finds none, fails safe
 *     and allows 0;
 * never below 0.  CA's RemainingPdbTracker (core/scaledown/pdb/basic.go)
 * then takes from it the pods of every node it finds removable in the scan.
 */
static void pdb_budgets(struct autoscale *as)
{
	const struct scenario *sc = as->sc;
	memset(as->pdb_left, 0, sc->n_workloads * sizeof *as->pdb_left);
	for (size_t node = 0; node < as->h.cluster->n_nodes; node++) {
		size_t ids = node_pods(as, (int32_t)node);
		for (size_t j = 0; j < ids; j++) {
			int32_t w = workload_of(as, as->moving[j]);
			if (sc->workloads[w].pdb != PDB_NONE)
				as->pdb_left[w] += as->moving_pods[j];
		}
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		int64_t healthy = as->pdb_left[w], allowed = 0;
		if (ws->pdb == PDB_MIN_AVAILABLE)
			allowed = healthy - ws->pdb_value;
		else if (ws->pdb == PDB_MAX_UNAVAILABLE && ws->kind != WORKLOAD_BATCH) {
			struct pod_request pod;
			int64_t expected =
				healthy + (ws->kind == WORKLOAD_INFERENCE
						   ? infer_pending_replicas(as->h.infer, w, &pod)
						   : 0);
			int64_t desired = expected - ws->pdb_value;
			allowed = healthy - (desired > 0 ? desired : 0);
		}
		as->pdb_left[w] = allowed > 0 ? allowed : 0;
	}
}

/* Whether the budgets left allow evicting the pods of the node's ids
 * (rules/pdb: a matching budget with no disruption left blocks; the
 * tracker's CanRemovePods: a budget with fewer than the node's matching
 * pods blocks); take them when `take`. */
static bool pdb_allows(struct autoscale *as, size_t ids, bool take)
{
	const struct scenario *sc = as->sc;
	bool ok = true;
	for (size_t j = 0; j < ids; j++) {
		int32_t w = workload_of(as, as->moving[j]);
		if (sc->workloads[w].pdb != PDB_NONE)
			as->pdb_need[w] += as->moving_pods[j];
	}
	for (size_t j = 0; j < ids; j++) {
		int32_t w = workload_of(as, as->moving[j]);
		ok = ok && as->pdb_need[w] <= as->pdb_left[w];
	}
	for (size_t j = 0; j < ids; j++) {
		int32_t w = workload_of(as, as->moving[j]);
		if (take && ok)
			as->pdb_left[w] -= as->pdb_need[w];
		as->pdb_need[w] = 0;
	}
	return ok;
}

/*
 * Whether every pod on node could move (CA's removal simulation,
 * simulator/cluster.go SimulateNodeRemoval with the drainability rules of
 * simulator/drainability/rules): an inference replica is a Deployment's
 * pod and a batch job's a Job's (rules/replicated), each movable unless
 * its workload says safe_to_evict: false (rules/notsafetoevict) or
 * local_storage: true (rules/localstorage) without safe_to_evict: true
 * (rules/safetoevict), or its PodDisruptionBudget has not enough
 * disruptions left for the node's pods (rules/pdb, pdb_allows); a
 * movable pod moves when another Ready node passes the scheduler's
 * filters for it beside the pods moved before it.  Nothing changes: the
 * moved pods are taken back; a removable node's pods are taken from their
 * budgets.  O(pods x nodes x GPUs of a node) at worst.
 */
static bool pods_can_move(struct autoscale *as, int32_t node, sim_time now)
{
	size_t ids = node_pods(as, node);
	size_t mark = as->n_probes;
	int32_t to = -1;
	bool ok = !as->pdb_left || pdb_allows(as, ids, false);
	for (size_t j = 0; j < ids && ok; j++) {
		struct pod_request pod;
		ok = movable_pod(as, as->moving[j], &pod);
		for (int32_t k = 0; ok && k < as->moving_pods[j]; k++) {
			to = destination(as, &pod, node, to, now);
			ok = to >= 0;
			if (ok)
				autoscale_probe(as, &pod, to);
		}
	}
	autoscale_unprobe(as, mark);
	if (ok && as->pdb_left)
		pdb_allows(as, ids, true);
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
		as->h.drain(as->h.ctx, node, true);
	assert(cluster_node_empty(as->h.cluster, node) && "drained");
	as->state[node] = NODE_DOWN;
	as->gen[node]++; /* its interruption draw is stale */
	as->unneeded[node] = SIM_NEVER;
	ap->size--;
	ap->out.scale_downs++;
	as->last_removal = autoscale_now(as);
	autoscale_powered(as, p, node, -1);
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
	if (as->pdb_left)
		pdb_budgets(as);
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
