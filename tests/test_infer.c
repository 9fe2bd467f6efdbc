/*
 * test_infer.c - the inference server model (infer.h) on small runs whose
 * every figure can be computed by hand: a lone request's latency is its
 * prefill plus its decode steps, to the microsecond (plain, chunked,
 * tokenized, tensor-parallel, on a MIG slice); step times against rooflines
 * worked out here; the server's memory and KV capacity for every model x GPU
 * x quantization and each sharing mode; admission by KV blocks, preemption
 * and rejection; activity at low load; routing and autoscaling.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuplan/infer.h"
#include "gpuplan/scenario.h"
#include "gpuplan/run.h"
#include "gpuplan/store.h"

#include <sqlite3.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "run_text.h"
#include "named_metric.h"

TestSuite(infer, .init = run_text_init, .fini = run_text_fini);

static double metric(const char *scope, const char *name)
{
	double v = named_metric(&r, scope, name);
	cr_assert(!isnan(v), "metric %s/%s present", scope, name);
	return v;
}

/* One Llama-3-8B replica on one H100; WORKLOAD adds keys to the workload. */
#define ONE_H100(pool_extra, workload_extra, requests)                                   \
	"name: t\n"                                                                      \
	"pools: [{name: p, nodes: 1, gpu: H100-80GB, gpus_per_node: 2" pool_extra "}]\n" \
	"workloads:\n"                                                                   \
	"  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9, "    \
	"requests: " requests workload_extra "}\n"                                       \
	"output: {requests: true}\n"

#define ONE_REQUEST(prompt, output)                                       \
	"{process: poisson, rate: 1/s, count: 1, prompt_tokens: " #prompt \
	", output_tokens: " #output "}"

static const struct model_arch *llama3(void) { return catalog_model("llama-3-8b"); }

static struct roofline roof_of(const char *gpu, struct gpu_share share, int tp)
{
	struct roofline rf;
	roofline_init(&rf, llama3(), QUANT_FP16, QUANT_FP16, catalog_gpu(gpu), NULL, share, tp);
	return rf;
}

/* Prefill of `prompt` in chunks of `budget` tokens, then output-1 decode steps. */
static void expected_latency(const struct roofline *rf, int prompt, int output, int budget,
			     sim_time *ttft, sim_time *e2e)
{
	*ttft = 0;
	for (int done = 0; done < prompt; done += budget) {
		int chunk = prompt - done < budget ? prompt - done : budget;
		*ttft += infer_iteration_time(roofline_prefill_time(rf, chunk, done));
	}
	*e2e = *ttft;
	for (int i = 1; i < output; i++)
		*e2e += infer_iteration_time(roofline_decode_time(rf, 1, prompt + i));
}

static void assert_one_request(sim_time ttft, sim_time e2e)
{
	cr_assert_eq(r.n_requests, 1);
	const struct request_record *q = &r.requests[0];
	cr_assert_eq(q->status, REQUEST_COMPLETED);
	cr_assert_eq(q->first_token - q->arrival, ttft, "ttft %lld vs %lld",
		     (long long)(q->first_token - q->arrival), (long long)ttft);
	cr_assert_eq(q->done - q->arrival, e2e, "e2e %lld vs %lld",
		     (long long)(q->done - q->arrival), (long long)e2e);
}

Test(infer, a_lone_request_takes_its_prefill_plus_its_decode_steps)
{
	run(ONE_H100("", "", ONE_REQUEST(700, 50)));
	struct roofline rf = roof_of("H100-80GB", GPU_SHARE_WHOLE, 1);
	sim_time ttft, e2e;
	expected_latency(&rf, 700, 50, 2048, &ttft, &e2e);
	assert_one_request(ttft, e2e);
	cr_assert_float_eq(metric("chat", "ttft_p50_s"), sim_seconds(ttft), 1e-12);
	cr_assert_float_eq(metric("chat", "e2e_p99_s"), sim_seconds(e2e), 1e-12);
	cr_assert_float_eq(metric("chat", "tpot_p50_s"), sim_seconds(e2e - ttft) / 49, 1e-12);
	cr_assert_float_eq(metric("all", "requests_completed"), 1, 0);
	/* Energy (docs/gpus.md): the H100 held at 145 W from time 0 to the end,
	 * plus 700 - 145 W while its iterations run, back to back for e2e. */
	double joules = 145 * sim_seconds(r.sim_end) + 555 * sim_seconds(e2e);
	cr_assert_float_eq(metric("chat", "energy_kwh"), joules / 3.6e6, 1e-12);
	cr_assert_float_eq(metric("chat", "tokens_per_joule"), 50 / joules, 1e-12);
	cr_assert_float_eq(metric("chat", "energy_per_1k_tokens_wh"), joules / 3600 / 50 * 1000,
			   1e-9);
	cr_assert_float_eq(metric("all", "energy_per_verified_result_wh"), joules / 3600, 1e-9);
}

