/*
 * test_flavors.c - Kueue's ResourceFlavors: a ClusterQueue's quota per
 * (flavor, resource), flavors tried in order under flavorFungibility, a
 * flavor's node taints deciding whether a job may use it, and its node
 * labels and tolerations steering the pods (github.com/kubernetes-sigs/
 * kueue, pkg/scheduler/flavorassigner/flavorassigner.go: assignFlavors,
 * findFlavorForPodSets, checkFlavorForPodSets, shouldTryNextFlavor,
 * isPreferred, fitsResourceQuota).  Figures are worked by hand in the
 * comments; before flavors were modelled, a queue's flavors were added
 * into one quota and their labels dropped.
 */
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"

#include <criterion/criterion.h>
#include <string.h>

#include "run.h"

TestSuite(flavors, .fini = cleanup);

#define RUN RUN_WITH
#define H   SIM_HOUR
#define F   "tests/fixtures/kueue-flavors.yaml"

static const char *reason(size_t job)
{
	return r.jobs[job].reason >= 0 ? r.reason_texts[r.jobs[job].reason] : "";
}

static const char *flavor(size_t job)
{
	return r.jobs[job].flavor >= 0 ? sc->flavors[r.jobs[job].flavor].name : "";
}

/* The pool of the node the job ran on. */
static const char *pool(size_t job)
{
	cr_assert_geq(r.jobs[job].node, 0, "job %zu was placed", job);
	const char *node = r.node_names[r.jobs[job].node];
	for (size_t p = 0; p < sc->n_pools; p++)
		if (!strncmp(node, sc->pools[p].name, strlen(sc->pools[p].name)))
			return sc->pools[p].name;
	return "";
}

/*
 * Flavors are not added together.  A gang of 3 pods x 2 GPUs asks for 6
 * nvidia.com/gpu; each flavor's maximum capacity is its nominal 4 (no
 * cohort), so both are NoFit and the job is never admitted, though the two
 * nodes have 8 GPUs.  The message lists both flavors' reasons, sorted and
 * joined by ", " (Status.Message).  With one quota of 8 it was admitted at
 * 00:00 and ran 3 + 3 GPUs... on the two nodes.
 */
Test(flavors, a_job_above_every_flavor_is_never_admitted)
{
	RUN(F);
	cr_assert_eq(r.jobs[0].start, SIM_NEVER);
	cr_assert_str_eq(reason(0),
			 "couldn't assign flavors to pod set main: insufficient quota for "
			 "nvidia.com/gpu in flavor a100, previously considered podsets requests "
			 "(0) + current podset request (6) > maximum capacity (4), insufficient "
			 "quota for nvidia.com/gpu in flavor h100, previously considered podsets "
			 "requests (0) + current podset request (6) > maximum capacity (4)");
	cr_assert_str_eq(r.status, "stalled");
}

/*
 * Flavors are tried in order, and the assigned flavor's nodeLabels become
 * the pods' node selector.  Four 2-GPU jobs at 00:00 for 1 h: jobs 0 and 1
 * take a100's 4 (and land on the A100 node, which their labels select),
 * jobs 2 and 3 find a100 used up ("insufficient unused quota", no
 * preemption policy: NoCandidates) and take h100.  Without the labels, the
 * scheduler's spreading (LeastAllocated) would put job 1 on the H100 node.
 */
Test(flavors, flavors_are_tried_in_order_and_steer_the_pods)
{
	RUN(F, "workloads.w.pods=1", "workloads.w.count=4");
	for (size_t j = 0; j < 4; j++) {
		cr_assert_eq(r.jobs[j].start, 0, "job %zu starts at once", j);
		const char *want = j < 2 ? "a100" : "h100";
		cr_assert_str_eq(flavor(j), want, "job %zu's flavor", j);
		cr_assert_str_eq(pool(j), want, "job %zu's node", j);
	}
}

/*
 * A fifth job waits for quota, not nodes: at 00:00 both flavors are used
 * up; at 01:00 the four end and job 4 gets a100, the first flavor, ending
 * at 02:00.
 */
