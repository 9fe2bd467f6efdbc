/*
 * roofline.c - iteration time of a transformer forward pass (roofline.h).
 *
 * Per GPU of a tensor-parallel group of tp GPUs, for an iteration that
 * computes `tokens` tokens (prefill tokens plus one per decoding sequence):
 *
 *   FLOPs = (2 x params x tokens + 4 x layers x heads x head_dim x keys) / tp
 *     2 x params per token for the matrix multiplies (lm_head included, the
 *     embedding lookup too, which slightly overstates prefill); 4 x layers x
 *     heads x head_dim per attended key for QK^T and AV (2 FLOPs per
 *     multiply-add, each over head_dim).  `keys` sums the keys every computed
 *     token attends to: C for a decode token at context C, and for a prefill
 *     chunk of T tokens after P cached ones T x P + T (T + 1) / 2 (causal
 *     mask; FlashAttention skips the masked half).
 *   bytes = weights / tp + (kv_read + tokens) x KV bytes per token per GPU
 *     the weights are streamed once per iteration whatever the batch; each
 *     cached token's K and V are read once, each new token's written once.
 *     A mixture of experts (modelcfg.c) computes with its active parameters
 *     (params in the FLOPs above is active_params) and reads its routed
 *     experts only where some token of the iteration goes: with k of E
 *     experts per token, chosen evenly, an expert is read with probability
 *     1 - (1 - k/E)^tokens, so expert bytes x that fraction.  Mixtral's
 *     decode of one sequence reads 2 of 8 experts; a batch of 32, all of them.
 *     Activations are ignored: they are small next to the weights when
 *     decoding, and prefill is compute-bound.
 *   time = max(FLOPs / (peak x compute_eff x share.compute),
 *              bytes / (bandwidth x memory_eff x share.bandwidth))
 *          + comm + step_overhead
 *
 * Peak by weight format (roofline_peak_flops): fp16 and bf16 run on the
 * BF16 (or FP16) tensor cores; int4 is weight-only (AWQ/GPTQ/Marlin kernels
 * dequantize to fp16 and multiply in fp16), so BF16 peak with half-byte
 * weights; int8 is W8A8 (SmoothQuant-style, vLLM's int8 path) on the INT8
 * tensor cores, except where INT8 is slower than BF16 (V100 has no INT8
 * tensor cores: it runs int8 weight-only at the FP16 peak); fp8 is W8A8 on
 * the FP8 tensor cores of Ada, Hopper, Blackwell and MI300X (the dense FP8
 * figure of catalog_specs.c; it equals INT8 on all of them) and weight-only
 * elsewhere (vLLM's Marlin FP8 path on Ampere).
 *
 * Tensor parallelism (Megatron-style) splits every matrix and the attention
 * heads over tp GPUs and adds two all-reduces per layer (after attention and
 * after the MLP) of tokens x hidden x 2 bytes (fp16 activations).  A ring
 * all-reduce sends and receives 2 (tp - 1) / tp of the message per GPU:
 *   comm = 2 x layers x (latency + 2 (tp - 1) / tp x tokens x hidden x 2 / link)
 * not overlapped with compute (vLLM does not overlap them).
 *
 * Defaults (roofline_gpu_defaults), the same for every GPU type for want of
 * per-card measurements under one method, and overridable per GPU type:
 *   compute_eff 0.7   large GEMMs reach 70-80 % of dense tensor peak;
 *                     attention and small matrices less
 *   memory_eff  0.8   decode kernels stream weights at 75-85 % of the HBM or
 *                     GDDR datasheet bandwidth
 *   step overhead 2 ms  scheduling, input preparation, sampling and kernel
 *                     launches outside the roofline; with it a Llama-2-7B
 *                     fp16 decode step on an A100-80GB is 10-12 ms at small
 *                     batch, as vLLM reports
 * Interconnect between TP peers, per direction, nominal (catalog_specs.c:
 * NVLink 3 300 GB/s, NVLink 4 450, NVLink 5 900, NVLink 2 150, Infinity
 * Fabric 448, PCIe Gen4 x16 32, Gen3 16) taken at 80 %, about what
 * nccl-tests bus bandwidth reaches.  Latency per all-reduce 8 us over NVLink
 * and 20 us over PCIe (small-message NCCL and vLLM custom all-reduce
 * figures).  A GPU type without a specs row gets PCIe Gen4 and no FP8.
 */
#include "gpuplan/roofline.h"

#include "gpuplan/catalog_specs.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#define GBps 1e9
#define US   1e-6

#define COMPUTE_EFF      0.7
#define MEMORY_EFF       0.8
#define STEP_OVERHEAD_S  2e-3
#define LINK_EFF         0.8
#define ACTIVATION_BYTES 2.0
#define PCIE4_GBPS       32.0
#define PCIE_LATENCY_US  20.0

/* The step overhead where public vLLM measurements calibrate it: the
 * decode step of Llama-3-8B in bf16 at batch 1 less its roofline
 * (docs/inference.md, "Step overhead").  An A100-40GB decodes at 75 tokens/s
 * (13.3 ms; vLLM 0.23.0, 1,024 prompt and 128 output tokens), where the
 * roofline gives 13.03 ms: 0.3 ms; the A100-80GB runs the same software on
 * the same chip.  An H100 at 6.48 ms against 6.05: 0.45 ms; the H200 is the
 * same chip.  Other GPUs keep STEP_OVERHEAD_S until measured. */
static const struct {
	const char *gpu;
	double seconds;
} calibrated_overhead[] = {
	{"A100-40GB", 0.3e-3},
	{"A100-80GB", 0.3e-3},
	{"H100-80GB", 0.45e-3},
	{"H200-141GB", 0.45e-3},
};

