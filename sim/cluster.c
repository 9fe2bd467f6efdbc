/*
 * cluster.c - nodes, GPUs, units, tenants, bucket indexes and pool windows
 * (see cluster.h).
 */
#include "gpuplan/cluster.h"

#include "cluster_int.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- bucket index ----------------------------------------------------------- */

/* Where the block count of node `local` in level k is. */
size_t cluster_index_block(const struct bucket_index *ix, int32_t k, int32_t local)
{
	return (size_t)k * ix->blocks + (size_t)local / (64 * CLUSTER_BLOCK_WORDS);
}

/* An index over `nodes` slots whose first `members` are in bucket key; the
 * others (nodes not Ready) are in no bucket, key -1. */
static void index_init(struct bucket_index *ix, int32_t levels, int32_t nodes, int32_t members,
		       int32_t key)
{
	ix->levels = levels;
	ix->words = ((size_t)nodes + 63) / 64;
	ix->blocks = (ix->words + CLUSTER_BLOCK_WORDS - 1) / CLUSTER_BLOCK_WORDS;
	ix->bits = gp_xcalloc((size_t)levels * ix->words + 1, sizeof *ix->bits);
	ix->count = gp_xcalloc((size_t)levels, sizeof *ix->count);
	ix->block = gp_xcalloc((size_t)levels * ix->blocks + 1, sizeof *ix->block);
	ix->key = gp_xcalloc((size_t)nodes + 1, sizeof *ix->key);
	for (int32_t i = 0; i < nodes; i++) {
		ix->key[i] = i < members ? key : -1;
		if (i < members) {
			ix->bits[(size_t)key * ix->words + (size_t)i / 64] |= UINT64_C(1)
									      << (i % 64);
			ix->block[cluster_index_block(ix, key, i)]++;
		}
	}
	ix->count[key] = members;
	if (levels > CLUSTER_LEAST_LEVELS)
		return;
	ix->least = gp_xcalloc((size_t)levels * ix->words + 1, sizeof *ix->least);
	ix->least_block = gp_xcalloc((size_t)levels * ix->blocks + 1, sizeof *ix->least_block);
	ix->least_count = gp_xcalloc((size_t)levels, sizeof *ix->least_count);
	for (int32_t k = 0; k <= key; k++)
		ix->least_count[k] = members;
	for (int32_t k = 0; k <= key; k++)
		for (int32_t i = 0; i < members; i++) {
			ix->least[(size_t)k * ix->words + (size_t)i / 64] |= UINT64_C(1)
									     << (i % 64);
			ix->least_block[cluster_index_block(ix, k, i)]++;
		}
}

static void index_free(struct bucket_index *ix)
{
	free(ix->bits);
	free(ix->count);
	free(ix->block);
	free(ix->key);
	free(ix->least);
	free(ix->least_block);
	free(ix->least_count);
}

/* Moves node `local` to bucket key; -1 takes it out of every bucket (a node
 * that is not Ready), and a node out of the buckets comes back in. */
static inline __attribute__((always_inline)) void index_set(struct bucket_index *ix, int32_t local,
							    int32_t key)
{
	if (!ix->levels) /* an index this pool's sharing mode does not use */
		return;
	int32_t old = ix->key[local];
	if (old == key)
		return;
	assert(key >= -1 && key < ix->levels);
	uint64_t bit = UINT64_C(1) << (local % 64);
	size_t w = (size_t)local / 64;
	if (old >= 0) {
		ix->bits[(size_t)old * ix->words + w] &= ~bit;
		ix->count[old]--;
		ix->block[cluster_index_block(ix, old, local)]--;
	}
	if (key >= 0) {
		ix->bits[(size_t)key * ix->words + w] |= bit;
		ix->count[key]++;
		ix->block[cluster_index_block(ix, key, local)]++;
	}
	ix->key[local] = key;
	if (!ix->least)
		return;
	/* the sets of keys old+1 .. key gain the node; of key+1 .. old lose it */
	int32_t up = key > old ? 1 : -1, lo = (key > old ? old : key) + 1,
		hi = key > old ? key : old;
	for (int32_t k = lo; k <= hi; k++) {
		ix->least[(size_t)k * ix->words + w] ^= bit;
		ix->least_block[cluster_index_block(ix, k, local)] += up;
		ix->least_count[k] += up;
	}
}

static int32_t index_first(const struct bucket_index *ix, int32_t k)
{
	const uint64_t *b = ix->bits + (size_t)k * ix->words;
	for (size_t w = 0; w < ix->words; w++)
		if (b[w])
			return (int32_t)(w * 64 + (size_t)__builtin_ctzll(b[w]));
	return -1;
}

/* Per-node conditions a find checks beyond the index key. */
struct node_check {
	const struct cluster *c;
	int32_t first_node;
	const struct workload_spec *w;
	bool cpu_memory;      /* check the node's cpu and memory */
	cluster_node_pred ok; /* NULL: none */
	const void *ctx;
};

