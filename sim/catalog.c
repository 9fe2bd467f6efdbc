/*
 * catalog.c - the built-in tables of GPU types, their MIG profiles and LLM
 * architectures (catalog.h, docs/sharing.md).  Everything here is data;
 * the functions only look rows up.
 *
 * GPU memory is what NVML reports as the device's total, in MiB: the figure
 * nvidia-smi shows after the slash and GPU Feature Discovery writes in the
 * node label nvidia.com/gpu.memory, not the card's marketing number.  The
 * HBM cards report their full size, less a little on Hopper (H100 81,559
 * MiB); the GDDR cards report less once ECC is on (an L4 is 23,034 MiB, not
 * 24 GiB).  Each figure's source is in docs/sharing.md ("GPU memory as NVML
 * reports it"); `import` takes the node's label where it differs (a pool's
 * gpu_memory:).
 * Bandwidth is decimal (datasheet GB/s x 10^9).  Throughput is dense (no
 * sparsity): BF16 tensor TFLOPS, or FP16 tensor where the card has no BF16
 * (T4, V100); INT8 TOPS (V100 has no INT8 tensor cores: 62 TOPS via DP4A).
 * Sources: NVIDIA datasheets for A100, H100, H200, L40S, L4, A10, T4, V100,
 * B200 and GB200 (per GPU of HGX B200 and GB200 NVL72), AMD's for MI300X;
 * A10G (AWS's variant of the A10, no NVIDIA datasheet) in docs/gpus.md.
 * FP8, FP4, power and links are in catalog_specs.c.
 */
#include "gpuplan/catalog.h"

#include <ctype.h>
#include <string.h>

#define GBps 1e9

/* MiB as NVML counts them. */
#define MIB(n) ((n)*GP_MIB)

/* A MIG instance's memory is what NVML reports for it (GFD's
 * nvidia.com/mig-<profile>.memory label, nvidia-smi mig -lgip's GiB column x
 * 1024), a little under the profile's name: an A100-80GB's 1g.10gb is 9,728
 * MiB, its 3g.40gb 40,192.  Profiles of the same memory slices report the
 * same memory (1g.20gb and 2g.20gb).  Sources in docs/sharing.md.
 *
 * SMs per instance are what `nvidia-smi mig -lgip` lists: an A100 (108 SMs)
 * gives 14 per compute slice, so 7g has 98 of the 108; an H100 or H200 (132
 * SMs) gives 16, 26, 32, 60, 64 and 132 (NVIDIA MIG User Guide, "Supported
 * MIG Profiles"; nvidia-smi mig -lgip on A100-SXM4-80GB and H100-SXM5-80GB). */
static const struct mig_profile mig_a100_40gb[] = {
	/* name        compute  memory  max  NVML MiB       SMs */
	{"1g.5gb", 1, 1, 7, MIB(4864), 14},   {"1g.10gb", 1, 2, 4, MIB(9984), 14},
	{"2g.10gb", 2, 2, 3, MIB(9984), 28},  {"3g.20gb", 3, 4, 2, MIB(20096), 42},
	{"4g.20gb", 4, 4, 1, MIB(20096), 56}, {"7g.40gb", 7, 8, 1, MIB(40448), 98},
};

static const struct mig_profile mig_a100_80gb[] = {
	/* name        compute  memory  max  NVML MiB       SMs */
	{"1g.10gb", 1, 1, 7, MIB(9728), 14},  {"1g.20gb", 1, 2, 4, MIB(19968), 14},
	{"2g.20gb", 2, 2, 3, MIB(19968), 28}, {"3g.40gb", 3, 4, 2, MIB(40192), 42},
	{"4g.40gb", 4, 4, 1, MIB(40192), 56}, {"7g.80gb", 7, 8, 1, MIB(80896), 98},
};

/* H100-80GB: the A100-80GB's names, Hopper's SM counts and memory. */
static const struct mig_profile mig_h100_80gb[] = {
	/* name        compute  memory  max  NVML MiB       SMs */
	{"1g.10gb", 1, 1, 7, MIB(9984), 16},  {"1g.20gb", 1, 2, 4, MIB(20096), 26},
	{"2g.20gb", 2, 2, 3, MIB(20096), 32}, {"3g.40gb", 3, 4, 2, MIB(40448), 60},
	{"4g.40gb", 4, 4, 1, MIB(40448), 64}, {"7g.80gb", 7, 8, 1, MIB(81152), 132},
};

/* H200: no public NVML figure per profile found yet; memory_slices eighths
 * of the card's 143,771 MiB, rounded down to a MiB, so two 3g.71gb fit. */
#define EIGHTHS(total_mib, slices) MIB((double)((total_mib) * (slices) / 8))
static const struct mig_profile mig_h200[] = {
	/* name        compute  memory  max  MiB                     SMs */
	{"1g.18gb", 1, 1, 7, EIGHTHS(143771, 1), 16},
	{"1g.35gb", 1, 2, 4, EIGHTHS(143771, 2), 26},
	{"2g.35gb", 2, 2, 3, EIGHTHS(143771, 2), 32},
	{"3g.71gb", 3, 4, 2, EIGHTHS(143771, 4), 60},
	{"4g.71gb", 4, 4, 1, EIGHTHS(143771, 4), 64},
	{"7g.141gb", 7, 8, 1, EIGHTHS(143771, 8), 132},
};

/* B200 (148 SMs): `nvidia-smi mig -lgip` with driver 570 (NVIDIA gpu-operator
 * PR 1351, which added 4g.90gb): the memory is what each instance reports,
 * in GiB, not eighths of the card. */