Test(infer, a_long_prompt_is_prefilled_in_chunks_of_the_token_budget)
{
	run(ONE_H100("", "", ONE_REQUEST(5000, 3)));
	struct roofline rf = roof_of("H100-80GB", GPU_SHARE_WHOLE, 1);
	sim_time ttft, e2e;
	expected_latency(&rf, 5000, 3, 2048, &ttft, &e2e); /* 2048 + 2048 + 904 */
	assert_one_request(ttft, e2e);
}

Test(infer, tokenization_adds_its_cpu_time_before_the_prefill)
{
	run(ONE_H100("", ", tokenize: 3ms", ONE_REQUEST(300, 4)));
	struct roofline rf = roof_of("H100-80GB", GPU_SHARE_WHOLE, 1);
	sim_time ttft, e2e;
	expected_latency(&rf, 300, 4, 2048, &ttft, &e2e);
	assert_one_request(ttft + 3000, e2e + 3000);
}

Test(infer, tensor_parallel_replicas_step_on_the_tp_roofline)
{
	run(ONE_H100("", ", tensor_parallel: 2", ONE_REQUEST(1000, 20)));
	struct roofline rf = roof_of("H100-80GB", GPU_SHARE_WHOLE, 2);
	sim_time ttft, e2e;
	expected_latency(&rf, 1000, 20, 2048, &ttft, &e2e);
	assert_one_request(ttft, e2e);
	cr_assert_float_eq(metric("chat", "peak_allocated_gpus"), 2, 0);
}

Test(infer, a_mig_slice_gives_its_compute_and_bandwidth_share)
{
	run(ONE_H100(", sharing: {mode: mig, layout: [3g.40gb, 3g.40gb]}", ", gpus: {mig: 3g.40gb}",
		     ONE_REQUEST(1000, 20)));
	/* An H100's 3g instance has 60 of its 132 SMs (nvidia-smi mig -lgip on
	 * H100-SXM5-80GB; NVIDIA MIG User Guide, "Supported MIG Profiles"). */
	struct roofline rf = roof_of("H100-80GB", (struct gpu_share){60.0 / 132, 4.0 / 8}, 1);
	sim_time ttft, e2e;
	expected_latency(&rf, 1000, 20, 2048, &ttft, &e2e);
	assert_one_request(ttft, e2e);
}

/*
 * Step times by hand, Llama-3-8B FP16 on an H100 (989 TFLOPS BF16 at 70 %,
 * 3,350 GB/s at 80 %, 0.45 ms per iteration, roofline.c): the prefill of 1,000 tokens is
 * compute-bound, FLOPs = 2 x params x 1000 + 4 x 32 layers x 32 heads x 128
 * x (1000 x 1001 / 2) keys; the decode of the second token reads the
 * weights and 1,000 cached tokens and writes one, 128 KiB each.
 */
Test(infer, step_times_match_rooflines_worked_by_hand)
{
	run(ONE_H100("", "", ONE_REQUEST(1000, 2)));
	const struct model_arch *m = llama3();
	double kv = 2.0 * 32 * 8 * 128 * 2; /* bytes per token */
	cr_assert_float_eq(kv, 131072, 0);
	double flops = 2 * m->params * 1000 + 4.0 * 32 * 32 * 128 * (1000.0 * 1001 / 2);
	double prefill = flops / (989e12 * 0.7) + 0.45e-3;
	double bytes = 2 * m->params + 1001 * kv;
	double decode = bytes / (3350e9 * 0.8) + 0.45e-3;
	cr_assert_gt(flops / (989e12 * 0.7), (2 * m->params + 1000 * kv) / (3350e9 * 0.8),
		     "the prefill is compute-bound");
	const struct request_record *q = &r.requests[0];
	cr_assert_float_eq(sim_seconds(q->first_token - q->arrival), prefill, 0.6e-6);
	cr_assert_float_eq(sim_seconds(q->done - q->first_token), decode, 0.6e-6);
	/* About 24 ms and 6.5 ms. */
	cr_assert(prefill > 0.023 && prefill < 0.025, "%g", prefill);
	cr_assert(decode > 0.006 && decode < 0.007, "%g", decode);
}

/* step_overhead: the server's fixed time per iteration in place of the GPU
 * type's (docs/inference.md): the same request with 2 ms, the overhead of
 * vLLM before 0.6, takes 1.55 ms more in each of its two steps. */
