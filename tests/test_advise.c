/*
 * test_advise.c - `gpuplan advise`: on scenarios/sharing.yaml it recommends
 * a sharing mode that removes the queue and reports its cost per verified
 * result; every alternative is a run in the database with its overrides;
 * a healthy scenario is left as it is; bad input writes nothing.
 */
#include <criterion/criterion.h>

#include "scratch.h"
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char db[96], out[32768];

static void make_dir(void)
{
	scratch_make();
	snprintf(db, sizeof db, "%s/a.db", dir);
}

TestSuite(advise, .init = make_dir, .fini = scratch_remove);

/* Runs bin/gpuplan advise ARGS; returns the exit code, stdout+stderr in out. */
static int advise(const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "bin/gpuplan advise %s", args);
	return capture(cmd, out, sizeof out);
}

static const char *last_line(void)
{
	size_t n = strlen(out);
	while (n && out[n - 1] == '\n')
		out[--n] = '\0';
	const char *nl = strrchr(out, '\n');
	return nl ? nl + 1 : out;
}

static double query(const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	double v = -1;
	cr_assert_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -2 : sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

Test(advise, sharing_recommends_a_mode_that_removes_the_queue)
{
	char args[256];
	snprintf(args, sizeof args, "scenarios/sharing.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "[allocation] pool a100"), "the base finding is shown:\n%s", out);
	cr_expect(strstr(out, "pool a100 at "), "the pool-size search is a row:\n%s", out);
	cr_expect(strstr(out, "int8 weights for chat"), "%s", out);
	const char *rec = last_line();
	cr_assert(!strncmp(rec, "recommendation: ", 16), "%s", out);
	cr_expect(strstr(rec, "time-slicing") || strstr(rec, "MPS") || strstr(rec, "MIG") ||
			  strstr(rec, "fractional"),
		  "a sharing mode: %s", rec);
	cr_expect(strstr(rec, "queue p95 0 s"), "no queue: %s", rec);
	long long run = 0;
	double cost = 0;
	const char *at = strstr(rec, "(run ");
	cr_assert(at && sscanf(at, "(run %lld)", &run) == 1, "%s", rec);
	/* no workload has a deadline: none is shown (the table shows "-") */
	at = strstr(rec, "; queue p95 0 s, $");
	cr_assert(at && sscanf(at, "; queue p95 0 s, $%lf per verified result", &cost) == 1, "%s",
		  rec);
	char sql[256];
	snprintf(sql, sizeof sql,
		 "SELECT value FROM metrics WHERE run_id = %lld AND scope = 'all' "
		 "AND name = 'queue_time_p95_s'",
		 run);
	cr_expect_float_eq(query(sql), 0, 1e-9, "the recommended run has no queue");
	snprintf(sql, sizeof sql,
		 "SELECT cost_per_verified_result FROM advice WHERE alternative_run_id = %lld",
		 run);
	cr_expect_float_eq(query(sql), cost, 0.006, "the printed cost is the advice row's");
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM params WHERE run_id = %lld AND "
		 "key = 'pools.a100.sharing'",
		 run);
	cr_expect_eq(query(sql), 1, "its overrides are in params");
	/* Billed over the same period, the same fixed cluster costs the same
	 * per verified result whichever option runs on it. */
	cr_expect_float_eq(cost,
			   query("SELECT cost_per_verified_result FROM advice WHERE "
				 "alternative_run_id = 1"),
			   0.006, "as much per verified result as the base");
	cr_expect_gt(query("SELECT count(*) FROM runs"), 9, "every alternative and probe is a run");
	cr_expect_gt(
		query("SELECT count(*) FROM findings WHERE run_id = 1 AND step = 'allocation'"), 0);
}

/* Issue 22's reproduction: findings once kept their scope in 64 bytes and
 * advise looked the pool up by that (truncated) name, so a pool named with 70
 * letters lost every sharing alternative.  Findings now carry the pool's
 * index: the same 10 alternatives are planned and time-slicing x4 wins, as
 * with the short name. */
Test(advise, a_pool_name_of_any_length_gets_the_same_advice)
{
	char name[254], path[128], cmd[1024], args[256];
	memset(name, 'a', 70);
	name[70] = '\0';
	snprintf(path, sizeof path, "%s/long.yaml", dir);
	snprintf(cmd, sizeof cmd, "sed 's/name: a100/name: %s/' scenarios/sharing.yaml > %s", name,
		 path);
	cr_assert_eq(system(cmd), 0);
	snprintf(args, sizeof args, "%s --db %s", path, db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "advise sharing: 10 alternatives"), "%s", out);
	char want[512];
	snprintf(want, sizeof want, "recommendation: time-slicing x4 on %s (run ", name);
	cr_expect(strstr(last_line(), want), "%s", out);
	snprintf(want, sizeof want, "--set 'pools.%s.sharing={mode: time-slicing, replicas: 4}'",
		 name);
	cr_expect(strstr(last_line(), want), "%s", out);
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT count(*) FROM findings WHERE run_id = 1 AND scope = '%s' "
		 "AND kind = 'sharing'",
		 name);
	cr_expect_eq(query(sql), 1, "the finding names the pool in full");
}

