/*
 * cluster.h - the mutable state of the GPU pools: nodes, GPUs, what is
 * allocated on them and to whom, and indexes that find a node with room for a
 * request without scanning the pool.
 *
 * Units.  Each GPU has `free` units of the kind its pool's sharing mode
 * hands out: exclusive 1 (the whole GPU); time-slicing and MPS R replicas (a
 * pod takes one replica on each of `gpus` distinct GPUs; under time-slicing,
 * when fewer GPUs have one free, several of one GPU: sharing_stacks, and each
 * GPU's tenant records how many); fractional 1000
 * milli (a pod takes milli on one GPU, or whole GPUs); MIG the instances of
 * the layout (a pod takes one instance of its profile).
 *
 * Indexes.  Nodes of a pool are identical and numbered consecutively (node i
 * of pool p is "<pool>-<i>").  A bucket index keeps, for every value k of a
 * per-node key, a bitset of the nodes whose key is k, so finding the fullest
 * (or emptiest) node with key >= need looks at buckets, not nodes.  Keys:
 * whole-GPU requests use the count of untouched GPUs; MPS replicas the count
 * of GPUs with a free replica, time-sliced ones the free replicas; milli the largest free milli of one GPU; MIG one
 * index per profile with the count of its free instances.
 *
 * Tenants.  Every GPU lists the running pods with a share of it (struct
 * tenant), which the contention model reads when the set changes.
 *
 * Slots.  A pool keeps a node slot for every node it may ever have
 * (scenario_pool_slots: its autoscaler's maximum), allocated once.  Only
 * Ready nodes are in the indexes; a slot that is down, provisioning or
 * cordoned has key -1 in every index, so finds, counts and reasons never see
 * it.  cluster_node_up / cluster_node_down move a node in and out, O(indexes).
 *
 * Windows (when a pool serves batch work) are an open flag and the time the
 * current window closes; the simulation moves them.
 */
#ifndef GPUPLAN_CLUSTER_H
#define GPUPLAN_CLUSTER_H

#include "gpuplan/hash.h"
#include "gpuplan/contention.h"
#include "gpuplan/scenario.h"

/*
 * One cache line: what a pod's start or finish on a large cluster reads and
 * writes of each of its GPUs, an exclusive GPU's one tenant inline.  The
 * tenants' VRAM is apart (cluster.vram_used): most pods declare none.
 */
struct gpu {
	int32_t free;     /* free units (see above) */
	uint8_t mig_free; /* MIG: bit i set = layout instance i free */
	uint16_t n_tenants;
	struct tenant *more; /* all the tenants, once a second one came (room:
			      * 4, doubled whenever a power of two is full) */
	struct tenant first;
	double engine, sm; /* activity in [0, 1] as the simulation last counted
			    * it in its gauges (sim_gauges.c) */
};

/* The GPU's n_tenants tenants, an array (const for a const gpu). */
#define GPU_TENANTS(g) ((g)->more ? (g)->more : &(g)->first)
_Static_assert(sizeof(struct gpu) == 64, "a GPU is one cache line");

/* One cache line (cluster.nodes starts on one): sampling reads a node's
 * room and scores it from here, node after node. */
struct node {
	int32_t pool;
	int32_t first_gpu; /* index into cluster.gpus */
	int32_t gpus;
	bool ready;            /* in the indexes: schedulable (see "Slots" above) */
	double allocated;      /* GPU equivalents */
	double cpu_free;       /* cores not requested; only where the pool sets cpu */
	double memory_free;    /* bytes not requested; only where the pool sets memory */
	int64_t cpu_scored;    /* millicores requested as kube-scheduler scores them
				* (cluster_scored_cpu: 100m for a pod without cpu) */
	int64_t memory_scored; /* bytes, likewise (200 MiB for a pod without memory) */
	uint64_t untouched;    /* bit i: GPU i has all its units free; an exclusive
				* pod takes and a node's key counts from here, not
				* from the GPUs' lines */
};
_Static_assert(sizeof(struct node) == 64, "a node is one cache line");

