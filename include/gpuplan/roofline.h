/*
 * roofline.h - how long one forward pass (one iteration of a continuous-
 * batching server) takes on a GPU, a share of a GPU, or a tensor-parallel
 * group (docs/sharing.md, docs/inference.md).
 *
 *   time = max(FLOPs / (peak x compute_eff), bytes / (bandwidth x memory_eff))
 *          + all-reduce time (tp > 1) + fixed per-iteration overhead
 *
 * Use: fill a struct roofline once per replica with roofline_init (it
 * precomputes every per-GPU constant), then ask for the time of each
 * iteration.  An iteration's work is a struct roofline_work accumulated with
 * roofline_add_prefill / roofline_add_decode, so one iteration can mix prefill
 * chunks and decoding sequences.  Nothing allocates; times are seconds.
 * The model, its defaults and their sources are at the top of roofline.c.
 */
#ifndef GPUPLAN_ROOFLINE_H
#define GPUPLAN_ROOFLINE_H

#include "gpuplan/catalog.h"
#include "gpuplan/footprint.h"

/* The part of one GPU a replica gets; the caller derives it from the
 * sharing mode: {1, 1} whole GPU; MIG {SMs/GPU SMs, memory_slices/8}; MPS or
 * fractional {1/R or milli/1000, 1}.  Both in (0, 1]. */
struct gpu_share {
	double compute;   /* fraction of the SMs (peak FLOPs) */
	double bandwidth; /* fraction of the HBM bandwidth */
};

#define GPU_SHARE_WHOLE ((struct gpu_share){1.0, 1.0})

/* Per-GPU-type knobs; roofline_gpu_defaults gives the documented defaults,
 * which a scenario may override. */
struct roofline_gpu {
	double compute_eff;     /* achieved / peak tensor FLOPs */
	double memory_eff;      /* achieved / peak HBM bandwidth */
	double step_overhead_s; /* fixed time per iteration (scheduling, sampling, launch) */
	double link_bandwidth;  /* bytes/s per direction between TP peers, achieved */
	double link_latency_s;  /* per all-reduce */
	bool fp8;               /* FP8 tensor cores (Ada, Hopper, Blackwell, MI300X) */
	double fp8_flops;       /* their dense peak, FLOP/s */
};

void roofline_gpu_defaults(const struct gpu_type *gpu, struct roofline_gpu *k);

/* The fixed time per iteration of a server on this GPU type: calibrated on
 * public vLLM measurements where there are some, else 2 ms (roofline.c). */
double roofline_step_overhead(const struct gpu_type *gpu);

/* Tensor FLOPs per second one GPU reaches for this weight format: BF16 for
 * fp16/bf16/int4 (weight-only), INT8 for int8 (W8A8) where INT8 beats BF16,
 * FP8 (= the INT8 figure) for fp8 on GPUs with FP8 tensor cores, else BF16.
 * Datasheet peak, before efficiency and share. */
double roofline_peak_flops(const struct gpu_type *gpu, const struct roofline_gpu *k,
			   enum quant weights);

/* One replica's constants, per GPU of its TP group. */
struct roofline {
	int tp;
	int layers;
	double flops_per_s;        /* peak x compute_eff x share.compute */
	double bytes_per_s;        /* bandwidth x memory_eff x share.bandwidth */
	double weights_bytes;      /* read once per iteration (all but the routed experts) */
	double expert_bytes;       /* routed experts (MoE), read where tokens go */
	double expert_pick;        /* experts per token / experts; 0 for a dense model */
	double kv_bytes_per_token; /* read or written per cached token */
	double flops_per_token;    /* 2 x active params / tp */
	double flops_per_key;      /* attention: 4 x layers x heads x head_dim / tp */
	double allreduce_bytes;    /* one all-reduce per token: hidden x 2 B */
	double link_bandwidth;
	double link_latency_s;
	double step_overhead_s;
};

/* Sets r up for model m in the given weight and KV formats on tp GPUs of type
 * gpu, each with share `share`; k = NULL takes roofline_gpu_defaults(gpu).
 * tp must satisfy footprint_tp_valid, and share's fields lie in (0, 1]. */
void roofline_init(struct roofline *r, const struct model_arch *m, enum quant weights,
		   enum quant kv, const struct gpu_type *gpu, const struct roofline_gpu *k,
		   struct gpu_share share, int tp);

/* The work of one iteration, summed over the sequences in the batch. */
struct roofline_work {
	double tokens;  /* tokens computed: prefill tokens + 1 per decoding sequence */
	double keys;    /* sum over those tokens of the keys each one attends to */
	double kv_read; /* cached tokens whose K and V are read (the computed
			   * tokens' K and V are written: bytes count both) */
};

#define ROOFLINE_WORK_NONE ((struct roofline_work){0, 0, 0})

/* Adds a prefill chunk of `tokens` prompt tokens to a sequence that already
 * has `cached` tokens in its KV cache (0 for a new prompt; chunked prefill
 * passes what earlier chunks stored).  Causal: token i attends to cached + i
 * keys. */
void roofline_add_prefill(struct roofline_work *w, double tokens, double cached);

/* Adds `seqs` decoding sequences of `context` tokens each, the new one
 * included: it attends to all `context` keys, context - 1 of them cached. */
void roofline_add_decode(struct roofline_work *w, double seqs, double context);

/* The terms of one iteration, per GPU. */
struct roofline_terms {
	double flops;
	double bytes;
	double compute_s; /* flops / flops_per_s */
	double memory_s;  /* bytes / bytes_per_s */
	double comm_s;    /* TP all-reduces, 0 when tp = 1 */
	double overhead_s;
	double total_s; /* max(compute_s, memory_s) + comm_s + overhead_s; 0 for no work */
};

void roofline_terms(const struct roofline *r, const struct roofline_work *w,
		    struct roofline_terms *t);

/* total_s of an iteration doing w. */
double roofline_iteration_time(const struct roofline *r, const struct roofline_work *w);

/* An iteration that only prefills `tokens` tokens after `cached` ones. */
double roofline_prefill_time(const struct roofline *r, double tokens, double cached);

/* An iteration that only decodes one token for each of `batch` sequences of
 * `context` tokens. */
double roofline_decode_time(const struct roofline *r, double batch, double context);

#endif
