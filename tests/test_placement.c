/*
 * test_placement.c - kube-scheduler's filters, scores and pending reasons.
 *
 * Unit tests load tests/fixtures/placement-cases.yaml (five nodes: a100-0,
 * a100-1 with 4 GPUs in zone a; h100-0, h100-1 with 8 GPUs in zone b; spot-0
 * with 8 GPUs in zone b, tainted spot=true), change it with --set, fill nodes
 * by hand and ask placement where a pod lands, or why it cannot, comparing
 * the message character by character with kube-scheduler's.  Scenario tests
 * run scenarios/placement.yaml and small whole runs, and read the rows back
 * from SQLite.
 */
#include "gpuplan/placement.h"
#include "gpuplan/reasons.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"
#include "named_metric.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct scenario *sc;
static struct cluster c;
static struct placer pl;
static struct results r;
static bool placed, ran;
static uint32_t next_job = 1000;

#define TAINT                "1 node(s) had untolerated taint {spot: true}"
#define AFFINITY             "node(s) didn't match Pod's node affinity/selector"
#define SPREAD               "node(s) didn't match pod topology spread constraints"
/* DefaultPreemption's PostFilter message after a FitError (reasons.h). */
#define NO_VICTIMS           "No preemption victims found for incoming pod"
#define NOT_HELPFUL          "Preemption is not helpful for scheduling"
#define PREEMPTION(n, parts) " preemption: 0/" #n " nodes are available: " parts ".."

enum { A100_0, A100_1, H100_0, H100_1, SPOT_0 };

static void load(const char *file, const char *const *sets, size_t n)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(file, sets, n, &sc, &err), GP_OK, "%s", err.msg);
}

static void setup(const char *const *sets, size_t n)
{
	load("tests/fixtures/placement-cases.yaml", sets, n);
	cluster_init(&c, sc);
	placement_init(&pl, &c);
	placed = true;
}

static void cleanup(void)
{
	if (placed) {
		placement_free(&pl);
		cluster_free(&c);
		placed = false;
	}
	if (ran) {
		results_free(&r);
		ran = false;
	}
	scenario_free(sc);
	sc = NULL;
}

TestSuite(placement, .fini = cleanup);

#define SETUP(...)                                                                   \
	do {                                                                         \
		const char *const sets_[] = {"name=placement-cases", ##__VA_ARGS__}; \
		setup(sets_, sizeof sets_ / sizeof *sets_);                          \
	} while (0)

static struct pod_request request(void)
{
	const struct workload_spec *w = &sc->workloads[0];
	return (struct pod_request){0, w->request == REQUEST_GPUS ? w->gpus : 1, SIM_HOUR, true, 0};
}

/* The node the next pod of workload w lands on now; -1 when none. */
static int32_t where(void)
{
	int32_t nodes[16];
	struct pod_request pod = request();
	return placement_plan(&pl, &pod, 0, nodes, NULL) ? nodes[0] : -1;
}

/* kube-scheduler's message for the pod, which must not fit now. */
static const char *why(void)
{
	static char msg[1024];
	int32_t nodes[16];
	int32_t *counts = calloc(pl.n_reasons, sizeof *counts);
	struct pod_request pod = request();
	cr_assert_not(placement_plan(&pl, &pod, 0, nodes, counts), "the pod fits on node %d",
		      nodes[0]);
	reasons_format(msg, sizeof msg, (int64_t)c.n_nodes, (const char *const *)pl.reasons, counts,
		       pl.n_reasons);
	free(counts);
	return msg;
}

/* Takes `gpus` whole GPUs (and cpu cores) on node for some other work. */
static void occupy(int32_t node, int32_t gpus, double cpu)
{
	struct workload_spec other = {.name = "other",
				      .request = REQUEST_GPUS,
				      .gpus = gpus,
				      .gpu_busy = 1,
				      .sm_share = 1,
				      .cpu = cpu};
	struct cluster_grant p;
	cluster_take(&c, node, &other, gpus, next_job++, &p);
}

/* The pool of a node ("h100"), or "none": tied nodes are drawn (selectHost),
 * so a test names the pool where several nodes score the same. */
static const char *pool_of(int32_t node)
{
	return node < 0 ? "none" : sc->pools[c.nodes[node].pool].name;
}

/* Fills a node's GPUs. */
static void fill(int32_t node) { occupy(node, c.nodes[node].gpus, 0); }

/* Runs a pod of workload w on node, as the simulation would (spread counts). */
static void run_pod(int32_t node)
{
	struct pod_request pod = request();
	struct cluster_grant p;
	placement_take(&pl, &pod, &node, next_job++, &p);
}

/* --- the message format -------------------------------------------------------- */

Test(placement, format_is_kube_schedulers_fit_error)
{
	const char *texts[] = {"Insufficient nvidia.com/gpu", AFFINITY};
	int32_t counts[] = {1, 2};
	char buf[256];
	reasons_format(buf, sizeof buf, 3, texts, counts, 2);
	cr_assert_str_eq(buf, "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) "
			      "didn't match Pod's node affinity/selector.");
}

/*
 * The message kube-scheduler's default profile writes: the FitError, then
 * DefaultPreemption's PostFilter message, "preemption: " and a FitError over
 * the same nodes (plugins/defaultpreemption/default_preemption.go PostFilter;
 * framework/preemption/preemption.go Preempt: nodes not tried as candidates
 * get "Preemption is not helpful for scheduling"; SelectVictimsOnNode: "No
 * preemption victims found for incoming pod"), each FitError part closed by
 * FitError.Error()'s " %v." (framework/types.go), hence "..".  As
 * kube-scheduler prints it: "0/1 nodes are available: 1 Insufficient cpu.
 * preemption: 0/1 nodes are available: 1 No preemption victims found for
 * incoming pod..".  Unresolvable filters (taints, affinity, cordons) are not
 * helpful; NodeResourcesFit and a spread skew are Unschedulable, and gpuplan
 * evicts no lower-priority pod for the scheduler: no victims.
 */
Test(placement, fit_error_carries_the_preemption_message)
{
	const char *texts[] = {"Insufficient cpu", "node(s) had untolerated taint {spot: true}",
			       AFFINITY, "Insufficient memory", SPREAD};
	const uint8_t kinds[] = {PEND_CPU, PEND_TAINT, PEND_AFFINITY, PEND_MEMORY, PEND_SPREAD};
	char buf[512];
	int32_t one[] = {1, 0, 0, 0, 0};
	size_t n = reasons_format_fit_error(buf, sizeof buf, 1, texts, kinds, one, 5);
	cr_assert_str_eq(buf, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
			      "are available: 1 No preemption victims found for incoming pod..");
	cr_assert_eq(n, strlen(buf));
	/* Two nodes short of cpu and memory both (counted under each), one
	 * tainted, two off by affinity, one over the skew: 3 resolvable. */
	int32_t mixed[] = {2, 1, 2, 2, 1};
	reasons_format_fit_error(buf, sizeof buf, 6, texts, kinds, mixed, 5);
	cr_assert_str_eq(buf, "0/6 nodes are available: 1 node(s) didn't match pod topology spread "
			      "constraints, 1 node(s) had untolerated taint {spot: true}, 2 "
			      "Insufficient cpu, 2 Insufficient memory, 2 " AFFINITY "."
			      " preemption: 0/6 nodes are available: 3 " NO_VICTIMS
			      ", 3 " NOT_HELPFUL "..");
	int32_t rules[] = {0, 1, 3, 0, 0};
	reasons_format_fit_error(buf, sizeof buf, 4, texts, kinds, rules, 5);
	cr_assert_str_eq(buf, "0/4 nodes are available: 1 node(s) had untolerated taint {spot: "
			      "true}, 3 " AFFINITY ". preemption: 0/4 nodes are available: 4 "
			      "Preemption is not helpful for scheduling..");
	/* No node: ErrNoNodesAvailable, not a FitError, no PostFilter. */
	reasons_format_fit_error(buf, sizeof buf, 0, texts, kinds, one, 5);
	cr_assert_str_eq(buf, "no nodes available to schedule pods");
	/* Cut short like snprintf, with the full length returned. */
	char small[40];
	size_t need = reasons_format_fit_error(small, sizeof small, 1, texts, kinds, one, 5);
	cr_assert_eq(
		need,
		strlen("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
		       "nodes are available: 1 No preemption victims found for incoming pod.."));
	cr_assert_eq(strlen(small), sizeof small - 1);
}

/* Go's sort.Strings over "COUNT REASON": "10 ..." sorts before "2 ...". */
Test(placement, format_sorts_the_count_reason_strings_bytewise)
{
	const char *texts[] = {AFFINITY, "Insufficient nvidia.com/gpu", "Insufficient cpu",
			       "Insufficient memory"};
	int32_t counts[] = {2, 10, 0, 2};
	char buf[256];
	reasons_format(buf, sizeof buf, 12, texts, counts, 4);
	cr_assert_str_eq(buf, "0/12 nodes are available: 10 Insufficient nvidia.com/gpu, "
			      "2 Insufficient memory, 2 node(s) didn't match Pod's node "
			      "affinity/selector.");
}

Test(placement, format_reports_the_length_it_needs)
{
	const char *texts[] = {"Insufficient cpu"};
	int32_t counts[] = {4};
	char small[8];
	size_t need = reasons_format(small, sizeof small, 4, texts, counts, 1);
	cr_assert_eq(need, strlen("0/4 nodes are available: 4 Insufficient cpu."));
	cr_assert_str_eq(small, "0/4 nod");
}

/* --- NodeAffinity: node_selector, affinity, gpu_spec ------------------------------ */

Test(placement, node_selector_matches_the_implicit_product_label)
{
	SETUP("workloads.w.node_selector={nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}",
	      "workloads.w.gpus=4");
	cr_assert_eq(where(), A100_0);
	fill(A100_0);
	fill(A100_1);
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 2 Insufficient "
				"nvidia.com/gpu, 2 " AFFINITY ".");
}

