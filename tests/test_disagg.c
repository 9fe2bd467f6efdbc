/*
 * test_disagg.c - disaggregated prefill and decode (sim/infer_disagg.c,
 * docs/inference.md "Disaggregated prefill and decode").
 *
 * The figures are worked by hand from the roofline of Llama-3-8B in fp16 on
 * an H100 (test_roofline.c checks its terms): 989 TFLOPS x 0.7 = 692.3 TFLOP/s,
 * 3.35 TB/s x 0.8 = 2.68 TB/s, 16.06 GB of weights, 131,072 B of KV a token,
 * 0.45 ms of step overhead.
 *   prefill of 1,000 tokens  (16.06e9 x 1,000 + 524,288 x 500,500) FLOPs
 *                            = 1.6322e13 / 6.923e14 = 23.577 ms + 0.45 = 24,027 us
 *   transfer at 10 GB/s + 100 us   1,000 x 131,072 B = 131.072 MB: 13,107 + 100
 *                            = 13,207 us
 *   the decode worker's first step: the last prompt token after 999 cached,
 *                            memory-bound: (16.06e9 + 1,000 x 131,072) B / 2.68e12
 *                            = 6.041 ms + 0.45 = 6,491 us
 *   decode steps at contexts 1,001 .. 1,010: 6,491, then 6,492 x 9 = 64,919 us
 * vLLM's proxy sends the request to a prefill instance with max_tokens = 1
 * and streams the decode instance's answer
 * (vllm-project/vllm benchmarks/disagg_benchmarks/disagg_prefill_proxy_server.py;
 * docs/features/disagg_prefill.md: kv_producer and kv_consumer), so the first
 * token a client sees is the decode worker's: TTFT = prefill + transfer +
 * that first step.  DistServe (OSDI '24) sizes the two phases under TTFT and
 * TPOT SLOs, as the searches of docs/inference.md do.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuplan/firstcut.h"
#include "gpuplan/infer.h"
#include "gpuplan/run.h"
#include "gpuplan/scenario.h"

#include "run_text.h"
#include "named_metric.h"

TestSuite(disagg, .init = run_text_init, .fini = run_text_fini);

static double metric(const char *name)
{
	double v = named_metric(&r, "chat", name);
	cr_assert(!isnan(v), "metric chat/%s present", name);
	return v;
}

/* n requests of `prompt` and `output` tokens arriving together. */
static void burst(int n, int prompt, int output)
{
	char text[1024] = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
	for (int i = 0; i < n; i++) {
		size_t len = strlen(text);
		snprintf(text + len, sizeof text - len, "2023-11-16 18:00:00.0000000,%d,%d\r\n",
			 prompt, output);
	}
	write_file("burst.csv", text);
}

/* Llama-3-8B on H100s, P prefill and D decode workers of one GPU, a link of
 * 10 GB/s and 100 us; EXTRA adds keys to the workload. */
#define DISAGG(p, d, extra)                                                               \
	"name: t\n"                                                                       \
	"pools: [{name: h, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}]\n"                \
	"workloads:\n"                                                                    \
	"  - {name: chat, kind: inference, model: llama-3-8b, " extra                     \
	"     disaggregated: {prefill: {replicas: " #p "}, decode: {replicas: " #d "},\n" \
	"                     link: {bandwidth: 10GB/s, latency: 100us}},\n"              \
	"     requests: {trace: burst.csv, format: azure}}\n"                             \
	"output: {requests: true}\n"

#define PREFILL_1000  24027 /* us, see the top */
#define TRANSFER_1000 13207
#define FIRST_STEP    6491
#define DECODE_10     64919

