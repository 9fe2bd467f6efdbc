/* test_sched.c - pending classes and the order of their heaps. */
#include "gpuplan/sched.h"

#include <criterion/criterion.h>

static uint32_t pop_head(struct sched *s, size_t c)
{
	uint32_t job = sched_head(s, c)->job;
	sched_pop(s, c);
	return job;
}

Test(sched, groups_identical_requests_into_one_class)
{
	struct sched s;
	sched_init(&s, ORDER_FIFO);
	size_t a = sched_add(&s, 0, 2, 0, sched_entry(ORDER_FIFO, 0, 0, 10, 0, SIM_NEVER, 5));
	size_t b = sched_add(&s, 0, 2, 0, sched_entry(ORDER_FIFO, 1, 1, 11, 0, SIM_NEVER, 5));
	size_t c = sched_add(&s, 0, 4, 0, sched_entry(ORDER_FIFO, 2, 2, 12, 0, SIM_NEVER, 5));
	size_t d = sched_add(&s, 1, 2, 0, sched_entry(ORDER_FIFO, 3, 3, 13, 0, SIM_NEVER, 5));
	cr_assert_eq(a, b);
	cr_assert_neq(a, c);
	cr_assert_neq(a, d);
	cr_assert_eq(s.n_classes, 3);
	cr_assert_eq(s.pending, 4);
	sched_free(&s);
}

Test(sched, fifo_orders_by_submit_then_arrival)
{
	struct sched s;
	sched_init(&s, ORDER_FIFO);
	sim_time submit[] = {30, 10, 20, 10};
	for (uint32_t j = 0; j < 4; j++)
		sched_add(&s, 0, 1, 0, sched_entry(ORDER_FIFO, j, j, submit[j], 0, SIM_NEVER, 0));
	uint32_t expect[] = {1, 3, 2, 0};
	for (int i = 0; i < 4; i++)
		cr_assert_eq(pop_head(&s, 0), expect[i]);
	cr_assert_eq(s.pending, 0);
	sched_free(&s);
}

Test(sched, priority_edf_and_sjf_orders)
{
	struct {
		enum sched_order order;
		uint32_t first;
	} cases[] = {{ORDER_PRIORITY, 2}, {ORDER_EDF, 1}, {ORDER_SJF, 0}};
	/* job: priority, deadline, duration */
	int32_t prio[] = {0, 1, 5};
	sim_time deadline[] = {SIM_NEVER, 100, 200};
	sim_time duration[] = {1, 50, 20};
	for (size_t k = 0; k < 3; k++) {
		struct sched s;
		sched_init(&s, cases[k].order);
		for (uint32_t j = 0; j < 3; j++)
			sched_add(&s, 0, 1, 0,
				  sched_entry(cases[k].order, j, j, 0, prio[j], deadline[j],
					      duration[j]));
		cr_assert_eq(sched_head(&s, 0)->job, cases[k].first, "order %d",
			     (int)cases[k].order);
		sched_free(&s);
	}
}

Test(sched, keeps_heap_order_under_many_classes)
{
	struct sched s;
	sched_init(&s, ORDER_SJF);
	/* Enough classes to force the index to grow several times. */
	for (uint32_t j = 0; j < 5000; j++)
		sched_add(&s, (int32_t)(j % 100), (int32_t)(j % 7 + 1), 0,
			  sched_entry(ORDER_SJF, j, j, 0, 0, SIM_NEVER,
				      (sim_time)((j * 7919) % 1000)));
	cr_assert_eq(s.n_classes, 700);
	for (size_t c = 0; c < s.n_classes; c++) {
		sim_time last = -1;
		while (s.classes[c].n) {
			cr_assert_geq(sched_head(&s, c)->k1, last);
			last = sched_head(&s, c)->k1;
			sched_pop(&s, c);
		}
	}
	cr_assert_eq(s.pending, 0);
	sched_free(&s);
}

/* A retired job's index is reused by a later arrival (sim.h), so ties go by
 * arrival order (seq), not by index: job 7 arrived first here. */
Test(sched, ties_break_by_arrival_order_not_by_job_index)
{
	struct sched s;
	sched_init(&s, ORDER_FIFO);
	size_t a = sched_add(&s, 0, 1, 0, sched_entry(ORDER_FIFO, 7, 0, 10, 0, SIM_NEVER, 5));
	sched_add(&s, 0, 1, 0, sched_entry(ORDER_FIFO, 2, 1, 10, 0, SIM_NEVER, 5));
	cr_assert_eq(sched_head(&s, a)->job, 7);
	sched_pop(&s, a);
	cr_assert_eq(sched_head(&s, a)->job, 2);
	sched_free(&s);
}

/* Entries in order are popped from the array's front; one out of order
 * turns the class back into a heap, and interleaved adds and pops (the
 * array's front moved down, the array grown) still give, at every pop, the
 * least entry waiting. */
Test(sched, pops_the_least_whether_entries_come_in_order_or_not)
{
	struct sched s;
	sched_init(&s, ORDER_SJF);
	sim_time waiting[600]; /* by job: its duration; -1 popped */
	uint32_t next = 0;
	for (int round = 0; round < 300; round++) {
		int adds = round < 200 ? 3 : 0;
		for (int k = 0; k < adds; k++, next++) {
			/* in order, except in every 7th round (shorter jobs) */
			waiting[next] = round % 7 == 6 ? (sim_time)(next % 5) : (sim_time)next * 10;
			sched_add(
				&s, 0, 1, 0,
				sched_entry(ORDER_SJF, next, next, 0, 0, SIM_NEVER, waiting[next]));
		}
		for (int k = 0; k < 2 && s.pending; k++) {
			uint32_t least = UINT32_MAX;
			for (uint32_t j = 0; j < next; j++)
				if (waiting[j] >= 0 &&
				    (least == UINT32_MAX || waiting[j] < waiting[least]))
					least = j;
			cr_assert_eq(pop_head(&s, 0), least);
			waiting[least] = -1;
		}
	}
	cr_assert_eq(s.pending, 0);
	sched_free(&s);
}