Test(placement, a_pool_label_overrides_the_implicit_product)
{
	SETUP("pools.h100.labels={nvidia.com/gpu.product: custom-h100}",
	      "workloads.w.node_selector={nvidia.com/gpu.product: custom-h100}");
	cr_assert_eq(where(), H100_0);
	cleanup();
	SETUP("pools.h100.labels={nvidia.com/gpu.product: custom-h100}",
	      "workloads.w.node_selector={nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}");
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 " AFFINITY ".");
}

Test(placement, affinity_in_notin_exists_doesnotexist)
{
	SETUP("workloads.w.affinity=[{key: topology.kubernetes.io/zone, operator: In, values: [b]}]");
	cr_assert_eq(where(), H100_0);
	cleanup();
	SETUP("workloads.w.affinity=[{key: topology.kubernetes.io/zone, operator: NotIn, values: [b]}]");
	cr_assert_eq(where(), A100_0);
	cleanup();
	SETUP("workloads.w.affinity=[{key: rack, operator: NotIn, values: [r1]}]");
	cr_assert_eq(where(), A100_0, "NotIn matches nodes without the label");
	cleanup();
	SETUP("workloads.w.affinity=[{key: topology.kubernetes.io/zone, operator: Exists}]");
	cr_assert_eq(where(), A100_0);
	cleanup();
	SETUP("workloads.w.affinity=[{key: topology.kubernetes.io/zone, operator: DoesNotExist}]");
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 " AFFINITY ".");
}

Test(placement, affinity_requirements_are_anded_with_the_selector)
{
	SETUP("workloads.w.node_selector={topology.kubernetes.io/zone: b}",
	      "workloads.w.affinity=[{key: nvidia.com/gpu.product, operator: In, values: "
	      "[NVIDIA-A100-SXM4-80GB]}]");
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 " AFFINITY ".");
}

Test(placement, affinity_on_the_hostname_picks_nodes_one_by_one)
{
	SETUP("workloads.w.affinity=[{key: kubernetes.io/hostname, operator: In, values: [h100-1]}]");
	cr_assert_eq(where(), H100_1);
	fill(H100_1);
	cr_assert_str_eq(why(), "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, " TAINT
				", 3 " AFFINITY ".");
}

Test(placement, gpu_spec_is_a_gpu_model_constraint)
{
	SETUP("workloads.w.gpu_spec=[H100-80GB]");
	cr_assert_eq(where(), H100_0);
	cleanup();
	SETUP("workloads.w.gpu_spec=[L4]");
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 " AFFINITY ".");
}

/* --- TaintToleration ------------------------------------------------------------------ */

Test(placement, an_untolerated_taint_keeps_pods_off_an_idle_node)
{
	SETUP("workloads.w.gpus=8");
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 4 Insufficient nvidia.com/gpu.");
}

Test(placement, tolerations_equal_and_exists)
{
	SETUP("workloads.w.gpus=8",
	      "workloads.w.tolerations=[{key: spot, operator: Equal, value: \"true\", effect: NoSchedule}]");
	fill(H100_0);
	fill(H100_1);
	cr_assert_eq(where(), SPOT_0);
	cleanup();
	SETUP("workloads.w.gpus=8", "workloads.w.tolerations=[{operator: Exists}]");
	fill(H100_0);
	fill(H100_1);
	cr_assert_eq(where(), SPOT_0, "Exists without a key tolerates every taint");
	cleanup();
	SETUP("workloads.w.gpus=8", "workloads.w.tolerations=[{key: spot, operator: Exists}]");
	fill(H100_0);
	fill(H100_1);
	cr_assert_eq(where(), SPOT_0, "no effect: every effect");
}

Test(placement, a_toleration_must_match_value_and_effect)
{
	SETUP("workloads.w.gpus=8", "workloads.w.tolerations=[{key: spot, value: \"false\"}]");
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 4 Insufficient nvidia.com/gpu.");
	cleanup();
	SETUP("workloads.w.gpus=8",
	      "workloads.w.tolerations=[{key: spot, operator: Exists, effect: NoExecute}]");
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 4 Insufficient nvidia.com/gpu.");
}

Test(placement, no_execute_filters_like_no_schedule)
{
	SETUP("pools.spot.taints=[{key: spot, value: \"true\", effect: NoExecute}]",
	      "workloads.w.gpus=8");
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 4 Insufficient nvidia.com/gpu.");
}

/* PreferNoSchedule is a score: 100 + 3 x 100 on h100-0 against 100 + 3 x 0 on spot-0. */
Test(placement, prefer_no_schedule_is_a_penalty_not_a_filter)
{
	SETUP("pools.spot.taints=[{key: spot, value: \"true\", effect: PreferNoSchedule}]",
	      "workloads.w.gpus=8");
	cr_assert_eq(where(), H100_0);
	fill(H100_0);
	fill(H100_1);
	cr_assert_eq(where(), SPOT_0);
}

/* --- NodeResourcesFit: GPUs, MIG, cpu, memory ------------------------------------------- */

Test(placement, cpu_and_memory_are_checked_on_the_node)
{
	SETUP("workloads.w.cpu=40");
	cr_assert_str_eq(pool_of(where()), "h100", "32 cores on an A100 node are too few");
	cleanup();
	SETUP("workloads.w.cpu=100");
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 Insufficient cpu.");
	cleanup();
	/* A node short of two resources counts under both. */
	SETUP("workloads.w.memory=300GiB", "workloads.w.gpus=8");
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 2 Insufficient memory, "
				"4 Insufficient nvidia.com/gpu.");
}

/* The fullest node by GPUs has no cpu left: the search moves on within the bucket. */
Test(placement, a_node_short_of_cpu_is_passed_over)
{
	SETUP("workloads.w.cpu=8", "workloads.w.affinity=[{key: topology.kubernetes.io/zone, "
				   "operator: In, values: [a]}]");
	occupy(A100_0, 1, 30);
	cr_assert_eq(where(), A100_1);
	occupy(A100_1, 1, 30);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 2 Insufficient cpu, 2 " AFFINITY ".");
}

