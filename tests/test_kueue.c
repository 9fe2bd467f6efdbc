/*
 * test_kueue.c - Kueue's admission as gpuplan models it: quota reserved at
 * admission while pods wait for nodes, StrictFIFO blocking on quota only,
 * Kueue's minimal preemption set, withinClusterQueue, and a reason for
 * every second a job waits.  Each rule cites where Kueue has it
 * (github.com/kubernetes-sigs/kueue); figures are worked by hand in the
 * comments, and each case differs from what the old model (quota charged at
 * node placement, StrictFIFO blocking on node fit, victims one by one)
 * gave.
 */
#include "gpuplan/scenario.h"
#include "gpuplan/quota.h"
#include "gpuplan/report.h"
#include "gpuplan/run.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "run.h"
#include "named_metric.h"

TestSuite(kueue, .fini = cleanup);

#define RUN RUN_WITH
#define H   SIM_HOUR
#define M   SIM_MINUTE
#define K   "tests/fixtures/kueue.yaml"

static const char *reason(size_t job)
{
	return r.jobs[job].reason >= 0 ? r.reason_texts[r.jobs[job].reason] : "";
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Pod-seconds of scope's pending_reasons rows whose message starts with
 * prefix ("" for all). */
static double pending(const char *scope, const char *prefix)
{
	double sum = 0;
	for (size_t i = 0; i < r.n_pending_reasons; i++)
		if (!strcmp(r.pending_reasons[i].scope, scope) &&
		    starts_with(r.pending_reasons[i].reason, prefix))
			sum += r.pending_reasons[i].pending_seconds;
	return sum;
}

/* The invariants of every run: a job that waited has a reason, and each
 * workload's pending_reasons add up to its jobs' waits (pods x seconds).
 * Waits are start - submit plus extra[w] seconds (the second wait of
 * preempted jobs, worked by hand); a job that never started waits to the end. */
static void assert_every_second_has_a_reason(const double *extra)
{
	double *waits = calloc(sc->n_workloads, sizeof *waits);
	for (size_t i = 0; i < r.n_jobs; i++) {
		const struct job_record *j = &r.jobs[i];
		sim_time until = j->start != SIM_NEVER ? j->start : r.sim_end;
		if (until > j->submit)
			cr_assert_geq(j->reason, 0, "job %zu waited %g s without a reason", i,
				      sim_seconds(until - j->submit));
		int32_t pods =
			sc->workloads[j->workload].gang ? sc->workloads[j->workload].pods : 1;
		waits[j->workload] += sim_seconds(until - j->submit) * pods;
	}
	double total = 0;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		double want = waits[w] + (extra ? extra[w] : 0);
		total += want;
		cr_assert_float_eq(pending(sc->workloads[w].name, ""), want, 1e-6,
				   "workload %s: reasons %g s, waits %g s", sc->workloads[w].name,
				   pending(sc->workloads[w].name, ""), want);
	}
	cr_assert_float_eq(pending("all", ""), total, 1e-6);
	free(waits);
}

/*
 * Admission reserves quota; kube-scheduler places the pods afterwards
 * (Kueue: pkg/scheduler/scheduler.go, Scheduler.schedule admits by
 * assuming the workload's quota in the cache; the job is unsuspended and
 * its pods are then scheduled by kube-scheduler).  hog (no quota) takes 3
 * of the 4 GPUs 00:00-02:00.  x (queue q, 2 GPUs of its 2) is admitted at
 * 00:10 and waits for a node until 02:00, holding the quota; y (1 GPU) at
 * 00:20 finds the quota used although a GPU is free: it is admitted when x
 * ends at 03:00.  The old model charged quota at placement: y ran at 00:20.
 */
