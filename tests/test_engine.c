/* test_engine.c - the event queue: order, ties, growth, the clock. */
#include "gpuplan/engine.h"

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

Test(engine, pops_events_in_time_order)
{
	struct engine e;
	engine_init(&e);
	sim_time times[] = {50, 10, 40, 20, 30, 0, 60};
	for (uint32_t i = 0; i < 7; i++)
		engine_push(&e, times[i], 0, i, 0);
	struct event ev;
	sim_time last = -1;
	int n = 0;
	while (engine_pop(&e, &ev)) {
		cr_assert_geq(ev.t, last);
		cr_assert_eq(e.now, ev.t);
		last = ev.t;
		n++;
	}
	cr_assert_eq(n, 7);
	cr_assert_eq(e.processed, 7);
	engine_free(&e);
}

Test(engine, breaks_ties_by_insertion_order)
{
	struct engine e;
	engine_init(&e);
	for (uint32_t i = 0; i < 100; i++)
		engine_push(&e, 5, (uint16_t)(i % 3), i, 0);
	struct event ev;
	for (uint32_t i = 0; i < 100; i++) {
		cr_assert(engine_pop(&e, &ev));
		cr_assert_eq(ev.id, i, "simultaneous events pop in the order they were scheduled");
		cr_assert_eq(ev.type, i % 3);
	}
	cr_assert_not(engine_pop(&e, &ev));
	engine_free(&e);
}

Test(engine, matches_a_sorted_reference_under_random_load)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct engine e;
	engine_init(&e);
	/* Hold model: pop one, push one later; every pop must be >= the previous. */
	for (uint32_t i = 0; i < 1000; i++)
		engine_push(&e, (sim_time)gsl_rng_uniform_int(rng, 1000), 0, i, 0);
	struct event ev, prev = {0};
	for (int i = 0; i < 100000; i++) {
		cr_assert(engine_pop(&e, &ev));
		cr_assert_geq(ev.t, prev.t);
		prev = ev;
		engine_push(&e, ev.t + (sim_time)gsl_rng_uniform_int(rng, 1000), 0, ev.id, 0);
	}
	cr_assert_eq(engine_pending(&e), 1000);
	engine_free(&e);
	gsl_rng_free(rng);
}

Test(engine, reports_next_time_and_empty)
{
	struct engine e;
	engine_init(&e);
	cr_assert_eq(engine_next_time(&e), SIM_NEVER);
	engine_push(&e, 7, 1, 2, 3);
	cr_assert_eq(engine_next_time(&e), 7);
	struct event ev;
	cr_assert(engine_pop(&e, &ev));
	cr_assert_eq(ev.id, 2);
	cr_assert_eq(ev.gen, 3);
	cr_assert_eq(engine_next_time(&e), SIM_NEVER);
	engine_free(&e);
}

/* Equal times leave in the order they were scheduled, even when they were
 * filed at different moments and moved down through several levels. */
Test(engine, ties_stay_in_insertion_order_across_levels)
{
	struct engine e;
	engine_init(&e);
	engine_push(&e, 1000000, 0, 0, 0); /* filed high: far from last */
	engine_push(&e, 5, 0, 100, 0);
	struct event ev;
	cr_assert(engine_pop(&e, &ev));
	cr_assert_eq(ev.id, 100);
	engine_push(&e, 1000000, 0, 1, 0); /* filed from a later last */
	engine_push(&e, 70000, 0, 101, 0);
	cr_assert(engine_pop(&e, &ev));
	cr_assert_eq(ev.id, 101);
	engine_push(&e, 1000000, 0, 2, 0);
	for (uint32_t i = 0; i < 3; i++) {
		cr_assert(engine_pop(&e, &ev));
		cr_assert_eq(ev.t, 1000000);
		cr_assert_eq(ev.id, i, "tie %u in scheduling order", i);
		engine_push(&e, 1000000, 0, 10 + i, 0); /* same instant, scheduled now */
	}
	for (uint32_t i = 0; i < 3; i++) {
		cr_assert(engine_pop(&e, &ev));
		cr_assert_eq(ev.id, 10 + i);
	}
	engine_free(&e);
}

/* Next-time peeks do not move the clock: an event scheduled after a peek,
 * earlier than what was peeked, still comes first. */