Test(placement, cpu_and_memory_come_back_on_release)
{
	SETUP("workloads.w.cpu=20", "workloads.w.memory=100GiB");
	struct pod_request pod = request();
	int32_t node = A100_0;
	struct cluster_grant p;
	placement_take(&pl, &pod, &node, 1, &p);
	cr_assert_float_eq(c.nodes[A100_0].cpu_free, 12, 1e-9);
	cr_assert_float_eq(c.nodes[A100_0].memory_free, 156.0 * 1024 * 1024 * 1024, 1);
	placement_release(&pl, 0, 1, &p);
	cr_assert_float_eq(c.nodes[A100_0].cpu_free, 32, 1e-9);
	cr_assert(cluster_consistent(&c));
}

Test(placement, a_mig_profile_is_its_own_resource)
{
	SETUP("pools.h100.sharing={mode: mig, layout: [3g.40gb, 3g.40gb]}",
	      "workloads.w.gpus={mig: 3g.40gb}", "workloads.w.vram=30GiB");
	cr_assert_str_eq(pool_of(where()), "h100");
	for (int i = 0; i < 32; i++)
		run_pod(H100_0 + i / 16);
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 Insufficient "
				"nvidia.com/mig-3g.40gb.");
}

Test(placement, vram_above_a_units_memory_is_reported)
{
	SETUP("pools.h100.sharing={mode: mps, replicas: 4}", "workloads.w.vram=30GiB",
	      "workloads.w.node_selector={topology.kubernetes.io/zone: b}");
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 2 " AFFINITY ", 2 node(s) had "
				"GPU units with less memory than the pod's VRAM.");
}

Test(placement, a_closed_window_makes_nodes_unschedulable)
{
	SETUP("workloads.w.node_selector={topology.kubernetes.io/zone: b}");
	c.pools[1].open = false;
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 2 " AFFINITY
				", 2 node(s) were unschedulable.");
	c.pools[1].open = true;
	c.pools[1].closes_at = 30 * SIM_MINUTE;
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 2 node(s) didn't have time "
				"before their window closes, 2 " AFFINITY ".");
}

/* --- scores ------------------------------------------------------------------------------- */

/* requested x 100 / capacity: h100-1 with 4 used scores (4 + 2) x 100 / 8 = 75,
 * an A100 node 2 x 100 / 4 = 50, h100-0 2 x 100 / 8 = 25. */
Test(placement, most_allocated_bin_packs_by_kube_schedulers_formula)
{
	SETUP("workloads.w.gpus=2");
	occupy(H100_1, 4, 0);
	cr_assert_eq(where(), H100_1);
}

/* (capacity - requested) x 100 / capacity: h100-0 75, A100 50, h100-1 25. */
Test(placement, least_allocated_spreads_by_kube_schedulers_formula)
{
	SETUP("workloads.w.gpus=2", "scheduler.scoring=LeastAllocated");
	occupy(H100_1, 4, 0);
	cr_assert_eq(where(), H100_0);
}

/* Equal scores: kube-scheduler's selectHost draws among the best nodes
 * (pkg/scheduler/schedule_one.go, reservoir sampling), here from the run's
 * seeded stream.  A 4-GPU pod scores 4 x 100 / 4 = 100 on either A100 node and
 * (4 + 4) x 100 / 8 = 100 on h100-1 with 4 GPUs taken; h100-0 scores 50. */
Test(placement, ties_are_drawn_among_the_best_nodes)
{
	SETUP("workloads.w.gpus=4");
	occupy(H100_1, 4, 0);
	int32_t seen[5] = {0};
	for (int i = 0; i < 300; i++)
		seen[where()]++;
	cr_assert_eq(seen[H100_0] + seen[SPOT_0], 0, "never a lower score");
	for (int n = A100_0; n <= H100_1; n += n == A100_1 ? 2 : 1)
		cr_assert(seen[n] > 60 && seen[n] < 140, "node %d drawn %d times of 300", n,
			  seen[n]);
	fill(A100_0);
	fill(A100_1);
	cr_assert_eq(where(), H100_1, "one best node: no draw");
}

/* The draws come from the scenario's seed: the same seed, the same nodes; another
 * seed, other nodes.  Three nodes tie (ties_are_drawn_among_the_best_nodes), so
 * two seeds that drew the same 40 nodes would do so with probability 3^-40: a
 * seed the placer ignored (one fixed stream) fails the last round. */
Test(placement, ties_are_reproducible_from_the_seed)
{
	const char *seeds[] = {"seed=1", "seed=1", "seed=2"};
	int32_t draws[3][40];
	for (int round = 0; round < 3; round++) {
		SETUP("workloads.w.gpus=4", seeds[round]);
		occupy(H100_1, 4, 0);
		for (int i = 0; i < 40; i++)
			draws[round][i] = where();
		cleanup();
	}
	int differ = 0;
	for (int i = 0; i < 40; i++) {
		cr_assert_eq(draws[1][i], draws[0][i], "seed 1, draw %d", i);
		differ += draws[2][i] != draws[0][i];
	}
	cr_assert_gt(differ, 0, "seeds 1 and 2 drew the same 40 nodes: the seed is ignored");
}

/* --- PodTopologySpread ------------------------------------------------------------------- */

Test(placement, do_not_schedule_spread_overrides_bin_packing)
{
	SETUP("workloads.w.topology_spread={key: topology.kubernetes.io/zone, max_skew: 1}");
	cr_assert_str_eq(pool_of(where()), "a100");
	run_pod(A100_0);
	cr_assert_str_eq(pool_of(where()), "h100", "zone a has one pod more than zone b");
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 2 Insufficient nvidia.com/gpu, "
			 "2 " SPREAD ".");
	run_pod(SPOT_0); /* as if it tolerated the taint: zone b has one pod too */
	cr_assert_str_eq(pool_of(where()), "a100");
}

Test(placement, nodes_without_the_key_fail_with_missing_required_label)
{
	SETUP("pools.h100.labels={topology.kubernetes.io/zone: b, rack: r1}",
	      "workloads.w.topology_spread={key: rack, max_skew: 1}");
	cr_assert_eq(where(), H100_0);
	fill(H100_0);
	fill(H100_1);
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 2 Insufficient nvidia.com/gpu, "
			 "2 " SPREAD " (missing required label).");
}

/* Per hostname, max_skew 1: one pod per node.  The tainted node counts as a
 * domain (nodeTaintsPolicy Ignore) and never gets a pod, so the least loaded
 * domain stays at 0 and a fifth pod cannot be placed. */
Test(placement, hostname_spread_counts_tainted_nodes_as_empty_domains)
{
	SETUP("workloads.w.topology_spread={key: kubernetes.io/hostname, max_skew: 1}");
	int32_t seen = 0;
	for (int i = 0; i < 4; i++) {
		int32_t node = where();
		cr_assert_geq(node, 0);
		cr_assert_not(seen >> node & 1, "node %d twice", node);
		seen |= 1 << node;
		run_pod(node);
	}
	cr_assert_str_eq(why(), "0/5 nodes are available: " TAINT ", 4 " SPREAD ".");
}

/* ScheduleAnyway scores: zone b scores 100 against zone a's 0 (weight 2),
 * more than MostAllocated's 50 against 12 (weight 1). */
Test(placement, schedule_anyway_prefers_the_emptier_domain_without_blocking)
{
	SETUP("workloads.w.topology_spread={key: topology.kubernetes.io/zone, "
	      "when_unsatisfiable: ScheduleAnyway}");
	run_pod(A100_0);
	cr_assert_str_eq(pool_of(where()), "h100");
	fill(H100_0);
	fill(H100_1);
	/* a100-0 scores 2 x 100 / 4 = 50 for GPUs, a100-1 25: no tie */
	cr_assert_eq(where(), A100_0, "a skew is allowed when nothing else fits");
}

/* --- gangs --------------------------------------------------------------------------------- */