Test(kueue, an_admitted_job_holds_its_quota_while_its_pods_wait_for_nodes)
{
	RUN(K, "workloads=[{name: hog, arrival: {at: \"00:00\"}, gpus: 3, duration: 2h}, "
	       "{name: x, queue: q, arrival: {at: \"00:10\"}, gpus: 2, duration: 1h}, "
	       "{name: y, queue: q, arrival: {at: \"00:20\"}, gpus: 1, duration: 1h}]");
	cr_assert_eq(r.jobs[1].start, 2 * H);
	cr_assert_eq(r.jobs[2].start, 3 * H, "y waits for x's quota, not for a GPU");
	cr_assert(starts_with(reason(1), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."),
		  "admitted, x waits with kube-scheduler's FitError: %s", reason(1));
	cr_assert_str_eq(reason(2), "couldn't assign flavors to pod set main: insufficient unused "
				    "quota for nvidia.com/gpu in flavor default, 1 more needed");
	/* x: 110 min on nodes; y: 160 min on quota. */
	cr_assert_float_eq(pending("x", "0/1 nodes"), 110 * 60, 1e-6);
	cr_assert_float_eq(pending("y", "couldn't assign flavors"), 160 * 60, 1e-6);
	assert_every_second_has_a_reason(NULL);
}

/*
 * StrictFIFO requeues a head that does not get quota at the head of its
 * queue, so the workloads behind it wait; BestEffortFIFO moves it aside
 * (Kueue: pkg/queue/cluster_queue.go, requeueIfNotPresent: immediate for
 * StrictFIFO, inadmissibleWorkloads otherwise).  Node fit is not Kueue's:
 * an admitted head waiting for nodes blocks nothing.  strategy.yaml: first
 * (2 GPUs) 00:00-01:00 on one 4-GPU node; big (4 GPUs) at 00:01; small
 * (1 GPU) at 00:02.
 */
#define S    "tests/fixtures/strategy.yaml"
#define LATE "workloads.big.arrival.at=\"00:01\"", "workloads.small.arrival.at=\"00:02\""

Test(kueue, strict_fifo_never_blocks_on_node_fit)
{
	/* No quota: big is admitted at 00:01 and waits for nodes; small is
	 * admitted behind it and runs on a free GPU at 00:02 (the old model
	 * held it to 02:00).  big gets the node when small ends at 01:02. */
	RUN(S, LATE, "queues.default.strategy=StrictFIFO");
	cr_assert_eq(r.jobs[2].start, 2 * M);
	cr_assert_eq(r.jobs[1].start, H + 2 * M);
	assert_every_second_has_a_reason(NULL);
}

Test(kueue, strict_fifo_blocks_on_quota)
{
	/* Quota 5: first holds 2, so big (4) lacks 1.  BestEffortFIFO admits
	 * small (2 + 1 <= 5) past it at 00:02. */
	RUN(S, LATE, "queues.default.quota={nvidia.com/gpu: 5}");
	cr_assert_eq(r.jobs[2].start, 2 * M);
	assert_every_second_has_a_reason(NULL);
	cleanup();
	/* StrictFIFO: small waits behind big until first ends at 01:00; both
	 * are admitted then (4 + 1 <= 5), big takes the node, small runs at
	 * 02:00: 58 min behind the head, 60 min on nodes. */
	RUN(S, LATE, "queues.default.quota={nvidia.com/gpu: 5}",
	    "queues.default.strategy=StrictFIFO");
	cr_assert_eq(r.jobs[1].start, H);
	cr_assert_eq(r.jobs[2].start, 2 * H);
	cr_assert_float_eq(
		pending("small", "waiting for the head of StrictFIFO ClusterQueue default"),
		58 * 60, 1e-6);
	cr_assert_float_eq(pending("small", "0/1 nodes"), 60 * 60, 1e-6);
	cr_assert_float_eq(
		pending("big", "couldn't assign flavors to pod set main: insufficient "
			       "unused quota for nvidia.com/gpu in flavor default, 1 more needed"),
		59 * 60, 1e-6);
	assert_every_second_has_a_reason(NULL);
}

/*
 * Kueue's minimal set (pkg/scheduler/preemption/preemption.go,
 * minimalPreemptions and fillBackWorkloads; order from candidatesOrdering:
 * other queues first, lower priority, most recently admitted first).
 * Cohort of 5 GPUs: team-a nominal 2, team-b 3.  team-a runs big (3 GPUs,
 * 00:00) and small (1 GPU, 00:30), borrowing 2.  At 01:00 team-b asks for 3
 * (reclaimWithinCohort: Any); 1 is unused.  Removing small (newest) leaves
 * 2 free, not enough; removing big too frees 5; adding small back leaves 4
 * free, enough: only big is evicted.  The old model evicted small, then big.
 * big waits again: team-a holds 1, the cohort 4 of 5, big needs 3: "2 more
 * needed" to 10:30 (small ends), "1 more needed" to 11:00 (b ends); it
 * runs 11:00-21:00.
 */
#define COHORT                                                                                              \
	"pools.p.gpus_per_node=8",                                                                          \
		"queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 2}}, "                      \
		"{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 3}, "                               \
		"preemption: {reclaim_within_cohort: Any}}]",                                               \
		"workloads=[{name: big, queue: team-a, arrival: {at: \"00:00\"}, gpus: 3, duration: 10h}, " \
		"{name: small, queue: team-a, arrival: {at: \"00:30\"}, gpus: 1, duration: 10h}, "          \
		"{name: b, queue: team-b, arrival: {at: \"01:00\"}, gpus: 3, duration: 10h}]"

Test(kueue, reclaim_evicts_the_smallest_set_kueue_finds)
{
	RUN(K, COHORT);
	cr_assert_eq(r.jobs[2].start, 1 * H, "b reclaims at once");
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 1, 1e-12, "only big");
	cr_assert_eq(r.jobs[0].preemptions, 1, "the jobs table names the victim");
	cr_assert_eq(r.jobs[1].preemptions + r.jobs[2].preemptions, 0);
	cr_assert_eq(r.jobs[1].end, 10 * H + 30 * M, "small keeps running");
	cr_assert_eq(r.jobs[0].end, 21 * H, "big starts over at 11:00");
	cr_assert_float_eq(
		pending("big", "couldn't assign flavors to pod set main: insufficient "
			       "unused quota for nvidia.com/gpu in flavor default, 2 more needed"),
		9.5 * 3600, 1e-6);
	cr_assert_float_eq(
		pending("big", "couldn't assign flavors to pod set main: insufficient "
			       "unused quota for nvidia.com/gpu in flavor default, 1 more needed"),
		0.5 * 3600, 1e-6);
	double extra[] = {10 * 3600, 0, 0}; /* big's second wait, 01:00-11:00 */
	assert_every_second_has_a_reason(extra);
}

