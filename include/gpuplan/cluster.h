/*
 * cluster.h - the mutable state of the GPU pools: nodes, their free GPUs, and
 * an index that finds a node with enough free GPUs without scanning them all.
 *
 * Nodes of a pool are identical and numbered consecutively; node i of pool p is
 * named "<pool>-<i>".  For each pool and each count k of free GPUs, a bitset
 * records the nodes with exactly k free GPUs, so a placement looks at no more
 * than gpus_per_node + 1 buckets and picks the lowest-numbered node of the
 * chosen bucket (deterministic, and the order kube-scheduler users read).
 * Windows (when a pool serves batch work) are tracked here as an open flag
 * and the time the current window closes; the simulation moves them.
 */
#ifndef GPUPLAN_CLUSTER_H
#define GPUPLAN_CLUSTER_H

#include "gpuplan/scenario.h"

struct node {
	int32_t pool;
	int16_t gpus;       /* total */
	int16_t free;       /* free GPUs */
	uint64_t free_mask; /* bit i set: GPU i of the node is free */
};

struct pool_state {
	int32_t first_node;
	int32_t n_nodes;
	int32_t gpus_per_node;
	size_t words;            /* 64-bit words per bucket bitset */
	uint64_t *buckets;       /* (gpus_per_node + 1) bitsets of `words` words */
	int32_t *bucket_count;   /* nodes in each bucket */
	int64_t capacity;        /* GPUs */
	int64_t allocated;       /* GPUs */
	bool open;               /* serving batch work now */
	sim_time closes_at;      /* end of the current window; SIM_NEVER: always open */
};

struct cluster {
	const struct scenario *sc;
	struct node *nodes;
	size_t n_nodes;
	struct pool_state *pools;
	size_t n_pools;
	int64_t capacity;
	int64_t allocated;
};

void cluster_init(struct cluster *c, const struct scenario *sc);
void cluster_free(struct cluster *c);

/* A node of pool p with at least `gpus` free GPUs: the fullest such node for
 * MostAllocated, the emptiest for LeastAllocated, lowest index on ties; -1 if none. */
int32_t cluster_find(const struct cluster *c, size_t p, int32_t gpus, enum sched_scoring scoring);

/* Takes `gpus` free GPUs of the node (lowest-numbered first); returns their mask. */
uint64_t cluster_take(struct cluster *c, int32_t node, int32_t gpus);

/* Gives back the GPUs of mask. */
void cluster_release(struct cluster *c, int32_t node, uint64_t mask);

/* Largest number of free GPUs on one node of pool p. */
int32_t cluster_max_free(const struct cluster *c, size_t p);

/* "<pool>-<i>" for node (caller frees). */
char *cluster_node_name(const struct cluster *c, int32_t node);

/* Checks the index against the nodes (tests and debug builds). */
bool cluster_consistent(const struct cluster *c);

/*
 * Windows.  Whether pool p is open at time t (relative to the scenario start),
 * and when that changes next (SIM_NEVER if never).  A pool without windows is
 * always open.  Overlapping windows merge.
 */
bool window_state(const struct pool_spec *pool, int64_t start_epoch, sim_time t, sim_time *next_change);

#endif