/*
 * Node classes.  What kube-scheduler's resource filters and scores read of a
 * node beyond its GPUs' keys: its pool, the GPU equivalents allocated, cpu
 * and memory free and as scored.  Nodes alike in all of these are of one
 * class, and the identical nodes of a pool fall in a few, so the cluster
 * keeps each node's class as an id into a table of the classes nodes are in
 * (cluster.class_of): a search over many nodes reads four bytes of each, and
 * filters and scores each class once.  A class no node is of stays in the
 * table (a node that moves back and forth finds its classes there) until
 * the table is rebuilt, which frees its id.
 */
struct node_class {
	int32_t pool;
	int32_t nodes; /* of this class; 0: kept for a node to come back, or free */
	double allocated, cpu_free, memory_free;
	int64_t cpu_scored, memory_scored;
	/* whether a node of the class could fail the largest request's cpu or
	 * memory (cluster.c), found once for the class; -1: not yet.  Not
	 * part of what the class is (it follows from the rest). */
	int8_t tight;
};

/* The class a node of a class last moved to, as id + 1 (0: none), with that
 * id's version and the table's rebuilds when it was found: a node going back
 * and forth between two classes then needs no lookup. */
struct class_step {
	int32_t to;
	uint32_t version, rebuilds;
};

struct class_table {
	struct node_class *at; /* by id */
	uint32_t *version;     /* by id: one more each time the id names a new class, so
				* (id, version) names one class for good */
	int32_t cap;           /* ids: twice the nodes and some (size arrays by id with it) */
	int32_t n;             /* ids ever used: [0, n) */
	int32_t *unused;       /* ids below n in no slot, a stack of n_unused */
	int32_t n_unused;
	int32_t live;          /* classes some node is of */
	struct hash_ids index; /* the live classes and those kept, by hash (hash.h):
				* index.n of them, in at least twice as many slots */

	struct class_step *step; /* by id: where a node of it last moved (cluster_classes_move) */
	uint32_t rebuilds;       /* rebuilds so far: one drops the classes no node is of */
};

/* Words of a bucket index's block: a walk over many slots adds up the
 * blocks' counts instead of counting their words' bits (see Walks).  Four,
 * not eight: a sampled search spans a few hundred to a few thousand slots,
 * and halving the words read at either end of a span cost less than the
 * blocks added in between (a block's count is kept at the same cost). */
#define CLUSTER_BLOCK_WORDS 4

struct bucket_index {
	int32_t levels; /* keys 0 .. levels-1 */
	size_t words;   /* 64-bit words per bitset */
	size_t blocks;  /* blocks of CLUSTER_BLOCK_WORDS words per bitset */
	uint64_t *bits; /* levels bitsets */
	int32_t *count; /* nodes per level */
	int32_t *block; /* nodes per level per block: [level * blocks + block] */
	int32_t *key;   /* per node of the pool */
	/* The nodes with key k or more, as bitsets and block counts like the
	 * levels': a walk over every key from `need` on reads one word, not
	 * one per level.  NULL past CLUSTER_LEAST_LEVELS levels (milli shares:
	 * a key's change would move up to 1,000 bits). */
	uint64_t *least;
	int32_t *least_block;
	int32_t *least_count; /* nodes per set: a count of room without a sum */
};

#define CLUSTER_LEAST_LEVELS 65

/*
 * Class groups (cluster_groups.c).  A pool's Ready nodes by class and key
 * in its whole index: a group's bitset of the pool's slots and its block
 * counts, moved where a node's class or key moves (two bit flips), so that
 * a search that scores by class (placement_sample.c) counts and finds the
 * nodes of a class in a slot range a block at a time instead of visiting
 * them.  Kept in exclusive pools of CLUSTER_GROUP_MIN_SLOTS slots or more
 * while at most CLUSTER_GROUPS groups have nodes at once; past that the
 * pool drops them for good and its searches visit node by node (the same
 * results either way).  A group whose last node leaves frees its slot.
 */
#define CLUSTER_GROUPS          64
#define CLUSTER_GROUP_MIN_SLOTS 128
#define CLUSTER_GROUP_LOG       64 /* slots made or freed a pool remembers */

struct class_group {
	int32_t id;     /* the class (cluster.classes) */
	int32_t key;    /* the nodes' key in the pool's whole index */
	int32_t nodes;  /* 0: the slot is free */
	int32_t next;   /* the slot of the class's next group, -1: none */
	uint64_t *bits; /* a bit per slot of the pool */
	int32_t *block; /* nodes per block of CLUSTER_BLOCK_WORDS words */
};

