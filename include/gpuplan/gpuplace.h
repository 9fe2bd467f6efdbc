/*
 * gpuplace.h - scheduler.gpu_policy inside the timed simulation.
 *
 * With the default best-fit, placement finds nodes through the cluster's
 * bucket indexes (placement.h) and takes the best-fit GPUs: nothing here
 * runs, and a search costs O(buckets).  Any other policy of gpupolicy.h
 * (random, dot-product, gpu-clustering, gpu-packing, fgd) scores every node
 * that passes placement's filters, as the paper's simulator does: O(nodes)
 * per search.  This module gives those policies what they read: a view of a
 * cluster node as a gpupolicy_node (free milli per GPU, CPU and memory left,
 * the GPU model, the affinity tags of its GPU pods), a pod's request, FGD's
 * target workload drawn from the scenario's workloads (each workload's
 * request weighted by its job count, trace rows one by one), and the scores
 * kept per node and request until the node changes.
 *
 * Pools must share GPUs by milli (fractional) or not at all (exclusive); the
 * scenario refuses other sharing modes with a gpu_policy.  Ties between
 * nodes go to the lower node (placement's rule); random draws its node.
 *
 * Lifecycle: gpuplace_create (NULL for best-fit) with the cluster; every take
 * and release is reported through gpuplace_moved; gpuplace_free.
 */
#ifndef GPUPLAN_GPUPLACE_H
#define GPUPLAN_GPUPLACE_H

#include "gpuplan/cluster.h"
#include "gpuplan/gpupolicy.h"

struct gpuplace;

/* The state of the scenario's gpu_policy, or NULL when it is best-fit. */
struct gpuplace *gpuplace_create(const struct cluster *c);
void gpuplace_free(struct gpuplace *g);

enum gpu_policy gpuplace_policy(const struct gpuplace *g);

/* The policy's score of node for a pod of workload w asking for `gpus` units;
 * the node passes every filter for it. */
int64_t gpuplace_score(struct gpuplace *g, int32_t node, int32_t w, int32_t gpus);

/* A uniform draw in [0, n) from the policy's stream (random's choice of node). */
unsigned long gpuplace_draw(struct gpuplace *g, unsigned long n);

/* The GPUs of node the policy gives such a pod (a mask relative to the node). */
uint64_t gpuplace_choose(struct gpuplace *g, int32_t node, int32_t w, int32_t gpus);

/* A pod took (sign +1) or gave back (-1) what pl holds: affinity tags and
 * the node's cached scores follow. */
void gpuplace_moved(struct gpuplace *g, const struct cluster_grant *grant, int sign);

#endif
