/*
 * cluster_walk.c - walks over a pool's bucket indexes: the nodes with room
 * from a slot range, taken one by one, counted, tallied by key or the nth
 * of them, and the ranks of the Ready nodes (cluster.h, "Walks").
 */
#include "gpuplan/cluster.h"

#include "cluster_int.h"

#include <math.h>
#include <stdint.h>

/* A walk over the buckets of level `level`, or every level with room (-1). */
static void walk_setup(struct cluster_walk *wk, const struct cluster *c, size_t p,
		       const struct workload_spec *w, int32_t gpus, cluster_node_pred ok,
		       const void *ctx, int32_t from, int32_t to, int32_t level)
{
	int32_t need = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	/* field by field: the arrays are filled up to n_levels, not cleared
	 * (a walk is set up twice a placement on large clusters) */
	wk->c = c;
	wk->w = w;
	wk->ok = ok;
	wk->ctx = ctx;
	wk->key = NULL;
	wk->room = NULL;
	wk->room_block = NULL;
	wk->n_levels = 0;
	wk->need = need;
	wk->first_node = c->pools[p].first_node;
	wk->cpu_memory = cluster_check_cpu_memory(c, p, w);
	wk->cpu = wk->memory = 0;
	wk->from = from;
	wk->to = to;
	wk->word = 0;
	wk->bits = 0;
	if (!ix || need < 0 || need >= ix->levels || from >= to) {
		wk->from = wk->to; /* nothing to visit */
		return;
	}
	wk->key = ix->key;
	const struct pool_spec *spec = &c->sc->pools[p];
	wk->cpu = spec->cpu > 0 ? w->cpu : -INFINITY;
	wk->memory = spec->memory_bytes > 0 ? w->memory_bytes : -INFINITY;
	int32_t lo = level < 0 ? need : level, hi = level < 0 ? ix->levels - 1 : level;
	for (int32_t k = lo; k >= need && k <= hi && wk->n_levels >= 0; k++) {
		if (!ix->count[k])
			continue;
		if (wk->n_levels == CLUSTER_WALK_LEVELS)
			wk->n_levels = -1; /* too many buckets: compare the keys */
		else {
			wk->keys[wk->n_levels] = k;
			wk->block[wk->n_levels] = ix->block + cluster_index_block(ix, k, 0);
			wk->level[wk->n_levels++] = ix->bits + (size_t)k * ix->words;
		}
	}
	if (level < 0 && ix->least) {
		wk->room = ix->least + (size_t)need * ix->words;
		wk->room_block = ix->least_block + (size_t)need * ix->blocks;
	}
	wk->word = (size_t)from / 64;
	wk->bits = 0;
}

void cluster_walk_init(struct cluster_walk *wk, const struct cluster *c, size_t p,
		       const struct workload_spec *w, int32_t gpus, cluster_node_pred ok,
		       const void *ctx, int32_t from, int32_t to)
{
	walk_setup(wk, c, p, w, gpus, ok, ctx, from, to, -1);
}

/* The slots of word i within [from, to). */
static uint64_t walk_mask(const struct cluster_walk *wk, size_t i)
{
	uint64_t b = ~UINT64_C(0);
	if (i == (size_t)wk->from / 64)
		b &= ~UINT64_C(0) << (wk->from % 64);
	if (i == (size_t)(wk->to - 1) / 64 && wk->to % 64)
		b &= (UINT64_C(1) << (wk->to % 64)) - 1;
	return b;
}

/* The slots of word i with room, from the buckets or the keys, within [from, to). */
static uint64_t walk_word(const struct cluster_walk *wk, size_t i)
{
	uint64_t b = 0;
	if (wk->room) {
		b = wk->room[i];
	} else if (wk->n_levels >= 0) {
		for (int32_t l = 0; l < wk->n_levels; l++)
			b |= wk->level[l][i];
	} else {
		int32_t lo = (int32_t)(i * 64), hi = lo + 64 < wk->to ? lo + 64 : wk->to;
		for (int32_t j = lo; j < hi; j++)
			b |= (uint64_t)(wk->key[j] >= wk->need) << (j - lo);
	}
	return b & walk_mask(wk, i);
}

