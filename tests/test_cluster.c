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
	pools[0] = (struct pool_spec){.name = "a", .nodes = 3, .gpus_per_node = 4,
				      .gpu = catalog_gpu("A100-80GB")};
	pools[1] = (struct pool_spec){.name = "b", .nodes = 2, .gpus_per_node = 8,
				      .gpu = catalog_gpu("H100-80GB")};
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

Test(cluster, most_allocated_packs_onto_the_fullest_node)
{
	struct cluster c;
	cluster_init(&c, &sc);
	uint64_t m = cluster_take(&c, 1, 3); /* node a-1 has 1 free */
	cr_assert_eq(m, 0x7);
	cr_assert_eq(cluster_find(&c, 0, 1, SCORING_MOST_ALLOCATED), 1);
	cr_assert_eq(cluster_find(&c, 0, 2, SCORING_MOST_ALLOCATED), 0, "lowest full-enough node");
	cr_assert_eq(cluster_find(&c, 0, 1, SCORING_LEAST_ALLOCATED), 0);
	cr_assert_eq(cluster_find(&c, 0, 5, SCORING_MOST_ALLOCATED), -1, "wider than the node");
	cluster_release(&c, 1, m);
	cr_assert_eq(c.allocated, 0);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

Test(cluster, takes_the_lowest_free_gpus_and_gives_them_back)
{
	struct cluster c;
	cluster_init(&c, &sc);
	uint64_t a = cluster_take(&c, 3, 2);
	uint64_t b = cluster_take(&c, 3, 3);
	cr_assert_eq(a, 0x03);
	cr_assert_eq(b, 0x1c);
	cluster_release(&c, 3, a);
	cr_assert_eq(cluster_take(&c, 3, 1), 0x01);
	cr_assert_eq(c.pools[1].allocated, 4);
	cr_assert_eq(c.allocated, 4);
	cr_assert(cluster_consistent(&c));
	cluster_free(&c);
}

Test(cluster, placement_scores_across_pools)
{
	struct cluster c;
	cluster_init(&c, &sc);
	struct pod_request pod = {0, 4, SIM_HOUR};
	/* Empty: a 4-GPU pod fills an "a" node (score 1.0) rather than half a "b" node. */
	cr_assert_eq(placement_find(&c, &pod, 0), 0);
	sc.scheduler.scoring = SCORING_LEAST_ALLOCATED;
	cr_assert_eq(placement_find(&c, &pod, 0), 3, "spread picks the emptiest node");
	sc.scheduler.scoring = SCORING_MOST_ALLOCATED;
	c.pools[0].open = false;
	cr_assert_eq(placement_find(&c, &pod, 0), 3, "a closed pool serves nothing");
	c.pools[1].closes_at = 30 * SIM_MINUTE;
	cr_assert_eq(placement_find(&c, &pod, 0), -1, "an hour does not fit before the close");
	pod.duration = 30 * SIM_MINUTE;
	cr_assert_eq(placement_find(&c, &pod, 0), 3, "ending exactly at the close fits");
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
	cr_assert_not(window_state(&pools[0], start, 0, &next));
	cr_assert_eq(next, 12 * SIM_HOUR);
	cr_assert(window_state(&pools[0], start, 12 * SIM_HOUR, &next));
	cr_assert_eq(next, 17 * SIM_HOUR);
	cr_assert_not(window_state(&pools[0], start, 17 * SIM_HOUR, &next));
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
	cr_assert_not(window_state(&pools[0], start, 3 * SIM_HOUR, &next),
		      "Monday night's window is not a Tuesday window");
	cr_assert_eq(next, 22 * SIM_HOUR);
	cr_assert(window_state(&pools[0], start, 23 * SIM_HOUR, &next));
	cr_assert_eq(next, 30 * SIM_HOUR, "closes at 06:00 on Wednesday");
	cr_assert_not(window_state(&pools[0], start, 30 * SIM_HOUR, &next));
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
	cr_assert(window_state(&pools[0], start, 9 * SIM_HOUR, &next));
	cr_assert_eq(next, 18 * SIM_HOUR);
}