Test(engine, a_peek_does_not_commit_the_clock)
{
	struct engine e;
	engine_init(&e);
	engine_push(&e, 100, 0, 1, 0);
	struct event ev;
	cr_assert(engine_pop(&e, &ev));
	engine_push(&e, 900, 0, 2, 0);
	cr_assert_eq(engine_next_time(&e), 900);
	engine_push(&e, 300, 0, 3, 0);
	cr_assert_eq(engine_next_time(&e), 300);
	cr_assert(engine_pop(&e, &ev));
	cr_assert_eq(ev.id, 3);
	cr_assert(engine_pop(&e, &ev));
	cr_assert_eq(ev.id, 2);
	engine_free(&e);
}

/* Against a reference: a sorted array with a stable sort, under random
 * pushes and pops with many ties. */
static int by_time_then_order(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

Test(engine, matches_a_stable_sort_with_ties)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct engine e;
	engine_init(&e);
	static int64_t ref[20000][2];
	size_t n = 0;
	int64_t order = 0, now = 0;
	for (int round = 0; round < 20000; round++) {
		if (n == 0 || gsl_rng_uniform(rng) < 0.55) {
			int64_t t = now + (int64_t)gsl_rng_uniform_int(rng, 50) *
						  (gsl_rng_uniform(rng) < 0.1 ? 100000 : 1);
			engine_push(&e, t, 0, (uint32_t)order, 0);
			ref[n][0] = t;
			ref[n][1] = order++;
			n++;
			qsort(ref, n, sizeof ref[0], by_time_then_order);
		} else {
			struct event ev;
			cr_assert(engine_pop(&e, &ev));
			cr_assert_eq(ev.t, ref[0][0]);
			cr_assert_eq((int64_t)ev.id, ref[0][1]);
			now = ev.t;
			memmove(ref, ref + 1, --n * sizeof ref[0]);
		}
	}
	engine_free(&e);
	gsl_rng_free(rng);
}

/* 300, 310 and 320 us share their bytes but the low one, so they form one
 * sorted run.  Scheduled while it is read: 305 falls before the run's rest
 * and pops from its bucket first; 310 ties with the run's 310, scheduled
 * earlier, and follows it. */
Test(engine, an_event_scheduled_inside_a_run_keeps_its_place)
{
	struct engine e;
	engine_init(&e);
	engine_push(&e, 320, 0, 3, 0);
	engine_push(&e, 300, 0, 1, 0);
	engine_push(&e, 310, 0, 2, 0);
	struct event ev;
	cr_assert(engine_pop(&e, &ev));
	cr_assert_eq(ev.id, 1);
	engine_push(&e, 305, 0, 4, 0);
	engine_push(&e, 310, 0, 5, 0);
	cr_assert_eq(engine_next_time(&e), 305);
	uint32_t want[] = {4, 2, 5, 3};
	sim_time at[] = {305, 310, 310, 320};
	for (int i = 0; i < 4; i++) {
		cr_assert(engine_pop(&e, &ev));
		cr_assert_eq(ev.id, want[i], "pop %d", i);
		cr_assert_eq(ev.t, at[i]);
	}
	cr_assert_not(engine_pop(&e, &ev));
	engine_free(&e);
}

/*
 * Against a reference under every kind of load the queue meets: a binary
 * heap ordered by (time, scheduling order), which is what "time order, ties
 * in scheduling order" means.  Each round draws a mix of increments: zero
 * (the same instant), under 256 us (one level-1 bucket, sorted by nibbles),
 * under 65,536 us, whole seconds, up to 2^40 us, and bursts of up to 100
 * events at one time (more than a 31-event block holds).  Before every pop
 * the next time is checked, so peeks between pushes are exercised too, and
 * engine_peek's event, when it finds one, is of that time.
 */
struct ref_event {
	int64_t t;
	uint32_t order;
};

static bool ref_before(struct ref_event a, struct ref_event b)
{
	return a.t != b.t ? a.t < b.t : a.order < b.order;
}