struct class_groups {
	bool on;
	struct class_group *at;       /* CLUSTER_GROUPS slots */
	int32_t live[CLUSTER_GROUPS]; /* the slots with nodes, n_live of them */
	int32_t n_live;
	int32_t pos[CLUSTER_GROUPS]; /* a slot's place in live */
	/* The slots made or freed, seq of them so far, the last
	 * CLUSTER_GROUP_LOG at log[seq % CLUSTER_GROUP_LOG]: a search that
	 * keeps the groups in its own order follows them instead of reading
	 * every live group again (a slot's class and key stay while it lives). */
	uint32_t seq;
	int32_t log[CLUSTER_GROUP_LOG];
};

struct pool_state {
	int32_t first_node;
	int32_t first_gpu; /* its first node's (cluster.gpus) */
	int32_t n_nodes;   /* slots (scenario_pool_slots) */
	int32_t n_ready;   /* of them Ready, in the indexes */
	int32_t gpus_per_node;
	int32_t units_per_gpu;     /* 1, R, 1000, or the layout's instance count */
	struct bucket_index whole; /* untouched GPUs per node */
	struct bucket_index part;  /* replicas: GPUs with a free replica; milli: largest free */
	struct bucket_index *mig;  /* per layout profile (mig_profiles) */
	const struct mig_profile **mig_profiles;
	size_t n_mig;
	uint64_t *ready;    /* bit per slot: Ready (in the indexes) */
	int64_t capacity;   /* GPUs of the Ready nodes */
	double allocated;   /* GPU equivalents */
	bool open;          /* serving batch work now */
	sim_time closes_at; /* end of the current window; SIM_NEVER: always open */
	int32_t unchecked;  /* changes since the last check of the whole pool (debug builds) */
	int32_t tight;      /* slots whose cpu or memory free could stop the largest
			     * request (cluster.most_cpu, most_memory); while none is,
			     * searches skip the cpu and memory filters */
	struct class_groups groups; /* its Ready nodes by class and key ("Class groups") */
};

struct cluster {
	const struct scenario *sc;
	struct node *nodes;
	size_t n_nodes;
	struct gpu *gpus;
	size_t n_gpus;
	double *vram_used; /* per GPU, bytes of its tenants' footprints */
	struct pool_state *pools;
	size_t n_pools;
	int64_t capacity;
	int64_t n_ready; /* Ready nodes of all pools */
	double allocated;
	uint64_t prefer; /* GPUs the next cluster_take gives its pod (a gpu_policy's
				* choice, relative to the node); 0: best fit */
	/* the busy fraction the takes give their tenants (the starting job's,
	 * sim_jobs.c); negative: their workload's */
	double busy;
	uint64_t changes; /* takes, releases, nodes up or down, windows */
	/* What placement sees, as a sum (cluster_state.c): a take adds its
	 * grant's mix and the release takes it away, so a cluster given back
	 * the same grants sums the same; a change not undone exactly (a node
	 * up or down, a window, a grant whose amounts do not add exactly in
	 * doubles) adds a value never seen.  While it stays, a placement that
	 * failed fails again the same way. */
	uint64_t state;
	bool *undoable; /* per workload: its pods' cpu, memory and VRAM add exactly */
	/* per workload and pool: what one of its pods takes, computed once
	 * (cluster_int.h, "Pod figures") */
	struct pod_figures *figures;
	int32_t *class_of; /* per node: its id in classes ("Node classes") */
	struct class_table classes;
	/* nodes up or down, windows: while it stays, the Ready and open nodes
	 * are the same, whatever they hold */
	uint64_t ready_changes;
	int32_t *group_of;            /* per node: its group's slot in its pool, -1: none */
	int32_t *group_head;          /* per class id: the slot of its first group, -1: none */
	double most_cpu, most_memory; /* the largest a workload's pod requests */
	/* per workload with windows of its own: whether they are shut, and when
	 * the open one closes (0: not before the run ends); zeroed, every
	 * workload is open.  The simulation moves them as it moves the pools'. */
	bool *wl_shut;
	sim_time *wl_closes_at;
};

/* The class of node. */
static inline const struct node_class *cluster_class(const struct cluster *c, int32_t node)
{
	return &c->classes.at[c->class_of[node]];
}

