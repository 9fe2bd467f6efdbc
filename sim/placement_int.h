/*
 * placement_int.h - what placement.c, placement_flavors.c and
 * placement_preempt.c share: the rules decided once per (workload, variant,
 * pool) (see placement.h).
 */
#ifndef GPUPLAN_PLACEMENT_INT_H
#define GPUPLAN_PLACEMENT_INT_H

#include "gpuplan/placement.h"

/* What is decided once for a workload's pods in a pool. */
struct pool_rule {
	int32_t filtered;  /* slot all nodes fail before resources (taint, affinity); -1 none */
	int32_t unfit;     /* slot all nodes fail in NodeResourcesFit for good; -1 none */
	int32_t resource;  /* slot "Insufficient <the pod's resource>" */
	int32_t prefer;    /* untolerated PreferNoSchedule taints */
	bool affinity_ok;  /* some node matches the pod's node affinity (taints aside) */
	uint64_t *allowed; /* hostname-keyed affinity: the matching nodes (local); NULL: all */
	int32_t n_allowed;
};

/* The rule of workload w (its spec ws: the workload's own, or with a
 * variant's labels and tolerations) in pool p, into r. */
void pli_init_rule(struct placer *pl, const struct workload_spec *ws, size_t w, size_t p,
		   struct pool_rule *r);

/* The rule of the pod's workload and variant in pool p (placement.c). */
const struct pool_rule *pli_pod_rule(const struct placer *pl, const struct pod_request *pod,
				     size_t p);

/* NodeUnschedulable and the window fit: the reason slot when pool p cannot
 * take the pod now, else -1 (placement.c). */
int32_t pli_pool_closed(const struct cluster *c, size_t p, const struct pod_request *pod,
			sim_time now);

#endif
