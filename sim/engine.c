/*
 * engine.c - a 256-way radix heap of events (see engine.h).
 */
#include "gpuplan/engine.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Times as unsigned keys that sort like the signed times. */
static inline uint64_t key_of(sim_time t) { return (uint64_t)t ^ (UINT64_C(1) << 63); }

static inline void append(struct engine_bucket *b, const struct event *ev)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 16;
		b->items = gp_xrealloc(b->items, b->cap * sizeof *b->items);
	}
	b->items[b->n++] = *ev;
}

/* Files ev under the highest byte in which its time differs from last. */
static inline void file(struct engine *e, const struct event *ev)
{
	uint64_t k = key_of(ev->t), x = k ^ e->last;
	if (!x) {
		append(&e->due, ev);
		return;
	}
	unsigned level = (63 - (unsigned)__builtin_clzll(x)) / 8;
	unsigned digit = (unsigned)(k >> (8 * level)) & 255;
	append(&e->b[level][digit], ev);
	e->digits[level][digit / 64] |= UINT64_C(1) << (digit % 64);
	e->levels |= (uint8_t)(1u << level);
}

void engine_init(struct engine *e)
{
	memset(e, 0, sizeof *e);
	e->last = key_of(0);
	e->next = SIM_NEVER;
}

void engine_free(struct engine *e)
{
	free(e->due.items);
	for (int l = 0; l < ENGINE_LEVELS; l++)
		for (int d = 0; d < ENGINE_DIGITS; d++)
			free(e->b[l][d].items);
	memset(e, 0, sizeof *e);
}

void engine_push(struct engine *e, sim_time t, uint16_t type, uint32_t id, uint16_t gen)
{
	assert(t >= e->now && "events are never scheduled in the past");
	struct event ev = {t, id, type, gen};
	file(e, &ev);
	e->n++;
	if (e->next != SIM_NEVER && t < e->next)
		e->next = t;
}

/* The lowest non-empty bucket: the lowest level, then the lowest digit. */
static struct engine_bucket *lowest(struct engine *e, unsigned *level, unsigned *digit)
{
	*level = (unsigned)__builtin_ctz(e->levels);
	const uint64_t *m = e->digits[*level];
	unsigned w = 0;
	while (!m[w])
		w++;
	*digit = w * 64 + (unsigned)__builtin_ctzll(m[w]);
	return &e->b[*level][*digit];
}

static sim_time min_time(const struct engine_bucket *b, unsigned level)
{
	if (level == 0)
		return b->items[0].t; /* all of one time */
	sim_time m = SIM_NEVER;
	for (uint32_t k = 0; k < b->n; k++)
		m = b->items[k].t < m ? b->items[k].t : m;
	return m;
}

/* Spreads the lowest bucket around its minimum, which becomes last: its
 * events all land in lower levels (they share every byte above this level,
 * and this one, with the minimum), and the minimum's in the FIFO. */
static void spread(struct engine *e)
{
	unsigned level, digit;
	struct engine_bucket *b = lowest(e, &level, &digit);
	e->last = key_of(min_time(b, level));
	uint64_t *m = e->digits[level];
	m[digit / 64] &= ~(UINT64_C(1) << (digit % 64));
	if (!(m[0] | m[1] | m[2] | m[3]))
		e->levels &= (uint8_t) ~(1u << level);
	if (level == 0) {
		/* A level-0 bucket holds one time, the new last: it becomes the
		 * FIFO as it is (the FIFO is empty; its array is kept for reuse). */
		struct engine_bucket fifo = e->due;
		e->due = *b;
		*b = fifo;
		b->n = 0;
		return;
	}
	uint32_t n = b->n;
	b->n = 0; /* nothing is filed here while it is read */
	for (uint32_t k = 0; k < n; k++)
		file(e, &b->items[k]);
}

bool engine_pop(struct engine *e, struct event *ev)
{
	if (!e->n)
		return false;
	if (e->due_head == e->due.n) {
		e->due_head = e->due.n = 0;
		spread(e);
	}
	*ev = e->due.items[e->due_head++];
	assert(ev->t >= e->now && "time never goes backwards");
	e->n--;
	e->now = ev->t;
	e->processed++;
	e->next = SIM_NEVER;
	return true;
}

sim_time engine_next_time(struct engine *e)
{
	if (!e->n)
		return SIM_NEVER;
	if (e->due_head < e->due.n)
		return e->due.items[e->due_head].t;
	/* Not spread yet: the clock may still get events before this minimum. */
	if (e->next == SIM_NEVER) {
		unsigned level, digit;
		struct engine_bucket *b = lowest(e, &level, &digit);
		e->next = min_time(b, level);
	}
	return e->next;
}