/* Whether a node of class k could fail cluster_cpu_fits or
 * cluster_memory_fits for the largest request of any workload (then for
 * some workload; else for none, as no request is larger). */
static bool class_tight(const struct cluster *c, const struct node_class *k)
{
	const struct pool_spec *spec = &c->sc->pools[k->pool];
	return (spec->cpu > 0 && c->most_cpu > k->cpu_free + 1e-9) ||
	       (spec->memory_bytes > 0 && c->most_memory > k->memory_free + 0.5);
}

/* class_tight of class id, found once for the class. */
static bool id_tight(struct cluster *c, int32_t id)
{
	struct node_class *k = &c->classes.at[id];
	if (k->tight < 0)
		k->tight = class_tight(c, k);
	return k->tight;
}

/* Whether a search over pool p must check cpu and memory node by node for
 * a pod of w: they can stop it (cluster_cpu_memory_bind), and some node of
 * the pool is tight now or w asks for more than the scenario's workloads
 * (a caller's own spec).  Skipping a check every node passes changes no
 * result. */
bool cluster_check_cpu_memory(const struct cluster *c, size_t p, const struct workload_spec *w)
{
	bool beyond = w->cpu > c->most_cpu || w->memory_bytes > c->most_memory;
	return (c->pools[p].tight > 0 || beyond) && cluster_cpu_memory_bind(c, p, w);
}

static bool check_node(const struct node_check *nc, int32_t local)
{
	int32_t node = nc->first_node + local;
	if (nc->cpu_memory &&
	    (!cluster_cpu_fits(nc->c, node, nc->w) || !cluster_memory_fits(nc->c, node, nc->w)))
		return false;
	return !nc->ok || nc->ok(nc->c, node, nc->ctx);
}

/* The lowest-numbered node of bucket k that passes the checks, or -1. */
static int32_t index_scan(const struct bucket_index *ix, int32_t k, const struct node_check *nc)
{
	const uint64_t *b = ix->bits + (size_t)k * ix->words;
	for (size_t w = 0; w < ix->words; w++)
		for (uint64_t bits = b[w]; bits; bits &= bits - 1) {
			int32_t local = (int32_t)(w * 64 + (size_t)__builtin_ctzll(bits));
			if (check_node(nc, local))
				return local;
		}
	return -1;
}

/* The lowest-numbered node whose key is the smallest (most) or largest key >=
 * need, among the nodes that pass the checks (nc NULL: no checks). */
static int32_t index_find(const struct bucket_index *ix, int32_t need, bool most_allocated,
			  const struct node_check *nc)
{
	if (need < 0 || need >= ix->levels)
		return -1;
	int32_t step = most_allocated ? 1 : -1;
	for (int32_t k = most_allocated ? need : ix->levels - 1; k >= need && k < ix->levels;
	     k += step) {
		if (!ix->count[k])
			continue;
		int32_t local = nc ? index_scan(ix, k, nc) : index_first(ix, k);
		if (local >= 0)
			return local;
	}
	return -1;
}

/* --- per-node keys ------------------------------------------------------- */

static int32_t free_instances(const struct pool_state *ps, const struct pool_spec *spec,
			      const struct gpu *g, size_t profile)
{
	int32_t n = 0;
	for (size_t i = 0; i < spec->sharing.n_layout; i++)
		n += (g->mig_free >> i & 1) && spec->sharing.layout[i] == ps->mig_profiles[profile];
	return n;
}

/* The node's keys in its pool's whole and part indexes, computed from its
 * GPUs alone (refresh stores them; cluster_pool_consistent compares). */
static void node_keys(const struct cluster *c, int32_t node, int32_t *whole, int32_t *part)
{
	const struct node *nd = &c->nodes[node];
	const struct pool_state *ps = &c->pools[nd->pool];
	const struct sharing *sh = &c->sc->pools[nd->pool].sharing;
	bool fractional = sh->mode == SHARING_FRACTIONAL, stacks = sharing_stacks(sh);
	*whole = *part = 0;
	for (int32_t i = 0; i < nd->gpus; i++) {
		const struct gpu *g = &c->gpus[nd->first_gpu + i];
		*whole += cluster_untouched(ps, g);
		if (fractional)
			*part = g->free > *part ? g->free : *part;
		else if (stacks) /* free replicas, wherever they are */
			*part += g->free;
		else
			*part += g->free > 0;
	}
}

/* The node's key in the index of MIG profile m of its pool. */
static int32_t node_mig_key(const struct cluster *c, int32_t node, size_t m)
{
	const struct node *nd = &c->nodes[node];
	int32_t n = 0;
	for (int32_t i = 0; i < nd->gpus; i++)
		n += free_instances(&c->pools[nd->pool], &c->sc->pools[nd->pool],
				    &c->gpus[nd->first_gpu + i], m);
	return n;
}

