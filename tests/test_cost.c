/*
 * test_cost.c - costs computed by hand for the worked example on exclusive,
 * time-sliced and MIG GPUs, idle and its share, start-up, quality draws, and
 * the OpenCost JSON against the database.
 */
#include "gpuplan/cost.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "named_metric.h"

TestSuite(cost, .fini = cleanup);

#define RUN(...) RUN_WITH("tests/fixtures/cost.yaml", __VA_ARGS__)
#define RUN0()   run("tests/fixtures/cost.yaml", NULL, 0)

static double m(const char *scope, const char *name) { return named_metric(&r, scope, name); }

/* The node: 4 GPUs x 2.50 + 96 cores x 0.03 + 1024 GiB x 0.004 = 16.976 $/h. */
#define NODE_HOUR 16.976
/* The bill starts at the scenario start (00:00), the jobs at 12:00: the node
 * is powered and idle for 12 h before them. */
#define BEFORE    (12 * NODE_HOUR)

/* Per job-hour: 2 GPUs x 2.50 + 8 cores x 0.03 + 64 GiB x 0.004 = 5.496.
 * Idle over 12:00-14:00: no GPU, 80 cores and 896 GiB: 2 h x (2.40 + 3.584);
 * over 00:00-12:00 the whole node, 12 x 16.976 = 203.712.
 * At scope all, cost_total is the bill, allocations plus idle, as OpenCost's
 * total over every allocation including __idle__ (opencost docs, "Idle":
 * idle is the cost of capacity not allocated; the response's totals sum the
 * __idle__ entry with the rest); cost_allocated is the allocated part. */
Test(cost, worked_example_on_exclusive_gpus)
{
	RUN0();
	cr_assert_float_eq(m("all", "cost_allocated"), 4 * 5.496, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 4 * 5.496 + 11.968 + BEFORE, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 14 * NODE_HOUR, 1e-9,
			   "the bill is the node from 00:00 to the end of the run, 14:00");
	cr_assert_float_eq(m("eval", "cost_total"), 4 * 5.496, 1e-9,
			   "a workload's is its allocations");
	cr_assert_float_eq(m("eval", "cost_idle"), 11.968 + BEFORE, 1e-9, "its share of idle");
	cr_assert_float_eq(m("all", "cost_idle"), 2 * (80 * 0.03 + 896 * 0.004) + BEFORE, 1e-9);
	cr_assert_float_eq(m("all", "verified_results"), 4, 1e-12);
	cr_assert_float_eq(m("eval", "cost_per_verified_result"), (21.984 + 11.968 + BEFORE) / 4,
			   1e-9);
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(r.jobs[i].cost, 5.496, 1e-9);
	double gpu_hours = 0, total = 0;
	for (size_t i = 0; i < r.n_allocations; i++) {
		gpu_hours += r.allocations[i].gpu_hours;
		total += r.allocations[i].total_cost;
	}
	cr_assert_float_eq(gpu_hours, 8 + 4 * 12, 1e-9, "idle GPU-hours only before 12:00");
	cr_assert_float_eq(total, 21.984 + 11.968 + BEFORE, 1e-9,
			   "allocations add up to cost and idle");
	cr_assert_eq(r.n_allocations, 1 + 2 * 8,
		     "__idle__ 00:00-12:00, then eval and __idle__ in eight 15-minute windows");
	cr_assert_eq(r.allocations[0].start, 0);
	cr_assert_eq(r.allocations[0].end, 12 * SIM_HOUR);
	cr_assert_str_eq(r.allocations[0].name, "__idle__");
}

/* Issue 45: one always-on node at 16.976 $/h, a 24 h horizon, jobs only at
 * 12:00-14:00: the bill is a day of the node, 407.424, not 203.712 from the
 * first arrival on. */
Test(cost, the_bill_spans_the_scenario_start_to_the_horizon)
{
	RUN("horizon=24h");
	cr_assert_float_eq(m("all", "cost_total"), 24 * NODE_HOUR, 1e-9);
	cr_assert_float_eq(m("all", "cost_allocated"), 21.984, 1e-9);
	cr_assert_float_eq(m("all", "cost_idle"), 24 * NODE_HOUR - 21.984, 1e-9);
	cr_assert_float_eq(m("batch", "cost_idle"), 24 * NODE_HOUR - 21.984, 1e-9);
	cr_assert_float_eq(m("eval", "cost_per_verified_result"), 24 * NODE_HOUR / 4, 1e-9);
	double total = 0;
	for (size_t i = 0; i < r.n_allocations; i++)
		total += r.allocations[i].total_cost;
	cr_assert_float_eq(total, 24 * NODE_HOUR, 1e-9, "the allocations are the bill");
}

/* Issue 45: powered 12:00-17:00 on a 24 h horizon is billed 5 node-hours,
 * 84.88, whether or not other work runs after the window. */
Test(cost, a_powered_window_is_billed_exactly_its_window)
{
	RUN("horizon=24h", "pools.batch.powered=window",
	    "pools.batch.windows=[{from: \"12:00\", to: \"17:00\"}]");
	cr_assert_float_eq(m("all", "cost_total"), 5 * NODE_HOUR, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 84.88, 1e-9);
	cleanup();
	/* Work elsewhere until 20:00 changes nothing of the window's bill. */
	RUN("horizon=24h", "pools.batch.powered=window",
	    "pools.batch.windows=[{from: \"12:00\", to: \"17:00\"}]",
	    "pools=[{name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4, cpu: 96,"
	    " memory: 1024GiB, powered: window, windows: [{from: \"12:00\", to: \"17:00\"}],"
	    " price: {gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004}},"
	    " {name: other, nodes: 1, gpu: A100-80GB, gpus_per_node: 1}]",
	    "workloads=[{name: eval, count: 4, arrival: {at: \"12:00\"}, gpus: 2, duration: 1h,"
	    " cpu: 8, memory: 64GiB}, {name: late, arrival: {at: \"19:00\"}, gpus: 1,"
	    " duration: 1h}]");
	cr_assert_float_eq(m("batch", "cost_idle"), 5 * NODE_HOUR - 21.984, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 5 * NODE_HOUR, 1e-9, "the other pool is free");
}

/* Issue 39: one node of 4 GPUs at 2.50 $/GPU-hour, powered 12:00-17:00, the
 * horizon at 19:00: the bill is the window's 5 h x 4 x 2.50 = 50, idle 30
 * (four 2-GPU jobs of 1 h use 8 GPU-hours, 20), 12.50 per verified result. */
Test(cost, issue_39s_window_bill)
{
	RUN("horizon=19h", "pools.batch.powered=window",
	    "pools.batch.windows=[{from: \"12:00\", to: \"17:00\"}]",
	    "pools.batch.price={gpu_hour: 2.50}", "workloads.eval.cpu=0",
	    "workloads.eval.memory=0");
	cr_assert_float_eq(m("all", "cost_total"), 50, 1e-9);
	cr_assert_float_eq(m("all", "cost_idle"), 30, 1e-9);
	cr_assert_float_eq(m("all", "cost_per_verified_result"), 12.50, 1e-9);
	cr_assert_float_eq(m("eval", "cost_per_verified_result"), 12.50, 1e-9);
}

/* Time-slicing, 2 replicas: each job takes a replica on 2 GPUs (1 GPU's worth)
 * and all four run at once.  Two tenants with f = 0.9 per GPU: slow = 1.8 x 1.05,
 * rate = 1 / (0.1 + 0.9 x 1.89) = 1 / 1.801: each job lasts 1.801 h. */
Test(cost, the_same_jobs_on_time_sliced_gpus)
{
	RUN("pools.batch.sharing={mode: time-slicing, replicas: 2}");
	double h = 1.801, per_job = h * (1 * 2.50 + 8 * 0.03 + 64 * 0.004);
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(r.jobs[i].cost, per_job, 1e-6);
	cr_assert_float_eq(m("all", "cost_allocated"), 4 * per_job, 1e-6);
	cr_assert_float_eq(m("all", "cost_idle"), h * (64 * 0.03 + 768 * 0.004) + BEFORE, 1e-6);
	cr_assert_float_eq(m("all", "cost_total"),
			   4 * per_job + h * (64 * 0.03 + 768 * 0.004) + BEFORE, 1e-6);
}

