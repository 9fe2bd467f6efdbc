/*
 * contention.h - how co-located pods slow each other down on one GPU, and the
 * DCGM-style activity the GPU shows (docs/sharing.md).
 *
 * A pod alone is busy on the GPU a fraction f of its time, using a fraction s
 * of the SMs.  Its exclusive duration D splits into GPU work f*D and other
 * work (1-f)*D; sharing slows only the GPU part by `slow`, so progress runs
 * at rate 1 / ((1-f) + f*slow).  Per mode, with `share` the fraction of the
 * GPU's SMs the pod's unit guarantees:
 *   exclusive      slow = 1
 *   time-slicing   slow = max(1, sum f) * (1 + overhead) with two or more pods
 *   mps/fractional slow = max(1, sum f*min(s, share)) * max(1, s / share)
 *   mig            slow = max(1, s / share), share = the instance's SMs over
 *                  the GPU's (an A100's 1g: 14 of 108; isolated instances)
 * (the SM cap enters once: two compute-bound pods, f = s = 1, on MPS x2 each
 * run at half speed, 2x their exclusive time, not 4x.)  share comes from
 * sharing_compute (sharing.h).  Activity of the GPU: engine active = sum f
 * (capped at 1; MIG instances count f*share), SM active = sum
 * f*min(s, share), capped at 1.
 */
#ifndef GPUPLAN_CONTENTION_H
#define GPUPLAN_CONTENTION_H

#include "gpuplan/sharing.h"

/* A pod's presence on one GPU. */
struct tenant {
	uint32_t job;
	int32_t units; /* units the pod holds on this GPU (time-sliced replicas may stack) */
	double f;      /* gpu_busy */
	double s;      /* sm_share */
	double share;  /* of the GPU's SMs its unit guarantees: 1, 1/R, milli/1000, MIG SMs */
};

/* The slowdown of tenant t's GPU work among the n tenants of one GPU. */
double contention_slow(const struct sharing *sh, const struct tenant *tenants, size_t n,
		       const struct tenant *t);

/* Progress rate of work with busy fraction f under slowdown slow. */
static inline double contention_rate(double f, double slow)
{
	return slow == 1 ? 1 : 1.0 / ((1.0 - f) + f * slow); /* exactly 1 when alone */
}

/* Engine and SM activity of one GPU with these tenants, each in [0, 1]. */
void contention_activity(const struct sharing *sh, const struct tenant *tenants, size_t n,
			 double *engine, double *sm);

#endif
