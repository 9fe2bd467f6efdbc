/*
 * test_inference_scenarios.c - whole inference runs: one replica with
 * max_batch 1 is an M/D/1 queue (Pollaczek-Khinchine), the Azure trace
 * excerpt meets its SLO at its own speed and not at a high speedup, search
 * --max finds the boundary between the two, and the full trace (when
 * ../shared/data is there) does the same at scale.
 */
#include "gpuplan/roofline.h"
#include "gpuplan/infer.h"
#include "gpuplan/scenario.h"
#include "gpuplan/search.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"

#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "named_metric.h"

TestSuite(inference_scenarios, .fini = cleanup);

static double metric(const char *scope, const char *name)
{
	double v = named_metric(&r, scope, name);
	cr_assert(!isnan(v), "metric %s/%s present", scope, name);
	return v;
}

/* The deterministic service time of md1.yaml: prefill 512, then 7 decodes. */
static sim_time md1_service(void)
{
	struct roofline rf;
	roofline_init(&rf, catalog_model("llama-3-8b"), QUANT_FP16, QUANT_FP16,
		      catalog_gpu("H100-80GB"), NULL, GPU_SHARE_WHOLE, 1);
	sim_time d = infer_iteration_time(roofline_prefill_time(&rf, 512, 0));
	for (int i = 1; i < 8; i++)
		d += infer_iteration_time(roofline_decode_time(&rf, 1, 512 + i));
	return d;
}

/*
 * 40,000 requests through M/D/1 at utilization 0.7.  With max_batch 1 the
 * server takes one request at a time and each takes exactly D, so every
 * request's e2e is its wait plus D.  Pollaczek-Khinchine for deterministic
 * service: Wq = rho D / (2 (1 - rho)).  Waits are autocorrelated, so the
 * tolerance comes from the run itself: 20 batch means give a standard
 * error; the mean must lie within 4 of them (a false alarm about once in
 * 15,000 seeds) and within 10 % of the formula.
 */
Test(inference_scenarios, one_replica_with_max_batch_1_is_an_md1_queue, .timeout = 120)
{
	sim_time d = md1_service();
	const double rho = 0.7, D = sim_seconds(d), lambda = rho / D;
	char rate[64];
	snprintf(rate, sizeof rate, "workloads.md1.requests.rate=%.9f", lambda);
	const char *sets[] = {rate};
	run("tests/fixtures/md1.yaml", sets, 1);
	double wq = rho * D / (2 * (1 - rho));
	size_t n = r.n_requests, batches = 20, per = n / batches;
	cr_assert_eq(n, 40000);
	double means[20];
	for (size_t b = 0; b < batches; b++) {
		double s = 0;
		for (size_t i = b * per; i < (b + 1) * per; i++) {
			const struct request_record *q = &r.requests[i];
			cr_assert_eq(q->status, REQUEST_COMPLETED);
			cr_assert_geq(q->done - q->arrival, d, "no request is faster than D");
			s += sim_seconds(q->done - q->arrival - d);
		}
		means[b] = s / (double)per;
	}
	double mean = gsl_stats_mean(means, 1, batches);
	double se = gsl_stats_sd(means, 1, batches) / sqrt((double)batches);
	cr_assert(D > 0.05 && D < 0.07, "D = %.4f s", D); /* 8 steps of an H100 */
	cr_assert_lt(fabs(mean - wq), 4 * se, "mean wait %.4f s vs P-K %.4f s (se %.4f)", mean, wq,
		     se);
	cr_assert_lt(fabs(mean - wq) / wq, 0.10);
	/* The metric is the same wait (admission - arrival; no tokenizer here). */
	cr_assert_float_eq(metric("md1", "request_queue_mean_s"), mean, 1e-6);
	/* The server is busy rho of the time. */
	cr_assert_float_eq(metric("md1", "duty_cycle_pct"), 100 * rho, 2);
}

Test(inference_scenarios, the_azure_excerpt_meets_its_slo_at_its_own_speed)
{
	run("tests/fixtures/azure-replay.yaml", NULL, 0);
	cr_assert_float_eq(metric("chat", "requests_submitted"), 500, 0);
	cr_assert_float_eq(metric("chat", "requests_completed"), 500, 0);
	cr_assert_lt(metric("all", "ttft_p99_s"), 2);
	cr_assert_lt(metric("all", "tpot_p99_s"), 0.1);
	cr_assert_float_eq(metric("all", "slo_met"), 1, 0);
	cr_assert_float_eq(metric("chat", "slo_attainment_pct"), 100, 0);
	/* 500 requests in about 129 s. */
	double rps = metric("chat", "throughput_rps");
	cr_assert(rps > 3 && rps < 4.5, "%g requests/s", rps);
	cr_assert_str_eq(r.status, "ok");
}

Test(inference_scenarios, the_azure_excerpt_misses_its_slo_100_times_faster)
{
	const char *sets[] = {"workloads.chat.requests.speedup=100"};
	run("tests/fixtures/azure-replay.yaml", sets, 1);
	cr_assert_float_eq(metric("chat", "requests_completed"), 500, 0);
	cr_assert_gt(metric("all", "ttft_p99_s"), 2);
	cr_assert_float_eq(metric("all", "slo_met"), 0, 0);
	cr_assert_lt(metric("chat", "slo_attainment_pct"), 90);
}