/* Recomputes the node's keys in every index of its pool from its GPUs. */
static void refresh(struct cluster *c, int32_t node)
{
	if (!c->nodes[node].ready)
		return; /* out of the indexes until it is Ready (cluster_node_up) */
	struct pool_state *ps = &c->pools[c->nodes[node].pool];
	int32_t local = node - ps->first_node, whole, part = 0;
	if (c->sc->pools[c->nodes[node].pool].sharing.mode == SHARING_EXCLUSIVE) {
		/* the only key, the untouched GPUs: no part index, no MIG */
		assert(!ps->part.levels && !ps->n_mig);
		int32_t key = gp_popcount64(c->nodes[node].untouched);
		index_set(&ps->whole, local, key);
		if (ps->groups.on)
			cluster_groups_move(c, ps, node, local, key);
		return;
	}
	node_keys(c, node, &whole, &part);
	index_set(&ps->whole, local, whole);
	index_set(&ps->part, local, part);
	for (size_t m = 0; m < ps->n_mig; m++)
		index_set(&ps->mig[m], local, node_mig_key(c, node, m));
	if (ps->groups.on) /* tested here too: most pools keep none, and a call costs more */
		cluster_groups_place(c, node);
}

static int32_t mig_index(const struct pool_state *ps, const char *profile);

/* What of node its class is. */
static struct node_class class_key(const struct node *nd)
{
	return (struct node_class){.pool = nd->pool,
				   .allocated = nd->allocated,
				   .cpu_free = nd->cpu_free,
				   .memory_free = nd->memory_free,
				   .cpu_scored = nd->cpu_scored,
				   .memory_scored = nd->memory_scored};
}

/* --- setup --------------------------------------------------------------- */

/* The distinct profiles of a MIG layout, each with an index of its free instances. */
static void init_mig(struct pool_state *ps, const struct pool_spec *spec)
{
	const struct sharing *sh = &spec->sharing;
	ps->mig_profiles = gp_xcalloc(sh->n_layout, sizeof *ps->mig_profiles);
	ps->mig = gp_xcalloc(sh->n_layout, sizeof *ps->mig);
	for (size_t i = 0; i < sh->n_layout; i++) {
		size_t m = 0, count = 0;
		while (m < ps->n_mig && ps->mig_profiles[m] != sh->layout[i])
			m++;
		if (m < ps->n_mig)
			continue;
		for (size_t k = 0; k < sh->n_layout; k++)
			count += sh->layout[k] == sh->layout[i];
		int32_t all = spec->gpus_per_node * (int32_t)count;
		ps->mig_profiles[ps->n_mig] = sh->layout[i];
		index_init(&ps->mig[ps->n_mig++], all + 1, ps->n_nodes, spec->nodes, all);
	}
}

/* Pool p's slots: its `nodes` Ready, the rest (an autoscaler's room to grow)
 * down until cluster_node_up. */
static void init_pool(struct cluster *c, size_t p, int32_t first_node, int32_t first_gpu)
{
	const struct pool_spec *spec = &c->sc->pools[p];
	struct pool_state *ps = &c->pools[p];
	int32_t g = spec->gpus_per_node, slots = scenario_pool_slots(spec), up = spec->nodes;
	ps->first_node = first_node;
	ps->first_gpu = first_gpu;
	ps->n_nodes = slots;
	ps->n_ready = up;
	ps->gpus_per_node = g;
	ps->units_per_gpu = sharing_units_per_gpu(&spec->sharing);
	ps->capacity = (int64_t)g * up;
	ps->open = true;
	ps->closes_at = SIM_NEVER;
	ps->ready = gp_xcalloc(((size_t)slots + 63) / 64 + 1, sizeof *ps->ready);
	for (int32_t i = 0; i < up; i++)
		ps->ready[i / 64] |= UINT64_C(1) << (i % 64);
	index_init(&ps->whole, g + 1, slots, up, g);
	switch (spec->sharing.mode) {
	case SHARING_TIME_SLICING:
	case SHARING_MPS: {
		int32_t most = sharing_stacks(&spec->sharing) ? g * spec->sharing.replicas : g;
		index_init(&ps->part, most + 1, slots, up, most);
		break;
	}
	case SHARING_FRACTIONAL:
		index_init(&ps->part, SHARING_MILLI + 1, slots, up, SHARING_MILLI);
		break;
	case SHARING_MIG: init_mig(ps, spec); break;
	case SHARING_EXCLUSIVE: break;
	}
	uint8_t all_instances = (uint8_t)((1u << spec->sharing.n_layout) - 1);
	uint64_t all_gpus = g >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << g) - 1;
	for (int32_t i = 0; i < slots; i++) {
		c->nodes[first_node + i] = (struct node){.pool = (int32_t)p,
							 .first_gpu = first_gpu + i * g,
							 .gpus = g,
							 .cpu_free = spec->cpu,
							 .memory_free = spec->memory_bytes,
							 .ready = i < up,
							 .untouched = all_gpus};
		for (int32_t k = 0; k < g; k++)
			c->gpus[first_gpu + i * g + k] =
				(struct gpu){.free = ps->units_per_gpu, .mig_free = all_instances};
	}
}