Test(advise, a_healthy_scenario_is_left_as_it_is)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnose/healthy.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "the base run has no finding"), "%s", out);
	cr_expect(strstr(last_line(), "recommendation: keep the scenario as it is (run 1)"), "%s",
		  out);
	cr_expect_eq(query("SELECT count(*) FROM runs"), 1, "nothing to try");
}

Test(advise, memory_tries_narrower_weights_with_sharing)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnose/memory.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "int8 weights for finetune, time-slicing x2 on a100"), "%s", out);
	cr_expect(strstr(out, "int4 weights for finetune, time-slicing x4 on a100"), "%s", out);
	cr_expect(strstr(last_line(), "recommendation: int4 weights for finetune, time-slicing x4"),
		  "%s", out);
}

Test(advise, bad_input_exits_2_and_writes_nothing)
{
	char args[256];
	snprintf(args, sizeof args, "scenarios/sharing.yaml --db %s --set pools.a100.nodse=2", db);
	cr_expect_eq(advise(args), 2, "%s", out);
	cr_expect(strstr(out, "did you mean 'nodes'"), "%s", out);
	struct stat sb;
	cr_expect_neq(stat(db, &sb), 0, "no database was created");
	cr_expect_eq(advise("--bogus"), 2, "%s", out);
	cr_expect_eq(advise("--help"), 0);
	cr_expect(strstr(out, "usage: gpuplan advise"), "%s", out);
}

Test(advise, placement_relaxes_the_rules_it_blames)
{
	char args[256];
	snprintf(args, sizeof args, "scenarios/placement.yaml --goal batch=30m --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "train without its node_selector"), "%s", out);
	cr_expect(strstr(out, "batch tolerating dedicated=inference"), "%s", out);
	cr_expect(strstr(out, "train with every rule relaxed"), "%s", out);
	cr_expect(strstr(out, "pool a100 at "), "the pool the selector allows is sized:\n%s", out);
	cr_expect_eq(query("SELECT count(*) FROM params p JOIN advice a ON a.alternative_run_id = "
			   "p.run_id WHERE key = 'workloads.batch.tolerations' AND alternative "
			   "NOT LIKE '% + %'"),
		     1, "planned once alone (the binding constraints' pairs come beside)");
}

/* Two pools short at once (tests/fixtures/diagnosis/two-pools.yaml): on one
 * GPU the k-th 1-hour job ends at k hours, so with a 1-hour deadline h100
 * needs 2 nodes for its 2 jobs and l4 3 for its 3.  Each pool is searched
 * for its own workload's goal (the run's would hold for neither alone), and
 * only the two sizes together meet every deadline: that row is the
 * recommendation, at 2 x $4 + 3 x $1 = $11 an hour, billed like every
 * option over the base run's 3 h: $33 for 5 results. */
Test(advise, each_short_pool_is_sized_and_the_sizes_run_together)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/two-pools.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "pool h100 at 2 nodes (smallest for train)"), "%s", out);
	cr_expect(strstr(out, "pool l4 at 3 nodes (smallest for embed)"), "%s", out);
	cr_expect(strstr(last_line(), "recommendation: pools l4 at 3 and h100 at 2 nodes together"),
		  "%s", out);
	cr_expect(strstr(last_line(), "$6.60 per verified result"), "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM advice WHERE meets = 1"), 1, "%s", out);
}

/* Near-idle replicas hold the GPUs training waits for: two replicas serve
 * the same traffic within its SLO and free four GPUs, so every deadline is
 * met on the same node (the fourth job starts at 02:15, queue p95 0.85 x 2h
 * = 6120 s) and more nodes are not the answer. */
Test(advise, fewer_idle_replicas_come_before_more_nodes)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnose/idle-replicas.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(last_line(), "recommendation: 2 replicas of chat (run 2): --set "
				      "'workloads.chat.replicas=2'; queue p95 6120 s"),
		  "%s", out);
	cr_expect_eq(
		query("SELECT slo_attainment_pct FROM advice WHERE alternative = '2 replicas of chat'"),
		100.0, "%s", out);
}

