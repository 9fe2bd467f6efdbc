/*
 * engine.c - a 256-way radix heap of events handing out sorted runs (see
 * engine.h).
 */
#include "gpuplan/engine.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct engine_block) == ENGINE_BLOCK_BYTES, "a block is its bytes");

#define CHUNK_BLOCKS ENGINE_CHUNK_BLOCKS

/* Where every empty bucket ends: a full block's last slot, so that the
 * first event filed takes a block.  Never written. */
static _Alignas(ENGINE_BLOCK_BYTES) struct engine_block nil;
#define NIL_END (&nil.ev[ENGINE_BLOCK_EVENTS])

static const struct engine_bucket empty = {NIL_END, UINT64_MAX};

static inline sim_time time_of(uint64_t key) { return (sim_time)(key ^ (UINT64_C(1) << 63)); }

/* The block holding the event before p (p may be one past a block's last event). */
static inline struct engine_block *block_of(const struct event *p)
{
	return (struct engine_block *)((uintptr_t)(p - 1) & ~(uintptr_t)(ENGINE_BLOCK_BYTES - 1));
}

static struct engine_block *block_new(struct engine *e)
{
	if (!e->free) {
		gp_grow((void **)&e->chunks, &e->chunks_cap, e->n_chunks + 1, sizeof *e->chunks);
		char *p = gp_xmalloc((CHUNK_BLOCKS + 1) * ENGINE_BLOCK_BYTES);
		e->chunks[e->n_chunks++] = p;
		uintptr_t a = ((uintptr_t)p + ENGINE_BLOCK_BYTES - 1) &
			      ~(uintptr_t)(ENGINE_BLOCK_BYTES - 1);
		struct engine_block *blk = (struct engine_block *)a;
		for (int i = CHUNK_BLOCKS - 1; i >= 0; i--) {
			blk[i].next = e->free;
			e->free = &blk[i];
		}
	}
	struct engine_block *blk = e->free;
	e->free = blk->next;
	blk->next = NULL;
	return blk;
}

static inline void block_free(struct engine *e, struct engine_block *blk)
{
	blk->next = e->free;
	e->free = blk;
}

/* Gives bucket (level, digit), whose last block is full, a new one. */
void engine_grow(struct engine *e, unsigned level, unsigned digit)
{
	struct engine_bucket *b = &e->b[level][digit];
	struct engine_block *blk = block_new(e);
	if (b->end == NIL_END) {
		e->first[level][digit] = blk->ev;
		e->digits[level][digit / 64] |= UINT64_C(1) << (digit % 64);
		e->levels |= 1u << level;
	} else
		block_of(b->end)->next = blk;
	b->end = blk->ev;
}

void engine_init(struct engine *e)
{
	memset(e, 0, sizeof *e);
	for (int l = 0; l < ENGINE_LEVELS; l++)
		for (int d = 0; d < ENGINE_DIGITS; d++)
			e->b[l][d] = empty;
	e->soonest = SIM_NEVER;
	e->last = engine_key(0);
}

uint16_t engine_register(struct engine *e, uint16_t n, engine_handler on, engine_handler ahead,
			 void *ctx)
{
	assert(on && e->n_types + n <= ENGINE_TYPES && "raise ENGINE_TYPES");
	uint16_t first = e->n_types;
	for (uint16_t k = 0; k < n; k++)
		e->clients[first + k] =
			(struct engine_client){.on = on, .ahead = ahead, .ctx = ctx};
	e->n_types = (uint16_t)(first + n);
	return first;
}

void engine_register_far(struct engine *e, uint16_t type, engine_handler far)
{
	assert(type < e->n_types && "a registered type");
	e->clients[type].far = far;
}

void engine_free(struct engine *e)
{
	for (size_t i = 0; i < e->n_chunks; i++)
		free(e->chunks[i]);
	free(e->chunks);
	free(e->run);
	free(e->tmp);
	memset(e, 0, sizeof *e);
}

/* The lowest non-empty bucket: the lowest level, then the lowest digit. */
static void lowest(const struct engine *e, unsigned *level, unsigned *digit)
{
	*level = (unsigned)__builtin_ctz(e->levels);
	const uint64_t *m = e->digits[*level];
	unsigned w = 0;
	while (!m[w])
		w++;
	*digit = w * 64 + (unsigned)__builtin_ctzll(m[w]);
}