void cluster_init(struct cluster *c, const struct scenario *sc)
{
	memset(c, 0, sizeof *c);
	c->sc = sc;
	c->busy = -1;
	c->n_pools = sc->n_pools;
	c->pools = gp_xcalloc(sc->n_pools, sizeof *c->pools);
	c->wl_shut = gp_xcalloc(sc->n_workloads + 1, sizeof *c->wl_shut);
	cluster_state_init(c);
	c->wl_closes_at = gp_xcalloc(sc->n_workloads + 1, sizeof *c->wl_closes_at);
	for (size_t p = 0; p < sc->n_pools; p++) {
		int32_t slots = scenario_pool_slots(&sc->pools[p]);
		c->n_nodes += (size_t)slots;
		c->n_gpus += (size_t)slots * (size_t)sc->pools[p].gpus_per_node;
	}
	c->nodes = gp_xcalloc_lines(c->n_nodes + 1, sizeof *c->nodes);
	c->gpus = gp_xcalloc_lines(c->n_gpus + 1, sizeof *c->gpus);
	c->vram_used = gp_xcalloc(c->n_gpus + 1, sizeof *c->vram_used);
	int32_t node = 0, gpu = 0;
	for (size_t p = 0; p < sc->n_pools; p++) {
		init_pool(c, p, node, gpu);
		node += c->pools[p].n_nodes;
		gpu += c->pools[p].n_nodes * sc->pools[p].gpus_per_node;
		c->capacity += c->pools[p].capacity;
		c->n_ready += c->pools[p].n_ready;
	}
	for (size_t w = 0; w < sc->n_workloads; w++) {
		c->most_cpu = fmax(c->most_cpu, sc->workloads[w].cpu);
		c->most_memory = fmax(c->most_memory, sc->workloads[w].memory_bytes);
	}
	c->class_of = gp_xcalloc(c->n_nodes + 1, sizeof *c->class_of);
	cluster_figures_init(c);
	cluster_classes_init(&c->classes, c->n_nodes);
	for (size_t i = 0; i < c->n_nodes; i++) {
		struct node_class key = class_key(&c->nodes[i]);
		c->class_of[i] = cluster_classes_enter(&c->classes, &key);
		c->pools[c->nodes[i].pool].tight += id_tight(c, c->class_of[i]);
	}
	cluster_groups_init(c);
}

void cluster_node_up(struct cluster *c, int32_t node)
{
	cluster_changed(c);
	struct node *nd = &c->nodes[node];
	struct pool_state *ps = &c->pools[nd->pool];
	assert(!nd->ready && nd->allocated == 0 && "a node comes up empty");
	nd->ready = true;
	int32_t local = node - ps->first_node;
	ps->ready[local / 64] |= UINT64_C(1) << (local % 64);
	ps->n_ready++;
	c->n_ready++;
	ps->capacity += nd->gpus;
	c->capacity += nd->gpus;
	refresh(c, node);
}

void cluster_node_down(struct cluster *c, int32_t node)
{
	cluster_changed(c);
	struct node *nd = &c->nodes[node];
	struct pool_state *ps = &c->pools[nd->pool];
	assert(nd->ready);
	int32_t local = node - ps->first_node;
	index_set(&ps->whole, local, -1);
	index_set(&ps->part, local, -1);
	for (size_t m = 0; m < ps->n_mig; m++)
		index_set(&ps->mig[m], local, -1);
	cluster_groups_remove(c, node);
	nd->ready = false;
	ps->ready[local / 64] &= ~(UINT64_C(1) << (local % 64));
	ps->n_ready--;
	c->n_ready--;
	ps->capacity -= nd->gpus;
	c->capacity -= nd->gpus;
}

bool cluster_node_empty(const struct cluster *c, int32_t node)
{
	const struct node *nd = &c->nodes[node];
	for (int32_t i = 0; i < nd->gpus; i++)
		if (c->gpus[nd->first_gpu + i].n_tenants)
			return false;
	const struct pool_spec *spec = &c->sc->pools[nd->pool];
	return nd->allocated == 0 && nd->cpu_free >= spec->cpu - 1e-9 &&
	       nd->memory_free >= spec->memory_bytes - 0.5;
}

