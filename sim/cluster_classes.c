/*
 * cluster_classes.c - the table of the classes nodes are of (cluster.h, "Node
 * classes"): an id per distinct class, found by hashing it.  A class left
 * by its last node is kept, not deleted: a node going back and forth
 * between two classes (a pod comes, a pod goes) then costs a lookup each
 * way, and the table is rebuilt without such classes when its slots are
 * half full or its ids run out, which frees their ids.
 */
#include "cluster_int.h"

#include "gpuplan/common.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static uint64_t bits_of(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

bool cluster_classes_same(const struct node_class *a, const struct node_class *b)
{
	return a->pool == b->pool && bits_of(a->allocated) == bits_of(b->allocated) &&
	       bits_of(a->cpu_free) == bits_of(b->cpu_free) &&
	       bits_of(a->memory_free) == bits_of(b->memory_free) &&
	       a->cpu_scored == b->cpu_scored && a->memory_scored == b->memory_scored;
}

/* Class k's hash. */
static uint64_t class_hash(const struct node_class *k)
{
	uint64_t h = (bits_of(k->allocated) * UINT64_C(0x9E3779B97F4A7C15)) ^
		     (bits_of(k->cpu_free) * UINT64_C(0xC2B2AE3D27D4EB4F)) ^
		     (bits_of(k->memory_free) * UINT64_C(0x165667B19E3779F9)) ^
		     ((uint64_t)k->cpu_scored * UINT64_C(0x27D4EB2F165667C5)) ^
		     ((uint64_t)k->memory_scored * UINT64_C(0x94D049BB133111EB)) ^
		     ((uint64_t)k->pool * UINT64_C(0xD6E8FEB86659FD93));
	return h ^ (h >> 29) ^ (h >> 47);
}

/* The empty slot where class k goes (it is in no slot). */
static size_t empty_slot(const struct class_table *t, const struct node_class *k)
{
	size_t i = hash_ids_home(&t->index, class_hash(k));
	while (hash_ids_at(&t->index, i))
		i = hash_ids_next(&t->index, i);
	return i;
}

void cluster_classes_init(struct class_table *t, size_t nodes)
{
	size_t cap = 2 * nodes + 64;
	*t = (struct class_table){.at = gp_xcalloc(cap, sizeof *t->at),
				  .version = gp_xcalloc(cap, sizeof *t->version),
				  .cap = (int32_t)cap,
				  .unused = gp_xcalloc(cap, sizeof *t->unused),
				  .step = gp_xcalloc(cap, sizeof *t->step)};
	hash_ids_reset(&t->index, 64);
}

void cluster_classes_free(struct class_table *t)
{
	free(t->at);
	free(t->version);
	free(t->unused);
	free(t->step);
	hash_ids_free(&t->index);
	memset(t, 0, sizeof *t);
}

/* The slots again with the live classes only, twice as many if a quarter
 * of them would be live; the ids of the others become free.  O(ids). */
static void rebuild(struct class_table *t)
{
	size_t slots = hash_ids_slots(&t->index);
	if (4 * ((size_t)t->live + 1) > slots)
		slots *= 2;
	hash_ids_reset(&t->index, slots);
	t->rebuilds++; /* the steps found before may name classes dropped here */
	t->n_unused = 0;
	for (int32_t id = 0; id < t->n; id++) {
		if (!t->at[id].nodes) {
			t->unused[t->n_unused++] = id;
			continue;
		}
		hash_ids_put_at(&t->index, empty_slot(t, &t->at[id]), (size_t)id);
	}
}

int32_t cluster_classes_enter(struct class_table *t, const struct node_class *k)
{
	const struct hash_ids *x = &t->index;
	size_t i = hash_ids_home(x, class_hash(k));
	for (; hash_ids_at(x, i); i = hash_ids_next(x, i)) {
		struct node_class *e = &t->at[hash_ids_at(x, i) - 1];
		if (cluster_classes_same(e, k)) {
			t->live += !e->nodes++;
			return (int32_t)hash_ids_at(x, i) - 1;
		}
	}
	if (hash_ids_crowded(x) || (!t->n_unused && t->n == t->cap)) {
		rebuild(t);
		i = empty_slot(t, k);
	}
	int32_t id = t->n_unused ? t->unused[--t->n_unused] : t->n++;
	assert(id < t->cap && "a live class has a node: ids never run out");
	t->at[id] = *k;
	t->at[id].nodes = 1;
	t->at[id].tight = -1; /* found when first asked (cluster.c) */
	t->version[id]++;
	hash_ids_put_at(&t->index, i, (size_t)id);
	t->live++;
	return id;
}

void cluster_classes_leave(struct class_table *t, int32_t id)
{
	assert(id >= 0 && id < t->n && t->at[id].nodes > 0);
	t->live -= !--t->at[id].nodes;
}

/* The class of the last move from id is k's when it still names the class
 * it named then (its version) and is still in the index (some node is of it,
 * or no rebuild came since): cluster_classes_enter would find it there, as
 * the table holds a class once. */
int32_t cluster_classes_move(struct class_table *t, int32_t id, const struct node_class *k)
{
	if (cluster_classes_same(&t->at[id], k))
		return id;
	struct class_step *st = &t->step[id];
	int32_t to = st->to - 1;
	if (to >= 0 && t->version[to] == st->version &&
	    (t->at[to].nodes > 0 || st->rebuilds == t->rebuilds) &&
	    cluster_classes_same(&t->at[to], k)) {
		t->live += !t->at[to].nodes++;
	} else {
		to = cluster_classes_enter(t, k);
		*st = (struct class_step){to + 1, t->version[to], t->rebuilds};
	}
	cluster_classes_leave(t, id);
	return to;
}
