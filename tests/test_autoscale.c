/*
 * test_autoscale.c - node-pool autoscaling (the Cluster Autoscaler) and spot
 * capacity, with queue times to the second and bills to the cent computed by
 * hand.
 *
 * The semantics checked are kubernetes/autoscaler's cluster-autoscaler
 * (cluster-autoscaler/FAQ.md "How does scale-up work?", "How does
 * scale-down work?", "What are the parameters to CA?": scan-interval 10s,
 * scale-down-unneeded-time 10m, scale-down-delay-after-add 10m,
 * scale-down-utilization-threshold 0.5; expanders in
 * cluster-autoscaler/expander/{random,waste,price,priority,mostpods,
 * leastnodes} and factory/chain.go; its events
 * "pod triggered scale-up: [{group 0->2 (max: 2)}]" and "pod didn't trigger
 * scale-up: 1 max node group size reached"; kube-scheduler's
 * ErrNoNodesAvailable "no nodes available to schedule pods").
 *
 * The fixture (tests/fixtures/autoscale.yaml): pool batch, 4 x A100-80GB a
 * node at $2.50/GPU-h ($10.00 a node-hour), nodes 0, autoscale min 0 max 2,
 * provision_time 5m; three 4-GPU jobs of 1h at 00:00, deadline 02:00.
 */
#include "gpuplan/scenario.h"
#include "gpuplan/sim.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

TestSuite(autoscale, .fini = cleanup);

#define A "tests/fixtures/autoscale.yaml"
#define X "tests/fixtures/autoscale-expanders.yaml"
#define S SIM_SECOND

static double metric(const char *scope, const char *name)
{
	for (size_t i = 0; i < r.n_metrics; i++)
		if (!strcmp(r.metrics[i].scope, scope) && !strcmp(r.metrics[i].name, name))
			return r.metrics[i].value;
	cr_assert_fail("no metric %s of %s", name, scope);
	return NAN;
}

static const char *reason(size_t job)
{
	return r.jobs[job].reason >= 0 ? r.reason_texts[r.jobs[job].reason] : "";
}

static const char *node(size_t job) { return r.node_names[r.jobs[job].node]; }

/* The bill: cost_total of scope all, allocations plus idle (powered,
 * unallocated) capacity. */
static double bill(void)
{
	cr_assert_float_eq(metric("all", "cost_total"),
			   metric("all", "cost_allocated") + metric("all", "cost_idle"), 1e-9);
	return metric("all", "cost_total");
}

/*
 * Scale from zero.  The jobs arrive at 0; the scheduler finds no node; the
 * autoscaler's loop at 0 (after that pass) packs the three 4-GPU pods into
 * new 4-GPU nodes, 3 needed, capped at max 2: two nodes launch at 0 and are
 * Ready at 300 s.  Jobs 0 and 1 run 300-3900; job 2 waits for a node: it
 * starts at 3900 on either node (a tie, drawn from the seed) and ends at 7500,
 * after its 7200 s deadline.  Queue times 300, 300, 3600 + 300 = 3900: mean
 * 1500 s.  Scale-down: the other node is empty from 3900, unneeded at the scan of
 * 3900, removed 10 min later at 4500 (the scale-up at 0 is more than 10 min
 * back); the other is empty at 7500 and removed at 8100, where the run ends.
 * Node-hours: 4500/3600 + 8100/3600 = 1.25 + 2.25 = 3.5; bill 3.5 x $10.00
 * = $35.00 = allocations 3 jobs x 4 GPU-h x $2.50 = $30.00 + idle $5.00
 * (job 2's node idle 0-300 and 7500-8100, the other 0-300 and 3900-4500: 30 min
 * x $10.00/h).
 */
Test(autoscale, scale_from_zero_waits_for_provisioning_and_caps_at_max)
{
	run(A, NULL, 0);
	cr_assert_eq(r.jobs[0].start, 300 * S);
	cr_assert_eq(r.jobs[1].start, 300 * S);
	cr_assert_eq(r.jobs[2].start, 3900 * S);
	cr_assert_eq(r.jobs[2].end, 7500 * S);
	cr_assert(!strcmp(node(2), "batch-0") || !strcmp(node(2), "batch-1"), "%s", node(2));
	cr_assert_float_eq(metric("all", "queue_time_mean_s"), 1500, 1e-9);
	cr_assert_float_eq(metric("all", "deadline_met_pct"), 200.0 / 3, 1e-9);
	cr_assert_eq(r.sim_end, 8100 * S, "the run ends when the last node is removed");
	cr_assert_float_eq(metric("batch", "node_hours"), 3.5, 1e-9);
	cr_assert_float_eq(metric("batch", "cost_nodes"), 35.00, 1e-9);
	cr_assert_float_eq(bill(), 35.00, 1e-9);
	cr_assert_float_eq(metric("all", "cost_idle"), 5.00, 1e-9);
	cr_assert_float_eq(metric("batch", "scale_ups"), 1, 0);
	cr_assert_float_eq(metric("batch", "nodes_added"), 2, 0);
	cr_assert_float_eq(metric("batch", "scale_downs"), 2, 0);
	cr_assert_float_eq(metric("batch", "nodes_peak"), 2, 0);
}

/*
 * What the diagnosis reads.  At max from the scan at 0, with job 2 pending
 * that a third node would host, until it starts at 3900: 3900 s.  Waiting
 * for provisioning: jobs 0 and 1, 0-300 s: 600 pod-seconds (job 2 was not
 * given a node, so it waits for capacity, not for provisioning).
 */
Test(autoscale, results_tell_capacity_from_provisioning_time)
{
	run(A, NULL, 0);
	cr_assert_eq(r.n_scaling, 1);
	const struct pool_scaling *ps = &r.scaling[0];
	cr_assert_eq(ps->pool, 0);
	cr_assert_float_eq(ps->at_max_s, 3900, 1e-9);
	cr_assert_float_eq(ps->provisioning_wait_s, 600, 1e-9);
	cr_assert_eq(ps->scale_ups, 1);
	cr_assert_float_eq(metric("batch", "autoscaler_at_max_s"), 3900, 1e-9);
	cr_assert_float_eq(metric("batch", "provisioning_wait_s"), 600, 1e-9);
}

/* The scheduler's message carries the autoscaler's event. */
Test(autoscale, pending_pods_carry_the_autoscalers_event)
{
	run(A, NULL, 0);
	cr_assert_str_eq(reason(0),
			 "no nodes available to schedule pods "
			 "(cluster-autoscaler: pod triggered scale-up: [{batch 0->2 (max: 2)}])");
	cr_assert_str_eq(reason(2), "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
				    "preemption: 0/2 nodes are available: 2 No preemption victims "
				    "found for incoming pod.. "
				    "(cluster-autoscaler: pod didn't trigger scale-up: 1 max node "
				    "group size reached)");
	double waiting = 0;
	for (size_t i = 0; i < r.n_pending_reasons; i++)
		if (!strcmp(r.pending_reasons[i].scope, "all") &&
		    strstr(r.pending_reasons[i].reason, "max node group size reached"))
			waiting += r.pending_reasons[i].pending_seconds;
	cr_assert_float_eq(waiting, 3600, 1e-9, "job 2 from 300 (next scan) to 3900");
}