/* MIG, two 3g.40gb per GPU: 3/7 of a GPU each in allocation, all four at
 * once; a 3g instance of an A100 has 42 of its 108 SMs (nvidia-smi mig
 * -lgip; NVIDIA MIG User Guide), so a kernel that wants every SM runs 108/42
 * slower: rate = 1 / (0.1 + 0.9 x 108/42) = 1 / 2.4142857142857.  The 7th
 * compute slice no instance of the layout can use is charged to the
 * layout's tenants (issue 45): each 3g instance bills 3/6 of the GPU, so two
 * GPUs are wholly charged and the other two are idle, none forever idle in
 * slivers.  gpuEfficiency is engine activity over the instance (DCGM's GPU
 * instance metrics): 0.9 busy is 0.9, and a fully busy 7g.80gb is 1.0. */
Test(cost, the_same_jobs_on_mig_slices)
{
	RUN("pools.batch.sharing={mode: mig, layout: [3g.40gb, 3g.40gb]}",
	    "workloads.eval.gpus={mig: 3g.40gb}");
	double h = 0.1 + 0.9 * 108 / 42, per_job = h * (3.0 / 6 * 2.50 + 8 * 0.03 + 64 * 0.004);
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(r.jobs[i].cost, per_job, 1e-6);
	/* 2.4142857 h per job at 1.25 + 0.24 + 0.256 = 1.746 $/h: 4.22 $ a job */
	cr_assert_float_eq(4 * per_job, 16.86, 0.005);
	double idle = h * ((4 - 2) * 2.50 + 64 * 0.03 + 768 * 0.004) + BEFORE;
	cr_assert_float_eq(m("all", "cost_idle"), idle, 1e-6);
	cr_assert_float_eq(m("all", "cost_per_verified_result"), (4 * per_job + idle) / 4, 1e-6);
	double gpu_h = 0;
	for (size_t i = 0; i < r.n_allocations; i++)
		if (r.allocations[i].workload == 0) {
			gpu_h += r.allocations[i].gpu_hours;
			cr_assert_float_eq(r.allocations[i].gpu_efficiency, 0.9, 1e-9);
		}
	cr_assert_float_eq(gpu_h, 4 * h * 0.5, 1e-6, "GPU-hours as charged, 3/6 each");
}

/* A fully busy 7g.80gb, one instance per GPU: gpuEfficiency 1.0 (it was 98/108
 * SMs = 0.907), the GPU charged whole. */
Test(cost, a_busy_full_mig_instance_is_fully_efficient)
{
	RUN("pools.batch.sharing={mode: mig, layout: [7g.80gb]}",
	    "workloads.eval.gpus={mig: 7g.80gb}", "workloads.eval.gpu_busy=1");
	bool any = false;
	for (size_t i = 0; i < r.n_allocations; i++)
		if (r.allocations[i].workload == 0) {
			cr_assert_float_eq(r.allocations[i].gpu_efficiency, 1.0, 1e-12);
			any = true;
		}
	cr_assert(any);
	double h = 0.0 + 1.0 * 108 / 98; /* every SM wanted, 98 of 108 */
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(r.jobs[i].cost, h * (2.50 + 8 * 0.03 + 64 * 0.004), 1e-6);
}

/* Start-up holds the GPUs: six minutes more per job, charged. */
Test(cost, start_up_is_charged)
{
	RUN("workloads.eval.startup=6m");
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(r.jobs[i].cost, 1.1 * 5.496, 1e-9);
	cr_assert_eq(r.jobs[0].end - r.jobs[0].start, 66 * SIM_MINUTE);
}

/* Two workloads on the worked example's node, 12:00-13:00, horizon 13:00:
 * a holds 2 GPUs and 8 cores (5 + 0.24 $/h), b 1 GPU (2.50 $/h); neither
 * asks for memory.  The bill is 13 node-hours, 220.688; idle is 122.50 of
 * GPUs (49 GPU-hours), 37.20 of cores (1,240 core-hours) and 53.248 of
 * memory (13,312 GiB-hours). */
#define TWO_WORKLOADS                                                                            \
	"horizon=13h",                                                                           \
		"workloads=[{name: a, arrival: {at: \"12:00\"}, gpus: 2, cpu: 8, duration: 1h}," \
		" {name: b, arrival: {at: \"12:00\"}, gpus: 1, duration: 1h}]"

/* OpenCost's shareIdle (core/pkg/opencost/allocation.go, computeIdleCoeffs:
 * coeffs[idleId][name][resource] = the allocation's cost of the resource over
 * the idleId's total of it; AggregateBy then adds idle x coefficient per
 * resource): GPU idle goes 5 : 2.5, CPU idle all to a, the only one charged
 * for cores, and memory idle, charged to nobody, stays unshared.  The old
 * rule, by total cost, gave a 144.17 of idle where OpenCost gives 118.87. */
Test(cost, idle_is_shared_per_resource_as_opencost_does)
{
	RUN(TWO_WORKLOADS);
	cr_assert_float_eq(m("all", "cost_total"), 13 * NODE_HOUR, 1e-9);
	cr_assert_float_eq(m("all", "cost_idle"), 122.5 + 37.2 + 53.248, 1e-9);
	cr_assert_float_eq(m("a", "cost_idle"), 122.5 * 5 / 7.5 + 37.2, 1e-9);
	cr_assert_float_eq(m("b", "cost_idle"), 122.5 * 2.5 / 7.5, 1e-9);
	cr_assert_float_eq(m("a", "cost_per_verified_result"), 5.24 + 81.666666667 + 37.2, 1e-6);
	cr_assert_float_eq(m("b", "cost_per_verified_result"), 2.5 + 40.833333333, 1e-6);
}

/* share_idle: even gives each workload charged anything half of all idle;
 * none leaves idle with nobody. */
Test(cost, idle_shared_evenly_or_not_at_all)
{
	RUN(TWO_WORKLOADS, "cost={share_idle: even}");
	double idle = 122.5 + 37.2 + 53.248;
	cr_assert_float_eq(m("a", "cost_idle"), idle / 2, 1e-9);
	cr_assert_float_eq(m("b", "cost_idle"), idle / 2, 1e-9);
	cr_assert_float_eq(m("b", "cost_per_verified_result"), 2.5 + idle / 2, 1e-9);
	cleanup();
	RUN(TWO_WORKLOADS, "cost={share_idle: none}");
	cr_assert_float_eq(m("a", "cost_idle"), 0, 1e-12);
	cr_assert_float_eq(m("a", "cost_per_verified_result"), 5.24, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 13 * NODE_HOUR, 1e-9, "the bill is the same");
}

/* Two pools, horizon 13:00: the worked example's node (16.976 $/h) and a
 * small one, 2 GPUs at 4.00, 16 cores at 0.05, 128 GiB at 0.01 (10.08 $/h).
 * a (4 GPUs, 8 cores) fills the big node 12:00-13:00, b (2 GPUs, 4 cores) the
 * small one.  Idle of the big pool: GPUs 48 x 2.50 = 120, cores 1,240 x 0.03
 * = 37.20, memory 53.248; of the small one: GPUs 24 x 4 = 96, cores 204 x
 * 0.05 = 10.20, memory 1,664 x 0.01 = 16.64. */
#define TWO_POOLS                                                                                \
	"horizon=13h",                                                                           \
		"pools=[{name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4, cpu: 96,"      \
		" memory: 1024GiB, price: {gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004}},"   \
		" {name: small, nodes: 1, gpu: A100-80GB, gpus_per_node: 2, cpu: 16,"            \
		" memory: 128GiB, taints: [{key: team, value: b, effect: NoSchedule}],"          \
		" price: {gpu_hour: 4.00, cpu_hour: 0.05, gib_hour: 0.01}}]",                    \
		"workloads=[{name: a, arrival: {at: \"12:00\"}, gpus: 4, cpu: 8, duration: 1h}," \
		" {name: b, arrival: {at: \"12:00\"}, gpus: 2, cpu: 4, duration: 1h,"            \
		" tolerations: [{key: team, operator: Equal, value: b, effect: NoSchedule}]}]"

/* idle_by: pool shares each pool's idle over the workloads charged there
 * (OpenCost's idle keyed by a narrower idleId, as getIdleId keys it by node
 * with idleByNode); the small pool is tainted for b, so its idle (122.84,
 * memory included) is held for b whatever the rule.  By cluster, the big
 * pool's GPU idle goes 10 : 8 and its core idle 0.24 : 0.20 over a and b. */
