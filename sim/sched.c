/*
 * sched.c - pending classes and their heaps (see sched.h).
 */
#include "gpuplan/sched.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void sched_init(struct sched *s, enum sched_order order)
{
	memset(s, 0, sizeof *s);
	s->order = order;
	hash_ids_reset(&s->index, 64);
}

void sched_free(struct sched *s)
{
	for (size_t c = 0; c < s->n_classes; c++)
		free(s->classes[c].base);
	free(s->classes);
	hash_ids_free(&s->index);
	free(s->tree);
	free(s->blocked);
	free(s->blocked_list);
	free(s->failed);
	memset(s, 0, sizeof *s);
}

struct sched_entry sched_entry(enum sched_order order, uint32_t job, uint32_t seq, sim_time submit,
			       int32_t priority, sim_time deadline, sim_time duration)
{
	struct sched_entry e = {submit, 0, job, seq};
	switch (order) {
	case ORDER_FIFO: break;
	case ORDER_PRIORITY: e = (struct sched_entry){-(int64_t)priority, submit, job, seq}; break;
	case ORDER_EDF: e = (struct sched_entry){deadline, submit, job, seq}; break;
	case ORDER_SJF: e = (struct sched_entry){duration, submit, job, seq}; break;
	}
	return e;
}

/* --- the heads' tournament tree (sched_next) ------------------------------ */

/* Whether class a's head comes before class b's; -1 is no class (last). */
static bool head_first(const struct sched *s, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return a >= 0;
	return sched_before(&s->classes[a].heap[0], &s->classes[b].heap[0]);
}

static int32_t leaf_of(const struct sched *s, size_t c)
{
	return c < s->n_classes && s->classes[c].n && !s->blocked[c] ? (int32_t)c : -1;
}

static void tree_fix(struct sched *s, size_t i)
{
	int32_t l = s->tree[2 * i], r = s->tree[2 * i + 1];
	s->tree[i] = head_first(s, r, l) ? r : l;
}

/* Class c's leaf and its ancestors, after its head changed.  O(log classes). */
static void tree_set(struct sched *s, size_t c)
{
	size_t i = s->tree_cap + c;
	s->tree[i] = leaf_of(s, c);
	for (i /= 2; i >= 1; i /= 2)
		tree_fix(s, i);
}

/* Room for class c: the tree doubled and rebuilt, O(classes) per doubling.
 * It starts at one leaf: a run of one or two classes (an M/M/1) then walks
 * no levels per change instead of the six of 64 leaves. */
static void tree_grow(struct sched *s, size_t c)
{
	if (c < s->tree_cap)
		return;
	size_t cap = s->tree_cap ? s->tree_cap : 1;
	while (cap <= c)
		cap *= 2;
	s->blocked = gp_xrealloc(s->blocked, cap * sizeof *s->blocked);
	memset(s->blocked + s->tree_cap, 0, (cap - s->tree_cap) * sizeof *s->blocked);
	/* a class is blocked at most once a pass: room for all, grown here and
	 * not by a realloc per block (one per failed placement of a pass) */
	s->blocked_list = gp_xrealloc(s->blocked_list, cap * sizeof *s->blocked_list);
	s->failed = gp_xrealloc(s->failed, cap * sizeof *s->failed);
	s->tree_cap = cap;
	free(s->tree);
	s->tree = gp_xmalloc(2 * cap * sizeof *s->tree);
	for (size_t k = 0; k < cap; k++)
		s->tree[cap + k] = leaf_of(s, k);
	for (size_t i = cap - 1; i >= 1; i--)
		tree_fix(s, i);
}

void sched_block(struct sched *s, size_t c)
{
	if (s->blocked[c])
		return;
	s->blocked[c] = 1;
	assert(s->n_blocked < s->tree_cap);
	s->blocked_list[s->n_blocked++] = (uint32_t)c;
	tree_set(s, c);
}

void sched_unblock_all(struct sched *s)
{
	for (size_t k = 0; k < s->n_blocked; k++) {
		s->blocked[s->blocked_list[k]] = 0;
		tree_set(s, s->blocked_list[k]);
	}
	s->n_blocked = 0;
	s->n_failed = 0;
}

