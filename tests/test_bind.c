/*
 * test_bind.c - what binds each waiting and slowed pod-second (bind.h), by
 * hand-computed cases, one per kind of constraint the run attributes: the
 * totals in results.constraints after a whole run.
 */
#include "gpuplan/bind.h"
#include "gpuplan/relax.h"

#include "run.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(bind, .fini = cleanup);

/* The pod-seconds of kind k for workload w (any parameter); 0 when none. */
static double seconds_of(enum constraint_kind k, const char *w)
{
	double s = 0;
	for (size_t i = 0; i < r.n_constraints; i++) {
		const struct constraint *c = &r.constraints[i];
		if (c->kind == k && c->workload >= 0 && !strcmp(sc->workloads[c->workload].name, w))
			s += c->pod_seconds;
	}
	return s;
}

/* The one row of kind k, or NULL. */
static const struct constraint *row_of(enum constraint_kind k)
{
	for (size_t i = 0; i < r.n_constraints; i++)
		if (r.constraints[i].kind == k)
			return &r.constraints[i];
	return NULL;
}

static double total(void)
{
	double s = 0;
	for (size_t i = 0; i < r.n_constraints; i++)
		s += r.constraints[i].pod_seconds;
	return s;
}

Test(bind, a_lender_that_keeps_its_quota_binds_the_borrowers_wait)
{
	/* 8 one-GPU jobs of 2 h, quota 4: four wait 2 h each, 8 pod-hours, and
	 * team-b's lending limit of 0 is what keeps them out (12 GPUs idle). */
	run("tests/fixtures/diagnosis/lending.yaml", NULL, 0);
	const struct constraint *c = row_of(CONSTRAINT_LENDING_LIMIT);
	cr_assert_not_null(c);
	cr_expect_float_eq(c->pod_seconds, 4 * 7200.0, 1e-6);
	cr_expect_str_eq(sc->queues[c->queue].name, "team-b", "the lender, not the waiting queue");
	cr_expect_float_eq(total(), 4 * 7200.0, 1e-6, "nothing else binds");
}

Test(bind, a_queue_without_a_cohort_is_bound_by_its_own_quota)
{
	/* 12 jobs of 2 h on a quota of 4: 4 wait 2 h, 4 wait 4 h: 24 pod-hours. */
	run("tests/fixtures/diagnosis/quota.yaml", NULL, 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_QUOTA, "a"), 24 * 3600.0, 1e-6);
	cr_expect_float_eq(total(), 24 * 3600.0, 1e-6);
}

Test(bind, lent_quota_never_reclaimed_binds_the_lender)
{
	run("tests/fixtures/bind/reclaim.yaml", NULL, 0);
	const struct constraint *c = row_of(CONSTRAINT_RECLAIM);
	cr_assert_not_null(c);
	cr_expect_float_eq(c->pod_seconds, 9 * 3600.0, 1e-6, "01:00 to 10:00");
	cr_expect_str_eq(sc->queues[c->queue].name, "team-a");
	char *key = relax_key(sc, c);
	cr_expect_str_eq(key, "queues.team-a.preemption.reclaim_within_cohort");
	free(key);
}

Test(bind, a_taint_binds_before_insufficient_gpus)
{
	/* 4 two-GPU jobs of 1 h on the open node (4 GPUs): two wait 1 h; the
	 * other node's taint keeps them off it ("1 Insufficient, 1 untolerated
	 * taint"): the rule binds all of it, not half. */
	run("tests/fixtures/diagnosis/taint.yaml", NULL, 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_TAINT, "batch"), 2 * 3600.0, 1e-6);
	cr_expect_float_eq(seconds_of(CONSTRAINT_CAPACITY, "batch"), 0, 1e-9);
}

Test(bind, a_closed_window_binds_and_a_full_node_is_capacity)
{
	/* Four 2-hour, 4-GPU renders at 20:00 on one node open 20:00-02:00:
	 * the 2nd and 3rd wait 2 h and 4 h on the busy node, the 4th 6 h on it
	 * and then 18 h for the window to open again. */
	run("tests/fixtures/diagnosis/window.yaml", NULL, 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_WINDOW, "frames"), 18 * 3600.0, 1e-6);
	cr_expect_float_eq(seconds_of(CONSTRAINT_CAPACITY, "frames"), 12 * 3600.0, 1e-6);
	cr_expect_str_eq(sc->pools[row_of(CONSTRAINT_WINDOW)->pool].name, "render");
}

