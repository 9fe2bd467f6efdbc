/*
 * engine.h - the event queue and the simulation clock.
 *
 * Events pop in time order, and events of the same time in the order they
 * were scheduled, so a run is deterministic.  Cancelling is lazy: an event
 * carries a generation that the owner of `id` compares with its own, and
 * stale events are skipped.
 *
 * Who handles an event is a table indexed by its type, which the loop's
 * clients fill at init (engine_register: each asks for as many types as it
 * has kinds of event, and gets the first of them), so the loop that pops
 * dispatches without knowing its clients (engine_dispatch, one indexed load
 * and one call; no allocation, no search).  A client may also give a hook
 * that warms what an event will read while the one before is handled
 * (engine_warm_next), and one that asks, an event earlier, for what that
 * warming reads (engine_register_far).  Types are given in the order of registration, so a
 * run's are the same every time; they never order events.
 *
 * The queue is a radix heap that hands out sorted runs.  Time never goes
 * back, so every key is at least `last`: an event is filed under the highest
 * byte in which its time differs from last (a level, 0..7) and that byte's
 * value (a digit, 0..255), and the lowest non-empty bucket holds the earliest
 * events.  Pops read the run, a sorted array, inline; when it is used up,
 * the lowest bucket becomes the next run: a level-0 bucket holds one time and
 * is taken as it is; a level-1 bucket's times differ in their low byte only,
 * so two counting passes on a nibble each sort it without a branch; a small
 * one (any level, in one block) is sorted by insertion where it lies; any
 * other is spread around its minimum, which becomes last, into lower levels,
 * and the search goes on.  An event
 * scheduled while a run is read may fall before the run's rest: `soonest`,
 * the earliest time in the buckets, tells, and such an event is popped from
 * its bucket (spread down to level 0) instead.
 *
 * Equal times keep their order: buckets are appended to, spreading and both
 * sorts are stable, and a run holds every event in its span scheduled
 * before it was made, so it wins ties with the buckets.
 *
 * Cost: push O(1); pop O(1) amortized (an event moves down at most 8
 * levels and is copied into one run, sorted in linear time); next time O(1).
 *
 * Why it is fast: a push is an inline append to a bucket's last block, and
 * a pop an inline read; held 1e5 deep with exponential increments
 * (docs/benchmarks.md), an event is filed twice and sorted once, and every
 * append, sort pass and read goes through memory in order.
 *
 * Memory: buckets are chains of 512-byte blocks from one pool, each freed as
 * soon as it is read, and the run and its scratch grow to the largest bucket
 * made a run, so memory follows the events pending (plus at most one partly
 * filled block per non-empty bucket); once warm, nothing allocates.
 */
#ifndef GPUPLAN_ENGINE_H
#define GPUPLAN_ENGINE_H

#include "gpuplan/common.h"

#include <assert.h>

struct event {
	sim_time t;
	uint32_t id;   /* what the event is about: a job, a pool, a workload ... */
	uint16_t type; /* the caller's event kind */
	uint16_t gen;  /* for lazy cancellation */
};

#define ENGINE_LEVELS       8   /* bytes of a 64-bit time */
#define ENGINE_DIGITS       256 /* values of a byte */
#define ENGINE_BLOCK_BYTES  512
#define ENGINE_BLOCK_EVENTS (ENGINE_BLOCK_BYTES / sizeof(struct event) - 1) /* 31 */
#define ENGINE_CHUNK_BLOCKS 64 /* blocks allocated at a time */
#define ENGINE_TYPES        32 /* event types the clients of one engine may register */

/* A client of the loop: handles the events of its types, with its state. */
typedef void (*engine_handler)(void *ctx, const struct event *ev);
struct engine_client {
	engine_handler on;    /* handles an event of the client's */
	engine_handler ahead; /* NULL, or: this event comes next; warm what it reads */
	engine_handler far;   /* NULL, or: this event comes after the next; ask for
			       * what ahead will read to know what to warm */
	void *ctx;
};

/* Part of a bucket: blocks are aligned to their size, so the slot after a
 * block's last event (where `next` lives) tells that the block is full. */
struct engine_block {
	struct event ev[ENGINE_BLOCK_EVENTS];
	struct engine_block *next;
	char pad[sizeof(struct event) - sizeof(struct engine_block *)];
};

struct engine_bucket {
	struct event *end; /* the free slot after its last event; an empty bucket's looks full */
	uint64_t min;      /* its smallest key; UINT64_MAX when empty */
};