/*
 * withinClusterQueue (Kueue API: apis/kueue/v1beta1/clusterqueue_types.go,
 * ClusterQueuePreemption.WithinClusterQueue: Never (default), LowerPriority,
 * LowerOrNewerEqualPriority; candidates in preemption.go, findCandidates).
 * Queue q holds 2 GPUs: two low jobs (priority 0) take them 00:00-10:00.
 * high (priority 10, 1 GPU, 1 h) comes at 01:00.
 */
#define WITHIN                                                                            \
	"workloads=[{name: low, queue: q, count: 2, arrival: {at: \"00:00\"}, gpus: 1, "  \
	"duration: 10h}, {name: high, queue: q, priority: 10, arrival: {at: \"01:00\"}, " \
	"gpus: 1, duration: 1h}]"

Test(kueue, within_cluster_queue_lower_priority_preempts_in_the_queue)
{
	/* Never: high waits for a low job to end. */
	RUN(K, WITHIN);
	cr_assert_eq(r.jobs[2].start, 10 * H);
	assert_every_second_has_a_reason(NULL);
	cleanup();
	/* LowerPriority: the newer low job (ties of admission time: the later
	 * one) is evicted at 01:00; it waits for high's quota to 02:00 and
	 * starts over, ending at 12:00. */
	RUN(K, WITHIN, "queues.q.preemption={within_cluster_queue: LowerPriority}");
	cr_assert_eq(r.jobs[2].start, 1 * H);
	cr_assert_eq(r.jobs[1].end, 12 * H);
	cr_assert_eq(r.jobs[0].end, 10 * H);
	cr_assert_float_eq(named_metric(&r, "low", "jobs_preempted"), 1, 1e-12);
	cr_assert_eq(r.jobs[1].preemptions, 1);
	cr_assert_eq(r.jobs[0].preemptions, 0);
	double extra[] = {3600, 0}; /* low's second wait, 01:00-02:00 */
	assert_every_second_has_a_reason(extra);
	cleanup();
	/* Equal priorities are not lower: high at priority 0 waits. */
	RUN(K, WITHIN, "queues.q.preemption={within_cluster_queue: LowerOrNewerEqualPriority}",
	    "workloads.high.priority=0");
	cr_assert_eq(r.jobs[2].start, 10 * H, "the low jobs are older than high");
}

/*
 * LowerOrNewerEqualPriority lets a job preempt an equal-priority job that
 * was queued after it.  Quota 2: w (1 GPU) 00:00-01:00; x (2 GPUs) at 00:10
 * lacks 1; y (1 GPU) at 00:20 is admitted past it (BestEffortFIFO).  At
 * 01:00 w ends; x is still 1 short, and y is newer: y is evicted, x runs
 * 01:00-06:00, y 06:00-11:00.  Under LowerPriority x waits for y to end
 * at 05:20.
 */
#define NEWER                                                                               \
	"workloads=[{name: w, queue: q, arrival: {at: \"00:00\"}, gpus: 1, duration: 1h}, " \
	"{name: x, queue: q, arrival: {at: \"00:10\"}, gpus: 2, duration: 5h}, "            \
	"{name: y, queue: q, arrival: {at: \"00:20\"}, gpus: 1, duration: 5h}]"