/* A pod no node group fits: CA's NotTriggerScaleUp; nothing launches. */
Test(autoscale, a_pod_no_node_group_fits_does_not_trigger_scale_up)
{
	RUN_WITH(A, "workloads.train.node_selector={zone: b}", "horizon=1h");
	cr_assert_str_eq(reason(0),
			 "no nodes available to schedule pods (cluster-autoscaler: pod "
			 "didn't trigger scale-up (it wouldn't fit if a new node is added))");
	cr_assert_float_eq(metric("batch", "nodes_added"), 0, 0);
	cr_assert_float_eq(metric("batch", "node_hours"), 0, 0);
}

/*
 * max 3: one scan launches three nodes, all jobs run 300-3900 (queue 300 s
 * each, every deadline met), the nodes are removed at 4500.  Node-hours
 * 3 x 4500/3600 = 3.75: bill $37.50, $2.50 more than max 2 for a mean queue
 * time 1200 s shorter and no missed deadline.
 */
Test(autoscale, a_larger_max_trades_the_bill_for_queue_time)
{
	RUN_WITH(A, "pools.batch.autoscale.max=3");
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(r.jobs[i].start, 300 * S);
	cr_assert_float_eq(metric("all", "queue_time_max_s"), 300, 1e-9);
	cr_assert_float_eq(metric("all", "deadline_met_pct"), 100, 1e-9);
	cr_assert_float_eq(metric("batch", "node_hours"), 3.75, 1e-9);
	cr_assert_float_eq(bill(), 37.50, 1e-9);
	cr_assert_float_eq(r.scaling[0].at_max_s, 0, 0, "every pod got a node");
	cr_assert_float_eq(r.scaling[0].provisioning_wait_s, 900, 1e-9, "3 pods x 300 s");
}

/*
 * unneeded 1m, no delay after add: batch-1 goes at 3900 + 60, batch-0 at
 * 7500 + 60.  Node-hours (3960 + 7560)/3600 = 3.2: $32.00.
 */
Test(autoscale, the_unneeded_time_decides_when_empty_nodes_go)
{
	RUN_WITH(A, "pools.batch.autoscale.scale_down_unneeded_time=1m",
		 "pools.batch.autoscale.scale_down_delay_after_add=0s");
	cr_assert_eq(r.sim_end, 7560 * S);
	cr_assert_float_eq(metric("batch", "node_hours"), 3.2, 1e-9);
	cr_assert_float_eq(bill(), 32.00, 1e-9);
}

/*
 * delay after add 2h: batch-1, unneeded from 3900, cannot go before 7200
 * (the scale-up at 0 + 2h); batch-0 goes at 7500 + 60.  Node-hours
 * (7200 + 7560)/3600 = 4.1: $41.00.
 */
Test(autoscale, no_scale_down_within_the_delay_after_a_scale_up)
{
	RUN_WITH(A, "pools.batch.autoscale.scale_down_unneeded_time=1m",
		 "pools.batch.autoscale.scale_down_delay_after_add=2h");
	cr_assert_float_eq(metric("batch", "node_hours"), 4.1, 1e-9);
	cr_assert_float_eq(bill(), 41.00, 1e-9);
}

/*
 * min 1, one node at the start: job 0 starts at 0; the scan at 0 adds one
 * node (max 2) for job 1, Ready at 300; job 2 takes batch-0 when job 0 ends
 * at 3600 and ends at 7200, its deadline (met: end <= deadline).  batch-1 is
 * empty at 3900 and removed at 4500; batch-0 stays (min 1) and is billed to
 * the end of the work, 7200.  Queue times 0, 300, 3600: mean 1300 s.
 * Node-hours 7200/3600 + 4500/3600 = 3.25: $32.50.
 */
Test(autoscale, min_keeps_nodes_and_nodes_is_the_initial_size)
{
	RUN_WITH(A, "pools.batch.nodes=1", "pools.batch.autoscale.min=1");
	cr_assert_eq(r.jobs[0].start, 0);
	cr_assert_eq(r.jobs[1].start, 300 * S);
	cr_assert_eq(r.jobs[2].start, 3600 * S);
	cr_assert_float_eq(metric("all", "queue_time_mean_s"), 1300, 1e-9);
	cr_assert_float_eq(metric("all", "deadline_met_pct"), 100, 1e-9);
	cr_assert_eq(r.sim_end, 7200 * S);
	cr_assert_float_eq(metric("batch", "node_hours"), 3.25, 1e-9);
	cr_assert_float_eq(bill(), 32.50, 1e-9);
	cr_assert_float_eq(metric("batch", "scale_downs"), 1, 0);
}

/*
 * Expanders (tests/fixtures/autoscale-expanders.yaml): two 1-GPU pods; the
 * option of pool small is 2 nodes of 1 GPU (nothing wasted, $6.00/h for 2
 * GPUs: $3.00 per requested GPU), of pool big 1 node of 4 GPUs (half its
 * GPUs wasted, $4.00/h: $2.00 per requested GPU).  least-waste picks small,
 * price and priority (10 over 5) pick big.  The pods run 120-1920 s and the
 * nodes go at 2520: small bills 2 x 2520/3600 x $3.00 = $4.20, big 2520/3600
 * x $4.00 = $2.80.
 */
static void expander(const char *name)
{
	char a[80], b[80];
	snprintf(a, sizeof a, "pools.small.autoscale.expander=%s", name);
	snprintf(b, sizeof b, "pools.big.autoscale.expander=%s", name);
	const char *const sets[] = {a, b};
	run(X, sets, 2);
}

/*
 * least-waste scores the new nodes' cpu and memory only
 * (cluster-autoscaler/expander/waste/waste.go: wastedCPU + wastedMemory,
 * each the unrequested share; GPUs do not count).  Nodes of small have 16
 * cpu, of big 20; the pods ask 8 each.  small's option: 2 nodes, 32 cpu for
 * 16 requested, waste 0.5; big's: 1 node, 20 for 16, waste 0.2: big grows
 * (pods 120-1920 s, node gone at 2520: $2.80).  With a GPU term (small 0 +
 * 0.5, big 2/4 + 0.2 = 0.7) small grew instead, which CA never does.
 */
#define CPUS "pools.small.cpu=16", "pools.big.cpu=20", "workloads.eval.cpu=8"

Test(autoscale, least_waste_scores_cpu_and_memory_only)
{
	const char *const sets[] = {"pools.small.autoscale.expander=least-waste",
				    "pools.big.autoscale.expander=least-waste", CPUS};
	run(X, sets, 5);
	cr_assert_str_eq(node(0), "big-0");
	cr_assert_str_eq(node(1), "big-0");
	cr_assert_eq(r.jobs[0].start, 120 * S);
	cr_assert_float_eq(bill(), 2.80, 1e-9);
}

/* The default expander is least-waste (cluster-autoscaler/config/flags/
 * flags.go: expanderFlag defaults to expander.LeastWasteExpanderName): the
 * same case with no expander named. */
