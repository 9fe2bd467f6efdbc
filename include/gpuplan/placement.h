/*
 * placement.h - choosing the node a pod lands on, as kube-scheduler would.
 *
 * Filter: the pool serves batch work now (its window is open and, under
 * window_policy fit, the job's expected duration ends before the window
 * closes) and one of its nodes has the GPUs free.  Score: NodeResourcesFit
 * with the MostAllocated (bin-pack) or LeastAllocated (spread) strategy over
 * nvidia.com/gpu, ((allocated + requested) / capacity) for MostAllocated and
 * ((capacity - allocated - requested) / capacity) for LeastAllocated.  Ties
 * go to the lower pool, then the lower node: deterministic.  Nodes of a pool
 * are identical, so the filters that do not depend on free capacity are
 * decided once per pool, and free capacity comes from the cluster's buckets.
 */
#ifndef GPUPLAN_PLACEMENT_H
#define GPUPLAN_PLACEMENT_H

#include "gpuplan/cluster.h"

struct pod_request {
	int32_t workload;
	int32_t gpus;
	sim_time duration;    /* expected, for window fit */
};

/* The node for the pod, or -1 when none fits now. */
int32_t placement_find(const struct cluster *c, const struct pod_request *pod, sim_time now);

#endif