Test(cost, idle_by_pool_and_idle_held_for_one_workload)
{
	RUN(TWO_POOLS, "cost={idle_by: pool}");
	cr_assert_float_eq(m("all", "cost_total"), 13 * (NODE_HOUR + 10.08), 1e-9);
	cr_assert_float_eq(m("batch", "cost_idle"), 120 + 37.2 + 53.248, 1e-9);
	cr_assert_float_eq(m("small", "cost_idle"), 96 + 10.2 + 16.64, 1e-9);
	cr_assert_float_eq(m("a", "cost_idle"), 120 + 37.2, 1e-9, "memory idle: nobody's");
	cr_assert_float_eq(m("b", "cost_idle"), 96 + 10.2 + 16.64, 1e-9, "held for b");
	cr_assert_float_eq(m("b", "cost_per_verified_result"), 8.2 + 122.84, 1e-9);
	cleanup();
	RUN(TWO_POOLS);
	cr_assert_float_eq(m("a", "cost_idle"), 120 * 10 / 18.0 + 37.2 * 0.24 / 0.44, 1e-9);
	cr_assert_float_eq(m("b", "cost_idle"), 122.84 + 120 * 8 / 18.0 + 37.2 * 0.20 / 0.44, 1e-9);
}

/* Without the taint both may use both pools: nothing is held, and by pool
 * each pool's idle goes to the one charged there (memory idle to nobody). */
Test(cost, idle_by_pool_without_a_held_pool)
{
	RUN(TWO_POOLS, "pools.small.taints=[]", "cost={idle_by: pool}");
	cr_assert_float_eq(m("a", "cost_idle"), 120 + 37.2, 1e-9);
	cr_assert_float_eq(m("b", "cost_idle"), 96 + 10.2, 1e-9);
	cleanup();
	RUN(TWO_POOLS, "pools.small.taints=[]");
	cr_assert_float_eq(m("a", "cost_idle"), 216 * 10 / 18.0 + 47.4 * 0.24 / 0.44, 1e-9);
	cr_assert_float_eq(m("b", "cost_idle"), 216 * 8 / 18.0 + 47.4 * 0.20 / 0.44, 1e-9);
}

/* A wrong rule is refused with its place. */
Test(cost, share_rules_are_validated)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *sets[] = {"cost={share_idle: fair}"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", sets, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "share_idle") && strstr(err.msg, "weighted"), "%s", err.msg);
}

/* With pass rate p the verified count is Binomial(n, p): 2,000 results at 0.8
 * have mean 1,600 and sd 17.9; 4 sd is a false alarm once in 15,000 seeds. */
Test(cost, quality_draws_are_binomial)
{
	const char *base[] = {"pools.batch.nodes=100",
			      "workloads.eval.count=2000",
			      "workloads.eval.gpus=1",
			      "workloads.eval.duration=1m",
			      "workloads.eval.deadline={within: 1d}",
			      "workloads.eval.quality={pass_rate: 0.8}"};
	run("tests/fixtures/cost.yaml", base, 6);
	double v = m("all", "verified_results"), sd = sqrt(2000 * 0.8 * 0.2);
	cr_assert_lt(fabs(v - 1600), 4 * sd, "verified %f", v);
	cleanup();
	const char *exact[] = {base[0], base[1], base[2],
			       base[3], base[4], "workloads.eval.quality={pass_rate: 1}"};
	run("tests/fixtures/cost.yaml", exact, 6);
	cr_assert_float_eq(m("all", "verified_results"), 2000, 1e-12);
}

/* A missed deadline is never verified; the pass rate follows the quantization. */
Test(cost, verification_needs_the_deadline_and_the_quantizations_rate)
{
	RUN("workloads.eval.deadline=\"13:00\"");
	cr_assert_float_eq(m("all", "verified_results"), 2, 1e-12, "the second wave ends at 14:00");
	cleanup();
	RUN("workloads.eval.model=llama-2-7b", "workloads.eval.quantization=int4",
	    "workloads.eval.quality={pass_rate: {fp16: 1, int4: 0}}");
	cr_assert_float_eq(m("all", "verified_results"), 0, 1e-12);
	cr_assert(isnan(m("all", "cost_per_verified_result")));
}

/* The OpenCost JSON parses (SQLite's JSON functions) and adds up to the database. */
Test(cost, opencost_json_matches_the_database)
{
	char dir[] = "/tmp/gpuplan-cost-XXXXXX", cmd[512], path[128];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run tests/fixtures/cost.yaml --quiet --db %s/c.db && "
		 "bin/gpuplan report %s/c.db --opencost > %s/oc.json",
		 dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/oc.json", dir);
	FILE *f = fopen(path, "r");
	static char json[1 << 16];
	size_t n = fread(json, 1, sizeof json - 1, f);
	json[n] = '\0';
	fclose(f);
	snprintf(path, sizeof path, "%s/c.db", dir);
	sqlite3 *db;
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(
		sqlite3_prepare_v2(
			db,
			"SELECT json_valid(?1), json_extract(?1, '$.code'),"
			" (SELECT sum(json_extract(a.value, '$.totalCost')) FROM json_each(?1, '$.data') w,"
			"  json_each(w.value) a),"
			" (SELECT sum(total_cost) FROM allocations),"
			" (SELECT value FROM metrics WHERE scope = 'all' AND name = 'cost_total'),"
			" (SELECT count(*) FROM json_each(?1, '$.data') w, json_each(w.value) a WHERE a.key = '__idle__'),"
			" json_extract(?1, '$.data[1].eval.start'), json_extract(?1, '$.data[1].eval.minutes')",
			-1, &st, NULL),
		SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(st, 0), 1, "valid JSON");
	cr_assert_eq(sqlite3_column_int(st, 1), 200);
	cr_assert_float_eq(sqlite3_column_double(st, 2), sqlite3_column_double(st, 3), 1e-9);
	cr_assert_float_eq(sqlite3_column_double(st, 2), sqlite3_column_double(st, 4), 1e-9);
	cr_assert_float_eq(sqlite3_column_double(st, 2), 21.984 + 11.968 + BEFORE, 1e-9);
	cr_assert_eq(sqlite3_column_int(st, 5), 1 + 8, "one __idle__ before, one per window");
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 6), "2026-10-27T12:00:00Z");
	cr_assert_float_eq(sqlite3_column_double(st, 7), 15, 1e-12);
	sqlite3_finalize(st);
	sqlite3_close(db);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* powered: window charges idle only while the pool is open.  The run's
 * last timeseries row can sit at or past its end; its window was reversed
 * (end before start) and its idle negative: -165 of idle and -36.25 $ per
 * verified result on the eval-window example.  Now idle is never negative
 * and no allocation window ends before it starts: the four jobs fill the
 * four GPUs 12:00-14:00 while open, so idle GPU cost is 0 and a verified
 * result costs its allocations, 20 / 4 = 5 (2 GPUs x 1 h x 2.50 each). */
Test(cost, powered_window_never_gives_negative_idle_or_reversed_windows)
{
	const char *sets[] = {"pools.batch.powered=window"};
	run("tests/fixtures/eval-window.yaml", sets, 1);
	cr_assert_geq(m("all", "cost_idle"), 0);
	cr_assert_geq(m("batch", "cost_idle"), 0);
	for (size_t i = 0; i < r.n_allocations; i++) {
		cr_assert_geq(r.allocations[i].end, r.allocations[i].start, "window %zu reversed",
			      i);
		cr_assert_geq(r.allocations[i].total_cost, 0, "allocation %zu negative", i);
	}
	cr_assert_float_eq(m("eval", "cost_per_verified_result"),
			   (m("eval", "cost_total") + m("eval", "cost_idle")) / 4, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"),
			   m("all", "cost_allocated") + m("all", "cost_idle"), 1e-9);
	cr_assert_gt(m("eval", "cost_per_verified_result"), 0);
}

/* cost_per_million_tokens counts the workload's share of idle, as $/verified
 * does: one H100 of two serves, the other idles and chat carries it. */
Test(cost, cost_per_million_tokens_includes_the_share_of_idle)
{
	const char *sets[] = {"pools.h100.nodes=2", "workloads.chat.requests.count=200",
			      "output={step: 1m, requests: true}"};
	run("scenarios/inference.yaml", sets, 3);
	double tokens = 0;
	for (size_t i = 0; i < r.n_requests; i++)
		if (r.requests[i].status == REQUEST_COMPLETED)
			tokens += r.requests[i].output_tokens;
	double idle = m("chat", "cost_idle");
	cr_assert_gt(idle, 0, "the second H100 idles");
	cr_assert_float_eq(m("chat", "cost_per_million_tokens"),
			   (m("chat", "cost_total") + idle) / tokens * 1e6, 1e-9);
}