Test(autoscale, the_default_expander_is_least_waste)
{
	const char *const sets[] = {"pools.small.autoscale={max: 4, provision_time: 2m}",
				    "pools.big.autoscale={max: 4, provision_time: 2m}", CPUS};
	run(X, sets, 5);
	cr_assert_eq(sc->pools[0].autoscale.expander, EXPANDER_LEAST_WASTE);
	cr_assert_str_eq(node(0), "big-0");
}

/*
 * most-pods keeps the options that schedule the most pods
 * (expander/mostpods/mostpods.go): with small's max at 1 its option holds 1
 * pod, big's 2: big.  least-nodes keeps those with the fewest new nodes
 * (expander/leastnodes/leastnodes.go): small needs 2 nodes, big 1: big.
 * Either way $2.80.
 */
Test(autoscale, most_pods_and_least_nodes)
{
	const char *const most[] = {"pools.small.autoscale={max: 1, provision_time: 2m, "
				    "expander: most-pods}",
				    "pools.big.autoscale.expander=most-pods"};
	run(X, most, 2);
	cr_assert_str_eq(node(0), "big-0");
	cr_assert_str_eq(node(1), "big-0");
	cr_assert_float_eq(bill(), 2.80, 1e-9);
	cleanup();
	const char *const least[] = {"pools.small.autoscale.expander=least-nodes",
				     "pools.big.autoscale.expander=least-nodes"};
	run(X, least, 2);
	cr_assert_str_eq(node(0), "big-0");
	cr_assert_float_eq(metric("small", "nodes_added"), 0, 0);
}

/*
 * The priority expander's ConfigMap (expander/priority/priority.go): a map
 * of priority to regular expressions matched against node group names; the
 * options of the highest priority matched are kept.  {10: [^small$], 5:
 * [big]} puts small first, whatever the pools' own priority: small grows,
 * 2 nodes of 1 GPU, $4.20.  Chained expanders
 * (expander/factory/chain.go) filter in turn: [priority, least-nodes] with
 * both pools at 10 leaves the choice to least-nodes: big.
 */
Test(autoscale, the_priority_configmap_and_chained_expanders)
{
	const char *const cm[] = {"pools.small.autoscale.expander=priority",
				  "pools.big.autoscale.expander=priority",
				  "pools.small.autoscale.priorities={10: [\"^small$\"], 5: [big]}"};
	run(X, cm, 3);
	cr_assert_str_eq(node(0), "small-0");
	cr_assert_str_eq(node(1), "small-1");
	cr_assert_float_eq(bill(), 4.20, 1e-9);
	cleanup();
	const char *const chain[] = {"pools.small.autoscale.expander=[priority, least-nodes]",
				     "pools.big.autoscale.expander=priority,least-nodes",
				     "pools.big.autoscale.priorities={10: [\"^(small|big)$\"]}"};
	run(X, chain, 3);
	cr_assert_eq(sc->pools[0].autoscale.n_expanders, 2);
	cr_assert_str_eq(node(0), "big-0");
	cleanup();
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *const bad[] = {"pools.small.autoscale.priorities={high: [small]}"};
	cr_assert_eq(scenario_load(X, bad, 1, &sc, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "priority 'high' is not a whole number"), "%s", err.msg);
}

/*
 * --max-node-provision-time (15m): a node not registered by then is given
 * up and its group backs off, 5m at first (clusterstate/clusterstate.go
 * "Scale-up timed out", RegisterFailedScaleUp; utils/backoff).  big
 * (priority 10) takes 20m to boot: launched at 0, given up at 900 s
 * (0.25 node-h, $1.00), in backoff to 1200; the scan at 900 s grows small
 * instead: Ready at 1020, pods 1020-2820 s, nodes gone at 3420: 2 x
 * 2520/3600 x $3.00 = $4.20; $5.20 in all.  With max_node_provision_time
 * 30m, big is Ready at 1200, pods 1200-3000, gone at 3600: $4.00.
 */
Test(autoscale, a_node_not_ready_by_max_node_provision_time_is_given_up)
{
	const char *const slow[] = {"pools.small.autoscale.expander=priority",
				    "pools.big.autoscale.expander=priority",
				    "pools.big.autoscale.provision_time=20m"};
	run(X, slow, 3);
	cr_assert_float_eq(metric("big", "failed_scale_ups"), 1, 0);
	cr_assert_float_eq(metric("big", "node_hours"), 0.25, 1e-9);
	cr_assert_str_eq(node(0), "small-0");
	cr_assert_eq(r.jobs[0].start, 1020 * S);
	cr_assert_float_eq(bill(), 5.20, 1e-9);
	cleanup();
	const char *const patient[] = {"pools.small.autoscale.expander=priority",
				       "pools.big.autoscale.expander=priority",
				       "pools.big.autoscale.provision_time=20m",
				       "pools.big.autoscale.max_node_provision_time=30m"};
	run(X, patient, 4);
	cr_assert_float_eq(metric("big", "failed_scale_ups"), 0, 0);
	cr_assert_eq(r.jobs[0].start, 1200 * S);
	cr_assert_float_eq(bill(), 4.00, 1e-9);
}

Test(autoscale, price_prefers_the_cheapest_requested_gpu)
{
	expander("price");
	cr_assert_str_eq(node(0), "big-0");
	cr_assert_str_eq(node(1), "big-0");
	cr_assert_float_eq(bill(), 2.80, 1e-9);
}

Test(autoscale, priority_prefers_the_highest_priority)
{
	expander("priority");
	cr_assert_str_eq(node(0), "big-0");
	cr_assert_float_eq(metric("small", "nodes_added"), 0, 0);
}

/* The expander is the cluster's: named on one pool, it is every pool's
 * (docs/autoscaling.md); two pools that name different ones are refused. */
Test(autoscale, one_pool_names_the_clusters_expander)
{
	const char *const one[] = {
		"pools.small.autoscale.expander=price",
		"pools.big.autoscale={max: 4, provision_time: 2m, priority: 10}"};
	run(X, one, 2);
	cr_assert_eq(sc->pools[1].autoscale.expander, sc->pools[0].autoscale.expander);
	cr_assert_str_eq(node(0), "big-0", "price, as if both pools named it");
	cr_assert_float_eq(bill(), 2.80, 1e-9);
	cleanup();
	const char *const two[] = {"pools.small.autoscale.expander=price",
				   "pools.big.autoscale.expander=least-waste"};
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(X, two, 2, &sc, &err), GP_EINPUT);
	cr_expect(strstr(err.msg, "expander least-waste differs from price (pool small)"), "%s",
		  err.msg);
}

/* spot discount 0.7 of $2.50: $0.75/GPU-h; max 3 as above: 3.75 node-hours
 * x 4 GPUs x $0.75 = $11.25. */
Test(autoscale, a_spot_discount_prices_the_nodes)
{
	RUN_WITH(A, "pools.batch.autoscale.max=3",
		 "pools.batch.spot={discount: 0.7, interruption: {rate: 0/h}}");
	cr_assert_float_eq(bill(), 11.25, 1e-9);
	cr_assert_float_eq(metric("batch", "spot_interruptions"), 0, 0);
}

