/*
 * test_route.c - routed services (docs/inference.md, "Routed fleets"): a
 * router by prompt length in front of groups of replicas on their own pools.
 *
 * The peer: inference-fleet-sim (arXiv 2603.16054; vllm-project/semantic-router,
 * src/fleet-sim) models a length-routed fleet as pools (PoolConfig: GPU, GPUs,
 * max_ctx) behind a LengthRouter (fleet_sim/routing/length_based.py: a request
 * with l_in + l_out <= threshold goes to the short pool, else to the long
 * one) and sweeps the threshold over the length CDF's breakpoints
 * (fleet_sim/optimizer/threshold.py, threshold_pareto: per B_short, n_s and
 * n_l, GPUs, cost, P99 TTFT of each pool, SLO met).  gpuplan routes on the
 * prompt (what a router in front of servers sees), simulates each group's
 * servers, and the sweep is a sweep file over workloads.S.router.threshold.
 *
 * Every figure here is exact: requests from a trace with fixed prompts, far
 * enough apart that each is alone on its replica, so a request's TTFT is its
 * prefill on its group's GPU, worked out from the roofline by hand.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuplan/estimate.h"
#include "gpuplan/infer.h"
#include "gpuplan/run.h"
#include "gpuplan/scenario.h"

#include "run_text.h"
#include "named_metric.h"

TestSuite(route, .init = run_text_init, .fini = run_text_fini);

static double metric(const char *scope, const char *name)
{
	double v = named_metric(&r, scope, name);
	cr_assert(!isnan(v), "metric %s/%s present", scope, name);
	return v;
}

/* Four requests 10 s apart (Azure trace rows), prompts 500, 3000, 800 and
 * 6000 tokens, two output tokens each. */
