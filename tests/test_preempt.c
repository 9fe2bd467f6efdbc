/*
 * test_preempt.c - kube-scheduler's priority preemption (preempt.h), against
 * kubernetes pkg/scheduler/framework/plugins/defaultpreemption/
 * default_preemption.go (SelectVictimsOnNode, PodEligibleToPreemptOthers)
 * and pkg/scheduler/framework/preemption/preemption.go (DryRunPreemption,
 * pickOneNodeForPreemption), with figures worked by hand.
 */
#include "run.h"

#include "gpuplan/results.h"
#include "named_metric.h"

#include <string.h>

TestSuite(preempt, .fini = cleanup);

#define FIXTURE "tests/fixtures/preempt.yaml"

static const char *reason_of(size_t job)
{
	int32_t id = r.jobs[job].reason;
	return id >= 0 ? r.reason_texts[id] : NULL;
}

static const char *node_of(size_t job) { return r.node_names[r.jobs[job].node]; }

#define M (60 * SIM_SECOND)

/*
 * Four 1-GPU pods of priority 0 started at 00:00, 00:10, 00:20, 00:30 on a
 * 4-GPU node; a 2-GPU pod of priority 100 at 01:00.  SelectVictimsOnNode
 * removes all four, then reprieves the most important first (MoreImportantPod:
 * equal priority, the earlier start): low-a and low-b go back, low-c and
 * low-d would leave 1 GPU, so they are the victims.  They get the default
 * grace period of 30 s: the preemptor starts on its nominated node at
 * 01:00:30 and ends at 02:00:30, when the two victims start over (10 h each,
 * no checkpoints): they end at 12:00:30.
 */
Test(preempt, evicts_the_pods_that_started_last_after_their_grace_period)
{
	RUN_WITH(FIXTURE, "output.jobs=true");
	cr_assert_eq(r.n_jobs, 5);
	sim_time kill = SIM_HOUR + 30 * SIM_SECOND;
	cr_assert_eq(r.jobs[4].start, kill);
	cr_assert_eq(r.jobs[4].end, kill + SIM_HOUR);
	cr_assert_str_eq(node_of(4), "a-0");
	const int32_t preempted[] = {0, 0, 1, 1, 0};
	const sim_time first[] = {0, 10 * M, 20 * M, 30 * M, kill};
	const sim_time end[] = {10 * SIM_HOUR, 10 * SIM_HOUR + 10 * M, kill + 11 * SIM_HOUR,
				kill + 11 * SIM_HOUR, kill + SIM_HOUR};
	for (size_t i = 0; i < 5; i++) {
		cr_assert_eq(r.jobs[i].preemptions, preempted[i], "job %zu", i);
		cr_assert_eq(r.jobs[i].start, first[i], "job %zu", i);
		cr_assert_eq(r.jobs[i].end, end[i], "job %zu", i);
	}
	/* A victim is charged while it holds its GPU: up to its kill, then its new run. */
	cr_assert_float_eq(r.jobs[2].cost, (40.5 + 600) / 60, 1e-9);
	cr_assert_float_eq(r.jobs[3].cost, (30.5 + 600) / 60, 1e-9);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 2, 1e-9);
	/* The preemptor waited 30 s with the filters' message alone: the
	 * PostFilter succeeded, so it adds nothing. */
	cr_assert_str_eq(reason_of(4), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
}

/* terminationGracePeriodSeconds decides when the GPUs free: the preemptor
 * needs both victims gone, so it starts when the longer grace ends. */
Test(preempt, the_grace_period_is_the_victims_own)
{
	RUN_WITH(FIXTURE, "workloads.low-c.termination_grace_period=2m",
		 "workloads.low-d.termination_grace_period=0s", "output.jobs=true");
	cr_assert_eq(r.jobs[4].start, SIM_HOUR + 2 * M);
	cr_assert_eq(r.jobs[3].preemptions, 1);
	cr_assert_eq(r.jobs[2].preemptions, 1);
}

/* A victim whose work ends within its grace period completes: low-d (35 min
 * from 00:30) ends at 01:05, low-c is killed at 01:10. */
Test(preempt, a_victim_that_ends_in_its_grace_period_completes)
{
	RUN_WITH(FIXTURE, "workloads.low-d.duration=35m",
		 "workloads.low-c.termination_grace_period=10m",
		 "workloads.low-d.termination_grace_period=10m", "output.jobs=true");
	cr_assert_eq(r.jobs[3].end, SIM_HOUR + 5 * M);
	cr_assert_eq(r.jobs[3].preemptions, 0);
	cr_assert_eq(r.jobs[2].preemptions, 1);
	cr_assert_eq(r.jobs[4].start, SIM_HOUR + 10 * M);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 1, 1e-9);
}

/* preemptionPolicy: Never: the pod waits, and says why. */
Test(preempt, preemption_policy_never_waits_for_free_gpus)
{
	RUN_WITH(FIXTURE, "workloads.high.preemption_policy=Never", "output.jobs=true");
	cr_assert_eq(r.jobs[4].start, 10 * SIM_HOUR + 10 * M, "when low-b ends");
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 0, 1e-9);
	cr_assert_str_eq(reason_of(4), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
				       "preemption: not eligible due to preemptionPolicy=Never.");
}

/* Equal priority is no victim: "No preemption victims found". */
Test(preempt, equal_priority_is_no_victim)
{
	RUN_WITH(FIXTURE, "workloads.high.priority=0", "output.jobs=true");
	cr_assert_eq(r.jobs[4].start, 10 * SIM_HOUR + 10 * M);
	cr_assert_str_eq(reason_of(4), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
				       "preemption: 0/1 nodes are available: 1 No preemption "
				       "victims found for incoming pod..");
}

