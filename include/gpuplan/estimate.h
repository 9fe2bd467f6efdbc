/*
 * estimate.h - `gpuplan estimate`: the footprint and step times of one model
 * on one GPU type, from names as the user typed them (docs/sharing.md).
 *
 * estimate_compute validates the names (unknown ones get a "did you mean")
 * and the tensor-parallel degree, then fills a struct estimate from the
 * footprint and roofline modules; the writers print it as text or as one
 * JSON object.  No allocation; the struct points into the catalog.
 */
#ifndef GPUPLAN_ESTIMATE_H
#define GPUPLAN_ESTIMATE_H

#include "gpuplan/footprint.h"
#include "gpuplan/roofline.h"

#include <stdio.h>

#define ESTIMATE_DEFAULT_CONTEXT 4096
#define ESTIMATE_DEFAULT_BATCH   1

/* What the user asked for; names are looked up ignoring case. */
struct estimate_request {
	const char *model;        /* --model, or NULL with model_config */
	const char *model_config; /* --model-config: a Hugging Face config.json */
	const char *quant;        /* --quant */
	const char *gpu;          /* --gpu */
	const char *kv_cache;     /* --kv-cache, NULL = quant_default_kv */
	int64_t context;          /* --context, tokens per sequence (prompt + output), >= 1 */
	int64_t batch;            /* --batch, decoding sequences, >= 1 */
	int tp;                   /* --tp, 0 = the smallest that fits */
};

struct estimate {
	const struct model_arch *model;
	struct model_arch *owned; /* the model read from --model-config; estimate_free */
	const struct gpu_type *gpu;
	enum quant quant;
	enum quant kv;
	int64_t context;
	int64_t batch;
	int tp;                        /* the degree everything below is for */
	int min_tp;                    /* smallest of 1, 2, 4, 8 that fits one sequence */
	double weights_bytes;          /* whole model */
	double kv_bytes_per_token;     /* whole model (all GPUs of the group) */
	double kv_bytes;               /* kv_bytes_per_token x context x batch */
	struct footprint fp;           /* per GPU at tp, on the whole card */
	int64_t max_sequences;         /* of `context` tokens, at tp */
	struct roofline_terms prefill; /* `context` prompt tokens, nothing cached */
	struct roofline_terms decode;  /* one token for `batch` sequences at `context` */
};

/* Fills *e.  GP_EINPUT with err naming the flag ("--model: unknown model
 * 'x'; did you mean 'y'?") for an unknown name, a TP degree that does not
 * divide the attention heads, or a model that does not fit (the message then
 * names the smallest TP degree, or the quantization, that does). */
int estimate_compute(const struct estimate_request *req, struct estimate *e, struct gp_err *err);

/* Frees what estimate_compute read (a --model-config model). */
void estimate_free(struct estimate *e);

/* A readable report with units (GB and GiB). */
void estimate_write_text(FILE *out, const struct estimate *e);

/* One JSON object, keys in a fixed order: model, quant, kv_cache, gpu,
 * context, batch, tp, params, active_params, gpu_memory_bytes, weights_bytes,
 * kv_bytes_per_token, kv_bytes, overhead_bytes_per_gpu, min_tensor_parallel,
 * weights_bytes_per_gpu, kv_capacity_bytes, kv_capacity_tokens,
 * max_sequences, batch_fits, prefill_s, prefill_bound, decode_step_s,
 * decode_bound. */
void estimate_write_json(FILE *out, const struct estimate *e);

/* --- the first cut of a service (estimate_fleet.c) ---------------------- */

/* A service's traffic and SLO: Poisson arrivals, lognormal token counts. */
struct estimate_traffic {
	double rate;                       /* --rate, requests/s (> 0) */
	double prompt_mean, prompt_sigma;  /* --prompt, --prompt-sigma */
	double output_mean, output_sigma;  /* --output, --output-sigma */
	double ttft_s, tpot_s, percentile; /* --ttft, --tpot (0: none), --percentile */
	const char *const *prices;         /* --price TYPE=USD, n_prices of them */
	size_t n_prices;
	bool disaggregated; /* --disaggregated: prefill and decode workers */
	const char *link;   /* --link: nvlink, infiniband (default), ethernet */
};

#define ESTIMATE_DEFAULT_PROMPT     1000
#define ESTIMATE_DEFAULT_OUTPUT     200
#define ESTIMATE_DEFAULT_SIGMA      1.0
#define ESTIMATE_DEFAULT_PERCENTILE 99

/* The first cut (firstcut.h) of the service on the request's GPU type, or on
 * every catalog GPU type when gpu is NULL (--compare-gpus), written as text
 * or JSON, labelled as an estimate.  GP_EINPUT for an unknown name or a bad
 * --price; a GPU type the service cannot run on is a row saying why. */
int estimate_fleet(const struct estimate_request *req, const struct estimate_traffic *t, bool json,
		   FILE *out, struct gp_err *err);

/* A group of a routed service (--route GPU:MAX,...,GPU): its GPU type, the
 * prompts its router sends it (prompt_lo < tokens <= prompt_hi; prompt_lo -1
 * for the first, prompt_hi +inf for the last), and from the lognormal of the
 * prompts, its share of the requests, their mean and their tail at the
 * percentile (estimate_route.c). */
#define ESTIMATE_MAX_GROUPS 8
struct estimate_group {
	const struct gpu_type *gpu;
	double prompt_lo, prompt_hi;
	double share, prompt_mean, prompt_tail;
};

/* Parses --route into out (at most ESTIMATE_MAX_GROUPS) and works out each
 * group's share, mean and tail prompt.  GP_EINPUT for a bad list. */
int estimate_route_groups(const struct estimate_traffic *t, const char *route,
			  struct estimate_group *out, size_t *n, struct gp_err *err);

/* The first cut of the routed service: each group on its share of the rate
 * and its prompts, then the fleet's GPUs and $/h, as text. */
int estimate_route(const struct estimate_request *req, const struct estimate_traffic *t,
		   const char *route, FILE *out, struct gp_err *err);

/* The same with --disaggregated (estimate_disagg.c): prefill and decode
 * workers sized separately (firstcut_disagg_size), one row per GPU type.
 * GP_EINPUT for an unknown --link, besides estimate_fleet's. */
int estimate_disagg(const struct estimate_request *req, const struct estimate_traffic *t, bool json,
		    FILE *out, struct gp_err *err);

#endif