Test(flavors, a_job_waits_for_the_first_flavor_freed)
{
	RUN(F, "workloads.w.pods=1", "workloads.w.count=5");
	cr_assert_eq(r.jobs[4].start, 1 * H);
	cr_assert_str_eq(flavor(4), "a100");
	cr_assert_str_eq(pool(4), "a100");
}

#define COHORT                                                                                  \
	"queues=[{name: q, cohort: c, resource_groups: [{covered_resources: [nvidia.com/gpu], " \
	"flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominal_quota: 2}]}, "       \
	"{name: h100, resources: [{name: nvidia.com/gpu, nominal_quota: 4}]}]}]}, "             \
	"{name: other, cohort: c, resource_groups: [{covered_resources: [nvidia.com/gpu], "     \
	"flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominal_quota: 2}]}]}]}]"

/*
 * flavorFungibility.whenCanBorrow.  q has a100: 2 and h100: 4; other lends
 * its a100: 2 in cohort c.  A 3-GPU job fits a100 by borrowing 1 (available
 * 2 + 2 = 4 >= 3; borrowing level 1).  Under MayStopSearch (the default) the
 * search stops there: a100.  Under TryNextFlavor it goes on to h100, which
 * fits without borrowing and is preferred (isPreferred: same mode, lower
 * borrowing level): h100.  Before, the cohort's a100 and h100 were one pool
 * of 8, and no flavor was chosen at all.
 */
Test(flavors, when_can_borrow_decides_between_borrowing_and_the_next_flavor)
{
	RUN(F, COHORT, "workloads.w.pods=1", "workloads.w.gpus=3");
	cr_assert_str_eq(flavor(0), "a100");
	cr_assert_str_eq(pool(0), "a100");
	cleanup();
	RUN(F, COHORT, "queues.q.flavor_fungibility={when_can_borrow: TryNextFlavor}",
	    "workloads.w.pods=1", "workloads.w.gpus=3");
	cr_assert_str_eq(flavor(0), "h100");
	cr_assert_str_eq(pool(0), "h100");
}

#define PREEMPT                                                                                   \
	"workloads=[{name: low, queue: q, arrival: {at: \"00:00\"}, gpus: 4, duration: 10h}, "    \
	"{name: high, queue: q, priority: 10, arrival: {at: \"01:00\"}, gpus: 4, duration: 1h}]", \
		"queues.q.preemption={within_cluster_queue: LowerPriority}"

/*
 * flavorFungibility.whenCanPreempt.  low (4 GPUs, 00:00-10:00) holds a100;
 * at 01:00 high (priority 10, 4 GPUs) could preempt it there (Preempt mode:
 * the oracle finds low, of q itself).  Under TryNextFlavor (the default)
 * the search goes on: h100 fits, and a fitting flavor is preferred, so high
 * runs 01:00-02:00 on the H100 node and low is untouched.  Under
 * MayStopSearch high stays on a100 and preempts low at 01:00; low is
 * admitted again at once on h100 (4 free) and runs 01:00-11:00.
 */
Test(flavors, when_can_preempt_decides_between_preempting_and_the_next_flavor)
{
	RUN(F, PREEMPT);
	cr_assert_str_eq(flavor(1), "h100");
	cr_assert_eq(r.jobs[1].start, 1 * H);
	cr_assert_eq(r.jobs[0].preemptions, 0);
	cr_assert_eq(r.jobs[0].end, 10 * H);
	cleanup();
	RUN(F, PREEMPT, "queues.q.flavor_fungibility={when_can_preempt: MayStopSearch}");
	cr_assert_str_eq(flavor(1), "a100");
	cr_assert_eq(r.jobs[1].start, 1 * H);
	cr_assert_str_eq(pool(1), "a100");
	cr_assert_eq(r.jobs[0].preemptions, 1);
	cr_assert_str_eq(flavor(0), "h100");
	cr_assert_eq(r.jobs[0].end, 11 * H);
}

