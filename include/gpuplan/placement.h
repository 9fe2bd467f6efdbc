/*
 * placement.h - choosing the nodes a job's pods land on, as kube-scheduler
 * would, and saying why none fits in its words.
 *
 * Filters, in kube-scheduler's order (a node is reported under the first
 * filter it fails, except that NodeResourcesFit reports every resource that
 * is short):
 *   NodeUnschedulable  the pool does not serve batch work now (its window is
 *                      closed): "node(s) were unschedulable".  A window that
 *                      closes before the job's expected end (window_policy
 *                      fit) is gpuplan's own: "node(s) didn't have time before
 *                      their window closes".
 *   TaintToleration    the first NoSchedule or NoExecute taint the pod does
 *                      not tolerate: "node(s) had untolerated taint {KEY: VALUE}".
 *   NodeAffinity       node_selector, affinity (In, NotIn, Exists,
 *                      DoesNotExist, ANDed) and gpu_spec (a GPU-model
 *                      constraint is node affinity on the product label):
 *                      "node(s) didn't match Pod's node affinity/selector".
 *   NodeResourcesFit   GPU units (whole GPUs, replicas, a MIG profile, milli),
 *                      cpu and memory: "Insufficient nvidia.com/gpu",
 *                      "Insufficient nvidia.com/mig-3g.40gb", "Insufficient
 *                      cpu", "Insufficient memory".  A pod whose VRAM exceeds
 *                      what one unit isolates (MPS, MIG, fractional) is
 *                      gpuplan's own: "node(s) had GPU units with less memory
 *                      than the pod's VRAM".
 *   PodTopologySpread  DoNotSchedule: placing the pod would raise its domain
 *                      more than max_skew above the least loaded eligible
 *                      domain: "node(s) didn't match pod topology spread
 *                      constraints", or "... (missing required label)" on a
 *                      node without the key.
 *
 * Node labels: a pool's labels, plus nvidia.com/gpu.product (the catalog's
 * product name of its GPU) and kubernetes.io/hostname (the node's name,
 * "<pool>-<i>") unless the pool sets them itself.
 *
 * Scores, as kube-scheduler's default profile with its weights
 * (apis/config/v1/default_plugins.go): NodeResourcesFit (1) with
 * scheduler.scoring's strategy (scenario.h: MostAllocated, LeastAllocated or
 * RequestedToCapacityRatio over weighted GPUs, cpu and memory; by default
 * LeastAllocated over cpu and memory), NodeResourcesBalancedAllocation (1)
 * over cpu and memory for pods that request either, TaintToleration (3):
 * untolerated PreferNoSchedule taints, reversed and normalized over the
 * feasible nodes; PodTopologySpread (2) for a ScheduleAnyway constraint,
 * count x log(domains + 2) + max_skew - 1, rounded, normalized as
 * kube-scheduler does.  Requests: GPU equivalents (thousandths), and cpu and
 * memory with kube's non-zero defaults for the fit score (100m, 200 MiB), as
 * they are for the balance.  A resource the pool does not set is left out.
 * ImageLocality and InterPodAffinity are not modelled.  Ties go to a node
 * drawn from the run's seeded stream (pl->ties), with selectHost's
 * reservoir sampling: every best node equally likely, same seed same node.
 *
 * Search.  Where the score is the same on every node of a pool (nothing it
 * weighs varies there) or a function of the GPU index key (whole exclusive
 * GPUs), a pool is one group of tied nodes counted through its buckets;
 * elsewhere (cpu or memory weighed or limiting, shares of GPUs, ratio shapes,
 * hostname keys) its nodes with room are scored one by one.
 *
 * Sampling.  On a large cluster kube-scheduler does not filter and score
 * every node (pkg/scheduler/schedule_one.go): numFeasibleNodesToFind gives
 * how many feasible nodes it looks for: every node below
 * minFeasibleNodesToFind (100) nodes, else percentageOfNodesToScore of them
 * (scheduler.percentage_of_nodes_to_score; 0: adaptive, 50 - nodes / 125,
 * at least minFeasibleNodesPercentageToFind 5), at least 100.
 * findNodesThatPassFilters runs the filters on its node list from
 * nextStartNodeIndex onwards, wrapping, and cancels when a feasible node
 * beyond that number turns up; only the ones found are scored, and
 * nextStartNodeIndex moves on by the nodes processed (feasible and
 * rejected).  gpuplan's node list is its Ready nodes in node order (pool
 * after pool); filters run one node at a time, so "processed" is every node
 * before the first feasible node too many.  The rotation moves when a plan
 * is taken (placement_take), as a cycle that binds; a failed search
 * processed every node, which leaves it where it was.  Where there are no
 * more feasible nodes than the number looked for, every one is scored, by
 * the cheap ways of Search below, exactly as without sampling.  A pool
 * scored by node class whose nodes no cpu, memory or per-node condition can
 * fail is not visited node by node: its nodes found are counted from the
 * index and scored by its class groups (cluster.h, "Class groups"), which
 * gives the same best node, ties and draw.  The paper's
 * policies (scheduler.gpu_policy) default to 100%, as its simulator is
 * configured.
 *
 * Gangs.  A job of `pods` pods (gang) is placed pod after pod, each pod
 * seeing the ones before it; if one does not fit, none is placed, and the
 * reason is that pod's.
 *
 * Cost.  What depends only on the workload and the pool (taints, labels,
 * gpu_spec, whether the pool offers the resource, VRAM) is decided once, in
 * placement_init.  A search then costs O(pools x buckets) through the
 * cluster's indexes for pools that are one group of tied nodes, plus the
 * nodes with room of the pools scored one by one (see Search).  A ScheduleAnyway spread constraint needs every
 * feasible node's score, so its workloads cost O(nodes) per search.  A
 * failure's message costs O(pools + buckets), or O(nodes of a pool) where a
 * per-node check (cpu, memory, hostname keys) applies.
 */