Test(disagg, a_lone_request_is_prefilled_sent_and_decoded)
{
	burst(1, 1000, 11);
	run(DISAGG(1, 1, "memory_fraction: 0.9,\n"));
	cr_assert_eq(r.n_requests, 1);
	const struct request_record *q = &r.requests[0];
	cr_assert_eq(q->status, REQUEST_COMPLETED);
	sim_time ttft = PREFILL_1000 + TRANSFER_1000 + FIRST_STEP; /* 43,725 us */
	cr_assert_eq(q->first_token - q->arrival, ttft, "ttft %lld",
		     (long long)(q->first_token - q->arrival));
	cr_assert_eq(q->done - q->arrival, ttft + DECODE_10, "e2e %lld",
		     (long long)(q->done - q->arrival));
	cr_assert_float_eq(metric("ttft_p50_s"), 0.043725, 1e-12);
	cr_assert_float_eq(metric("tpot_p50_s"), 0.064919 / 10, 1e-12);
	cr_assert_float_eq(metric("kv_transfer_p50_s"), 0.013207, 1e-12);
	cr_assert_float_eq(metric("kv_transfer_gb"), 0.131072, 1e-12);
	cr_assert_float_eq(metric("kv_transfers"), 1, 0);
	cr_assert_float_eq(metric("prefill_gpus"), 1, 0);
	cr_assert_float_eq(metric("decode_gpus"), 1, 0);
	cr_assert_float_eq(metric("requests_completed"), 1, 0);
	cr_assert_float_eq(metric("peak_allocated_gpus"), 2, 0);
	/* each role's GPU serves the whole run, in iterations for its own part */
	double span = sim_seconds(r.sim_end);
	cr_assert_float_eq(metric("prefill_duty_cycle_pct"), 100 * 0.024027 / span, 1e-9);
	cr_assert_float_eq(metric("decode_duty_cycle_pct"), 100 * (0.006491 + 0.064919) / span,
			   1e-9);
	cr_assert_float_eq(metric("prefill_gpu_hours"), span / 3600, 1e-12);
	cr_assert_float_eq(metric("prefill_cost") + metric("decode_cost"), metric("cost_total"),
			   1e-9);
}

Test(disagg, the_link_carries_one_transfer_at_a_time)
{
	burst(2, 1000, 11);
	run(DISAGG(1, 2, "memory_fraction: 0.9,\n"));
	cr_assert_eq(r.n_requests, 2);
	/* Both prompts fit the 2,048-token budget: one prefill iteration of
	 * 2 x 1.6322e13 FLOPs = 47.154 ms + 0.45 = 47,604 us.  The first KV
	 * arrives 13,207 us later, the second after it (the link is busy). */
	sim_time prefill = 47604;
	sim_time first[2] = {prefill + TRANSFER_1000 + FIRST_STEP,
			     prefill + 2 * TRANSFER_1000 + FIRST_STEP};
	for (int i = 0; i < 2; i++) {
		const struct request_record *q = &r.requests[i];
		cr_assert_eq(q->first_token - q->arrival, first[i], "request %d: ttft %lld", i,
			     (long long)(q->first_token - q->arrival));
		/* round robin: each on a decode worker of its own, decoding alone */
		cr_assert_eq(q->done - q->first_token, DECODE_10);
	}
	cr_assert_float_eq(metric("kv_transfer_mean_s"), (0.013207 + 0.026414) / 2, 1e-12);
	cr_assert_float_eq(metric("kv_transfer_gb"), 2 * 0.131072, 1e-12);
	cr_assert_float_eq(metric("decode_gpus"), 2, 0);
}

/* Both roles' servers hold exactly 100 KV blocks (1,600 tokens): vram =
 * weights + runtime + 100 x 16 x 128 KiB, as test_infer.c's hundred_blocks. */
static const char *hundred_blocks(char *buf, size_t len)
{
	double vram = 2 * catalog_model("llama-3-8b")->params + 2.0 * 1073741824 +
		      100 * 16 * 131072.0 + 1000;
	char extra[64];
	snprintf(extra, sizeof extra, "vram: %.0f,\n", vram);
	snprintf(buf, len, DISAGG(1, 1, "%s"), extra);
	return buf;
}

Test(disagg, a_decode_worker_admits_a_request_only_when_its_kv_cache_has_room)
{
	/* Each request takes 63 blocks (1,000 tokens) when admitted, 64 as its
	 * answer grows: one worker holds one at a time.  The prefill worker
	 * prefills them one after the other (24,027 us each); the first's KV
	 * arrives at 37,234, it decodes until 37,234 + 6,491 + 64,919 = 108,644.
	 * The second's arrives at 48,054 + 13,207 = 61,261 and waits for those
	 * blocks: its first token comes one step after the first's last. */
	char text[1024];
	burst(2, 1000, 11);
	run(hundred_blocks(text, sizeof text));
	cr_assert_eq(r.n_requests, 2);
	const struct request_record *a = &r.requests[0], *b = &r.requests[1];
	sim_time a_done = PREFILL_1000 + TRANSFER_1000 + FIRST_STEP + DECODE_10;
	cr_assert_eq(a->done - a->arrival, a_done, "%lld", (long long)(a->done - a->arrival));
	cr_assert_eq(b->first_token - b->arrival, a_done + FIRST_STEP, "%lld",
		     (long long)(b->first_token - b->arrival));
	cr_assert_eq(b->done - b->first_token, DECODE_10);
	cr_assert_float_eq(metric("kv_transfer_p50_s"), 0.013207, 1e-12); /* the link was free */
	/* the queue metric is the prefill workers': the second waited one prefill */
	cr_assert_float_eq(metric("request_queue_mean_s"), 0.024027 / 2, 1e-12);
}

