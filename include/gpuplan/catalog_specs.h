/*
 * catalog_specs.h - what the GPU table of catalog.h does not hold: the FP8
 * and FP4 tensor peaks, the power a card draws held idle and at its TDP, the
 * link between tensor-parallel peers, and a reference price per GPU-hour
 * (docs/gpus.md gives the source of every figure).  A side table keyed by
 * the catalog's GPU name, so that adding a column does not touch every row
 * of catalog.c; every catalog GPU has a row (test_gpus.c checks it).
 */
#ifndef GPUPLAN_CATALOG_SPECS_H
#define GPUPLAN_CATALOG_SPECS_H

#include "gpuplan/catalog.h"

struct gpu_specs {
	const char *name;       /* the catalog GPU type */
	double fp8_tflops;      /* dense FP8 tensor peak; 0 = no FP8 tensor cores */
	double fp4_tflops;      /* dense FP4 tensor peak; 0 = none */
	double idle_watts;      /* held by a server, not computing (P0, 0 % utilisation) */
	double tdp_watts;       /* board power limit (TDP / TGP) */
	double link_gbps;       /* to a tensor-parallel peer, per direction, nominal */
	double link_latency_us; /* per all-reduce */
	double usd_per_hour;    /* reference on-demand price of one GPU-hour */
};

/* A link a server sends KV caches over to another (disaggregated serving,
 * docs/inference.md): per GPU and direction, nominal, taken at
 * CATALOG_LINK_EFF; gbps 0 (nvlink) means the GPU type's own link above. */
struct link_spec {
	const char *name;
	double gbps;
	double latency_us; /* per transfer; 0 with gbps 0: the GPU type's */
};

#define CATALOG_LINK_EFF 0.8

/* nvlink, infiniband or ethernet; NULL for another name. */
const struct link_spec *catalog_link(const char *name);

/* The row of gpu; NULL only for a GPU type that is not in the catalog. */
const struct gpu_specs *catalog_gpu_specs(const struct gpu_type *gpu);

/* Power of one GPU at utilisation u in [0, 1] (the fraction of time its
 * engines are busy): idle + (TDP - idle) x u, linear between the two, as
 * DCGM's power against GPU-utilisation curves are to first order. */
double catalog_gpu_power(const struct gpu_specs *s, double u);

#endif