void sched_fail(struct sched *s, size_t c)
{
	assert(s->n_failed < s->tree_cap && "a class fails once a sweep");
	s->failed[s->n_failed++] = (uint32_t)c;
}

void sched_block_failed(struct sched *s)
{
	for (size_t k = 0; k < s->n_failed; k++)
		sched_block(s, s->failed[k]);
	s->n_failed = 0;
}

/* sched_next within node i, which covers classes [lo, hi). */
static int64_t next_in(const struct sched *s, size_t i, size_t lo, size_t hi, size_t from,
		       const struct sched_entry *bound)
{
	int32_t m = s->tree[i];
	if (hi <= from || m < 0 || (bound && sched_before(bound, &s->classes[m].heap[0])))
		return -1; /* every head here comes after bound (the least does) */
	if (hi - lo == 1)
		return (int64_t)lo;
	size_t mid = lo + (hi - lo) / 2;
	int64_t c = next_in(s, 2 * i, lo, mid, from, bound);
	return c >= 0 ? c : next_in(s, 2 * i + 1, mid, hi, from, bound);
}

int64_t sched_next(const struct sched *s, size_t from, const struct sched_entry *bound)
{
	if (s->tree_cap == 1) { /* one class: the root is its leaf, no descent */
		int32_t m = s->tree[1];
		return !from && m >= 0 && !(bound && sched_before(bound, &s->classes[m].heap[0]))
			       ? 0
			       : -1;
	}
	return s->tree_cap ? next_in(s, 1, 0, s->tree_cap, from, bound) : -1;
}

/* --- classes by (workload, gpus, variant) ------------------------------- */

static uint64_t class_hash(int32_t workload, int32_t gpus, int32_t variant)
{
	uint64_t h = ((uint64_t)(uint32_t)workload << 32 | (uint32_t)gpus) *
		     UINT64_C(0x9E3779B97F4A7C15);
	h ^= (uint64_t)(uint32_t)variant * UINT64_C(0xC2B2AE3D27D4EB4F);
	return h >> 32;
}

/* The slot of the class, or the empty slot where it goes. */
static size_t slot_of(const struct sched *s, int32_t workload, int32_t gpus, int32_t variant)
{
	const struct hash_ids *x = &s->index;
	size_t i = hash_ids_home(x, class_hash(workload, gpus, variant));
	for (; hash_ids_at(x, i); i = hash_ids_next(x, i)) {
		const struct sched_class *c = &s->classes[hash_ids_at(x, i) - 1];
		if (c->workload == workload && c->gpus == gpus && c->variant == variant)
			break;
	}
	return i;
}

/* Doubles the index before it passes half full, so probes stay short. */
static void rehash(struct sched *s)
{
	hash_ids_reset(&s->index, 2 * hash_ids_slots(&s->index));
	for (size_t c = 0; c < s->n_classes; c++)
		hash_ids_put(&s->index,
			     class_hash(s->classes[c].workload, s->classes[c].gpus,
					s->classes[c].variant),
			     c);
}

static size_t class_of(struct sched *s, int32_t workload, int32_t gpus, int32_t variant,
		       int32_t queue)
{
	/* jobs of one workload come in runs: the last add's class, unless it
	 * is another (a class is never removed, so the index stays good) */
	const struct sched_class *last = s->n_classes ? &s->classes[s->last] : NULL;
	if (last && last->workload == workload && last->gpus == gpus && last->variant == variant)
		return s->last;
	size_t i = slot_of(s, workload, gpus, variant);
	if (hash_ids_at(&s->index, i))
		return hash_ids_at(&s->index, i) - 1u;
	GP_GROW(s->classes, s->cap_classes, s->n_classes + 1);
	size_t c = s->n_classes++;
	s->classes[c] = (struct sched_class){.workload = workload,
					     .gpus = gpus,
					     .variant = variant,
					     .queue = queue,
					     .sorted = true};
	if (hash_ids_crowded(&s->index))
		rehash(s); /* puts c too */
	else
		hash_ids_put_at(&s->index, i, c);
	tree_grow(s, c);
	return c;
}

/* --- the classes' heaps --------------------------------------------------- */

