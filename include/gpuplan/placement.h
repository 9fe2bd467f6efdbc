/*
 * placement.h - choosing the node a pod lands on, as kube-scheduler would.
 *
 * Filter: the pool offers the resource the pod asks for and its unit holds
 * the pod's memory (MPS, MIG and fractional enforce memory at placement;
 * exclusive and time-slicing do not, and overflow becomes an OOM kill at
 * start), the pool serves batch work now (its window is open and, under
 * window_policy fit, the job's expected duration ends before it closes), and
 * a node has room (the cluster's indexes).  These pool-level answers are the
 * same for every pod of a workload, so they are computed once per workload
 * and pool (placement_init).  Score: NodeResourcesFit with MostAllocated
 * ((allocated + requested) / capacity) or LeastAllocated ((capacity -
 * allocated - requested) / capacity) over GPUs; ties go to the lower pool,
 * then the lower node: deterministic.
 */
#ifndef GPUPLAN_PLACEMENT_H
#define GPUPLAN_PLACEMENT_H

#include "gpuplan/cluster.h"

struct pod_request {
	int32_t workload;
	int32_t gpus;         /* units (REQUEST_GPUS); 1 otherwise */
	sim_time duration;    /* expected, for window fit */
};

struct placer {
	const struct cluster *c;
	double *equivalent;   /* [workload * n_pools + pool]: GPUs' worth of one unit
			       * (one GPU or replica, the instance, the share); 0 = never fits */
	size_t n_pools;
};

void placement_init(struct placer *pl, const struct cluster *c);
void placement_free(struct placer *pl);

/* GPUs' worth a pod of workload w asking for `gpus` units is allocated in pool
 * p; 0 when it never fits there. */
static inline double placement_equivalent(const struct placer *pl, size_t w, size_t p,
					  int32_t gpus)
{
	return pl->equivalent[w * pl->n_pools + p] * gpus;
}

/* The node for the pod, or -1 when none fits now. */
int32_t placement_find(const struct placer *pl, const struct pod_request *pod, sim_time now);

#endif