#ifndef GPUPLAN_PLACEMENT_H
#define GPUPLAN_PLACEMENT_H

#include "gpuplan/cluster.h"
#include "gpuplan/results.h"

#include <gsl/gsl_rng.h>

/* One job's request: `pods` pods (the workload's, with gang; else one) of
 * `gpus` units each. */
struct pod_request {
	int32_t workload;
	int32_t gpus;      /* units per pod (REQUEST_GPUS); 1 otherwise */
	sim_time duration; /* expected, for window fit */
	bool fit_window;   /* window_policy fit: must end before the window closes */
	int32_t variant;   /* its Kueue flavors' labels and tolerations
			    * (placement_variant); 0: the workload's alone */
};

/* The reasons a node can give: fixed slots, then one per resource name and
 * one per untolerated taint (placement_init builds them from the scenario). */
enum {
	REASON_UNSCHEDULABLE = PEND_UNSCHEDULABLE,
	REASON_WINDOW = PEND_WINDOW,
	REASON_AFFINITY = PEND_AFFINITY,
	REASON_SPREAD = PEND_SPREAD,
	REASON_SPREAD_LABEL = PEND_SPREAD_LABEL,
	REASON_CPU = PEND_CPU,
	REASON_MEMORY = PEND_MEMORY,
	REASON_VRAM = PEND_VRAM,
	REASON_FIXED
};

struct pool_rule;
struct spread_state;
struct node_filter;
struct gpuplace;
struct node_sample;
struct score_entry;

struct placer {
	struct cluster *c;
	double *equivalent; /* [workload * n_pools + pool]: GPUs' worth of one unit
			       * (one GPU or replica, the instance, the share); 0 = never fits */
	size_t n_pools, n_workloads;
	uint8_t *shape;              /* [workload * n_pools + pool]: its enum score_shape, fixed
				      * for the run (a sampled search asks it per pool) */
	int32_t *pods;               /* per workload: placement_pods, read at every plan,
				      * take and release without the workload's spec */
	struct pool_rule *rules;     /* [(variant * n_workloads + workload) * n_pools + pool] */
	int32_t *variants;           /* per variant > 0: its flavors, VARIANT_FLAVORS each */
	size_t n_variants;           /* 1 + the variants placement_variant added */
	struct spread_state *spread; /* per workload */
	char **reasons;              /* slot texts */
	uint8_t *reason_kinds;       /* per slot: its enum pend_kind (results.h) */
	size_t n_reasons;
	/* Scratch of a search (a placer serves one thread; searches write only here) */
	int32_t *candidate;              /* per pool: a node with room, or -1 */
	struct node_filter *filters;     /* per pool: its per-node conditions (scratch) */
	bool *passes;                    /* per pool: whether it passes (a sampled search's) */
	gsl_rng *ties;                   /* draws among the best-scoring nodes (seeded) */
	int64_t *scratch;                /* per node: ScheduleAnyway scores */
	int32_t *stamp;                  /* [0]: generation; [1 + domain]: last seen */
	struct cluster_grant *tentative; /* a gang's pods while it is tried */
	size_t cap_tentative;
	struct gpuplace *gpu;       /* scheduler.gpu_policy other than best-fit: nodes
				       * are scored one by one (gpuplace.h); NULL: indexed */
	struct node_sample *sample; /* the rotation and the feasible nodes found (Sampling) */
	struct score_entry *scores; /* resource scores by node class (placement.c) */
	int32_t percentage;         /* percentageOfNodesToScore in effect; 0: adaptive */
};