Test(infer, step_overhead_replaces_the_gpus_default)
{
	run(ONE_H100("", ", step_overhead: 2ms", ONE_REQUEST(1000, 2)));
	const struct model_arch *m = llama3();
	double flops = 2 * m->params * 1000 + 4.0 * 32 * 32 * 128 * (1000.0 * 1001 / 2);
	double bytes = 2 * m->params + 1001 * 131072.0;
	const struct request_record *q = &r.requests[0];
	cr_assert_float_eq(sim_seconds(q->first_token - q->arrival), flops / (989e12 * 0.7) + 2e-3,
			   0.6e-6);
	cr_assert_float_eq(sim_seconds(q->done - q->first_token), bytes / (3350e9 * 0.8) + 2e-3,
			   0.6e-6);
}

/* --- memory and KV capacity ------------------------------------------------ */

static struct pool_spec pool_of(const struct gpu_type *g, enum sharing_mode mode, int replicas)
{
	struct pool_spec p = {0};
	p.gpu = g;
	p.nodes = 1;
	p.gpus_per_node = 1;
	p.sharing.mode = mode;
	p.sharing.replicas = replicas;
	return p;
}

static int64_t hand_blocks(double memory, const struct model_arch *m, enum quant q, int tp)
{
	/* quantized: the embedding and lm_head (vocab x hidden each) stay 16-bit */
	double kept = footprint_quant_weight_bytes(q) < 2 ? 2.0 * m->vocab * m->hidden : 0;
	double weights = ((m->params - kept) * footprint_quant_weight_bytes(q) + kept * 2) / tp;
	int heads = (m->kv_heads + tp - 1) / tp;
	double per_token = 2.0 * m->layers * heads * m->head_dim *
			   footprint_quant_kv_bytes(footprint_quant_default_kv(q));
	double left = memory - weights - 2.0 * 1024 * 1024 * 1024;
	return left > 0 ? (int64_t)floor(left / (16 * per_token)) : 0;
}

/* Every model x GPU x quantization on a whole GPU at memory_fraction 0.9:
 * the KV blocks left after weights and overhead, and how many sequences of
 * 2,048 tokens (128 blocks) fit at once. */
Test(infer, kv_capacity_and_sequences_for_every_model_gpu_and_quantization)
{
	int checked = 0, fits = 0;
	for (size_t mi = 0; mi < catalog_model_count(); mi++) {
		const struct model_arch *m = catalog_model_at(mi);
		for (size_t gi = 0; gi < catalog_gpu_count(); gi++) {
			const struct gpu_type *g = catalog_gpu_at(gi);
			for (int q = 0; q < QUANT_COUNT; q++) {
				struct inference_spec is = {
					.memory_fraction = 0.9,
					.tensor_parallel = 1,
					.kv_cache = footprint_quant_default_kv((enum quant)q),
					.max_batch = 256,
					.context = 2048};
				struct workload_spec w = {.model = m,
							  .quantization = q,
							  .inference = &is,
							  .request = REQUEST_GPUS,
							  .gpus = 1};
				struct pool_spec p = pool_of(g, SHARING_EXCLUSIVE, 1);
				double memory = infer_server_memory(&p, &w);
				cr_assert_float_eq(memory, 0.9 * g->memory_bytes, 1e-3);
				struct footprint fp;
				footprint_compute(m, (enum quant)q,
						  footprint_quant_default_kv((enum quant)q), 1,
						  memory, &fp);
				int64_t blocks = hand_blocks(memory, m, (enum quant)q, 1);
				cr_assert_eq(fp.kv_blocks, blocks, "%s %s %s", m->name, g->name,
					     footprint_quant_name((enum quant)q));
				cr_assert_eq(footprint_max_sequences(&fp, 2048), blocks / 128);
				checked++;
				fits += blocks >= 128;
			}
		}
	}
	cr_assert_eq(checked, (int)(catalog_model_count() * catalog_gpu_count() * QUANT_COUNT));
	cr_assert(fits > 0 && fits < checked, "some fit, some do not (%d of %d)", fits, checked);
}

