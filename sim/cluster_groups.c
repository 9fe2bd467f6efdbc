/*
 * cluster_groups.c - a pool's Ready nodes by class and whole key (cluster.h,
 * "Class groups"): a bitset and block counts per group, moved where a node's
 * class or key moves, so that a search that scores by class counts a
 * class's nodes in a slot range a block at a time.
 */
#include "cluster_int.h"

#include "gpuplan/common.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

/* The pool's words and blocks of slots. */
static size_t pool_words(const struct pool_state *ps) { return ((size_t)ps->n_nodes + 63) / 64; }

static size_t pool_blocks(const struct pool_state *ps)
{
	return (pool_words(ps) + CLUSTER_BLOCK_WORDS - 1) / CLUSTER_BLOCK_WORDS;
}

/* Whether pool p may keep groups: an exclusive pool (its whole key is the
 * only one, the untouched GPUs) large enough to be walked word by word. */
static bool pool_grouped(const struct cluster *c, size_t p)
{
	return c->sc->pools[p].sharing.mode == SHARING_EXCLUSIVE &&
	       c->pools[p].n_nodes >= CLUSTER_GROUP_MIN_SLOTS && c->pools[p].whole.levels > 0;
}

void cluster_groups_init(struct cluster *c)
{
	c->group_of = gp_xcalloc(c->n_nodes + 1, sizeof *c->group_of);
	c->group_head = gp_xcalloc((size_t)c->classes.cap, sizeof *c->group_head);
	for (size_t i = 0; i < c->n_nodes; i++)
		c->group_of[i] = -1;
	for (int32_t id = 0; id < c->classes.cap; id++)
		c->group_head[id] = -1;
	for (size_t p = 0; p < c->n_pools; p++) {
		struct class_groups *gs = &c->pools[p].groups;
		gs->on = pool_grouped(c, p);
		if (gs->on)
			gs->at = gp_xcalloc(CLUSTER_GROUPS, sizeof *gs->at);
	}
	for (size_t i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].ready)
			cluster_groups_place(c, (int32_t)i);
}

/* Pool p's groups dropped for good: too many at once. */
static void groups_off(struct cluster *c, size_t p)
{
	struct pool_state *ps = &c->pools[p];
	struct class_groups *gs = &ps->groups;
	for (int32_t s = 0; s < CLUSTER_GROUPS; s++) {
		if (gs->at[s].nodes)
			c->group_head[gs->at[s].id] = -1;
		free(gs->at[s].bits);
		free(gs->at[s].block);
	}
	free(gs->at);
	*gs = (struct class_groups){.on = false};
	for (int32_t i = 0; i < ps->n_nodes; i++)
		c->group_of[ps->first_node + i] = -1;
}

/* Node local of pool ps in or out (delta 1 or -1) of group slot s. */
static void flip(struct pool_state *ps, int32_t s, int32_t local, int32_t delta)
{
	struct class_group *g = &ps->groups.at[s];
	g->bits[local / 64] ^= UINT64_C(1) << (local % 64);
	g->block[local / (64 * CLUSTER_BLOCK_WORDS)] += delta;
	g->nodes += delta;
}

/* Slot s of the pool's groups was made or freed. */
static void logged(struct class_groups *gs, int32_t s)
{
	gs->log[gs->seq++ % CLUSTER_GROUP_LOG] = s;
}

/* The node out of its group; a group left empty frees its slot. */
static inline void leave(struct cluster *c, struct pool_state *ps, int32_t node)
{
	struct class_groups *gs = &ps->groups;
	int32_t s = c->group_of[node];
	c->group_of[node] = -1;
	flip(ps, s, node - ps->first_node, -1);
	struct class_group *g = &gs->at[s];
	if (g->nodes)
		return;
	int32_t *link = &c->group_head[g->id];
	while (*link != s)
		link = &gs->at[*link].next;
	*link = g->next;
	int32_t last = gs->live[--gs->n_live];
	gs->live[gs->pos[s]] = last;
	gs->pos[last] = gs->pos[s];
	logged(gs, s);
}

/* The slot of group (id, key) of pool p, made if new; -1 when the pool has
 * no slot left (its groups are then dropped). */
static int32_t group_slot(struct cluster *c, size_t p, int32_t id, int32_t key)
{
	struct pool_state *ps = &c->pools[p];
	struct class_groups *gs = &ps->groups;
	int32_t s = c->group_head[id];
	while (s >= 0 && gs->at[s].key != key)
		s = gs->at[s].next;
	if (s >= 0)
		return s;
	if (gs->n_live == CLUSTER_GROUPS) {
		groups_off(c, p);
		return -1;
	}
	s = 0;
	while (gs->at[s].nodes) /* a free slot: fewer than CLUSTER_GROUPS are live */
		s++;
	struct class_group *g = &gs->at[s];
	if (!g->bits) { /* a slot freed keeps its (cleared) arrays */
		g->bits = gp_xcalloc(pool_words(ps) + 1, sizeof *g->bits);
		g->block = gp_xcalloc(pool_blocks(ps) + 1, sizeof *g->block);
	}
	g->id = id;
	g->key = key;
	g->next = c->group_head[id];
	c->group_head[id] = s;
	gs->pos[s] = gs->n_live;
	gs->live[gs->n_live++] = s;
	logged(gs, s);
	return s;
}

void cluster_groups_move(struct cluster *c, struct pool_state *ps, int32_t node, int32_t local,
			 int32_t key)
{
	assert(ps->groups.on && key == ps->whole.key[local]);
	int32_t id = c->class_of[node], s = c->group_of[node];
	if (s >= 0) {
		const struct class_group *g = &ps->groups.at[s];
		if (g->id == id && g->key == key)
			return;
		leave(c, ps, node);
	}
	s = group_slot(c, (size_t)(ps - c->pools), id, key);
	if (s < 0)
		return;
	c->group_of[node] = s;
	flip(ps, s, local, 1);
}