/* Where a pod runs and what it holds.  gpu_mask is relative to the node. */
struct cluster_grant {
	int32_t node;
	int32_t first_gpu; /* the node's, so its GPUs are found without it */
	uint64_t gpu_mask;
	int32_t units;      /* per GPU: 1 (whole GPU or replica), milli, or 1 instance */
	int8_t mig_slot;    /* MIG: layout index of the instance; -1 otherwise */
	double equivalent;  /* GPUs' worth allocated (1/R, milli/1000, g/7 ...) */
	double vram;        /* bytes the pod uses on each of its GPUs */
	double cpu;         /* cores taken from the node (0 where cpu is not limited) */
	double memory;      /* bytes taken from the node (0 where memory is not limited) */
	int64_t cpu_scored; /* what the node's cpu_scored and memory_scored gained */
	int64_t memory_scored;
	uint64_t mix; /* what it added to cluster.state (cluster_state.c) */
};

/* Asks for the cache lines a release of the grant will touch (its node and
 * GPUs): a finishing pod's are cold after the hours it ran, and asked for
 * together their misses overlap instead of coming one after another. */
static inline void cluster_prefetch(const struct cluster *c, const struct cluster_grant *grant)
{
	__builtin_prefetch(&c->nodes[grant->node], 1);
	for (uint64_t m = grant->gpu_mask; m; m &= m - 1)
		__builtin_prefetch(&c->gpus[grant->first_gpu + __builtin_ctzll(m)], 1);
}

/* Asks for the lines of a node a pod is about to be placed on, its own and
 * its GPUs', found from its pool without reading the node: a start reads
 * them after the rest of the scheduler's pass, which hides the misses. */
static inline void cluster_prefetch_node(const struct cluster *c, int32_t node)
{
	size_t p = 0;
	while (p + 1 < c->n_pools && node >= c->pools[p + 1].first_node)
		p++;
	const struct pool_state *ps = &c->pools[p];
	int32_t g = ps->gpus_per_node, first = ps->first_gpu + (node - ps->first_node) * g;
	__builtin_prefetch(&c->nodes[node], 1);
	for (int32_t i = 0; i < g; i++)
		__builtin_prefetch(&c->gpus[first + i], 1);
}

/* kube-scheduler scores a pod that requests no cpu or memory as if it asked
 * for 100m and 200 MiB (pkg/scheduler/util/pod_resources.go,
 * GetNonzeroRequests), so that such pods do not all pile on one node. */
#define CLUSTER_NONZERO_CPU_MILLI 100
#define CLUSTER_NONZERO_MEMORY    (200 * 1024 * 1024)

/* A pod of w's cpu in millicores and memory in bytes, as scores count them. */
int64_t cluster_scored_cpu(const struct workload_spec *w);
int64_t cluster_scored_memory(const struct workload_spec *w);

void cluster_init(struct cluster *c, const struct scenario *sc);
void cluster_free(struct cluster *c);

/* A node of pool p that can host a pod of workload w asking for `gpus` units now
 * (GPU units, and the pod's cpu and memory where the pool limits them): the
 * fullest such node for MostAllocated, the emptiest for LeastAllocated, the
 * lowest-numbered on ties; -1 if none.  Does not look at VRAM limits (see
 * placement.h).
 *
 * Cost: the GPU-unit buckets are visited best first; when cpu or memory can
 * bind, the nodes of a bucket are checked one by one until one fits, so a
 * find costs O(buckets) when they do not bind and O(buckets + nodes that fail
 * on cpu or memory) when they do. */
int32_t cluster_find(const struct cluster *c, size_t p, const struct workload_spec *w, int32_t gpus,
		     enum sched_scoring scoring);

/* An extra per-node condition for cluster_find_where (placement's per-node filters). */
typedef bool (*cluster_node_pred)(const struct cluster *c, int32_t node, const void *ctx);

/* cluster_find with an extra condition ok (NULL: none) on the candidates. */
int32_t cluster_find_where(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, enum sched_scoring scoring, cluster_node_pred ok,
			   const void *ctx);

/* The Ready nodes of pool p with the GPU units for a pod of w (the units
 * alone: cpu, memory and other conditions are not looked at), in the best
 * bucket only when best_only (the fullest for MostAllocated, else the
 * emptiest), else in every bucket with room: how many, O(buckets); and the
 * nth of them (0-based, bucket by bucket, then by node number), O(buckets +
 * words).  Scores draw their ties among these (placement.h). */