/* Two findings' fixes that each fall short meet the goal together
 * (tests/fixtures/diagnosis/two-rules.yaml); advise ran them one by one and
 * recommended a larger pool.  By hand: the base runs 4 renders at 00:00, 4
 * at 02:00 and etl at 04:00: 4 of 12 on time.  Together the 12 jobs start at
 * once on the 12 GPUs and end at 2h; like every option they are billed over
 * the base run's 5 h: 4 x $1.50 + 8 x $3.50 = $34 an hour, $170, $14.17 for
 * each of 12 results, less than 3 nodes of L40S. */
Test(advise, fixes_that_fall_short_alone_run_together)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/two-rules.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	/* The two binding constraints' relaxations, paired (issue 46: etl's
	 * taint binds the most pod-hours, so it comes first). */
	cr_expect(strstr(last_line(), "recommendation: etl tolerating team=research + render "
				      "without its node_selector"),
		  "%s", out);
	cr_expect(strstr(last_line(),
			 "$14.17 per verified result (base: queue p95 14400 s, deadlines "
			 "met 33.3%, $42.50)"),
		  "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM advice WHERE meets = 1 AND alternative NOT LIKE "
			   "'% + %' AND alternative NOT LIKE 'pool %'"),
		     0, "no fix meets the goal alone: %s", out);
	cr_expect_float_eq(query("SELECT cost_total FROM advice WHERE alternative LIKE '% + %'"),
			   170, 1e-9, "%s", out);
	/* render tolerates team=research already: nothing to add for it. */
	cr_expect_eq(
		query("SELECT count(*) FROM advice WHERE alternative LIKE 'render tolerating%'"), 0,
		"%s", out);
}

/* A training queue's selector names a product no node carries, beside a
 * chat service that meets its SLO.  Narrower weights for the service change
 * nothing a planner needs and cost quality: they join no combination, and
 * among rows as near the goal the full-precision one comes first, so the
 * closest is the selector's own fix, not it bundled with int8 weights. */
Test(advise, narrower_weights_join_no_combination_and_lose_ties)
{
	char args[256];
	snprintf(args, sizeof args,
		 "tests/fixtures/diagnosis/selector-typo-beside-a-service.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM advice WHERE alternative LIKE '% + %' AND "
			   "alternative LIKE '%weights%'"),
		     0, "%s", out);
	cr_expect(strstr(last_line(), "the closest is pretrain without its node_selector (run"),
		  "%s", out);
}

/* fixes_that_fall_short_alone_run_together with names as long as the loader
 * allows: workloads of 253 characters, a taint key of 217 and a value of 63.
 * The pair's label is 253 + 12 (" tolerating ") + 217 + 1 + 63 + 3 (" + ") +
 * 253 + 26 (" without its node_selector") = 828 characters, past the 600 a row
 * once held: it is planned, run, stored and recommended whole, with the same
 * figures as the short names ($170 for 12 results). */
Test(advise, a_label_past_600_characters_is_kept_whole)
{
	char render[254], etl[254], key[218], value[64], path[128], cmd[2048], args[256];
	snprintf(render, sizeof render, "render-%0246d", 0);
	snprintf(etl, sizeof etl, "etl-%0249d", 0);
	snprintf(key, sizeof key, "%0200d.example.com/team", 0);
	snprintf(value, sizeof value, "research-%054d", 0);
	cr_assert_eq(strlen(render) + strlen(etl) + strlen(key) + strlen(value),
		     253 + 253 + 217 + 63);
	snprintf(path, sizeof path, "%s/long-names.yaml", dir);
	snprintf(cmd, sizeof cmd,
		 "sed 's|name: render|name: %s|; s|name: etl|name: %s|; s|key: team|key: %s|g; "
		 "s|value: research|value: %s|g' tests/fixtures/diagnosis/two-rules.yaml > %s",
		 render, etl, key, value, path);
	cr_assert_eq(system(cmd), 0);
	snprintf(args, sizeof args, "%s --db %s", path, db);
	cr_assert_eq(advise(args), 0, "%s", out);
	char label[900], want[1024], sql[1200];
	cr_assert_eq(snprintf(label, sizeof label,
			      "%s tolerating %s=%s + %s without its node_selector", etl, key, value,
			      render),
		     828);
	snprintf(want, sizeof want, "recommendation: %s (run ", label);
	cr_expect(strstr(last_line(), want), "%s", out);
	snprintf(want, sizeof want, "--set 'workloads.%s.node_selector={}'", render);
	cr_expect(strstr(last_line(), want), "%s", out);
	snprintf(sql, sizeof sql,
		 "SELECT cost_total FROM advice WHERE meets = 1 AND alternative = '%s'", label);
	cr_expect_float_eq(query(sql), 170, 1e-9, "%s", out);
}