/* The words a walk passes, [first, last], and of them those wholly inside
 * it, [inner_from, inner_to): a block of CLUSTER_BLOCK_WORDS words among
 * these is counted from its block counts, where the walk has buckets. */
struct walk_words {
	size_t first, last, inner_from, inner_to;
	uint64_t first_mask, last_mask; /* the slots of words first and last inside it */
	bool blocks;
};

static struct walk_words walk_words(const struct cluster_walk *wk)
{
	return (struct walk_words){.first = (size_t)wk->from / 64,
				   .last = (size_t)(wk->to - 1) / 64,
				   .inner_from = ((size_t)wk->from + 63) / 64,
				   .inner_to = (size_t)wk->to / 64,
				   .first_mask = ~UINT64_C(0) << (wk->from % 64),
				   .last_mask = wk->to % 64 ? (UINT64_C(1) << (wk->to % 64)) - 1
							    : ~UINT64_C(0),
				   .blocks = wk->room || wk->n_levels >= 0};
}

/* Whether words [i, i + CLUSTER_BLOCK_WORDS) are a whole block inside the walk. */
static bool walk_block(const struct walk_words *ww, size_t i)
{
	return i % CLUSTER_BLOCK_WORDS == 0 && ww->blocks && i >= ww->inner_from &&
	       i + CLUSTER_BLOCK_WORDS <= ww->inner_to;
}

int32_t cluster_walk_take(struct cluster_walk *wk, int32_t *out, int32_t max)
{
	if (wk->from >= wk->to)
		return 0;
	/* in locals: stores to out[] could otherwise alias the walk's fields */
	size_t word = wk->word, last = (size_t)(wk->to - 1) / 64;
	uint64_t bits = wk->bits;
	const int32_t first = wk->first_node, *class_of = wk->c->class_of;
	const struct node_class *classes = wk->c->classes.at;
	const double cpu = wk->cpu, memory = wk->memory;
	const bool cpu_memory = wk->cpu_memory;
	int32_t n = 0;
	while (n < max) {
		if (!bits) {
			if (word > last) {
				wk->from = wk->to;
				break;
			}
			bits = walk_word(wk, word++);
			continue;
		}
		int32_t node = first + (int32_t)((word - 1) * 64) + __builtin_ctzll(bits);
		bits &= bits - 1;
		/* cluster_cpu_fits and cluster_memory_fits, the pool's part hoisted,
		 * from the node's class: four bytes a node, not its line */
		if (cpu_memory) {
			const struct node_class *k = &classes[class_of[node]];
			if (cpu > k->cpu_free + 1e-9 || memory > k->memory_free + 0.5)
				continue;
		}
		if (!wk->ok || wk->ok(wk->c, node, wk->ctx))
			out[n++] = node;
	}
	wk->word = word;
	wk->bits = bits;
	return n;
}

int32_t cluster_walk_next(struct cluster_walk *wk)
{
	int32_t node;
	return cluster_walk_take(wk, &node, 1) ? node : -1;
}

void cluster_walk_level(struct cluster_walk *wk, const struct cluster *c, size_t p,
			const struct workload_spec *w, int32_t gpus, int32_t level, int32_t from,
			int32_t to)
{
	walk_setup(wk, c, p, w, gpus, NULL, NULL, from, to, level);
}

/* The whole blocks of a span from word i (a block's first) on, up to word
 * inner_to, passed by their counts while the bit sought (the nth) is not in
 * them: the word after them. */
static size_t span_blocks(const int32_t *block, size_t i, size_t inner_to, int32_t *nth, int32_t *n)
{
	for (; i + CLUSTER_BLOCK_WORDS <= inner_to; i += CLUSTER_BLOCK_WORDS) {
		int32_t in_block = block[i / CLUSTER_BLOCK_WORDS];
		if (*nth < in_block)
			break;
		*nth -= in_block;
		*n += in_block;
	}
	return i;
}