void cluster_groups_place(struct cluster *c, int32_t node)
{
	struct pool_state *ps = &c->pools[c->nodes[node].pool];
	int32_t local = node - ps->first_node;
	if (ps->groups.on)
		cluster_groups_move(c, ps, node, local, ps->whole.key[local]);
}

void cluster_groups_remove(struct cluster *c, int32_t node)
{
	struct pool_state *ps = &c->pools[c->nodes[node].pool];
	if (ps->groups.on && c->group_of[node] >= 0)
		leave(c, ps, node);
}

void cluster_groups_free(struct cluster *c)
{
	for (size_t p = 0; p < c->n_pools; p++) {
		struct class_groups *gs = &c->pools[p].groups;
		for (int32_t s = 0; gs->at && s < CLUSTER_GROUPS; s++) {
			free(gs->at[s].bits);
			free(gs->at[s].block);
		}
		free(gs->at);
	}
	free(c->group_of);
	free(c->group_head);
}

bool cluster_groups_answer(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, int32_t *need)
{
	const struct pool_state *ps = &c->pools[p];
	return ps->groups.on && cluster_request_index(c, p, w, gpus, need) == &ps->whole &&
	       !cluster_check_cpu_memory(c, p, w);
}

/* The slots of word i within [from, to). */
static uint64_t range_mask(size_t i, int32_t from, int32_t to)
{
	uint64_t b = ~UINT64_C(0);
	if (i == (size_t)from / 64)
		b &= ~UINT64_C(0) << (from % 64);
	if (i == (size_t)(to - 1) / 64 && to % 64)
		b &= (UINT64_C(1) << (to % 64)) - 1;
	return b;
}

/* Whether words [i, i + CLUSTER_BLOCK_WORDS) are a whole block inside [from, to). */
static bool inner_block(size_t i, int32_t from, int32_t to)
{
	return i % CLUSTER_BLOCK_WORDS == 0 && i * 64 >= (size_t)from &&
	       (i + CLUSTER_BLOCK_WORDS) * 64 <= (size_t)to;
}

int32_t cluster_group_count(const struct cluster *c, size_t p, int32_t slot, int32_t from,
			    int32_t to, int32_t *first)
{
	const struct pool_state *ps = &c->pools[p];
	const struct class_group *g = &ps->groups.at[slot];
	int32_t n = 0, at = cluster_span_find(g->bits, g->block, from, to, 0, &n);
	*first = at < 0 ? -1 : ps->first_node + at;
	if (at >= 0) /* counted from the first on */
		cluster_span_find(g->bits, g->block, at, to, -1, &n);
	return n;
}

int32_t cluster_groups_nth(const struct cluster *c, size_t p, const int32_t *slots, int32_t n,
			   int32_t from, int32_t to, int32_t nth)
{
	const struct pool_state *ps = &c->pools[p];
	const struct class_group *at = ps->groups.at;
	if (from >= to)
		return -1;
	size_t last = (size_t)(to - 1) / 64;
	for (size_t i = (size_t)from / 64; i <= last; i++) {
		if (inner_block(i, from, to)) {
			int32_t in_block = 0;
			for (int32_t k = 0; k < n; k++)
				in_block += at[slots[k]].block[i / CLUSTER_BLOCK_WORDS];
			if (nth >= in_block) {
				nth -= in_block;
				i += CLUSTER_BLOCK_WORDS - 1;
				continue;
			}
		}
		uint64_t b = 0;
		for (int32_t k = 0; k < n; k++)
			b |= at[slots[k]].bits[i];
		b &= range_mask(i, from, to);
		int32_t in_word = gp_popcount64(b);
		if (nth >= in_word) {
			nth -= in_word;
			continue;
		}
		while (nth-- > 0)
			b &= b - 1;
		return ps->first_node + (int32_t)(i * 64) + __builtin_ctzll(b);
	}
	return -1;
}

bool cluster_groups_consistent(const struct cluster *c, size_t p, char *why, size_t len)
{
	const struct pool_state *ps = &c->pools[p];
	const struct class_groups *gs = &ps->groups;
	if (!gs->on)
		return true;
	int32_t in_groups = 0;
	for (int32_t k = 0; k < gs->n_live; k++) {
		const struct class_group *g = &gs->at[gs->live[k]];
		int32_t n = 0;
		for (size_t i = 0; i < pool_words(ps); i++)
			n += gp_popcount64(g->bits[i]);
		in_groups += n;
		if (n != g->nodes || !g->nodes || gs->pos[gs->live[k]] != k) {
			snprintf(why, len, "pool %d group %d: %d nodes in its bits, %d counted",
				 (int)p, (int)gs->live[k], (int)n, (int)g->nodes);
			return false;
		}
	}
	int32_t ready = 0;
	for (int32_t i = 0; i < ps->n_nodes; i++) {
		int32_t node = ps->first_node + i, s = c->group_of[node];
		if (!c->nodes[node].ready)
			continue;
		ready++;
		if (s < 0 || gs->at[s].id != c->class_of[node] ||
		    gs->at[s].key != ps->whole.key[i] ||
		    !(gs->at[s].bits[i / 64] >> (i % 64) & 1)) {
			snprintf(why, len, "node %d: not in the group of its class and key",
				 (int)node);
			return false;
		}
	}
	if (ready != in_groups) {
		snprintf(why, len, "pool %d: %d Ready nodes, %d in groups", (int)p, (int)ready,
			 (int)in_groups);
		return false;
	}
	return true;
}