Test(placement, a_gang_is_placed_whole_or_not_at_all)
{
	SETUP("workloads.w.gpus=8", "workloads.w.pods=2", "workloads.w.gang=true");
	int32_t nodes[4];
	struct pod_request pod = request();
	cr_assert(placement_plan(&pl, &pod, 0, nodes, NULL));
	cr_assert_eq(nodes[0] + nodes[1], H100_0 + H100_1, "one pod on each H100 node");
	cr_assert_str_eq(pool_of(nodes[0]), "h100");
	cr_assert_float_eq(c.allocated, 0, 1e-12, "a plan takes nothing");
	cleanup();
	SETUP("workloads.w.gpus=8", "workloads.w.pods=3", "workloads.w.gang=true");
	/* The third pod's reason, with the first two holding their nodes. */
	cr_assert_str_eq(why(),
			 "0/5 nodes are available: " TAINT ", 4 Insufficient nvidia.com/gpu.");
	cr_assert_float_eq(c.allocated, 0, 1e-12);
	cr_assert(cluster_consistent(&c));
}

Test(placement, a_gangs_pods_see_each_other)
{
	SETUP("workloads.w.gpus=4", "workloads.w.pods=4", "workloads.w.gang=true");
	int32_t nodes[4];
	struct pod_request pod = request();
	cr_assert(placement_plan(&pl, &pod, 0, nodes, NULL));
	cr_assert_eq(nodes[0] + nodes[1], A100_0 + A100_1, "two pods fill the A100 nodes");
	cr_assert_str_eq(pool_of(nodes[2]), "h100");
	cr_assert_eq(nodes[3], nodes[2], "the fourth pod packs next to the third");
	struct cluster_grant p[4];
	placement_take(&pl, &pod, nodes, 7, p);
	cr_assert_float_eq(c.allocated, 16, 1e-12);
	placement_release(&pl, 0, 7, p);
	cr_assert_float_eq(c.allocated, 0, 1e-12);
	cr_assert(cluster_consistent(&c));
}

/* --- whole runs ------------------------------------------------------------------------------ */

static void run(const char *file, const char *const *sets, size_t n)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	load(file, sets, n);
	results_init(&r);
	ran = true;
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK);
}

