/* test_cluster.c - free-GPU buckets, placement scoring and pool windows. */
#include "gpuplan/cluster.h"
#include "gpuplan/placement.h"
#include "gpuplan/units.h"

#include <criterion/criterion.h>
#include <string.h>

static struct pool_spec pools[2];
static struct scenario sc;

/* Two pools: "a" 3 nodes x 4 GPUs, "b" 2 nodes x 8 GPUs. */
static void two_pools(void)
{
	memset(pools, 0, sizeof pools);
	memset(&sc, 0, sizeof sc);
	pools[0] = (struct pool_spec){
		.name = "a", .nodes = 3, .gpus_per_node = 4, .gpu = catalog_gpu("A100-80GB")};
	pools[1] = (struct pool_spec){
		.name = "b", .nodes = 2, .gpus_per_node = 8, .gpu = catalog_gpu("H100-80GB")};
	sc.pools = pools;
	sc.n_pools = 2;
}

TestSuite(cluster, .init = two_pools);

Test(cluster, starts_empty_with_the_capacity_of_its_pools)
{
	struct cluster c;
	cluster_init(&c, &sc);
	cr_assert_eq(c.n_nodes, 5);
	cr_assert_eq(c.capacity, 28);
	cr_assert_eq(c.allocated, 0);
	cr_assert_eq(cluster_max_free(&c, 0), 4);
	cr_assert_eq(cluster_max_free(&c, 1), 8);
	char *name = cluster_node_name(&c, 4);
	cr_assert_str_eq(name, "b-1");
	free(name);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

static struct workload_spec pod(int32_t gpus)
{
	return (struct workload_spec){
		.name = "w", .request = REQUEST_GPUS, .gpus = gpus, .gpu_busy = 1, .sm_share = 1};
}

Test(cluster, most_allocated_packs_onto_the_fullest_node)
{
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = pod(3);
	struct cluster_grant grant;
	cluster_take(&c, 1, &w, 3, 7, &grant); /* node a-1 keeps 1 free GPU */
	cr_assert_eq(grant.gpu_mask, 0x7);
	cr_assert_float_eq(grant.equivalent, 3, 1e-12);
	cr_assert_eq(cluster_find(&c, 0, &w, 1, SCORING_MOST_ALLOCATED), 1);
	cr_assert_eq(cluster_find(&c, 0, &w, 2, SCORING_MOST_ALLOCATED), 0,
		     "lowest full-enough node");
	cr_assert_eq(cluster_find(&c, 0, &w, 1, SCORING_LEAST_ALLOCATED), 0);
	cr_assert_eq(cluster_find(&c, 0, &w, 5, SCORING_MOST_ALLOCATED), -1, "wider than the node");
	cr_assert_eq(c.gpus[c.nodes[1].first_gpu].n_tenants, 1);
	cr_assert_eq(GPU_TENANTS(&c.gpus[c.nodes[1].first_gpu])[0].job, 7);
	cluster_release(&c, 7, &grant);
	cr_assert_float_eq(c.allocated, 0, 1e-12);
	cr_assert_eq(c.gpus[c.nodes[1].first_gpu].n_tenants, 0);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

Test(cluster, takes_the_lowest_free_gpus_and_gives_them_back)
{
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = pod(2);
	struct cluster_grant a, b, d;
	cluster_take(&c, 3, &w, 2, 1, &a);
	cluster_take(&c, 3, &w, 3, 2, &b);
	cr_assert_eq(a.gpu_mask, 0x03);
	cr_assert_eq(b.gpu_mask, 0x1c);
	cluster_release(&c, 1, &a);
	cr_assert_eq(c.nodes[3].untouched, 0xe3, "GPUs 0, 1 back; 5 .. 7 never taken");
	cluster_take(&c, 3, &w, 1, 3, &d);
	cr_assert_eq(d.gpu_mask, 0x01);
	cr_assert_eq(c.nodes[3].untouched, 0xe2);
	cr_assert_float_eq(c.pools[1].allocated, 4, 1e-12);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/* Tenants: the first inline, then an array that grows at 4, 8, 16 ... and
 * keeps them, whatever order they leave in, as each pod's own units. */
Test(cluster, a_gpu_keeps_every_tenant_as_they_come_and_go)
{
	pools[0].sharing = (struct sharing){.mode = SHARING_TIME_SLICING, .replicas = 20};
	pools[0].gpus_per_node = 1; /* the 20 replicas of one GPU */
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = pod(1);
	struct cluster_grant g[20];
	for (uint32_t job = 0; job < 20; job++)
		cluster_take(&c, 0, &w, 1, job, &g[job]);
	cr_assert_eq(c.gpus[0].n_tenants, 20);
	for (uint32_t job = 0; job < 20; job += 3) /* 7 leave, from everywhere */
		cluster_release(&c, job, &g[job]);
	for (uint32_t job = 0; job < 20; job += 3) /* and come back */
		cluster_take(&c, 0, &w, 1, 100 + job, &g[job]);
	const struct tenant *t = GPU_TENANTS(&c.gpus[0]);
	uint32_t seen = 0, back = 0;
	for (uint16_t k = 0; k < c.gpus[0].n_tenants; k++) {
		cr_assert_eq(t[k].units, 1);
		if (t[k].job >= 100)
			back++;
		else
			seen |= UINT32_C(1) << t[k].job;
	}
	cr_assert_eq(c.gpus[0].n_tenants, 20);
	cr_assert_eq(back, 7);
	cr_assert_eq(seen, 0xFFFFF & ~UINT32_C(0x49249), "jobs 0, 3 ... 18 left");
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/* The device plugin's default allocation policy for replicated GPUs,
 * "distributed": the GPUs with the fewest replicas allocated first, ties to
 * the lowest (k8s-device-plugin internal/rm/allocate.go; its ties go by map
 * order). */
Test(cluster, time_slicing_replicas_spread_over_the_nodes_gpus)
{
	pools[0].sharing = (struct sharing){.mode = SHARING_TIME_SLICING, .replicas = 4};
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = pod(1);
	struct cluster_grant p[6];
	for (uint32_t job = 0; job < 4; job++) {
		cluster_take(&c, 0, &w, 1, job, &p[job]);
		cr_assert_eq(p[job].gpu_mask, UINT64_C(1) << job, "one replica a GPU first");
	}
	cr_assert_float_eq(p[0].equivalent, 0.25, 1e-12);
	cluster_release(&c, 2, &p[2]);
	cluster_take(&c, 0, &w, 1, 4, &p[4]);
	cr_assert_eq(p[4].gpu_mask, 0x4, "the GPU a replica left has the most free");
	cluster_take(&c, 0, &w, 2, 5, &p[5]);
	cr_assert_eq(p[5].gpu_mask, 0x3, "two replicas on two GPUs, the lowest of the ties");
	cr_assert_eq(c.gpus[0].n_tenants, 2);
	cr_assert_eq(c.gpus[2].n_tenants, 1);
	/* 16 replicas per node: 6 used, the node still offers a replica on 4 GPUs. */
	cr_assert_eq(cluster_find(&c, 0, &w, 4, SCORING_MOST_ALLOCATED), 0);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

Test(cluster, milli_shares_best_fit_on_one_gpu)
{
	pools[0].sharing = (struct sharing){.mode = SHARING_FRACTIONAL};
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = {
		.request = REQUEST_MILLI, .milli = 600, .gpu_busy = 1, .sm_share = 1};
	struct cluster_grant a, b, d;
	cluster_take(&c, 0, &w, 1, 1, &a);
	w.milli = 300;
	cluster_take(&c, 0, &w, 1, 2, &b);
	cr_assert_eq(b.gpu_mask, a.gpu_mask, "300 milli fits beside 600 on the same GPU");
	w.milli = 500;
	cluster_take(&c, 0, &w, 1, 3, &d);
	cr_assert_neq(d.gpu_mask, a.gpu_mask, "500 milli does not fit in the 100 left");
	cr_assert_float_eq(c.pools[0].allocated, 1.4, 1e-12);
	struct workload_spec whole = pod(4);
	cr_assert_eq(cluster_find(&c, 0, &whole, 3, SCORING_MOST_ALLOCATED), 1,
		     "node 0 has 2 untouched GPUs, node 1 has 4");
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

Test(cluster, mig_instances_of_the_layout)
{
	static const struct mig_profile *layout[3];
	const struct gpu_type *a100 = catalog_gpu("A100-80GB");
	layout[0] = layout[1] = catalog_mig_profile(a100, "3g.40gb");
	layout[2] = catalog_mig_profile(a100, "1g.10gb");
	pools[0].sharing = (struct sharing){.mode = SHARING_MIG, .layout = layout, .n_layout = 3};
	pools[0].nodes = 1;
	pools[0].gpus_per_node = 1;
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = {
		.request = REQUEST_MIG, .mig_profile = "3g.40gb", .gpu_busy = 1, .sm_share = 1};
	struct cluster_grant a, b;
	cluster_take(&c, 0, &w, 1, 1, &a);
	cluster_take(&c, 0, &w, 1, 2, &b);
	cr_assert_eq(a.mig_slot, 0);
	cr_assert_eq(b.mig_slot, 1);
	cr_assert_float_eq(a.equivalent, 3.0 / 7, 1e-12);
	cr_assert_eq(cluster_find(&c, 0, &w, 1, SCORING_MOST_ALLOCATED), -1,
		     "both 3g instances taken");
	w.mig_profile = "1g.10gb";
	cr_assert_eq(cluster_find(&c, 0, &w, 1, SCORING_MOST_ALLOCATED), 0);
	cluster_release(&c, 1, &a);
	w.mig_profile = "3g.40gb";
	cr_assert_eq(cluster_find(&c, 0, &w, 1, SCORING_MOST_ALLOCATED), 0);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

Test(cluster, placement_scores_across_pools)
{
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = pod(4);
	struct workload_spec wl[1] = {w};
	sc.workloads = wl;
	sc.n_workloads = 1;
	struct placer pl;
	placement_init(&pl, &c);
	struct pod_request req = {0, 4, SIM_HOUR, true, 0};
	/* scoring: MostAllocated (the alias: over nvidia.com/gpu, weight 1).  Empty:
	 * a 4-GPU pod fills an "a" node (score 100) rather than half a "b" node
	 * (50); the three "a" nodes tie, and the tie is drawn (selectHost). */
	sc.scheduler.scoring =
		(struct scoring_spec){.type = SCORING_MOST_ALLOCATED, .weight = {[SCORE_GPU] = 1}};
	cr_assert_eq(c.nodes[placement_find(&pl, &req, 0)].pool, 0);
	/* a placer keeps its scores for the run, whose scoring is fixed: a new
	 * placer for each scoring */
	sc.scheduler.scoring.type = SCORING_LEAST_ALLOCATED;
	placement_free(&pl);
	placement_init(&pl, &c);
	cr_assert_eq(c.nodes[placement_find(&pl, &req, 0)].pool, 1,
		     "spread picks an emptiest node: (8 - 4) x 100 / 8 = 50 against 0");
	sc.scheduler.scoring.type = SCORING_MOST_ALLOCATED;
	placement_free(&pl);
	placement_init(&pl, &c);
	c.pools[0].open = false;
	cr_assert_eq(c.nodes[placement_find(&pl, &req, 0)].pool, 1, "a closed pool serves nothing");
	c.pools[1].closes_at = 30 * SIM_MINUTE;
	cr_assert_eq(placement_find(&pl, &req, 0), -1, "an hour does not fit before the close");
	req.duration = 30 * SIM_MINUTE;
	cr_assert_eq(c.nodes[placement_find(&pl, &req, 0)].pool, 1,
		     "ending exactly at the close fits");
	placement_free(&pl);
	cluster_free(&c);
}

static struct window noon_to_five[] = {{12 * 3600, 17 * 3600, WINDOW_EVERY_DAY, {0}}};

Test(cluster, window_state_follows_a_daily_window)
{
	int64_t start;
	cr_assert_eq(units_rfc3339("2026-10-27T00:00:00Z", &start), 0);
	pools[0].windows = noon_to_five;
	pools[0].n_windows = 1;
	sim_time next;
	cr_assert_not(cluster_window_state(&pools[0], start, 0, &next));
	cr_assert_eq(next, 12 * SIM_HOUR);
	cr_assert(cluster_window_state(&pools[0], start, 12 * SIM_HOUR, &next));
	cr_assert_eq(next, 17 * SIM_HOUR);
	cr_assert_not(cluster_window_state(&pools[0], start, 17 * SIM_HOUR, &next));
	cr_assert_eq(next, 36 * SIM_HOUR, "opens again the next day");
}

Test(cluster, overnight_windows_and_weekdays)
{
	int64_t start; /* 2026-10-27 is a Tuesday */
	cr_assert_eq(units_rfc3339("2026-10-27T00:00:00Z", &start), 0);
	struct window night[] = {{22 * 3600, 6 * 3600, 1u << 1 /* tuesday */, {0}}};
	pools[0].windows = night;
	pools[0].n_windows = 1;
	sim_time next;
	cr_assert_not(cluster_window_state(&pools[0], start, 3 * SIM_HOUR, &next),
		      "Monday night's window is not a Tuesday window");
	cr_assert_eq(next, 22 * SIM_HOUR);
	cr_assert(cluster_window_state(&pools[0], start, 23 * SIM_HOUR, &next));
	cr_assert_eq(next, 30 * SIM_HOUR, "closes at 06:00 on Wednesday");
	cr_assert_not(cluster_window_state(&pools[0], start, 30 * SIM_HOUR, &next));
	cr_assert_eq(next, (7 * 24 + 22) * SIM_HOUR, "next Tuesday");
}

Test(cluster, touching_windows_merge)
{
	int64_t start;
	cr_assert_eq(units_rfc3339("2026-10-27T00:00:00Z", &start), 0);
	struct window two[] = {{8 * 3600, 12 * 3600, WINDOW_EVERY_DAY, {0}},
			       {12 * 3600, 18 * 3600, WINDOW_EVERY_DAY, {0}}};
	pools[0].windows = two;
	pools[0].n_windows = 2;
	sim_time next;
	cr_assert(cluster_window_state(&pools[0], start, 9 * SIM_HOUR, &next));
	cr_assert_eq(next, 18 * SIM_HOUR);
}

/* The check recomputes each node's key from its GPUs and compares: a drifted
 * index is reported, with the node, and left as it was (Lua's hard tests
 * check the same way: report, never repair). */
Test(cluster, consistency_check_reports_drift_and_repairs_nothing)
{
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w = pod(3);
	struct cluster_grant grant;
	cluster_take(&c, 1, &w, 3, 7, &grant); /* node a-1: 1 untouched GPU */
	char why[160] = "";
	cr_assert(cluster_pool_consistent(&c, 0, why, sizeof why), "%s", why);
	c.pools[0].whole.key[1] = 4; /* the index claims a-1 is untouched */
	cr_assert_not(cluster_pool_consistent(&c, 0, why, sizeof why));
	cr_expect(strstr(why, "whole index: node 1 has key 4 and should have 1"), "%s", why);
	cr_assert_not(cluster_consistent(&c));
	cr_assert_eq(c.pools[0].whole.key[1], 4, "nothing repaired");
	c.pools[0].whole.key[1] = 1;
	cr_assert(cluster_pool_consistent(&c, 0, why, sizeof why), "%s", why);
	c.pools[0].whole.count[4]++; /* a count without its node */
	cr_assert_not(cluster_pool_consistent(&c, 0, why, sizeof why));
	cr_expect(strstr(why, "whole index: level 4 counts"), "%s", why);
	c.pools[0].whole.count[4]--;
	c.pools[0].whole.block[4 * c.pools[0].whole.blocks]++; /* a block count without it */
	cr_assert_not(cluster_pool_consistent(&c, 0, why, sizeof why));
	cr_expect(strstr(why, "whole index: level 4 block 0 counts"), "%s", why);
	c.pools[0].whole.block[4 * c.pools[0].whole.blocks]--;
	c.pools[1].allocated += 0.5; /* a total that drifted */
	cr_assert_not(cluster_pool_consistent(&c, 1, why, sizeof why));
	cr_expect(strstr(why, "pool 1: allocated 0.5"), "%s", why);
	c.pools[1].allocated -= 0.5;
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/*
 * Time-sliced replicas stack when fewer GPUs have one free: the NVIDIA
 * device plugin advertises R x GPUs replicas and "simply creates R
 * references to each GPU and indiscriminately hands them out"
 * (NVIDIA/k8s-device-plugin README.md, "With CUDA Time-Slicing"), and
 * kube-scheduler counts only the node's free replicas.  Pool a: 4 GPUs x 2
 * replicas = 8 per node.  Six replicas: one on each GPU, then one more on
 * each of the two first GPUs with the most left (0 and 1): free {0, 0, 1, 1}.
 */
Test(cluster, time_sliced_replicas_stack_when_gpus_run_out)
{
	pools[0].sharing = (struct sharing){.mode = SHARING_TIME_SLICING, .replicas = 2};
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec six = pod(6), three = pod(3), two = pod(2);
	cr_assert_eq(cluster_find(&c, 0, &six, 6, SCORING_MOST_ALLOCATED), 0);
	struct cluster_grant a, b;
	cluster_take(&c, 0, &six, 6, 1, &a);
	cr_assert_eq(a.gpu_mask, 0xf);
	cr_assert_float_eq(a.equivalent, 3, 1e-12, "6 replicas of half a GPU");
	const int32_t after[] = {0, 0, 1, 1};
	for (int i = 0; i < 4; i++)
		cr_assert_eq(c.gpus[i].free, after[i], "GPU %d", i);
	cr_assert_eq(cluster_find(&c, 0, &three, 3, SCORING_MOST_ALLOCATED), 1,
		     "2 replicas left on a-0: a 3-replica pod goes to a-1");
	cr_assert_eq(cluster_find(&c, 0, &two, 2, SCORING_MOST_ALLOCATED), 0);
	cluster_take(&c, 0, &two, 2, 2, &b); /* two GPUs with one free: one each */
	cr_assert_eq(b.gpu_mask, 0xc);
	cr_assert(cluster_consistent(&c));
	cluster_release(&c, 1, &a);
	const int32_t back[] = {2, 2, 1, 1};
	for (int i = 0; i < 4; i++)
		cr_assert_eq(c.gpus[i].free, back[i], "GPU %d after the release", i);
	cluster_release(&c, 2, &b);
	cr_assert_eq(c.allocated, 0);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/*
 * Walks (placement's sampling): pool a with 150 nodes of 4 GPUs.  Nodes 61,
 * 62 and 100 full, node 64 with 2 GPUs taken.  Over slots [60, 130) a 1-GPU
 * pod has room on 60, 63 .. 99 and 101 .. 129: 1 + 37 + 29 = 67 nodes, across
 * three 64-bit words; the 0th is 60, the 1st 63, the 38th 101 (63 .. 99 are
 * the 1st to 37th), the 66th 129.  Node 64 is alone with 2 untouched GPUs.
 * Nodes 10 and 70 then go down: ranks among the Ready nodes skip them.
 */
Test(cluster, walks_visit_the_nodes_with_room_in_node_order)
{
	pools[0].nodes = 150;
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w4 = pod(4), w2 = pod(2), w1 = pod(1);
	struct cluster_grant g;
	uint32_t job = 1;
	cluster_take(&c, 61, &w4, 4, job++, &g);
	cluster_take(&c, 62, &w4, 4, job++, &g);
	cluster_take(&c, 100, &w4, 4, job++, &g);
	cluster_take(&c, 64, &w2, 2, job++, &g);
	struct cluster_walk wk;
	cluster_walk_level(&wk, &c, 0, &w1, 1, -1, 60, 130);
	cr_assert_eq(cluster_walk_count(&wk), 67);
	cr_assert_eq(cluster_walk_nth(&wk, 0), 60);
	cr_assert_eq(cluster_walk_nth(&wk, 1), 63);
	cr_assert_eq(cluster_walk_nth(&wk, 38), 101);
	cr_assert_eq(cluster_walk_nth(&wk, 66), 129);
	int32_t n = 0;
	cr_assert_eq(cluster_walk_find(&wk, 38, &n), 101);
	cr_assert_eq(n, 38, "the nodes before it");
	cr_assert_eq(cluster_walk_find(&wk, 67, &n), -1);
	cr_assert_eq(n, 67, "no 67th: all of them");
	cluster_walk_level(&wk, &c, 0, &w1, 1, 2, 60, 130);
	cr_assert_eq(cluster_walk_count(&wk), 1);
	cr_assert_eq(cluster_walk_nth(&wk, 0), 64);
	cluster_walk_init(&wk, &c, 0, &w1, 1, NULL, NULL, 60, 130);
	cr_assert_eq(cluster_walk_next(&wk), 60);
	cr_assert_eq(cluster_walk_next(&wk), 63);
	cr_assert_eq(cluster_walk_next(&wk), 64);
	cluster_walk_init(&wk, &c, 0, &w1, 1, NULL, NULL, 129, 130);
	cr_assert_eq(cluster_walk_next(&wk), 129);
	cr_assert_eq(cluster_walk_next(&wk), -1);
	cr_assert_eq(cluster_walk_next(&wk), -1, "over stays over");

	cluster_node_down(&c, 10);
	cluster_node_down(&c, 70);
	cr_assert_eq(cluster_ready_rank(&c, 0, 11), 10);
	cr_assert_eq(cluster_ready_rank(&c, 0, 71), 69);
	cr_assert_eq(cluster_ready_select(&c, 0, 10), 11);
	cr_assert_eq(cluster_ready_select(&c, 0, 68), 69);
	cr_assert_eq(cluster_ready_select(&c, 0, 69), 71);
	cluster_walk_level(&wk, &c, 0, &w1, 1, -1, 0, 150);
	cr_assert_eq(cluster_walk_count(&wk), 145, "150 - 3 full - 2 down");
	cr_assert(cluster_consistent(&c));
	cluster_node_up(&c, 10);
	cr_assert_eq(cluster_ready_select(&c, 0, 10), 10);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/*
 * Walks over more than a block (CLUSTER_BLOCK_WORDS = 4 words, 256 slots)
 * count whole blocks from their counts and must agree with counting bits:
 * pool a with 1300 nodes of 4 GPUs; nodes 600 and 700 full, node 800 with 1
 * GPU taken, node 1100 with 2.  Over [100, 1250) a 1-GPU pod has room on
 * 1150 - 2 = 1148 nodes; blocks 1 to 3 (slots 256 .. 1023) are inside the
 * walk.  Ranks: 100 .. 511 are the 0th to 411th, 512 .. 599 the 412th to
 * 499th, 601 .. 699 the 500th to 598th, then node x > 700 the (x - 102)th:
 * the 1000th is 1102.  By key: 2 untouched GPUs node 1100 alone, 3 node 800
 * alone (found inside the block), 4 the other 1146 from node 100 on.
 */
Test(cluster, walks_count_whole_blocks_as_their_bits)
{
	pools[0].nodes = 1300;
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec w4 = pod(4), w2 = pod(2), w1 = pod(1);
	struct cluster_grant g;
	cluster_take(&c, 600, &w4, 4, 1, &g);
	cluster_take(&c, 700, &w4, 4, 2, &g);
	cluster_take(&c, 800, &w1, 1, 4, &g);
	cluster_take(&c, 1100, &w2, 2, 3, &g);
	struct cluster_walk wk;
	cluster_walk_level(&wk, &c, 0, &w1, 1, -1, 100, 1250);
	cr_assert_eq(cluster_walk_count(&wk), 1148);
	cr_assert_eq(cluster_walk_nth(&wk, 411), 511);
	cr_assert_eq(cluster_walk_nth(&wk, 412), 512, "the first of the block");
	cr_assert_eq(cluster_walk_nth(&wk, 500), 601);
	int32_t n = 0;
	cr_assert_eq(cluster_walk_find(&wk, 1000, &n), 1102, "past the block");
	cr_assert_eq(n, 1000);
	cr_assert_eq(cluster_walk_nth(&wk, 1147), 1249);
	cr_assert_eq(cluster_walk_nth(&wk, 1148), -1);
	/* by key, each from its level's bitset alone */
	const int32_t key[] = {1, 2, 3, 4}, count[] = {0, 1, 1, 1146},
		      first[] = {-1, 1100, 800, 100};
	for (int e = 0; e < 4; e++) {
		cr_assert_eq(cluster_level_find(&c, 0, &w1, 1, key[e], 100, 1250, 0, &n), first[e],
			     "key %d", key[e]);
		cluster_level_find(&c, 0, &w1, 1, key[e], 100, 1250, -1, &n);
		cr_assert_eq(n, count[e], "key %d", key[e]);
	}
	cr_assert_eq(cluster_level_find(&c, 0, &w1, 1, -1, 100, 1250, 1000, &n), 1102);
	cr_assert_eq(n, 1000, "any key: as the walk");
	cr_assert_eq(cluster_level_find(&c, 0, &w2, 2, 1, 0, 1300, 0, &n), -1, "below the need");
	cr_assert_eq(cluster_level_find(&c, 0, &w1, 1, 4, 600, 600, -1, &n), -1);
	cr_assert_eq(n, 0, "an empty range");
	cluster_walk_level(&wk, &c, 0, &w1, 1, 2, 0, 1300); /* 2 untouched GPUs */
	cr_assert_eq(cluster_walk_count(&wk), 1);
	cr_assert_eq(cluster_walk_nth(&wk, 0), 1100, "blocks 0 to 3 passed at once, empty");
	cluster_release(&c, 3, &g); /* node 1100 untouched again: its block counts follow */
	cr_assert(cluster_consistent(&c));
	cluster_walk_level(&wk, &c, 0, &w1, 1, 4, 0, 1300);
	cr_assert_eq(cluster_walk_count(&wk), 1297, "1300 - 2 full - node 800");
	cluster_free(&c);
}

/*
 * Node classes (cluster.h): pool a with 6 nodes of 4 GPUs, 64 cores and 256
 * GiB.  Pods of 1 GPU, 8 cores, 32 GiB on nodes 0 and 1, a pod of 2 GPUs and
 * none of cpu or memory on node 2: nodes 0 and 1 share a class, node 2 has
 * its own, the untouched 3 .. 5 and pool b's two nodes one each: 4 in all.
 * When node 1 gets a second pod it leaves the class of node 0, which stays;
 * when every pod is gone, the nodes are back in their first classes, whose
 * ids were kept, and the classes they left are kept too: a pod like the
 * first on node 4 finds its class where it was.
 */
Test(cluster, nodes_alike_share_a_class_and_freed_ids_are_reused)
{
	pools[0].nodes = 6;
	pools[0].cpu = 64;
	pools[0].memory_bytes = 256 * GP_GIB;
	struct cluster c;
	cluster_init(&c, &sc);
	int32_t empty_a = c.class_of[0], empty_b = c.class_of[6], one_small;
	cr_assert_eq(c.classes.live, 2, "an empty node of each pool");
	struct workload_spec small = pod(1), two = pod(2);
	small.cpu = 8;
	small.memory_bytes = 32 * GP_GIB;
	struct cluster_grant g[4];
	cluster_take(&c, 0, &small, 1, 1, &g[0]);
	cluster_take(&c, 1, &small, 1, 2, &g[1]);
	cluster_take(&c, 2, &two, 2, 3, &g[2]);
	cr_assert_eq(c.class_of[0], c.class_of[1]);
	cr_assert_neq(c.class_of[0], c.class_of[2]);
	one_small = c.class_of[0];
	cr_assert_eq(c.class_of[3], empty_a);
	cr_assert_eq(c.classes.live, 4);
	const struct node_class *k = cluster_class(&c, 1);
	cr_assert_eq(k->nodes, 2);
	cr_assert_eq(k->cpu_free, 56);
	cr_assert_eq(k->memory_free, 224 * GP_GIB);
	cr_assert_eq(k->cpu_scored, 8000);
	cr_assert_eq(k->allocated, 1);
	cr_assert_eq(cluster_class(&c, 2)->cpu_scored, CLUSTER_NONZERO_CPU_MILLI);
	cr_assert_eq(cluster_class(&c, 2)->memory_scored, CLUSTER_NONZERO_MEMORY);
	cluster_take(&c, 1, &small, 1, 4, &g[3]);
	cr_assert_neq(c.class_of[1], c.class_of[0]);
	cr_assert_eq(cluster_class(&c, 0)->nodes, 1);
	cr_assert_eq(cluster_class(&c, 1)->cpu_free, 48);
	cr_assert_eq(c.classes.live, 5);
	cr_assert(cluster_consistent(&c));
	for (int i = 3; i >= 0; i--)
		cluster_release(&c, (uint32_t)i + 1, &g[i]);
	cr_assert_eq(c.classes.live, 2);
	for (int32_t node = 0; node < 6; node++)
		cr_assert_eq(c.class_of[node], empty_a, "node %d", node);
	cr_assert_eq(c.class_of[7], empty_b);
	cr_assert_eq(c.classes.n, 5, "2 + 3 ids: every class the nodes went through");
	cluster_take(&c, 4, &small, 1, 5, &g[0]);
	cr_assert_eq(c.class_of[4], one_small, "a class no node was of, kept");
	cr_assert_eq(c.classes.live, 2 + 1);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/* Whether nodes i and j hold the same of what a class keeps. */
static bool alike(const struct cluster *c, int32_t i, int32_t j)
{
	const struct node *a = &c->nodes[i], *b = &c->nodes[j];
	return a->pool == b->pool && a->allocated == b->allocated && a->cpu_free == b->cpu_free &&
	       a->memory_free == b->memory_free && a->cpu_scored == b->cpu_scored &&
	       a->memory_scored == b->memory_scored;
}

/*
 * Random takes and releases (the tests below): at each step, with chance
 * 1/3 (always once `cap` grants are held) a held grant is released, else a
 * pod of 1 to 4 GPUs and (r / 4 % cpu_levels) x cpu_step cores is taken on
 * a random Ready node of the first `nodes` with room for it.
 */
struct churn {
	struct cluster_grant *held;
	uint32_t *job, next_job, seed;
	int32_t n_held, cap, nodes;
};

static struct churn churn_make(int32_t cap, int32_t nodes, uint32_t seed)
{
	return (struct churn){calloc((size_t)cap, sizeof(struct cluster_grant)),
			      calloc((size_t)cap, sizeof(uint32_t)),
			      1,
			      seed,
			      0,
			      cap,
			      nodes};
}

static void churn_release(struct cluster *c, struct churn *ch, int32_t k)
{
	cluster_release(c, ch->job[k], &ch->held[k]);
	ch->held[k] = ch->held[--ch->n_held];
	ch->job[k] = ch->job[ch->n_held];
}

static void churn_step(struct cluster *c, struct churn *ch, uint32_t cpu_levels, double cpu_step)
{
	ch->seed = ch->seed * 1103515245u + 12345u;
	uint32_t r = ch->seed >> 8;
	if (ch->n_held > 0 && (r % 3 == 0 || ch->n_held == ch->cap)) {
		churn_release(c, ch, (int32_t)(r / 3 % (uint32_t)ch->n_held));
		return;
	}
	struct workload_spec w = pod(1 + (int32_t)(r % 4));
	w.cpu = (double)(r / 4 % cpu_levels) * cpu_step;
	int32_t node = (int32_t)(r / 16 % (uint32_t)ch->nodes);
	const struct node *nd = &c->nodes[node];
	if (nd->ready && nd->gpus - nd->allocated >= w.gpus && nd->cpu_free >= w.cpu) {
		ch->job[ch->n_held] = ch->next_job++;
		cluster_take(c, node, &w, w.gpus, ch->job[ch->n_held], &ch->held[ch->n_held]);
		ch->n_held++;
	}
}

static void churn_free(struct churn *ch)
{
	free(ch->held);
	free(ch->job);
}

/* cluster_level_find of key k over slots [37, 263) of pool 0 against what
 * the nodes' own GPUs say: the first node, the last and how many. */
static void level_finds_as_nodes(const struct cluster *c, const struct workload_spec *w, int32_t g,
				 int32_t k, int step)
{
	int32_t n = 0, first = -1, last = -1, got = 0;
	for (int32_t i = 37; i < 263; i++)
		if (gp_popcount64(c->nodes[i].untouched) == k) {
			first = first < 0 ? i : first;
			last = i;
			n++;
		}
	cr_assert_eq(cluster_level_find(c, 0, w, g, k, 37, 263, 0, &got), first, "step %d", step);
	cr_assert_eq(cluster_level_find(c, 0, w, g, k, 37, 263, n - 1, &got), n > 0 ? last : first,
		     "step %d", step);
	cluster_level_find(c, 0, w, g, k, 37, 263, -1, &got);
	cr_assert_eq(got, n, "step %d, key %d", step, k);
}

/*
 * 3,000 takes and releases drawn at random on 300 nodes (pods of 1 to 4
 * GPUs, 0 to 24 cores): classes come and go through the table's growth and
 * its rebuilds, which free the ids of classes no node is of.  Every 100
 * steps, two nodes share an id exactly when they are alike, the live
 * classes are the distinct ids in use, and walks count the nodes with room.
 */
Test(cluster, classes_follow_random_takes_and_releases)
{
	pools[0].nodes = 300;
	pools[0].cpu = 96;
	struct cluster c;
	cluster_init(&c, &sc);
	int32_t n = (int32_t)c.n_nodes, most = 0;
	bool rebuilt = false;
	struct churn ch = churn_make(4000, n, 12345);
	for (int step = 1; step <= 3000; step++) {
		churn_step(&c, &ch, 4, 8);
		most = c.classes.live > most ? c.classes.live : most;
		rebuilt = rebuilt || c.classes.n_unused > 0;
		if (step % 100)
			continue;
		cr_assert(cluster_consistent(&c), "step %d", step);
		int32_t distinct = 0;
		for (int32_t i = 0; i < n; i++) {
			bool first = true;
			for (int32_t j = 0; j < n; j++) {
				cr_assert_eq(c.class_of[i] == c.class_of[j], alike(&c, i, j),
					     "step %d: nodes %d and %d", step, i, j);
				first = first && !(j < i && c.class_of[j] == c.class_of[i]);
			}
			distinct += first;
		}
		cr_assert_eq(c.classes.live, distinct, "step %d", step);
		/* a walk over every key from the pod's on (the index's sets of
		 * "key k or more") counts what the nodes' own GPUs say */
		for (int32_t g = 1; g <= 4; g++) {
			struct workload_spec w = pod(g);
			struct cluster_walk wk;
			cluster_walk_init(&wk, &c, 0, &w, g, NULL, NULL, 37, 263);
			int32_t want = 0;
			for (int32_t i = 37; i < 263; i++)
				want += gp_popcount64(c.nodes[i].untouched) >= g;
			cr_assert_eq(cluster_walk_count(&wk), want, "step %d, %d GPUs", step, g);
			for (int32_t k = g; k <= 4; k++) /* and each key's bitset, its own */
				level_finds_as_nodes(&c, &w, g, k, step);
		}
	}
	cr_assert_gt(most, 32, "the table grew past its first 64 slots");
	cr_assert(rebuilt, "a rebuild freed the ids of classes left behind");
	churn_free(&ch);
	cluster_free(&c);
}

/* The nodes of pool 0 in slots [from, to) with key k (-1: g or more). */
static int32_t nodes_of_key(const struct cluster *c, int32_t k, int32_t g, int32_t from, int32_t to,
			    int32_t *at, int32_t cap)
{
	int32_t n = 0;
	for (int32_t i = from; i < to; i++) {
		int32_t key = gp_popcount64(c->nodes[i].untouched);
		if (k >= 0 ? key == k : key >= g) {
			if (n < cap)
				at[n] = i;
			n++;
		}
	}
	return n;
}

/*
 * A key's span searches (first, count, nth) over slot ranges that start and
 * end on either side of a word's and a block's edges, on 1,100 nodes of 4
 * GPUs after 4,000 random takes and releases: what a look at every node of
 * the range says.
 */
Test(cluster, span_finds_agree_with_the_nodes_at_word_and_block_edges)
{
	pools[0].nodes = 1100;
	struct cluster c;
	cluster_init(&c, &sc);
	struct churn ch = churn_make(4000, 1100, 4242);
	for (int step = 0; step < 4000; step++)
		churn_step(&c, &ch, 1, 0);
	static const int32_t edge[] = {0,   1,   63,  64,  65,   255,  256,  257,  300, 511,
				       512, 513, 767, 768, 1023, 1024, 1025, 1099, 1100};
	int32_t n_edges = (int32_t)(sizeof edge / sizeof *edge), at[1100];
	for (int32_t a = 0; a < n_edges; a++)
		for (int32_t b = a; b < n_edges; b++)
			for (int32_t g = 1; g <= 4; g++)
				for (int32_t k = -1; k <= 4; k++) {
					if (k >= 0 && k < g)
						continue;
					struct workload_spec w = pod(g);
					int32_t from = edge[a], to = edge[b], got = -2;
					int32_t n = nodes_of_key(&c, k, g, from, to, at, 1100);
					cr_assert_eq(cluster_level_find(&c, 0, &w, g, k, from, to,
									0, &got),
						     n ? at[0] : -1, "[%d, %d) key %d", from, to,
						     k);
					cluster_level_find(&c, 0, &w, g, k, from, to, -1, &got);
					cr_assert_eq(got, n, "[%d, %d) key %d", from, to, k);
					for (int32_t nth = 1; nth <= n; nth += 1 + n / 7) {
						int32_t want = nth < n ? at[nth] : -1;
						cr_assert_eq(cluster_level_find(&c, 0, &w, g, k,
										from, to, nth,
										&got),
							     want, "[%d, %d) key %d nth %d", from,
							     to, k, nth);
						cr_assert_eq(got, nth < n ? nth : n);
					}
				}
	churn_free(&ch);
	cluster_free(&c);
}

/* Node i (of pool 0) as the groups should hold it: Ready, of g's class and
 * whole key. */
static bool in_group(const struct cluster *c, int32_t i, const struct class_group *g)
{
	return c->nodes[i].ready && c->class_of[i] == g->id && c->pools[0].whole.key[i] == g->key;
}

/*
 * Class groups (cluster.h) through 3,000 random takes and releases on 300
 * nodes of 8 GPUs (pods of 1 to 4 GPUs and 0 or 16 cores), a node going
 * down and up on the way: every 100 steps the groups hold each Ready node
 * once, in the group of its class and whole key (cluster_consistent), and a
 * group's count, first node and the nth node of two groups in a slot range
 * are what a look at every node of the range says.
 */
Test(cluster, class_groups_follow_random_takes_and_releases)
{
	pools[0].nodes = 300;
	pools[0].gpus_per_node = 8;
	pools[0].cpu = 96;
	struct cluster c;
	cluster_init(&c, &sc);
	cr_assert(c.pools[0].groups.on, "300 exclusive slots keep groups");
	cr_assert(!c.pools[1].groups.on, "two slots are walked node by node");
	struct churn ch = churn_make(4000, 300, 777);
	for (int step = 1; step <= 3000; step++) {
		churn_step(&c, &ch, 2, 16);
		if (step == 1500) { /* node 7 emptied and down, up again at 2500 */
			for (int32_t k = ch.n_held - 1; k >= 0; k--)
				if (ch.held[k].node == 7)
					churn_release(&c, &ch, k);
			cluster_node_down(&c, 7);
			cr_assert_eq(c.group_of[7], -1);
		}
		if (step == 2500)
			cluster_node_up(&c, 7);
		if (step % 100)
			continue;
		cr_assert(cluster_consistent(&c), "step %d", step);
		const struct class_groups *gs = &c.pools[0].groups;
		cr_assert(gs->on, "step %d: at most %d groups", step, CLUSTER_GROUPS);
		int32_t from = 13 + step % 50, to = 290 - step % 70;
		for (int32_t j = 0; j < gs->n_live; j++) {
			int32_t s = gs->live[j], first = -1, want = 0, want_first = -1;
			const struct class_group *g = &gs->at[s];
			for (int32_t i = from; i < to; i++)
				if (in_group(&c, i, g)) {
					want++;
					want_first = want_first < 0 ? i : want_first;
				}
			cr_assert_eq(cluster_group_count(&c, 0, s, from, to, &first), want,
				     "step %d group %d", step, s);
			cr_assert_eq(first, want_first, "step %d group %d", step, s);
		}
		if (gs->n_live < 2)
			continue;
		int32_t two[2] = {gs->live[0], gs->live[1]}, nth = 0;
		for (int32_t i = from; i < to; i++) {
			if (in_group(&c, i, &gs->at[two[0]]) || in_group(&c, i, &gs->at[two[1]])) {
				cr_assert_eq(cluster_groups_nth(&c, 0, two, 2, from, to, nth), i,
					     "step %d: node %d", step, nth);
				nth++;
			}
		}
		cr_assert_eq(cluster_groups_nth(&c, 0, two, 2, from, to, nth), -1);
	}
	churn_free(&ch);
	cluster_free(&c);
}

/*
 * A pool past CLUSTER_GROUPS groups at once drops them for good (its
 * searches then walk node by node): 300 nodes, each given a pod of its own
 * number of cores (up to 90), make some 90 classes.
 */
Test(cluster, class_groups_are_dropped_past_their_cap)
{
	pools[0].nodes = 300;
	pools[0].gpus_per_node = 8;
	pools[0].cpu = 96;
	struct cluster c;
	cluster_init(&c, &sc);
	struct cluster_grant *held = calloc(300, sizeof *held);
	for (int32_t i = 0; i < 300; i++) {
		struct workload_spec w = pod(1);
		w.cpu = (double)(1 + i % 90);
		cluster_take(&c, i, &w, 1, (uint32_t)i + 1, &held[i]);
		cr_assert_eq(c.pools[0].groups.on, i < CLUSTER_GROUPS - 1, "node %d", i);
	}
	cr_assert(cluster_consistent(&c));
	for (int32_t i = 0; i < 300; i++)
		cluster_release(&c, (uint32_t)i + 1, &held[i]);
	cr_assert(!c.pools[0].groups.on, "for good");
	cr_assert(cluster_consistent(&c));
	free(held);
	cluster_free(&c);
}

/* Kept classes hold their ids until a rebuild, so ids pass the count of
 * nodes: one node of pool a (4 GPUs, 64 cores) through 40 classes, a pod of
 * 1 to 40 cores at a time, leaves some 30 ids used on a cluster of 3 nodes;
 * what is kept by class id is sized by classes.cap (twice the nodes and 64). */
Test(cluster, class_ids_pass_the_count_of_nodes_but_not_the_cap)
{
	pools[0].nodes = 1;
	pools[0].cpu = 64;
	struct cluster c;
	cluster_init(&c, &sc);
	struct cluster_grant g;
	for (int cores = 1; cores <= 40; cores++) {
		struct workload_spec w = pod(1);
		w.cpu = cores;
		cluster_take(&c, 0, &w, 1, (uint32_t)cores, &g);
		cluster_release(&c, (uint32_t)cores, &g);
	}
	cr_assert_eq(c.classes.live, 2, "the empty node of each pool");
	cr_assert_gt(c.classes.n, (int32_t)c.n_nodes);
	cr_assert_leq(c.classes.n, c.classes.cap);
	cr_assert_eq(c.classes.cap, 2 * 3 + 64);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

/* A node is tight when its cpu or memory free could stop the largest
 * request of the scenario's workloads; while no node of a pool is, searches
 * skip those checks, and they come back with the first tight node (pool a:
 * 20 nodes of 4 GPUs and 32 cores; the workload asks for 1 GPU and 16
 * cores; a pod of 20 cores makes node 5 tight, its release makes it not). */
Test(cluster, nodes_short_of_the_largest_request_are_tight)
{
	pools[0].nodes = 20;
	pools[0].cpu = 32;
	struct workload_spec w = pod(1), big = pod(1);
	w.cpu = 16;
	big.cpu = 20;
	sc.workloads = &w;
	sc.n_workloads = 1;
	struct cluster c;
	cluster_init(&c, &sc);
	cr_assert_eq(c.pools[0].tight, 0, "32 cores free take 16 everywhere");
	struct cluster_grant g, two;
	cluster_take(&c, 5, &big, 1, 1, &g);
	cr_assert_eq(c.pools[0].tight, 1, "12 cores left on node 5");
	cluster_take(&c, 6, &w, 1, 2, &two);
	cr_assert_eq(c.pools[0].tight, 1, "16 left on node 6: a pod of w still fits");
	int32_t found[20];
	struct cluster_walk wk;
	cluster_walk_init(&wk, &c, 0, &w, 1, NULL, NULL, 4, 8);
	cr_assert_eq(cluster_walk_take(&wk, found, 20), 3);
	cr_assert_arr_eq(found, ((int32_t[]){4, 6, 7}), 3 * sizeof *found, "node 5 passed over");
	cluster_release(&c, 1, &g);
	cr_assert_eq(c.pools[0].tight, 0);
	cluster_walk_init(&wk, &c, 0, &w, 1, NULL, NULL, 4, 8);
	cr_assert_eq(cluster_walk_take(&wk, found, 20), 4, "no check: every node fits");
	cluster_walk_init(&wk, &c, 0, &big, 1, NULL, NULL, 4, 8);
	cr_assert_eq(cluster_walk_take(&wk, found, 20), 3,
		     "a spec beyond the workloads' is checked: node 6 has 16 cores");
	cr_assert(cluster_consistent(&c));
	cluster_release(&c, 2, &two);
	cluster_free(&c);
}

/* cluster_walk_take in runs of 1, 2, 3 ... gives the nodes cluster_walk_next
 * gives one by one; nodes short of cpu are passed over (pool a: 200 nodes of
 * 4 GPUs and 32 cores; every 7th node has 24 cores taken; a pod of 1 GPU and
 * 16 cores). */
Test(cluster, walks_take_in_runs_what_they_give_one_by_one)
{
	pools[0].nodes = 200;
	pools[0].cpu = 32;
	struct cluster c;
	cluster_init(&c, &sc);
	struct workload_spec big = pod(1), w = pod(1);
	big.cpu = 24;
	w.cpu = 16;
	struct cluster_grant g;
	for (int32_t node = 0; node < 200; node += 7)
		cluster_take(&c, node, &big, 1, (uint32_t)node + 1, &g);
	int32_t one[200], runs[201], n_one = 0, n_runs = 0;
	struct cluster_walk wk;
	cluster_walk_init(&wk, &c, 0, &w, 1, NULL, NULL, 3, 190);
	for (int32_t node; (node = cluster_walk_next(&wk)) >= 0;)
		one[n_one++] = node;
	cr_assert_eq(n_one, 187 - 27, "nodes 3 .. 189 but the 27 multiples of 7");
	cluster_walk_init(&wk, &c, 0, &w, 1, NULL, NULL, 3, 190);
	for (int32_t size = 1, got; (got = cluster_walk_take(&wk, runs + n_runs, size)) > 0; size++)
		n_runs += got;
	cr_assert_eq(n_runs, n_one);
	cr_assert_arr_eq(runs, one, (size_t)n_one * sizeof *one);
	cr_assert_eq(cluster_walk_take(&wk, runs, 5), 0, "over stays over");
	cluster_free(&c);
}

/* cluster.state (cluster_state.c): the sum of the grants held, whatever
 * order they came and went in, so that a failure kept for one state holds
 * when the cluster comes back to it; a change not undone exactly (a node
 * down and up again, a third of a GPU) leaves a state never seen. */
Test(cluster, state_sums_the_grants_held_in_any_order)
{
	pools[0].cpu = 64;
	struct workload_spec w[2] = {pod(1), pod(2)};
	w[0].cpu = 0.5; /* a multiple of 1/1024: exact */
	sc.workloads = w;
	sc.n_workloads = 2;
	struct cluster c;
	cluster_init(&c, &sc);
	uint64_t empty = c.state;
	struct cluster_grant a, b, d;
	cluster_take(&c, 0, &w[0], 1, 1, &a);
	uint64_t held_a = c.state;
	cr_assert_neq(held_a, empty);
	cluster_take(&c, 0, &w[1], 2, 2, &b);
	cluster_release(&c, 1, &a);
	cr_assert_neq(c.state, empty, "b is held");
	cluster_release(&c, 2, &b);
	cr_assert_eq(c.state, empty, "nothing held: the state of the empty cluster");
	cluster_take(&c, 0, &w[0], 1, 3, &d);
	cr_assert_eq(c.state, held_a, "the same grant by another job: the same state");
	cluster_release(&c, 3, &d);
	cr_assert_eq(c.state, empty);

	/* Another workload's grant on the same GPU is another state (its pods
	 * count for other spreads). */
	w[1].cpu = 0.5;
	cluster_take(&c, 0, &w[1], 1, 4, &b);
	cr_assert_neq(c.state, held_a);
	cluster_release(&c, 4, &b);
	cr_assert_eq(c.state, empty);

	/* 0.1 cores does not add exactly: taken and given back, a new state
	 * (a workload's amounts are judged as the cluster is made). */
	w[0].cpu = 0.1;
	cluster_free(&c);
	cluster_init(&c, &sc);
	empty = c.state;
	cluster_take(&c, 0, &w[0], 1, 5, &a);
	cluster_release(&c, 5, &a);
	cr_assert_neq(c.state, empty);

	uint64_t before = c.state;
	cluster_node_down(&c, 4);
	cluster_node_up(&c, 4);
	cr_assert_neq(c.state, before, "a node that went down and came back");
	struct workload_spec own = pod(1); /* not the scenario's: not undone */
	before = c.state;
	cluster_take(&c, 1, &own, 1, 6, &a);
	cr_assert_eq(a.mix, 0);
	cluster_release(&c, 6, &a);
	cr_assert_neq(c.state, before);
	cluster_free(&c);
}
