/*
 * engine.h - the event queue and the simulation clock.
 *
 * Events are small values (time, sequence, type, id, generation) kept in an
 * array-backed 4-ary min-heap ordered by (time, sequence): the sequence number
 * is the insertion order, so simultaneous events pop in the order they were
 * scheduled and a run is deterministic.  The heap grows by doubling; once it has
 * reached its working size no event allocates.  Handlers are not stored: the
 * caller dispatches on `type` (a switch is faster and easier to follow than
 * function pointers).  Cancelling is lazy: an event carries a generation that
 * the owner of `id` compares with its own, and stale events are skipped.
 */
#ifndef GPUPLAN_ENGINE_H
#define GPUPLAN_ENGINE_H

#include "gpuplan/common.h"

struct event {
	sim_time t;
	uint64_t seq;
	uint32_t id;    /* what the event is about: a job, a pool, a workload ... */
	uint16_t type;  /* the caller's event kind */
	uint16_t gen;   /* for lazy cancellation */
};

struct engine {
	struct event *heap;
	size_t n, cap;
	uint64_t next_seq;
	sim_time now;
	uint64_t processed; /* events popped */
};

void engine_init(struct engine *e, size_t capacity_hint);
void engine_free(struct engine *e);

/* Schedules an event at t >= now. */
void engine_push(struct engine *e, sim_time t, uint16_t type, uint32_t id, uint16_t gen);

/* Pops the earliest event into *ev and advances the clock to it; false when empty. */
bool engine_pop(struct engine *e, struct event *ev);

/* Time of the earliest event, or SIM_NEVER. */
static inline sim_time engine_next_time(const struct engine *e)
{
	return e->n ? e->heap[0].t : SIM_NEVER;
}

static inline size_t engine_pending(const struct engine *e) { return e->n; }

#endif