int32_t cluster_pods_per_node(const struct cluster *c, size_t p, const struct workload_spec *w,
			      int32_t gpus)
{
	const struct pool_spec *spec = &c->sc->pools[p];
	const struct pool_state *ps = &c->pools[p];
	int32_t g = spec->gpus_per_node, n = 0;
	switch (w->request) {
	case REQUEST_GPUS:
		if (gpus > sharing_max_units(&spec->sharing, g))
			return 0;
		/* Whole GPUs: g / gpus pods; replicas: one per GPU each, R per GPU. */
		n = spec->sharing.mode == SHARING_TIME_SLICING || spec->sharing.mode == SHARING_MPS
			    ? (gpus ? ps->units_per_gpu * g / gpus : INT32_MAX)
			    : (gpus ? g / gpus : INT32_MAX);
		break;
	case REQUEST_MILLI: n = w->milli > 0 ? SHARING_MILLI / w->milli * g : 0; break;
	case REQUEST_MIG: {
		int32_t m = mig_index(ps, w->mig_profile);
		n = m >= 0 ? ps->mig[m].levels - 1 : 0;
		break;
	}
	}
	if (spec->cpu > 0 && w->cpu > 0)
		n = (int32_t)fmin(n, floor(spec->cpu / w->cpu + 1e-9));
	if (spec->memory_bytes > 0 && w->memory_bytes > 0)
		n = (int32_t)fmin(n, floor(spec->memory_bytes / w->memory_bytes + 1e-9));
	return n;
}

void cluster_free(struct cluster *c)
{
	cluster_groups_free(c); /* reads the pools */
	free(c->wl_shut);
	free(c->undoable);
	free(c->figures);
	free(c->wl_closes_at);
	for (size_t p = 0; p < c->n_pools; p++) {
		struct pool_state *ps = &c->pools[p];
		index_free(&ps->whole);
		index_free(&ps->part);
		for (size_t m = 0; m < ps->n_mig; m++)
			index_free(&ps->mig[m]);
		free(ps->mig);
		free(ps->mig_profiles);
		free(ps->ready);
	}
	for (size_t i = 0; i < c->n_gpus; i++)
		free(c->gpus[i].more);
	free(c->pools);
	free(c->nodes);
	free(c->gpus);
	free(c->vram_used);
	free(c->class_of);
	cluster_classes_free(&c->classes);
	memset(c, 0, sizeof *c);
}

/* --- finding and taking ------------------------------------------------------ */

static int32_t mig_index(const struct pool_state *ps, const char *profile)
{
	for (size_t m = 0; m < ps->n_mig; m++)
		if (!strcmp(ps->mig_profiles[m]->name, profile))
			return (int32_t)m;
	return -1;
}

const struct bucket_index *cluster_request_share_index(const struct cluster *c, size_t p,
						       const struct workload_spec *w, int32_t *need)
{
	const struct pool_state *ps = &c->pools[p];
	enum sharing_mode mode = c->sc->pools[p].sharing.mode;
	switch (w->request) {
	case REQUEST_GPUS: assert(!"answered inline by cluster_request_index"); break;
	case REQUEST_MILLI: *need = w->milli; return mode == SHARING_FRACTIONAL ? &ps->part : NULL;
	case REQUEST_MIG: {
		int32_t m = mig_index(ps, w->mig_profile);
		*need = 1;
		return m >= 0 ? &ps->mig[m] : NULL;
	}
	}
	return NULL;
}

int32_t cluster_find_where(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, enum sched_scoring scoring, cluster_node_pred ok,
			   const void *ctx)
{
	int32_t need = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (!ix)
		return -1;
	struct node_check nc = {
		c, c->pools[p].first_node, w, cluster_check_cpu_memory(c, p, w), ok, ctx};
	bool checks = nc.cpu_memory || ok;
	int32_t local =
		index_find(ix, need, scoring == SCORING_MOST_ALLOCATED, checks ? &nc : NULL);
	return local < 0 ? -1 : nc.first_node + local;
}

/* The buckets of ix a search over nodes with room visits: [*lo, *hi]; the
 * best one only (the fullest for MostAllocated, else the emptiest) when
 * best_only.  False when no node has room. */
static bool room_buckets(const struct bucket_index *ix, int32_t need, bool best_only,
			 enum sched_scoring scoring, int32_t *lo, int32_t *hi)
{
	if (need < 0 || need >= ix->levels)
		return false;
	*lo = need;
	*hi = ix->levels - 1;
	if (!best_only)
		return true;
	bool most = scoring == SCORING_MOST_ALLOCATED;
	for (int32_t k = most ? need : ix->levels - 1; k >= need && k < ix->levels;
	     k += most ? 1 : -1)
		if (ix->count[k]) {
			*lo = *hi = k;
			return true;
		}
	return false;
}

int32_t cluster_count_room(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, bool best_only, enum sched_scoring scoring)
{
	int32_t need = 0, lo = 0, hi = -1, n = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (ix && ix->least && !best_only) /* every key from need on: the set's count */
		return need < 0 || need >= ix->levels ? 0 : ix->least_count[need];
	if (!ix || !room_buckets(ix, need, best_only, scoring, &lo, &hi))
		return 0;
	for (int32_t k = lo; k <= hi; k++)
		n += ix->count[k];
	return n;
}

