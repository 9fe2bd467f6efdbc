/*
 * preempt.h - kube-scheduler's priority preemption: the DefaultPreemption
 * PostFilter plugin, run for a pod that fit no node.
 *
 * kubernetes pkg/scheduler/framework/plugins/defaultpreemption/
 * default_preemption.go and pkg/scheduler/framework/preemption/preemption.go:
 *   - the nodes looked at are those that failed only filters an eviction can
 *     change (Unschedulable: NodeResourcesFit); the others are "Preemption is
 *     not helpful for scheduling" (UnschedulableAndUnresolvable);
 *   - SelectVictimsOnNode: every pod of lower priority than the preemptor is
 *     removed (none: "No preemption victims found for incoming pod"); if the
 *     pod does not fit even then, the node's own reasons ("Insufficient
 *     nvidia.com/gpu"); else the removed pods are reprieved one by one, the
 *     most important first (MoreImportantPod: higher priority, then the
 *     earlier start), each kept when the pod still fits without it: the
 *     victims are the ones that are not;
 *   - DryRunPreemption looks for max(10% of those nodes, 100) candidates
 *     (MinCandidateNodesPercentage, MinCandidateNodesAbsolute), at most all;
 *   - pickOneNodeForPreemption: the fewest PDB violations (gpuplan has no
 *     PDBs: a tie), the lowest highest-priority victim, the smallest sum of
 *     priorities (each + 2^31), the fewest victims, the latest of the
 *     earliest start times of the highest-priority victims, then the first.
 * kube starts the dry run at a random offset among the nodes and checks them
 * in parallel; gpuplan goes in node order from the first Ready node, so the
 * last tie goes to the lowest-numbered node.
 *
 * The dry run lifts the candidates' grants off the node (cluster_release)
 * and puts them back exactly (cluster_put_back), so the cluster is as it was
 * after every call.  Victims are what the host calls evictable (sim_preempt.c:
 * running batch pods; inference replicas and pods without GPUs are not
 * looked at).  Cost: O(Ready nodes) to count the nodes looked at, then per
 * node O(GPUs x tenants + victims^2 x the node's filters).
 */
#ifndef GPUPLAN_PREEMPT_H
#define GPUPLAN_PREEMPT_H

#include "gpuplan/placement.h"

/* What the preemption asks of the simulation about a tenant of a GPU. */
struct preempt_host {
	/* Whether tenant `job` is a pod the scheduler would evict for a pod of
	 * priority prio (a running batch pod of lower priority); its priority,
	 * its start and its pods' grants (all of them, *n). */
	bool (*victim)(void *ctx, uint32_t job, int32_t prio, int32_t *priority, sim_time *start,
		       const struct cluster_grant **grants, int32_t *n);
	void *ctx;
};

struct preempt_victim {
	uint32_t job;
	int32_t priority;
	sim_time start;
	const struct cluster_grant *grants; /* its pods, n of them */
	int32_t n;
};

struct preempt_lift; /* a grant lifted off a node in a dry run (preempt.c) */

struct preemptor {
	struct placer *pl;
	struct preempt_host host;
	struct preempt_victim *cand; /* the node being tried: its lower-priority pods */
	size_t n_cand, cap_cand;
	struct preempt_victim *best; /* the chosen node's victims, most important first */
	size_t n_best, cap_best;
	struct preempt_victim *try_v; /* the node being tried: its victims */
	size_t n_try, cap_try;
	struct preempt_lift *lifts;
	size_t n_lifts, cap_lifts;
	struct tenant *saved; /* the lifted grants' tenant records */
	size_t n_saved, cap_saved;
	int32_t *why; /* per reason slot of the placer, then no victims, not helpful */
	char *msg;    /* the PostFilter message of the last failure */
	size_t msg_size;
	int32_t *msg_why;  /* the why[] and ready nodes msg was made from: a failure */
	int64_t msg_nodes; /* that repeats them reuses it (-1: none yet) */
	uint64_t msg_made; /* times msg was written: while it stays, msg and msg_why do */
	bool strict_size;  /* Kubernetes >= 1.34: a node too small for the request is
			   * UnschedulableAndUnresolvable (kubernetes PR #131345) */
	/* msg_why is zero but for its last two: preempt_default_post made msg */
	bool msg_counts;
	/* placement_count_too_small of the last request preempt_default_post
	 * counted (its workload, GPUs, variant), while cluster.ready_changes
	 * stays at small_at (0: none kept) */
	int64_t small;
	uint64_t small_at;
	int32_t small_workload, small_gpus, small_variant;
	/* some pool or workload has windows (a window_policy fit pod's count
	 * then depends on the time left) */
	bool windows;
};

void preempt_init(struct preemptor *pe, struct placer *pl, struct preempt_host host);
void preempt_free(struct preemptor *pe);

/* DefaultPreemption for one pod of the request, of priority prio, that
 * fit no Ready node at now.  True: the preemptor is nominated to *node once
 * pe->best[0 .. n_best-1] are evicted.  False: no node would take it; pe->msg
 * holds the PostFilter's message ("preemption: 0/N nodes are available:
 * ..." and its closing ".", as kube-scheduler's FitError prints it). */
bool preempt_find(struct preemptor *pe, const struct pod_request *pod, int32_t prio, sim_time now,
		  int32_t *node);

/* The PostFilter's message when no pod of lower priority runs (every node
 * that failed an Unschedulable filter has no victims), from why, the
 * filters' counts: NULL before Kubernetes 1.34 (reasons.h writes it from the
 * counts' kinds); from 1.34 on, nodes too small for the request even empty
 * are "Preemption is not helpful for scheduling" too (kubernetes PR #131345,
 * NodeResourcesFit).  Into pe->msg. */
const char *preempt_default_post(struct preemptor *pe, const struct pod_request *pod, sim_time now,
				 const int32_t *why);

/* The PostFilter messages of a pod that may not preempt (PodEligibleToPreemptOthers). */
#define PREEMPT_NEVER_MSG "preemption: not eligible due to preemptionPolicy=Never."
#define PREEMPT_TERMINATING_MSG \
	"preemption: not eligible due to a terminating pod on the nominated node."

#endif