/*
 * An autoscaled spot pool of one node with a 3h job checkpointing every
 * minute: every interruption evicts the job (it keeps its checkpointed work)
 * and the autoscaler replaces the node for it, so there is one scale-up per
 * interruption plus the first; the job still finishes.
 */
Test(autoscale, the_autoscaler_replaces_interrupted_spot_nodes)
{
	RUN_WITH(A, "workloads.train.count=1", "workloads.train.duration=3h",
		 "workloads.train.checkpoint=1m", "workloads.train.deadline={within: 1d}",
		 "pools.batch.autoscale.max=1",
		 "pools.batch.spot={discount: 0.6, interruption: {rate: 2/h}}");
	double n = metric("batch", "spot_interruptions");
	cr_assert_gt(n, 0, "at 2/h over 3h, seed 1 interrupts");
	cr_assert_float_eq(metric("batch", "scale_ups"), n + 1, 0);
	cr_assert_eq(r.jobs[0].status, JOB_COMPLETED);
	cr_assert_float_eq(metric("all", "jobs_preempted"), n, 0);
	/* Each eviction loses under a minute of work and adds a provisioning
	 * wait of 5m after the next scan (within 10s): the job ends within
	 * 3h + n x (5m + 10s + 1m) of its first start. */
	cr_assert_leq(r.jobs[0].end - r.jobs[0].start,
		      3 * SIM_HOUR + (sim_time)n * (6 * SIM_MINUTE + 10 * S));
	cr_assert_geq(r.jobs[0].end - r.jobs[0].start, 3 * SIM_HOUR + (sim_time)n * 5 * SIM_MINUTE);
}

/*
 * A fixed spot pool: interruptions arrive at rate x node-hours (Poisson);
 * 20 one-GPU nodes kept busy for about 100 h at 0.05/h give about 100.
 * Within 4 standard deviations (sqrt of the mean).  Checkpoints every 10m
 * bound the lost work: allocated GPU-hours exceed the 2,000 of work by
 * less than 10 min per eviction.
 */
Test(autoscale, spot_interruptions_follow_their_rate)
{
	RUN_WITH(A,
		 "pools=[{name: spot, nodes: 20, gpu: L4, gpus_per_node: 1, startup: 2m, "
		 "price: {gpu_hour: 1.0}, spot: {interruption: {rate: 0.05/h}}}]",
		 "workloads.train.gpus=1", "workloads.train.count=100",
		 "workloads.train.duration=20h", "workloads.train.checkpoint=10m",
		 "workloads.train.deadline={within: 30d}");
	double n = metric("spot", "spot_interruptions"), hours = metric("spot", "node_hours");
	double mean = 0.05 * hours;
	cr_assert_gt(hours, 2000);
	cr_assert_lt(fabs(n - mean), 4 * sqrt(mean), "%g interruptions, expected about %g", n,
		     mean);
	cr_assert_float_eq(metric("all", "jobs_completed"), 100, 0);
	double evicted = metric("all", "jobs_preempted");
	cr_assert_gt(evicted, 0);
	double allocated = metric("all", "gpu_hours_allocated");
	cr_assert_geq(allocated, 2000 - 1e-6);
	cr_assert_lt(allocated, 2000 + evicted / 6);
}

/* --- the loader ------------------------------------------------------------ */

static void rejects(const char *const *sets, size_t n, const char *msg)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	struct scenario *bad = NULL;
	cr_assert_eq(scenario_load(A, sets, n, &bad, &err), GP_EINPUT, "expected: %s", msg);
	cr_assert_null(bad);
	cr_assert_str_eq(err.msg, msg);
}

#define REJECTS(msg, ...)                                          \
	do {                                                       \
		const char *const sets_[] = {__VA_ARGS__};         \
		rejects(sets_, sizeof sets_ / sizeof *sets_, msg); \
	} while (0)

/* Each error names the value that broke the rule: min above max is blamed
 * on the --set that made it so (it named the file's autoscale map). */
Test(autoscale, the_loader_checks_autoscale_and_spot)
{
	REJECTS("--set pools.batch.autoscale.min=3:1:27: error: autoscale min 3 is above max 2; "
		"expected min <= max",
		"pools.batch.autoscale.min=3");
	REJECTS("--set pools.batch.nodes=3:1:19: error: nodes 3 is outside autoscale's [0, 2]; "
		"expected the initial size between min and max",
		"pools.batch.nodes=3");
	REJECTS("--set pools.batch.autoscale.mx=3:1:23: error: unknown key 'mx' in autoscale; did "
		"you mean 'max'?",
		"pools.batch.autoscale.mx=3");
	REJECTS("--set pools.batch.autoscale.expander=cheapest:1:32: error: unknown expander "
		"'cheapest'; expected random, least-waste, price, priority, most-pods or least-nodes",
		"pools.batch.autoscale.expander=cheapest");
	REJECTS("--set pools.batch.spot={discount: 0.5, price: {gpu_hour: 1}}:1:18: error: spot "
		"takes a price or a discount, not both",
		"pools.batch.spot={discount: 0.5, price: {gpu_hour: 1}}");
	REJECTS("--set pools.batch.spot={interruption: {rate: 5}}:1:40: error: invalid "
		"interruption rate '5'; expected a rate per node like 0.05/h",
		"pools.batch.spot={interruption: {rate: 5}}");
	REJECTS("--set pools.batch.autoscale=null:1:23: error: invalid autoscale 'null'; expected "
		"a map like {min: 0, max: 4, provision_time: 5m}",
		"pools.batch.autoscale=null");
}

/* --- the diagnosis (diagnose.h) ------------------------------------------------ */

/* max 2: at max with job 2 pending 3900 s of the 8100 s span (over the 5%
 * threshold): the node group's max is the limit; the fix doubles it. */
Test(autoscale, the_diagnosis_names_a_node_group_at_its_max)
{
	run(A, NULL, 0);
	cr_assert_geq(r.n_findings, 1);
	const struct finding *f = &r.findings[0];
	cr_assert_eq(f->kind, KIND_NODE_GROUP_MAX);
	cr_assert_eq(f->pool, 0);
	cr_assert_float_eq(f->figure, 3900, 1e-9);
	cr_assert_eq(f->n_fixes, 1);
	cr_assert_str_eq(f->fixes[0].sets[0].key, "pools.batch.autoscale.max");
	cr_assert_str_eq(f->fixes[0].sets[0].value, "4");
}

/* max 3: nobody waits for capacity; all 900 pending pod-seconds are the wait
 * for provisioning: the fix keeps the 3 nodes warm. */