static void set_soonest(struct engine *e)
{
	unsigned level, digit;
	if (!e->levels) {
		e->soonest = SIM_NEVER;
		return;
	}
	lowest(e, &level, &digit);
	e->soonest = time_of(e->b[level][digit].min);
}

/* Empties bucket (level, digit). */
static void clear(struct engine *e, unsigned level, unsigned digit)
{
	e->b[level][digit] = empty;
	uint64_t *m = e->digits[level];
	m[digit / 64] &= ~(UINT64_C(1) << (digit % 64));
	if (!(m[0] | m[1] | m[2] | m[3]))
		e->levels &= ~(1u << level);
}

/* Makes room for n events in the run's arrays (the run is used up: nothing
 * in them is kept). */
static void make_room(struct engine *e, size_t n)
{
	assert(e->r == e->rend);
	if (n <= e->cap)
		return;
	while (e->cap < n)
		e->cap = e->cap ? 2 * e->cap : 256;
	free(e->run);
	free(e->tmp);
	e->run = gp_xmalloc(e->cap * sizeof *e->run);
	e->tmp = gp_xmalloc(e->cap * sizeof *e->tmp);
}

/* A bucket is read block by block, from its first event to end (in block
 * tail): the events of blk end here. */
static inline struct event *span_end(struct engine_block *blk, struct engine_block *tail,
				     struct event *end)
{
	return blk == tail ? end : blk->ev + ENGINE_BLOCK_EVENTS;
}

/* Frees blk, read, and moves *blk and *p to the next block; false after the tail. */
static inline bool next_block(struct engine *e, struct engine_block **blk,
			      struct engine_block *tail, struct event **p)
{
	struct engine_block *read = *blk, *next = read->next;
	block_free(e, read);
	if (read == tail)
		return false;
	*blk = next;
	*p = next->ev;
	return true;
}

/* Copies bucket (level, digit) into e->tmp, empties it and frees its
 * blocks; returns how many events it held (a level-0 bucket may have been
 * read from the front). */
static size_t take(struct engine *e, unsigned level, unsigned digit)
{
	struct event *p = e->first[level][digit], *end = e->b[level][digit].end;
	struct engine_block *blk = block_of(p + 1), *tail = block_of(end);
	size_t n = (size_t)(span_end(blk, tail, end) - p);
	if (blk != tail) {
		for (struct engine_block *k = blk->next; k != tail; k = k->next)
			n += ENGINE_BLOCK_EVENTS;
		n += (size_t)(end - tail->ev);
	}
	make_room(e, n);
	struct event *to = e->tmp;
	do {
		struct event *stop = span_end(blk, tail, end);
		memcpy(to, p, (size_t)(stop - p) * sizeof *p);
		to += stop - p;
	} while (next_block(e, &blk, tail, &p));
	clear(e, level, digit);
	return n;
}

/* Spreads bucket (level, digit), level >= 1, around its minimum, which
 * becomes last: its events all land in lower levels (they share every byte
 * above this level, and this one, with the minimum).  Filed straight from
 * its blocks, each freed once read. */
static void spread(struct engine *e, unsigned level, unsigned digit)
{
	uint64_t last = e->b[level][digit].min;
	struct event *p = e->first[level][digit], *end = e->b[level][digit].end;
	struct engine_block *blk = block_of(p + 1), *tail = block_of(end);
	clear(e, level, digit); /* nothing is filed here while it is read */
	e->last = last;
	do {
		for (struct event *stop = span_end(blk, tail, end); p < stop; p++)
			engine_file(e, last, p);
	} while (next_block(e, &blk, tail, &p));
}

/* Turns counts of nibble values into where each value's events start; true
 * when one value has all n (the pass would not move anything). */
static bool starts(size_t at[16], size_t n)
{
	size_t sum = 0;
	bool one = false;
	for (int d = 0; d < 16; d++) {
		size_t c = at[d];
		one |= c == n;
		at[d] = sum;
		sum += c;
	}
	return one;
}

/* Sorts a[0..n) by time when the times differ in their low byte only (a
 * level-1 bucket's): two stable counting passes, on the low nibble then the
 * high one, between a and the scratch s[0..n).  Returns which holds the
 * result. */
