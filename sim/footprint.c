/*
 * footprint.c - GPU memory of an LLM server (footprint.h).
 *
 * The model, per GPU of a tensor-parallel (TP) group of tp GPUs:
 *
 *   memory = weights / tp + overhead + KV blocks
 *
 * Weights (docs/sharing.md): 16-bit formats count params x 2 bytes.  A
 * quantized checkpoint (fp8, int8, int4) narrows the linear layers of the
 * transformer blocks only: the token embedding and an untied lm_head stay
 * 16-bit (vocab x hidden each), as in the published INT8/INT4 checkpoints
 * (llm-compressor's W8A8/W4A16 recipes and AWQ/GPTQ ignore lm_head and
 * never quantize the embedding):
 *   weights = (params - kept) x bytes per weight + kept x 2,
 *   kept = vocab x hidden x (2 untied, 1 tied)
 * with bytes per weight
 *   fp8, int8    1      per-channel scales are < 0.05 % and are ignored
 *   int4         0.51953125 = 0.5 + (2 + 0.5) / 128: AWQ and GPTQ at their
 *                       default group size of 128 keep one fp16 scale and one
 *                       4-bit zero point per group of 128 weights
 * Llama-3-8B (128,256 x 4,096 x 2 = 1.05e9 kept): 9.08e9 bytes in int8 and
 * 5.73e9 in int4, as its HF INT8 (~9.1 GB) and INT4 (~5.7 GB) checkpoints
 * weigh; counting every parameter narrow gave 8.03e9 and 4.17e9.
 * Examples: Llama-2-70B fp16 138 GB (two A100-80GB), Llama-2-13B fp16 26 GB,
 * Llama-2-7B fp16 13.5 GB against 3.76 GB in int4.
 *
 * KV cache per token = 2 (K and V) x layers x kv_heads x head_dim x bytes of
 * the KV format (Llama-2-7B in fp16: 2 x 32 x 32 x 128 x 2 = 512 KiB; the
 * grouped-query Llama-3-8B: 128 KiB).  Under TP each GPU keeps its share of
 * the KV heads, ceil(kv_heads / tp): vLLM replicates KV heads when a group
 * has more GPUs than heads.
 *
 * Overhead: 2 GiB per GPU, a constant.  It covers the CUDA context with the
 * cuBLAS and NCCL workspaces (nvidia-smi shows 0.5-0.8 GiB for a bare
 * PyTorch process on A100/H100), the activations of vLLM's profiling pass
 * at its default max_num_batched_tokens (for Llama-2-7B at 8192 tokens the
 * MLP's gate and up outputs alone are 8192 x 2 x 11008 x 2 B = 0.34 GiB,
 * plus the residual stream, attention buffers and logits: 0.5-1 GiB), and
 * the CUDA graphs vLLM captures for decode batches (0.3-1 GiB in its logs).
 * The memory it is taken from is NVML's total (catalog.c), which already
 * leaves out what the GDDR cards lose to ECC.
 *
 * KV capacity = memory cap - weights / tp - overhead, cut into blocks of 16
 * tokens (vLLM's default block_size; PagedAttention allocates whole blocks).
 * The blocks of one GPU hold that GPU's heads of the same tokens, so the
 * group holds kv_blocks blocks.  A sequence of `context` tokens needs
 * ceil(context / 16) blocks; the maximum concurrent sequences is
 * kv_blocks / that, rounded down.  A model "fits" at a TP degree when at least
 * one sequence of the context fits: vLLM refuses to start when the KV cache
 * cannot hold max_model_len tokens.
 */
#include "gpuplan/footprint.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>

const char *const footprint_quant_names[QUANT_COUNT] = {"fp16", "bf16", "fp8", "int8", "int4"};

/* Bytes per weight and per KV element, indexed by enum quant.  An int4 KV
 * cache (LMDeploy's kv int4) is counted without its per-head scales. */
static const double weight_bytes[QUANT_COUNT] = {2.0, 2.0, 1.0, 1.0, 0.5 + 2.5 / 128.0};
static const double kv_bytes[QUANT_COUNT] = {2.0, 2.0, 1.0, 1.0, 0.5};

static bool name_is(const char *s, const char *name)
{
	for (; *s && *name; s++, name++)
		if (tolower((unsigned char)*s) != *name)
			return false;
	return *s == *name;
}

int footprint_quant_parse(const char *s, enum quant *q)
{
	for (int i = 0; s && i < QUANT_COUNT; i++)
		if (name_is(s, footprint_quant_names[i])) {
			*q = (enum quant)i;
			return GP_OK;
		}
	return GP_EINPUT;
}