Test(kueue, lower_or_newer_equal_priority_preempts_a_newer_job)
{
	RUN(K, NEWER, "queues.q.preemption={within_cluster_queue: LowerOrNewerEqualPriority}");
	cr_assert_eq(r.jobs[1].start, 1 * H);
	cr_assert_eq(r.jobs[2].start, 20 * M);
	cr_assert_eq(r.jobs[2].end, 11 * H);
	double extra[] = {0, 0, 5 * 3600}; /* y's second wait, 01:00-06:00 */
	assert_every_second_has_a_reason(extra);
	cleanup();
	RUN(K, NEWER, "queues.q.preemption={within_cluster_queue: LowerPriority}");
	cr_assert_eq(r.jobs[1].start, 5 * H + 20 * M);
	assert_every_second_has_a_reason(NULL);
}

/*
 * Kueue preempts admitted workloads, whether their pods run or wait for
 * nodes (preemption.go, findCandidates: the ClusterQueue's admitted
 * Workloads).  hog (no quota) takes 3 of the 4 GPUs 00:00-02:00.  low
 * (priority 0, 2 GPUs) is admitted at 00:10 and waits for a node.  high
 * (priority 10, 1 GPU, 1 h) at 00:20 evicts it (LowerPriority) and runs on
 * the free GPU to 01:20.  low waits for quota to 01:20, then for nodes to
 * 02:00: 10 + 60 + 40 minutes, each with its reason.
 */
Test(kueue, a_job_waiting_for_nodes_can_be_preempted)
{
	RUN(K, "queues.q.preemption={within_cluster_queue: LowerPriority}",
	    "workloads=[{name: hog, arrival: {at: \"00:00\"}, gpus: 3, duration: 2h}, "
	    "{name: low, queue: q, arrival: {at: \"00:10\"}, gpus: 2, duration: 1h}, "
	    "{name: high, queue: q, priority: 10, arrival: {at: \"00:20\"}, gpus: 1, duration: 1h}]");
	cr_assert_eq(r.jobs[2].start, 20 * M);
	cr_assert_eq(r.jobs[1].start, 2 * H);
	cr_assert_eq(r.jobs[1].preemptions, 1, "evicted before it ever ran");
	cr_assert_float_eq(pending("low", "0/1 nodes"), 50 * 60, 1e-6);
	cr_assert_float_eq(pending("low", "couldn't assign flavors"), 60 * 60, 1e-6);
	assert_every_second_has_a_reason(NULL);
}

/* A job stopped by its pool's window (window_policy: preempt) keeps its
 * admission and waits for nodes again, 17:00 to 12:00 the next day: 19 h
 * with a reason. */
Test(kueue, a_job_stopped_by_a_window_waits_with_a_reason)
{
	RUN("tests/fixtures/windows.yaml", "scheduler.window_policy=preempt");
	cr_assert_eq(r.jobs[0].preemptions, 1);
	double extra[] = {19 * 3600};
	assert_every_second_has_a_reason(extra);
}

/*
 * A request above the queue's nominal quota may only wait for what the
 * cohort lends, never reclaim it (Kueue: pkg/scheduler/flavorassigner/
 * flavorassigner.go, fitsResourceQuota tries preemption for val <=
 * nominal, or under borrowWithinCohort).  team-b (nominal 3) runs four
 * 1-GPU jobs 00:00-10:00, borrowing team-a's 1.  At 01:00 team-a (nominal
 * 1, reclaimWithinCohort: Any) asks for 2: it waits to 10:00.  Asking for
 * 1, it reclaims at once.
 */
#define ABOVE                                                                                       \
	"queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 1}, "                       \
	"preemption: {reclaim_within_cohort: Any}}, "                                               \
	"{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 3}}]",                              \
		"workloads=[{name: b, queue: team-b, count: 4, arrival: {at: \"00:00\"}, gpus: 1, " \
		"duration: 10h}, {name: a, queue: team-a, arrival: {at: \"01:00\"}, gpus: 2, duration: 1h}]"

Test(kueue, a_request_above_the_nominal_quota_does_not_reclaim)
{
	RUN(K, ABOVE);
	cr_assert_eq(r.jobs[4].start, 10 * H);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 0, 1e-12);
	assert_every_second_has_a_reason(NULL);
	cleanup();
	RUN(K, ABOVE, "workloads.a.gpus=1");
	cr_assert_eq(r.jobs[4].start, 1 * H);
	cr_assert_eq(r.jobs[3].preemptions, 1, "the most recently admitted borrower (the last)");
}

/*
 * A request above the queue's nominal quota does not preempt within the
 * queue either (pkg/scheduler/flavorassigner/flavorassigner.go,
 * fitsResourceQuota: preemption is simulated only when nominal >= the
 * request, mayReclaimInHierarchy, or canPreemptWhileBorrowing, which is
 * borrowWithinCohort; withinClusterQueue is not among them).  team-a
 * (nominal 2, withinClusterQueue: LowerPriority) runs low (priority 0, 2
 * GPUs, 00:00-10:00); team-b lends its 2 in cohort shared.  At 01:00 high
 * (priority 10) asks for 3: 2 are available (team-b's), 1 more is needed,
 * and 3 > 2 nominal: Kueue waits until low ends at 10:00 and admits high
 * then, borrowing 1.  gpuplan used to evict low at 01:00.  Under
 * borrowWithinCohort (policy LowerPriority), preemption is tried: evicting
 * low leaves 4 available, so high is admitted at 01:00.
 */