double roofline_step_overhead(const struct gpu_type *gpu)
{
	for (size_t i = 0; i < sizeof calibrated_overhead / sizeof calibrated_overhead[0]; i++)
		if (!strcmp(gpu->name, calibrated_overhead[i].gpu))
			return calibrated_overhead[i].seconds;
	return STEP_OVERHEAD_S;
}

void roofline_gpu_defaults(const struct gpu_type *gpu, struct roofline_gpu *k)
{
	const struct gpu_specs *s = catalog_gpu_specs(gpu);
	k->compute_eff = COMPUTE_EFF;
	k->memory_eff = MEMORY_EFF;
	k->step_overhead_s = roofline_step_overhead(gpu);
	k->link_bandwidth = (s ? s->link_gbps : PCIE4_GBPS) * GBps * LINK_EFF;
	k->link_latency_s = (s ? s->link_latency_us : PCIE_LATENCY_US) * US;
	k->fp8 = s && s->fp8_tflops > 0;
	k->fp8_flops = s ? s->fp8_tflops * 1e12 : 0;
}

double roofline_peak_flops(const struct gpu_type *gpu, const struct roofline_gpu *k,
			   enum quant weights)
{
	double bf16 = gpu->bf16_tflops * 1e12, int8 = gpu->int8_tops * 1e12;
	switch (weights) {
	case QUANT_INT8: return int8 > bf16 ? int8 : bf16;
	case QUANT_FP8: return k->fp8 && k->fp8_flops > bf16 ? k->fp8_flops : bf16;
	default: return bf16;
	}
}

void roofline_init(struct roofline *r, const struct model_arch *m, enum quant weights,
		   enum quant kv, const struct gpu_type *gpu, const struct roofline_gpu *k,
		   struct gpu_share share, int tp)
{
	assert(footprint_tp_valid(m, tp));
	assert(share.compute > 0 && share.compute <= 1);
	assert(share.bandwidth > 0 && share.bandwidth <= 1);
	struct roofline_gpu defaults;
	if (!k) {
		roofline_gpu_defaults(gpu, &defaults);
		k = &defaults;
	}
	r->tp = tp;
	r->layers = m->layers;
	r->flops_per_s = roofline_peak_flops(gpu, k, weights) * k->compute_eff * share.compute;
	r->bytes_per_s = gpu->hbm_bandwidth * k->memory_eff * share.bandwidth;
	/* Routed experts are narrowed like any linear layer (footprint.c). */
	double experts = m->expert_params * footprint_quant_weight_bytes(weights);
	r->weights_bytes = (footprint_weights_bytes(m, weights) - experts) / tp;
	r->expert_bytes = experts / tp;
	r->expert_pick = m->experts ? (double)m->experts_per_token / m->experts : 0;
	r->kv_bytes_per_token = footprint_kv_bytes_per_token_per_gpu(m, kv, tp);
	r->flops_per_token = 2.0 * model_active_params(m) / tp;
	r->flops_per_key = 4.0 * m->layers * m->heads * m->head_dim / tp;
	r->allreduce_bytes = m->hidden * ACTIVATION_BYTES;
	r->link_bandwidth = k->link_bandwidth;
	r->link_latency_s = k->link_latency_s;
	r->step_overhead_s = k->step_overhead_s;
}

void roofline_add_prefill(struct roofline_work *w, double tokens, double cached)
{
	assert(tokens >= 0 && cached >= 0);
	w->tokens += tokens;
	w->keys += tokens * cached + tokens * (tokens + 1) / 2;
	w->kv_read += cached;
}

void roofline_add_decode(struct roofline_work *w, double seqs, double context)
{
	assert(seqs >= 0 && context >= 1);
	w->tokens += seqs;
	w->keys += seqs * context;
	w->kv_read += seqs * (context - 1);
}

/* Two ring all-reduces per layer of the iteration's activations. */
static double comm_time(const struct roofline *r, double tokens)
{
	if (r->tp == 1)
		return 0;
	double ring = 2.0 * (r->tp - 1) / r->tp;
	double one = r->link_latency_s + ring * tokens * r->allreduce_bytes / r->link_bandwidth;
	return 2.0 * r->layers * one;
}

void roofline_terms(const struct roofline *r, const struct roofline_work *w,
		    struct roofline_terms *t)
{
	memset(t, 0, sizeof *t);
	if (w->tokens <= 0)
		return;
	t->flops = r->flops_per_token * w->tokens + r->flops_per_key * w->keys;
	t->bytes = r->weights_bytes + (w->kv_read + w->tokens) * r->kv_bytes_per_token;
	if (r->expert_bytes > 0)
		t->bytes += r->expert_bytes * (1 - pow(1 - r->expert_pick, w->tokens));
	t->compute_s = t->flops / r->flops_per_s;
	t->memory_s = t->bytes / r->bytes_per_s;
	t->comm_s = comm_time(r, w->tokens);
	t->overhead_s = r->step_overhead_s;
	double roof = t->compute_s > t->memory_s ? t->compute_s : t->memory_s;
	t->total_s = roof + t->comm_s + t->overhead_s;
}

double roofline_iteration_time(const struct roofline *r, const struct roofline_work *w)
{
	struct roofline_terms t;
	roofline_terms(r, w, &t);
	return t.total_s;
}

double roofline_prefill_time(const struct roofline *r, double tokens, double cached)
{
	struct roofline_work w = ROOFLINE_WORK_NONE;
	roofline_add_prefill(&w, tokens, cached);
	return roofline_iteration_time(r, &w);
}

double roofline_decode_time(const struct roofline *r, double batch, double context)
{
	struct roofline_work w = ROOFLINE_WORK_NONE;
	roofline_add_decode(&w, batch, context);
	return roofline_iteration_time(r, &w);
}
