/*
 * catalog.h - the built-in tables: GPU types with their MIG profiles, and LLM
 * architectures (docs/sharing.md).  Data, not code: the tables live in
 * catalog.c and are read-only; lookups are by exact name.
 */
#ifndef GPUPLAN_CATALOG_H
#define GPUPLAN_CATALOG_H

#include "gpuplan/common.h"

struct mig_profile {
	const char *name;   /* "3g.40gb" */
	int compute_slices; /* g, out of 7 */
	int memory_slices;  /* out of 8 */
	int max_instances;  /* per GPU */
	double memory_bytes;
	int sms; /* streaming multiprocessors of one instance (the
				* compute it guarantees is sms / the GPU's sm_count) */
};

struct gpu_type {
	const char *name;    /* "A100-80GB" */
	const char *product; /* nvidia.com/gpu.product label value */
	double memory_bytes;
	double hbm_bandwidth; /* bytes/s */
	double bf16_tflops;   /* dense (FP16 tensor where BF16 is absent) */
	double int8_tops;     /* dense */
	int sm_count;
	const struct mig_profile *mig; /* NULL when the GPU has no MIG */
	size_t n_mig;
};

const struct gpu_type *catalog_gpu(const char *name);
size_t catalog_gpu_count(void);
const struct gpu_type *catalog_gpu_at(size_t i);
const struct mig_profile *catalog_mig_profile(const struct gpu_type *gpu, const char *name);

struct model_arch {
	const char *name; /* "llama-2-13b" (lookups ignore case) */
	double params;    /* parameter count */
	int layers;
	int hidden;
	int heads;
	int kv_heads;
	int head_dim;
	int ffn;
	int vocab;
	bool tied_embeddings; /* lm_head shares the embedding (none in the table) */
	/* Mixture of experts (modelcfg.h reads them from a config.json); all 0 for a
	 * dense model, which is every row of the built-in table. */
	int experts;           /* routed experts per MoE layer */
	int experts_per_token; /* top-k */
	double expert_params;  /* parameters of the routed experts, all layers */
	double active_params;  /* what one token computes with: params less the
				* experts it is not routed to */
};

/* The parameters one token computes with: active_params for a mixture of
 * experts, params for a dense model. */
static inline double model_active_params(const struct model_arch *m)
{
	return m->active_params > 0 ? m->active_params : m->params;
}

const struct model_arch *catalog_model(const char *name);
size_t catalog_model_count(void);
const struct model_arch *catalog_model_at(size_t i);

#endif
