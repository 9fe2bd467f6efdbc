/*
 * placement_int.h - what placement.c, placement_flavors.c,
 * placement_preempt.c and placement_sample.c share: the rules decided once
 * per (workload, variant, pool), the scores and the pick of the best node
 * (see placement.h).
 */
#ifndef GPUPLAN_PLACEMENT_INT_H
#define GPUPLAN_PLACEMENT_INT_H

#include "gpuplan/placement.h"

/* What is decided once for a workload's pods in a pool. */
struct pool_rule {
	int32_t filtered; /* slot all nodes fail before resources (taint, affinity); -1 none */
	int32_t unfit;    /* slot all nodes fail in NodeResourcesFit for good; -1 none */
	int32_t resource; /* slot "Insufficient <the pod's resource>" */
	int32_t prefer;   /* untolerated PreferNoSchedule taints */
	bool affinity_ok; /* some node matches the pod's node affinity (taints aside) */
	/* A hostname-keyed affinity that allows some of the pool's nodes
	 * (placement_pin.c): n_allowed of them, as sorted local indexes
	 * (hosts: terms In a few names, a pinned workload's one) or a mask
	 * (allowed: NotIn); both NULL: every node or none (affinity_ok). */
	uint64_t *allowed;
	int32_t *hosts;
	int32_t n_allowed;
};

/* Whether the rule's affinity allows only some of the pool's nodes, which
 * are then checked one by one. */
static inline bool pli_some_nodes(const struct pool_rule *r) { return r->allowed || r->hosts; }

bool pli_host_listed(const struct pool_rule *r, int32_t local);

/* Whether the rule allows one node of the pool (a pinned pod's): searches
 * look at it alone. */
static inline bool pli_one_node(const struct pool_rule *r) { return r->hosts && r->n_allowed == 1; }

/* Whether the rule's affinity allows node `local` of the pool. */
static inline bool pli_allows(const struct pool_rule *r, int32_t local)
{
	if (r->hosts)
		return pli_host_listed(r, local);
	return !r->allowed || (r->allowed[local / 64] >> (local % 64) & 1);
}

/* The rule's hostname terms in pool p (placement_pin.c): hosts or allowed,
 * n_allowed and affinity_ok; and what they hold, freed. */
void pli_init_hosts(struct pool_rule *r, const struct workload_spec *w, const struct pool_spec *p);
void pli_free_hosts(struct pool_rule *r);

/* Labels as placement sees them (placement.c): a label every node of the
 * pool has (NULL: none), whether key is the per-node hostname, and whether
 * a value (NULL: absent) passes an affinity expression. */
const char *pli_pool_label(const struct pool_spec *p, const char *key);
bool pli_per_node_key(const struct pool_spec *p, const char *key);
bool pli_expr_matches(const struct affinity_expr *e, const char *value);

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

/* kube-scheduler's default profile (apis/config/v1/default_plugins.go): the
 * score plugins gpuplan models and their weights. */
#define MAX_NODE_SCORE   100
#define MAX_CUSTOM_SCORE 10   /* a requestedToCapacityRatio shape's scores */
#define WEIGHT_FIT       1    /* NodeResourcesFit */
#define WEIGHT_BALANCED  1    /* NodeResourcesBalancedAllocation */
#define WEIGHT_TAINT     3    /* TaintToleration */
#define WEIGHT_SPREAD    2    /* PodTopologySpread */
#define GPU_MILLI        1000 /* GPUs are scored in thousandths (shares of one) */

/* The per-node conditions of a find: hostname affinity, hostname spread. */
struct node_filter {
	const struct pool_rule *rule;
	const struct spread_state *st; /* NULL: no per-node spread check */
	int32_t first_node;
	int32_t base;
	int64_t threshold;
};

/* A workload's PodTopologySpread constraint: running pods per domain. */
struct spread_state {
	bool on;
	int32_t *pool_domain; /* per pool: its domain, DOMAIN_NONE or DOMAIN_PER_NODE */
	int32_t *node_base;   /* per pool: the domain of its node 0 (DOMAIN_PER_NODE) */
	int32_t n_domains;
	int32_t *count;    /* running pods of the workload per domain */
	uint8_t *eligible; /* a node of the domain matches the pod's node affinity */
	int64_t *hist;     /* eligible domains per count */
	size_t cap_hist;
	int32_t min; /* least count over eligible domains */
};

/* One search's scores by class id (find_sampled): an entry counts when its
 * stamp is the search's, so a search starts without clearing the table. */
struct class_memo {
	uint32_t stamp;
	int64_t score;
};

/* A pool's live class groups of key `need` or more for pods of one
 * workload and size, by score (their pool's base aside), highest first:
 * while a group's slot lives its class and key stay, so the order follows
 * the slots the pool made and freed since `seq` (class_groups.log) rather
 * than scoring and ranking every group at each search. */
struct group_order {
	int32_t workload, gpus, need; /* workload -1: none */
	uint32_t seq;                 /* the pool's groups.seq it has followed */
	int32_t n;
	int32_t slot[CLUSTER_GROUPS];
	int64_t score[CLUSTER_GROUPS];
};

/* Group orders a pool keeps: pods of two kinds alternating in a pool's
 * grouped runs each keep theirs. */
#define GROUP_ORDERS 2

/* Key `level`'s resource score in a SHAPE_GPU_KEY pool for pods of one
 * workload and size, or any key's in a SHAPE_FLAT one: there it is the
 * key's alone. */
struct key_memo {
	int32_t workload, gpus; /* workload -1: none */
	int64_t score;
};