/* A workload short of capacity that may use two pools has each sized for
 * it, and the cheaper answer wins whichever pool the scenario lists first
 * (tests/fixtures/diagnosis/either-pool.yaml: it grew the first, H100).
 * Billed over the base run's 4 h: 3 A100 nodes and the H100 one, 24 x $2 +
 * 8 x $4 = $80 an hour, $320 for 4 results; 3 H100 nodes and the A100 one
 * $112 a result. */
Test(advise, the_cheaper_pool_a_workload_may_use_is_grown)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/either-pool.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	const char *want = "recommendation: pool a100 at 3 nodes (smallest for train) (run ";
	cr_expect(strstr(last_line(), want), "%s", out);
	cr_expect(strstr(last_line(), "$80.00 per verified result"), "%s", out);
	cr_expect(strstr(out, "pool h100 at 3 nodes (smallest for train)"), "%s", out);
	cr_expect_null(strstr(out, "together"), "alternatives, not parts of one plan: %s", out);
	/* The other order: the same answer. */
	char path[160];
	snprintf(path, sizeof path, "%s/swapped.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("name: either-pool\nseed: 2\npools:\n"
	      "  - {name: a100, nodes: 1, gpu: A100-80GB, gpus_per_node: 8, price: {gpu_hour: 2}}\n"
	      "  - {name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 8, price: {gpu_hour: 4}}\n"
	      "workloads:\n  - {name: train, count: 4, arrival: {at: \"00:00\"}, gpus: 8, "
	      "duration: 2h, gpu_busy: 0.9, deadline: {within: 3h}}\noutput: {step: 15m}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof args, "%s --db %s/swapped.db", path, dir);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(last_line(), want), "%s", out);
}

/* 80 2-hour jobs with a 3-hour deadline on 8 GPUs a node need 10 nodes
 * (80 at once); the search goes to 4 (1 .. 4x the pool).  The 4-node run is
 * a row that says it falls short, 32 of 80 on time: 40% (it had no row). */
Test(advise, a_pool_search_that_falls_short_is_a_row_too)
{
	char args[256];
	snprintf(args, sizeof args,
		 "tests/fixtures/diagnosis/capacity.yaml --db %s --set workloads.train.count=80",
		 db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "pool h100 at 4 nodes (still short for train)"), "%s", out);
	cr_expect_eq(query("SELECT deadline_met_pct FROM advice WHERE alternative LIKE "
			   "'pool h100 at 4 nodes%'"),
		     40.0, "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM advice"), 2, "%s", out);
}

/* A pool sized alone that still falls short is diagnosed again, and sized
 * after the fix of what binds at the larger size
 * (tests/fixtures/diagnosis/sized-then-evicted.yaml): at 8 nodes and 64 GPUs
 * of quota, the Cluster Autoscaler's scale-down evicts running jobs from the
 * nodes it added (5% late); with safe_to_evict: false, 4 nodes meet every
 * deadline.  Before, the closest row was the 8 nodes, "still short". */
Test(advise, a_sized_run_that_falls_short_is_diagnosed_again)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/sized-then-evicted.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	/* the quota binds with the pool's max: raising it alone admits jobs no node holds */
	cr_expect(strstr(out,
			 "{nvidia.com/gpu: 18} is its smallest relaxation (raise the queue's "
			 "nominal GPU quota by the waiting jobs the free GPUs hold, else by "
			 "one); the pools train may use hold 16 GPUs at most (h100 at 2 nodes, "
			 "its autoscaling max)"),
		  "%s", out);
	cr_expect(strstr(out, "pool h100 autoscaling to 8 nodes, quota of ml at 64 GPUs (still "
			      "short of every goal)"),
		  "%s", out);
	cr_expect(
		strstr(last_line(),
		       "recommendation: pool h100 autoscaling to 4 nodes, quota of ml at 32 GPUs, "
		       "after train not safe to evict (smallest meeting every goal)"),
		"%s", out);
	cr_expect(strstr(last_line(), "--set 'workloads.train.safe_to_evict=false'"), "%s", out);
	cr_expect_eq(query("SELECT deadline_met_pct FROM advice WHERE alternative LIKE "
			   "'%not safe to evict%'"),
		     100.0);
}

/* Sized again one fix at a time (scenarios/placement.yaml): at 4 A100 nodes
 * batch waits on a packing (LeastAllocated spreads train's 4-GPU pods) and
 * on the taint of the node kept for serve.  Both fixes together let batch
 * take serve's node; the first finding's alone meets every goal at 3. */