Test(autoscale, the_diagnosis_names_provisioning_time_not_capacity)
{
	/* A team that wants its jobs started within 2 minutes (with the deadline
	 * alone as its goal, met, there is no finding). */
	RUN_WITH(A, "pools.batch.autoscale.max=3", "workloads.train.goal={queue_p95: 2m}");
	cr_assert_geq(r.n_findings, 1);
	const struct finding *f = &r.findings[0];
	cr_assert_eq(f->kind, KIND_PROVISIONING);
	cr_assert_float_eq(f->figure, 900, 1e-9);
	cr_assert_eq(f->fixes[0].n_sets, 2);
	cr_assert_str_eq(f->fixes[0].sets[0].key, "pools.batch.nodes");
	cr_assert_str_eq(f->fixes[0].sets[0].value, "3");
	cr_assert_str_eq(f->fixes[0].sets[1].key, "pools.batch.autoscale.min");
	cr_assert_str_eq(f->fixes[0].sets[1].value, "3");
	for (size_t i = 0; i < r.n_findings; i++)
		cr_assert_neq(r.findings[i].kind, KIND_NODE_GROUP_MAX);
}

/* --- the timeseries ---------------------------------------------------------- */

/* The row of scope at t (seconds) in the run's timeseries. */
static const struct ts_row *ts_at(const char *scope, int64_t t)
{
	for (size_t i = 0; i < r.n_ts; i++)
		if (!strcmp(r.ts[i].scope, scope) && r.ts[i].t == t * S)
			return &r.ts[i];
	cr_assert_fail("no timeseries row of %s at %lld s", scope, (long long)t);
	return NULL;
}

/*
 * Provisioning nodes beside Ready ones (5m windows, set here: the adaptive
 * step of so short a run is 1m; time-weighted means in GPUs).  The fixture launches 2 nodes of 4 GPUs at 0, Ready at 300: the
 * window [0, 300) has 8 GPUs provisioning and none Ready, [300, 600) none
 * provisioning and 8 Ready.  With provision_time 7m30s they are Ready at
 * 450: [300, 600) holds 8 provisioning for 150 of its 300 s (mean 4) and 8
 * Ready for the other 150 (mean 4).  Scope all sums the pools: the same.
 */
Test(autoscale, the_timeseries_shows_provisioning_beside_ready_nodes)
{
	RUN_WITH(A, "output.step=5m");
	cr_assert_float_eq(ts_at("batch", 0)->gpus_provisioning, 8, 1e-9);
	cr_assert_float_eq(ts_at("batch", 0)->gpus_capacity, 0, 1e-9);
	cr_assert_float_eq(ts_at("batch", 300)->gpus_provisioning, 0, 1e-9);
	cr_assert_float_eq(ts_at("batch", 300)->gpus_capacity, 8, 1e-9);
	cleanup();
	RUN_WITH(A, "output.step=5m", "pools.batch.autoscale.provision_time=7m30s");
	cr_assert_float_eq(ts_at("batch", 0)->gpus_provisioning, 8, 1e-9);
	cr_assert_float_eq(ts_at("batch", 300)->gpus_provisioning, 4, 1e-9);
	cr_assert_float_eq(ts_at("batch", 300)->gpus_capacity, 4, 1e-9);
	cr_assert_float_eq(ts_at("all", 300)->gpus_provisioning, 4, 1e-9);
	cr_assert_float_eq(ts_at("batch", 600)->gpus_provisioning, 0, 1e-9);
}

/* --- the scale-up estimate: CA's binpacking estimator -------------------------- */

/*
 * The estimate places pod by pod with the scheduler's filters on new nodes
 * from the pool's template (kubernetes/autoscaler cluster-autoscaler/
 * estimator/binpacking_estimator.go: tryToScheduleOnExistingNodes, then the
 * last node added, then a new node while the limiter allows), not a division
 * of GPU counts.  tests/fixtures/autoscale-pack.yaml: 2 jobs of 3 GPUs (big)
 * and 2 of 1 GPU (small), 1h each at 0, on 4-GPU nodes, max 4.
 *
 * Scan at 0: big pod 1 opens e0 (3 of 4 GPUs), big pod 2 does not fit e0's
 * last GPU: e1.  The small pods fit the new nodes already added: e0's and
 * e1's last GPU.  2 nodes (a share per pod would say 2 x 1 + 2 x 1/4 = 3).
 * They are Ready at 300; every job runs 300-3900 (queue 300 s each); both
 * nodes are empty at 3900 and removed at 4500.  Node-hours 2 x 4500/3600 =
 * 2.5: $25.00 = allocations 8 GPU-h x $2.50 = $20.00 + idle 2 x (300 + 600)
 * s = 0.5 node-h x $10.00 = $5.00.
 */