#define OVER_NOMINAL                                                                        \
	"queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 2}, "               \
	"preemption: {within_cluster_queue: LowerPriority, reclaim_within_cohort: Any}}, "  \
	"{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 2}}]",                      \
		"workloads=[{name: low, queue: team-a, arrival: {at: \"00:00\"}, gpus: 2, " \
		"duration: 10h}, {name: high, queue: team-a, priority: 10, arrival: {at: "  \
		"\"01:00\"}, gpus: 3, duration: 1h}]"

Test(kueue, a_request_above_the_nominal_quota_does_not_preempt_within_its_queue)
{
	RUN(K, OVER_NOMINAL);
	cr_assert_eq(r.jobs[0].preemptions, 0);
	cr_assert_eq(r.jobs[0].end, 10 * H);
	cr_assert_eq(r.jobs[1].start, 10 * H);
	cr_assert_str_eq(reason(1), "couldn't assign flavors to pod set main: insufficient unused "
				    "quota for nvidia.com/gpu in flavor default, 1 more needed");
	cleanup();
	RUN(K, OVER_NOMINAL,
	    "queues.team-a.preemption.borrow_within_cohort={policy: LowerPriority}");
	cr_assert_eq(r.jobs[1].start, 1 * H);
	cr_assert_eq(r.jobs[0].preemptions, 1);
}

/*
 * borrowWithinCohort lets a borrowing job preempt another queue's
 * lower-priority borrower (hierarchical_preemption.go,
 * classifyPreemptionVariant: ReclaimWhileBorrowing), at most
 * maxPriorityThreshold.  team-b (nominal 2) borrows 2 of team-a's with b (4
 * GPUs, priority 0, 00:00-10:00).  At 01:00 team-a's a (priority 10) asks
 * for 3 (nominal 2): it would borrow 1.  Without borrowWithinCohort the
 * request is above nominal and waits to 10:00; with it, b is reclaimed at
 * 01:00 and a runs 01:00-02:00; with max_priority_threshold -1, b (priority
 * 0) is above it and a waits again.
 */
#define WHILE_BORROWING                                                                   \
	"queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 2}, "             \
	"preemption: {reclaim_within_cohort: Any}}, "                                     \
	"{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 2}}]",                    \
		"workloads=[{name: b, queue: team-b, arrival: {at: \"00:00\"}, gpus: 4, " \
		"duration: 10h}, {name: a, queue: team-a, priority: 10, arrival: {at: "   \
		"\"01:00\"}, gpus: 3, duration: 1h}]"

Test(kueue, borrow_within_cohort_reclaims_while_borrowing_below_its_threshold)
{
	RUN(K, WHILE_BORROWING);
	cr_assert_eq(r.jobs[1].start, 10 * H);
	cleanup();
	RUN(K, WHILE_BORROWING,
	    "queues.team-a.preemption.borrow_within_cohort={policy: LowerPriority}");
	cr_assert_eq(r.jobs[1].start, 1 * H);
	cr_assert_eq(r.jobs[0].preemptions, 1);
	cleanup();
	RUN(K, WHILE_BORROWING,
	    "queues.team-a.preemption.borrow_within_cohort={policy: LowerPriority, "
	    "max_priority_threshold: -1}");
	cr_assert_eq(r.jobs[1].start, 10 * H);
	cr_assert_eq(r.jobs[0].preemptions, 0);
}

/*
 * In one scheduling cycle Kueue admits heads within their nominal quota
 * before heads that would borrow, then by priority and time (scheduler.go,
 * entryOrdering.Less).  Cohort of 2 GPUs, team-a and team-b 1 each.  a1
 * (team-a) holds team-a's GPU 00:00-01:00.  At 00:10 a2 (team-a, would
 * borrow) and b1 (team-b, within its quota) arrive together, a2 first: b1
 * gets the last GPU of the cohort, a2 waits for a1 to end.
 */
Test(kueue, heads_within_nominal_quota_are_admitted_before_borrowers)
{
	RUN(K,
	    "queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 1}}, "
	    "{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 1}}]",
	    "workloads=[{name: a1, queue: team-a, arrival: {at: \"00:00\"}, duration: 1h}, "
	    "{name: a2, queue: team-a, arrival: {at: \"00:10\"}, duration: 1h}, "
	    "{name: b1, queue: team-b, arrival: {at: \"00:10\"}, duration: 1h}]");
	cr_assert_eq(r.jobs[2].start, 10 * M, "b1 is within team-b's quota");
	cr_assert_eq(r.jobs[1].start, 1 * H, "a2 would have borrowed it");
	assert_every_second_has_a_reason(NULL);
}