/* The first word of the block after word i's. */
static size_t next_block(size_t i) { return (i / CLUSTER_BLOCK_WORDS + 1) * CLUSTER_BLOCK_WORDS; }

/* cluster_span_find's first set bit: words tested, not counted, and the
 * empty blocks passed, the span's first and last among them where they are
 * empty (a block with none has none in the span's part of it either): most
 * of a span's keys are asked only for it. */
static int32_t span_first(const uint64_t *bits, const int32_t *block, int32_t from, int32_t to)
{
	const size_t last = (size_t)(to - 1) / 64;
	const uint64_t last_mask = to % 64 ? (UINT64_C(1) << (to % 64)) - 1 : ~UINT64_C(0);
	uint64_t mask = ~UINT64_C(0) << (from % 64); /* all ones past the first word */
	size_t i = (size_t)from / 64;
	if (!block[i / CLUSTER_BLOCK_WORDS]) {
		i = next_block(i);
		mask = ~UINT64_C(0);
	}
	for (; i < last; i++, mask = ~UINT64_C(0)) { /* the last word, cut at `to`, after */
		if (i % CLUSTER_BLOCK_WORDS == 0 && !block[i / CLUSTER_BLOCK_WORDS]) {
			i += CLUSTER_BLOCK_WORDS - 1;
			continue;
		}
		uint64_t b = bits[i] & mask;
		if (b)
			return (int32_t)(i * 64) + __builtin_ctzll(b);
	}
	uint64_t b = i == last ? bits[i] & mask & last_mask : 0;
	return b ? (int32_t)(i * 64) + __builtin_ctzll(b) : -1;
}

/* cluster_span_find's count of every set bit, without the nth's tests:
 * whole blocks by their counts (the one `from` starts in too, less the
 * bits of its first word before `from`), the other words one by one. */
static int32_t span_count(const uint64_t *bits, const int32_t *block, int32_t from, int32_t to)
{
	const size_t last = (size_t)(to - 1) / 64, inner_to = (size_t)to / 64;
	const uint64_t last_mask = to % 64 ? (UINT64_C(1) << (to % 64)) - 1 : ~UINT64_C(0);
	uint64_t mask = ~UINT64_C(0) << (from % 64); /* all ones past the first word */
	size_t i = (size_t)from / 64;
	int32_t n = 0;
	if (i % CLUSTER_BLOCK_WORDS == 0 && i + CLUSTER_BLOCK_WORDS <= inner_to) {
		n = block[i / CLUSTER_BLOCK_WORDS] - gp_popcount64(bits[i] & ~mask);
		i += CLUSTER_BLOCK_WORDS;
		mask = ~UINT64_C(0);
	}
	for (; i < last; mask = ~UINT64_C(0)) { /* the last word, cut at `to`, after */
		if (i % CLUSTER_BLOCK_WORDS == 0 && i + CLUSTER_BLOCK_WORDS <= inner_to) {
			n += block[i / CLUSTER_BLOCK_WORDS];
			i += CLUSTER_BLOCK_WORDS;
			continue;
		}
		n += gp_popcount64(bits[i++] & mask);
	}
	if (i == last)
		n += gp_popcount64(bits[i] & mask & last_mask);
	return n;
}