static struct event *sort_low_byte(struct event *a, struct event *s, size_t n)
{
	size_t lo[16] = {0}, hi[16] = {0};
	for (size_t i = 0; i < n; i++) {
		uint64_t k = engine_key(a[i].t);
		lo[k & 15]++;
		hi[(k >> 4) & 15]++;
	}
	if (!starts(lo, n)) {
		for (size_t i = 0; i < n; i++)
			s[lo[engine_key(a[i].t) & 15]++] = a[i];
		struct event *x = a;
		a = s;
		s = x;
	}
	if (!starts(hi, n)) {
		for (size_t i = 0; i < n; i++)
			s[hi[(engine_key(a[i].t) >> 4) & 15]++] = a[i];
		a = s;
	}
	return a;
}

/* Sorts a[0..n) by time, equal times in their order. */
static void sort_insertion(struct event *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct event x = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1].t > x.t; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

#define SORT_SMALL 16 /* up to this many, insertion beats the counting passes */

/* Makes the lowest bucket the run (see engine.h), once the run is used up.
 * A bucket in one block is sorted where it is, and its block is kept until
 * the run is used up; a longer one is copied out. */
static void next_run(struct engine *e)
{
	if (e->run_block) {
		block_free(e, e->run_block);
		e->run_block = NULL;
	}
	unsigned level, digit;
	struct event *first, *end;
	for (;;) {
		lowest(e, &level, &digit);
		first = e->first[level][digit];
		end = e->b[level][digit].end;
		if (level <= 1 || block_of(first + 1) == block_of(end))
			break;
		spread(e, level, digit);
	}
	size_t n;
	if (block_of(first + 1) == block_of(end)) {
		clear(e, level, digit);
		n = (size_t)(end - first);
		if (level == 1 && n > SORT_SMALL) {
			make_room(e, n);
			first = sort_low_byte(first, e->tmp, n);
		} else if (level > 0)
			sort_insertion(first, n);
		if (first != e->tmp)
			e->run_block = block_of(first + 1);
		else
			block_free(e, block_of(end));
	} else {
		n = take(e, level, digit);
		first = level == 1 ? sort_low_byte(e->tmp, e->run, n) : e->tmp;
	}
	e->r = first;
	e->rend = first + n;
	set_soonest(e);
}

/* Pops the first event of the earliest bucket, spread down to level 0 (one
 * time, the earliest). */
static void pop_bucket(struct engine *e, struct event *ev)
{
	unsigned level, digit;
	for (lowest(e, &level, &digit); level; lowest(e, &level, &digit))
		spread(e, level, digit);
	struct event **first = &e->first[0][digit];
	*ev = *(*first)++;
	if (*first == e->b[0][digit].end) {
		block_free(e, block_of(*first));
		clear(e, 0, digit);
		set_soonest(e);
	} else if (engine_block_full(*first)) {
		struct engine_block *blk = block_of(*first);
		*first = blk->next->ev;
		block_free(e, blk);
	}
}

const struct event *engine_peek(const struct engine *e)
{
	if (e->r != e->rend && e->r->t <= e->soonest)
		return e->r;
	if (!e->levels)
		return NULL;
	unsigned level, digit;
	lowest(e, &level, &digit);
	uint64_t min = e->b[level][digit].min;
	struct event *p = e->first[level][digit], *end = e->b[level][digit].end;
	/* the bucket's first block only: a hint need not search a long bucket */
	for (struct event *stop = span_end(block_of(p + 1), block_of(end), end); p < stop; p++)
		if (engine_key(p->t) == min)
			return p;
	return NULL;
}

bool engine_pop_slow(struct engine *e, struct event *ev)
{
	if (!e->n) {
		if (e->run_block) { /* the run is used up too */
			block_free(e, e->run_block);
			e->run_block = NULL;
		}
		return false;
	}
	if (e->r == e->rend)
		next_run(e);
	if (e->r->t <= e->soonest)
		*ev = *e->r++;
	else
		pop_bucket(e, ev);
	assert(ev->t >= e->now && "time never goes backwards");
	e->n--;
	e->now = ev->t;
	e->processed++;
	return true;
}