int32_t cluster_count_room(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, bool best_only, enum sched_scoring scoring);
int32_t cluster_nth_room(const struct cluster *c, size_t p, const struct workload_spec *w,
			 int32_t gpus, bool best_only, enum sched_scoring scoring, int32_t nth);

typedef void (*cluster_node_visit)(int32_t node, void *ctx);

/* Whether node `local` of pool p is one that cluster_count_room counts (a
 * Ready node with the units) and, with checks, one that cluster_each_room
 * visits and cluster_find_where may return (cpu and memory fit, ok passes):
 * O(1), for a pod pinned to one node (cluster_walk.c). */
bool cluster_room_at(const struct cluster *c, size_t p, const struct workload_spec *w, int32_t gpus,
		     int32_t local, bool checks, cluster_node_pred ok, const void *ctx);

/* Calls visit for every Ready node of pool p that can host the pod now (GPU
 * units, cpu and memory) and passes ok (NULL: none): O(buckets + nodes with
 * room).  For scores that differ from node to node. */
void cluster_each_room(const struct cluster *c, size_t p, const struct workload_spec *w,
		       int32_t gpus, cluster_node_pred ok, const void *ctx,
		       cluster_node_visit visit, void *visit_ctx);

/*
 * Walks.  kube-scheduler filters its node list from a rotating index and
 * stops once it has found enough feasible nodes (placement.h, "Sampling").
 * A walk visits, in node order over the slots [from, to) of pool p, the
 * Ready nodes with room for the pod (GPU units, cpu and memory, and ok):
 * per 64 slots it ORs the bitsets of the buckets with room (or, over more
 * than CLUSTER_WALK_LEVELS such buckets, compares the keys), so a walk costs
 * O(nodes it returns + words it skips x buckets).  Counting and choosing
 * (cluster_walk_find) take a block of CLUSTER_BLOCK_WORDS words inside the
 * walk at once from the buckets' block counts: O((blocks + words at either
 * end) x buckets).  Nothing is allocated; the cluster must not change during
 * a walk.
 */
#define CLUSTER_WALK_LEVELS 16

struct cluster_walk {
	const struct cluster *c;
	const struct workload_spec *w;
	cluster_node_pred ok; /* NULL: none */
	const void *ctx;
	const int32_t *key;        /* the request's index keys, for the key mode */
	const uint64_t *room;      /* every key from need on (bucket_index.least);
				   * NULL: from the levels or the keys */
	const int32_t *room_block; /* its block counts */
	const uint64_t *level[CLUSTER_WALK_LEVELS];
	const int32_t *block[CLUSTER_WALK_LEVELS]; /* their block counts */
	int32_t keys[CLUSTER_WALK_LEVELS];         /* and keys, ascending */
	int32_t n_levels;                          /* -1: compare keys (more buckets with room) */
	int32_t need;
	int32_t first_node;
	bool cpu_memory;    /* check the node's cpu and memory: */
	double cpu, memory; /* the pod's, -inf where the pool does not limit it */
	int32_t from, to;   /* slots still to visit: [from, to) */
	size_t word;        /* the word `bits` came from */
	uint64_t bits;      /* candidates of that word not yet visited */
};

void cluster_walk_init(struct cluster_walk *wk, const struct cluster *c, size_t p,
		       const struct workload_spec *w, int32_t gpus, cluster_node_pred ok,
		       const void *ctx, int32_t from, int32_t to);

/* The next node of the walk, or -1 when it is over. */
int32_t cluster_walk_next(struct cluster_walk *wk);

/* The next nodes of the walk, at most max, into out: how many (fewer than
 * max when it is over).  One call, not one a node, for long walks. */
int32_t cluster_walk_take(struct cluster_walk *wk, int32_t *out, int32_t max);

/* A walk over the nodes with room whose key is `level` (-1: any key with
 * room), for counting and choosing without visiting: cpu, memory and other
 * conditions are not looked at (for pools where nothing varies but the
 * units).  How many nodes it has, and the nth of them (0-based, node order;
 * -1 if none): as cluster_walk_find. */
void cluster_walk_level(struct cluster_walk *wk, const struct cluster *c, size_t p,
			const struct workload_spec *w, int32_t gpus, int32_t level, int32_t from,
			int32_t to);