static void ref_push(struct ref_event *h, size_t *n, struct ref_event x)
{
	size_t i = (*n)++;
	for (; i && ref_before(x, h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

static struct ref_event ref_pop(struct ref_event *h, size_t *n)
{
	struct ref_event top = h[0], x = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && ref_before(h[c + 1], h[c]))
			c++;
		if (!ref_before(h[c], x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
	return top;
}

static int64_t draw_increment(gsl_rng *rng, unsigned kinds)
{
	switch (gsl_rng_uniform_int(rng, kinds)) {
	case 0: return 0;
	case 1: return (int64_t)gsl_rng_uniform_int(rng, 256);
	case 2: return (int64_t)gsl_rng_uniform_int(rng, 65536);
	case 3: return (int64_t)gsl_rng_uniform_int(rng, 4) * 1000000;
	default: return (int64_t)(gsl_rng_uniform(rng) * 0x1p40);
	}
}

Test(engine, matches_a_reference_heap_under_mixed_loads)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	static struct ref_event ref[1 << 20];
	long pops = 0, peeked = 0;
	for (int round = 0; round < 200; round++) {
		struct engine e;
		engine_init(&e);
		size_t n = 0;
		uint32_t order = 0;
		int64_t now = 0;
		unsigned kinds = 1 + (unsigned)gsl_rng_uniform_int(rng, 5);
		double p_push = 0.3 + 0.4 * gsl_rng_uniform(rng);
		int ops = 1 + (int)gsl_rng_uniform_int(rng, 5000);
		for (int op = 0; op < ops; op++) {
			if (gsl_rng_uniform(rng) < p_push) {
				int64_t t = now + draw_increment(rng, kinds);
				int burst = 1; /* sometimes more than a block holds */
				if (gsl_rng_uniform(rng) < 0.05)
					burst += (int)gsl_rng_uniform_int(rng, 100);
				for (int k = 0; k < burst; k++) {
					engine_push(&e, t, 0, order, 0);
					ref_push(ref, &n, (struct ref_event){t, order++});
				}
				continue;
			}
			struct event ev;
			if (!n) {
				cr_assert_eq(engine_next_time(&e), SIM_NEVER);
				cr_assert_not(engine_pop(&e, &ev));
				continue;
			}
			struct ref_event x = ref_pop(ref, &n);
			cr_assert_eq(engine_next_time(&e), x.t, "round %d op %d: next time", round,
				     op);
			const struct event *peek = engine_peek(&e);
			if (peek) { /* an event of the next time (ties: any of them) */
				cr_assert_eq(peek->t, x.t, "round %d op %d: peek", round, op);
				peeked++;
			}
			pops++;
			cr_assert(engine_pop(&e, &ev));
			cr_assert_eq(ev.t, x.t, "round %d op %d: time", round, op);
			cr_assert_eq(ev.id, x.order, "round %d op %d: order at time %lld", round,
				     op, (long long)x.t);
			cr_assert_eq(e.now, x.t);
			now = x.t;
			cr_assert_eq(engine_pending(&e), n);
		}
		while (n) {
			struct ref_event x = ref_pop(ref, &n);
			struct event ev;
			cr_assert(engine_pop(&e, &ev));
			cr_assert_eq(ev.id, x.order, "round %d: drained in order", round);
		}
		cr_assert_eq(engine_next_time(&e), SIM_NEVER);
		engine_free(&e);
	}
	cr_assert_gt(peeked, pops * 9 / 10, "a peek finds the next event %ld times of %ld", peeked,
		     pops);
	gsl_rng_free(rng);
}

/* Blocks a bucket or the run read are returned as soon as they are read:
 * after the queue is drained, every block is free again. */
static size_t free_blocks(const struct engine *e)
{
	size_t n = 0;
	for (const struct engine_block *b = e->free; b; b = b->next)
		n++;
	return n;
}

Test(engine, returns_every_block_once_drained)
{
	struct engine e;
	engine_init(&e);
	for (uint32_t i = 0; i < 10000; i++) /* one time, then spread over levels */
		engine_push(&e, i < 5000 ? 7 : (sim_time)i * 977, 0, i, 0);
	struct event ev;
	while (engine_pop(&e, &ev))
		;
	cr_assert_gt(e.n_chunks, 0);
	cr_assert_eq(free_blocks(&e), e.n_chunks * ENGINE_CHUNK_BLOCKS,
		     "every block back in the pool");
	engine_free(&e);
}

/* The hold model: once warm, the pool and the run's arrays no longer grow,
 * and the blocks in use follow the events pending: at most a full block per
 * 31 events, plus one partly filled block per non-empty bucket. */
Test(engine, stops_allocating_once_warm)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct engine e;
	engine_init(&e);
	const uint32_t pending = 20000;
	for (uint32_t i = 0; i < pending; i++)
		engine_push(&e, 1 + (sim_time)gsl_ran_exponential(rng, 1e6), 0, i, 0);
	struct event ev;
	size_t chunks = 0, cap = 0;
	for (int i = 0; i < 2000000; i++) {
		if (i == 1000000) {
			chunks = e.n_chunks;
			cap = e.cap;
		}
		cr_assert(engine_pop(&e, &ev));
		engine_push(&e, ev.t + 1 + (sim_time)gsl_ran_exponential(rng, 1e6), 0, ev.id, 0);
	}
	cr_assert_eq(e.n_chunks, chunks, "no block allocated once warm");
	cr_assert_eq(e.cap, cap, "the run's arrays no longer grow");
	size_t in_use = e.n_chunks * ENGINE_CHUNK_BLOCKS - free_blocks(&e);
	cr_assert_leq(in_use, pending / 31 + ENGINE_LEVELS * ENGINE_DIGITS);
	cr_assert_leq(e.n_chunks * ENGINE_CHUNK_BLOCKS,
		      2 * (pending / 31 + ENGINE_LEVELS * ENGINE_DIGITS));
	engine_free(&e);
	gsl_rng_free(rng);
}

/* What the dispatch tests' clients saw: the kinds each handled, in order. */
struct seen {
	int kinds[8];
	int n;
	uint16_t first; /* the type engine_register gave it */
	int warmed;     /* calls of its `ahead` hook */
	int far;        /* calls of its `far` hook */
	sim_time far_t; /* the last one's event's time */
};

static void record(void *ctx, const struct event *ev)
{
	struct seen *c = ctx;
	c->kinds[c->n++] = ev->type - c->first;
}

static void warm(void *ctx, const struct event *ev)
{
	(void)ev;
	((struct seen *)ctx)->warmed++;
}

/* The loop of sim_advance: each event popped, the next one warmed, then
 * the event handed to its client. */
static void pop_all(struct engine *e)
{
	struct event ev;
	while (engine_pop(e, &ev)) {
		engine_warm_next(e);
		engine_dispatch(e, &ev);
	}
}

Test(engine, gives_clients_consecutive_types_and_dispatches_by_them)
{
	struct engine e;
	engine_init(&e);
	struct seen a = {0}, b = {0};
	a.first = engine_register(&e, 3, record, NULL, &a);
	b.first = engine_register(&e, 2, record, warm, &b);
	cr_assert_eq(a.first, 0); /* in the order of registration: a gets 0-2, b 3-4 */
	cr_assert_eq(b.first, 3);
	cr_assert_eq(e.n_types, 5);
	engine_push(&e, 10, (uint16_t)(b.first + 1), 0, 0); /* b's kind 1 */
	engine_push(&e, 5, (uint16_t)(a.first + 2), 0, 0);  /* a's kind 2 */
	engine_push(&e, 10, (uint16_t)(a.first + 0), 0, 0); /* a's kind 0, after b's at 10 */
	pop_all(&e);
	cr_assert_eq(a.n, 2);
	cr_assert_eq(a.kinds[0], 2);
	cr_assert_eq(a.kinds[1], 0);
	cr_assert_eq(b.n, 1);
	cr_assert_eq(b.kinds[0], 1);
	/* After the pop at 5 the next is b's event at 10: b warms it, once; a
	 * gave no hook, so the pop at 10 that leaves a's next warms nothing. */
	cr_assert_eq(b.warmed, 1);
	engine_free(&e);
}

static void far(void *ctx, const struct event *ev)
{
	struct seen *c = ctx;
	c->far++;
	c->far_t = ev->t;
}

/* A client with a far hook is asked about its event after the next, while
 * both are in the run being read: 257 to 260 differ from the clock's 0 in
 * their second byte, so one bucket holds them and becomes the run. */
Test(engine, asks_the_client_of_the_event_after_the_next_ahead_of_time)
{
	struct engine e;
	engine_init(&e);
	struct seen a = {0}, b = {0};
	a.first = engine_register(&e, 1, record, NULL, &a);
	b.first = engine_register(&e, 1, record, NULL, &b);
	engine_register_far(&e, b.first, far);
	for (sim_time t = 257; t <= 260; t++)
		engine_push(&e, t, t % 2 ? a.first : b.first, 0, 0);
	pop_all(&e);
	/* after 257 the event after the next is a's 259 (no hook); after 258,
	 * b's 260; after 259 nothing follows the next */
	cr_assert_eq(b.far, 1);
	cr_assert_eq(b.far_t, 260);
	cr_assert_eq(a.n + b.n, 4);
	engine_free(&e);
}