Test(infer, a_known_case_llama_3_8b_fp16_on_an_h100)
{
	/* 0.9 x 80 GiB - 16.06 GB - 2 GiB = 55.04 GiB of KV: 28,181 blocks of
	 * 2 MiB, 220 sequences of 2,048 tokens. */
	struct inference_spec is = {.memory_fraction = 0.9,
				    .tensor_parallel = 1,
				    .kv_cache = QUANT_FP16,
				    .max_batch = 256,
				    .context = 2048};
	struct workload_spec w = {.model = llama3(),
				  .quantization = QUANT_FP16,
				  .inference = &is,
				  .request = REQUEST_GPUS,
				  .gpus = 1};
	struct pool_spec p = pool_of(catalog_gpu("H100-80GB"), SHARING_EXCLUSIVE, 1);
	struct footprint fp;
	footprint_compute(llama3(), QUANT_FP16, QUANT_FP16, 1, infer_server_memory(&p, &w), &fp);
	/* 0.9 x NVML's 81,559 MiB - 2 GiB - 16.06 GB over 16 x 128 KiB blocks */
	cr_assert_eq(fp.kv_blocks, hand_blocks(0.9 * 81559 * 1048576.0, llama3(), QUANT_FP16, 1));
	cr_assert_eq(fp.kv_blocks, 28019);
	cr_assert_eq(footprint_max_sequences(&fp, 2048), 218);
}

Test(infer, server_memory_follows_the_unit_of_each_sharing_mode)
{
	const struct gpu_type *h100 = catalog_gpu("H100-80GB");
	struct inference_spec is = {.memory_fraction = 0.9,
				    .tensor_parallel = 1,
				    .kv_cache = QUANT_FP16,
				    .max_batch = 16,
				    .context = 1000};
	struct workload_spec w = {.model = llama3(),
				  .quantization = QUANT_INT8,
				  .inference = &is,
				  .request = REQUEST_GPUS,
				  .gpus = 1};
	struct pool_spec p = pool_of(h100, SHARING_MPS, 4);
	cr_assert_float_eq(infer_server_memory(&p, &w), 0.9 * h100->memory_bytes / 4, 1);
	struct gpu_share s = infer_unit_share(&p, &w);
	cr_assert_float_eq(s.compute, 0.25, 0);
	cr_assert_float_eq(s.bandwidth, 1, 0);
	/* Time-slicing isolates nothing: the fraction is of the whole GPU. */
	p = pool_of(h100, SHARING_TIME_SLICING, 4);
	cr_assert_float_eq(infer_server_memory(&p, &w), 0.9 * h100->memory_bytes, 1);
	s = infer_unit_share(&p, &w);
	cr_assert_float_eq(s.compute, 1, 0);
	/* A MIG instance: its memory, its SMs (2g on an H100: 32 of 132) and
	 * memory_slices/8 of the bandwidth. */
	const struct mig_profile *mig = catalog_mig_profile(h100, "2g.20gb");
	p = pool_of(h100, SHARING_MIG, 1);
	p.sharing.layout = &mig;
	p.sharing.n_layout = 1;
	w.request = REQUEST_MIG;
	w.mig_profile = "2g.20gb";
	cr_assert_float_eq(infer_server_memory(&p, &w), 0.9 * mig->memory_bytes, 1);
	s = infer_unit_share(&p, &w);
	cr_assert_float_eq(s.compute, 32.0 / 132, 1e-15);
	cr_assert_float_eq(s.bandwidth, 2.0 / 8, 1e-15);
	/* A fractional share: milli/1000 of memory and SMs. */
	p = pool_of(h100, SHARING_FRACTIONAL, 1);
	w.request = REQUEST_MILLI;
	w.milli = 250;
	cr_assert_float_eq(infer_server_memory(&p, &w), 0.9 * 0.25 * h100->memory_bytes, 1);
	cr_assert_float_eq(infer_unit_share(&p, &w).compute, 0.25, 0);
	/* Without memory_fraction: weights, overhead and max_batch typical requests. */
	is.memory_fraction = 0;
	p = pool_of(h100, SHARING_EXCLUSIVE, 1);
	w.request = REQUEST_GPUS;
	/* int8 weights: 8.03e9 - 2 x 128,256 x 4,096 narrow, the embedding and
	 * lm_head 16-bit: 9,080,673,152 bytes */
	double want = 9080673152.0 + 2.0 * 1073741824 + 16 * 63 * 16 * 131072.0;
	cr_assert_float_eq(infer_server_memory(&p, &w), want, 1);
}

/* --- admission, preemption, rejection ------------------------------------ */

/* A trace of n requests arriving together. */
static void burst(const char *name, int n, int prompt, int output)
{
	char text[4096] = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n";
	for (int i = 0; i < n; i++) {
		size_t len = strlen(text);
		snprintf(text + len, sizeof text - len, "2023-11-16 18:00:00.0000000,%d,%d\r\n",
			 prompt, output);
	}
	write_file(name, text);
}

/* A server with exactly 100 KV blocks (1,600 tokens): vram = weights +
 * overhead + 100 x 16 x 128 KiB. */