Test(advise, a_short_sizing_takes_one_fix_a_round)
{
	char args[256];
	snprintf(args, sizeof args, "scenarios/placement.yaml --goal batch=30m --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(last_line(), "recommendation: pool a100 at 3 nodes, after train without "
				      "its node_selector + scoring MostAllocated (smallest meeting "
				      "every goal)"),
		  "%s", out);
	cr_expect(!strstr(out, "MostAllocated + batch tolerating"), "%s", out);
}

/* A service that shares its pool is sized there too
 * (tests/fixtures/diagnosis/service-beside-batch.yaml): the idle GPUs hold 5
 * of the ~20 replicas its load needs, which the finding now says (it said 5
 * "would serve its load, no new node needed"), and advise finds the fewest
 * replicas meeting its goal with nodes for them beside the embedding jobs'
 * (it had no row that met).  Its server preempts sequences for want of KV
 * blocks (70B weights fill most of two A100s), so twice the TP degree is
 * searched too, and needs 20 GPUs where TP 2 needs 44: vLLM's KV cache is
 * what the GPUs hold beyond the weights' shard (gpu_memory_utilization).
 * The embedding jobs keep the 10 GPUs beside the replicas: 2 nodes. */
Test(advise, a_service_sharing_its_pool_is_sized)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/service-beside-batch.yaml --db %s",
		 db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "5 replicas fit on them, of the 19 its load needs at the rate a "
			      "replica served; the rest need more nodes"),
		  "%s", out);
	cr_expect(
		strstr(out, "chat at 22 replicas, pool a100 at 8 nodes (fewest meeting its goal)"),
		"%s", out);
	cr_expect(strstr(last_line(), "recommendation: chat at 5 replicas of TP 4, pool a100 at 5 "
				      "nodes (fewest meeting its goal)"),
		  "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM advice WHERE alternative LIKE 'chat on %'"), 0,
		     "another type would move the embedding jobs too:\n%s", out);
}

/* An autoscaler whose maximum is too low and whose ramp from one replica
 * misses the p99 as well (tests/fixtures/diagnosis/autoscaler-ramp.yaml):
 * max_replicas 4 alone reaches 90.7% of requests within the SLO, the old
 * maximum kept warm alone 0.7%, both together 99.2%, which meets the p99
 * goal; advise named only the maximum, and nothing met. */
Test(advise, an_autoscaler_ramp_that_misses_keeps_the_old_maximum_warm)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/autoscaler-ramp.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "recommendation: min_replicas 2, max_replicas 4 for chat (run 6): "
			      "--set 'workloads.chat.replicas.max=4' --set "
			      "'workloads.chat.replicas.min=2'; SLO attainment 99.2%"),
		  "%s", out);
	cr_expect(strstr(out, "  max_replicas 4 for chat                      5    no "), "%s",
		  out);
	cr_expect(strstr(out, "  min_replicas 2 for chat                      4    no "), "%s",
		  out);
}

/* A healthy service is kept (tests/fixtures/diagnosis/healthy-service.yaml:
 * no finding, every goal met).  advise's sizing finds A10s that meet the
 * goal too at $72.00 a day against $86.40 (2 nodes of 2 A10s at $0.75 an
 * hour against 2 L40S at $1.80: a sixth less), and recommended
 * re-platforming for it; a
 * healthy run is changed only to save a third of its bill
 * (ADVISE_WORTH_CHANGING), and the cheaper fleet is named as a change to
 * weigh.  scenarios/fleet-overprovisioned.yaml, which saves far more, still
 * moves (test_advise_size). */
Test(advise, a_healthy_service_is_kept_and_a_small_saving_is_named_not_recommended)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/healthy-service.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "the base run has no finding"), "%s", out);
	cr_expect(strstr(out, "\n   1  base (the scenario as given)"), "%s", out);
	cr_expect(strstr(out, "\nrecommendation: keep the scenario as it is (run 1)"), "%s", out);
	cr_expect(strstr(out, "qa on A10: 3 replicas, pool l40s at 2 nodes (fewest meeting its "
			      "goal) (run 7) also meets every goal at $72.00 a day against $86.40: "
			      "a change to weigh, not a fix"),
		  "%s", out);
}

/* The other work keeps the GPUs beside a service's replicas, in whole nodes
 * (tests/fixtures/diagnosis/service-beside-evals.yaml: 2 replicas and 2
 * evals share one 4-GPU L40S node).  Counted as the nodes the replicas do
 * not fill, it kept none: "chat at 4 replicas, pool l40s at 1 node" took the
 * evals' GPUs and they never started. */