/* Issue 45: an OOM-killed attempt bills its start-up to its own workload.
 * One A100-80GB time-sliced in 2 (9.476 $/node-hour; a replica is half a GPU,
 * 1.25 $/h).  good (50 GiB, busy 1) takes a replica at 12:00; crash (50 GiB)
 * lands beside it, overflows the GPU and dies with OOM as its 6 min start-up
 * ends, restarts twice (10 s, then 20 s of backoff): attempts 12:00-12:06,
 * 12:06:10-12:12:10 and 12:12:30-12:18:30, 18 min, 0.375 $.  Beside it good
 * runs at 1/1.05 (time-slicing's 5% switch overhead), so it ends 18 x 0.05 /
 * 1.05 min late, after 60.857 min.  Horizon 14:00: GPU idle is 14 GPU-hours
 * less what the two held, shared by their GPU cost (cores and memory, asked
 * by nobody, stay unshared).  Before, the attempts cost nothing and good
 * carried all the GPU idle. */
Test(cost, oom_killed_attempts_bill_their_start_up_to_their_workload)
{
	RUN("horizon=14h", "pools.batch.gpus_per_node=1",
	    "pools.batch.sharing={mode: time-slicing, replicas: 2}",
	    "workloads=[{name: good, arrival: {at: \"12:00\"}, gpus: 1, duration: 1h, vram: 50GiB},"
	    " {name: crash, arrival: {at: \"12:00\"}, gpus: 1, duration: 1h, vram: 50GiB,"
	    " startup: 6m, restart: {limit: 2, backoff: 10s}}]");
	double minutes = 60 + 18 * 0.05 / 1.05, good = 1.25 * minutes / 60;
	double gpu_idle = (14 - 0.5 * minutes / 60 - 0.5 * 0.3) * 2.5;
	cr_assert_float_eq(m("crash", "oom_kills"), 3, 1e-12);
	cr_assert_float_eq(m("crash", "jobs_failed"), 1, 1e-12);
	cr_assert_float_eq(m("crash", "cost_allocated"), 0.375, 1e-9);
	cr_assert_float_eq(m("good", "cost_allocated"), good, 1e-6);
	cr_assert_float_eq(m("all", "cost_total"), 14 * 9.476, 1e-9);
	cr_assert_float_eq(m("crash", "cost_idle"), gpu_idle * 0.375 / (0.375 + good), 1e-6);
	cr_assert_float_eq(m("good", "cost_per_verified_result"),
			   good + gpu_idle * good / (0.375 + good), 1e-6);
	cr_assert_float_eq(r.jobs[1].cost, 0.375, 1e-9, "the job's row has its attempts");
	cr_assert_eq(r.jobs[1].end, 12 * SIM_HOUR + 18 * SIM_MINUTE + 30 * SIM_SECOND);
	cr_assert_float_eq(sim_seconds(r.jobs[0].end - 12 * SIM_HOUR), minutes * 60, 1e-3);
}

/* checkpoint: {every: 20m, write: 2m}: a 1 h job writes at 20 and 40 min of
 * work (none at its end), so it holds its GPUs 64 min and costs 5.496 x 64/60;
 * the two waves end at 13:04 and 14:08. */
Test(cost, checkpoint_writes_take_their_time_and_are_billed)
{
	RUN("workloads.eval.checkpoint={every: 20m, write: 2m}");
	for (size_t i = 0; i < 4; i++)
		cr_assert_float_eq(r.jobs[i].cost, 5.496 * 64 / 60, 1e-9);
	cr_assert_eq(r.jobs[3].end, 14 * SIM_HOUR + 8 * SIM_MINUTE);
	cr_assert_float_eq(m("all", "cost_allocated"), 4 * 5.496 * 64 / 60, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), (14 + 8 / 60.0) * NODE_HOUR, 1e-9);
	cleanup();
	RUN("workloads.eval.checkpoint=20m"); /* the scalar form: writing is free */
	cr_assert_float_eq(r.jobs[0].cost, 5.496, 1e-9);
}

/* A checkpoint counts once written.  One 3 h job (every 1h, write 6m: it
 * would hold its GPUs 3 h 12 min) on a pool open 12:00-15:00 each day under
 * window_policy preempt: at 15:00 it is 180 min in, two 66-min cycles (1 h
 * of work and its write) done, so it keeps 2 h; the next day it resumes at
 * 12:00 with 1 h of work and no write, and ends at 13:00 (37:00).  Allocated
 * 4 h x 5.496 (without the writes' time it would finish at 15:00: 3 h). */
Test(cost, an_evicted_job_keeps_only_written_checkpoints)
{
	RUN("horizon=40h", "workloads.eval.count=1", "workloads.eval.duration=3h",
	    "workloads.eval.deadline={within: 2d}",
	    "workloads.eval.checkpoint={every: 1h, write: 6m}", "scheduler.window_policy=preempt",
	    "pools.batch.windows=[{from: \"12:00\", to: \"15:00\"}]");
	cr_assert_eq(r.jobs[0].preemptions, 1);
	cr_assert_eq(r.jobs[0].end, 37 * SIM_HOUR);
	cr_assert_float_eq(r.jobs[0].cost, 4 * 5.496, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 40 * NODE_HOUR, 1e-9);
}

/* The map form is checked: every is required, write is a duration. */
Test(cost, checkpoint_map_is_validated)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *sets[] = {"workloads.eval.checkpoint={write: 2m}"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", sets, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "every"), "%s", err.msg);
}

/* Runs the showback fixture into a scratch database and prints `report
 * --opencost` with args into json (NUL-terminated); returns the folder. */