int32_t cluster_nth_room(const struct cluster *c, size_t p, const struct workload_spec *w,
			 int32_t gpus, bool best_only, enum sched_scoring scoring, int32_t nth)
{
	int32_t need = 0, lo = 0, hi = -1;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (!ix || !room_buckets(ix, need, best_only, scoring, &lo, &hi))
		return -1;
	for (int32_t k = lo; k <= hi; k++) {
		if (nth >= ix->count[k]) {
			nth -= ix->count[k];
			continue;
		}
		const uint64_t *b = ix->bits + (size_t)k * ix->words;
		for (size_t i = 0; i < ix->words; i++) {
			int32_t in_word = gp_popcount64(b[i]);
			if (nth >= in_word) {
				nth -= in_word;
				continue;
			}
			uint64_t bits = b[i];
			while (nth-- > 0)
				bits &= bits - 1;
			return c->pools[p].first_node + (int32_t)(i * 64) + __builtin_ctzll(bits);
		}
	}
	return -1;
}

void cluster_each_room(const struct cluster *c, size_t p, const struct workload_spec *w,
		       int32_t gpus, cluster_node_pred ok, const void *ctx,
		       cluster_node_visit visit, void *visit_ctx)
{
	int32_t need = 0, lo = 0, hi = -1;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (!ix || !room_buckets(ix, need, false, SCORING_LEAST_ALLOCATED, &lo, &hi))
		return;
	struct node_check nc = {
		c, c->pools[p].first_node, w, cluster_check_cpu_memory(c, p, w), ok, ctx};
	for (int32_t k = lo; k <= hi; k++) {
		const uint64_t *b = ix->bits + (size_t)k * ix->words;
		for (size_t i = 0; ix->count[k] && i < ix->words; i++)
			for (uint64_t bits = b[i]; bits; bits &= bits - 1) {
				int32_t local = (int32_t)(i * 64) + __builtin_ctzll(bits);
				if (check_node(&nc, local))
					visit(nc.first_node + local, visit_ctx);
			}
	}
}

int32_t cluster_find(const struct cluster *c, size_t p, const struct workload_spec *w, int32_t gpus,
		     enum sched_scoring scoring)
{
	return cluster_find_where(c, p, w, gpus, scoring, NULL, NULL);
}

bool cluster_has_units(const struct cluster *c, int32_t node, const struct workload_spec *w,
		       int32_t gpus)
{
	size_t p = (size_t)c->nodes[node].pool;
	int32_t need = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (!ix || need >= ix->levels)
		return false;
	if (c->nodes[node].ready)
		return ix->key[node - c->pools[p].first_node] >= need;
	/* A node out of the indexes (the autoscaler's simulations): its key
	 * from its GPUs, as refresh would set it. */
	const struct pool_state *ps = &c->pools[p];
	int32_t whole, part;
	node_keys(c, node, &whole, &part);
	if (ix == &ps->whole)
		return whole >= need;
	if (ix == &ps->part)
		return part >= need;
	return node_mig_key(c, node, (size_t)(ix - ps->mig)) >= need;
}

const int32_t *cluster_unit_keys(const struct cluster *c, size_t p, const struct workload_spec *w,
				 int32_t gpus, int32_t *need)
{
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, need);
	return ix && *need < ix->levels ? ix->key : NULL;
}

bool cluster_cpu_memory_bind(const struct cluster *c, size_t p, const struct workload_spec *w)
{
	const struct pool_spec *spec = &c->sc->pools[p];
	return (spec->cpu > 0 && w->cpu > 0) || (spec->memory_bytes > 0 && w->memory_bytes > 0);
}

int32_t cluster_count_short(const struct cluster *c, size_t p, const struct workload_spec *w,
			    int32_t gpus)
{
	int32_t need = 0, n = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (!ix || need >= ix->levels)
		return c->pools[p].n_ready;
	for (int32_t k = 0; k < need; k++)
		n += ix->count[k];
	return n;
}

/* The pod's GPU equivalents to the node (its cpu and memory are there
 * already), and the node to its new class. */
static void account(struct cluster *c, int32_t node, double equivalent)
{
	struct node *nd = &c->nodes[node];
	nd->allocated += equivalent;
	c->pools[nd->pool].allocated += equivalent;
	c->allocated += equivalent;
	assert(nd->allocated <= nd->gpus + 1e-9 && "no GPU over-allocated");
	if (nd->allocated < 1e-12)
		nd->allocated = 0; /* float dust */
	struct node_class key = class_key(nd);
	/* each class's tightness found once: a node moves between few */
	bool was_tight = id_tight(c, c->class_of[node]);
	c->class_of[node] = cluster_classes_move(&c->classes, c->class_of[node], &key);
	c->pools[nd->pool].tight += id_tight(c, c->class_of[node]) - was_tight;
}

