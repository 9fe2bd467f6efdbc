/*
 * firstcut.h - how many replicas a service needs, in microseconds, from the
 * roofline and a queueing estimate instead of a simulation (docs/inference.md,
 * "A first cut"): each replica's service capacity under continuous batching,
 * the prefill of the tail prompt, and an M/G/c wait for a batch slot.
 *
 * It is an estimate: `gpuplan estimate --compare-gpus` prints it as one, and
 * its answer is what a search should confirm by simulation.  Pure functions
 * over the catalog, footprint and roofline: no allocation, no state.
 */
#ifndef GPUPLAN_FIRSTCUT_H
#define GPUPLAN_FIRSTCUT_H

#include "gpuplan/catalog_specs.h"
#include "gpuplan/footprint.h"
#include "gpuplan/roofline.h"

#define FIRSTCUT_RATE_CLASSES 32 /* classes of a varying rate, equally many requests each */

/* One service: a model in a format on one GPU type, its traffic and SLO. */
struct firstcut_service {
	const struct model_arch *model;
	enum quant weights, kv;
	const struct gpu_type *gpu;
	int tp;                          /* 0: the smallest of 1, 2, 4, 8 that fits */
	double memory_fraction;          /* of each GPU the server preallocates (vLLM's 0.9) */
	int max_batch;                   /* vLLM max_num_seqs (256) */
	int max_batched_tokens;          /* token budget per iteration (2048) */
	double rate;                     /* requests per second */
	double arrival_cv2;              /* squared cv of the gaps between arrivals: 1 for
					  * Poisson (0 is taken as 1) */
	double prompt_mean, prompt_tail; /* tokens; the tail at the SLO percentile */
	double output_mean, output_cv2;  /* tokens; squared coefficient of variation */
	double prompt_cv2;               /* of the prompts (firstcut_disagg_size only) */
	double ttft_slo_s, tpot_slo_s;   /* 0: no bound */
	double percentile;               /* of the SLO, e.g. 99 */
	double usd_per_gpu_hour;         /* 0: the catalog's reference price */
	int n_rate_classes;              /* 0: a steady rate; else the rate each class of
					  * requests arrives at (a trace's minutes), as a
					  * factor of `rate`, equally many requests a class */
	double rate_class[FIRSTCUT_RATE_CLASSES];
};

/* Why a service cannot be sized on the GPU type. */
enum firstcut_verdict {
	FIRSTCUT_OK,
	FIRSTCUT_NO_FIT,     /* the model and one typical request fit no TP degree up to 8 */
	FIRSTCUT_TPOT,       /* one sequence alone decodes slower than the TPOT bound */
	FIRSTCUT_TAIL_PROMPT /* the tail prompt's prefill alone exceeds the TTFT bound */
};

struct firstcut {
	enum firstcut_verdict verdict;
	int tp, replicas, gpus;
	int batch;             /* the most sequences a replica decodes together */
	double capacity_rps;   /* one replica's, at that batch */
	double decode_step_s;  /* at that batch */
	double prefill_tail_s; /* the tail prompt, in chunks beside the running decodes */
	double prefill_wait_s; /* what the waits (a slot, the prefill queue) add to it at
				* the percentile, convolved with the prompts' prefill */
	double wait_tail_s;    /* for a batch slot alone, at the SLO percentile (shown;
				* the TTFT merges it with the prefill queue's) */
	double ttft_tail_s;    /* prefill + prefill_wait + half a decode step */
	double utilisation;    /* of each replica's capacity */
	double duty;           /* share of time a replica is in an iteration */
	double watts;          /* the fleet's GPUs */
	double usd_per_hour;   /* the fleet's GPUs */
	double usd_per_mtok;   /* per million output tokens */
	double tokens_per_joule;
};

/* Sizes s: the fewest replicas whose estimated TTFT at the percentile is
 * within the bound (and whose utilisation is below 95 %).  Returns the
 * verdict, also in out->verdict; the figures are filled for FIRSTCUT_OK. */
enum firstcut_verdict firstcut_size(const struct firstcut_service *s, struct firstcut *out);

/* The same verdict and replicas without the TTFT tail at the answer (its
 * ttft_tail_s and prefill_wait_s are not filled): what `search` starts
 * from, a bisection of the tail the fewer (38 M instructions on the Azure
 * conversation trace's 32 rate classes). */
enum firstcut_verdict firstcut_replicas(const struct firstcut_service *s, struct firstcut *out);

/* The TTFT tail of s on n replicas (the search's bracket uses it); +inf when
 * n replicas are saturated.  out receives the figures at n. */
double firstcut_ttft_tail(const struct firstcut_service *s, int n, struct firstcut *out);

/* The share of requests whose prefill stage (its queue and their own
 * prefill) takes longer than t on n replicas: what firstcut_ttft_tail
 * solves for the percentile.  1 when n replicas are saturated. */
double firstcut_late_share(const struct firstcut_service *s, int n, double t);

/* The rate a replica of s can take (requests a second, s->rate ignored;
 * the rate classes and burstiness kept) with its TTFT tail at the
 * percentile, less tokenization, at t: the load a simulated tail stands
 * for, so a search calibrates the first cut by a probe (search_bracket.c).
 * 0 when an idle replica's tail is longer than t, +inf when t is longer
 * than the tail just below capacity (saturated); NAN when s does not fit. */
double firstcut_load_at_tail(const struct firstcut_service *s, double t);

/* A disaggregated service (firstcut_disagg.c): prefill and decode workers of
 * one GPU type and TP degree, the KV cache sent over a link of this bandwidth
 * (bytes/s per GPU, achieved; 0: the GPU type's NVLink) and latency. */
struct firstcut_disagg {
	enum firstcut_verdict verdict;
	int tp, gpus;
	int prefill_replicas, decode_replicas;
	double prefill_capacity_rps, prefill_utilisation;    /* one worker's; each worker's */
	double wait_tail_s, prefill_tail_s, transfer_tail_s; /* of the tail prompt */
	double ttft_tail_s; /* wait + prefill + transfer + 1.5 first_step_s */
	int batch;          /* a decode worker's, within the TPOT bound */
	double decode_step_s, decode_capacity_rps, decode_utilisation;
	double first_step_s; /* a decode step at the batch a worker holds at the percentile */
};

/* Sizes both roles of s: the fewest decode workers below 95 % of their
 * capacity at a batch within the TPOT bound, the fewest prefill workers
 * whose TTFT tail holds.  The verdict is also in out->verdict. */
enum firstcut_verdict firstcut_disagg_size(const struct firstcut_service *s,
					   double link_bytes_per_s, double link_latency_s,
					   struct firstcut_disagg *out);

/* The p-th percentile (0-100) of a lognormal of this mean and sigma. */
double firstcut_lognormal_quantile(double mean, double sigma, double p);

#endif