Test(disagg, named_links_take_their_bandwidth_and_latency)
{
	/* InfiniBand NDR: 50 GB/s x 0.8 = 40 GB/s and 10 us, so 131.072 MB take
	 * 3,276.8 + 10 = 3,287 us; Ethernet: 10 GB/s and 20 us, 13,127 us;
	 * NVLink 4 of the H100: 450 GB/s x 0.8 = 360 GB/s and 8 us, 372 us. */
	static const struct {
		const char *link;
		double seconds;
	} cases[] = {{"infiniband", 0.003287}, {"ethernet", 0.013127}, {"nvlink", 0.000372}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		burst(1, 1000, 2);
		snprintf(
			text, sizeof text,
			"name: t\n"
			"pools: [{name: h, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}]\n"
			"workloads:\n"
			"  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9,\n"
			"     disaggregated: {prefill: {replicas: 1}, decode: {replicas: 1}, link: %s},\n"
			"     requests: {trace: burst.csv, format: azure}}\n",
			cases[i].link);
		results_free(&r);
		results_init(&r);
		scenario_free(sc);
		sc = NULL;
		run(text);
		cr_assert_float_eq(metric("kv_transfer_p50_s"), cases[i].seconds, 1e-12, "%s",
				   cases[i].link);
	}
}

Test(disagg, roles_take_their_own_tensor_parallel_and_batch)
{
	burst(1, 1000, 2);
	run("name: t\n"
	    "pools: [{name: h, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}]\n"
	    "workloads:\n"
	    "  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9,\n"
	    "     disaggregated: {prefill: {replicas: 2, gpus: 2}, decode: {replicas: 3, gpus: 1,\n"
	    "                     max_batch: 64}},\n"
	    "     requests: {trace: burst.csv, format: azure}}\n");
	const struct inference_spec *is = sc->workloads[0].inference;
	cr_assert_eq(is->disagg->prefill.gpus, 2);
	cr_assert_eq(is->disagg->decode.max_batch, 64);
	cr_assert_eq(is->disagg->prefill.max_batch, 256, "the workload's default");
	cr_assert_float_eq(metric("prefill_gpus"), 4, 0);
	cr_assert_float_eq(metric("decode_gpus"), 3, 0);
	cr_assert_float_eq(metric("peak_allocated_gpus"), 7, 0);
	/* each of the 2 TP GPUs sends its half of the KV: 65.536 MB at 40 GB/s */
	cr_assert_float_eq(metric("kv_transfer_p50_s"), 0.001638 + 0.00001, 1e-12);
	cr_assert_float_eq(metric("kv_transfer_gb"), 0.131072, 1e-12);
}

Test(disagg, a_disaggregated_run_is_deterministic)
{
	static const char *const sets[] = {"workloads.chat.requests.count=2000"};
	struct scenario *two[2];
	struct results x[2];
	struct gp_err err GP_ERR_SCOPE = {0};
	for (int k = 0; k < 2; k++) {
		results_init(&x[k]);
		cr_assert_eq(
			scenario_load("scenarios/inference-disagg.yaml", sets, 1, &two[k], &err),
			GP_OK, "%s", err.msg);
		cr_assert_eq(run_simulate(two[k], &x[k], &err), GP_OK);
	}
	cr_assert_eq(x[0].n_metrics, x[1].n_metrics);
	for (size_t i = 0; i < x[0].n_metrics; i++) {
		double u = x[0].metrics[i].value, v = x[1].metrics[i].value;
		cr_assert(u == v || (isnan(u) && isnan(v)), "%s/%s", x[0].metrics[i].scope,
			  x[0].metrics[i].name);
	}
	cr_assert_float_eq(named_metric(&x[0], "chat", "requests_completed"), 2000, 0);
	for (int k = 0; k < 2; k++) {
		results_free(&x[k]);
		scenario_free(two[k]);
	}
}

/* --- the first cut (firstcut_disagg.c) ------------------------------------------ */

static struct firstcut_service llama_on_h100(double rate, double sigma, double ttft, double tpot)
{
	double tail = ceil(firstcut_lognormal_quantile(1000, sigma, 99));
	return (struct firstcut_service){.model = catalog_model("llama-3-8b"),
					 .weights = QUANT_FP16,
					 .kv = QUANT_FP16,
					 .gpu = catalog_gpu("H100-80GB"),
					 .memory_fraction = 0.9,
					 .max_batch = 256,
					 .max_batched_tokens = 2048,
					 .rate = rate,
					 .prompt_mean = 1000,
					 .prompt_tail = tail,
					 .prompt_cv2 = exp(sigma * sigma) - 1,
					 .output_mean = 200,
					 .output_cv2 = exp(sigma * sigma) - 1,
					 .ttft_slo_s = ttft,
					 .tpot_slo_s = tpot,
					 .percentile = 99};
}