static void showback_json(char *dir, const char *args, char *json, size_t cap)
{
	char cmd[1024], path[160];
	snprintf(
		cmd, sizeof cmd,
		"test -f %s/s.db || bin/gpuplan run tests/fixtures/showback.yaml --quiet --db %s/s.db"
		" && bin/gpuplan report %s/s.db --opencost %s > %s/oc.json",
		dir, dir, dir, args, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(path, sizeof path, "%s/oc.json", dir);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	size_t n = fread(json, 1, cap - 1, f);
	json[n] = '\0';
	fclose(f);
}

/* One value of a query over the JSON (?1) and the database (attached). */
static double query(sqlite3 *db, const char *json, const char *sql)
{
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	double v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* OpenCost's AllocationJSON (core/pkg/opencost/allocation_json.go), every
 * field in its order; rawAllocationOnly is omitempty and nil there too. */
static const char *const opencost_fields[] = {"name",
					      "properties",
					      "window",
					      "start",
					      "end",
					      "minutes",
					      "cpuCores",
					      "cpuCoreRequestAverage",
					      "cpuCoreUsageAverage",
					      "cpuCoreHours",
					      "cpuCost",
					      "cpuCostAdjustment",
					      "cpuCostIdle",
					      "cpuEfficiency",
					      "gpuCount",
					      "gpuRequestAverage",
					      "gpuUsageAverage",
					      "gpuHours",
					      "gpuCost",
					      "gpuCostAdjustment",
					      "gpuCostIdle",
					      "gpuEfficiency",
					      "networkTransferBytes",
					      "networkReceiveBytes",
					      "networkCost",
					      "networkCrossZoneCost",
					      "networkCrossRegionCost",
					      "networkInternetCost",
					      "networkCostAdjustment",
					      "loadBalancerCost",
					      "loadBalancerCostAdjustment",
					      "pvBytes",
					      "pvByteHours",
					      "pvCost",
					      "pvs",
					      "pvCostAdjustment",
					      "ramBytes",
					      "ramByteRequestAverage",
					      "ramByteUsageAverage",
					      "ramByteHours",
					      "ramCost",
					      "ramCostAdjustment",
					      "ramCostIdle",
					      "ramEfficiency",
					      "externalCost",
					      "sharedCost",
					      "totalCost",
					      "totalEfficiency",
					      "proportionalAssetResourceCosts",
					      "lbAllocations",
					      "sharedCostBreakdown"};

/* Issue 45: every field of OpenCost's allocation with its JSON type, the
 * envelope {code, status, data}, units checked against the allocations
 * table (hours, byte-hours, minutes of the window, averages per hour), and
 * the totals: the bill, 14 h of the 16.976 $/h node. */
Test(cost, opencost_json_has_every_allocation_field_with_its_type_and_unit)
{
	char dir[] = "/tmp/gpuplan-oc-XXXXXX", path[160];
	cr_assert_not_null(mkdtemp(dir));
	static char json[1 << 20];
	showback_json(dir, "", json, sizeof json);
	snprintf(path, sizeof path, "%s/s.db", dir);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	const char *all = "FROM json_each(?1, '$.data') w, json_each(w.value) a";
	char sql[1024];
	cr_assert_eq(query(db, json,
			   "SELECT json_extract(?1, '$.code') = 200 AND "
			   "json_extract(?1, '$.status') = 'success'"),
		     1);
	double n = query(db, json,
			 "SELECT count(*) FROM json_each(?1, '$.data') w, json_each(w.value)");
	cr_assert_eq(n, query(db, json, "SELECT count(*) FROM allocations"), "one per row");
	for (size_t f = 0; f < sizeof opencost_fields / sizeof *opencost_fields; f++) {
		const char *k = opencost_fields[f];
		bool text = !strcmp(k, "name") || !strcmp(k, "start") || !strcmp(k, "end");
		bool object = !strcmp(k, "properties") || !strcmp(k, "window");
		bool null = !strcmp(k, "pvs") || !strcmp(k, "lbAllocations") ||
			    !strcmp(k, "proportionalAssetResourceCosts") ||
			    !strcmp(k, "sharedCostBreakdown");
		snprintf(sql, sizeof sql, "SELECT count(*) %s WHERE json_type(a.value, '$.%s') %s",
			 all, k,
			 text     ? "= 'text'"
			 : object ? "= 'object'"
			 : null   ? "= 'null'"
				  : "IN ('integer', 'real')");
		cr_assert_eq(query(db, json, sql), n,
			     "field %s: not in every allocation as its type", k);
	}
	snprintf(
		sql, sizeof sql,
		"SELECT count(*) FROM (SELECT a.key FROM json_each(?1, '$.data') w, "
		"json_each(w.value) a, json_each(a.value) f GROUP BY w.key, a.key HAVING count(*) = %zu)",
		sizeof opencost_fields / sizeof *opencost_fields);
	cr_assert_eq(query(db, json, sql), n, "no other field");
	/* units against the table, row by row (same order) */
	cr_assert_eq(
		query(db, json,
		      "SELECT count(*) FROM (SELECT json_extract(a.value, '$.name') AS name,"
		      " json_extract(a.value, '$.gpuHours') AS g, json_extract(a.value,"
		      " '$.ramByteHours') AS r, json_extract(a.value, '$.cpuCoreHours') AS c,"
		      " json_extract(a.value, '$.minutes') AS m, json_extract(a.value, '$.cpuCores') AS cc,"
		      " strftime('%s', json_extract(a.value, '$.start')) - strftime('%s',"
		      " '2026-10-27T00:00:00Z') AS s"
		      " FROM json_each(?1, '$.data') w, json_each(w.value) a) j JOIN allocations t"
		      " ON t.name = j.name AND t.start_s = j.s AND abs(t.gpu_hours - j.g) < 1e-9 AND"
		      " abs(t.ram_byte_hours - j.r) < 1e-3 AND abs(t.cpu_core_hours - j.c) < 1e-9"
		      " AND abs((t.end_s - t.start_s) / 60 - j.m) < 1e-9 AND"
		      " abs(j.cc * j.m / 60 - j.c) < 1e-9"),
		n, "hours, byte-hours and minutes as the table's");
	snprintf(sql, sizeof sql, "SELECT sum(json_extract(a.value, '$.totalCost')) %s", all);
	cr_assert_float_eq(query(db, json, sql), 14 * NODE_HOUR, 1e-6);
	cr_assert_float_eq(query(db, json, sql),
			   query(db, json, "SELECT sum(total_cost) FROM allocations"), 1e-6);
	/* a's own: 2 GPUs at 0.9 busy, 8 cores, 64 GiB, its properties */
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[1].a.gpuEfficiency')"),
			   0.9, 1e-9);
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[1].a.ramBytes')"),
			   64.0 * GP_GIB, 1e-3);
	cr_assert_eq(
		query(db, json,
		      "SELECT json_extract(?1, '$.data[1].a.properties.namespace') = 'research'"
		      " AND json_extract(?1, '$.data[1].a.properties.labels.team') = 'vision'"
		      " AND json_extract(?1, '$.data[1].a.properties.cluster') = 'showback'"
		      " AND json_extract(?1, '$.data[1].a.properties.controllerKind') = 'job'"
		      " AND json_extract(?1, '$.data[1].a.properties.pool') = 'batch'"
		      " AND json_extract(?1, '$.data[1].a.properties.queue') = 'default'"),
		1);
	sqlite3_close(db);
	snprintf(sql, sizeof sql, "rm -rf %s", dir);
	cr_assert_eq(system(sql), 0);
}

/* --aggregate namespace and label:team with --accumulate give one allocation
 * per namespace or team whose cost is the sum of its rows in the allocations
 * table (namespace and team columns); a workload without the label is
 * __unallocated__, as OpenCost's generateKey names it. */
Test(cost, opencost_aggregation_reproduces_the_row_sums)
{
	char dir[] = "/tmp/gpuplan-oc-XXXXXX", path[160];
	cr_assert_not_null(mkdtemp(dir));
	static char json[1 << 20];
	snprintf(path, sizeof path, "%s/s.db", dir);
	showback_json(dir, "--accumulate --aggregate namespace", json, sizeof json);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_float_eq(
		query(db, json, "SELECT json_extract(?1, '$.data[0].research.totalCost')"),
		query(db, json,
		      "SELECT sum(total_cost) FROM allocations WHERE namespace = 'research'"),
		1e-9);
	cr_assert_float_eq(
		query(db, json, "SELECT json_extract(?1, '$.data[0].research.totalCost')"),
		5.496 + 2 * (2.5 + 4 * 0.03), 1e-9);
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[0].default.gpuHours')"),
			   1, 1e-9);
	cr_assert_eq(query(db, json, "SELECT json_array_length(?1, '$.data')"), 1, "accumulated");
	showback_json(dir, "--accumulate --aggregate label:team", json, sizeof json);
	cr_assert_float_eq(
		query(db, json, "SELECT json_extract(?1, '$.data[0].nlp.totalCost')"),
		query(db, json, "SELECT sum(total_cost) FROM allocations WHERE team = 'nlp'"),
		1e-9);
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[0].vision.totalCost')"),
			   5.496, 1e-9);
	cr_assert_float_eq(
		query(db, json, "SELECT json_extract(?1, '$.data[0].__unallocated__.totalCost')"),
		query(db, json,
		      "SELECT sum(total_cost) FROM allocations WHERE team IS NULL"
		      " AND name != '__idle__'"),
		1e-9);
	cr_assert_eq(query(db, json,
			   "SELECT json_extract(?1, "
			   "'$.data[0].nlp.properties.labels.team') = 'nlp'"),
		     1);
	/* --share-idle: the 12:00-13:00 window's idle goes per resource to a, b
	 * and c (GPU 0 idle; cores 84 x 0.03 over a's 0.24 and b's 0.12; memory
	 * 960 GiB x 0.004 all to a), and __idle__ leaves the response */
	showback_json(dir, "--share-idle --window 2026-10-27T12:00:00Z,2026-10-27T13:00:00Z", json,
		      sizeof json);
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[0].a.cpuCost')"),
			   0.24 + 2.52 * 2 / 3, 1e-9);
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[0].a.ramCost')"),
			   0.256 + 3.84, 1e-9);
	cr_assert_float_eq(query(db, json, "SELECT json_extract(?1, '$.data[0].b.cpuCost')"),
			   0.12 + 2.52 / 3, 1e-9);
	cr_assert(query(db, json, "SELECT json_extract(?1, '$.data[0].__idle__') IS NULL"));
	sqlite3_close(db);
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A namespace is a DNS label, as Kubernetes names one. */
Test(cost, a_namespace_is_a_dns_label)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *sets[] = {"workloads.eval.namespace=Research_1"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", sets, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "namespace") && strstr(err.msg, "a-z"), "%s", err.msg);
}

