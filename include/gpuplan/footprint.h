/*
 * footprint.h - how much GPU memory a model needs: quantizations, weights,
 * KV cache, runtime overhead, the smallest tensor-parallel degree that fits,
 * and how many sequences the KV cache holds (docs/sharing.md,
 * "How footprints and step times are modeled").
 *
 * Pure functions over the catalog's read-only structs: nothing here
 * allocates, prints or keeps state.  Sizes are bytes as doubles (exact for
 * every figure below 2^53); "per GPU" means per member of a tensor-parallel
 * group, whose memory may be a whole card, a MIG slice or memory_fraction of
 * a card: the caller passes that cap.  The model and its defaults are
 * explained at the top of footprint.c.
 */
#ifndef GPUPLAN_FOOTPRINT_H
#define GPUPLAN_FOOTPRINT_H

#include "gpuplan/catalog.h"

/* Weight (and KV-cache) number formats, narrowest last. */
enum quant { QUANT_FP16, QUANT_BF16, QUANT_FP8, QUANT_INT8, QUANT_INT4, QUANT_COUNT };

/* "fp16", "bf16", "fp8", "int8", "int4" (case-insensitive) -> *q.  Returns
 * GP_OK, or GP_EINPUT for any other string (the caller names the place). */
int footprint_quant_parse(const char *s, enum quant *q);

/* The canonical lower-case name; "?" for a value outside the enum. */
const char *footprint_quant_name(enum quant q);

/* The names in enum order, for "did you mean" hints and messages. */
extern const char *const footprint_quant_names[QUANT_COUNT];

/* Bytes per weight, group-wise scales included (int4: 0.5 + 2.5/128). */
double footprint_quant_weight_bytes(enum quant q);

/* Bytes per KV-cache element stored in this format. */
double footprint_quant_kv_bytes(enum quant q);

/* The KV-cache format a server uses when none is given: the activation type,
 * bf16 for bf16 weights and fp16 otherwise (vLLM's kv_cache_dtype "auto"). */
enum quant footprint_quant_default_kv(enum quant weights);

/* Per-GPU runtime overhead: CUDA context, activations, CUDA graphs, NCCL. */
#define FOOTPRINT_OVERHEAD_BYTES (2.0 * 1024.0 * 1024.0 * 1024.0)

/* Tokens per KV-cache block (vLLM's default block_size on GPUs). */
#define FOOTPRINT_BLOCK_TOKENS 16

/* Largest tensor-parallel degree footprint_min_tp tries (one 8-GPU node). */
#define FOOTPRINT_MAX_TP 8

/* The whole model's weights, before any TP split: params x 2 in 16 bits; a
 * quantized checkpoint narrows all but the embedding and lm_head (footprint.c). */
double footprint_weights_bytes(const struct model_arch *m, enum quant weights);
/* The parameters kept at 16 bits: all of them in a 16-bit format; the
 * embedding and an untied lm_head (vocab x hidden each) in a quantized one. */
double footprint_kept_params(const struct model_arch *m, enum quant weights);

/* 2 (K and V) x layers x kv_heads x head_dim x footprint_quant_kv_bytes(kv). */
double footprint_kv_bytes_per_token(const struct model_arch *m, enum quant kv);

/* The same on one GPU of a TP group: KV heads are split, and replicated when
 * there are fewer of them than GPUs (ceil(kv_heads / tp) heads per GPU). */
double footprint_kv_bytes_per_token_per_gpu(const struct model_arch *m, enum quant kv, int tp);

/* A TP degree the model can be split over: tp >= 1 dividing the attention
 * heads (vLLM's requirement). */
bool footprint_tp_valid(const struct model_arch *m, int tp);

/* What one GPU of a TP group holds when the server takes memory_per_gpu. */
struct footprint {
	int tp;
	double memory_per_gpu;      /* the cap the server may use */
	double weights_per_gpu;     /* weights / tp */
	double overhead_per_gpu;    /* FOOTPRINT_OVERHEAD_BYTES */
	double kv_capacity_per_gpu; /* what is left for KV blocks, >= 0 */
	double kv_bytes_per_token;  /* per GPU (see above) */
	int64_t kv_blocks;          /* whole blocks per GPU = blocks of the group */
	int64_t kv_tokens;          /* kv_blocks x FOOTPRINT_BLOCK_TOKENS */
};

/* Fills *fp for model m with the given weight and KV formats on tp GPUs of
 * memory_per_gpu bytes each.  tp must satisfy footprint_tp_valid. */
void footprint_compute(const struct model_arch *m, enum quant weights, enum quant kv, int tp,
		       double memory_per_gpu, struct footprint *fp);

/* Sequences of `context` tokens (prompt + output) whose KV blocks fit at
 * once: kv_blocks / ceil(context / 16), rounded down.  0 when none fits. */
int64_t footprint_max_sequences(const struct footprint *fp, int64_t context);

/* Memory one GPU of the group uses with `tokens` tokens in its KV cache:
 * weights / tp + overhead + the blocks those tokens occupy. */
double footprint_bytes_per_gpu(const struct footprint *fp, int64_t tokens);

/* The smallest tp in 1, 2, 4, 8 at which one sequence of `context` tokens
 * fits (vLLM refuses to start otherwise), or 0 when none does. */
int footprint_min_tp(const struct model_arch *m, enum quant weights, enum quant kv,
		     double memory_per_gpu, int64_t context);

/* The widest weight format (fp16, then int8, then int4) that fits one
 * sequence of `context` tokens at tensor-parallel degree tp with its default
 * KV format; false when even int4 does not.  Used for "use int4" hints. */
bool footprint_widest_fitting_quant(const struct model_arch *m, int tp, double memory_per_gpu,
				    int64_t context, enum quant *q);

#endif