int32_t cluster_span_find(const uint64_t *bits, const int32_t *block, int32_t from, int32_t to,
			  int32_t nth, int32_t *count)
{
	*count = 0;
	if (from >= to)
		return -1;
	if (nth == 0)
		return span_first(bits, block, from, to); /* none before it, or none */
	if (nth < 0) {                                    /* count them all */
		*count = span_count(bits, block, from, to);
		return -1;
	}
	const size_t last = (size_t)(to - 1) / 64, inner_to = (size_t)to / 64;
	const uint64_t last_mask = to % 64 ? (UINT64_C(1) << (to % 64)) - 1 : ~UINT64_C(0);
	uint64_t mask = ~UINT64_C(0) << (from % 64); /* all ones past the first word */
	int32_t n = 0;
	size_t i = (size_t)from / 64;
	if (from % (64 * CLUSTER_BLOCK_WORDS) == 0)
		i = span_blocks(block, i, inner_to, &nth, &n);
	/* a word at a time, and a block at a time where one starts, up to the
	 * last word (the blocks may pass it when `to` ends one), cut at `to` */
	uint64_t b = 0;
	for (; i < last; mask = ~UINT64_C(0)) {
		b = bits[i] & mask;
		int32_t in_word = gp_popcount64(b);
		if (nth < in_word)
			goto found;
		nth -= in_word;
		n += in_word;
		if (++i % CLUSTER_BLOCK_WORDS == 0)
			i = span_blocks(block, i, inner_to, &nth, &n);
	}
	if (i == last) {
		b = bits[i] & mask & last_mask;
		if (nth < gp_popcount64(b))
			goto found;
		n += gp_popcount64(b);
	}
	*count = n;
	return -1;
found:
	*count = n + nth;
	while (nth-- > 0)
		b &= b - 1;
	return (int32_t)(i * 64) + __builtin_ctzll(b);
}

/* cluster_walk_find over one bitset (the walk's room, or its one level). */
static int32_t walk_find_one(const struct cluster_walk *wk, const uint64_t *bits,
			     const int32_t *block, int32_t nth, int32_t *count)
{
	int32_t local = cluster_span_find(bits, block, wk->from, wk->to, nth, count);
	return local < 0 ? -1 : wk->first_node + local;
}

int32_t cluster_walk_find(const struct cluster_walk *wk, int32_t nth, int32_t *count)
{
	*count = 0;
	if (wk->from >= wk->to)
		return -1;
	if (wk->room)
		return walk_find_one(wk, wk->room, wk->room_block, nth, count);
	if (wk->n_levels == 1)
		return walk_find_one(wk, wk->level[0], wk->block[0], nth, count);
	/* in locals: a store to *count could otherwise alias the walk's fields */
	const struct walk_words ww = walk_words(wk);
	int32_t n = 0;
	for (size_t i = ww.first; i <= ww.last; i++) {
		if (walk_block(&ww, i)) {
			/* a whole block inside the walk: passed at once unless the
			 * node sought is in it */
			int32_t in_block = 0;
			for (int32_t l = 0; l < wk->n_levels; l++)
				in_block += wk->block[l][i / CLUSTER_BLOCK_WORDS];
			if (nth < 0 || nth >= in_block) {
				nth -= nth < 0 ? 0 : in_block;
				n += in_block;
				i += CLUSTER_BLOCK_WORDS - 1;
				continue;
			}
		}
		uint64_t b = walk_word(wk, i);
		int32_t in_word = gp_popcount64(b);
		if (nth < 0 || nth >= in_word) {
			nth -= nth < 0 ? 0 : in_word;
			n += in_word;
			continue;
		}
		*count = n + nth;
		while (nth-- > 0)
			b &= b - 1;
		return wk->first_node + (int32_t)(i * 64) + __builtin_ctzll(b);
	}
	*count = n;
	return -1;
}

void cluster_levels_init(struct cluster_levels *lv, const struct cluster *c, size_t p,
			 const struct workload_spec *w, int32_t gpus)
{
	int32_t need = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	*lv = (struct cluster_levels){.c = c,
				      .w = w,
				      .ix = ix && need >= 0 && need < ix->levels ? ix : NULL,
				      .p = p,
				      .gpus = gpus,
				      .need = need,
				      .first_node = c->pools[p].first_node};
}

/* cluster_levels_find of every key with room where the index keeps no
 * sets of "need or more": a walk ORs the levels or compares the keys.  Out
 * of line: its walk's frame is large, and the search rarely needs it. */