static const char *hundred_blocks(char *buf, size_t len)
{
	double vram = 2 * llama3()->params + 2.0 * 1073741824 + 100 * 16 * 131072.0 + 1000;
	snprintf(buf, len,
		 "name: t\n"
		 "pools: [{name: p, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}]\n"
		 "workloads:\n"
		 "  - {name: chat, kind: inference, model: llama-3-8b, vram: %.0f,\n"
		 "     requests: {trace: burst.csv, format: azure}}\n"
		 "output: {requests: true}\n",
		 vram);
	return buf;
}

Test(infer, kv_blocks_bound_admission_and_decode_growth_preempts_the_newest)
{
	char text[1024];
	/* 12 requests of 160 prompt tokens (10 blocks each): 10 are admitted.
	 * Their decodes need an 11th block each: the newest are preempted. */
	burst("burst.csv", 12, 160, 200);
	run(hundred_blocks(text, sizeof text));
	cr_assert_eq(r.n_requests, 12);
	for (size_t i = 0; i < 12; i++)
		cr_assert_eq(r.requests[i].status, REQUEST_COMPLETED, "request %zu", i);
	for (size_t i = 1; i < 10; i++)
		cr_assert_eq(r.requests[i].first_token, r.requests[0].first_token,
			     "the first ten share the first iteration");
	cr_assert_gt(r.requests[10].first_token, r.requests[0].first_token);
	cr_assert_gt(r.requests[11].first_token, r.requests[0].first_token);
	cr_assert_gt(metric("chat", "preemptions"), 0);
	cr_assert_float_eq(metric("chat", "requests_rejected"), 0, 0);
	/* FCFS: the oldest finish first. */
	cr_assert_leq(r.requests[0].done, r.requests[11].done);
}

/* The gauges behind vLLM's scheduler and cache metrics (collect.h), in the
 * timeseries rows of the workload.  Integrated over the run, requests
 * waiting + running give every request's time from arrival to completion
 * (Little's law, exactly: each request is counted in one of the two from
 * its arrival to its last token); the preemptions counted per window add
 * up to the run's metric; the cache is used, never beyond its 100 blocks. */
Test(infer, server_gauges_integrate_to_the_requests_time_and_count_preemptions)
{
	char text[1024];
	burst("burst.csv", 12, 160, 200);
	run(hundred_blocks(text, sizeof text));
	double in_system = 0, gauged = 0, preempted = 0, kv_max = 0;
	for (size_t i = 0; i < r.n_requests; i++)
		in_system += sim_seconds(r.requests[i].done - r.requests[i].arrival);
	const struct ts_row *rows[64];
	size_t n = 0;
	for (size_t i = 0; i < r.n_ts && n < 64; i++)
		if (!strcmp(r.ts[i].scope, "chat"))
			rows[n++] = &r.ts[i];
	cr_assert_gt(n, 0);
	for (size_t k = 0; k < n; k++) {
		sim_time end = k + 1 < n ? rows[k + 1]->t : r.sim_end;
		gauged += (rows[k]->requests_running + rows[k]->requests_waiting) *
			  sim_seconds(end - rows[k]->t);
		preempted += rows[k]->preemptions;
		if (!isnan(rows[k]->kv_cache_usage))
			kv_max = fmax(kv_max, rows[k]->kv_cache_usage);
	}
	cr_expect_float_eq(gauged, in_system, 1e-6 * in_system, "%.9g vs %.9g", gauged, in_system);
	cr_expect_float_eq(preempted, metric("chat", "preemptions"), 0);
	cr_expect_gt(preempted, 0);
	cr_expect_gt(kv_max, 0.5, "ten sequences of 10+ blocks in 100");
	cr_expect_leq(kv_max, 1);
}

Test(infer, a_request_longer_than_the_whole_cache_is_rejected)
{
	char text[1024];
	/* 1,601 tokens > 1,600 (vLLM's max_model_len check), then three short ones. */
	write_file("burst.csv", "2023-11-16 18:00:00,1500,101\n2023-11-16 18:00:01,100,10\n"
				"2023-11-16 18:00:02,100,10\n2023-11-16 18:00:03,100,10\n");
	run(hundred_blocks(text, sizeof text));
	cr_assert_float_eq(metric("chat", "requests_rejected"), 1, 0);
	cr_assert_float_eq(metric("chat", "requests_completed"), 3, 0);
	cr_assert_float_eq(metric("chat", "slo_attainment_pct"), 75, 0);
	cr_assert_eq(r.requests[0].status, REQUEST_REJECTED);
	cr_assert_eq(r.requests[0].done, SIM_NEVER);
}

/* Three requests arrive together on a replica with two tokenizer workers of
 * 100 ms: two start at once, the third takes the first worker freed, at
 * 100 ms.  Waits for a worker: 0, 0 and 0.1 s, a mean of 0.1 / 3 s; with one
 * worker they are 0, 0.1 and 0.2 s, a mean of 0.1 s. */