/*
 * A lending limit keeps part of a queue's quota to itself (Kueue's
 * lendingLimit; pkg/cache/resource_node.go: guaranteedQuota = nominal -
 * lendingLimit, and the cohort holds only what is lent).  team-a has 3 GPUs
 * and lends 1, team-b has 1; four team-b jobs arrive at 00:00 and one of
 * team-a at 00:10.  The cohort holds 1 + 1 = 2 for team-b: b1 and b2 start
 * at 00:00, b3 and b4 when they end at 01:00, and a1 starts at 00:10 on
 * team-a's own 2.  Without the limit team-b borrows all 3: b1-b4 at 00:00,
 * and a1 waits for one of them to end at 01:00.
 */
Test(kueue, a_lending_limit_keeps_quota_for_its_own_queue)
{
#define LEND_WORKLOADS                                                                            \
	"workloads=[{name: b, queue: team-b, count: 4, arrival: {at: \"00:00\"}, duration: 1h}, " \
	"{name: a1, queue: team-a, arrival: {at: \"00:10\"}, duration: 1h}]"
	RUN(K,
	    "queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 3}, "
	    "lending_limit: {nvidia.com/gpu: 1}}, "
	    "{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 1}}]",
	    LEND_WORKLOADS);
	cr_assert_eq(r.jobs[0].start, 0);
	cr_assert_eq(r.jobs[1].start, 0);
	cr_assert_eq(r.jobs[2].start, H, "team-b may borrow 1 only");
	cr_assert_eq(r.jobs[3].start, H);
	cr_assert_eq(r.jobs[4].start, 10 * M, "a1 starts on team-a's guaranteed quota");
	cr_assert_float_eq(pending("b", "couldn't assign flavors to pod set main: insufficient "
					"unused quota for nvidia.com/gpu in flavor default, 1 more "
					"needed"),
			   2 * 3600, 1e-6);
	assert_every_second_has_a_reason(NULL);
	cleanup();
	RUN(K,
	    "queues=[{name: team-a, cohort: shared, quota: {nvidia.com/gpu: 3}}, "
	    "{name: team-b, cohort: shared, quota: {nvidia.com/gpu: 1}}]",
	    LEND_WORKLOADS);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(r.jobs[i].start, 0, "b%d borrows", i + 1);
	cr_assert_eq(r.jobs[4].start, H, "a1 waits for a GPU team-b borrowed");
#undef LEND_WORKLOADS
}

/* A lending limit needs a cohort and at most the quota. */
Test(kueue, a_lending_limit_is_checked)
{
	struct scenario *bad;
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *above[] = {"queues=[{name: q, cohort: c, quota: {nvidia.com/gpu: 2}, "
			       "lending_limit: {nvidia.com/gpu: 3}}]"};
	cr_assert_eq(scenario_load(K, above, 1, &bad, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "lending_limit 3 for nvidia.com/gpu is above its quota 2"), "%s",
		  err.msg);
	const char *alone[] = {"queues=[{name: q, quota: {nvidia.com/gpu: 2}, "
			       "lending_limit: {nvidia.com/gpu: 1}}]"};
	cr_assert_eq(scenario_load(K, alone, 1, &bad, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "lending_limit without a cohort to lend to"), "%s", err.msg);
}

/* --- quota_preempt alone --------------------------------------------------- */

/* Loads kueue-reclaim.yaml (team-a nominal 2, team-b 3, one cohort) with
 * sets into sc and a quota over it. */
static void quota_over(struct quota *q, const char *const *sets, size_t n_sets)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load("tests/fixtures/kueue-reclaim.yaml", sets, n_sets, &sc, &err),
		     GP_OK, "%s", err.msg);
	results_init(&r);
	quota_init(q, sc);
	cr_assert_eq(q->n_res, 1, "nvidia.com/gpu only");
}

/*
 * candidatesOrdering puts lower priority before recency (preemption.go).
 * team-a holds 4 (nominal 2): A (priority 5, 1 GPU, admitted last), B
 * (priority 0, 1 GPU, first) and C (priority 0, 2 GPUs, second).  team-b
 * asks for 2 with 1 unused: C (priority 0, newer than B) goes first and
 * alone frees enough; A, the newest, is not touched.
 */
