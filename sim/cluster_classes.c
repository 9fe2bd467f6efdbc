/*
 * cluster_classes.c - the table of the classes nodes are of (cluster.h, "Node
 * classes"): an id per distinct class, found by hashing it (open addressing,
 * linear probing; deletion shifts the run back, so no tombstones pile up).
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

/* Bit for bit: nodes whose doubles are equal in value but not in bits (0
 * and -0) get two classes that score the same. */
static bool same(const struct node_class *a, const struct node_class *b)
{
	return a->pool == b->pool && bits_of(a->allocated) == bits_of(b->allocated) &&
	       bits_of(a->cpu_free) == bits_of(b->cpu_free) &&
	       bits_of(a->memory_free) == bits_of(b->memory_free) &&
	       a->cpu_scored == b->cpu_scored && a->memory_scored == b->memory_scored;
}

static size_t home(const struct class_table *t, const struct node_class *s)
{
	uint64_t h = (bits_of(s->allocated) * UINT64_C(0x9E3779B97F4A7C15)) ^
		     (bits_of(s->cpu_free) * UINT64_C(0xC2B2AE3D27D4EB4F)) ^
		     (bits_of(s->memory_free) * UINT64_C(0x165667B19E3779F9)) ^
		     ((uint64_t)s->cpu_scored * UINT64_C(0x27D4EB2F165667C5)) ^
		     ((uint64_t)s->memory_scored * UINT64_C(0x94D049BB133111EB)) ^
		     ((uint64_t)s->pool * UINT64_C(0xD6E8FEB86659FD93));
	return (size_t)(h ^ (h >> 29) ^ (h >> 47)) & t->mask;
}

void classes_init(struct class_table *t, size_t nodes)
{
	*t = (struct class_table){.at = gp_xcalloc(nodes + 1, sizeof *t->at),
				  .unused = gp_xcalloc(nodes + 1, sizeof *t->unused),
				  .slot = gp_xcalloc(64, sizeof *t->slot),
				  .mask = 63};
}

void classes_free(struct class_table *t)
{
	free(t->at);
	free(t->unused);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

/* Twice the slots, the live classes placed again. */
static void grow(struct class_table *t)
{
	free(t->slot);
	t->mask = 2 * t->mask + 1;
	t->slot = gp_xcalloc(t->mask + 1, sizeof *t->slot);
	for (int32_t id = 0; id < t->n; id++) {
		if (!t->at[id].nodes)
			continue;
		size_t i = home(t, &t->at[id]);
		while (t->slot[i])
			i = (i + 1) & t->mask;
		t->slot[i] = id + 1;
	}
}

int32_t classes_enter(struct class_table *t, const struct node_class *s)
{
	size_t i = home(t, s);
	for (; t->slot[i]; i = (i + 1) & t->mask) {
		struct node_class *e = &t->at[t->slot[i] - 1];
		if (same(e, s)) {
			e->nodes++;
			return t->slot[i] - 1;
		}
	}
	int32_t id = t->n_unused ? t->unused[--t->n_unused] : t->n++;
	t->at[id] = *s;
	t->at[id].nodes = 1;
	t->slot[i] = id + 1;
	if (2 * (size_t)++t->live > t->mask + 1)
		grow(t);
	return id;
}

void classes_leave(struct class_table *t, int32_t id)
{
	assert(id >= 0 && id < t->n && t->at[id].nodes > 0);
	if (--t->at[id].nodes)
		return;
	size_t i = home(t, &t->at[id]);
	while (t->slot[i] != id + 1)
		i = (i + 1) & t->mask;
	/* Shift back each later entry of the run that may not sit past the hole. */
	for (size_t j = (i + 1) & t->mask; t->slot[j]; j = (j + 1) & t->mask) {
		size_t k = home(t, &t->at[t->slot[j] - 1]);
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i] = 0;
	t->unused[t->n_unused++] = id;
	t->live--;
}

int32_t classes_move(struct class_table *t, int32_t id, const struct node_class *s)
{
	if (same(&t->at[id], s))
		return id;
	int32_t to = classes_enter(t, s);
	classes_leave(t, id);
	return to;
}