Test(infer, tokenizer_workers_take_requests_in_arrival_order)
{
	burst("burst.csv", 3, 100, 2);
	run(ONE_H100("", ", tokenize: {time: 100ms, workers: 2}", "{trace: burst.csv}"));
	cr_assert_float_eq(metric("chat", "tokenize_wait_mean_s"), 0.1 / 3, 1e-9);
	cr_assert_lt(r.requests[1].first_token, r.requests[2].first_token - 90000);
	results_free(&r);
	scenario_free(sc);
	results_init(&r);
	run(ONE_H100("", ", tokenize: 100ms", "{trace: burst.csv}"));
	cr_assert_float_eq(metric("chat", "tokenize_wait_mean_s"), 0.1, 1e-9);
}

Test(infer, max_batch_caps_the_running_sequences)
{
	burst("burst.csv", 5, 100, 10);
	run(ONE_H100("", ", max_batch: 2", "{trace: burst.csv}"));
	/* Pairs: 0 and 1 first, then 2 and 3, then 4. */
	cr_assert_eq(r.requests[0].first_token, r.requests[1].first_token);
	cr_assert_gt(r.requests[2].first_token, r.requests[1].done - 1);
	cr_assert_gt(r.requests[4].first_token, r.requests[3].done - 1);
}

/* --- activity, sharing, routing, scaling ---------------------------------- */

Test(infer, a_near_idle_server_shows_its_real_duty_cycle)
{
	/* A request every 20 s, each busy for about 0.45 s: about 2 % activity
	 * while the replica holds a whole GPU. */
	run(ONE_H100(
		"", "",
		"{process: poisson, rate: 3/m, count: 200, prompt_tokens: 500, output_tokens: 50}"));
	double duty = metric("chat", "duty_cycle_pct");
	cr_assert(duty > 1 && duty < 4, "duty %.2f%%", duty);
	cr_assert_float_eq(metric("p", "gpu_allocation_pct"), 50, 0.01,
			   "one of the pool's two GPUs");
	double engine = metric("p", "engine_active_pct");
	cr_assert_float_eq(engine, duty / 2, 0.05, "engine %.3f%% of two GPUs", engine);
}

/* ONE_H100's pool cut to one GPU: the device plugin spreads time-sliced
 * replicas over a node's GPUs (cluster.c, pick_gpu), so replicas that must
 * share a GPU get a node of one. */
static void one_gpu(char *text)
{
	char *at = strstr(text, "gpus_per_node: 2");
	cr_assert_not_null(at);
	at[strlen("gpus_per_node: ")] = '1';
}

Test(infer, time_sliced_replicas_share_the_gpu_and_overflow_its_memory)
{
	const char *ts = ", sharing: {mode: time-slicing, replicas: 2}";
	const char *req =
		"{process: poisson, rate: 20/s, count: 400, prompt_tokens: 500, output_tokens: 100}";
	char text[2048];
	/* Two replicas at 45 % of the memory each fit one GPU ... */
	snprintf(text, sizeof text, ONE_H100("%s", ", replicas: 2, route: least-outstanding", "%s"),
		 ts, req);
	char *at = strstr(text, "memory_fraction: 0.9");
	memcpy(at, "memory_fraction: .45", 20);
	one_gpu(text);
	run(text);
	cr_assert_float_eq(metric("chat", "oom_kills"), 0, 0);
	cr_assert_float_eq(metric("p", "peak_allocated_gpus"), 1, 0, "both on one GPU");
	double shared = metric("chat", "tpot_p50_s");
	results_free(&r);
	scenario_free(sc);
	results_init(&r);
	/* ... and are slower than one replica alone on the same GPU... */
	snprintf(text, sizeof text, ONE_H100("", ", replicas: 1", "%s"), req);
	run(text);
	cr_assert_gt(shared, metric("chat", "tpot_p50_s"));
	results_free(&r);
	scenario_free(sc);
	results_init(&r);
	/* ... while two at 90 % each overflow it: one is OOM killed. */
	snprintf(text, sizeof text, ONE_H100("%s", ", replicas: 2", "%s"), ts, req);
	one_gpu(text);
	run(text);
	cr_assert_geq(metric("chat", "oom_kills"), 1);
	cr_assert_float_eq(metric("chat", "requests_completed"), 400, 0);
}

Test(infer, round_robin_spreads_requests_over_the_replicas)
{
	run(ONE_H100(
		"", ", replicas: 2",
		"{process: poisson, rate: 1/s, count: 40, prompt_tokens: 100, output_tokens: 5}"));
	cr_assert_float_eq(metric("p", "peak_allocated_gpus"), 2, 0);
	cr_assert_float_eq(metric("chat", "requests_completed"), 40, 0);
	/* Each replica served about half: its duty cycle counts both. */
	cr_assert_float_eq(metric("p", "gpu_allocation_pct"), 100, 1e-9);
}

