/*
 * cluster.c - nodes, free-GPU buckets and pool windows (see cluster.h).
 */
#include "gpuplan/cluster.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t *bucket(const struct pool_state *ps, int32_t k)
{
	return ps->buckets + (size_t)k * ps->words;
}

static void bucket_set(struct pool_state *ps, int32_t k, int32_t local, bool on)
{
	uint64_t *b = bucket(ps, k);
	uint64_t bit = UINT64_C(1) << (local % 64);
	if (on) {
		assert(!(b[local / 64] & bit));
		b[local / 64] |= bit;
		ps->bucket_count[k]++;
	} else {
		assert(b[local / 64] & bit);
		b[local / 64] &= ~bit;
		ps->bucket_count[k]--;
	}
}

static int32_t bucket_first(const struct pool_state *ps, int32_t k)
{
	const uint64_t *b = bucket(ps, k);
	for (size_t w = 0; w < ps->words; w++)
		if (b[w])
			return (int32_t)(w * 64 + (size_t)__builtin_ctzll(b[w]));
	return -1;
}

static uint64_t all_gpus(int32_t n)
{
	return n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

void cluster_init(struct cluster *c, const struct scenario *sc)
{
	memset(c, 0, sizeof *c);
	c->sc = sc;
	c->n_pools = sc->n_pools;
	c->pools = gp_xcalloc(sc->n_pools, sizeof *c->pools);
	for (size_t p = 0; p < sc->n_pools; p++)
		c->n_nodes += (size_t)sc->pools[p].nodes;
	c->nodes = gp_xcalloc(c->n_nodes, sizeof *c->nodes);

	int32_t next = 0;
	for (size_t p = 0; p < sc->n_pools; p++) {
		const struct pool_spec *spec = &sc->pools[p];
		struct pool_state *ps = &c->pools[p];
		int32_t g = spec->gpus_per_node;
		ps->first_node = next;
		ps->n_nodes = spec->nodes;
		ps->gpus_per_node = g;
		ps->words = ((size_t)spec->nodes + 63) / 64;
		ps->buckets = gp_xcalloc((size_t)(g + 1) * ps->words, sizeof *ps->buckets);
		ps->bucket_count = gp_xcalloc((size_t)g + 1, sizeof *ps->bucket_count);
		ps->capacity = (int64_t)g * spec->nodes;
		ps->open = true;
		ps->closes_at = SIM_NEVER;
		for (int32_t i = 0; i < spec->nodes; i++) {
			c->nodes[next + i] = (struct node){(int32_t)p, (int16_t)g, (int16_t)g, all_gpus(g)};
			bucket_set(ps, g, i, true);
		}
		next += spec->nodes;
		c->capacity += ps->capacity;
	}
}

void cluster_free(struct cluster *c)
{
	for (size_t p = 0; p < c->n_pools; p++) {
		free(c->pools[p].buckets);
		free(c->pools[p].bucket_count);
	}
	free(c->pools);
	free(c->nodes);
	memset(c, 0, sizeof *c);
}

int32_t cluster_find(const struct cluster *c, size_t p, int32_t gpus, enum sched_scoring scoring)
{
	const struct pool_state *ps = &c->pools[p];
	if (gpus > ps->gpus_per_node)
		return -1;
	if (scoring == SCORING_MOST_ALLOCATED) {
		for (int32_t k = gpus; k <= ps->gpus_per_node; k++)
			if (ps->bucket_count[k])
				return ps->first_node + bucket_first(ps, k);
	} else {
		for (int32_t k = ps->gpus_per_node; k >= gpus; k--)
			if (ps->bucket_count[k])
				return ps->first_node + bucket_first(ps, k);
	}
	return -1;
}

static void move_node(struct cluster *c, int32_t node, int32_t new_free)
{
	struct node *nd = &c->nodes[node];
	struct pool_state *ps = &c->pools[nd->pool];
	int32_t local = node - ps->first_node;
	bucket_set(ps, nd->free, local, false);
	bucket_set(ps, new_free, local, true);
	int32_t delta = nd->free - new_free; /* GPUs allocated by this move */
	ps->allocated += delta;
	c->allocated += delta;
	nd->free = (int16_t)new_free;
	assert(ps->allocated >= 0 && ps->allocated <= ps->capacity && "no GPU over-allocated");
}

uint64_t cluster_take(struct cluster *c, int32_t node, int32_t gpus)
{
	struct node *nd = &c->nodes[node];
	assert(gpus <= nd->free);
	uint64_t mask = 0, avail = nd->free_mask;
	for (int32_t i = 0; i < gpus; i++) {
		uint64_t low = avail & (~avail + 1);
		mask |= low;
		avail &= ~low;
	}
	nd->free_mask = avail;
	move_node(c, node, nd->free - gpus);
	return mask;
}

void cluster_release(struct cluster *c, int32_t node, uint64_t mask)
{
	struct node *nd = &c->nodes[node];
	assert(!(nd->free_mask & mask) && "GPUs released twice");
	nd->free_mask |= mask;
	move_node(c, node, nd->free + __builtin_popcountll(mask));
}

int32_t cluster_max_free(const struct cluster *c, size_t p)
{
	const struct pool_state *ps = &c->pools[p];
	for (int32_t k = ps->gpus_per_node; k > 0; k--)
		if (ps->bucket_count[k])
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

bool cluster_consistent(const struct cluster *c)
{
	int64_t allocated = 0;
	for (size_t p = 0; p < c->n_pools; p++) {
		const struct pool_state *ps = &c->pools[p];
		int64_t pool_alloc = 0;
		for (int32_t i = 0; i < ps->n_nodes; i++) {
			const struct node *nd = &c->nodes[ps->first_node + i];
			if (__builtin_popcountll(nd->free_mask) != nd->free)
				return false;
			if (!(bucket(ps, nd->free)[i / 64] & (UINT64_C(1) << (i % 64))))
				return false;
			pool_alloc += nd->gpus - nd->free;
		}
		if (pool_alloc != ps->allocated)
			return false;
		allocated += pool_alloc;
	}
	return allocated == c->allocated;
}

/* --- windows ----------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/*
 * Whether epoch second s lies in a window occurrence that opened on `day` or
 * the day before (overnight windows); if so *end is the latest such close.
 */
static bool window_covers(const struct pool_spec *pool, int64_t day, int64_t s, int64_t *end)
{
	bool covered = false;
	for (int64_t d = day - 1; d <= day; d++) {
		int dow = (int)((d % 7 + 7 + 3) % 7); /* 1970-01-01 was a Thursday; Monday = 0 */
		for (size_t i = 0; i < pool->n_windows; i++) {
			const struct window *w = &pool->windows[i];
			if (!(w->days & (1u << dow)))
				continue;
			int64_t from = d * 86400 + w->from;
			int64_t to = d * 86400 + w->to + (w->to <= w->from ? 86400 : 0);
			if (from <= s && s < to && (!covered || to > *end)) {
				*end = to;
				covered = true;
			}
		}
	}
	return covered;
}

/* The earliest window opening at or after s (epoch seconds), within 8 days. */
static int64_t window_next_open(const struct pool_spec *pool, int64_t s)
{
	int64_t best = INT64_MAX, day = floor_div(s, 86400);
	for (int64_t d = day; d <= day + 8; d++) {
		int dow = (int)((d % 7 + 7 + 3) % 7);
		for (size_t i = 0; i < pool->n_windows; i++) {
			const struct window *w = &pool->windows[i];
			int64_t from = d * 86400 + w->from;
			if ((w->days & (1u << dow)) && from >= s && from < best)
				best = from;
		}
	}
	return best;
}

bool window_state(const struct pool_spec *pool, int64_t start_epoch, sim_time t, sim_time *next_change)
{
	*next_change = SIM_NEVER;
	if (pool->n_windows == 0)
		return true;
	/* Work in whole epoch seconds: windows are given to the second. */
	int64_t s = start_epoch + floor_div(t, SIM_SECOND);
	int64_t end;
	if (window_covers(pool, floor_div(s, 86400), s, &end)) {
		/* Extend through windows that overlap or touch this one. */
		int64_t more;
		while (window_covers(pool, floor_div(end, 86400), end, &more) && more > end)
			end = more;
		*next_change = (end - start_epoch) * SIM_SECOND;
		return true;
	}
	int64_t open = window_next_open(pool, s + (t % SIM_SECOND ? 1 : 0));
	if (open != INT64_MAX)
		*next_change = (open - start_epoch) * SIM_SECOND;
	return false;
}