Test(kueue, preemption_takes_lower_priority_before_recent_admissions)
{
	struct quota q;
	quota_over(&q, NULL, 0);
	size_t a = (size_t)scenario_queue_index(sc, "team-a"),
	       b = (size_t)scenario_queue_index(sc, "team-b");
	double one = 1, two = 2, want = 2;
	struct quota_candidate c[] = {
		{.job = 10, .seq = 2, .queue = a, .priority = 5, .admitted = 3 * H, .req = &one},
		{.job = 11, .seq = 0, .queue = a, .priority = 0, .admitted = 1 * H, .req = &one},
		{.job = 12, .seq = 1, .queue = a, .priority = 0, .admitted = 2 * H, .req = &two},
	};
	for (size_t i = 0; i < 3; i++)
		quota_charge(&q, a, c[i].req, +1);
	uint32_t targets[3];
	cr_assert_eq(quota_check(&q, b, &want), QUOTA_WAIT);
	cr_assert_str_eq(quota_why(&q),
			 "couldn't assign flavors to pod set main: insufficient unused quota "
			 "for nvidia.com/gpu in flavor default, 1 more needed");
	size_t n = quota_preempt(&q, b, 0, 4 * H, &want, c, 3, targets);
	cr_assert_eq(n, 1);
	cr_assert_eq(targets[0], 12);
	cr_assert_float_eq(q.usage[a], 4, 1e-12, "usage is unchanged by the simulation");
	quota_free(&q);
}

/*
 * Other queues' borrowing jobs come before the queue's own
 * (candidatesOrdering), and a queue under its nominal quota first tries
 * without borrowing (getTargets).  team-b (reclaim Any, within
 * LowerPriority) holds 1 GPU with its own job D (priority 0); team-a holds
 * 4 of its nominal 2 with E (1 GPU) and F (3 GPUs), both priority 9 and
 * admitted together.  The cohort's 5 are used; a team-b job of priority 5
 * asks for 1.  Order: F, E (equal priority and admission: the later job
 * first, where Kueue compares UIDs), then D.  Removing F fits: F alone is
 * evicted, not the lower-priority D.
 */
Test(kueue, preemption_reclaims_from_other_queues_before_its_own)
{
	struct quota q;
	const char *sets[] = {"queues.team-b.preemption={reclaim_within_cohort: Any, "
			      "within_cluster_queue: LowerPriority}"};
	quota_over(&q, sets, 1);
	size_t a = (size_t)scenario_queue_index(sc, "team-a"),
	       b = (size_t)scenario_queue_index(sc, "team-b");
	double one = 1, three = 3, want = 1;
	struct quota_candidate c[] = {
		{.job = 20, .seq = 0, .queue = b, .priority = 0, .admitted = 0, .req = &one},
		{.job = 21, .seq = 1, .queue = a, .priority = 9, .admitted = 0, .req = &one},
		{.job = 22, .seq = 2, .queue = a, .priority = 9, .admitted = 0, .req = &three},
	};
	for (size_t i = 0; i < 3; i++)
		quota_charge(&q, c[i].queue, c[i].req, +1);
	uint32_t targets[3];
	size_t n = quota_preempt(&q, b, 5, 1 * H, &want, c, 3, targets);
	cr_assert_eq(n, 1);
	cr_assert_eq(targets[0], 22, "team-a's, not team-b's own D");
	quota_free(&q);
}

/* check prints a queue's preemption policies beside its strategy. */
Test(kueue, check_shows_the_preemption_policies)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *sets[] = {"queues.team-a.preemption={within_cluster_queue: "
			      "LowerOrNewerEqualPriority}"};
	cr_assert_eq(scenario_load("tests/fixtures/kueue-reclaim.yaml", sets, 1, &sc, &err), GP_OK,
		     "%s", err.msg);
	results_init(&r);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	report_scenario(f, sc);
	fclose(f);
	cr_assert(strstr(buf, "  queue team-a: BestEffortFIFO, within_cluster_queue "
			      "LowerOrNewerEqualPriority\n"),
		  "%s", buf);
	cr_assert(strstr(buf, "  queue team-b: BestEffortFIFO, reclaim_within_cohort Any\n"), "%s",
		  buf);
	cr_assert(strstr(buf, "  queue default: BestEffortFIFO\n"), "%s", buf);
	free(buf);
}

/*
 * The diagnosis tells a StrictFIFO wait from a quota wait by the reason's
 * kind, not its words: small's eight jobs wait 9 h 50 m behind wide (which
 * lacks 2 GPUs of quota) while 12 GPUs are free, then 6 of them an hour on
 * quota: 78.7 of 84.7 pod-hours behind the head.  The first fix is
 * BestEffortFIFO.
 */