/* The same renders, 4 hours each, kept on an A100 pool without windows
 * (gpu_spec): they wait 4 + 8 + 12 h on its busy node.  While the render
 * node is open (20:00-02:00) it answers with their rule; closed, it answers
 * "node(s) were unschedulable" before their rules (NodeUnschedulable
 * filters first), but it is no node they could use: those 12 h are
 * capacity on pool a100, not the render pool's window (as they were). */
Test(bind, a_window_on_a_pool_the_work_cannot_use_binds_nothing)
{
	RUN_WITH("tests/fixtures/diagnosis/window.yaml",
		 "pools.+={name: a100, nodes: 1, gpu: A100-80GB, gpus_per_node: 4}",
		 "workloads.frames.gpu_spec=[A100-80GB]", "workloads.frames.duration=4h");
	cr_expect_eq(seconds_of(CONSTRAINT_WINDOW, "frames"), 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_CAPACITY, "frames"), 12 * 3600.0, 1e-6);
	cr_expect_float_eq(seconds_of(CONSTRAINT_GPU_SPEC, "frames"), 12 * 3600.0, 1e-6);
	cr_expect_str_eq(sc->pools[row_of(CONSTRAINT_CAPACITY)->pool].name, "a100");
}

Test(bind, slowdown_under_time_slicing_is_contention)
{
	run("tests/fixtures/bind/contention.yaml", NULL, 0);
	/* Each job: 2.1 h for 1 h of work; 1.1 h lost, twice. */
	cr_expect_float_eq(seconds_of(CONSTRAINT_CONTENTION, "j"), 2 * 1.1 * 3600, 1e-6);
	cr_expect_float_eq(total(), 2 * 1.1 * 3600, 1e-6, "no wait: one GPU holds both");
}

Test(bind, start_up_counts_as_wait)
{
	run("tests/fixtures/bind/startup.yaml", NULL, 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_STARTUP, "j"), 2 * 600.0, 1e-6);
	cr_expect_float_eq(total(), 2 * 600.0, 1e-6);
}

Test(bind, a_memory_request_that_strands_gpus_binds)
{
	run("tests/fixtures/bind/memory.yaml", NULL, 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_MEMORY_REQUEST, "j"), 2 * 3600.0, 1e-6);
	cr_expect_float_eq(total(), 2 * 3600.0, 1e-6);
}

Test(bind, waiting_for_a_provisioned_node_is_provisioning_not_capacity)
{
	run("tests/fixtures/bind/provisioning.yaml", NULL, 0);
	cr_expect_float_eq(seconds_of(CONSTRAINT_PROVISIONING, "j"), 600.0, 1e-6);
	cr_expect_float_eq(seconds_of(CONSTRAINT_CAPACITY, "j"), 0, 1e-9);
	char *key = relax_key(sc, row_of(CONSTRAINT_PROVISIONING));
	cr_expect_str_eq(key, "pools.l4.autoscale.min");
	free(key);
}

Test(bind, the_parameter_that_bound_longest_is_kept)
{
	struct bind b;
	bind_init(&b, 2);
	bind_add(&b, CONSTRAINT_LENDING_LIMIT, 1, 3, 10);
	bind_add(&b, CONSTRAINT_LENDING_LIMIT, 1, 4, 4);
	bind_add(&b, CONSTRAINT_LENDING_LIMIT, 1, 4, 4);
	bind_add(&b, CONSTRAINT_LENDING_LIMIT, -1, 4, 100); /* no workload: ignored */
	bind_add(&b, CONSTRAINT_QUOTA, 0, 0, 0);            /* nothing to add */
	size_t i = (size_t)CONSTRAINT_LENDING_LIMIT * 2 + 1;
	cr_expect_float_eq(b.seconds[i], 18, 1e-9);
	cr_expect_eq(b.param[i], 3, "10 s for queue 3 against 8 for queue 4");
	cr_expect_float_eq(b.seconds[(size_t)CONSTRAINT_QUOTA * 2], 0, 1e-9);
	bind_free(&b);
}
