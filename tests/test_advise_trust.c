/*
 * test_advise_trust.c - advise recommends hardware only from a model that
 * is trusted (advise.h, "Trust"; issue 37 item 4): a twin needs a backtest
 * of the same file within the tolerance, and no workload whose wait matters
 * may run on a placeholder duration; --force overrides with a warning and a
 * flag in the advice table.  And --growth, which scales every rate.
 */
#include <criterion/criterion.h>

#include "gpuplan/results.h"
#include "gpuplan/run.h"
#include "gpuplan/scenario.h"
#include "scratch.h"

static char db[96], out[65536];

static void make_dir(void)
{
	scratch_make();
	snprintf(db, sizeof db, "%s/a.db", dir);
}

TestSuite(trust, .init = make_dir, .fini = scratch_remove);

static int gpuplan(const char *cmd, const char *args)
{
	char line[1024];
	snprintf(line, sizeof line, "bin/gpuplan %s %s --db %s", cmd, args, db);
	return capture(line, out, sizeof out);
}

#define REFUSED "no hardware recommended: the model is not trusted"
#define HARDWARE_ROWS                                                                      \
	"SELECT count(*) FROM advice WHERE run_id = (SELECT max(run_id) FROM advice) AND " \
	"alternative LIKE 'pool % at % nodes%'"

Test(trust, a_twin_without_a_backtest_gets_no_hardware)
{
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/tiny1.yaml"), 0, "%s", out);
	cr_expect(strstr(out, REFUSED), "%s", out);
	cr_expect(strstr(out, "  - tests/fixtures/backtest/tiny1.yaml is a twin and "), "%s", out);
	cr_expect(strstr(out, "holds no backtest of it (this file, sha256 "), "%s", out);
	cr_expect(strstr(out, "no hardware is recommended until the reasons above are resolved"),
		  "%s", out);
	cr_expect_eq(scratch_query(db, HARDWARE_ROWS), 0, "no pool was sized");
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM advice WHERE untrusted LIKE "
				       "'%holds no backtest%'"),
		     scratch_query(db, "SELECT count(*) FROM advice"));
	cr_expect_eq(scratch_query(db, "SELECT sum(forced) FROM advice"), 0);
}

Test(trust, a_backtest_past_the_tolerance_refuses_and_names_the_figures)
{
	cr_assert_eq(gpuplan("backtest", "tests/fixtures/backtest/tiny1.yaml --quiet"), 0, "%s",
		     out);
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/tiny1.yaml"), 0, "%s", out);
	cr_expect(strstr(out, REFUSED), "%s", out);
	cr_expect(strstr(out, "  - the latest backtest (run 1) differs from the history by more "
			      "than 25% (queue p95 by more than 5m too): all queue_time_p95_s "
			      "observed 2310, simulated 5250 (+127%); all gpu_hours observed "
			      "3.528, simulated 2 (-43%)"),
		  "%s", out);
	cr_expect_eq(scratch_query(db, HARDWARE_ROWS), 0);
	/* A tolerance wide enough trusts the same backtest: the pool is sized. */
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/tiny1.yaml --tolerance 200%"), 0,
		     "%s", out);
	cr_expect_not(strstr(out, REFUSED), "%s", out);
	cr_expect_gt(scratch_query(db, HARDWARE_ROWS), 0, "%s", out);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM advice WHERE run_id = (SELECT "
				       "max(run_id) FROM advice) AND untrusted IS NOT NULL"),
		     0);
}

Test(trust, a_backtest_within_tolerance_lets_advise_size_pools)
{
	cr_assert_eq(gpuplan("backtest", "tests/fixtures/backtest/tiny.yaml --quiet"), 0, "%s",
		     out);
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/tiny.yaml"), 0, "%s", out);
	cr_expect_not(strstr(out, "not trusted"), "%s", out);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM advice WHERE untrusted IS NOT NULL"),
		     0);
}

Test(trust, a_placeholder_duration_where_the_wait_matters_refuses)
{
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/notebooks.yaml"), 0, "%s", out);
	cr_expect(strstr(out, REFUSED), "%s", out);
	cr_expect(strstr(out, "  - workload notebooks is held open by people (a service or "
			      "notebook), so its wait matters, but its duration is a placeholder: "
			      "workloads[notebooks].duration = 24h (not learned: running at the "
			      "snapshot, no pod ended: the horizon)"),
		  "%s", out);
	cr_expect_not(strstr(out, "workload finetune is"), "batch without a deadline: %s", out);
	cr_expect_eq(scratch_query(db, HARDWARE_ROWS), 0);
	/* Learned (no longer a placeholder), the same duration is trusted. */
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/notebooks.yaml --set "
				       "workloads.notebooks.duration=24h"),
		     0, "%s", out);
	cr_expect_not(strstr(out, "not trusted"), "%s", out);
}