Test(kueue, the_diagnosis_names_strict_fifo_when_the_order_holds_the_jobs)
{
	run("tests/fixtures/kueue-strict.yaml", NULL, 0);
	cr_assert_float_eq(pending("small", "waiting for the head"), 8 * (9 * 3600 + 50 * 60),
			   1e-6);
	cr_assert_float_eq(pending("small", "couldn't assign"), 6 * 3600, 1e-6);
	assert_every_second_has_a_reason(NULL);
	cr_assert_geq(r.n_findings, 1);
	const struct finding *f = &r.findings[0];
	cr_assert(strstr(f->text, "small waits on admission") &&
			  strstr(f->text, "StrictFIFO queue team"),
		  "%s", f->text);
	cr_assert_geq(f->n_fixes, 1);
	cr_assert_str_eq(f->fixes[0].sets[0].key, "queues.team.strategy");
	cr_assert_str_eq(f->fixes[0].sets[0].value, "BestEffortFIFO");
}

/* A FitError with the Cluster Autoscaler's note keeps the nodes' kinds: it
 * is not a quota wait (it was tagged as one before). */
Test(kueue, an_autoscaler_note_keeps_the_fit_errors_kinds)
{
	run("tests/fixtures/autoscale.yaml", NULL, 0);
	size_t noted = 0;
	for (size_t i = 0; i < r.n_pending_reasons; i++) {
		const struct pending_reason *pr = &r.pending_reasons[i];
		if (!strstr(pr->reason, "(cluster-autoscaler: "))
			continue;
		noted++;
		cr_assert(!(pr->kinds & PEND_BIT(PEND_QUOTA)), "%s", pr->reason);
		/* "no nodes available" (a pool at zero) gives no node's kind */
		if (strstr(pr->reason, "Insufficient nvidia.com/gpu"))
			cr_assert(pr->kinds & PEND_BIT(PEND_RESOURCE), "%s", pr->reason);
	}
	cr_assert_gt(noted, 0);
}

/*
 * Hierarchical cohorts: a queue reclaims within the subtree whose quota
 * fits its request (pkg/scheduler/preemption/classical/
 * hierarchical_preemption.go: FindHeightOfLowestSubtreeThatFits gives
 * mayReclaimInHierarchy when that subtree is below the root;
 * collectCandidatesForHierarchicalReclaim makes the borrowers outside it
 * HiearchicalReclaim candidates, preempted whatever their priority).
 * company has org-a (a1, a2: 2 GPUs each) and org-b (b1: 4).  On one node
 * of 8 GPUs, b1 runs eight 1-GPU jobs from 00:00 for 10 h, borrowing org-a's
 * 4.  At 01:00 a1 (reclaim_within_cohort: Any) asks for 4: above its nominal
 * 2, but org-a's subtree (4, unused) fits it, below the root.  The four
 * most recently admitted of b (the last four submitted) are preempted at
 * 01:00, a runs 01:00-02:00, and they are admitted again at 02:00 and end
 * at 12:00.  With the same queues in one flat cohort, the request above
 * nominal cannot preempt (fitsResourceQuota) and a waits to 10:00: 9 h.
 */
#define TREE                                                                                        \
	"pools=[{name: p, nodes: 1, gpu: L4, gpus_per_node: 8}]",                                   \
		"cohorts=[{name: org-a, parent: company}, {name: org-b, parent: company}, "         \
		"{name: company}]",                                                                 \
		"queues=[{name: a1, cohort: org-a, quota: {nvidia.com/gpu: 2}, preemption: "        \
		"{reclaim_within_cohort: Any}}, {name: a2, cohort: org-a, quota: {nvidia.com/gpu: " \
		"2}}, {name: b1, cohort: org-b, quota: {nvidia.com/gpu: 4}}]",                      \
		"workloads=[{name: b, queue: b1, count: 8, arrival: {at: \"00:00\"}, gpus: 1, "     \
		"duration: 10h}, {name: a, queue: a1, arrival: {at: \"01:00\"}, gpus: 4, "          \
		"duration: 1h}]"

Test(kueue, a_hierarchical_cohort_reclaims_within_its_subtree)
{
	RUN(K, TREE);
	cr_assert_eq(r.jobs[8].start, 1 * H, "a runs at 01:00");
	cr_assert_eq(r.jobs[8].end, 2 * H);
	for (size_t j = 0; j < 8; j++) {
		bool newest = j >= 4;
		cr_assert_eq(r.jobs[j].preemptions, newest ? 1 : 0, "b job %zu", j);
		cr_assert_eq(r.jobs[j].end, newest ? 12 * H : 10 * H, "b job %zu", j);
	}
	cleanup();
	RUN(K, TREE, "queues.a1.cohort=company", "queues.a2.cohort=company",
	    "queues.b1.cohort=company");
	cr_assert_eq(r.jobs[8].start, 10 * H, "flat: a waits for b to end");
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 0, 1e-12);
}