Test(advise, the_work_beside_a_sized_service_keeps_its_gpus)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/service-beside-evals.yaml --db %s",
		 db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(last_line(), "recommendation: chat at 4 replicas, pool l40s at 2 nodes "
				      "(fewest meeting its goal)"),
		  "%s", out);
	cr_expect(!strstr(out, "pool l40s at 1 node (fewest"), "%s", out);
}

/* Two workloads' findings name one pool (tests/fixtures/diagnosis/
 * shared-pool.yaml): it is sized for both their goals, not the run's, which
 * a100's chat keeps short at any h100 size (it said "pool h100 at 4 nodes
 * (still short of every deadline met)" and found nothing that meets).  By
 * hand: on the base 2 + 2 + 2 of 18 jobs meet their deadlines (33.3%); h100
 * at 2 nodes 4 + 6 + 2 (66.7%); with a100 at 4 too, all 18. */
Test(advise, a_pool_two_findings_name_is_sized_for_both_goals)
{
	char args[256];
	snprintf(args, sizeof args, "tests/fixtures/diagnosis/shared-pool.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "pool h100 at 2 nodes (smallest for train, eval)"), "%s", out);
	cr_expect(strstr(out, "pool a100 at 4 nodes (smallest for chat)"), "%s", out);
	cr_expect(
		strstr(last_line(), "recommendation: pools h100 at 2 and a100 at 4 nodes together"),
		"%s", out);
	cr_expect_float_eq(query("SELECT deadline_met_pct FROM advice WHERE alternative LIKE "
				 "'pool h100 at 2 nodes%'"),
			   200.0 / 3, 1e-9, "%s", out);
	cr_expect_float_eq(query("SELECT deadline_met_pct FROM advice WHERE alternative LIKE "
				 "'base%'"),
			   100.0 / 3, 1e-9, "%s", out);
}

/* Jobs that never start beside ones that run at once: the queue p95 of
 * those that started is 0 s, but two jobs still wait at the end (1 h), so
 * the base's cell and the recommendation's "base:" say >=3600, not 0; the
 * columns are as wide as the 33-character workload name in run's table. */
Test(advise, work_that_never_starts_is_not_a_queue_of_zero)
{
	char path[128], args[256];
	snprintf(path, sizeof path, "%s/never.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("name: never\npools: [{name: a100, nodes: 1, gpu: A100-80GB, gpus_per_node: 8, "
	      "price: {gpu_hour: 2}}]\nworkloads:\n"
	      "  - {name: a-very-long-workload-name-indeed, count: 4, arrival: {at: \"00:00\"}, "
	      "gpus: 1, duration: 1h}\n"
	      "  - {name: stuck, count: 2, arrival: {at: \"00:00\"}, gpus: 1, duration: 1h, "
	      "node_selector: {team: x}}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof args, "%s --db %s", path, db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "  base (the scenario as given)") &&
			  strstr(strstr(out, "  base (the scenario as given)"), " >=3600 "),
		  "%s", out);
	cr_expect(strstr(last_line(), "(base: queue p95 >=3600 s, "), "%s", out);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "bin/gpuplan run %s --db %s/run.db", path, dir);
	cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s", out);
	cr_expect(strstr(out, "\nall                                               8 "), "%s", out);
	cr_expect(strstr(out, "\nworkload a-very-long-workload-name-indeed         - "), "%s", out);
	cr_expect(strstr(out, "       >=3600      >=3600 "), "the all row: %s", out);
}

/* Thirty notebooks, each a workload of its own (as a JupyterHub import
 * has them), idle beside a fine-tune that waits: culling them is one
 * alternative with 30 overrides, one row, not 30 (it was one row each, and
 * at most 6 overrides an alternative). */
Test(advise, idle_culling_of_thirty_notebooks_is_one_alternative)
{
	char path[128], args[256];
	snprintf(path, sizeof path, "%s/nb30.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("name: hub\nstart: 2026-11-02T00:00:00Z\n"
	      "pools: [{name: gpu, nodes: 4, gpu: A100-80GB, gpus_per_node: 8}]\nworkloads:\n",
	      f);
	for (int i = 0; i < 30; i++)
		fprintf(f,
			"  - {name: nb-%02d, kind: service, count: 1, gpus: 1, duration: 8h, "
			"gpu_busy: 0.05, arrival: {at: \"08:00\"}}\n",
			i);
	fputs("  - {name: finetune, count: 1, gpus: 8, duration: 2h, arrival: {at: \"09:00\"}, "
	      "deadline: {within: 4h}}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof args, "%s --db %s", path, db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM advice WHERE alternative LIKE 'idle_cull%'"), 1,
		     "%s", out);
	cr_expect(strstr(out, "idle_cull nb-00, nb-01 and 28 more after 1h"), "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM params WHERE key LIKE 'workloads.nb-%.idle_cull' "
			   "AND run_id = (SELECT alternative_run_id FROM advice WHERE alternative "
			   "LIKE 'idle_cull%')"),
		     30, "%s", out);
}