struct engine {
	struct event *r, *rend; /* the run's unread events, in order */
	sim_time soonest;       /* earliest time in the buckets; SIM_NEVER when none */
	uint64_t last;          /* every key in the buckets is >= it */
	size_t n;               /* events queued */
	sim_time now;
	uint64_t processed; /* events popped */
	struct engine_bucket b[ENGINE_LEVELS][ENGINE_DIGITS];
	struct event *first[ENGINE_LEVELS][ENGINE_DIGITS]; /* each bucket's first event */
	uint64_t digits[ENGINE_LEVELS][4];                 /* non-empty buckets of each level */
	unsigned levels;                                   /* levels with a non-empty bucket */
	struct event *run, *tmp;        /* two arrays for runs and their sorting */
	struct engine_block *run_block; /* holding the run, or NULL */
	size_t cap;                     /* of both */
	struct engine_block *free;      /* blocks to reuse */
	void **chunks;                  /* what the blocks came in, to free */
	size_t n_chunks, chunks_cap;
	struct engine_client clients[ENGINE_TYPES]; /* by event type */
	uint16_t n_types;                           /* registered so far */
};

void engine_init(struct engine *e);
void engine_free(struct engine *e);

/* Schedules an event at t >= now (inline, below). */
static inline void engine_push(struct engine *e, sim_time t, uint16_t type, uint32_t id,
			       uint16_t gen);

/* Pops the earliest event into *ev and advances the clock to it; false when
 * empty (inline, below). */
static inline bool engine_pop(struct engine *e, struct event *ev);

/* Time of the earliest event, or SIM_NEVER.  Does not move the clock. */
static inline sim_time engine_next_time(const struct engine *e)
{
	if (e->r == e->rend)
		return e->soonest;
	return e->r->t < e->soonest ? e->r->t : e->soonest;
}

static inline size_t engine_pending(const struct engine *e) { return e->n; }

/* The event the next pop gives unless an earlier one is pushed first, or
 * NULL when finding it would take more than a glance (a hint, for callers
 * that prefetch what the next event will read).  O(1). */
const struct event *engine_peek(const struct engine *e);

/* Gives a client the next n event types: on (and ahead, when not NULL)
 * with ctx handles them.  Returns the first; the client numbers its kinds
 * from it.  At init, before the client pushes an event. */
uint16_t engine_register(struct engine *e, uint16_t n, engine_handler on, engine_handler ahead,
			 void *ctx);

/* Gives the client of event type `type` a hook for the event after the
 * next (engine_client.far).  At init. */
void engine_register_far(struct engine *e, uint16_t type, engine_handler far);

/* Hands ev to the client that registered its type. */
static inline void engine_dispatch(const struct engine *e, const struct event *ev)
{
	assert(ev->type < e->n_types && "every event type is registered");
	const struct engine_client *c = &e->clients[ev->type];
	c->on(c->ctx, ev);
}

/* Lets the client of the event the next pop probably gives (engine_peek)
 * warm what it will read, if it asked to, and the client of the one after
 * it in the run being read ask for what that warming will read: a line an
 * ahead hook must read to know what to warm would be a miss of its own. */
static inline void engine_warm_next(const struct engine *e)
{
	const struct event *next = engine_peek(e);
	if (!next)
		return;
	if (e->clients[next->type].ahead)
		e->clients[next->type].ahead(e->clients[next->type].ctx, next);
	const struct event *after = next + 1;
	if (next == e->r && after < e->rend && e->clients[after->type].far)
		e->clients[after->type].far(e->clients[after->type].ctx, after);
}

/* The rest is the inline fast path and what it calls; not for callers. */

void engine_grow(struct engine *e, unsigned level, unsigned digit);
bool engine_pop_slow(struct engine *e, struct event *ev);

/* Times as unsigned keys that sort like the signed times. */
static inline uint64_t engine_key(sim_time t) { return (uint64_t)t ^ (UINT64_C(1) << 63); }

static inline bool engine_block_full(const struct event *end)
{
	return ((uintptr_t)end & (ENGINE_BLOCK_BYTES - 1)) ==
	       ENGINE_BLOCK_EVENTS * sizeof(struct event);
}

/* Files ev under the highest byte in which its key differs from last (a
 * key equal to last goes to level 0 as well). */
static inline void engine_file(struct engine *e, uint64_t last, const struct event *ev)
{
	uint64_t k = engine_key(ev->t);
	unsigned level = (63 - (unsigned)__builtin_clzll((k ^ last) | 1)) / 8;
	unsigned digit = (unsigned)(k >> (8 * level)) & 255;
	struct engine_bucket *b = &e->b[level][digit];
	if (engine_block_full(b->end))
		engine_grow(e, level, digit); /* also marks a bucket that was empty */
	*b->end++ = *ev;
	b->min = k < b->min ? k : b->min;
}

static inline void engine_push(struct engine *e, sim_time t, uint16_t type, uint32_t id,
			       uint16_t gen)
{
	assert(t >= e->now && "events are never scheduled in the past");
	struct event ev = {t, id, type, gen};
	engine_file(e, e->last, &ev);
	e->soonest = t < e->soonest ? t : e->soonest;
	e->n++;
}

static inline bool engine_pop(struct engine *e, struct event *ev)
{
	const struct event *r = e->r;
	if (r == e->rend || r->t > e->soonest)
		return engine_pop_slow(e, ev);
	*ev = *r;
	e->r++;
	assert(ev->t >= e->now && "time never goes backwards");
	e->n--;
	e->now = ev->t;
	e->processed++;
	return true;
}

#endif
