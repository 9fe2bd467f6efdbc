/*
 * test_queues.c - scheduling with Kueue-like queues (quota, cohorts,
 * borrowing, reclaim), deadlines under EDF, and pool windows under the fit
 * and preempt policies, with exact start and end times.
 */
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "run.h"
#include "named_metric.h"

TestSuite(queues, .fini = cleanup);

#define RUN RUN_WITH

#define H SIM_HOUR
#define Q "tests/fixtures/queues.yaml"
#define W "tests/fixtures/windows.yaml"

static const char *reason(size_t job)
{
	return r.jobs[job].reason >= 0 ? r.reason_texts[r.jobs[job].reason] : "";
}

Test(queues, a_queue_borrows_what_its_cohort_does_not_use)
{
	run(Q, NULL, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(r.jobs[i].start, 0, "team a borrows team b's idle 2 GPUs");
}

Test(queues, the_borrowing_limit_caps_what_a_queue_borrows)
{
	RUN(Q, "queues.team-a.borrowing_limit={nvidia.com/gpu: 1}");
	cr_assert_eq(r.jobs[2].start, 0);
	cr_assert_eq(r.jobs[3].start, 10 * H, "the fourth waits for a GPU of its own quota");
	cr_assert_str_eq(
		reason(3),
		"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default, "
		"1 more needed");
	double pending = 0;
	for (size_t i = 0; i < r.n_pending_reasons; i++)
		if (!strcmp(r.pending_reasons[i].scope, "all") &&
		    strstr(r.pending_reasons[i].reason, "insufficient unused quota"))
			pending += r.pending_reasons[i].pending_seconds;
	cr_assert_float_eq(pending, 10 * 3600, 1e-6, "ten pod-hours waiting on quota");
}

Test(queues, without_a_cohort_a_queue_keeps_to_its_quota)
{
	RUN(Q, "queues=[{name: team-a, quota: {nvidia.com/gpu: 2}}]");
	cr_assert_eq(r.jobs[1].start, 0);
	cr_assert_eq(r.jobs[2].start, 10 * H);
	cr_assert_eq(r.jobs[3].start, 10 * H);
}

/* Kueue >= 0.15's words (pkg/scheduler/flavorassigner/flavorassigner.go,
 * fitsResourceQuota: "insufficient quota for %s in flavor %s, previously
 * considered podsets requests (%s) + current podset request (%s) > maximum
 * capacity (%s)"); a job is one pod set, so nothing was considered before. */
Test(queues, a_request_above_the_maximum_capacity_never_fits)
{
	RUN(Q, "queues=[{name: team-a, quota: {nvidia.com/gpu: 2}}]", "workloads.a.gpus=3");
	cr_assert_eq(r.jobs[0].start, SIM_NEVER);
	cr_assert_str_eq(reason(0),
			 "couldn't assign flavors to pod set main: insufficient quota for "
			 "nvidia.com/gpu in flavor default, previously considered podsets "
			 "requests (0) + current podset request (3) > maximum capacity (2)");
	cr_assert_str_eq(r.status, "stalled");
}

#define TEAM_B                                                                              \
	"workloads=[{name: a, queue: team-a, count: 4, arrival: {at: \"00:00\"}, gpus: 1, " \
	"duration: 10h}, {name: b, queue: team-b, count: 2, arrival: {at: \"01:00\"}, "     \
	"gpus: 1, duration: 10h}]"

/* Team b comes for its quota at 01:00 while team a borrows it. */
Test(queues, reclaim_preempts_the_borrowers)
{
	RUN(Q, TEAM_B, "queues.team-b.preemption={reclaim_within_cohort: Any}");
	cr_assert_eq(r.jobs[4].start, 1 * H, "team b gets its GPUs back at once");
	cr_assert_eq(r.jobs[5].start, 1 * H);
	/* The two most recently started borrowers (ties: the last) go back to the
	 * queue and, without checkpoints, start over when team a's others end. */
	cr_assert_eq(r.jobs[2].end, 20 * H);
	cr_assert_eq(r.jobs[3].end, 20 * H);
	cr_assert_eq(r.jobs[0].end, 10 * H);
	cr_assert_float_eq(named_metric(&r, "a", "jobs_preempted"), 2, 1e-12);
}

Test(queues, without_reclaim_the_lender_waits)
{
	RUN(Q, TEAM_B);
	cr_assert_eq(r.jobs[4].start, 10 * H);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 0, 1e-12);
	cleanup();
	/* LowerPriority: equal priorities are not preempted. */
	RUN(Q, TEAM_B, "queues.team-b.preemption={reclaim_within_cohort: LowerPriority}");
	cr_assert_eq(r.jobs[4].start, 10 * H);
}