int32_t cluster_walk_count(const struct cluster_walk *wk);
int32_t cluster_walk_nth(const struct cluster_walk *wk, int32_t nth);

/* Both in one pass that stops early: the nth node (nth >= 0) and in *count
 * the nodes before it; or, when there are no more than nth (or nth < 0),
 * -1 and in *count all of them.  O((blocks up to the node found + words at
 * either end) x buckets); O(words x 64) where keys are compared. */
int32_t cluster_walk_find(const struct cluster_walk *wk, int32_t nth, int32_t *count);

/* cluster_walk_level and cluster_walk_find in one, without a walk's setup:
 * the nth node (nth >= 0) with key `level` (-1: any key with room) among
 * pool p's slots [from, to), and in *count the nodes before it; or -1 and
 * in *count all of them.  O(blocks up to the node found + words at either
 * end): one bitset, the level's or the index's nodes with `need` or more. */
int32_t cluster_level_find(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, int32_t level, int32_t from, int32_t to, int32_t nth,
			   int32_t *count);

/* cluster_level_find in two steps, for a search that asks one pool's keys
 * again and again: the index that answers the pod and the key it needs,
 * found once (ix NULL: the pool cannot host the pod), then any key's nth. */
struct cluster_levels {
	const struct cluster *c;
	const struct workload_spec *w;
	const struct bucket_index *ix;
	size_t p;
	int32_t gpus, need, first_node;
};

void cluster_levels_init(struct cluster_levels *lv, const struct cluster *c, size_t p,
			 const struct workload_spec *w, int32_t gpus);
int32_t cluster_levels_find(const struct cluster_levels *lv, int32_t level, int32_t from,
			    int32_t to, int32_t nth, int32_t *count);

/* Whether the nodes a walk of pool p finds for a pod of w asking for `gpus`
 * units are those of its class groups of key *need or more: the pool keeps
 * groups now, the pod's room is in its whole index, and no node of the pool
 * can fail the pod's cpu and memory ("Class groups"). */
bool cluster_groups_answer(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, int32_t *need);

/* The nodes of group `slot` of pool p among the slots [from, to), and in
 * *first the lowest of them (-1: none).  O(blocks + words at either end). */
int32_t cluster_group_count(const struct cluster *c, size_t p, int32_t slot, int32_t from,
			    int32_t to, int32_t *first);

/* The nth (0-based, node order) node of groups slots[0 .. n-1] of pool p
 * among the slots [from, to), or -1.  O((blocks + words) x n). */
int32_t cluster_groups_nth(const struct cluster *c, size_t p, const int32_t *slots, int32_t n,
			   int32_t from, int32_t to, int32_t nth);

/* Ready slots of pool p before slot `local` (its rank among the Ready nodes,
 * O(words)); and the slot of the Ready node of rank `rank` (O(words)). */
int32_t cluster_ready_rank(const struct cluster *c, size_t p, int32_t local);
int32_t cluster_ready_select(const struct cluster *c, size_t p, int32_t rank);

/* NodeResourcesFit, node by node, for messages and per-node scans; a node
 * that is not Ready is judged on its GPUs as if it were (O(its GPUs)). */
bool cluster_has_units(const struct cluster *c, int32_t node, const struct workload_spec *w,
		       int32_t gpus);
static inline bool cluster_cpu_fits(const struct cluster *c, int32_t node,
				    const struct workload_spec *w)
{
	const struct node *nd = &c->nodes[node];
	return c->sc->pools[nd->pool].cpu <= 0 || w->cpu <= nd->cpu_free + 1e-9;
}

static inline bool cluster_memory_fits(const struct cluster *c, int32_t node,
				       const struct workload_spec *w)
{
	const struct node *nd = &c->nodes[node];
	return c->sc->pools[nd->pool].memory_bytes <= 0 || w->memory_bytes <= nd->memory_free + 0.5;
}

/* cluster_has_units for a whole pool at once: the free-unit keys of pool
 * p's nodes (by node - first node of the pool) for a pod of workload w
 * asking for gpus, and in *need the key a Ready node must reach; NULL when
 * no node of the pool can offer the pod's unit.  A Ready node has the units
 * when keys[i] >= *need, as cluster_has_units says; one lookup per pool
 * instead of one per node.  Valid until the cluster next changes. */
