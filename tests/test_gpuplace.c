/*
 * test_gpuplace.c - scheduler.gpu_policy inside the timed simulation
 * (gpuplace.h): cluster nodes seen as the policies' nodes, the scores kept
 * until a node changes, GPU clustering's affinity tags, and the GPUs given.
 * Scores follow the authors' simulator (gpupolicy.h: hkust-adsl/
 * kubernetes-scheduler-simulator, pkg/simulator/plugin), worked by hand on
 * tests/fixtures/placement-cases.yaml: a100-0 and a100-1 (nodes 0, 1) have 4
 * GPUs, h100-0 (node 2) 8.
 */
#include "gpuplan/cluster.h"
#include "gpuplan/gpuplace.h"
#include "gpuplan/scenario.h"

#include <criterion/criterion.h>

static struct scenario *sc;
static struct cluster c;
static struct gpuplace *g;
static uint32_t next_job = 1;

static void setup_seed(const char *policy, const char *seed)
{
	char set[64];
	snprintf(set, sizeof set, "scheduler.gpu_policy=%s", policy);
	const char *sets[] = {set, seed};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load("tests/fixtures/placement-cases.yaml", sets, 2, &sc, &err),
		     GP_OK, "%s", err.msg);
	cluster_init(&c, sc);
	g = gpuplace_create(&c);
}

static void cleanup(void)
{
	gpuplace_free(g);
	g = NULL;
	if (sc) {
		cluster_free(&c);
		scenario_free(sc);
		sc = NULL;
	}
}

static void setup(const char *policy) { setup_seed(policy, "seed=1"); }

TestSuite(gpuplace, .fini = cleanup);

/* Takes `gpus` whole GPUs on node; tells gpuplace when `tell`. */
static struct cluster_grant take(int32_t node, int32_t gpus, bool tell)
{
	struct workload_spec other = {.name = "other",
				      .request = REQUEST_GPUS,
				      .gpus = gpus,
				      .gpu_busy = 1,
				      .sm_share = 1};
	struct cluster_grant grant;
	cluster_take(&c, node, &other, gpus, next_job++, &grant);
	if (tell)
		gpuplace_moved(g, &grant, +1);
	return grant;
}

Test(gpuplace, best_fit_needs_no_state)
{
	setup("best-fit");
	cr_assert_null(g, "best-fit runs through placement's indexes");
	gpuplace_moved(g, &(struct cluster_grant){0}, +1); /* a no-op without state */
}

/* gpu-packing (pkg/simulator/plugin/gpu_packing_score.go): a node with every
 * GPU free scores max(100/3 - free, free): 4 GPUs: 33 - 4 = 29, 8: 33 - 8 =
 * 25.  With 1 of 4 GPUs taken, a 2-GPU pod opens 2 free GPUs: max(100/2 - 2,
 * 100/3) = 48. */
Test(gpuplace, scores_read_the_cluster_node_as_it_is)
{
	setup("gpu-packing");
	cr_assert_eq(gpuplace_policy(g), GPU_POLICY_GPU_PACKING);
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 29);
	cr_assert_eq(gpuplace_score(g, 2, 0, 2), 25);
	take(0, 1, true);
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 48);
	cr_assert_eq(gpuplace_score(g, 1, 0, 2), 29, "the other A100 node is unchanged");
}

/* A score is kept per node and request until the node changes: a take not
 * reported through gpuplace_moved leaves the cached 29; once reported, 48. */
Test(gpuplace, a_score_is_kept_until_the_node_is_reported_changed)
{
	setup("gpu-packing");
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 29);
	struct cluster_grant grant = take(0, 1, false);
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 29, "cached");
	gpuplace_moved(g, &grant, +1);
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 48);
	/* the same node for another request is scored afresh: 1 GPU opens 1: 49 */
	cr_assert_eq(gpuplace_score(g, 0, 0, 1), 49);
}

/* GPU clustering (gpu_clustering_score.go): base = 25 x (8000 - free milli) /
 * 8000, integer; + 25 on a node with no GPU pod, + 75 where the pod's tag is
 * the node's only one, + 0 for another tag.  a100-0 empty: 25 x 4000 / 8000 =
 * 12, + 25 = 37.  After a 2-GPU pod (tag 2): 25 x 6000 / 8000 = 18; a 2-GPU
 * pod 18 + 75 = 93, a 1-GPU pod 18 + 0 = 18.  The pod leaves: 37 again. */
Test(gpuplace, gpu_clustering_follows_the_affinity_tags_of_the_node)
{
	setup("gpu-clustering");
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 37);
	struct cluster_grant grant = take(0, 2, true);
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 93);
	cr_assert_eq(gpuplace_score(g, 0, 0, 1), 18);
	cluster_release(&c, next_job - 1, &grant);
	gpuplace_moved(g, &grant, -1);
	cr_assert_eq(gpuplace_score(g, 0, 0, 2), 37);
}

/* Whole GPUs go to the lowest free ones: GPUs 0 and 1 taken on a100-0, a 2-GPU
 * pod gets GPUs 2 and 3 (mask 0b1100). */
Test(gpuplace, whole_gpus_go_to_the_lowest_free_ones)
{
	setup("gpu-packing");
	struct cluster_grant grant = take(0, 2, true);
	cr_assert_eq(grant.gpu_mask, 0x3, "the take itself got GPUs 0 and 1");
	cr_assert_eq(gpuplace_choose(g, 0, 0, 2), 0xc);
	cr_assert_eq(gpuplace_choose(g, 1, 0, 2), 0x3);
}

/* random's draws come from a stream of the run's seed: the same seed, the same
 * draws; another seed, others (20 equal draws of 5 values by chance: 5^-20);
 * every draw in [0, n). */
Test(gpuplace, random_draws_from_the_seed)
{
	const char *seeds[] = {"seed=1", "seed=1", "seed=2"};
	unsigned long draws[3][20];
	for (int round = 0; round < 3; round++) {
		setup_seed("random", seeds[round]);
		for (int i = 0; i < 20; i++) {
			draws[round][i] = gpuplace_draw(g, 5);
			cr_assert_lt(draws[round][i], 5);
		}
		cleanup();
	}
	int differ = 0;
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(draws[1][i], draws[0][i], "draw %d", i);
		differ += draws[2][i] != draws[0][i];
	}
	cr_assert_gt(differ, 0, "seeds 1 and 2 drew alike: the seed is ignored");
}