/* Moves the entry at i down to its place among its children. */
static void sift_down(struct sched_class *cl, size_t i)
{
	struct sched_entry e = cl->heap[i];
	size_t n = cl->n;
	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= n)
			break;
		if (k + 1 < n && sched_before(&cl->heap[k + 1], &cl->heap[k]))
			k++;
		if (!sched_before(&cl->heap[k], &e))
			break;
		cl->heap[i] = cl->heap[k];
		i = k;
	}
	cl->heap[i] = e;
}

/* Puts e into the hole at i, or where it belongs among i's parents; where. */
static size_t rise(struct sched_class *cl, size_t i, struct sched_entry e)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!sched_before(&e, &cl->heap[parent]))
			break;
		cl->heap[i] = cl->heap[parent];
		i = parent;
	}
	cl->heap[i] = e;
	return i;
}

/* A class with no entries: its next ones start at the array's start, in order. */
static void empty(struct sched_class *cl)
{
	cl->off = 0;
	cl->heap = cl->base;
	cl->sorted = true;
}

/* Moves the entry at i up to its place among its parents; where. */
static size_t sift_up(struct sched_class *cl, size_t i) { return rise(cl, i, cl->heap[i]); }

size_t sched_add(struct sched *s, int32_t workload, int32_t gpus, int32_t queue,
		 struct sched_entry e)
{
	return sched_add_variant(s, workload, gpus, 0, queue, e);
}

size_t sched_add_variant(struct sched *s, int32_t workload, int32_t gpus, int32_t variant,
			 int32_t queue, struct sched_entry e)
{
	size_t c = s->last = class_of(s, workload, gpus, variant, queue);
	struct sched_class *cl = &s->classes[c];
	if (cl->off + cl->n == cl->cap) {
		if (cl->off && cl->off >= cl->n) { /* half or more popped: down to the start */
			memmove(cl->base, cl->heap, cl->n * sizeof *cl->heap);
			cl->off = 0;
		} else { /* from one: most classes of a large cluster hold one job */
			cl->cap = cl->cap ? 2 * cl->cap : 1;
			cl->base = gp_xrealloc(cl->base, cl->cap * sizeof *cl->base);
		}
		cl->heap = cl->base + cl->off;
	}
	cl->heap[cl->n++] = e;
	/* in order after the last: the array stays ascending, and no parent
	 * of the new entry comes after it */
	if (cl->sorted && cl->n > 1 && sched_before(&e, &cl->heap[cl->n - 2]))
		cl->sorted = false;
	size_t at = cl->sorted ? cl->n - 1 : sift_up(cl, cl->n - 1);
	s->pending++;
	if (!at) /* a new head; behind the head, the class's leaf and the tree stay */
		tree_set(s, c);
	return c;
}

void sched_pop(struct sched *s, size_t c)
{
	struct sched_class *cl = &s->classes[c];
	assert(cl->n > 0);
	/* Floyd's bottom-up pop: the root's hole goes down to a leaf by the
	 * lesser child, one comparison a level, and the last entry (a late
	 * arrival, which belongs near the bottom) rises into it from there;
	 * sift_down would compare it at every level too.  The entries are in a
	 * total order (seq breaks every tie), so the heads come in the same
	 * order whatever the layout. */
	size_t n = --cl->n, i = 0;
	if (cl->sorted) { /* the rest is ascending: a heap from its first */
		cl->heap = cl->base + ++cl->off;
	} else {
		for (size_t k = 1; k < n; i = k, k = 2 * k + 1) {
			if (k + 1 < n && sched_before(&cl->heap[k + 1], &cl->heap[k]))
				k++;
			cl->heap[i] = cl->heap[k];
		}
		rise(cl, i, cl->heap[n]);
	}
	if (!n)
		empty(cl);
	s->pending--;
	tree_set(s, c);
}

void sched_remove(struct sched *s, size_t c, uint32_t job)
{
	struct sched_class *cl = &s->classes[c];
	size_t i = 0;
	while (i < cl->n && cl->heap[i].job != job)
		i++;
	assert(i < cl->n && "the job waits in its class");
	cl->heap[i] = cl->heap[--cl->n];
	if (i < cl->n) {
		cl->sorted = false;
		sift_up(cl, i);
		sift_down(cl, i); /* one of the two moves it, if anything */
	}
	if (!cl->n)
		empty(cl);
	s->pending--;
	tree_set(s, c); /* the head may have moved */
}