Test(infer, the_autoscaler_adds_replicas_under_load_and_removes_them_after)
{
	run("name: t\n"
	    "pools: [{name: p, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}]\n"
	    "workloads:\n"
	    "  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9,\n"
	    "     max_batch: 8, replicas: {min: 1, max: 4, target_queue: 2},\n"
	    "     requests: {process: poisson, rate: 6/s, count: 6000, prompt_tokens: 1000,\n"
	    "                output_tokens: 200}}\n");
	double peak = metric("chat", "peak_allocated_gpus");
	cr_assert(peak >= 2 && peak <= 4, "peak %g", peak);
	double hours = metric("chat", "gpu_hours_allocated");
	double span_h = sim_seconds(r.sim_end) / 3600;
	cr_assert_lt(hours, peak * span_h, "replicas come and go");
	cr_assert_float_eq(metric("chat", "requests_completed"), 6000, 0);
}

Test(infer, same_seed_same_requests)
{
	const char *text = ONE_H100("", ", replicas: 2, route: least-outstanding",
				    "{process: gamma, shape: 0.5, rate: 30/s, count: 500, "
				    "prompt_tokens: {dist: lognormal, mean: 800, sigma: 1}, "
				    "output_tokens: {dist: exponential, mean: 100}}");
	run(text);
	size_t n = r.n_requests;
	struct request_record *first = malloc(n * sizeof *first);
	memcpy(first, r.requests, n * sizeof *first);
	results_free(&r);
	scenario_free(sc);
	results_init(&r);
	run(text);
	cr_assert_eq(r.n_requests, n);
	cr_assert_eq(memcmp(first, r.requests, n * sizeof *first), 0);
	free(first);
}

/* --- loading and storing --------------------------------------------------- */

Test(infer, a_scenario_resolves_the_server_keys)
{
	char p[160];
	struct gp_err err GP_ERR_SCOPE = {0};
	write_file("s.yaml",
		   "name: t\n"
		   "pools: [{name: p, nodes: 1, gpu: H100-80GB, gpus_per_node: 8}]\n"
		   "workloads:\n"
		   "  - {name: chat, kind: inference, model: llama-3-8b, quantization: bf16,\n"
		   "     gpus: 2, max_batch: 4096,\n"
		   "     requests: {process: poisson, rate: 12.5, count: 10,\n"
		   "                prompt_tokens: {dist: uniform, min: 100, max: 300},\n"
		   "                output_tokens: 50}}\n");
	snprintf(p, sizeof p, "%s/s.yaml", dir);
	cr_assert_eq(scenario_load(p, NULL, 0, &sc, &err), GP_OK, "%s", err.msg);
	const struct workload_spec *w = &sc->workloads[0];
	const struct inference_spec *in = w->inference;
	cr_assert_not_null(in);
	cr_assert_eq(w->kind, WORKLOAD_INFERENCE);
	cr_assert_eq(in->tensor_parallel, 2, "tensor_parallel follows gpus");
	cr_assert_eq(in->kv_cache, QUANT_BF16, "the KV cache follows bf16 weights");
	cr_assert_eq(in->max_batched_tokens, 4096, "the token budget grows to max_batch");
	cr_assert_float_eq(in->requests.rate, 12.5, 0, "a bare rate is per second");
	cr_assert_eq(in->context, 250, "mean prompt 200 + output 50");
	cr_assert_eq(in->replicas, 1);
	cr_assert_eq(w->count, 0, "no batch jobs");
	cr_assert_eq(scenario_job_count(sc), 0);
}

Test(infer, request_rows_land_in_the_requests_table)
{
	run(ONE_H100(
		"", ", slo: {ttft: 1s}",
		"{process: poisson, rate: 1/s, count: 20, prompt_tokens: 300, output_tokens: 4}"));
	char db[192];
	snprintf(db, sizeof db, "%s/r.db", dir);
	struct store *st;
	struct gp_err err GP_ERR_SCOPE = {0};
	int64_t id;
	cr_assert_eq(store_open(db, &st, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(store_write_run(st, sc, &r, &id, &err), GP_OK, "%s", err.msg);
	store_close(st);
	sqlite3 *h;
	sqlite3_stmt *q;
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(
			     h,
			     "SELECT count(*), sum(slo_met), min(request_id), max(request_id),"
			     " sum(abs(e2e_s - ttft_s - 3 * tpot_s) < 1e-9), min(workload)"
			     " FROM requests WHERE run_id = ?",
			     -1, &q, NULL),
		     SQLITE_OK);
	sqlite3_bind_int64(q, 1, id);
	cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(q, 0), 20);
	/* A 300-token prefill on an H100 takes about 10 ms: all within 1 s. */
	cr_assert_eq(sqlite3_column_int(q, 1), 20);
	cr_assert_eq(sqlite3_column_int(q, 2), 0);
	cr_assert_eq(sqlite3_column_int(q, 3), 19);
	cr_assert_eq(sqlite3_column_int(q, 4), 20, "e2e = ttft + (output - 1) x tpot");
	cr_assert_str_eq((const char *)sqlite3_column_text(q, 5), "chat");
	sqlite3_finalize(q);
	sqlite3_close(h);
}

