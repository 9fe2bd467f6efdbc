/* test_engine.c - the event heap: order, ties, growth, the clock. */
#include "gpuplan/engine.h"

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

Test(engine, pops_events_in_time_order)
{
	struct engine e;
	engine_init(&e, 4);
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
	engine_init(&e, 2);
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
	engine_init(&e, 1);
	/* Hold model: pop one, push one later; every pop must be >= the previous. */
	for (uint32_t i = 0; i < 1000; i++)
		engine_push(&e, (sim_time)gsl_rng_uniform_int(rng, 1000), 0, i, 0);
	struct event ev, prev = {0};
	for (int i = 0; i < 100000; i++) {
		cr_assert(engine_pop(&e, &ev));
		cr_assert(ev.t > prev.t || (ev.t == prev.t && ev.seq > prev.seq) || i == 0);
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
	engine_init(&e, 0);
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