const char *footprint_quant_name(enum quant q)
{
	return (unsigned)q < QUANT_COUNT ? footprint_quant_names[q] : "?";
}

double footprint_quant_weight_bytes(enum quant q)
{
	assert((unsigned)q < QUANT_COUNT);
	return weight_bytes[q];
}

double footprint_quant_kv_bytes(enum quant q)
{
	assert((unsigned)q < QUANT_COUNT);
	return kv_bytes[q];
}

enum quant footprint_quant_default_kv(enum quant weights)
{
	return weights == QUANT_BF16 ? QUANT_BF16 : QUANT_FP16;
}

double footprint_kept_params(const struct model_arch *m, enum quant weights)
{
	if (footprint_quant_weight_bytes(weights) >= 2)
		return m->params;
	double kept = (double)m->vocab * m->hidden * (m->tied_embeddings ? 1 : 2);
	return kept > m->params ? m->params : kept;
}

double footprint_weights_bytes(const struct model_arch *m, enum quant weights)
{
	double width = footprint_quant_weight_bytes(weights);
	double kept = footprint_kept_params(m, weights);
	return (m->params - kept) * width + kept * 2.0;
}

double footprint_kv_bytes_per_token(const struct model_arch *m, enum quant kv)
{
	return 2.0 * m->layers * m->kv_heads * m->head_dim * footprint_quant_kv_bytes(kv);
}

double footprint_kv_bytes_per_token_per_gpu(const struct model_arch *m, enum quant kv, int tp)
{
	assert(tp >= 1);
	int heads = (m->kv_heads + tp - 1) / tp;
	return 2.0 * m->layers * heads * m->head_dim * footprint_quant_kv_bytes(kv);
}

bool footprint_tp_valid(const struct model_arch *m, int tp)
{
	return tp >= 1 && m->heads % tp == 0;
}

void footprint_compute(const struct model_arch *m, enum quant weights, enum quant kv, int tp,
		       double memory_per_gpu, struct footprint *fp)
{
	assert(footprint_tp_valid(m, tp));
	fp->tp = tp;
	fp->memory_per_gpu = memory_per_gpu;
	fp->weights_per_gpu = footprint_weights_bytes(m, weights) / tp;
	fp->overhead_per_gpu = FOOTPRINT_OVERHEAD_BYTES;
	fp->kv_bytes_per_token = footprint_kv_bytes_per_token_per_gpu(m, kv, tp);
	double left = memory_per_gpu - fp->weights_per_gpu - fp->overhead_per_gpu;
	fp->kv_capacity_per_gpu = left > 0 ? left : 0;
	double block = FOOTPRINT_BLOCK_TOKENS * fp->kv_bytes_per_token;
	fp->kv_blocks = (int64_t)floor(fp->kv_capacity_per_gpu / block);
	fp->kv_tokens = fp->kv_blocks * FOOTPRINT_BLOCK_TOKENS;
}

/* Blocks a sequence of `tokens` tokens occupies. */
static int64_t blocks_for(int64_t tokens)
{
	return (tokens + FOOTPRINT_BLOCK_TOKENS - 1) / FOOTPRINT_BLOCK_TOKENS;
}

int64_t footprint_max_sequences(const struct footprint *fp, int64_t context)
{
	assert(context >= 1);
	return fp->kv_blocks / blocks_for(context);
}

double footprint_bytes_per_gpu(const struct footprint *fp, int64_t tokens)
{
	double kv = (double)(blocks_for(tokens) * FOOTPRINT_BLOCK_TOKENS) * fp->kv_bytes_per_token;
	return fp->weights_per_gpu + fp->overhead_per_gpu + kv;
}

int footprint_min_tp(const struct model_arch *m, enum quant weights, enum quant kv,
		     double memory_per_gpu, int64_t context)
{
	for (int tp = 1; tp <= FOOTPRINT_MAX_TP; tp *= 2) {
		if (!footprint_tp_valid(m, tp))
			continue;
		struct footprint fp;
		footprint_compute(m, weights, kv, tp, memory_per_gpu, &fp);
		if (footprint_max_sequences(&fp, context) >= 1)
			return tp;
	}
	return 0;
}

bool footprint_widest_fitting_quant(const struct model_arch *m, int tp, double memory_per_gpu,
				    int64_t context, enum quant *q)
{
	static const enum quant order[] = {QUANT_FP16, QUANT_INT8, QUANT_INT4};
	if (!footprint_tp_valid(m, tp))
		return false;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		struct footprint fp;
		footprint_compute(m, order[i], footprint_quant_default_kv(order[i]), tp,
				  memory_per_gpu, &fp);
		if (footprint_max_sequences(&fp, context) >= 1) {
			*q = order[i];
			return true;
		}
	}
	return false;
}