/* Idle notebooks: the cheapest fix is to cull them (no hardware, no sharing),
 * an alternative of the allocation finding.  4 notebooks of 8h at 5% busy on
 * 2 GPUs arrive at 09:00: as given, two wait 8h (queue p95 28800 s); culled
 * after an idle hour, two run 09:00-10:00 and two 10:00-11:00 (p95 3600 s),
 * and each frees 8h - 1h of its GPU: 28 GPU-hours. */
Test(advise, idle_notebooks_get_idle_culling_as_an_alternative)
{
	char path[128], args[256];
	snprintf(path, sizeof path, "%s/nb.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("name: notebooks\nstart: 2026-11-02T00:00:00Z\n"
	      "pools: [{name: gpu, nodes: 1, gpu: A100-80GB, gpus_per_node: 2}]\n"
	      "workloads:\n  - {name: nb, kind: service, count: 4, gpus: 1, duration: 8h, "
	      "gpu_busy: 0.05, arrival: {at: \"09:00\"}}\n",
	      f);
	fclose(f);
	snprintf(args, sizeof args, "%s --db %s", path, db);
	cr_assert_eq(advise(args), 0, "%s", out);
	const char *row = strstr(out, "idle_cull nb after 1h");
	cr_assert(row, "%s", out);
	cr_expect(strstr(out, "; or, with no hardware and no sharing, idle_cull on nb, whose idle "
			      "pods would give their GPUs back"),
		  "the finding proposes it:\n%s", out);
	long long run = 0;
	char q[256];
	snprintf(q, sizeof q,
		 "SELECT run_id FROM params WHERE key = 'workloads.nb.idle_cull' AND value = "
		 "'{after: 1h, threshold: 0.3}'");
	run = (long long)query(q);
	cr_assert_gt(run, 0, "the alternative's run keeps its override:\n%s", out);
	snprintf(q, sizeof q,
		 "SELECT value FROM metrics WHERE run_id = %lld AND scope = 'nb' AND name = '%s'",
		 run, "queue_time_p95_s");
	cr_expect_float_eq(query(q), 3600, 1e-6);
	snprintf(q, sizeof q,
		 "SELECT value FROM metrics WHERE run_id = %lld AND scope = 'nb' AND name = '%s'",
		 run, "culled_gpu_hours");
	cr_expect_float_eq(query(q), 28, 1e-6);
	cr_expect(strstr(out, "28800"), "the base run's queue p95:\n%s", out);
}

/* The alternatives simulated on threads (--jobs, default one per processor)
 * are written in the order planned: every row, run ids included, is the one
 * --jobs 1 writes, and so is the table printed.  GPUPLAN_THREADS=1 is the
 * single-threaded path too.  tests/fixtures/diagnosis/shared-pool.yaml
 * plans 14 alternatives. */
Test(advise, alternatives_on_threads_write_what_one_thread_writes)
{
	static const char *const runs[] = {"--jobs 1", "--jobs 4", "", "GPUPLAN_THREADS=1"};
	char outs[4][4096], cmd[2048];
	for (int i = 0; i < 4; i++) {
		bool env = strchr(runs[i], '=') != NULL;
		snprintf(cmd, sizeof cmd,
			 "%s bin/gpuplan advise tests/fixtures/diagnosis/shared-pool.yaml --db "
			 "%s/j%d.db %s | sed 1d",
			 env ? runs[i] : "", dir, i, env ? "" : runs[i]);
		cr_assert_eq(capture(cmd, outs[i], sizeof outs[i]), 0, "%s: %s", cmd, outs[i]);
		if (i)
			cr_assert_str_eq(outs[i], outs[0], "%s printed another table", runs[i]);
	}
	cr_assert(strstr(outs[0], "alternative"), "%s", outs[0]);
	for (int i = 1; i < 4; i++) {
		snprintf(cmd, sizeof cmd,
			 "cd %s && for t in advice metrics params job_rows timeseries allocations "
			 "pending_reasons; do sqlite3 j0.db \"select * from $t\" > a.$t && "
			 "sqlite3 j%d.db \"select * from $t\" > b.$t && cmp -s a.$t b.$t || "
			 "{ echo \"$t differs\"; exit 1; }; done && "
			 "q='select run_id, name, seed, events, sim_seconds, status from runs' && "
			 "sqlite3 j0.db \"$q\" > a.runs && sqlite3 j%d.db \"$q\" > b.runs && "
			 "cmp a.runs b.runs && test $(wc -l < a.runs) -ge 10",
			 dir, i, i);
		cr_assert_eq(capture(cmd, out, sizeof out), 0, "%s: %s", runs[i], out);
	}
}