/*
 * Debug builds check the invariants of a Ready node's pool (indexes, free
 * units, allocation) after changes, the whole pool once every n_nodes
 * changes: O(1) per change amortized, so a 10,000-node scenario does not run
 * ten thousand times slower than under NDEBUG.  A node out of the indexes
 * (the autoscaler's simulations, a drain) changes none of them.
 */
static void check_pool(struct cluster *c, const struct node *nd)
{
#ifdef NDEBUG
	(void)c;
	(void)nd;
#else
	struct pool_state *ps = &c->pools[nd->pool];
	if (!nd->ready || ++ps->unchecked < ps->n_nodes)
		return;
	ps->unchecked = 0;
	assert(cluster_pool_consistent(c, (size_t)nd->pool, NULL, 0));
#endif
}

void cluster_node_moved(struct cluster *c, int32_t node, double equivalent)
{
	account(c, node, equivalent);
	refresh(c, node);
	check_pool(c, &c->nodes[node]);
}

int32_t cluster_max_free(const struct cluster *c, size_t p)
{
	const struct pool_state *ps = &c->pools[p];
	for (int32_t k = ps->gpus_per_node; k > 0; k--)
		if (ps->whole.count[k])
			return k;
	return 0;
}

char *cluster_node_name(const struct cluster *c, int32_t node)
{
	const struct node *nd = &c->nodes[node];
	const char *pool = c->sc->pools[nd->pool].name;
	int local = node - c->pools[nd->pool].first_node;
	size_t len = strlen(pool) + 16;
	char *s = gp_xmalloc(len);
	snprintf(s, len, "%s-%d", pool, local);
	return s;
}

/* Whether ix->least holds, for each k, the nodes (of n) whose key is k or more. */
static bool least_agrees(const struct bucket_index *ix, int32_t n, const char *name, char *why,
			 size_t len)
{
	if (!ix->least)
		return true;
	for (int32_t k = ix->levels - 1, from_k = 0; k >= 0; k--) {
		from_k += ix->count[k];
		if (from_k != ix->least_count[k])
			return snprintf(why, len, "%s index: %d nodes of keys from %d, %d counted",
					name, (int)ix->least_count[k], (int)k, (int)from_k),
			       false;
	}
	for (int32_t k = 0; k < ix->levels; k++)
		for (size_t b = 0; b < ix->blocks; b++) {
			int32_t in_block = 0;
			for (size_t i = b * CLUSTER_BLOCK_WORDS;
			     i < (b + 1) * CLUSTER_BLOCK_WORDS && i < ix->words; i++) {
				uint64_t want = 0;
				for (size_t j = i * 64; j < i * 64 + 64 && j < (size_t)n; j++)
					if (ix->key[j] >= k)
						want |= UINT64_C(1) << (j % 64);
				if (ix->least[(size_t)k * ix->words + i] != want)
					return snprintf(why, len,
							"%s index: word %zu of the keys from %d",
							name, i, (int)k),
					       false;
				in_block += gp_popcount64(want);
			}
			if (in_block != ix->least_block[(size_t)k * ix->blocks + b])
				return snprintf(why, len,
						"%s index: block %zu of the keys from %d counts %d",
						name, b, (int)k,
						(int)ix->least_block[(size_t)k * ix->blocks + b]),
				       false;
		}
	return true;
}

/* Whether index ix agrees with the keys want[] of the pool's n nodes: each
 * node's key, its bit in that level's bitset and no other, the per-level
 * and per-block counts, the sets of keys k or more.  Fills why with the
 * first disagreement. */
static bool index_agrees(const struct bucket_index *ix, const int32_t *want, int32_t n,
			 const char *name, char *why, size_t len)
{
	if (!ix->levels)
		return true; /* an index this pool's sharing mode does not use */
	int64_t bits = 0, members = 0;
	for (size_t i = 0; i < (size_t)ix->levels * ix->words; i++)
		bits += __builtin_popcountll(ix->bits[i]);
	for (int32_t i = 0; i < n; i++)
		members += want[i] >= 0; /* -1: a node that is not Ready, in no bucket */
	if (bits != members)
		return snprintf(why, len, "%s index: %lld bits set for %lld nodes", name,
				(long long)bits, (long long)members),
		       false;
	int32_t *count = gp_xcalloc((size_t)ix->levels, sizeof *count);
	bool ok = true;
	for (int32_t i = 0; i < n && ok; i++) {
		int32_t k = want[i];
		if (k < 0) {
			ok = ix->key[i] == -1;
			if (!ok)
				snprintf(why, len, "%s index: node %d is not Ready but has key %d",
					 name, (int)i, (int)ix->key[i]);
			continue;
		}
		ok = k < ix->levels && ix->key[i] == k &&
		     (ix->bits[(size_t)k * ix->words + (size_t)i / 64] >> (i % 64) & 1);
		if (!ok)
			snprintf(why, len, "%s index: node %d has key %d and should have %d", name,
				 (int)i, (int)ix->key[i], (int)k);
		else
			count[k]++;
	}
	for (int32_t k = 0; k < ix->levels && ok; k++)
		if (count[k] != ix->count[k]) {
			ok = false;
			snprintf(why, len, "%s index: level %d counts %d nodes, %d have it", name,
				 (int)k, (int)ix->count[k], (int)count[k]);
		}
	for (int32_t k = 0; k < ix->levels && ok; k++)
		for (size_t b = 0; b < ix->blocks && ok; b++) {
			int32_t in_block = 0;
			for (size_t i = b * CLUSTER_BLOCK_WORDS;
			     i < (b + 1) * CLUSTER_BLOCK_WORDS && i < ix->words; i++)
				in_block += gp_popcount64(ix->bits[(size_t)k * ix->words + i]);
			ok = in_block == ix->block[(size_t)k * ix->blocks + b];
			if (!ok)
				snprintf(why, len,
					 "%s index: level %d block %d counts %d nodes, %d have it",
					 name, (int)k, (int)b,
					 (int)ix->block[(size_t)k * ix->blocks + b], (int)in_block);
		}
	free(count);
	return ok && least_agrees(ix, n, name, why, len);
}