/* A placer for c's scenario, which must not change while the placer lives
 * (it keeps resource scores by node class from one search to the next). */
void placement_init(struct placer *pl, struct cluster *c);
void placement_free(struct placer *pl);

/* The most flavors a variant joins (one per resource group of a queue). */
#define VARIANT_FLAVORS SCENARIO_MAX_GROUPS

/* The variant of pods that Kueue admitted with flavors[0 .. n-1]
 * (scenario.flavors): Kueue adds each flavor's node_labels to the pods'
 * node selector and its tolerations to theirs (pkg/podset, Merge of the
 * flavors' NodeLabels and Tolerations).  0 when no flavor has either.  A
 * new combination computes its rules for every workload and pool once. */
int32_t placement_variant(struct placer *pl, const int32_t *flavors, size_t n);

/* kube-scheduler's numFeasibleNodesToFind: how many feasible nodes of `all`
 * a search looks for with percentageOfNodesToScore `percentage` (0: adaptive). */
int32_t placement_nodes_to_find(int32_t percentage, int32_t all);

/* kube-scheduler's nextStartNodeIndex: the rank, among the Ready nodes in
 * node order, where the next search's filters start. */
int64_t placement_next_start(const struct placer *pl);

/* GPUs' worth a pod of workload w asking for `gpus` units is allocated in pool
 * p; 0 when it never fits there. */
static inline double placement_equivalent(const struct placer *pl, size_t w, size_t p, int32_t gpus)
{
	return pl->equivalent[w * pl->n_pools + p] * gpus;
}

/* Finds nodes for every pod of the job now (nodes[0 .. pods-1]) without
 * taking anything; true when all fit.  When one does not and why is not
 * NULL, why[slot] (pl->n_reasons entries) receives how many nodes failed
 * that pod for each reason. */
bool placement_plan(struct placer *pl, const struct pod_request *pod, sim_time now, int32_t *nodes,
		    int32_t *why);

/*
 * A plan kept.  A one-pod plan that succeeded without a draw among ties and
 * without a gpu_policy depends on the cluster (what cluster.state sums), the
 * request and where the rotation starts (Sampling) alone: made again with
 * the same, it finds the same node and leaves the rotation as it did.
 * placement_plan_memo keeps what the last placement_plan left (false: it
 * drew, or a policy chose); placement_plan_kept gives it again when the
 * rotation starts where it did (false: search again).  The caller keys the
 * memo by what the cluster and request were (sim_schedule.c).  O(1).
 */
struct plan_memo {
	int64_t start;   /* where the rotation started (next_start) */
	int64_t planned; /* the cursor the plan left */
	int32_t node;
};
bool placement_plan_memo(const struct placer *pl, const int32_t *nodes, struct plan_memo *m);
bool placement_plan_kept(struct placer *pl, const struct plan_memo *m, int32_t *nodes);

/* The pods of a job of workload w: its `pods` with gang, else 1. */
int32_t placement_pods(const struct placer *pl, size_t w);

/* The node for one pod of the request (whatever the workload's gang), or -1. */
int32_t placement_find(const struct placer *pl, const struct pod_request *pod, sim_time now);

/* Takes the job's pods on the nodes placement_plan found (nothing may have
 * changed in between) for job; fills grants[0 .. pods-1].  When they are the
 * nodes of the last plan that succeeded, the rotation moves on as that plan
 * left it (Sampling). */
void placement_take(struct placer *pl, const struct pod_request *pod, const int32_t *nodes,
		    uint32_t job, struct cluster_grant *grants);

/* Gives back the placements of a job's pods (in reverse order of taking). */
void placement_release(struct placer *pl, int32_t workload, uint32_t job,
		       const struct cluster_grant *grants);

/* NodeResourcesFit's score of a node (0..100) under strategy s, from the
 * requested amounts (the pod's included) and the node's allocatable, per
 * enum score_resource; a resource with allocatable 0 is left out. */
int64_t placement_fit_score(const struct scoring_spec *s, const int64_t *requested,
			    const int64_t *allocatable);