/* A replica OOM-killed under time-slicing restarts with the kubelet's
 * CrashLoopBackOff, for ever, as a Deployment's pod does (kubelet: 10 s
 * doubling to a 300 s cap; Kubernetes docs, "Pod Lifecycle": "restarted
 * with an exponential back-off delay (10s, 20s, 40s, ...) that is capped at
 * five minutes").  Two servers at 90 % of one time-sliced H100 (2 replicas):
 * the second is killed at 0 s, and again at each restart: 10, 30, 70, 150
 * and 310 s, while requests keep arriving (4,000 at 10/s, about 400 s).
 * Before, the kill at 0 s came before arrivals were due and no restart was
 * ever scheduled: 1 kill. */
Test(infer, a_replica_oom_killed_under_time_slicing_restarts_with_backoff)
{
	const char *ts = ", sharing: {mode: time-slicing, replicas: 2}";
	const char *req =
		"{process: poisson, rate: 10/s, count: 4000, prompt_tokens: 200, output_tokens: 20}";
	char text[2048];
	snprintf(text, sizeof text, ONE_H100("%s", ", replicas: 2", "%s"), ts, req);
	one_gpu(text);
	run(text);
	double last = 0;
	for (size_t i = 0; i < r.n_requests; i++)
		last = fmax(last, sim_seconds(r.requests[i].arrival));
	cr_assert(last > 310 && last < 610, "arrivals end at %.0f s", last);
	cr_assert_float_eq(metric("chat", "oom_kills"), 6, 0,
			   "kills at 0, 10, 30, 70, 150, 310 s: %g", metric("chat", "oom_kills"));
	cr_assert_float_eq(metric("chat", "requests_completed"), 4000, 0);
}

/*
 * Requests leave their slots as they finish; the figures and rows must be
 * those of every request all the same.  A burst at 200/s for 20 s against
 * one replica, cut by a horizon of 10 s: some requests completed, some still
 * in flight.  The rows come back in arrival order, one per request
 * submitted, and the TTFT median is the one the completed rows give.
 */
Test(infer, requests_that_left_and_requests_in_flight_are_all_counted)
{
	run("name: t\n"
	    "horizon: 10s\n"
	    "pools: [{name: p, nodes: 1, gpu: H100-80GB, gpus_per_node: 1}]\n"
	    "workloads:\n"
	    "  - {name: chat, kind: inference, model: llama-3-8b, memory_fraction: 0.9,\n"
	    "     requests: {process: poisson, rate: 200/s, count: 4000,\n"
	    "       prompt_tokens: {dist: lognormal, mean: 800, sigma: 1},\n"
	    "       output_tokens: {dist: exponential, mean: 200}}}\n"
	    "output: {requests: true}\n");
	double submitted = metric("chat", "requests_submitted");
	double completed = metric("chat", "requests_completed");
	double unfinished = metric("chat", "requests_unfinished");
	cr_assert_gt(completed, 100);
	cr_assert_gt(unfinished, 100);
	cr_assert_eq(r.n_requests, (size_t)submitted);
	size_t done = 0, open = 0;
	double *ttft = malloc(r.n_requests * sizeof *ttft);
	for (size_t i = 0; i < r.n_requests; i++) {
		const struct request_record *q = &r.requests[i];
		cr_assert_eq(q->request_id, (int64_t)i, "rows in arrival order");
		if (q->status == REQUEST_COMPLETED)
			ttft[done++] = sim_seconds(q->first_token - q->arrival);
		open += q->status == REQUEST_UNFINISHED;
	}
	cr_assert_eq((double)done, completed);
	cr_assert_eq((double)open, unfinished);
	gsl_sort(ttft, 1, done);
	cr_assert_eq(metric("chat", "ttft_p50_s"),
		     gsl_stats_quantile_from_sorted_data(ttft, 1, done, 0.5));
	free(ttft);
}
