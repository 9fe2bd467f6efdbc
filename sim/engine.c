/*
 * engine.c - a 4-ary min-heap of events (see engine.h).
 *
 * Four children per node halves the depth of a binary heap and keeps the
 * children of a node in one or two cache lines, which is what dominates the
 * cost of a pop in a large heap.  Sifts move a hole instead of swapping.
 */
#include "gpuplan/engine.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static inline bool before(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void engine_init(struct engine *e, size_t capacity_hint)
{
	memset(e, 0, sizeof *e);
	e->cap = capacity_hint ? capacity_hint : 1024;
	e->heap = gp_xmalloc(e->cap * sizeof *e->heap);
}

void engine_free(struct engine *e)
{
	free(e->heap);
	memset(e, 0, sizeof *e);
}

void engine_push(struct engine *e, sim_time t, uint16_t type, uint32_t id, uint16_t gen)
{
	assert(t >= e->now && "events are never scheduled in the past");
	if (e->n == e->cap)
		GP_GROW(e->heap, e->cap, e->n + 1);
	struct event ev = {t, e->next_seq++, id, type, gen};
	size_t i = e->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 4;
		if (!before(&ev, &e->heap[parent]))
			break;
		e->heap[i] = e->heap[parent];
		i = parent;
	}
	e->heap[i] = ev;
}

bool engine_pop(struct engine *e, struct event *ev)
{
	if (e->n == 0)
		return false;
	struct event *h = e->heap;
	*ev = h[0];
	struct event last = h[--e->n];
	size_t n = e->n, i = 0;
	for (;;) {
		size_t c = 4 * i + 1;
		if (c >= n)
			break;
		size_t best = c, end = c + 4 < n ? c + 4 : n;
		for (size_t k = c + 1; k < end; k++)
			if (before(&h[k], &h[best]))
				best = k;
		if (!before(&h[best], &last))
			break;
		h[i] = h[best];
		i = best;
	}
	h[i] = last;
	assert(ev->t >= e->now && "time never goes backwards");
	e->now = ev->t;
	e->processed++;
	return true;
}