static const char trace[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
			    "2023-11-16 18:00:00.0000000,500,2\n"
			    "2023-11-16 18:00:10.0000000,3000,2\n"
			    "2023-11-16 18:00:20.0000000,800,2\n"
			    "2023-11-16 18:00:30.0000000,6000,2\n";

/* One L40S and one H100; chat is short (<= threshold) on the L40S, long on the H100. */
#define ROUTED(extra)                                                    \
	"name: t\n"                                                      \
	"pools:\n"                                                       \
	"  - {name: l40s, nodes: 1, gpu: L40S, gpus_per_node: 1}\n"      \
	"  - {name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}\n" \
	"workloads:\n"                                                   \
	"  - name: chat\n"                                               \
	"    kind: inference\n"                                          \
	"    model: llama-3-8b\n"                                        \
	"    memory_fraction: 0.9\n"                                     \
	"    requests: {trace: t.csv, format: azure}\n"                  \
	"    slo: {ttft: 1s}\n"                                          \
	"    router: {by: prompt_tokens, threshold: 2048}\n"             \
	"    groups:\n"                                                  \
	"      - {name: short, pool: l40s, replicas: 1" extra "}\n"      \
	"      - {name: long, pool: h100, replicas: 1}\n"                \
	"output: {requests: true}\n"

/* The time of a prefill chunk of c tokens after k cached ones, worked by hand
 * as in test_infer.c (step_times_match_rooflines_worked_by_hand): 2 x params
 * x c + 4 x 32 layers x 32 heads x 128 x (keys attended: c x k + c (c + 1) / 2)
 * FLOPs at 70 % of the GPU's BF16 peak, or the weights (2 x params) and the KV
 * cache read and written ((k + c) x 128 KiB) at 80 % of its bandwidth, the
 * longer of the two, plus the GPU's step overhead; to the microsecond. */
static double chunk_by_hand(double peak, double bw, double overhead, int c, int k,
			    bool *compute_bound)
{
	const struct model_arch *m = catalog_model("llama-3-8b");
	double keys = (double)c * k + (double)c * (c + 1) / 2;
	double compute = (2 * m->params * c + 4.0 * 32 * 32 * 128 * keys) / (peak * 0.7);
	double memory = (2 * m->params + (double)(k + c) * 131072) / (bw * 0.8);
	*compute_bound = compute > memory;
	return round((fmax(compute, memory) + overhead) * 1e6) / 1e6;
}

/* A prompt alone, in chunks of `budget` tokens. */
static double prefill_by_hand(double peak, double bw, double overhead, int prompt, int budget)
{
	double t = 0;
	bool compute_bound;
	for (int k = 0; k < prompt; k += budget) {
		int c = prompt - k < budget ? prompt - k : budget;
		t += chunk_by_hand(peak, bw, overhead, c, k, &compute_bound);
		cr_assert(compute_bound || c < 500, "a chunk of %d tokens is compute-bound", c);
	}
	return t;
}

/* L40S: 362 TFLOPS BF16 dense, 864 GB/s, 2 ms per step; H100: 989 TFLOPS,
 * 3,350 GB/s, 0.45 ms (docs/gpus.md, docs/inference.md "Step overhead"). */
static double l40s(int prompt) { return prefill_by_hand(362e12, 864e9, 2e-3, prompt, 2048); }
static double h100(int prompt) { return prefill_by_hand(989e12, 3350e9, 0.45e-3, prompt, 2048); }

/* The TTFT of request row i of workload w. */
static double row_ttft(int32_t w, uint32_t id)
{
	for (size_t i = 0; i < r.n_requests; i++)
		if (r.requests[i].workload == w && r.requests[i].request_id == id)
			return sim_seconds(r.requests[i].first_token - r.requests[i].arrival);
	cr_assert_fail("no request %u of workload %d", id, (int)w);
	return NAN;
}

Test(route, each_group_serves_the_prompts_of_its_range_on_its_pool)
{
	write_file("t.csv", trace);
	run_with(ROUTED(""), NULL, 0);
	cr_assert_eq(sc->n_workloads, 2);
	cr_assert_str_eq(sc->workloads[0].name, "chat-short");
	cr_assert_str_eq(sc->workloads[1].name, "chat-long");
	cr_assert_str_eq(sc->workloads[1].inference->service, "chat");
	/* 500 and 800 are <= 2048: short; 3000 and 6000: long */
	cr_assert_float_eq(metric("chat-short", "requests_completed"), 2, 0);
	cr_assert_float_eq(metric("chat-long", "requests_completed"), 2, 0);
	cr_assert_float_eq(metric("chat", "requests_completed"), 4, 0);
	cr_assert_float_eq(metric("all", "requests_completed"), 4, 0);
	/* each on its pool's GPU, alone: TTFT = its prefill there */
	cr_assert_float_eq(row_ttft(0, 0), l40s(500), 1e-9);
	cr_assert_float_eq(row_ttft(0, 1), l40s(800), 1e-9);
	cr_assert_float_eq(row_ttft(1, 0), h100(3000), 1e-9);
	cr_assert_float_eq(row_ttft(1, 1), h100(6000), 1e-9);
	/* About 34 ms for 500 tokens on the L40S, 154 ms for 6,000 on the H100. */
	cr_assert(l40s(500) > 0.033 && l40s(500) < 0.035, "%g", l40s(500));
	cr_assert(h100(6000) > 0.15 && h100(6000) < 0.16, "%g", h100(6000));
	double mean = (l40s(500) + l40s(800) + h100(3000) + h100(6000)) / 4;
	cr_assert_float_eq(metric("chat", "ttft_mean_s"), mean, 1e-9);
	cr_assert_float_eq(metric("chat-short", "ttft_mean_s"), (l40s(500) + l40s(800)) / 2, 1e-9);
	/* the service holds both groups' GPUs and their cost */
	cr_assert_float_eq(metric("chat-short", "peak_allocated_gpus"), 1, 0);
	cr_assert_float_eq(metric("chat", "peak_allocated_gpus"), 2, 0);
	cr_assert_float_eq(metric("chat", "cost_total"),
			   metric("chat-short", "cost_total") + metric("chat-long", "cost_total"),
			   1e-12);
	cr_assert_float_eq(metric("chat", "slo_attainment_pct"), 100, 0);
	cr_assert_float_eq(metric("chat", "slo_met"), 1, 0);
}

Test(route, the_threshold_is_a_plain_key_that_set_moves)
{
	write_file("t.csv", trace);
	const char *sets[] = {"workloads.chat.router.threshold=4096"};
	run_with(ROUTED(""), sets, 1);
	/* 3000 now goes short: three on the L40S, one on the H100 */
	cr_assert_float_eq(metric("chat-short", "requests_completed"), 3, 0);
	cr_assert_float_eq(metric("chat-long", "requests_completed"), 1, 0);
	cr_assert_float_eq(row_ttft(0, 1), l40s(3000), 1e-9);
	cr_assert_float_eq(row_ttft(1, 0), h100(6000), 1e-9);
	cr_assert(l40s(3000) > h100(3000) * 2, "the long prompt is slower on the L40S");
}

/* A group's own keys win over the service's: max_batched_tokens 512 on the
 * short group prefills 800 tokens in chunks of 512 + 288, the second one
 * memory-bound on the L40S (the weights stream in 23 ms, its FLOPs take 18). */
Test(route, a_groups_keys_override_the_services)
{
	write_file("t.csv", trace);
	run_with(ROUTED(", max_batched_tokens: 512"), NULL, 0);
	cr_assert_eq(sc->workloads[0].inference->max_batched_tokens, 512);
	cr_assert_eq(sc->workloads[1].inference->max_batched_tokens, 2048);
	bool first_bound, second_bound;
	double t = chunk_by_hand(362e12, 864e9, 2e-3, 512, 0, &first_bound) +
		   chunk_by_hand(362e12, 864e9, 2e-3, 288, 512, &second_bound);
	cr_assert(first_bound && !second_bound);
	cr_assert_float_eq(row_ttft(0, 1), t, 1e-9);
	cr_assert_float_eq(row_ttft(1, 0), h100(3000), 1e-9); /* the long group's own budget */
}

/* advise's fixes name a group by its workload's name: workloads.chat-short.KEY
 * is workloads.chat.groups.short.KEY. */
Test(route, a_group_is_also_set_by_its_workloads_name)
{
	write_file("t.csv", trace);
	const char *sets[] = {"workloads.chat-short.replicas=3", "workloads.chat-long.gpus=1"};
	run_with(ROUTED(""), sets, 2);
	cr_assert_eq(sc->workloads[0].inference->replicas, 3);
	cr_assert_float_eq(metric("chat-short", "peak_allocated_gpus"), 1, 0); /* one L40S */
	cr_assert_str_eq(sc->params[0].key, "workloads.chat-short.replicas");
}

/* The groups draw the service's one stream: routed or not, the same seed
 * gives the same requests, split exactly by the threshold. */
Test(route, the_groups_partition_the_services_one_stream)
{
	static const char plain[] =
		"name: t\n"
		"pools: [{name: l40s, nodes: 1, gpu: L40S, gpus_per_node: 2}, "
		"{name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}]\n"
		"workloads:\n"
		"  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9, "
		"requests: {process: poisson, rate: 4/s, count: 300, prompt_tokens: {dist: "
		"lognormal, mean: 1000, sigma: 1}, output_tokens: 20}%s}\n"
		"output: {requests: true}\n";
	char text[1024];
	snprintf(text, sizeof text, plain, "");
	run_with(text, NULL, 0);
	size_t n = r.n_requests;
	cr_assert_eq(n, 300);
	int64_t *arrival = calloc(n, sizeof *arrival), short_n = 0;
	int32_t *prompt = calloc(n, sizeof *prompt);
	for (size_t i = 0; i < n; i++) {
		arrival[i] = r.requests[i].arrival;
		prompt[i] = r.requests[i].prompt_tokens;
		short_n += prompt[i] <= 1500;
	}
	results_free(&r);
	results_init(&r);
	scenario_free(sc);
	snprintf(text, sizeof text, plain,
		 ", router: {threshold: 1500}, groups: [{name: short, pool: l40s, replicas: 2}, "
		 "{name: long, pool: h100}]");
	run_with(text, NULL, 0);
	cr_assert_eq(r.n_requests, n);
	cr_assert_float_eq(metric("chat-short", "requests_submitted"), (double)short_n, 0);
	cr_assert_float_eq(metric("chat-long", "requests_submitted"), (double)(300 - short_n), 0);
	cr_assert_float_eq(metric("chat", "requests_submitted"), 300, 0);
	cr_assert(short_n > 150 && short_n < 300, "%lld short", (long long)short_n);
	/* the rows of both groups are the plain run's requests, in its order */
	size_t k[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		int g = prompt[i] <= 1500 ? 0 : 1;
		size_t at = g ? (size_t)short_n + k[1] : k[0];
		k[g]++;
		cr_assert_eq(r.requests[at].workload, g);
		cr_assert_eq(r.requests[at].arrival, arrival[i]);
		cr_assert_eq(r.requests[at].prompt_tokens, prompt[i]);
	}
	free(arrival);
	free(prompt);
	cr_assert_float_eq(metric("chat", "peak_allocated_gpus"), 3, 0);
}

/* --- bad input: file:line:col, what was expected --------------------------------- */

static void fails_with(const char *text, const char *set, const char *msg)
{
	char p[160], want[512];
	struct gp_err err GP_ERR_SCOPE = {0};
	write_file("t.csv", trace);
	write_file("s.yaml", text);
	snprintf(p, sizeof p, "%s/s.yaml", dir);
	const char *sets[] = {set};
	cr_assert_eq(scenario_load(p, sets, set ? 1 : 0, &sc, &err), GP_EINPUT, "%s", text);
	cr_assert_null(sc);
	snprintf(want, sizeof want, msg, p);
	cr_assert_str_eq(err.msg, want);
}

/* The service of ROUTED with its router and groups lines replaced. */
#define SERVICE(router, groups)                                          \
	"name: t\n"                                                      \
	"pools:\n"                                                       \
	"  - {name: l40s, nodes: 1, gpu: L40S, gpus_per_node: 1}\n"      \
	"  - {name: h100, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}\n" \
	"workloads:\n"                                                   \
	"  - name: chat\n"                                               \
	"    kind: inference\n"                                          \
	"    model: llama-3-8b\n"                                        \
	"    requests: {trace: t.csv, format: azure}\n" router groups

#define TWO_GROUPS "    groups: [{name: short, pool: l40s}, {name: long, pool: h100}]\n"
#define ROUTER     "    router: {threshold: 2048}\n"

Test(route, bad_routers_and_groups_are_located)
{
	fails_with(SERVICE(ROUTER, "    groups: [{name: short, pool: l40}, {name: long}]\n"), NULL,
		   "%s:11:34: error: unknown pool 'l40'; did you mean 'l40s'?");
	fails_with(SERVICE("    router: {threshold: [1024, 4096]}\n", TWO_GROUPS), NULL,
		   "%s:10:25: error: router.threshold has 2 values for 2 groups; expected 1, the "
		   "longest prompt of each group but the last");
	fails_with(SERVICE("    router: {threshold: [4096, 1024]}\n",
			   "    groups: [{name: a}, {name: b}, {name: c}]\n"),
		   NULL,
		   "%s:10:32: error: router.threshold 1024 is not above 4096; expected ascending "
		   "thresholds, one range of prompts per group");
	fails_with(SERVICE("    router: {threshold: 0}\n", TWO_GROUPS), NULL,
		   "%s:10:25: error: invalid router.threshold '0'; expected a whole number from 1 "
		   "to 1000000000");
	fails_with(SERVICE("    router: {by: output_tokens, threshold: 2048}\n", TWO_GROUPS), NULL,
		   "%s:10:18: error: invalid router.by 'output_tokens'; expected prompt_tokens "
		   "(the router sees a request's prompt, not its answer)");
	fails_with(SERVICE("", TWO_GROUPS), NULL,
		   "%s:10:13: error: groups need a router; expected router: {by: prompt_tokens, "
		   "threshold: 4096} (or threshold: [2048, 8192] for three groups) beside them");
	fails_with(SERVICE(ROUTER, ""), NULL,
		   "%s:10:13: error: router applies to a service with groups; expected groups: a "
		   "list of two or more groups like [{name: short, pool: l40s, replicas: 4}, "
		   "{name: long, pool: h100, replicas: 2}] beside it");
	fails_with(SERVICE(ROUTER, "    groups: [{name: only}]\n"), NULL,
		   "%s:11:13: error: groups has 1 group; expected a list of two or more groups "
		   "like [{name: short, pool: l40s, replicas: 4}, {name: long, pool: h100, "
		   "replicas: 2}], one per range of prompts");
	fails_with(SERVICE(ROUTER, "    groups: [{name: a}, {name: a}]\n"), NULL,
		   "%s:11:32: error: duplicate group name 'a' (first defined at line 11, column "
		   "21); expected unique names");
	fails_with(SERVICE(ROUTER, "    groups: [{name: a, slo: {ttft: 1s}}, {name: b}]\n"), NULL,
		   "%s:11:24: error: slo belongs to the service, not to a group; expected it "
		   "beside groups:");
	/* a group's workload keys are checked where the group writes them */
	fails_with(SERVICE(ROUTER, "    groups: [{name: a, replica: 2}, {name: b}]\n"), NULL,
		   "%s:11:24: error: unknown key 'replica' in workload; did you mean 'replicas'?");
	fails_with(SERVICE(ROUTER,
			   "    groups: [{name: a, pool: l40s, node_selector: x}, {name: b}]\n"),
		   NULL,
		   "%s:11:51: error: invalid node_selector 'x'; expected a map like "
		   "{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}");
	/* disaggregated serving is per service, not per group (docs/inference.md, Limits) */
	fails_with(SERVICE(ROUTER, "    groups: [{name: a, disaggregated: {prefill: {replicas: 1}, "
				   "decode: {replicas: 1}}}, {name: b}]\n"),
		   NULL,
		   "%s:11:39: error: a routed service's groups are not disaggregated; expected "
		   "replicas: N in each group, or a service without groups:");
	/* --set names groups as list items: an unknown one is refused */
	fails_with(SERVICE(ROUTER, TWO_GROUPS), "workloads.chat.groups.medium.replicas=2",
		   "--set workloads.chat.groups.medium.replicas=2:1:23: error: no item named "
		   "'medium' in workloads.chat.groups; expected one of short, long");
}

/* --- the first cut of a routed service (estimate --route) ------------------------- */

/*
 * Lognormal prompts of mean 1,000 and sigma 1: mu = ln 1000 - 1/2 = 6.4078,
 * so the median is 607 tokens.  Up to 2,048 tokens: z = (ln 2048 - mu) / 1 =
 * 1.2168, Phi(z) = 0.8882 of the requests; their mean is 1000 x Phi(z - 1) /
 * 0.8882 = 1000 x 0.5858 / 0.8882 = 659.6 tokens (a lognormal's partial
 * expectation), and the rest's 1000 x (1 - 0.5858) / 0.1118 = 3,703.5.  The
 * long group's p99 is the quantile 0.8882 + 0.99 x 0.1118 = 0.99889 of all
 * prompts: exp(mu + 3.0604) = 12,896 tokens.
 */
Test(route, the_first_cut_splits_the_prompt_distribution_at_the_threshold)
{
	struct estimate_traffic t = {.rate = 20,
				     .prompt_mean = 1000,
				     .prompt_sigma = 1,
				     .output_mean = 200,
				     .output_sigma = 1,
				     .ttft_s = 1,
				     .percentile = 99};
	struct estimate_group g[ESTIMATE_MAX_GROUPS];
	size_t n = 0;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(estimate_route_groups(&t, "L40S:2048,H100-80GB", g, &n, &err), GP_OK, "%s",
		     err.msg);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(g[0].gpu->name, "L40S");
	cr_assert_float_eq(g[0].share, 0.8882, 1e-4);
	cr_assert_float_eq(g[1].share, 0.1118, 1e-4);
	cr_assert_float_eq(g[0].prompt_mean, 659.6, 0.1);
	cr_assert_float_eq(g[1].prompt_mean, 3703.5, 0.1);
	cr_assert_float_eq(g[1].prompt_tail, 12896, 5);
	/* the groups' shares and means add up to the whole distribution */
	cr_assert_float_eq(g[0].share + g[1].share, 1, 1e-12);
	cr_assert_float_eq(g[0].share * g[0].prompt_mean + g[1].share * g[1].prompt_mean, 1000,
			   1e-9);
	/* three groups: the middle one takes (2048, 8192] */
	cr_assert_eq(estimate_route_groups(&t, "L4:2048,L40S:8192,H100-80GB", g, &n, &err), GP_OK);
	cr_assert_eq(n, 3);
	cr_assert_float_eq(g[0].share + g[1].share + g[2].share, 1, 1e-12);
	static const char *const bad[][2] = {
		{"L40S:2048",
		 "--route L40S:2048: expected two to 8 groups, the last without a "
		 "bound; like GPU:MAX,...,GPU like L40S:2048,H100-80GB (the last group "
		 "takes the rest)"},
		{"L40S:4096,H100-80GB:2048,B200",
		 "--route L40S:4096,H100-80GB:2048,B200: '2048' is not a whole number of tokens "
		 "above the previous group's; expected GPU:MAX,...,GPU like L40S:2048,H100-80GB "
		 "(the last group takes the rest)"},
		{"L40:2048,H100-80GB",
		 "--route L40:2048,H100-80GB: 'L40' is not a catalog GPU type"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cr_assert_eq(estimate_route_groups(&t, bad[i][0], g, &n, &err), GP_EINPUT);
		cr_assert_str_eq(err.msg, bad[i][1]);
	}
}