#define RUN(file, ...)                                                             \
	do {                                                                       \
		const char *const sets_[] = {"name=placement-run", ##__VA_ARGS__}; \
		run(file, sets_, sizeof sets_ / sizeof *sets_);                    \
	} while (0)

static const char *reason_of(size_t job)
{
	int32_t id = r.jobs[job].reason;
	return id >= 0 ? r.reason_texts[id] : NULL;
}

static const struct pending_reason *row(const char *scope, size_t k)
{
	for (size_t i = 0; i < r.n_pending_reasons; i++)
		if (!strcmp(r.pending_reasons[i].scope, scope) && k-- == 0)
			return &r.pending_reasons[i];
	return NULL;
}

static const char *node_of(size_t job) { return r.node_names[r.jobs[job].node]; }

#define TRAIN_WHY                                                                                  \
	"0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint " \
	"{dedicated: inference}, 2 node(s) didn't match Pod's node affinity/selector." PREEMPTION( \
		4, "1 " NO_VICTIMS ", 3 " NOT_HELPFUL)
#define BATCH_WHY                                                                             \
	"0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: inference}, 3 " \
	"Insufficient nvidia.com/gpu." PREEMPTION(4, "1 " NOT_HELPFUL ", 3 " NO_VICTIMS)

/* The example: A100 selector with idle H100s, and an untolerated taint. */
Test(placement, the_placement_scenario_waits_for_the_reasons_it_gives)
{
	RUN("scenarios/placement.yaml");
	cr_assert_eq(r.n_jobs, 8);
	/* the two H100 nodes tie for the third batch job: drawn */
	const char *nodes[] = {"a100-0", "a100-0", "a100-0", "a100-0",
			       "h100-",  "h100-",  "h100-",  "reserved-0"};
	const sim_time starts[] = {0, 0, 2 * SIM_HOUR, 2 * SIM_HOUR, 0, 0, SIM_HOUR, 0};
	cr_assert_str_neq(node_of(4), node_of(5));
	for (size_t i = 0; i < 8; i++) {
		cr_assert(!strncmp(node_of(i), nodes[i], strlen(nodes[i])), "job %zu", i);
		cr_assert_eq(r.jobs[i].start, starts[i], "job %zu", i);
	}
	cr_assert_null(reason_of(0));
	cr_assert_str_eq(reason_of(2), TRAIN_WHY);
	cr_assert_str_eq(reason_of(3), TRAIN_WHY);
	cr_assert_str_eq(reason_of(6), BATCH_WHY);
	cr_assert_null(reason_of(7));
	cr_assert_eq(r.n_pending_reasons, 4);
	const struct pending_reason *a = row("all", 0), *b = row("all", 1);
	cr_assert_str_eq(a->reason, TRAIN_WHY);
	cr_assert_float_eq(a->pending_seconds, 2 * 7200, 1e-9, "two pods, two hours each");
	cr_assert_eq(a->pods, 2);
	cr_assert_str_eq(b->reason, BATCH_WHY);
	cr_assert_float_eq(b->pending_seconds, 3600, 1e-9);
	cr_assert_eq(b->pods, 1);
	cr_assert_str_eq(row("train", 0)->reason, TRAIN_WHY);
	cr_assert_float_eq(row("train", 0)->pending_seconds, 14400, 1e-9);
	cr_assert_str_eq(row("batch", 0)->reason, BATCH_WHY);
	cr_assert_null(row("serve", 0));
}

/* Two gangs of two 8-GPU pods: the second waits for the first, as one job
 * with two pods' worth of pending time.  From Kubernetes 1.34 (the default)
 * the two 4-GPU A100 nodes, too small for an 8-GPU pod even empty, are
 * UnschedulableAndUnresolvable (PR #131345): "Preemption is not helpful". */
Test(placement, a_gang_job_waits_and_starts_whole)
{
	RUN("tests/fixtures/placement-cases.yaml", "workloads.w.gpus=8", "workloads.w.pods=2",
	    "workloads.w.gang=true", "workloads.w.count=2");
	cr_assert_eq(r.n_jobs, 2);
	cr_assert_eq(r.jobs[0].start, 0);
	cr_assert_eq(r.jobs[1].start, SIM_HOUR);
	cr_assert_float_eq(named_metric(&r, "all", "peak_allocated_gpus"), 16, 1e-9);
	cr_assert_float_eq(named_metric(&r, "all", "peak_demand_gpus"), 32, 1e-9);
	cr_assert_float_eq(named_metric(&r, "all", "gpu_hours_allocated"), 32, 1e-9);
	cr_assert_str_eq(reason_of(1), "0/5 nodes are available: " TAINT
				       ", 4 Insufficient nvidia.com/gpu." PREEMPTION(
					       5, "2 " NO_VICTIMS ", 3 " NOT_HELPFUL));
	cr_assert_float_eq(row("all", 0)->pending_seconds, 7200, 1e-9, "two pods for an hour");
	cr_assert_eq(row("all", 0)->pods, 2);
}

Test(placement, pods_without_gang_are_jobs_of_their_own)
{
	RUN("tests/fixtures/placement-cases.yaml", "workloads.w.gpus=8", "workloads.w.pods=3");
	cr_assert_eq(r.n_jobs, 3);
	cr_assert_eq(r.jobs[0].start, 0);
	cr_assert_eq(r.jobs[1].start, 0);
	cr_assert_eq(r.jobs[2].start, SIM_HOUR);
	cr_assert_float_eq(named_metric(&r, "all", "jobs_submitted"), 3, 1e-9);
}

/* One 20-core pod per 32-core A100 node; the others wait for cpu. */
Test(placement, pods_wait_for_cpu_with_its_reason)
{
	RUN("tests/fixtures/placement-cases.yaml", "workloads.w.count=4", "workloads.w.cpu=20",
	    "workloads.w.node_selector={topology.kubernetes.io/zone: a}");
	cr_assert_eq(r.jobs[2].start, SIM_HOUR);
	cr_assert_eq(r.jobs[3].start, SIM_HOUR);
	cr_assert_str_eq(reason_of(3),
			 "0/5 nodes are available: " TAINT ", 2 Insufficient cpu, 2 " AFFINITY
			 "." PREEMPTION(5, "2 " NO_VICTIMS ", 3 " NOT_HELPFUL));
	cr_assert_float_eq(row("w", 0)->pending_seconds, 7200, 1e-9);
	cr_assert_eq(row("w", 0)->pods, 2);
}

/* Spread per zone in a whole run: pods alternate zones, then wait. */
Test(placement, a_spread_constraint_holds_through_a_run)
{
	RUN("tests/fixtures/placement-cases.yaml", "workloads.w.count=3", "workloads.w.gpus=4",
	    "workloads.w.topology_spread={key: topology.kubernetes.io/zone, max_skew: 1}");
	cr_assert(!strncmp(node_of(0), "a100-", 5));
	cr_assert(!strncmp(node_of(1), "h100-", 5));
	/* the third ties at 100 on the other A100 node and beside the second */
	cr_assert(!strcmp(node_of(2), node_of(1)) ||
			  (!strncmp(node_of(2), "a100-", 5) && strcmp(node_of(2), node_of(0))),
		  "third on %s", node_of(2));
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(r.jobs[i].start, 0);
}

/* A class blocked by static rules keeps its reason for jobs that join later. */
Test(placement, jobs_that_join_a_blocked_class_get_its_reason)
{
	RUN("tests/fixtures/placement-cases.yaml", "workloads.w.count=3",
	    "workloads.w.arrival={process: poisson, rate: 1/h}", "workloads.w.gpu_spec=[L4]",
	    "horizon=10h");
	cr_assert_eq(r.n_jobs, 3);
	const struct pending_reason *all = row("all", 0);
	cr_assert_str_eq(all->reason, "0/5 nodes are available: " TAINT ", 4 " AFFINITY
				      "." PREEMPTION(5, "5 " NOT_HELPFUL));
	cr_assert_eq(all->pods, 3);
	double expected = 0;
	for (size_t i = 0; i < 3; i++) {
		cr_assert_str_eq(reason_of(i), all->reason);
		expected += sim_seconds(10 * SIM_HOUR - r.jobs[i].submit);
	}
	cr_assert_float_eq(all->pending_seconds, expected, 1e-6);
}

Test(placement, reasons_reach_the_database)
{
	RUN("scenarios/placement.yaml");
	char path[] = "/tmp/gpuplan-placement-XXXXXX";
	cr_assert_not_null(mkdtemp(path));
	char db[128];
	snprintf(db, sizeof db, "%s/p.db", path);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(store_open(db, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_write_run(st, sc, &r, NULL, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *h;
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	sqlite3_stmt *s;
	cr_assert_eq(
		sqlite3_prepare_v2(
			h,
			"SELECT (SELECT reason FROM jobs WHERE job_id = 6), "
			"(SELECT count(*) FROM jobs WHERE reason IS NULL), "
			"(SELECT sum(pending_seconds) FROM pending_reasons WHERE scope = 'all'), "
			"(SELECT pods FROM pending_reasons WHERE scope = 'train')",
			-1, &s, NULL),
		SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(s, 0), BATCH_WHY);
	cr_assert_eq(sqlite3_column_int(s, 1), 5);
	cr_assert_float_eq(sqlite3_column_double(s, 2), 18000, 1e-9);
	cr_assert_eq(sqlite3_column_int(s, 3), 2);
	sqlite3_finalize(s);
	sqlite3_close(h);
	unlink(db);
	char wal[160];
	snprintf(wal, sizeof wal, "%s-wal", db);
	unlink(wal);
	snprintf(wal, sizeof wal, "%s-shm", db);
	unlink(wal);
	rmdir(path);
}

/* --- consistency ------------------------------------------------------------------------ */

/* Without cpu or memory requests a node fails one filter only, so a failed
 * search's message counts every node exactly once, whatever the fill. */
Test(placement, a_failure_counts_every_node_once)
{
	const char *const variants[][2] = {
		{"workloads.w.gpus=4", "workloads.w.gang=false"},
		{"workloads.w.node_selector={topology.kubernetes.io/zone: b}",
		 "workloads.w.gpus=8"},
		{"workloads.w.affinity=[{key: kubernetes.io/hostname, operator: NotIn, values: [a100-1]}]",
		 "workloads.w.gpus=2"},
		{"workloads.w.topology_spread={key: kubernetes.io/hostname, max_skew: 2}",
		 "workloads.w.gpus=1"},
		{"workloads.w.topology_spread={key: topology.kubernetes.io/zone, max_skew: 1}",
		 "workloads.w.gpus=3"},
		{"workloads.w.pods=3", "workloads.w.gang=true"},
	};
	unsigned seed = 12345;
	for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
		SETUP(variants[v][0], variants[v][1]);
		bool failed = false;
		for (int round = 0; round < 40 && !failed; round++) {
			int32_t nodes[8], counts[64] = {0};
			struct pod_request pod = request();
			if (placement_plan(&pl, &pod, 0, nodes, counts)) {
				if (sc->workloads[0].spread.key && rand_r(&seed) % 2)
					run_pod(nodes[0]);
				else
					occupy(nodes[0], 1, 0);
				continue;
			}
			int32_t sum = 0;
			for (size_t k = 0; k < pl.n_reasons; k++)
				sum += counts[k];
			cr_assert_eq(sum, 5, "variant %zu round %d: %d nodes counted", v, round,
				     sum);
			failed = true;
		}
		cr_assert(failed, "variant %zu never filled up", v);
		cr_assert(cluster_consistent(&c));
		cleanup();
	}
}

/* --- scoring: kube-scheduler's noderesources plugins ----------------------------------- */

/*
 * The formulas of kubernetes/kubernetes pkg/scheduler/framework/plugins/
 * noderesources: least_allocated.go ((capacity - requested) x 100 /
 * capacity, 0 when over), most_allocated.go (requested x 100 / capacity,
 * requested capped), both averaged by weight in integers over the resources
 * the node has; requested_to_capacity_ratio.go (the shape's broken line,
 * helper.BuildBrokenLinearFunction, scores x 10, only positive scores
 * averaged, rounded); balanced_allocation.go ((1 - |f1 - f2| / 2) x 100,
 * truncated, fractions capped at 1).
 */
Test(placement, fit_scores_are_kube_schedulers_integers)
{
	struct scoring_spec least = {.type = SCORING_LEAST_ALLOCATED,
				     .weight = {[SCORE_CPU] = 1, [SCORE_MEMORY] = 1}};
	/* cpu 8000m of 64000m: 56000 x 100 / 64000 = 87 (87.5 truncated); memory
	 * 64 of 512 GiB: 87; (87 + 87) / 2 = 87 */
	int64_t req[3] = {0, 8000, 64LL << 30}, alloc[3] = {8000, 64000, 512LL << 30};
	cr_assert_eq(placement_fit_score(&least, req, alloc), 87);
	/* 16000m: 75; 128 GiB: 75 */
	int64_t req2[3] = {0, 16000, 128LL << 30};
	cr_assert_eq(placement_fit_score(&least, req2, alloc), 75);
	/* weights 3 (cpu) and 1 (memory): cpu 100 - 10 = 90, memory 50: (270 + 50) / 4 = 80 */
	struct scoring_spec w31 = {.type = SCORING_LEAST_ALLOCATED,
				   .weight = {[SCORE_CPU] = 3, [SCORE_MEMORY] = 1}};
	int64_t req3[3] = {0, 100, 50}, alloc3[3] = {0, 1000, 100};
	cr_assert_eq(placement_fit_score(&w31, req3, alloc3), 80);
	/* over capacity: Least 0, Most 100 */
	struct scoring_spec most = {.type = SCORING_MOST_ALLOCATED, .weight = {[SCORE_GPU] = 1}};
	int64_t over[3] = {9000, 0, 0};
	cr_assert_eq(placement_fit_score(&most, over, alloc), 100);
	cr_assert_eq(
		placement_fit_score(&least, (int64_t[3]){0, 70000, 1}, (int64_t[3]){0, 64000, 0}),
		0, "memory absent from the node is left out");
	/* GPUs in thousandths: 3 of 8 taken, plus the pod's 1: 4000 x 100 / 8000 = 50 */
	cr_assert_eq(placement_fit_score(&most, (int64_t[3]){4000, 0, 0}, alloc), 50);
	/* no resource the node has: 0 */
	cr_assert_eq(placement_fit_score(&least, req, (int64_t[3]){8000, 0, 0}), 0);
}

Test(placement, requested_to_capacity_ratio_follows_its_shape)
{
	/* The bin-packing shape of kube's docs: {0, 0}, {100, 10}: utilization
	 * 37 -> 3.7 x 10 = 37; a peaked shape {0,0},{50,10},{100,0} at 75: 100 +
	 * (0 - 100) x (75 - 50) / 50 = 50. */
	struct scoring_spec s = {.type = SCORING_REQUESTED_TO_CAPACITY_RATIO,
				 .weight = {[SCORE_GPU] = 1},
				 .n_shape = 2,
				 .shape = {{0, 0}, {100, 10}}};
	cr_assert_eq(placement_fit_score(&s, (int64_t[3]){2960, 0, 0}, (int64_t[3]){8000, 0, 0}),
		     37);
	struct scoring_spec peak = {.type = SCORING_REQUESTED_TO_CAPACITY_RATIO,
				    .weight = {[SCORE_GPU] = 1, [SCORE_CPU] = 1},
				    .n_shape = 3,
				    .shape = {{0, 0}, {50, 10}, {100, 0}}};
	cr_assert_eq(placement_fit_score(&peak, (int64_t[3]){6000, 0, 0}, (int64_t[3]){8000, 0, 0}),
		     50);
	/* cpu at 25% scores 50, GPU at 75% 50: round(100 / 2) = 50; cpu at 0
	 * scores 0 and is left out of the average: GPU alone, 50 */
	cr_assert_eq(
		placement_fit_score(&peak, (int64_t[3]){6000, 250, 0}, (int64_t[3]){8000, 1000, 0}),
		50);
	cr_assert_eq(
		placement_fit_score(&peak, (int64_t[3]){6000, 0, 0}, (int64_t[3]){8000, 1000, 0}),
		50);
	/* over capacity: the shape at 100 */
	cr_assert_eq(placement_fit_score(&peak, (int64_t[3]){9000, 0, 0}, (int64_t[3]){8000, 0, 0}),
		     0);
}

Test(placement, balanced_allocation_is_one_minus_the_deviation)
{
	/* cpu 0.125, memory 0.125: 100; cpu 0.5, memory 0.125: 1 - 0.1875 =
	 * 0.8125 -> 81; cpu over capacity counts 1: |1 - 0| / 2 -> 50 */
	cr_assert_eq(placement_balanced_score((int64_t[2]){8, 64}, (int64_t[2]){64, 512}, 2), 100);
	cr_assert_eq(placement_balanced_score((int64_t[2]){32, 64}, (int64_t[2]){64, 512}, 2), 81);
	cr_assert_eq(placement_balanced_score((int64_t[2]){90, 0}, (int64_t[2]){64, 512}, 2), 50);
	cr_assert_eq(placement_balanced_score((int64_t[2]){32, 64}, (int64_t[2]){64, 0}, 2), 100,
		     "one resource: no deviation");
}

/* A pod without cpu or memory requests counts 100m and 200 MiB for scores
 * (kubernetes pkg/scheduler/util/pod_resources.go, GetNonzeroRequests).
 * Pools of 1 core and 1 GiB: a node holding one such pod scores, for the
 * next, cpu (1000 - 200) x 100 / 1000 = 80 and memory (1024 - 400) x 100 /
 * 1024 = 60 (60.9): 70; an empty node 90 and 80 (80.4): 85.  Without the
 * defaults both nodes would score 100 and tie. */
Test(placement, pods_without_requests_count_kubes_nonzero_defaults)
{
	SETUP("scheduler.scoring={type: LeastAllocated}", "pools.a100.cpu=1",
	      "pools.a100.memory=1GiB",
	      "workloads.w.node_selector={topology.kubernetes.io/zone: a}");
	for (int i = 0; i < 2; i++) { /* 4 GPUs a node: 2 x 2 pods, then the checks */
		run_pod(A100_0);
		cr_assert_eq(where(), A100_1, "after %d pods on a100-0", i + 1);
		run_pod(A100_1);
		int32_t n = where();
		cr_assert(n == A100_0 || n == A100_1, "a tie again");
	}
}

static double queue_of(const char *workload)
{
	for (size_t i = 0; i < r.n_jobs; i++)
		if (!strcmp(sc->workloads[r.jobs[i].workload].name, workload))
			return sim_seconds(r.jobs[i].start - r.jobs[i].submit);
	return -1;
}

/*
 * Issue 15's case, by hand (tests/fixtures/stock-scoring.yaml).  Default
 * scoring, LeastAllocated over cpu and memory (fit.go's default
 * scoringStrategy, weight 1 each) plus BalancedAllocation, weights 1 and 1
 * (apis/config/v1/default_plugins.go); TaintToleration adds 300 everywhere.
 * First small pod: both nodes score 87 + 100 (cpu 8/64, memory 64/512:
 * balanced) and tie; one is drawn.  Second: the used node scores 75 + 100,
 * the empty one 87 + 100: the small pods land on different nodes, each node
 * has 7 free GPUs, and the 8-GPU pod waits until the first ends: 7,200 s.
 * MostAllocated over GPUs: the second small pod scores 2 x 100 / 8 = 25 (+
 * 100 balanced) on the used node against 12 + 100: both pack on one node and
 * the 8-GPU pod starts on the other at 0.
 */
Test(placement, stock_scoring_spreads_and_a_multi_gpu_job_waits)
{
	RUN("tests/fixtures/stock-scoring.yaml");
	cr_assert_str_neq(node_of(0), node_of(1), "the small pods spread");
	cr_assert_float_eq(queue_of("big"), 7200, 1e-9);
	cleanup();
	RUN("tests/fixtures/stock-scoring.yaml", "scheduler.scoring=MostAllocated");
	cr_assert_str_eq(node_of(0), node_of(1), "the small pods pack");
	cr_assert_float_eq(queue_of("big"), 0, 1e-9);
	cleanup();
	/* every seed: the tie of the first pod moves nodes, not the figures */
	for (int seed = 1; seed <= 5; seed++) {
		char set[32];
		snprintf(set, sizeof set, "seed=%d", seed);
		RUN("tests/fixtures/stock-scoring.yaml", set);
		cr_assert_float_eq(queue_of("big"), 7200, 1e-9, "seed %d", seed);
		cleanup();
	}
}

/* kube's scoringStrategy shape, and the aliases. */
Test(placement, scoring_strategy_takes_kubes_shape)
{
	SETUP("scheduler.scoring={type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 2}, "
	      "{name: cpu, weight: 1}]}");
	const struct scoring_spec *s = &sc->scheduler.scoring;
	cr_assert_eq(s->type, SCORING_MOST_ALLOCATED);
	cr_assert_eq(s->weight[SCORE_GPU], 2);
	cr_assert_eq(s->weight[SCORE_CPU], 1);
	cr_assert_eq(s->weight[SCORE_MEMORY], 0, "the list replaces the default");
	char name[96];
	scenario_scoring_name(s, name, sizeof name);
	cr_assert_str_eq(name, "MostAllocated(nvidia.com/gpu:2,cpu:1)");
	cleanup();
	SETUP("scheduler.scoring={type: RequestedToCapacityRatio, resources: [{name: nvidia.com/gpu}], "
	      "requestedToCapacityRatio: {shape: [{utilization: 0, score: 10}, {utilization: 100, score: 0}]}}");
	s = &sc->scheduler.scoring;
	cr_assert_eq(s->type, SCORING_REQUESTED_TO_CAPACITY_RATIO);
	cr_assert_eq(s->weight[SCORE_GPU], 1, "weight defaults to 1");
	cr_assert_eq(s->n_shape, 2);
	cr_assert_eq(s->shape[0].score, 10);
	/* a falling shape spreads: a 4-GPU pod goes to an empty H100 node (50%
	 * used after it: score 5 x 10 = 50) rather than fill an A100 (100%: 0) */
	cr_assert_str_eq(pool_of(where()), "h100");
	cleanup();
	SETUP("scheduler.scoring=LeastAllocated");
	scenario_scoring_name(&sc->scheduler.scoring, name, sizeof name);
	cr_assert_str_eq(name, "LeastAllocated");
}

/* --- sampling: percentageOfNodesToScore ------------------------------------------ */

/*
 * kube-scheduler's numFeasibleNodesToFind (kubernetes/kubernetes,
 * pkg/scheduler/schedule_one.go; the cases of its TestNumFeasibleNodesToFind
 * in schedule_one_test.go first): below minFeasibleNodesToFind (100) nodes,
 * all; else the percentage, adaptive when 0: 50 - nodes / 125, at least 5;
 * at least 100 nodes.
 */
Test(placement, nodes_to_find_is_kubes_num_feasible_nodes_to_find)
{
	cr_assert_eq(placement_nodes_to_find(0, 10), 10);
	cr_assert_eq(placement_nodes_to_find(40, 10), 10);
	cr_assert_eq(placement_nodes_to_find(0, 1000), 420); /* 50 - 8 = 42% */
	cr_assert_eq(placement_nodes_to_find(40, 1000), 400);
	cr_assert_eq(placement_nodes_to_find(0, 6000), 300); /* 50 - 48 = 2%: 5% */
	cr_assert_eq(placement_nodes_to_find(40, 6000), 2400);
	cr_assert_eq(placement_nodes_to_find(0, 99), 99);
	cr_assert_eq(placement_nodes_to_find(0, 200), 100); /* 49% of 200 = 98: 100 */
	cr_assert_eq(placement_nodes_to_find(50, 200), 100);
	cr_assert_eq(placement_nodes_to_find(0, 12500), 625); /* 5% */
	cr_assert_eq(placement_nodes_to_find(1, 12500), 125);
	cr_assert_eq(placement_nodes_to_find(1, 5000), 100); /* 50: at least 100 */
	cr_assert_eq(placement_nodes_to_find(100, 12500), 12500);
}

/* 200 nodes: a100-0, a100-1 (ranks 0, 1), h100-0 .. h100-196 (ranks 2 .. 198)
 * and spot-0 (rank 199, tainted: rejected); at 50% kube looks for 100
 * feasible nodes of the 199. */
#define SAMPLED_200 "pools.h100.nodes=197", "scheduler.percentage_of_nodes_to_score=50"

/*
 * findNodesThatPassFilters starts at nextStartNodeIndex, stops at the first
 * feasible node beyond 100, scores only the 100 found, and nextStartNodeIndex
 * moves on by the nodes processed (schedule_one.go).  a100-1 holds 2 GPUs: a
 * 1-GPU pod scores (2 + 1) x 100 / 4 = 75 there, 1 x 100 / 4 = 25 on a100-0,
 * 1 x 100 / 8 = 12 on an H100 (MostAllocated).
 *  1. From rank 0: ranks 0 .. 99 found, rank 100 is the 101st feasible: the
 *     pod goes to a100-1, the best; the index moves by 100 to 100.
 *  2. From 100: ranks 100 .. 198 (99 nodes), spot-0 rejected, a100-0 the
 *     100th, a100-1 the 101st.  a100-1 would score (3 + 1) x 100 / 4 = 100,
 *     the best of all, but it is not among the nodes found: a100-0 (25) takes
 *     the pod, and the index moves by 101 (wrapping) to 1.
 *  3. From 1: a100-1 is found first and takes the pod (100); rank 101 is the
 *     101st: the index is 101.
 * With a cpu request (1 core: BalancedAllocation, 98 on an A100, 99 on an
 * H100 as 1/32 and 1/64 of cpu against no memory) nodes are found and scored
 * one by one instead of as groups by free GPUs, with the same outcome.
 */
Test(placement, a_search_scores_the_nodes_it_found_and_the_rotation_moves_on)
{
	const char *cpu[] = {"workloads.w.cpu=0", "workloads.w.cpu=1"};
	for (int v = 0; v < 2; v++) {
		SETUP(SAMPLED_200, cpu[v]);
		occupy(A100_1, 2, 0);
		cr_assert_eq(c.n_ready, 200);
		cr_assert_eq(placement_next_start(&pl), 0);
		int32_t n = where();
		cr_assert_eq(n, A100_1, "%s", cpu[v]);
		cr_assert_eq(placement_next_start(&pl), 0, "a plan alone does not move it");
		run_pod(n);
		cr_assert_eq(placement_next_start(&pl), 100, "%s", cpu[v]);
		n = where();
		cr_assert_eq(n, A100_0, "the best node found, not a100-1 (%s)", cpu[v]);
		run_pod(n);
		cr_assert_eq(placement_next_start(&pl), 1, "%s", cpu[v]);
		n = where();
		cr_assert_eq(n, A100_1, "%s", cpu[v]);
		run_pod(n);
		cr_assert_eq(placement_next_start(&pl), 101, "%s", cpu[v]);
		cleanup();
	}
}

/* The nodes rejected after the 100th feasible one are processed too: with
 * ranks 100 .. 149 full, the 101st feasible node is rank 150, and the index
 * moves by 100 feasible + 50 rejected. */
Test(placement, rejected_nodes_before_the_search_ends_count_as_processed)
{
	SETUP(SAMPLED_200);
	for (int32_t n = 100; n < 150; n++)
		fill(n);
	run_pod(where());
	cr_assert_eq(placement_next_start(&pl), 150);
}

/*
 * With no more feasible nodes than kube looks for, every one is scored: ranks
 * 2 .. 100 full leave a100-0, a100-1 and ranks 101 .. 198, 100 nodes.  Rank
 * 198 with 7 GPUs taken scores (7 + 1) x 100 / 8 = 100, the best: it takes
 * the pod, and the index stays (kube processed all 200 nodes).  With one
 * feasible node more (rank 100 free) the search stops at rank 198, the 101st
 * feasible: it is not scored, and an A100 node (25) takes the pod.
 */
Test(placement, few_feasible_nodes_are_all_scored_as_without_sampling)
{
	for (int more = 0; more < 2; more++) {
		SETUP(SAMPLED_200);
		for (int32_t n = 2; n <= (more ? 99 : 100); n++)
			fill(n);
		occupy(198, 7, 0);
		int32_t n = where();
		run_pod(n);
		if (!more) {
			cr_assert_eq(n, 198);
			cr_assert_eq(placement_next_start(&pl), 0);
		} else {
			cr_assert_str_eq(pool_of(n), "a100");
			cr_assert_eq(placement_next_start(&pl), 198);
		}
		cleanup();
	}
}

/* Under 100 nodes, or at 100%, kube scores every feasible node: the best of
 * the cluster wins and the index never moves. */
Test(placement, small_clusters_and_100_percent_score_every_node)
{
	SETUP("scheduler.percentage_of_nodes_to_score=1");
	occupy(H100_1, 7, 0);
	run_pod(where());
	cr_assert_eq(c.nodes[H100_1].allocated, 8, "5 nodes: all scored");
	cr_assert_eq(placement_next_start(&pl), 0);
	cleanup();
	SETUP("pools.h100.nodes=197", "scheduler.percentage_of_nodes_to_score=100");
	occupy(198, 7, 0);
	cr_assert_eq(where(), 198);
	run_pod(198);
	cr_assert_eq(placement_next_start(&pl), 0);
}

/*
 * A pool with more keys with room than a walk ORs bitsets for
 * (CLUSTER_WALK_LEVELS, 16) has its keys walked one by one instead of
 * tallied as the sample found them; the best node is the same either way.
 * h100 nodes of G = 16 or 20 GPUs, h100-k with k GPUs taken (k < G): G keys
 * have room for a 1-GPU pod among the 100 nodes found from rank 0.
 * MostAllocated: h100-(G - 1) scores (G - 1 + 1) x 100 / G = 100, the only
 * best; once it is full, h100-(G - 2) with (G - 1) x 100 / G = 93 or 95.
 */
Test(placement, a_sampled_pool_with_many_keys_with_room_gives_its_fullest_node)
{
	const char *gpus[] = {"pools.h100.gpus_per_node=16", "pools.h100.gpus_per_node=20"};
	for (int v = 0; v < 2; v++) {
		SETUP(SAMPLED_200, gpus[v]);
		int32_t g = c.nodes[H100_0].gpus;
		for (int32_t k = 1; k < g; k++)
			occupy(H100_0 + k, k, 0);
		cr_assert_eq(where(), H100_0 + g - 1, "%s", gpus[v]);
		occupy(H100_0 + g - 1, 1, 0); /* full now; the rotation stays */
		cr_assert_eq(where(), H100_0 + g - 2, "then the next fullest (%s)", gpus[v]);
		cleanup();
	}
}

/* A gang's pods are searched one after another, each from where the one
 * before left the index (as in the first test: a100-1, then a100-0 from rank
 * 100); the index moves when the gang is taken. */
Test(placement, a_gangs_pods_move_the_rotation_in_turn)
{
	SETUP(SAMPLED_200, "workloads.w.pods=2", "workloads.w.gang=true");
	occupy(A100_1, 2, 0);
	int32_t nodes[2];
	struct pod_request pod = request();
	cr_assert(placement_plan(&pl, &pod, 0, nodes, NULL));
	cr_assert_eq(nodes[0], A100_1);
	cr_assert_eq(nodes[1], A100_0);
	cr_assert_eq(placement_next_start(&pl), 0);
	struct cluster_grant g[2];
	placement_take(&pl, &pod, nodes, next_job++, g);
	cr_assert_eq(placement_next_start(&pl), 1);
}

/* The paper's policies score every node: its simulator sets
 * percentageOfNodesToScore: 100 (hkust-adsl/kubernetes-scheduler-simulator,
 * example/test-scheduler-config.yaml); an explicit value still applies. */
Test(placement, gpu_policies_score_every_node_unless_told)
{
	SETUP("pools.h100.nodes=197", "scheduler.gpu_policy=gpu-packing");
	cr_assert_eq(pl.percentage, 100);
	run_pod(where());
	cr_assert_eq(placement_next_start(&pl), 0);
	cleanup();
	SETUP(SAMPLED_200, "scheduler.gpu_policy=gpu-packing");
	cr_assert_eq(pl.percentage, 50);
	run_pod(where());
	cr_assert_eq(placement_next_start(&pl), 100, "ranks 0 .. 99 found, rank 100 the 101st");
}

/* A ScheduleAnyway spread scores the nodes found like any other score. */
Test(placement, schedule_anyway_scores_only_the_nodes_found)
{
	SETUP(SAMPLED_200, "workloads.w.topology_spread={key: topology.kubernetes.io/zone, "
			   "max_skew: 1, when_unsatisfiable: ScheduleAnyway}");
	run_pod(where());
	cr_assert_eq(placement_next_start(&pl), 100);
}

/* A node that left the scheduler's view (cordoned, or an autoscaler's slot
 * that is down) is no candidate, for the searches that score node by node
 * too: h100-1, fullest and so the best for gpu-packing or MostAllocated,
 * goes down with 7 GPUs taken. */
Test(placement, a_node_out_of_service_is_never_chosen)
{
	const char *how[] = {"scheduler.gpu_policy=gpu-packing",
			     "workloads.w.topology_spread={key: topology.kubernetes.io/zone, "
			     "max_skew: 1, when_unsatisfiable: ScheduleAnyway}"};
	for (int v = 0; v < 2; v++) {
		SETUP(how[v]);
		occupy(H100_1, 7, 0);
		cr_assert_eq(where(), H100_1, "%s", how[v]);
		cluster_node_down(&c, H100_1);
		cr_assert_neq(where(), H100_1, "%s", how[v]);
		cleanup();
	}
}

/*
 * A pod that requests cpu and memory is scored by its node's class: on
 * pools that keep class groups (cluster.h, "Class groups": 128 slots or
 * more) a sampled search counts each class's nodes among those found
 * instead of visiting them.  200 pods of 2 GPUs, 4 cores and 16 GiB on
 * nodes occupied at random go to the same nodes, and move the rotation the
 * same way, as when the groups are frozen and every node is visited: with
 * 200 A100 nodes and 400 H100 nodes (both grouped), and with 100 A100 nodes
 * (walked node by node) before the 400 grouped ones.
 */
Test(placement, a_search_by_class_groups_chooses_as_node_by_node)
{
	const char *a100[] = {"pools.a100.nodes=200", "pools.a100.nodes=100"};
	for (int k = 0; k < 2; k++) {
		int32_t chosen[2][200], start[2][200];
		for (int v = 0; v < 2; v++) {
			SETUP(a100[k], "pools.h100.nodes=400",
			      "scheduler.percentage_of_nodes_to_score=10", "workloads.w.gpus=2",
			      "workloads.w.cpu=4", "workloads.w.memory=16GiB");
			cr_assert_eq(c.pools[0].groups.on, k == 0);
			cr_assert(c.pools[1].groups.on);
			for (size_t p = 0; v == 1 && p < c.n_pools; p++)
				c.pools[p].groups.on = false; /* frozen: searches visit each node */
			uint32_t seed = 99;
			for (int32_t node = 0; node < (int32_t)c.n_nodes; node++) {
				seed = seed * 1103515245u + 12345u;
				uint32_t gpus = (seed >> 8) % (uint32_t)(c.nodes[node].gpus + 1);
				if (gpus)
					occupy(node, (int32_t)gpus, (double)((seed >> 16) % 3 * 8));
			}
			for (int i = 0; i < 200; i++) {
				chosen[v][i] = where();
				start[v][i] = (int32_t)placement_next_start(&pl);
				if (chosen[v][i] >= 0)
					run_pod(chosen[v][i]);
			}
			if (v == 0)
				cr_assert(c.pools[1].groups.on, "the groups were used throughout");
			cleanup();
		}
		for (int i = 0; i < 200; i++) {
			cr_assert_eq(chosen[0][i], chosen[1][i], "%s, pod %d", a100[k], i);
			cr_assert_eq(start[0][i], start[1][i], "%s, pod %d", a100[k], i);
		}
		cr_assert_geq(chosen[0][199], 0, "the cluster had room for every pod");
	}
}

/* Nodes the run's jobs ran on, each counted once. */
static int nodes_used(void)
{
	int n = 0;
	for (size_t i = 0; i < r.n_jobs; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = r.jobs[k].node == r.jobs[i].node;
		n += !seen;
	}
	return n;
}

/*
 * A whole run on 200 nodes: 300 one-GPU pods at 00:00, MostAllocated.
 * Scoring every node packs them: 4 + 4 on the A100 nodes, then 292 on 37
 * H100 nodes (36 full, one with 4): 39 nodes.  Sampling 50% finds the 100
 * nodes after the rotating index, which moves by about 100 every pod, so
 * pods also start half-empty nodes the full search would not have chosen:
 * more nodes, and the same ones for the same seed.
 */
Test(placement, a_sampled_run_packs_less_and_repeats_itself)
{
	RUN("tests/fixtures/placement-cases.yaml", "pools.h100.nodes=197", "workloads.w.count=300",
	    "scheduler.percentage_of_nodes_to_score=100");
	cr_assert_eq(r.n_jobs, 300);
	cr_assert_eq(nodes_used(), 39);
	cleanup();
	int32_t first[300];
	for (int round = 0; round < 2; round++) {
		RUN("tests/fixtures/placement-cases.yaml", "pools.h100.nodes=197",
		    "workloads.w.count=300", "scheduler.percentage_of_nodes_to_score=50");
		cr_assert_gt(nodes_used(), 39);
		for (size_t i = 0; i < r.n_jobs; i++) {
			if (round == 0)
				first[i] = r.jobs[i].node;
			else
				cr_assert_eq(r.jobs[i].node, first[i], "job %zu", i);
		}
		cleanup();
	}
}
