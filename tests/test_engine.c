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