Test(queues, a_checkpoint_keeps_the_work_of_a_reclaimed_job)
{
	RUN(Q, TEAM_B, "queues.team-b.preemption={reclaim_within_cohort: Any}",
	    "workloads.a.checkpoint=25m");
	/* One hour done, kept to 50 minutes: 9 h 10 m left from 10:00. */
	cr_assert_eq(r.jobs[3].end, 10 * H + 9 * H + 10 * SIM_MINUTE);
}

/* One GPU: A (2 h, due in 10 h) and B (1 h, due in 1 h) at 00:00.  FIFO runs A
 * first and B misses; EDF runs B first and both meet their deadlines. */
Test(queues, edf_meets_deadlines_that_fifo_misses)
{
	static const char *wl = "workloads=[{name: a, arrival: {at: \"00:00\"}, duration: 2h, "
				"deadline: {within: 10h}}, {name: b, arrival: {at: \"00:00\"}, "
				"duration: 1h, deadline: {within: 1h}}]";
	RUN(Q, "queues=[]", "pools.p.gpus_per_node=1", wl);
	cr_assert_float_eq(named_metric(&r, "all", "deadline_met_pct"), 50, 1e-9);
	cleanup();
	RUN(Q, "queues=[]", "pools.p.gpus_per_node=1", wl, "scheduler={order: edf}");
	cr_assert_float_eq(named_metric(&r, "all", "deadline_met_pct"), 100, 1e-9);
	cr_assert_eq(r.jobs[1].start, 0);
	cr_assert_eq(r.jobs[0].end, 3 * H);
}

/* fit: a 3 h job at 16:00 would run past 17:00, so it starts at 12:00 next day. */
Test(queues, fit_waits_for_a_window_the_job_fits_in)
{
	run(W, NULL, 0);
	cr_assert_eq(r.jobs[0].start, 36 * H);
	cr_assert_eq(r.jobs[0].end, 39 * H);
}

/* preempt: it starts at 16:00, is stopped at 17:00 and starts over at 12:00. */
Test(queues, preempt_stops_at_the_close_and_starts_over)
{
	RUN(W, "scheduler.window_policy=preempt");
	cr_assert_eq(r.jobs[0].start, 16 * H, "queue time runs to the first start");
	cr_assert_eq(r.jobs[0].end, 39 * H);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 1, 1e-12);
	cr_assert_float_eq(r.jobs[0].cost, 0, 1e-12, "no prices, no cost");
}

/* With checkpoints every 25 minutes, the hour before the close keeps 50
 * minutes: 2 h 10 m remain from 12:00. */
Test(queues, preempt_resumes_from_the_last_checkpoint)
{
	RUN(W, "scheduler.window_policy=preempt", "workloads.job.checkpoint=25m");
	cr_assert_eq(r.jobs[0].end, 36 * H + 2 * H + 10 * SIM_MINUTE);
}

/* A 6 h job never fits a 5 h window under fit; under preempt with 30 m
 * checkpoints it runs 16-17 on Tuesday and 12-17 on Wednesday. */
Test(queues, checkpoints_carry_a_job_longer_than_any_window)
{
	RUN(W, "workloads.job.duration=6h");
	cr_assert_eq(r.jobs[0].start, SIM_NEVER);
	cleanup();
	RUN(W, "workloads.job.duration=6h", "scheduler.window_policy=preempt",
	    "workloads.job.checkpoint=30m");
	cr_assert_eq(r.jobs[0].end, 41 * H);
}

Test(queues, windows_on_chosen_days_and_overnight)
{
	/* Thursday and Friday nights only: the Tuesday 16:00 job waits until
	 * Thursday 22:00 and runs 3 h past midnight. */
	RUN(W, "pools.p.windows=[{from: \"22:00\", to: \"06:00\", days: [thu, fri]}]");
	cr_assert_eq(r.jobs[0].start, (2 * 24 + 22) * H);
	cr_assert_eq(r.jobs[0].end, (3 * 24 + 1) * H);
}