/* A taint that reserves a node for a team is policy (tests/fixtures/
 * diagnosis/taint.yaml): advise tolerates it for batch unless told that
 * workloads' tolerations are kept; then the open pool grows to 2 nodes
 * instead, and the output says what was kept and left out.  A pattern
 * above a path keeps it too: the whole pool "open" keeps its size, and
 * nothing is left that meets. */
Test(advise, keep_leaves_a_deliberate_taint_alone)
{
	char args[512];
	snprintf(args, sizeof args,
		 "tests/fixtures/diagnosis/taint.yaml --db %s --keep 'workloads.*.tolerations'",
		 db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "kept as they are (--keep): workloads.*.tolerations; 1 alternative "
			      "that would change them not run, and no search varies them"),
		  "%s", out);
	cr_expect(!strstr(out, "batch tolerating"), "%s", out);
	cr_expect(strstr(out, "recommendation: pool open at 2 nodes (smallest meeting every goal)"),
		  "%s", out);
	remove(db);
	snprintf(
		args, sizeof args,
		"tests/fixtures/diagnosis/taint.yaml --db %s --keep 'workloads.*.tolerations' --json",
		db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "\"kept\": {\n  \"paths\": [\n  \"workloads.*.tolerations\"],\n  "
			      "\"alternatives_not_run\": 1}}"),
		  "%s", out);
	snprintf(args, sizeof args,
		 "tests/fixtures/diagnosis/taint.yaml --db %s --keep workloads.batch.tolerations "
		 "--keep pools.open",
		 db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "recommendation: none of these meets every workload's goal; the "
			      "closest is base"),
		  "%s", out);
}

/* A --keep path that names nothing in the scenario is an error that says
 * what was expected, exit 2, before the database is touched. */
Test(advise, keep_checks_its_paths_against_the_scenario)
{
	static const char *const bad[][2] = {
		{"pools.lage.taints",
		 "the scenario has no pool named lage; its pools: open, reserved"},
		{"pools.reserved.taint", "a pool has no key taint; expected one of trace, format"},
		{"scheduler.order.x.y", NULL},
		{"jobs.x",
		 "expected a --set path under pools, workloads, queues, cohorts or scheduler"},
		{"pools..taints", "expected a --set path"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char args[512];
		snprintf(args, sizeof args,
			 "tests/fixtures/diagnosis/taint.yaml --db %s --keep '%s'", db, bad[i][0]);
		int rc = advise(args);
		if (!bad[i][1]) { /* deeper than a key: not checked, a path all the same */
			cr_expect_eq(rc, 0, "%s: %s", bad[i][0], out);
			remove(db);
			continue;
		}
		cr_expect_eq(rc, 2, "%s: %s", bad[i][0], out);
		cr_expect(strstr(out, bad[i][1]), "%s: %s", bad[i][0], out);
		struct stat st_db;
		cr_expect_neq(stat(db, &st_db), 0, "%s: the database was made", bad[i][0]);
	}
}

/* Two overbuilt pools of a healthy run (tests/fixtures/diagnose/
 * overbuilt-two-pools.yaml): each is shrunk on the other's whole size and
 * holds every goal on 5 seeds; the two answers together were one run on one
 * seed.  They are held to the same seeds now: the row that joins them runs
 * seeds 12 to 15 after 11, every run written, and meets on all of them. */
Test(advise, two_shrunk_pools_together_meet_on_the_same_seeds)
{
	char args[512];
	snprintf(args, sizeof args, "tests/fixtures/diagnose/overbuilt-two-pools.yaml --db %s", db);
	cr_assert_eq(advise(args), 0, "%s", out);
	cr_expect(strstr(out, "recommendation: pools h100 at 1 and l40s at 4 nodes together (every "
			      "goal on 5 seeds) (run 34): --set 'pools.h100.nodes=1' --set "
			      "'pools.l40s.nodes=4'"),
		  "%s", out);
	cr_expect_eq(query("SELECT count(*) FROM params WHERE key = 'seed' AND run_id > 34 AND "
			   "value + 0 BETWEEN 12 AND 15"),
		     4);
}