static __attribute__((noinline)) int32_t levels_walk_find(const struct cluster_levels *lv,
							  int32_t from, int32_t to, int32_t nth,
							  int32_t *count)
{
	struct cluster_walk wk;
	walk_setup(&wk, lv->c, lv->p, lv->w, lv->gpus, NULL, NULL, from, to, -1);
	return cluster_walk_find(&wk, nth, count);
}

int32_t cluster_levels_find(const struct cluster_levels *lv, int32_t level, int32_t from,
			    int32_t to, int32_t nth, int32_t *count)
{
	const struct bucket_index *ix = lv->ix;
	*count = 0;
	if (!ix || from >= to)
		return -1;
	const uint64_t *bits = NULL;
	const int32_t *block = NULL;
	if (level >= 0) {
		if (level < lv->need || level >= ix->levels || !ix->count[level])
			return -1;
		bits = ix->bits + (size_t)level * ix->words;
		block = ix->block + cluster_index_block(ix, level, 0);
	} else if (ix->least) {
		bits = ix->least + (size_t)lv->need * ix->words;
		block = ix->least_block + (size_t)lv->need * ix->blocks;
	} else {
		return levels_walk_find(lv, from, to, nth, count);
	}
	int32_t local = cluster_span_find(bits, block, from, to, nth, count);
	return local < 0 ? -1 : lv->first_node + local;
}

int32_t cluster_level_find(const struct cluster *c, size_t p, const struct workload_spec *w,
			   int32_t gpus, int32_t level, int32_t from, int32_t to, int32_t nth,
			   int32_t *count)
{
	struct cluster_levels lv;
	cluster_levels_init(&lv, c, p, w, gpus);
	return cluster_levels_find(&lv, level, from, to, nth, count);
}

int32_t cluster_walk_count(const struct cluster_walk *wk)
{
	int32_t n = 0;
	cluster_walk_find(wk, -1, &n);
	return n;
}

int32_t cluster_walk_nth(const struct cluster_walk *wk, int32_t nth)
{
	int32_t n = 0;
	return cluster_walk_find(wk, nth, &n);
}

int32_t cluster_ready_rank(const struct cluster *c, size_t p, int32_t local)
{
	const struct pool_state *ps = &c->pools[p];
	if (ps->n_ready == ps->n_nodes)
		return local;
	int32_t n = 0;
	for (int32_t i = 0; i < local / 64; i++)
		n += gp_popcount64(ps->ready[i]);
	if (local % 64)
		n += gp_popcount64(ps->ready[local / 64] & ((UINT64_C(1) << (local % 64)) - 1));
	return n;
}

int32_t cluster_ready_select(const struct cluster *c, size_t p, int32_t rank)
{
	const struct pool_state *ps = &c->pools[p];
	if (ps->n_ready == ps->n_nodes)
		return rank;
	for (int32_t i = 0; i * 64 < ps->n_nodes; i++) {
		uint64_t b = ps->ready[i];
		int32_t in_word = gp_popcount64(b);
		if (rank >= in_word) {
			rank -= in_word;
			continue;
		}
		while (rank-- > 0)
			b &= b - 1;
		return i * 64 + __builtin_ctzll(b);
	}
	return -1;
}

bool cluster_room_at(const struct cluster *c, size_t p, const struct workload_spec *w, int32_t gpus,
		     int32_t local, bool checks, cluster_node_pred ok, const void *ctx)
{
	int32_t need = 0;
	const struct bucket_index *ix = cluster_request_index(c, p, w, gpus, &need);
	if (!ix || need < 0 || need >= ix->levels)
		return false;
	int32_t k = ix->key[local]; /* a node out of the index is in no bucket */
	if (k < need || k >= ix->levels ||
	    !(ix->bits[(size_t)k * ix->words + (size_t)local / 64] >> (local % 64) & 1))
		return false;
	if (!checks)
		return true;
	int32_t node = c->pools[p].first_node + local;
	if (cluster_check_cpu_memory(c, p, w) &&
	    (!cluster_cpu_fits(c, node, w) || !cluster_memory_fits(c, node, w)))
		return false;
	return !ok || ok(c, node, ctx);
}