bool cluster_pool_consistent(const struct cluster *c, size_t p, char *why, size_t len)
{
	char scratch[1];
	if (!why) {
		why = scratch;
		len = sizeof scratch;
	}
	const struct pool_state *ps = &c->pools[p];
	int32_t n = ps->n_nodes;
	int32_t *whole = gp_xcalloc((size_t)n + 1, sizeof *whole);
	int32_t *part = gp_xcalloc((size_t)n + 1, sizeof *part);
	double allocated = 0;
	int32_t tight = 0;
	bool ok = true;
	for (int32_t i = 0; i < n && ok; i++) {
		int32_t node = ps->first_node + i;
		tight += class_tight(c, cluster_class(c, node));
		node_keys(c, node, &whole[i], &part[i]);
		if (!c->nodes[node].ready)
			whole[i] = part[i] = -1;
		if ((bool)(ps->ready[i / 64] >> (i % 64) & 1) != c->nodes[node].ready) {
			ok = false;
			snprintf(why, len, "node %d: Ready is %d, its ready bit is not", (int)node,
				 (int)c->nodes[node].ready);
		}
		allocated += c->nodes[node].allocated;
		struct node_class key = class_key(&c->nodes[node]);
		const struct node_class *kind = cluster_class(c, node);
		if (kind->nodes <= 0 || !cluster_classes_same(kind, &key) ||
		    (kind->tight >= 0 && (bool)kind->tight != class_tight(c, kind))) {
			ok = false;
			snprintf(why, len, "node %d: its class %d is not what it holds", (int)node,
				 (int)c->class_of[node]);
		}
		for (int32_t k = 0; k < c->nodes[node].gpus && ok; k++) {
			const struct gpu *g = &c->gpus[c->nodes[node].first_gpu + k];
			if (g->free < 0 || g->free > ps->units_per_gpu) {
				ok = false;
				snprintf(why, len, "node %d GPU %d has %d free units of %d",
					 (int)node, (int)k, (int)g->free, (int)ps->units_per_gpu);
			} else if ((bool)(c->nodes[node].untouched >> k & 1) !=
				   cluster_untouched(ps, g)) {
				ok = false;
				snprintf(why, len, "node %d GPU %d: its untouched bit is %d",
					 (int)node, (int)k,
					 (int)(c->nodes[node].untouched >> k & 1));
			}
		}
	}
	ok = ok && index_agrees(&ps->whole, whole, n, "whole", why, len) &&
	     index_agrees(&ps->part, part, n, "part", why, len);
	for (size_t m = 0; m < ps->n_mig && ok; m++) {
		for (int32_t i = 0; i < n; i++)
			whole[i] = c->nodes[ps->first_node + i].ready
					   ? node_mig_key(c, ps->first_node + i, m)
					   : -1;
		ok = index_agrees(&ps->mig[m], whole, n, ps->mig_profiles[m]->name, why, len);
	}
	if (ok && tight != ps->tight) {
		ok = false;
		snprintf(why, len, "pool %zu: %d tight nodes counted, %d found", p, (int)ps->tight,
			 (int)tight);
	}
	if (ok && fabs(allocated - ps->allocated) > 1e-6) {
		ok = false;
		snprintf(why, len, "pool %zu: allocated %.9g, its nodes hold %.9g", p,
			 ps->allocated, allocated);
	}
	free(whole);
	free(part);
	return ok && cluster_groups_consistent(c, p, why, len);
}

bool cluster_consistent(const struct cluster *c)
{
	double total = 0;
	for (size_t p = 0; p < c->n_pools; p++) {
		if (!cluster_pool_consistent(c, p, NULL, 0))
			return false;
		total += c->pools[p].allocated;
	}
	return fabs(total - c->allocated) < 1e-6;
}