const int32_t *cluster_unit_keys(const struct cluster *c, size_t p, const struct workload_spec *w,
				 int32_t gpus, int32_t *need);

/* Nodes of pool p without the GPU units for the pod (all of them when the
 * pool does not offer its resource): O(buckets). */
int32_t cluster_count_short(const struct cluster *c, size_t p, const struct workload_spec *w,
			    int32_t gpus);

/* Whether cpu or memory can stop a pod of w on a node of pool p (the pool
 * limits it and the pod asks for some). */
bool cluster_cpu_memory_bind(const struct cluster *c, size_t p, const struct workload_spec *w);

/* Chooses the GPUs of node for a pod of workload w asking for `gpus` units
 * (best fit: the fullest GPUs that fit, lowest index on ties) and takes them
 * for job; fills *pl. */
void cluster_take(struct cluster *c, int32_t node, const struct workload_spec *w, int32_t gpus,
		  uint32_t job, struct cluster_grant *grant);

/* Gives back what pl holds for job. */
void cluster_release(struct cluster *c, uint32_t job, const struct cluster_grant *grant);

/* A release undone (the preemption's dry run, preempt.h): cluster_save
 * copies job's tenant records on the grant's GPUs (saved: one per GPU, in
 * GPU order) before cluster_release; cluster_put_back takes the grant back
 * exactly as it was (its GPUs, instance and units). */
void cluster_save(const struct cluster *c, uint32_t job, const struct cluster_grant *grant,
		  struct tenant *saved);
void cluster_put_back(struct cluster *c, uint32_t job, const struct cluster_grant *grant,
		      const struct tenant *saved);

/* Something placement sees changed, not by a take or a release: the Ready
 * or open nodes (cluster.ready_changes) and cluster.state move on. */
void cluster_changed(struct cluster *c);

/* Node slot `node` (down and empty) becomes Ready: into the indexes, its
 * GPUs into the capacity. */
void cluster_node_up(struct cluster *c, int32_t node);

/* A Ready node leaves the indexes and the capacity (cordoned or removed);
 * pods still on it keep their units until they are released. */
void cluster_node_down(struct cluster *c, int32_t node);

/* Whether no pod holds anything on the node. */
bool cluster_node_empty(const struct cluster *c, int32_t node);

/* How many pods of w asking for `gpus` units an empty node of pool p holds
 * (GPU units, cpu and memory); 0 when none fits.  The autoscaler's estimate. */
int32_t cluster_pods_per_node(const struct cluster *c, size_t p, const struct workload_spec *w,
			      int32_t gpus);

/* Largest number of untouched GPUs on one node of pool p. */
int32_t cluster_max_free(const struct cluster *c, size_t p);

/* "<pool>-<i>" for node (caller frees). */
char *cluster_node_name(const struct cluster *c, int32_t node);

/* Compares every index of pool p (each node's key, its bit, the per-level
 * counts) and the pool's allocation with a recomputation from the GPUs;
 * false on drift, with the first disagreement in why (NULL: not wanted).
 * Repairs nothing.  O(nodes x GPUs + levels x words) of the pool; runs after
 * every cluster_take and cluster_release on a Ready node when NDEBUG is off
 * (a node out of the indexes changes none of them). */
bool cluster_pool_consistent(const struct cluster *c, size_t p, char *why, size_t len);

/* Every pool, and the cluster's total allocation. */
bool cluster_consistent(const struct cluster *c);

/*
 * Windows.  Whether pool p is open at time t (relative to the scenario start),
 * and when that changes next (SIM_NEVER if never).  A pool without windows is
 * always open.  Overlapping windows merge.
 */
bool cluster_window_state(const struct pool_spec *pool, int64_t start_epoch, sim_time t,
			  sim_time *next_change);

/* The same for any list of windows (a workload's); n == 0 is always open. */
bool cluster_windows_state(const struct window *windows, size_t n, int64_t start_epoch, sim_time t,
			   sim_time *next_change);

/* The share of [t, t + seconds) in which pool p's windows and workload w's
 * own are both open (1 when neither has any): a closed pool's idle GPUs are
 * not free for work, nor is any GPU for a workload outside its windows. */
double cluster_open_share(const struct pool_spec *p, const struct workload_spec *w,
			  int64_t start_epoch, sim_time t, double seconds);

#endif