Test(trust, force_recommends_with_a_warning_and_a_flag)
{
	cr_assert_eq(gpuplan("advise", "tests/fixtures/backtest/tiny1.yaml --force"), 0, "%s", out);
	cr_expect_not(strstr(out, REFUSED), "%s", out);
	cr_expect(strstr(out, "warning: --force: hardware may be recommended although the model "
			      "is not trusted (the advice rows say forced):"),
		  "%s", out);
	cr_expect_gt(scratch_query(db, HARDWARE_ROWS), 0, "pools were sized: %s", out);
	cr_expect_eq(scratch_query(db, "SELECT count(*) FROM advice WHERE forced = 1"),
		     scratch_query(db, "SELECT count(*) FROM advice"));
}

/* Jobs a run of a 1-GPU-minute poisson workload submits, with overrides. */
static size_t arrivals(const char *const *sets, size_t n)
{
	char path[160];
	snprintf(path, sizeof path, "%s/g.yaml", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("name: g\nhorizon: 20h\n"
	      "pools: [{name: p, nodes: 4, gpu: A100-80GB, gpus_per_node: 8}]\n"
	      "workloads: [{name: w, gpus: 1, duration: 1m, arrival: {process: poisson, rate: "
	      "10/h}}]\n",
	      f);
	fclose(f);
	struct scenario *sc = NULL;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(scenario_load(path, sets, n, &sc, &err), GP_OK, "%s", err.msg);
	struct results r;
	results_init(&r);
	cr_assert_eq(run_simulate(sc, &r, &err), GP_OK, "%s", err.msg);
	size_t jobs = r.n_jobs;
	results_free(&r);
	scenario_free(sc);
	return jobs;
}

Test(trust, growth_doubling_a_poisson_rate_doubles_the_arrivals)
{
	const char *twice[] = {"growth=2"}, *half_span[] = {"growth=2", "horizon=10h"},
		   *base20[] = {"horizon=20h"};
	size_t base = arrivals(NULL, 0), grown = arrivals(twice, 1);
	/* The same draws at twice the rate come at half the gaps: 20 h at 2x
	 * holds what 40 h at 1x would, and 10 h at 2x exactly what 20 h at 1x. */
	cr_expect_eq(arrivals(half_span, 2), arrivals(base20, 1));
	cr_expect(base > 150 && base < 250, "about 200 in 20 h at 10/h: %zu", base);
	cr_expect(grown > 1.8 * (double)base && grown < 2.2 * (double)base, "%zu vs %zu", grown,
		  base);
}

/*
 * Issue 37's 14-node cluster (tests/fixtures/import14/make_fixtures.py):
 * H100, A100-40GB and L4 pools, fine-tune Jobs without a finished sibling,
 * 30 notebooks at 5% activity, a vLLM Deployment, last night's evals.  A
 * snapshot shows no service's span: the importer writes those durations as
 * placeholders, and advise ends in the refusal with its reasons, not in
 * more A100 nodes.
 */
Test(trust, a_snapshot_import_of_the_14_node_cluster_ends_in_the_refusal, .timeout = 120)
{
	char twin[160], args[600];
	snprintf(twin, sizeof twin, "%s/cluster.yaml", dir);
	snprintf(args, sizeof args,
		 "bin/gpuplan import --nodes tests/fixtures/import14/nodes.json --pods "
		 "tests/fixtures/import14/pods.json --dcgm tests/fixtures/import14/dcgm.prom -o %s",
		 twin);
	cr_assert_eq(capture(args, out, sizeof out), 0, "%s", out);
	cr_expect(strstr(out, "3 pools from 14 nodes"), "%s", out);
	snprintf(args, sizeof args, "bin/gpuplan check %s", twin);
	cr_assert_eq(capture(args, out, sizeof out), 0, "%s", out);
	cr_expect(strstr(out, "  placeholder: workloads[nb-user00-on-a100-40gb-0].duration = 24h "
			      "(not learned: a service, held for --horizon: a snapshot does not "
			      "show how long it runs)"),
		  "%s", out);
	cr_expect(strstr(out, "  placeholder: workloads[finetune-llama-c].duration = 24h (not "
			      "learned: no finished pod to learn from: --horizon)"),
		  "%s", out);
	cr_assert_eq(gpuplan("advise", twin), 0, "%s", out);
	cr_expect(strstr(out, REFUSED), "%s", out);
	cr_expect(strstr(out, "  - 31 workloads whose wait matters (a deadline, a goal of their "
			      "own, an inference server, a service or notebook) run on a "
			      "placeholder duration: vllm-llama-70b-on-h100-80gb-0, "
			      "nb-user00-on-a100-40gb-0, "),
		  "the vLLM Deployment and 30 notebooks: %s", out);
	cr_expect_not(strstr(out, "recommendation: pool"), "%s", out);
	cr_expect_eq(scratch_query(db, HARDWARE_ROWS), 0, "no pool was sized");
	/* Forced, the same model sizes the pools the findings name. */
	cr_assert_eq(gpuplan("advise", strcat(twin, " --force")), 0, "%s", out);
	cr_expect_gt(scratch_query(db, HARDWARE_ROWS), 0, "%s", out);
}
