/*
 * bind.h - what binds each waiting and slowed pod-second of a run: the
 * attribution of issue 46 (docs/diagnosis.md, "What binds").
 *
 * The run reports, as it goes, pod-seconds against a kind of constraint
 * (enum constraint_kind, results.h) for a workload, with the one parameter
 * the kind needs: the queue of an admission kind (the lender for a lending
 * limit or a reclaim policy), the pool of a pool kind.  Sources:
 *   - pending time, from the reasons tracker as it accrues (reasons.h): a
 *     node message's pod-seconds split over its reasons by the nodes that
 *     gave each (a taint on 1 node of 4: a quarter); Kueue's refusals by
 *     the limit that binds (quota_binding); a StrictFIFO wait; the share of
 *     "Insufficient" while the Cluster Autoscaler provisions a node for the
 *     pods (provisioning, not capacity);
 *   - start-up: a job's start-up time times its pods, at each start;
 *   - contention: a running job's time lost to slowdown under sharing,
 *     (1 - rate) x elapsed x pods, accrued when its rate changes and when it
 *     stops.
 * bind_write refines what only the scenario tells apart (a node-affinity
 * message is the workload's node_selector, else its gpu_spec, else its
 * affinity; "Insufficient" for a MIG request is the pool's MIG layout) and
 * writes the rows: kinds in enum order, then workloads; zero rows left out.
 *
 * Costs: bind_add is O(1) and allocates nothing; bind_init allocates
 * CONSTRAINT_KINDS x workloads doubles and parameters once.
 */
#ifndef GPUPLAN_BIND_H
#define GPUPLAN_BIND_H

#include "gpuplan/results.h"
#include "gpuplan/scenario.h"

struct bind {
	size_t n_workloads;
	double *seconds; /* [kind * n_workloads + workload] */
	int32_t *param;  /* the same: the queue or pool with the most pod-seconds so far */
	double *param_s; /* the same: that parameter's pod-seconds in its current run */
};

void bind_init(struct bind *b, size_t n_workloads);
void bind_free(struct bind *b);

/* pod_seconds of workload w bound by kind k, with its parameter (a queue or
 * a pool, as the kind says; -1 none). */
static inline void bind_add(struct bind *b, enum constraint_kind k, int32_t w, int32_t param,
			    double pod_seconds)
{
	if (!b || !b->seconds || w < 0 || !(pod_seconds > 0))
		return;
	size_t i = (size_t)k * b->n_workloads + (size_t)w;
	b->seconds[i] += pod_seconds;
	/* The parameter that bound longest: a parameter that changes keeps the
	 * one with more pod-seconds (a majority vote, O(1)). */
	if (b->param[i] == param)
		b->param_s[i] += pod_seconds;
	else if (b->param_s[i] > pod_seconds)
		b->param_s[i] -= pod_seconds;
	else {
		b->param[i] = param;
		b->param_s[i] = pod_seconds - b->param_s[i];
	}
}

/* Whether kind k's parameter is a queue (else a pool). */
bool bind_queue_kind(enum constraint_kind k);

/* The refined rows into out->constraints (owned by out). */
void bind_write(const struct bind *b, const struct scenario *sc, struct results *out);

#endif