#define TAINTED                                                                              \
	"pools.h100.taints=[{key: dedicated, value: infer, effect: NoSchedule}]",            \
		"resource_flavors.h100.node_taints=[{key: dedicated, value: infer, effect: " \
		"NoSchedule}]",                                                              \
		"workloads.w.pods=1", "workloads.w.gpus=4", "workloads.w.count=2"

/*
 * A flavor's nodeTaints the job does not tolerate rule it out
 * (checkFlavorForPodSets; Go prints the corev1.Taint value in braces).  Two
 * 4-GPU jobs: job 0 takes a100; job 1 cannot use h100 and waits for a100
 * until 01:00.  With the flavor's tolerations (which Kueue also adds to the
 * pods it admits), job 1 takes h100 at 00:00 and its pod tolerates the
 * H100 node's taint.
 */
Test(flavors, node_taints_rule_a_flavor_out_and_its_tolerations_are_added)
{
	RUN(F, TAINTED);
	cr_assert_eq(r.jobs[1].start, 1 * H);
	cr_assert_str_eq(flavor(1), "a100");
	cleanup();
	RUN(F, TAINTED,
	    "resource_flavors.h100.tolerations=[{key: dedicated, operator: Exists, effect: "
	    "NoSchedule}]");
	cr_assert_eq(r.jobs[1].start, 0);
	cr_assert_str_eq(flavor(1), "h100");
	cr_assert_str_eq(pool(1), "h100");
}

/* The reason a job waits when every flavor is ruled out by its taints. */
Test(flavors, an_untolerated_flavor_taint_is_kueues_reason)
{
	RUN(F, TAINTED,
	    "queues.q.resource_groups=[{covered_resources: [nvidia.com/gpu], flavors: "
	    "[{name: h100, resources: [{name: nvidia.com/gpu, nominal_quota: 4}]}]}]");
	cr_assert_eq(r.jobs[0].start, SIM_NEVER);
	cr_assert_str_eq(reason(0), "couldn't assign flavors to pod set main: untolerated taint "
				    "{dedicated infer NoSchedule <nil>} in flavor h100");
}

/* A job whose node selector contradicts a flavor's labels skips it
 * (flavorSelector keeps the keys the flavor labels). */
Test(flavors, a_selector_that_contradicts_a_flavor_skips_it)
{
	RUN(F, "workloads.w.pods=1", "workloads.w.gpus=1",
	    "workloads.w.node_selector={nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}");
	cr_assert_str_eq(flavor(0), "h100");
	cr_assert_str_eq(pool(0), "h100");
}

/* The plain quota: form is one resource group of flavor "default". */
Test(flavors, a_plain_quota_is_the_default_flavor)
{
	RUN(F, "queues=[{name: q, quota: {nvidia.com/gpu: 4}}]", "workloads.w.pods=1");
	cr_assert_str_eq(flavor(0), "default");
}

/* Kueue's validation of resource groups, as located input errors. */
Test(flavors, resource_groups_are_validated)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	struct scenario *bad = NULL;
	const char *unknown[] = {"queues.q.resource_groups=[{covered_resources: [nvidia.com/gpu], "
				 "flavors: [{name: v100, resources: [{name: nvidia.com/gpu, "
				 "nominal_quota: 4}]}]}]"};
	cr_assert_eq(scenario_load(F, unknown, 1, &bad, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "unknown flavor 'v100'"), "%s", err.msg);
	const char *order[] = {"queues.q.resource_groups=[{covered_resources: [nvidia.com/gpu], "
			       "flavors: [{name: a100, resources: [{name: cpu, nominal_quota: "
			       "4}]}]}]"};
	cr_assert_eq(scenario_load(F, order, 1, &bad, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "resource cpu where covered_resources has nvidia.com/gpu"), "%s",
		  err.msg);
	const char *both[] = {"queues.q.quota={nvidia.com/gpu: 4}"};
	cr_assert_eq(scenario_load(F, both, 1, &bad, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "quota beside resource_groups"), "%s", err.msg);
}