Test(autoscale, the_estimate_packs_pod_by_pod_onto_the_new_nodes)
{
	run("tests/fixtures/autoscale-pack.yaml", NULL, 0);
	cr_assert_float_eq(metric("batch", "nodes_added"), 2, 0);
	cr_assert_float_eq(metric("batch", "scale_ups"), 1, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(r.jobs[i].start, 300 * S, "job %zu", i);
	cr_assert_float_eq(metric("all", "queue_time_mean_s"), 300, 1e-9);
	cr_assert_eq(r.sim_end, 4500 * S);
	cr_assert_float_eq(metric("batch", "node_hours"), 2.5, 1e-9);
	cr_assert_float_eq(bill(), 25.00, 1e-9);
	cr_assert_float_eq(metric("all", "cost_idle"), 5.00, 1e-9);
	cleanup();
	/* Nodes of 8 GPUs ($20.00 an hour): both big pods and both small ones
	 * fit e0 (3 + 3 + 1 + 1): 1 node, 300-4500 s: 1.25 node-h, $25.00. */
	RUN_WITH("tests/fixtures/autoscale-pack.yaml", "pools.batch.gpus_per_node=8");
	cr_assert_float_eq(metric("batch", "nodes_added"), 1, 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(r.jobs[i].start, 300 * S, "job %zu", i);
	cr_assert_float_eq(metric("batch", "node_hours"), 1.25, 1e-9);
	cr_assert_float_eq(bill(), 25.00, 1e-9);
}

/*
 * Sizes and caps.  3 big and 3 small, max 3: the big pods open e0, e1, e2
 * and the small ones take their last GPUs: 3 nodes, every job at 300,
 * removed at 4500: 3 x 4500/3600 = 3.75 node-h, $37.50.  Max 2: big pods 1
 * and 2 open e0 and e1, big pod 3 fits neither and the limiter allows no
 * third node; small pods 1 and 2 take e0's and e1's last GPU, small pod 3
 * fits no node added: 2 nodes.  At 300 four jobs start; the last big and
 * small jobs wait (the scan at 300 finds the pool at max: "max node group
 * size reached", the class's message) and start at 3900 when the others end.
 */
Test(autoscale, the_estimate_stops_at_max_and_names_it)
{
	RUN_WITH("tests/fixtures/autoscale-pack.yaml", "workloads.big.count=3",
		 "workloads.small.count=3", "pools.batch.autoscale.max=3");
	cr_assert_float_eq(metric("batch", "nodes_added"), 3, 0);
	for (size_t i = 0; i < 6; i++)
		cr_assert_eq(r.jobs[i].start, 300 * S, "job %zu", i);
	cr_assert_float_eq(bill(), 37.50, 1e-9);
	cleanup();
	RUN_WITH("tests/fixtures/autoscale-pack.yaml", "workloads.big.count=3",
		 "workloads.small.count=3", "pools.batch.autoscale.max=2");
	cr_assert_float_eq(metric("batch", "nodes_added"), 2, 0);
	cr_assert_float_eq(metric("batch", "scale_ups"), 1, 0);
	for (size_t i = 0; i < 6; i++)
		cr_assert_eq(r.jobs[i].start, (i == 2 || i == 5 ? 3900 : 300) * S, "job %zu", i);
	cr_assert(strstr(reason(2), "(cluster-autoscaler: pod didn't trigger scale-up: 1 max "
				    "node group size reached)"),
		  "%s", reason(2));
	cr_assert(strstr(reason(5), "max node group size reached"), "%s", reason(5));
}

/*
 * The estimator's order is CA's DecreasingPodOrderer (estimator/
 * decreasing_pod_orderer.go: cpu / node cpu + memory / node memory, largest
 * first), whatever the scenario's order.  Nodes of 4 GPUs and 8 cpu; 2 pods
 * of 1 GPU and 2 cpu (big, score 0.25) and 2 of 1 GPU and 6 cpu (small,
 * 0.75).  Small first: e0 takes one (2 cpu left), the second opens e1; the
 * big pods fit e0 (2 cpu) and e1 (2 cpu): 2 nodes.  In the scenario's order
 * the big pods would share e0 (4 cpu left), the small ones need e1 and e2:
 * 3.  Until 4m, before the nodes are Ready: what the scan at 0 launched.
 */
Test(autoscale, the_estimate_orders_pods_by_their_share_of_the_node)
{
	RUN_WITH("tests/fixtures/autoscale-pack.yaml", "pools.batch.cpu=8", "workloads.big.gpus=1",
		 "workloads.big.cpu=2", "workloads.small.cpu=6", "horizon=4m");
	cr_assert_float_eq(metric("batch", "nodes_added"), 2, 0);
	cleanup();
	RUN_WITH("tests/fixtures/autoscale-pack.yaml", "pools.batch.cpu=8", "workloads.big.gpus=1",
		 "workloads.big.cpu=2", "workloads.small.cpu=2", "horizon=4m");
	cr_assert_float_eq(metric("batch", "nodes_added"), 1, 0,
			   "4 pods of 1 GPU, 2 cpu: one node");
}

/* --- inference replicas ---------------------------------------------------------- */

#define SERVE "tests/fixtures/autoscale-serve.yaml"

/*
 * Pending replicas trigger scale-up (CA scales up for every unschedulable
 * pod, whoever owns it).  tests/fixtures/autoscale-serve.yaml: 2 replicas of
 * 1 H100 on 1-GPU nodes at $4.00 an hour, no node at 0, max 3; until 1h.
 * The scan at 0 finds both replicas pending: one new node each (each takes
 * the whole GPU): 2 nodes, Ready at 300, where the replicas are placed; they
 * waited 2 x 300 = 600 s for provisioning.  Bill: 2 nodes x 1 h x $4.00 =
 * $8.00, of which idle 2 x 300 s x $4.00/h = $0.67 (before the replicas).
 * Max 1: one node; the second replica waits at max from the scan at 0 to
 * the horizon (3600 s); 300 s of provisioning wait; $4.00.
 */
Test(autoscale, pending_replicas_trigger_scale_up)
{
	RUN_WITH(SERVE, "horizon=1h");
	cr_assert_float_eq(metric("serve", "nodes_added"), 2, 0);
	cr_assert_float_eq(metric("serve", "scale_ups"), 1, 0);
	cr_assert_float_eq(metric("serve", "provisioning_wait_s"), 600, 1e-9);
	cr_assert_float_eq(metric("serve", "autoscaler_at_max_s"), 0, 0);
	cr_assert_float_eq(bill(), 8.00, 1e-9);
	cr_assert_float_eq(metric("all", "cost_idle"), 2 * 300 * 4.00 / 3600, 1e-9);
	cr_assert_gt(metric("chat", "requests_completed"), 0);
	cleanup();
	RUN_WITH(SERVE, "horizon=1h", "pools.serve.autoscale.max=1");
	cr_assert_float_eq(metric("serve", "nodes_added"), 1, 0);
	cr_assert_float_eq(metric("serve", "provisioning_wait_s"), 300, 1e-9);
	cr_assert_float_eq(metric("serve", "autoscaler_at_max_s"), 3600, 1e-9);
	cr_assert_float_eq(bill(), 4.00, 1e-9);
	/* The diagnosis sees the replica waiting at max: the max is the limit. */
	const struct finding *at_max = NULL;
	for (size_t i = 0; i < r.n_findings; i++)
		if (r.findings[i].kind == KIND_NODE_GROUP_MAX)
			at_max = &r.findings[i];
	cr_assert_not_null(at_max);
	cr_assert_float_eq(at_max->figure, 3600, 1e-9);
	cr_assert_str_eq(at_max->fixes[0].sets[0].key, "pools.serve.autoscale.max");
	cr_assert_str_eq(at_max->fixes[0].sets[0].value, "2");
	cleanup();
	/* Nodes of 2 GPUs ($8.00 an hour): the second replica fits the first
	 * one's new node: 1 node; still 2 x 300 s of provisioning wait; $8.00,
	 * idle 2 GPUs x 300 s x $4.00/h = $0.67. */
	RUN_WITH(SERVE, "horizon=1h", "pools.serve.gpus_per_node=2");
	cr_assert_float_eq(metric("serve", "nodes_added"), 1, 0);
	cr_assert_float_eq(metric("serve", "provisioning_wait_s"), 600, 1e-9);
	cr_assert_float_eq(bill(), 8.00, 1e-9);
	cr_assert_float_eq(metric("all", "cost_idle"), 2 * 300 * 4.00 / 3600, 1e-9);
}

/*
 * Scale-down moves replicas (CA's removal simulation: kubernetes/autoscaler
 * cluster-autoscaler/simulator/cluster.go; a Deployment's pod is drainable,
 * simulator/drainability/rules/replicated; --max-drain-parallelism 1 in
 * cluster-autoscaler/main.go).  Two nodes of 2 H100 ($6.00 a node-hour) at
 * 0, LeastAllocated: the 2 replicas spread, one a node, 1 of 2 GPUs
 * requested each (0.5).  Threshold 0.6: both are under it and each replica
 * fits the other node, so both are unneeded from the scan at 0; at 600
 * (unneeded 10m) serve-0 goes first, its replica is evicted and its
 * replacement placed on serve-1, which is then full (1.0) and stays.  Until
 * 1h: (600 + 3600)/3600 node-h x $6.00 = $7.00; one eviction.  Threshold
 * 0.5: 0.5 is not below it, nothing goes: 2 x $6.00 = $12.00.  Unneeded
 * time 5m: serve-0 goes at 300: (300 + 3600)/3600 x $6.00 = $6.50.
 */
static void serve2(const char *threshold, const char *unneeded)
{
	RUN_WITH(SERVE, "horizon=1h", "pools.serve.nodes=2", "pools.serve.gpus_per_node=2",
		 "pools.serve.price.gpu_hour=3", "scheduler.scoring=LeastAllocated", threshold,
		 unneeded);
}

Test(autoscale, scale_down_moves_replicas_off_an_underused_node)
{
	serve2("pools.serve.autoscale.scale_down_utilization_threshold=0.6",
	       "pools.serve.autoscale.scale_down_unneeded_time=10m");
	cr_assert_float_eq(metric("serve", "scale_downs"), 1, 0);
	cr_assert_float_eq(metric("chat", "replicas_evicted"), 1, 0);
	cr_assert_float_eq(metric("serve", "node_hours"), 7.0 / 6, 1e-9);
	cr_assert_float_eq(bill(), 7.00, 1e-9);
	cr_assert_float_eq(metric("chat", "requests_unfinished") +
				   metric("chat", "requests_completed"),
			   metric("chat", "requests_submitted"), 0, "no request lost");
	cleanup();
	serve2("pools.serve.autoscale.scale_down_utilization_threshold=0.5",
	       "pools.serve.autoscale.scale_down_unneeded_time=10m");
	cr_assert_float_eq(metric("serve", "scale_downs"), 0, 0);
	cr_assert_float_eq(metric("chat", "replicas_evicted"), 0, 0);
	cr_assert_float_eq(bill(), 12.00, 1e-9);
	cleanup();
	serve2("pools.serve.autoscale.scale_down_utilization_threshold=0.6",
	       "pools.serve.autoscale.scale_down_unneeded_time=5m");
	cr_assert_float_eq(bill(), 6.50, 1e-9);
}

/*
 * A PodDisruptionBudget forbids draining a node whose pods it protects
 * (cluster-autoscaler simulator/drainability/rules/pdb: "not enough pod
 * disruption budget to move"; core/scaledown/pdb/basic.go takes a removable
 * node's pods from the budget for the rest of the scan).  serve2 at
 * threshold 0.6: chat's 2 replicas, one a node.  min_available 2 leaves 2 -
 * 2 = 0 disruptions: neither node can go, 2 node-hours, $12.00.
 * min_available 1 allows 1: serve-0 goes at 600 as without a budget, $7.00.
 * max_unavailable 1 of the Deployment's 2 replicas: 2 - (2 - 1) = 1, the
 * same $7.00; max_unavailable 0: $12.00.  (kubernetes pkg/controller/
 * disruption/disruption.go: minAvailable N allows healthy - N,
 * maxUnavailable N allows healthy - (expected - N).)
 */
Test(autoscale, a_pod_disruption_budget_keeps_its_pods_nodes)
{
	static const char *const cases[][2] = {{"{min_available: 2}", "12"},
					       {"{min_available: 1}", "7"},
					       {"{max_unavailable: 1}", "7"},
					       {"{max_unavailable: 0}", "12"}};
	for (size_t i = 0; i < 4; i++) {
		char pdb[64];
		snprintf(pdb, sizeof pdb, "workloads.chat.pdb=%s", cases[i][0]);
		RUN_WITH(SERVE, "horizon=1h", "pools.serve.nodes=2", "pools.serve.gpus_per_node=2",
			 "pools.serve.price.gpu_hour=3", "scheduler.scoring=LeastAllocated",
			 "pools.serve.autoscale.scale_down_utilization_threshold=0.6", pdb);
		double want = atof(cases[i][1]);
		cr_assert_float_eq(bill(), want, 1e-9, "%s", cases[i][0]);
		cr_assert_float_eq(metric("serve", "node_hours"), want / 6, 1e-9, "%s",
				   cases[i][0]);
		cr_assert_float_eq(metric("chat", "replicas_evicted"), want == 7 ? 1 : 0, 0);
		cleanup();
	}
}

/*
 * A batch job's pod moves in scale-down: a Job's pod is replicated
 * (cluster-autoscaler/simulator/drainability/rules/replicated), unless
 * annotated safe-to-evict "false" (rules/notsafetoevict) or it has local
 * storage (rules/localstorage); "true" overrides local storage
 * (rules/safetoevict).  Nodes of 4 GPUs, threshold 0.6: serve-0 holds a
 * replica and the 1-GPU job of 2h (2 of 4: 0.5), serve-1 a replica (1 of
 * 4); both are unneeded.  At 600 CA removes one node (--max-drain-
 * parallelism 1), the first: serve-0.  Its replica and the job move to
 * serve-1; the job restarts there (1 preemption).  With safe_to_evict:
 * false, or local_storage: true, serve-0 is blocked and serve-1 goes: the
 * job keeps running.  Either way one node goes at 600: (600 + 3600)/3600
 * node-h x $12.00 = $14.00.
 */
#define BATCH_MOVES                                                                                 \
	"horizon=1h", "pools.serve.nodes=2", "pools.serve.gpus_per_node=4",                         \
		"pools.serve.price.gpu_hour=3", "scheduler.scoring=LeastAllocated",                 \
		"pools.serve.autoscale.scale_down_utilization_threshold=0.6",                       \
		"workloads=[{name: chat, kind: inference, model: llama-3-8b, replicas: 2, "         \
		"startup: 30s, memory_fraction: 0.9, requests: {process: poisson, rate: 0.5/s, "    \
		"count: 3000, prompt_tokens: 512, output_tokens: 64}}, {name: train, kind: batch, " \
		"count: 1, arrival: {at: \"00:00\"}, gpus: 1, duration: 2h}]"

static size_t train_job(void) { return r.jobs[0].workload == 1 ? 0 : 1; }

Test(autoscale, a_batch_job_moves_unless_its_pods_forbid_it)
{
	RUN_WITH(SERVE, BATCH_MOVES);
	cr_assert_float_eq(metric("serve", "scale_downs"), 1, 0);
	cr_assert_float_eq(metric("all", "jobs_preempted"), 1, 0);
	cr_assert_str_eq(node(train_job()), "serve-1", "moved from serve-0");
	cr_assert_eq(r.jobs[train_job()].start, 0);
	cr_assert_float_eq(bill(), 14.00, 1e-9);
	cleanup();
	RUN_WITH(SERVE, BATCH_MOVES, "workloads.train.safe_to_evict=false");
	cr_assert_float_eq(metric("serve", "scale_downs"), 1, 0);
	cr_assert_float_eq(metric("all", "jobs_preempted"), 0, 0);
	cr_assert_str_eq(node(train_job()), "serve-0");
	cr_assert_float_eq(bill(), 14.00, 1e-9);
	cleanup();
	RUN_WITH(SERVE, BATCH_MOVES, "workloads.train.local_storage=true");
	cr_assert_float_eq(metric("all", "jobs_preempted"), 0, 0);
	cleanup();
	RUN_WITH(SERVE, BATCH_MOVES, "workloads.train.local_storage=true",
		 "workloads.train.safe_to_evict=true");
	cr_assert_float_eq(metric("all", "jobs_preempted"), 1, 0);
	cleanup();
	/* A budget on the Job's pod: min_available 0 allows its 1 pod to go
	 * (1 - 0); max_unavailable needs the controller's scale, which a Job
	 * has not: the disruption controller allows 0 and serve-0 stays. */
	RUN_WITH(SERVE, BATCH_MOVES, "workloads.train.pdb={min_available: 0}");
	cr_assert_float_eq(metric("all", "jobs_preempted"), 1, 0);
	cr_assert_str_eq(node(train_job()), "serve-1");
	cleanup();
	RUN_WITH(SERVE, BATCH_MOVES, "workloads.train.pdb={max_unavailable: 1}");
	cr_assert_float_eq(metric("serve", "scale_downs"), 1, 0);
	cr_assert_float_eq(metric("all", "jobs_preempted"), 0, 0);
	cr_assert_str_eq(node(train_job()), "serve-0");
	cr_assert_float_eq(bill(), 14.00, 1e-9);
}

/*
 * Spot capacity serves inference: an interrupted node's replica is evicted
 * at the notice (its requests go back to the router) and replaced; the
 * fixed pool's node group launches a replacement node.  Two spot nodes of
 * one H100 at 1 interruption per node-hour over the ~1.6 h of 3000 requests
 * (seed 3): every interruption evicts the one replica of its node and
 * launches one node; no request is lost.
 */
Test(autoscale, spot_interruptions_evict_and_replace_replicas)
{
	RUN_WITH(SERVE, "pools=[{name: spot, nodes: 2, gpu: H100-80GB, gpus_per_node: 1, "
			"startup: 2m, price: {gpu_hour: 4.0}, spot: {discount: 0.6, "
			"interruption: {rate: 1/h}}}]");
	double n = metric("spot", "spot_interruptions");
	cr_assert_gt(n, 0);
	cr_assert_float_eq(metric("chat", "replicas_evicted"), n, 0);
	cr_assert_float_eq(metric("spot", "nodes_added"), n, 0);
	cr_assert_float_eq(metric("chat", "requests_completed"), 3000, 0);
	cr_assert_str_eq(r.status, "ok");
}

/*
 * One spot node of one H100 ($4.00 less 60%: $1.60 an hour) serving one
 * replica, interrupted at 1 per node-hour (seed 3: 4 times in the ~1.6 h of
 * 3000 requests).  At each notice the replica is evicted (its GPU idle from
 * then); the node goes 2m later and the fixed pool's node group launches its
 * replacement at once, so the pool is billed without a gap (node-hours =
 * the span); the replacement is Ready after the pool's startup (2m), where
 * the replica's new pod is placed.  Idle per interruption: 120 + 120 s;
 * cost_idle = 4 x 240 s x $1.60/h = $0.43 (0.4267).  Every request
 * completes (those of the evicted replica went back to the router).
 */
Test(autoscale, a_spot_interruption_idles_the_gpu_for_notice_and_startup)
{
	RUN_WITH(SERVE, "workloads.chat.replicas=1",
		 "pools=[{name: spot, nodes: 1, gpu: H100-80GB, gpus_per_node: 1, startup: 2m, "
		 "price: {gpu_hour: 4.0}, spot: {discount: 0.6, interruption: {rate: 1/h}}}]");
	cr_assert_float_eq(metric("spot", "spot_interruptions"), 4, 0);
	cr_assert_float_eq(metric("chat", "replicas_evicted"), 4, 0);
	cr_assert_float_eq(metric("spot", "node_hours") * 3600, sim_seconds(r.sim_end), 1e-6);
	cr_assert_float_eq(metric("all", "cost_idle"), 4 * 240 * 1.60 / 3600, 1e-9);
	cr_assert_float_eq(metric("all", "gpu_hours_allocated") * 3600,
			   sim_seconds(r.sim_end) - 4 * 240, 1e-6);
	cr_assert_float_eq(metric("chat", "requests_completed"), 3000, 0);
}

/*
 * MIG: the estimate takes instances of the layout, not GPU counts.  Nodes of
 * one A100-80GB cut [3g.40gb, 2g.20gb, 2g.20gb]; 2 pods of 3g.40gb and 4 of
 * 2g.20gb.  Big pod 1 opens e0's 3g instance, big pod 2 finds it taken and
 * opens e1; the 2g pods fill e0's and e1's two 2g instances: 2 nodes, every
 * pod placed when they are Ready at 300 (a share per pod, 1 and 1/2 of a
 * node, would say 2 + 2 = 4).  Until the work is done (MIG slows the jobs).
 */
Test(autoscale, the_estimate_takes_mig_instances)
{
	RUN_WITH("tests/fixtures/autoscale-pack.yaml", "pools.batch.gpus_per_node=1",
		 "pools.batch.sharing={mode: mig, layout: [3g.40gb, 2g.20gb, 2g.20gb]}",
		 "workloads.big.gpus={mig: 3g.40gb}", "workloads.small.gpus={mig: 2g.20gb}",
		 "workloads.small.count=4");
	cr_assert_float_eq(metric("batch", "nodes_added"), 2, 0);
	cr_assert_float_eq(metric("batch", "scale_ups"), 1, 0);
	for (size_t i = 0; i < 6; i++)
		cr_assert_eq(r.jobs[i].start, 300 * S, "job %zu", i);
}

/* --- runs that never finish ------------------------------------------------ */

/* A 1h job without checkpoints on spot nodes interrupted every minute (a
 * replacement Ready after 5m) never runs its hour: without a horizon the run
 * stops as stalled once 8 days pass without an end or a checkpoint and 200
 * evictions lost their work, instead of restarting it forever (and growing
 * its timeseries with the days). */
Test(autoscale, a_job_that_restarts_from_scratch_forever_stalls_the_run)
{
	RUN_WITH(A, "workloads.train.count=1",
		 "pools.batch.spot={discount: 0.7, interruption: {rate: 1/m}}");
	cr_assert_str_eq(r.status, "stalled");
	cr_assert_neq(r.jobs[0].status, JOB_COMPLETED);
	cr_assert_eq(metric("all", "jobs_preempted"), 200, "stops at the 200th futile eviction");
	cr_assert_gt(r.sim_end, 8 * SIM_DAY);
}

/* The same futile job beside a 10-day job on a steady pool: the 10-day job
 * runs without an end or a checkpoint for 10 days, which is not a stall. */
Test(autoscale, a_long_job_that_runs_is_not_stalled_by_futile_restarts)
{
	RUN_WITH(A,
		 "pools=[{name: spot, nodes: 1, gpu: L4, gpus_per_node: 1, startup: 5m, "
		 "labels: {kind: spot}, spot: {interruption: {rate: 1/m}}}, "
		 "{name: steady, nodes: 1, gpu: L4, gpus_per_node: 1, labels: {kind: steady}}]",
		 "workloads=[{name: futile, arrival: {at: \"00:00\"}, gpus: 1, duration: 1h, "
		 "node_selector: {kind: spot}}, {name: long, arrival: {at: \"00:00\"}, gpus: 1, "
		 "duration: 10d, node_selector: {kind: steady}}]");
	cr_assert_str_eq(r.status, "stalled", "the futile job is still left");
	cr_assert_eq(r.jobs[1].status, JOB_COMPLETED);
	cr_assert_eq(r.jobs[1].end, 10 * SIM_DAY);
	cr_assert_gt(r.sim_end, 18 * SIM_DAY, "8 days after the long job's end, at least");
	cr_assert_geq(r.jobs[0].preemptions, 200, "200 futile evictions after the long job's end");
}