#define GIB(x) ((x)*GP_GIB)
static const struct mig_profile mig_b200[] = {
	/* name         compute  memory  max  bytes        SMs */
	{"1g.23gb", 1, 1, 7, GIB(20.50), 18}, {"1g.45gb", 1, 2, 4, GIB(44.25), 30},
	{"2g.45gb", 2, 2, 3, GIB(44.25), 36}, {"3g.90gb", 3, 4, 2, GIB(89.00), 70},
	{"4g.90gb", 4, 4, 1, GIB(89.00), 72}, {"7g.180gb", 7, 8, 1, GIB(178.50), 148},
};

#define MIG(t) (t), sizeof(t) / sizeof((t)[0])
#define NO_MIG NULL, 0

static const struct gpu_type gpus[] = {
	/* name          product label              NVML MiB    bandwidth     bf16  int8  SMs  MIG */
	{"A100-40GB", "NVIDIA-A100-SXM4-40GB", MIB(40960), 1555 * GBps, 312, 624, 108,
	 MIG(mig_a100_40gb)},
	{"A100-80GB", "NVIDIA-A100-SXM4-80GB", MIB(81920), 2039 * GBps, 312, 624, 108,
	 MIG(mig_a100_80gb)},
	{"H100-80GB", "NVIDIA-H100-80GB-HBM3", MIB(81559), 3350 * GBps, 989, 1979, 132,
	 MIG(mig_h100_80gb)},
	{"H200-141GB", "NVIDIA-H200", MIB(143771), 4800 * GBps, 989, 1979, 132, MIG(mig_h200)},
	{"L40S", "NVIDIA-L40S", MIB(46068), 864 * GBps, 362, 733, 142, NO_MIG},
	{"L4", "NVIDIA-L4", MIB(23034), 300 * GBps, 121, 242, 58, NO_MIG},
	{"A10", "NVIDIA-A10", MIB(23028), 600 * GBps, 125, 250, 72, NO_MIG},
	{"T4", "Tesla-T4", MIB(15360), 320 * GBps, 65, 130, 40, NO_MIG},
	{"V100-16GB", "Tesla-V100-SXM2-16GB", MIB(16384), 900 * GBps, 125, 62, 80, NO_MIG},
	{"V100-32GB", "Tesla-V100-SXM2-32GB", MIB(32768), 900 * GBps, 125, 62, 80, NO_MIG},
	/* docs/gpus.md names the sources of these four (rocm-smi for MI300X). */
	{"B200", "NVIDIA-B200", MIB(183359), 8000 * GBps, 2250, 4500, 148, MIG(mig_b200)},
	{"GB200", "NVIDIA-GB200", MIB(189471), 8000 * GBps, 2500, 5000, 152, NO_MIG},
	{"A10G", "NVIDIA-A10G", MIB(23028), 600 * GBps, 70, 140, 80, NO_MIG},
	{"MI300X", "AMD-Instinct-MI300X", MIB(196592), 5300 * GBps, 1307.4, 2614.9, 304, NO_MIG},
};

/* No experts: the MoE fields of a dense model. */
#define DENSE 0, 0, 0, 0

/* From each model's config.json; params are the published sizes.  None ties
 * its lm_head to the embedding (tie_word_embeddings: false). */
static const struct model_arch models[] = {
	/* name           params   layers hidden heads kv  head_dim ffn    vocab   tied */
	{"llama-2-7b", 6.74e9, 32, 4096, 32, 32, 128, 11008, 32000, false, DENSE},
	{"llama-2-13b", 13.0e9, 40, 5120, 40, 40, 128, 13824, 32000, false, DENSE},
	{"llama-2-70b", 69.0e9, 80, 8192, 64, 8, 128, 28672, 32000, false, DENSE},
	{"llama-3-8b", 8.03e9, 32, 4096, 32, 8, 128, 14336, 128256, false, DENSE},
	{"llama-3-70b", 70.6e9, 80, 8192, 64, 8, 128, 28672, 128256, false, DENSE},
	{"mistral-7b", 7.24e9, 32, 4096, 32, 8, 128, 14336, 32000, false, DENSE},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ASCII case-insensitive equality; locale-independent on purpose. */
static bool same_ignoring_case(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return *a == *b;
}

const struct gpu_type *catalog_gpu(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < N_OF(gpus); i++)
		if (strcmp(gpus[i].name, name) == 0)
			return &gpus[i];
	/* Exact match wins; "a100-80gb" is still clearly meant. */
	for (size_t i = 0; i < N_OF(gpus); i++)
		if (same_ignoring_case(gpus[i].name, name))
			return &gpus[i];
	return NULL;
}

size_t catalog_gpu_count(void) { return N_OF(gpus); }

const struct gpu_type *catalog_gpu_at(size_t i) { return i < N_OF(gpus) ? &gpus[i] : NULL; }

const struct mig_profile *catalog_mig_profile(const struct gpu_type *gpu, const char *name)
{
	if (!gpu || !name)
		return NULL;
	for (size_t i = 0; i < gpu->n_mig; i++)
		if (same_ignoring_case(gpu->mig[i].name, name))
			return &gpu->mig[i];
	return NULL;
}

const struct model_arch *catalog_model(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < N_OF(models); i++)
		if (same_ignoring_case(models[i].name, name))
			return &models[i];
	return NULL;
}

size_t catalog_model_count(void) { return N_OF(models); }

const struct model_arch *catalog_model_at(size_t i) { return i < N_OF(models) ? &models[i] : NULL; }