#define NODES "tests/fixtures/preempt-nodes.yaml"

/* The job of workload name (the first with that name), or -1. */
static int job_of(const char *name)
{
	for (size_t i = 0; i < r.n_jobs; i++)
		if (!strcmp(sc->workloads[r.jobs[i].workload].name, name))
			return (int)i;
	return -1;
}

/* Criterion 2, the lowest highest-priority victim: y-0's two pods of
 * priority 10 go rather than x-0's one of priority 50. */
Test(preempt, the_node_whose_highest_victim_is_lowest_is_chosen)
{
	run(NODES, NULL, 0);
	int h = job_of("high");
	cr_assert_str_eq(node_of((size_t)h), "y-0");
	cr_assert_eq(r.jobs[h].start, SIM_HOUR + 30 * SIM_SECOND);
	cr_assert_eq(r.jobs[job_of("on-x")].preemptions, 0);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 2, 1e-9);
}

/* Criteria 3 and 4, with the highest victims of equal priority: x-0's one
 * pod has the smaller sum (each priority + 2^31) and is the fewer. */
Test(preempt, with_equal_highest_victims_the_fewest_go)
{
	RUN_WITH(NODES, "workloads.on-x.priority=10");
	cr_assert_str_eq(node_of((size_t)job_of("high")), "x-0");
	cr_assert_eq(r.jobs[job_of("on-x")].preemptions, 1);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 1, 1e-9);
}

/* Criterion 5: one victim each, equal priority; the node whose victim
 * started last (y-0, 00:10) is chosen. */
Test(preempt, then_the_victims_that_started_last)
{
	RUN_WITH(NODES, "workloads.on-x.priority=10", "workloads.on-y.count=1",
		 "workloads.on-y.gpus=4", "workloads.on-y.arrival={at: \"00:10\"}");
	cr_assert_str_eq(node_of((size_t)job_of("high")), "y-0");
	cr_assert_eq(r.jobs[job_of("on-y")].preemptions, 1);
	cr_assert_eq(r.jobs[job_of("on-x")].preemptions, 0);
}

/* A node where the pod does not fit even with every lower-priority pod gone
 * reports its filter's reason in the PostFilter's FitError (x-0: 6 cores
 * asked of 4); one without lower-priority pods finds no victims (y-0). */
Test(preempt, a_node_too_small_even_emptied_reports_its_reason)
{
	RUN_WITH(NODES, "workloads.on-x.priority=10", "workloads.on-y.priority=200",
		 "pools.x.cpu=4", "workloads.high.cpu=6", "horizon=2h", "kubernetes_version=1.33");
	cr_assert_str_eq(reason_of((size_t)job_of("high")),
			 "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient "
			 "nvidia.com/gpu. preemption: 0/2 nodes are available: 1 Insufficient "
			 "cpu, 1 No preemption victims found for incoming pod..");
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 0, 1e-9);
}

/* From Kubernetes 1.34, NodeResourcesFit calls a node whose allocatable is
 * below the request UnschedulableAndUnresolvable (kubernetes PR #131345,
 * pkg/scheduler/framework/plugins/noderesources/fit.go), so DefaultPreemption
 * does not look at x-0 (4 cores for a 6-core pod): "Preemption is not
 * helpful for scheduling". 1.34 is the default. */
Test(preempt, from_1_34_a_node_too_small_is_not_helpful)
{
	RUN_WITH(NODES, "workloads.on-x.priority=10", "workloads.on-y.priority=200",
		 "pools.x.cpu=4", "workloads.high.cpu=6", "horizon=2h");
	cr_assert_eq(sc->kube_minor, 34);
	cr_assert_str_eq(reason_of((size_t)job_of("high")),
			 "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient "
			 "nvidia.com/gpu. preemption: 0/2 nodes are available: 1 No preemption "
			 "victims found for incoming pod, 1 Preemption is not helpful for "
			 "scheduling..");
	cleanup();
	/* Without a pod of lower priority anywhere, the same: x-0 is too small. */
	RUN_WITH(NODES, "workloads.on-x.priority=200", "workloads.on-y.priority=200",
		 "pools.x.cpu=4", "workloads.high.cpu=6", "horizon=2h");
	cr_assert_str_eq(reason_of((size_t)job_of("high")),
			 "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient "
			 "nvidia.com/gpu. preemption: 0/2 nodes are available: 1 No preemption "
			 "victims found for incoming pod, 1 Preemption is not helpful for "
			 "scheduling..");
	cleanup();
	RUN_WITH(NODES, "workloads.on-x.priority=200", "workloads.on-y.priority=200",
		 "pools.x.cpu=4", "workloads.high.cpu=6", "horizon=2h", "kubernetes_version=1.33");
	cr_assert(strstr(reason_of((size_t)job_of("high")),
			 "preemption: 0/2 nodes are available: 2 No preemption victims found"));
}

/* Kueue governs a pod of a queue with quota: kube-scheduler's preemption
 * is not modelled for it (Kueue's is, quota.h). */
Test(preempt, a_pod_kueue_governs_is_left_to_kueue)
{
	RUN_WITH(NODES, "queues=[{name: q, quota: {nvidia.com/gpu: 16}}]", "workloads.on-x.queue=q",
		 "workloads.on-y.queue=q", "workloads.high.queue=q");
	cr_assert_eq(r.jobs[job_of("high")].start, 10 * SIM_HOUR);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_preempted"), 0, 1e-9);
}
