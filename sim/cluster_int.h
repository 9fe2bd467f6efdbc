/*
 * cluster_int.h - the cluster's private header, shared by its files (as
 * scenario_int.h is by the loader's).  Not part of the public interface.
 *
 *   cluster.c         nodes, GPUs, bucket indexes, a node's class and keys
 *   cluster_take.c    the GPUs a pod takes and gives back, their tenants
 *   cluster_classes.c the table of node classes (cluster.h, "Node classes")
 *   cluster_windows.c when a pool serves batch work (cluster.h, "Windows")
 *   cluster_groups.c  the Ready nodes by class and key (cluster.h, "Class groups")
 *   cluster_walk.c    walks over the bucket indexes, Ready ranks (cluster.h, "Walks")
 *   cluster_state.c   what placement sees as one number (cluster.state)
 *   cluster_figures.c what one pod of a workload takes on a pool ("Pod figures")
 */
#ifndef GPUPLAN_CLUSTER_INT_H
#define GPUPLAN_CLUSTER_INT_H

#include "gpuplan/cluster.h"

/*
 * Pod figures.  What a pod of a scenario's workload takes on a pool follows
 * from the workload and the pool's sharing alone: its units on each GPU,
 * its GPU equivalents for the workload's own GPU count, its share of a GPU,
 * the cpu and memory it takes from the node and those kube-scheduler
 * scores.  cluster_init computes them once for every workload and pool
 * (cluster.figures); a take reads them, and cluster_figure computes them
 * for a spec of a caller's own (not in the scenario's array) or another
 * GPU count.  Debug builds compare
 * what a take reads with cluster_figure's (cluster_figures_hold).
 */
struct pod_figures {
	int32_t units;
	bool whole; /* best fit among untouched GPUs only (exclusive GPUs) */
	double equivalent, share, cpu, memory;
	int64_t cpu_scored, memory_scored;
};

void cluster_figures_init(struct cluster *c);
struct pod_figures cluster_figure(const struct cluster *c, size_t p, const struct workload_spec *w,
				  int32_t gpus);
bool cluster_figures_hold(const struct cluster *c, size_t p, const struct workload_spec *w,
			  int32_t gpus, const struct pod_figures *f);

/* The figures kept for a pod of w asking for `gpus` on pool p, or NULL (a
 * caller's own spec, a GPU count not the workload's).  O(1). */
static inline const struct pod_figures *cluster_figures_of(const struct cluster *c, size_t p,
							   const struct workload_spec *w,
							   int32_t gpus)
{
	/* (as addresses: a caller's own spec is in no array of the scenario) */
	uintptr_t at = (uintptr_t)w - (uintptr_t)c->sc->workloads;
	if (at >= c->sc->n_workloads * sizeof *w || gpus != w->gpus)
		return NULL;
	return &c->figures[at / sizeof *w * c->n_pools + p];
}

/* A table for at most `nodes` nodes, which are of no class yet. */
void cluster_classes_init(struct class_table *t, size_t nodes);
void cluster_classes_free(struct class_table *t);

/* The id of class k, which one more node is now of (k.nodes is ignored). */
int32_t cluster_classes_enter(struct class_table *t, const struct node_class *k);

/* One node fewer of class id (kept in the table until a rebuild). */
void cluster_classes_leave(struct class_table *t, int32_t id);

/* Whether a and b are one class (their nodes counts aside), bit for bit:
 * nodes whose doubles are equal in value but not in bits (0 and -0) get two
 * classes that score the same. */
bool cluster_classes_same(const struct node_class *a, const struct node_class *b);

/* The id of class k for a node that was of class id. */
int32_t cluster_classes_move(struct class_table *t, int32_t id, const struct node_class *k);

/* Class groups (cluster_groups.c; cluster.h, "Class groups"): set up for
 * the Ready nodes once their classes are; a Ready node into the group of
 * its class and whole key (from any other); a node out of its group (it
 * goes down); freed; and checked against the nodes (debug builds). */
void cluster_groups_init(struct cluster *c);
void cluster_groups_place(struct cluster *c, int32_t node);
void cluster_groups_remove(struct cluster *c, int32_t node);
/* cluster_groups_place where the caller knows the node's pool ps (which
 * keeps groups), its slot `local` and its whole key. */
void cluster_groups_move(struct cluster *c, struct pool_state *ps, int32_t node, int32_t local,
			 int32_t key);
void cluster_groups_free(struct cluster *c);
bool cluster_groups_consistent(const struct cluster *c, size_t p, char *why, size_t len);

/* The nth (nth >= 0) set bit of bits among slots [from, to), and in *count
 * the set bits before it; or -1 and in *count all of them.  A block of
 * CLUSTER_BLOCK_WORDS words inside the span is passed by its count in
 * block[] (cluster_walk.c): O(blocks + words at either end). */
int32_t cluster_span_find(const uint64_t *bits, const int32_t *block, int32_t from, int32_t to,
			  int32_t nth, int32_t *count);

/* Where the block count of node `local` in level k of ix is (cluster.c). */
size_t cluster_index_block(const struct bucket_index *ix, int32_t k, int32_t local);

/* cluster_request_index for a pod asking for milli or a MIG instance (cluster.c). */
const struct bucket_index *cluster_request_share_index(const struct cluster *c, size_t p,
						       const struct workload_spec *w,
						       int32_t *need);

/* The index that answers a pod of w asking for `gpus` units in pool p, and
 * the key a node needs in it; NULL when the pool does not offer the resource.
 * Inline for whole GPUs and replicas, which every search of most scenarios
 * asks for (a placement asks two or three times). */
static inline const struct bucket_index *cluster_request_index(const struct cluster *c, size_t p,
							       const struct workload_spec *w,
							       int32_t gpus, int32_t *need)
{
	if (w->request != REQUEST_GPUS)
		return cluster_request_share_index(c, p, w, need);
	const struct sharing *sh = &c->sc->pools[p].sharing;
	*need = gpus;
	if (sharing_replicated(sh))
		return &c->pools[p].part;
	return sh->mode != SHARING_MIG ? &c->pools[p].whole : NULL;
}

/* Whether a search over pool p must check cpu and memory node by node for a
 * pod of w (cluster.c). */
bool cluster_check_cpu_memory(const struct cluster *c, size_t p, const struct workload_spec *w);

/* Whether GPU g of pool ps has all its units free. */
static inline bool cluster_untouched(const struct pool_state *ps, const struct gpu *g)
{
	return g->free == ps->units_per_gpu;
}

/* Node's GPUs and cpu and memory changed by a take, a release or a put
 * back (cluster_take.c), and its GPU equivalents by `equivalent`: the node
 * into its new class, its keys in its pool's indexes and its class group
 * (cluster.c); debug builds check its pool now and then. */
void cluster_node_moved(struct cluster *c, int32_t node, double equivalent);

/* What grant g of a pod of w adds to cluster.state; 0 where its amounts do
 * not add exactly. */
uint64_t cluster_grant_mix(const struct cluster *c, const struct workload_spec *w,
			   const struct cluster_grant *g);
/* Which workloads' amounts add exactly (cluster.undoable). */
void cluster_state_init(struct cluster *c);
/* A take (sign 1) or a release (-1) of a grant whose mix is grant_mix:
 * cluster.changes and cluster.state move; a mix of 0 moves the state to
 * one never seen. */
void cluster_state_add(struct cluster *c, uint64_t grant_mix, int sign);

#endif
