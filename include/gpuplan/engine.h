/*
 * engine.h - the event queue and the simulation clock.
 *
 * Events pop in time order, and events of the same time in the order they
 * were scheduled, so a run is deterministic.  Handlers are not stored: the
 * caller dispatches on `type` (a switch is faster and easier to follow than
 * function pointers).  Cancelling is lazy: an event carries a generation
 * that the owner of `id` compares with its own, and stale events are skipped.
 *
 * The queue is a radix heap, which fits a simulation clock: time never goes
 * back, so every key is at least `last`, the time of the latest pop.  An
 * event is filed under the highest byte in which its time differs from last
 * (a level, 0..7) and that byte's value (a digit, 0..255); events equal to
 * last wait in a FIFO.  Popping empties the FIFO; when it is empty, the
 * lowest non-empty bucket is spread over lower levels around its minimum,
 * which becomes last; a level-0 bucket holds a single time and becomes the
 * FIFO whole (its array swapped in, no event copied), which is the common
 * case when events are dense.  An event moves down at most 8 times, pushes are O(1),
 * and all memory traffic is sequential appends.  Events of equal time always
 * share a bucket and spreading keeps bucket order, so they leave in the order
 * they came, as an insertion counter would order them.  Bucket arrays grow
 * by doubling and are reused: once warm, nothing allocates.
 */
#ifndef GPUPLAN_ENGINE_H
#define GPUPLAN_ENGINE_H

#include "gpuplan/common.h"

struct event {
	sim_time t;
	uint32_t id;   /* what the event is about: a job, a pool, a workload ... */
	uint16_t type; /* the caller's event kind */
	uint16_t gen;  /* for lazy cancellation */
};

#define ENGINE_LEVELS 8   /* bytes of a 64-bit time */
#define ENGINE_DIGITS 256 /* values of a byte */

struct engine_bucket {
	struct event *items;
	uint32_t n, cap;
};

struct engine {
	struct engine_bucket due; /* events at time last, FIFO from due_head */
	uint32_t due_head;
	struct engine_bucket b[ENGINE_LEVELS][ENGINE_DIGITS];
	uint64_t digits[ENGINE_LEVELS][4]; /* non-empty buckets of each level */
	uint8_t levels;                    /* levels with a non-empty bucket */
	uint64_t last;                     /* key of the latest pop; every key is >= it */
	size_t n;                          /* events queued */
	sim_time now;
	uint64_t processed; /* events popped */
	sim_time next;      /* cache of engine_next_time; SIM_NEVER: unknown */
};

void engine_init(struct engine *e);
void engine_free(struct engine *e);

/* Schedules an event at t >= now. */
void engine_push(struct engine *e, sim_time t, uint16_t type, uint32_t id, uint16_t gen);

/* Pops the earliest event into *ev and advances the clock to it; false when empty. */
bool engine_pop(struct engine *e, struct event *ev);

/* Time of the earliest event, or SIM_NEVER.  Does not move the clock. */
sim_time engine_next_time(struct engine *e);

static inline size_t engine_pending(const struct engine *e) { return e->n; }

#endif