/* The rotation and the feasible nodes found (placement.h, "Sampling"). */
struct node_sample {
	int64_t next_start;    /* nextStartNodeIndex: a rank among the Ready nodes */
	int64_t cursor;        /* where the next search of a plan starts */
	int64_t planned;       /* the cursor after the last plan that succeeded; -1: none */
	int32_t planned_first; /* that plan's first node */
	uint64_t draws;        /* ties drawn (pl->ties), so far */
	uint64_t plan_draws;   /* draws when the last placement_plan began */
	int32_t *nodes;        /* the feasible nodes found (capacity: every node) */
	int32_t n;
	/* sample_walk's nodes come pool by pool: each pool's run ends before
	 * nodes[end] (capacity: two per pool, the first is cut by the start);
	 * a grouped run puts no node there: its nodes are those of the pool's
	 * class groups of key `need` or more among slots [from, to) (cluster.h,
	 * "Class groups"), and find_sampled keeps its best score, how many
	 * of its nodes hold it and the n_slots groups of that score (from
	 * best_slots[run * CLUSTER_GROUPS] on) */
	struct sample_run {
		int32_t pool, end;
		bool grouped;
		int32_t from, to, need, n_best, n_slots;
		int64_t best;
	} * runs;
	int32_t n_runs;
	int32_t *best_slots;
	/* Pools scored as groups (their score a function of the unit key):
	 * slots [from, to) of pool, whose `count` nodes with room were found
	 * (counted by key only for the keys find_sampled offers). */
	struct sample_seg {
		int32_t pool, from, to, count;
		bool flat; /* its pool's score shape is SHAPE_FLAT (else SHAPE_GPU_KEY) */
		struct cluster_levels levels; /* the pool's keys for the pod */
	} * segs; /* capacity: two per pool (the first is cut by the start) */
	int32_t n_segs;
	struct class_memo *memo; /* by class id (capacity: the class table's) */
	uint32_t memo_stamp;
	struct group_order *orders; /* by pool, GROUP_ORDERS a pool */
	uint8_t *order_next;        /* by pool: the order a new kind of pod replaces */
	struct key_memo *keys;      /* by pool and key, key_stride a pool */
	size_t key_stride;
};

/* How the resource score of a pod varies over the nodes of a pool. */
enum score_shape {
	SHAPE_FLAT,     /* the same on every node: ties among all with room */
	SHAPE_GPU_KEY,  /* a function of the index key: ties within the best bucket */
	SHAPE_PER_NODE, /* node by node */
};

/* The highest score seen so far and how many nodes hold it; a tie is drawn
 * from the run's seeded stream as selectHost's reservoir sampling does
 * (schedule_one.go): the newcomer wins with probability 1 / count. */
struct pick {
	int64_t score;
	uint64_t count;
	int32_t node;
	size_t pool; /* where a group's winner is drawn */
	int32_t nth; /* -1: node is the winner; else draw the nth of the group */
	bool best_only;
	int32_t seg, level; /* a sampled group: its segment and key (-1: any);
			     * SEG_NODES: the best of the nodes found one by one */
};

#define SEG_NODES (-2)

/* A new stamp for a search's scores by class id (node_sample.memo; the
 * table is cleared when the stamps wrap), and the score of class id in the
 * search of that stamp, its pool's base (TaintToleration) included: the
 * score cache is asked once a search per class (placement_sample.c). */
uint32_t pli_memo_stamp(const struct placer *pl);
int64_t pli_memo_score(const struct placer *pl, int32_t id, uint32_t stamp, int64_t pool_base,
		       const struct pod_request *pod, double eq);

/* The scores and the pick (placement.c). */
int64_t pli_cached_score(const struct placer *pl, int32_t id, const struct pod_request *pod,
			 double eq);
int64_t pli_resource_score(const struct placer *pl, int32_t node, const struct pod_request *pod,
			   double eq);
enum score_shape pli_score_shape(const struct placer *pl, size_t p, const struct workload_spec *w);

/* pli_score_shape of a workload's pods in pool p, as placement_init kept it. */
static inline enum score_shape pli_pool_shape(const struct placer *pl, int32_t workload, size_t p)
{
	return (enum score_shape)pl->shape[(size_t)workload * pl->n_pools + p];
}

void pli_pick_init(struct pick *pk);
bool pli_pick_offer(const struct placer *pl, struct pick *pk, int64_t score, int32_t node, size_t p,
		    int32_t n, bool best_only);
int64_t pli_taint_score(int32_t prefer, int32_t max_prefer);

/* The filters (placement.c): the DoNotSchedule spread of the pod's workload
 * (or NULL), the per-node conditions, the pool-wide ones, and a whole node. */
const struct spread_state *pli_hard_spread(const struct placer *pl, const struct pod_request *pod,
					   int64_t *threshold);
bool pli_node_passes(const struct cluster *c, int32_t node, const void *ctx);
bool pli_pool_passes(const struct placer *pl, const struct pod_request *pod, sim_time now, size_t p,
		     const struct spread_state *st, int64_t threshold, struct node_filter *f);
bool pli_node_feasible(const struct placer *pl, const struct pool_rule *r, int32_t node,
		       int32_t local, const struct pod_request *pod);

/* The feasible-node search (placement_sample.c): whether the pod's search
 * samples (the sample then in pl->sample), every feasible node into
 * pl->sample, and the best of the sampled nodes. */
bool pli_sample_nodes(const struct placer *pl, const struct pod_request *pod, sim_time now,
		      bool groups);
void pli_feasible_all(const struct placer *pl, const struct pod_request *pod, sim_time now);
int32_t pli_find_sampled(const struct placer *pl, const struct pod_request *pod);

#endif