Test(disagg, the_first_cut_of_a_lone_request_adds_prefill_transfer_and_a_step_and_a_half)
{
	/* Fixed prompts of 1,000 tokens at 0.01 requests/s: no wait.  The prefill
	 * takes 24.027 ms (top of the file); InfiniBand sends 131.072 MB at 40 GB/s
	 * in 3.2768 ms + 10 us; a decode worker holds a Poisson number of
	 * sequences of mean 0.01 x 200 x t_d(256) ~ 0.04, at most 1 at p99
	 * (0.04 + 2.33 x 0.2 rounds up to 1): its step of one sequence at
	 * context 1,100 counts one and a half times. */
	struct firstcut_service s = llama_on_h100(0.01, 0, 0, 0);
	struct firstcut_disagg f;
	cr_assert_eq(firstcut_disagg_size(&s, 40e9, 10e-6, &f), FIRSTCUT_OK);
	struct roofline rf;
	roofline_init(&rf, s.model, QUANT_FP16, QUANT_FP16, s.gpu, NULL, GPU_SHARE_WHOLE, 1);
	cr_assert_eq(f.batch, 256);
	cr_assert_float_eq(f.prefill_tail_s, 0.024027071, 1e-9);
	cr_assert_float_eq(f.transfer_tail_s, 0.0032868, 1e-12);
	cr_assert_float_eq(f.wait_tail_s, 0, 0);
	cr_assert_float_eq(f.ttft_tail_s,
			   f.prefill_tail_s + f.transfer_tail_s +
				   1.5 * roofline_decode_time(&rf, 1, 1100),
			   1e-12);
	cr_assert_eq(f.prefill_replicas, 1);
	cr_assert_eq(f.decode_replicas, 1);
	cr_assert_eq(f.gpus, 2);
	/* nvlink: the H100's own, 450 GB/s x 0.8 and 8 us */
	cr_assert_eq(firstcut_disagg_size(&s, 0, 0, &f), FIRSTCUT_OK);
	cr_assert_float_eq(f.transfer_tail_s, 8e-6 + 131.072e6 / 360e9, 1e-12);
}

Test(disagg, the_first_cut_sizes_the_docs_example_as_the_searches_do)
{
	/* scenarios/inference-disagg.yaml: 30 requests/s, sigma 0.8, p99 TTFT <=
	 * 0.3 s and TPOT <= 10 ms.  The first cut says 2 prefill and 2 decode
	 * workers; the simulation holds both bounds there and misses one with a
	 * worker fewer of either role (docs/inference.md shows both searches). */
	struct firstcut_service s = llama_on_h100(30, 0.8, 0.3, 0.01);
	struct firstcut_disagg f;
	cr_assert_eq(firstcut_disagg_size(&s, 40e9, 10e-6, &f), FIRSTCUT_OK);
	cr_assert_eq(f.prefill_replicas, 2);
	cr_assert_eq(f.decode_replicas, 2);
	static const struct {
		const char *prefill, *decode;
		bool ttft, tpot;
	} cases[] = {{"2", "2", true, true}, {"1", "2", false, true}, {"2", "1", true, false}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char p[80], d[80];
		snprintf(p, sizeof p, "workloads.chat.disaggregated.prefill.replicas=%s",
			 cases[i].prefill);
		snprintf(d, sizeof d, "workloads.chat.disaggregated.decode.replicas=%s",
			 cases[i].decode);
		const char *sets[] = {p, d};
		struct gp_err err GP_ERR_SCOPE = {0};
		results_free(&r);
		results_init(&r);
		scenario_free(sc);
		sc = NULL;
		cr_assert_eq(scenario_load("scenarios/inference-disagg.yaml", sets, 2, &sc, &err),
			     GP_OK, "%s", err.msg);
		cr_assert_eq(run_simulate(sc, &r, &err), GP_OK);
		cr_assert_eq(metric("ttft_p99_s") <= 0.3, cases[i].ttft, "%s+%s: ttft %g",
			     cases[i].prefill, cases[i].decode, metric("ttft_p99_s"));
		cr_assert_eq(metric("tpot_p99_s") <= 0.01, cases[i].tpot, "%s+%s: tpot %g",
			     cases[i].prefill, cases[i].decode, metric("tpot_p99_s"));
	}
}