/* NodeResourcesBalancedAllocation's score (0..100) over n resources:
 * (1 - standard deviation of requested / allocatable) x 100, truncated. */
int64_t placement_balanced_score(const int64_t *requested, const int64_t *allocatable, size_t n);

/* Whether an empty Ready node of pool p would take a pod of the request now:
 * kube-scheduler's filters on a copy of the pool's node template, as the
 * Cluster Autoscaler checks its node groups (autoscale.h).  A hostname
 * affinity or spread constraint is judged for the pool, not the new node. */
bool placement_fits_empty(const struct placer *pl, const struct pod_request *pod, size_t p,
			  sim_time now);

/*
 * The Cluster Autoscaler's simulations (autoscale.h) run these filters on
 * nodes that are not Ready: a slot being provisioned, or a down slot standing
 * for a new node of its pool's template (CA's binpacking estimator), and put
 * pods there for a while to see what else fits beside them.
 */

/* Whether one pod of the request passes every filter on node, Ready or not:
 * the pool's (window, taints, affinity, gpu_spec, VRAM) and the node's own
 * (a hostname affinity, GPU units, cpu, memory).  O(GPUs of the node). */
bool placement_fits_node(const struct placer *pl, const struct pod_request *pod, int32_t node,
			 sim_time now);

/* One pod of the request on node for tenant id job (placement_fits_node
 * said yes), as placement_take places a pod; and back, in reverse order. */
void placement_take_pod(struct placer *pl, const struct pod_request *pod, int32_t node,
			uint32_t job, struct cluster_grant *grant);
void placement_release_pod(struct placer *pl, int32_t workload, uint32_t job,
			   const struct cluster_grant *grant);

/* Whether node fails the pod only on filters an eviction can change
 * (kube-scheduler's Unschedulable, as NodeResourcesFit's Insufficient):
 * its window, taints, node affinity, gpu_spec, VRAM rule and a hostname
 * affinity pass.  strict_size (Kubernetes >= 1.34, PR #131345): a node
 * whose allocatable is smaller than the request, empty or not, is
 * UnschedulableAndUnresolvable too.  O(1), O(GPUs) with strict_size. */
bool placement_node_resolvable(const struct placer *pl, const struct pod_request *pod, int32_t node,
			       sim_time now, bool strict_size);

/* Ready nodes that fail the pod first in NodeResourcesFit (their pool's
 * window, taints and affinity pass) though even empty they could not hold it:
 * the request is above their allocatable (or their pool does not offer its
 * resource).  Kubernetes >= 1.34 calls them UnschedulableAndUnresolvable
 * (PR #131345).  O(pools), O(slots) of a pool with a hostname affinity. */
int64_t placement_count_too_small(const struct placer *pl, const struct pod_request *pod,
				  sim_time now);

/* Adds to why (pl->n_reasons slots) what NodeResourcesFit says of node:
 * its units, cpu and memory, each short one counted once. */
void placement_node_why(const struct placer *pl, const struct pod_request *pod, int32_t node,
			int32_t *why);

/* Whether starting a pod of workload w can let other pods of w fit (its
 * DoNotSchedule spread constraint counts running pods). */
bool placement_start_unblocks(const struct placer *pl, size_t w);

/* Whether a node rule (an untolerated taint, node_selector, affinity or
 * gpu_spec) keeps pods of workload w off every node of pool p.  For the
 * diagnosis (diagnose.h): capacity idle there is capacity the rules hide. */
bool placement_pool_filtered(const struct placer *pl, size_t w, size_t p);

/* Whether pods of workload w may run in pool p at all: no node rule keeps
 * them off (placement_pool_ruled) and the pool offers what they ask for.
 * For the bill (cost.h): a pool only one workload may use holds its idle. */
bool placement_pool_usable(const struct placer *pl, size_t w, size_t p);

/* Whether one of w's tolerations tolerates the taint (TaintToleration). */
bool placement_tolerated(const struct workload_spec *w, const struct taint *taint);
/* Whether w tolerates every taint of pool ps that keeps pods off
 * (NoSchedule, NoExecute; a PreferNoSchedule one only scores). */
bool placement_pool_tolerated(const struct workload_spec *w, const struct pool_spec *ps);

/* The same, for a rule of the workload's own: not a cordon (NodeUnschedulable),
 * which no relaxed rule gets past. */
bool placement_pool_ruled(const struct placer *pl, size_t w, size_t p);

#endif