/* docs/cost.md's worked example (tests/fixtures/verified.yaml): every term
 * of train's cost per verified result, by hand.  train's own GPU is committed
 * at 3.00 $/h for the whole day (72.00 $ of the bill, used or not), so its
 * pods cost 1.60 $/h (half of the committed GPU, 1.50, and 2 cores at 0.05).
 * Job A: 6 min start-up, 1 h of work, a 6 min checkpoint write, 48 min of work
 * lost when the window closes at 02:00 (3.20 $); it resumes at 03:00 from its
 * checkpoint: 6 min start-up and 1 h of work to 04:06 (1.76 $).  Job B lands
 * beside A, overflows the GPU, and is OOM-killed as its start-up ends, twice
 * (00:00-00:06, 00:06:10-00:12:10: 0.32 $), then fails: 3.3 pod-hours, 5.28 $.
 * The own pool's idle is held for train (only train tolerates its taint):
 * the committed GPU's 72.00 less the 4.95 charged of it, and 8 cores x 24 h
 * x 0.05 = 9.60 less 0.33; the shared pool's idle cores (12 x 24 h x 0.05)
 * are shared by CPU cost, train's 0.33 against other's 4.80. */
Test(cost, the_worked_example_of_cost_per_verified_result)
{
	run("tests/fixtures/verified.yaml", NULL, 0);
	double rate = 0.5 * 3.00 + 2 * 0.05;
	double kept = 2 * rate, startups = 2 * 0.1 * rate, write = 0.1 * rate;
	double lost = 0.8 * rate, oom = 0.2 * rate;
	double allocated = kept + startups + write + lost + oom;
	cr_assert_float_eq(allocated, 5.28, 1e-9);
	cr_assert_float_eq(m("train", "cost_allocated"), allocated, 1e-9);
	cr_assert_float_eq(r.jobs[1].cost, 3.20 + 1.76, 1e-9, "A: its two runs");
	cr_assert_eq(r.jobs[1].preemptions, 1);
	cr_assert_eq(r.jobs[1].end, 4 * SIM_HOUR + 6 * SIM_MINUTE);
	cr_assert_float_eq(r.jobs[2].cost, oom, 1e-9, "B: its OOM-killed attempts");
	cr_assert_eq(r.jobs[2].status, JOB_FAILED);
	cr_assert_eq(r.jobs[2].oom_kills, 2);
	double held = (72.00 - 3.3 * 1.50) + (9.60 - 0.33);
	double shared = 12 * 24 * 0.05 * 0.33 / (0.33 + 4.80);
	cr_assert_float_eq(held, 76.32, 1e-9);
	cr_assert_float_eq(m("own", "cost_idle"), held, 1e-9);
	cr_assert_float_eq(m("own", "cost_committed"), 72.00, 1e-9);
	cr_assert_float_eq(m("own", "cost_on_demand"), 24 * 4.40, 1e-9);
	cr_assert_float_eq(m("train", "cost_idle"), held + shared, 1e-9);
	cr_assert_float_eq(m("train", "verified_results"), 1, 1e-12);
	cr_assert_float_eq(m("train", "cost_per_verified_result"), allocated + held + shared, 1e-9);
	cr_assert_float_eq(m("train", "cost_per_verified_result"), 82.526315789, 1e-6);
	cr_assert_float_eq(m("all", "cost_total"), 24 * (3.40 + 2.80), 1e-9);
}

/* The HTML report shows cost by team beside the summary's cost by workload:
 * on the showback fixture, vision is workload a (5.50 $ of allocations), nlp
 * is b (5.24 $), and c has no team label. */