Test(inference_scenarios, tiling_repeats_the_trace_after_its_span)
{
	const char *sets[] = {"workloads.chat.requests.repeat=3", "output.requests=true"};
	run("tests/fixtures/azure-replay.yaml", sets, 2);
	cr_assert_eq(r.n_requests, 1500);
	sim_time period = r.requests[500].arrival - r.requests[0].arrival;
	cr_assert_eq(r.requests[1000].arrival - r.requests[500].arrival, period);
	cr_assert_eq(r.requests[1499].arrival - r.requests[999].arrival, period);
	cr_assert_eq(r.requests[500].prompt_tokens, r.requests[0].prompt_tokens);
	/* 500 rows over about 129 s: the period is the span plus one mean gap. */
	sim_time span = r.requests[499].arrival - r.requests[0].arrival;
	cr_assert_eq(period, span + span / 499);
}

/*
 * A replica whose pool's window is shut at the start is placed when the
 * window opens (docs/inference.md: windows apply when a replica is placed).
 * The run starts at 08:00, the window at 09:00; placed then, the replica
 * loads 16.06 GB of Llama-3-8B FP16 weights at 2 GB/s, 8.03 s, so the first
 * request's first token comes a prefill after 3608.03 s.  Before, the
 * window's opening was never scheduled without batch work: the run stalled
 * with no request served.
 */
Test(inference_scenarios, a_replica_waits_for_its_pools_window)
{
	run("tests/fixtures/inference-window.yaml", NULL, 0);
	cr_assert_str_eq(r.status, "ok");
	cr_assert_eq(r.n_requests, 5);
	sim_time first = SIM_NEVER;
	for (size_t i = 0; i < r.n_requests; i++) {
		cr_assert_eq(r.requests[i].status, REQUEST_COMPLETED);
		cr_assert_lt(r.requests[i].arrival, 6 * SIM_SECOND, "all arrive by 08:00:06");
		first = r.requests[i].first_token < first ? r.requests[i].first_token : first;
	}
	double t = sim_seconds(first);
	cr_assert(t > 3608.03 && t < 3608.1, "first token at %.3f s", t);
}

/* search --max over the speedup finds the fastest replay that still meets
 * the TTFT bound; the probes on either side of it agree. */
Test(inference_scenarios, search_max_finds_the_fastest_replay_within_the_slo, .timeout = 120)
{
	char db[] = "/tmp/gpuplan-infer-search-XXXXXX";
	int fd = mkstemp(db);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(db);
	struct gp_err err GP_ERR_SCOPE = {0};
	struct store *st;
	cr_assert_eq(store_open(db, &st, &err), GP_OK, "%s", err.msg);
	static const char *const no_sets[1] = {NULL}; /* (memcpy from NULL is undefined) */
	struct search_spec spec = {.scenario = "tests/fixtures/azure-replay.yaml",
				   .sets = no_sets,
				   .key = "workloads.chat.requests.speedup",
				   .maximize = true,
				   .seeds = 1};
	cr_assert_eq(search_parse_value("1", &spec.lo, &err), GP_OK);
	cr_assert_eq(search_parse_value("100", &spec.hi, &err), GP_OK);
	cr_assert_eq(search_parse_condition("ttft_p99_s <= 2", &spec.until, &err), GP_OK);
	cr_assert_eq(search_check_range(&spec, &err), GP_OK, "%s", err.msg);
	struct search_answer ans;
	cr_assert_eq(search_run(&spec, st, NULL, NULL, &ans, &err), GP_OK, "%s", err.msg);
	store_close(st);
	unlink(db);
	cr_assert(ans.found);
	cr_assert(ans.first_run_id == 1 && ans.run_id >= 1 && ans.run_id <= ans.last_run_id);
	int k = atoi(ans.value);
	cr_assert(k > 1 && k < 100, "max speedup %s", ans.value);
	char set[64];
	snprintf(set, sizeof set, "workloads.chat.requests.speedup=%d", k);
	const char *at[] = {set};
	run("tests/fixtures/azure-replay.yaml", at, 1);
	cr_assert_leq(metric("all", "ttft_p99_s"), 2);
	cleanup();
	snprintf(set, sizeof set, "workloads.chat.requests.speedup=%d", k + 1);
	run("tests/fixtures/azure-replay.yaml", at, 1);
	cr_assert_gt(metric("all", "ttft_p99_s"), 2);
}

#define FULL_TRACE "../shared/data/azure-llm/AzureLLMInferenceTrace_conv.csv"

Test(inference_scenarios, the_full_conversation_trace_meets_the_slo_at_its_own_speed,
     .timeout = 120)
{
	if (access(FULL_TRACE, R_OK) != 0)
		cr_skip_test(
			"%s is absent (see docs/design.md: real traces live in ../shared/data)",
			FULL_TRACE);
	run("tests/fixtures/azure-conv-full.yaml", NULL, 0);
	cr_assert_float_eq(metric("chat", "requests_completed"), 19366, 0);
	cr_assert_float_eq(metric("all", "slo_met"), 1, 0);
	/* About 5.6 requests/s over 58 minutes, 211 generated tokens each. */
	double rps = metric("chat", "throughput_rps");
	cr_assert(rps > 5 && rps < 6, "%g requests/s", rps);
}

Test(inference_scenarios, the_full_conversation_trace_misses_the_slo_20_times_faster,
     .timeout = 120)
{
	if (access(FULL_TRACE, R_OK) != 0)
		cr_skip_test(
			"%s is absent (see docs/design.md: real traces live in ../shared/data)",
			FULL_TRACE);
	const char *sets[] = {"workloads.chat.requests.speedup=20"};
	run("tests/fixtures/azure-conv-full.yaml", sets, 1);
	cr_assert_float_eq(metric("all", "slo_met"), 0, 0);
	cr_assert_gt(metric("all", "ttft_p99_s"), 2);
}