Test(cost, the_html_report_shows_cost_by_team)
{
	char dir[] = "/tmp/gpuplan-team-XXXXXX", cmd[512], path[160];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run tests/fixtures/showback.yaml --quiet --db %s/s.db && "
		 "bin/gpuplan report %s/s.db --html %s/r.html",
		 dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/r.html", dir);
	FILE *f = fopen(path, "r");
	static char page[1 << 20];
	size_t n = fread(page, 1, sizeof page - 1, f);
	page[n] = '\0';
	fclose(f);
	const char *teams = strstr(page, "<table id=\"team-table\">");
	cr_assert_not_null(teams);
	cr_assert_not_null(strstr(teams, "<tr><td>vision</td><td>5.50</td>"));
	cr_assert_not_null(strstr(teams, "<tr><td>nlp</td><td>5.24</td>"));
	cr_assert_not_null(strstr(teams, "<tr><td>(no team label)</td><td>2.50</td>"));
	cr_assert_lt(strstr(page, "id=\"summary-table\"") - page, teams - page,
		     "beside the summary's cost by workload, after it");
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* import fills namespace: and labels: from the pods (showback), leaving out
 * the labels a controller sets per pod (pod-template-hash, ...). */
Test(cost, import_fills_namespace_and_labels_from_the_pods)
{
	char dir[] = "/tmp/gpuplan-imp-XXXXXX", cmd[512], path[160];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan import --nodes tests/fixtures/import/nodes.json --pods "
		 "tests/fixtures/import/pods.json -o %s/c.yaml > /dev/null 2>&1",
		 dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(path, sizeof path, "%s/c.yaml", dir);
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	bool serving = false, research = false;
	for (size_t w = 0; w < sc->n_workloads; w++) {
		const struct workload_spec *ws = &sc->workloads[w];
		serving |= !strcmp(scenario_namespace(ws), "serving") &&
			   scenario_label(ws, "app") != NULL;
		research |= !strcmp(scenario_namespace(ws), "research");
		cr_assert_null(scenario_label(ws, "pod-template-hash"), "%s", ws->name);
	}
	cr_assert(serving && research);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* One text of a query on db ("" for NULL), into out. */
static const char *text_of(sqlite3 *db, const char *sql, char *out, size_t cap)
{
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	const unsigned char *t = sqlite3_column_text(st, 0);
	snprintf(out, cap, "%s", t ? (const char *)t : "");
	sqlite3_finalize(st);
	return out;
}

/* The jobs table carries each job's namespace, queue and team label, as the
 * allocations do: showback.yaml's a is research/default/vision, b
 * research/default/nlp, c default/default without a team.  A database whose
 * jobs view predates the columns gets them when it is next opened to write. */
Test(cost, the_jobs_table_carries_namespace_queue_and_team)
{
	char dir[] = "/tmp/gpuplan-jobs-XXXXXX", cmd[1024], path[160], got[256];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/s.db", dir);
	snprintf(cmd, sizeof cmd, "bin/gpuplan run tests/fixtures/showback.yaml --quiet --db %s",
		 path);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	const char *rows = "SELECT group_concat(workload || '/' || namespace || '/' || queue || "
			   "'/' || coalesce(team, '-'), ' ') FROM (SELECT * FROM jobs "
			   "WHERE run_id = %d ORDER BY job_id)";
	char sql[512];
	snprintf(sql, sizeof sql, rows, 1);
	cr_expect_str_eq(text_of(db, sql, got, sizeof got),
			 "a/research/default/vision b/research/default/nlp c/default/default/-");
	/* the jobs' team costs are the allocations' */
	cr_expect_float_eq(
		query(db, NULL, "SELECT sum(cost) FROM jobs WHERE run_id = 1 AND team = 'nlp'"),
		query(db, NULL, "SELECT sum(total_cost) FROM allocations WHERE team = 'nlp'"),
		1e-9);
	/* an older database: the view without the columns, no scopes index */
	cr_assert_eq(
		sqlite3_exec(db,
			     "DROP VIEW jobs; DROP INDEX scopes_run_scope; CREATE VIEW jobs AS "
			     "SELECT j.run_id AS run_id, j.job_id AS job_id, w.text AS workload, "
			     "NULL AS reason, j.trace_queue_s AS trace_queue_s, j.preemptions "
			     "AS preemptions, j.oom_kills AS oom_kills "
			     "FROM job_rows j LEFT JOIN job_texts w ON w.run_id = j.run_id AND "
			     "w.text_id = j.workload_id",
			     NULL, NULL, NULL),
		SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_expect_str_eq(text_of(db, sql, got, sizeof got),
			 "a/research/default/vision b/research/default/nlp c/default/default/-");
	snprintf(sql, sizeof sql, rows, 2);
	cr_expect_str_eq(text_of(db, sql, got, sizeof got),
			 "a/research/default/vision b/research/default/nlp c/default/default/-");
	sqlite3_close(db);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* price: takes currency: an ISO 4217 code, USD when no pool says; one bill has
 * one currency, so a second pool priced in another is refused at its code.
 * The run stores it (runs.currency), and money is shown in it wherever it is
 * shown: the summary's headings and cost line, the HTML report, the metrics'
 * unit ("eur"); "$" for USD. */
Test(cost, the_prices_currency_is_stored_and_shown)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *bad[] = {"pools.batch.price.currency=eur"};
	cr_assert_eq(scenario_load("tests/fixtures/showback.yaml", bad, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "currency") && strstr(err.msg, "ISO 4217"), "%s", err.msg);
	cr_assert(strstr(err.msg, "showback.yaml:") || strstr(err.msg, "--set"), "%s", err.msg);
	cr_assert_eq(scenario_load("tests/fixtures/showback.yaml", NULL, 0, &sc, &err), GP_OK, "%s",
		     err.msg);
	cr_expect_str_eq(sc->currency, "USD");
	scenario_free(sc);
	sc = NULL;
	const char *two[] = {"pools.batch.price.currency=EUR",
			     "pools=[{name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4, "
			     "price: {gpu_hour: 2, currency: EUR}}, {name: b2, nodes: 1, gpu: "
			     "A100-80GB, gpus_per_node: 4, price: {gpu_hour: 2, currency: GBP}}]"};
	cr_assert_eq(scenario_load("tests/fixtures/showback.yaml", two + 1, 1, &sc, &err),
		     GP_EINPUT);
	cr_assert(strstr(err.msg, "GBP") && strstr(err.msg, "EUR") && strstr(err.msg, "b2"), "%s",
		  err.msg);
	char dir[] = "/tmp/gpuplan-eur-XXXXXX", cmd[4096], path[160], got[64];
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/s.db", dir);
	snprintf(
		cmd, sizeof cmd,
		"bin/gpuplan run tests/fixtures/showback.yaml --set %s --db %s > %s/out && "
		"grep -q 'cost = allocations at pool prices in EUR; EUR/verified adds' %s/out && "
		"grep -q ' cost EUR/verified$' %s/out && "
		"bin/gpuplan report %s --html %s/r.html && grep -q '<th>EUR/verified</th>' "
		"%s/r.html && grep -q 'cost per verified result EUR ' %s/r.html && "
		"bin/gpuplan run tests/fixtures/showback.yaml --quiet --db %s && "
		"bin/gpuplan report %s --html %s/u.html && grep -q '<th>\\$/verified</th>' %s/u.html",
		two[0], path, dir, dir, dir, path, dir, dir, dir, path, path, dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_expect_str_eq(
		text_of(db, "SELECT group_concat(currency, ' ') FROM runs", got, sizeof got),
		"EUR USD");
	cr_expect_str_eq(
		text_of(db,
			"SELECT group_concat(DISTINCT unit) FROM metrics WHERE run_id = 1 AND "
			"name IN ('cost_total', 'cost_idle', 'cost_per_verified_result')",
			got, sizeof got),
		"eur", "money metrics in the run's currency");
	sqlite3_close(db);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* price: {committed_gpu_hour, committed}: the pool's first 2 GPUs are a
 * commitment at 1.60 $/GPU-hour, billed the whole span whether used or not;
 * the other 2 bill 2.50 while powered.  Over a 24 h horizon: 2 x 1.60 x 24 =
 * 76.80 committed, 2 x 2.50 x 24 = 120.00 on demand, 96 x 0.03 x 24 = 69.12
 * of cores and 1,024 x 0.004 x 24 = 98.304 of memory: 364.224 $, where the
 * same node on demand is 24 x 16.976 = 407.424 $.  The jobs run two at a
 * time, one on GPUs 0-1 (committed: 3.20 + 0.24 + 0.256 = 3.696 $/h) and one
 * on GPUs 2-3 (5.496 $/h), so the allocations are 2 x 3.696 + 2 x 5.496 =
 * 18.384 $. */
Test(cost, committed_gpus_bill_the_whole_span_and_the_rest_on_demand)
{
	RUN("horizon=24h", "pools.batch.price={gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004, "
			   "committed_gpu_hour: 1.60, committed: 2}");
	cr_assert_float_eq(m("all", "cost_total"), 364.224, 1e-6);
	cr_assert_float_eq(m("batch", "cost_bill"), 364.224, 1e-6);
	cr_assert_float_eq(m("batch", "cost_committed"), 76.80, 1e-9);
	cr_assert_float_eq(m("batch", "cost_on_demand"), 407.424, 1e-6);
	cr_assert_float_eq(m("all", "cost_allocated"), 18.384, 1e-9);
	double committed = 0, on_demand = 0;
	for (size_t i = 0; i < 4; i++) {
		committed += fabs(r.jobs[i].cost - 3.696) < 1e-9;
		on_demand += fabs(r.jobs[i].cost - 5.496) < 1e-9;
	}
	cr_assert(committed == 2 && on_demand == 2, "%g on committed GPUs, %g not", committed,
		  on_demand);
	cr_assert_float_eq(m("eval", "cost_per_verified_result"), 364.224 / 4, 1e-6,
			   "one workload carries the whole bill");
	/* powered: window 12:00-17:00: the commitment is still a day, 76.80; the
	 * rest 5 h: 2 x 2.50 x 5 + 96 x 0.03 x 5 + 1,024 x 0.004 x 5 = 59.88 */
	cleanup();
	RUN("horizon=24h", "pools.batch.windows=[{from: \"12:00\", to: \"17:00\"}]",
	    "pools.batch.powered=window",
	    "pools.batch.price={gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004, "
	    "committed_gpu_hour: 1.60, committed: 2}");
	cr_assert_float_eq(m("all", "cost_total"), 76.80 + 59.88, 1e-6);
	cr_assert_float_eq(m("batch", "cost_on_demand"), 5 * 16.976, 1e-6);
	/* a second pool whose 4 committed GPUs no pod may use (a taint): its day
	 * is 4 x 1.60 x 24 = 153.60 $, all idle, whether used or not */
	cleanup();
	RUN("horizon=24h",
	    "pools=[{name: batch, nodes: 1, gpu: A100-80GB, gpus_per_node: 4, cpu: 96, memory: "
	    "1024GiB, price: {gpu_hour: 2.50, cpu_hour: 0.03, gib_hour: 0.004}}, {name: held, "
	    "nodes: 1, gpu: A100-80GB, gpus_per_node: 4, taints: [{key: held, value: \"x\", "
	    "effect: NoSchedule}], price: {gpu_hour: 2.50, committed_gpu_hour: 1.60, committed: "
	    "4}}]");
	cr_assert_float_eq(m("held", "cost_bill"), 153.60, 1e-9);
	cr_assert_float_eq(m("held", "cost_idle"), 153.60, 1e-9);
	cr_assert_float_eq(m("held", "cost_committed"), 153.60, 1e-9);
	cr_assert_float_eq(m("held", "cost_on_demand"), 4 * 2.50 * 24, 1e-9);
	cr_assert_float_eq(m("all", "cost_total"), 407.424 + 153.60, 1e-6);
}

/* A spot pool's bill beside its on-demand price: spot at 70% off bills
 * 0.3 x 16.976 = 5.0928 $ per node-hour, 122.2272 $ a day, shown beside the
 * 407.424 $ the same node costs on demand. */
Test(cost, a_spot_pools_bill_is_shown_beside_on_demand)
{
	RUN("horizon=24h", "pools.batch.spot={discount: 0.7}");
	cr_assert_float_eq(m("batch", "cost_bill"), 24 * 0.3 * 16.976, 1e-6);
	cr_assert_float_eq(m("all", "cost_total"), 122.2272, 1e-6);
	cr_assert_float_eq(m("batch", "cost_on_demand"), 407.424, 1e-6);
	cr_assert(isnan(m("batch", "cost_committed")), "no commitment");
}

/* committed comes with its price, on a pool with that many GPUs, not on spot. */
Test(cost, committed_prices_are_validated)
{
	struct gp_err err GP_ERR_SCOPE = {0};
	const char *alone[] = {"pools.batch.price.committed=2"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", alone, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "committed_gpu_hour and committed together"), "%s", err.msg);
	const char *many[] = {"pools.batch.price={gpu_hour: 2.50, committed_gpu_hour: 1.60, "
			      "committed: 5}"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", many, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "committed 5 is more GPUs than pool 'batch' has (4)"), "%s",
		  err.msg);
	const char *spot[] = {"pools.batch.price={gpu_hour: 2.50, committed_gpu_hour: 1.60, "
			      "committed: 2}",
			      "pools.batch.spot={discount: 0.5}"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", spot, 2, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "spot capacity"), "%s", err.msg);
	const char *neg[] = {"pools.batch.price={committed_gpu_hour: 1.60, committed: -1}"};
	cr_assert_eq(scenario_load("tests/fixtures/cost.yaml", neg, 1, &sc, &err), GP_EINPUT);
	cr_assert(strstr(err.msg, "committed"), "%s", err.msg);
}

/* idle_by: node, OpenCost's idleByNode: idle keyed by cluster/node (getIdleId
 * in core/pkg/opencost/allocation.go) and shared per resource over the
 * allocations on that node (computeIdleCoeffs).  Two nodes of the worked
 * example's (16.976 $/h each) over 13 h: x (4 GPUs, 8 cores, 64 GiB) fills
 * one 12:00-13:00; y (1 GPU, 8 cores, 64 GiB) and z (1 GPU, 4 cores) share the
 * other.  x's node: 13 h billed less x's 10 + 0.24 + 0.256 leaves GPUs 120,
 * cores 37.20, memory 52.992, all x's: 210.192.  The other: GPUs 130 - 5 =
 * 125 (2.50 : 2.50), cores 37.44 - 0.36 = 37.08 (0.24 : 0.12), memory
 * 53.248 - 0.256 = 52.992 (y's only): y 62.50 + 24.72 + 52.992 = 140.212,
 * z 62.50 + 12.36 = 74.86.  Over the cluster x would carry 246.04. */
#define TWO_NODES                                                                                \
	"horizon=13h", "pools.batch.nodes=2",                                                    \
		"workloads=[{name: x, arrival: {at: \"12:00\"}, gpus: 4, cpu: 8, memory: 64GiB," \
		" duration: 1h}, {name: y, arrival: {at: \"12:00\"}, gpus: 1, cpu: 8, memory:"   \
		" 64GiB, duration: 1h}, {name: z, arrival: {at: \"12:00\"}, gpus: 1, cpu: 4,"    \
		" duration: 1h}]"
Test(cost, idle_by_node_shares_each_nodes_idle_over_its_pods)
{
	RUN(TWO_NODES, "cost={idle_by: node}");
	cr_assert_float_eq(m("all", "cost_total"), 2 * 13 * NODE_HOUR, 1e-9);
	cr_assert_float_eq(m("x", "cost_idle"), 210.192, 1e-9);
	cr_assert_float_eq(m("y", "cost_idle"), 140.212, 1e-9);
	cr_assert_float_eq(m("z", "cost_idle"), 74.86, 1e-9);
	cr_assert_float_eq(m("x", "cost_idle") + m("y", "cost_idle") + m("z", "cost_idle"),
			   m("all", "cost_idle"), 1e-9, "every node was used: all idle shared");
	cr_assert_float_eq(m("z", "cost_per_verified_result"), 2.5 + 0.12 + 74.86, 1e-9);
	cleanup();
	/* even: equal parts of each node's idle to the workloads on it */
	RUN(TWO_NODES, "cost={idle_by: node, share_idle: even}");
	cr_assert_float_eq(m("x", "cost_idle"), 210.192, 1e-9);
	cr_assert_float_eq(m("y", "cost_idle"), (125 + 37.08 + 52.992) / 2, 1e-9);
	cr_assert_float_eq(m("z", "cost_idle"), (125 + 37.08 + 52.992) / 2, 1e-9);
	cleanup();
	RUN(TWO_NODES);
	cr_assert_float_eq(m("x", "cost_idle"), 245 * 10 / 15.0 + 74.28 * 0.24 / 0.6 + 52.992, 1e-9,
			   "by cluster");
}

/* report --opencost --idle-by-node: the rows by node (node_allocations), keyed
 * node/workload with properties.node as OpenCost keys a pod, over the run as
 * one set; --share-idle shares each node's idle over that node's rows only
 * (OpenCost's idleByNode: getIdleId is cluster/node, computeIdleCoeffs per
 * idleId, core/pkg/opencost/allocation.go).  The figures are the metrics':
 * x 10.496 + 210.192, y 2.996 + 140.212, z 2.62 + 74.86; each node's rows add
 * up to its 13 h, 220.688 $. */
Test(cost, opencost_idle_by_node_shares_each_nodes_idle_on_it)
{
	char dir[] = "/tmp/gpuplan-ibn-XXXXXX", cmd[2048], path[160];
	cr_assert_not_null(mkdtemp(dir));
	static char json[1 << 16];
	snprintf(
		cmd, sizeof cmd,
		"bin/gpuplan run tests/fixtures/idle-by-node.yaml --quiet --db %s/n.db && "
		"bin/gpuplan report %s/n.db --opencost --idle-by-node --share-idle > %s/a.json && "
		"bin/gpuplan report %s/n.db --opencost --idle-by-node --share-idle --aggregate node "
		"> %s/b.json && bin/gpuplan report %s/n.db --opencost --idle-by-node > %s/c.json",
		dir, dir, dir, dir, dir, dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	sqlite3 *db;
	snprintf(path, sizeof path, "%s/n.db", dir);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	const char *files[] = {"a", "b", "c"};
	double got[3][4];
	for (int f = 0; f < 3; f++) {
		snprintf(path, sizeof path, "%s/%s.json", dir, files[f]);
		FILE *in = fopen(path, "r");
		cr_assert_not_null(in);
		json[fread(json, 1, sizeof json - 1, in)] = '\0';
		fclose(in);
		got[f][0] = query(
			db, json,
			"SELECT sum(json_extract(a.value, '$.totalCost')) FROM json_each(?1, "
			"'$.data[0]') a WHERE json_extract(a.value, '$.properties.controller') = 'x'");
		got[f][1] = query(
			db, json,
			"SELECT sum(json_extract(a.value, '$.totalCost')) FROM json_each(?1, "
			"'$.data[0]') a WHERE json_extract(a.value, '$.properties.controller') = 'y'");
		got[f][2] = query(
			db, json,
			"SELECT sum(json_extract(a.value, '$.totalCost')) FROM json_each(?1, "
			"'$.data[0]') a WHERE json_extract(a.value, '$.properties.controller') = 'z'");
		got[f][3] = query(
			db, json,
			"SELECT coalesce(json_extract(?1, '$.data[0].__idle__.totalCost'), 0) + "
			"json_array_length(?1, '$.data') * 1000");
	}
	cr_assert_float_eq(got[0][0], 10.496 + 210.192, 1e-9);
	cr_assert_float_eq(got[0][1], 2.996 + 140.212, 1e-9);
	cr_assert_float_eq(got[0][2], 2.62 + 74.86, 1e-9);
	cr_assert_float_eq(got[0][3], 1000, 1e-9, "one set, no idle left: every node was used");
	/* by node: each node's rows and idle, 13 h x 16.976 */
	cr_assert_float_eq(got[1][3], 1000, 1e-9);
	snprintf(path, sizeof path, "%s/b.json", dir);
	FILE *in = fopen(path, "r");
	cr_assert_not_null(in);
	json[fread(json, 1, sizeof json - 1, in)] = '\0';
	fclose(in);
	cr_assert_eq(query(db, json,
			   "SELECT count(*) FROM json_each(?1, '$.data[0]') a WHERE "
			   "abs(json_extract(a.value, '$.totalCost') - 220.688) < 1e-9 AND "
			   "json_extract(a.value, '$.properties.node') = a.key"),
		     2);
	/* without --share-idle: the rows as charged, the idle one __idle__ */
	cr_assert_float_eq(got[2][0], 10.496, 1e-9);
	cr_assert_float_eq(got[2][3], 1000 + 2 * 13 * NODE_HOUR - 10.496 - 2.996 - 2.62, 1e-6);
	cr_assert_float_eq(query(db, json, "SELECT sum(total_cost) FROM node_allocations"),
			   2 * 13 * NODE_HOUR, 1e-6, "the table adds up to the bill");
	sqlite3_close(db);
	/* a run without rows by node is refused with what to do */
	snprintf(cmd, sizeof cmd,
		 "bin/gpuplan run tests/fixtures/cost.yaml --quiet --db %s/o.db && "
		 "bin/gpuplan report %s/o.db --opencost --idle-by-node 2> %s/err; test $? -eq 2 && "
		 "grep -q 'idle_by: node' %s/err && rm -rf %s",
		 dir, dir, dir, dir, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}
