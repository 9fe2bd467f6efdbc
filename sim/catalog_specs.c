/*
 * catalog_specs.c - the GPU table's second half (catalog_specs.h): FP8 and
 * FP4 peaks, power, the tensor-parallel link and a reference price.  Data;
 * docs/gpus.md gives the source of every figure.
 *
 * FP8 and FP4 are dense (no sparsity), like the BF16 and INT8 columns of
 * catalog.c.  Ada and Hopper (L4, L40S, H100, H200) have FP8 tensor cores at
 * their INT8 rate; Blackwell (B200, GB200) adds FP4 at twice FP8; MI300X has
 * FP8 at its INT8 rate and no FP4; Ampere, Turing and Volta have neither.
 *
 * Power.  tdp_watts is the board's limit (datasheet TDP or TGP).  idle_watts
 * is what a GPU draws while a server holds it and computes nothing: the
 * clocks stay in P0 with the weights resident, which is well above the
 * card's P8 idle.  Public nvidia-smi / rocm-smi logs of such GPUs show 145 W
 * of 700 on an H100 (72 GiB held, 0 %), 192 W of 1,000 on a B200, 163 W of
 * 1,200 on a GB200 and 134 W of 750 on an MI300X: 14-21 % of TDP.  For the
 * cards without such a log the table takes 20 % of TDP.
 *
 * Link, per direction, nominal (roofline.c takes 80 % of it): NVLink 3
 * (A100) 300 GB/s, NVLink 4 (H100, H200) 450, NVLink 5 (B200, GB200) 900,
 * NVLink 2 (V100) 150; Infinity Fabric on MI300X, 7 links x 64 GB/s = 448;
 * PCIe Gen4 x16 32 (L40S, L4, A10, A10G); PCIe Gen3 x16 16 (T4).  Latency
 * per all-reduce: 8 us over NVLink or Infinity Fabric, 20 us over PCIe.
 *
 * Prices are reference on-demand dollars per GPU-hour, to compare types
 * when no pool price is given (`estimate --compare-gpus --price` overrides
 * them): inference-fleet-sim's hardware catalog for A100-80GB, L40S, H100,
 * H200, B200 and GB200 (so that docs/benchmarks.md prices both tools
 * alike), AWS on-demand instance prices divided by their GPUs for L4
 * (g6.xlarge), A10G (g5.xlarge), T4 (g4dn.xlarge), V100 (p3.2xlarge,
 * p3dn.24xlarge) and A100-40GB (p4d.24xlarge), Lambda's for A10, Azure's
 * ND MI300X v5 for MI300X.
 */
#include "gpuplan/catalog_specs.h"

#include <string.h>

static const struct gpu_specs specs[] = {
	/* name        FP8   FP4    idle W  TDP W  link GB/s  us   $/h */
	{"A100-40GB", 0, 0, 80, 400, 300, 8, 4.10},
	{"A100-80GB", 0, 0, 80, 400, 300, 8, 2.21},
	{"H100-80GB", 1979, 0, 145, 700, 450, 8, 4.02},
	{"H200-141GB", 1979, 0, 140, 700, 450, 8, 6.00},
	{"B200", 4500, 9000, 192, 1000, 900, 8, 8.00},
	{"GB200", 5000, 10000, 163, 1200, 900, 8, 10.00},
	{"L40S", 733, 0, 70, 350, 32, 20, 1.80},
	{"L4", 242, 0, 14.4, 72, 32, 20, 0.805},
	{"A10", 0, 0, 30, 150, 32, 20, 0.75},
	{"A10G", 0, 0, 60, 300, 32, 20, 1.006},
	{"T4", 0, 0, 14, 70, 16, 20, 0.526},
	{"V100-16GB", 0, 0, 60, 300, 150, 8, 3.06},
	{"V100-32GB", 0, 0, 60, 300, 150, 8, 3.90},
	{"MI300X", 2615, 0, 134, 750, 448, 8, 6.00},
};

/*
 * Links between a prefill and a decode server:
 *   infiniband  NDR 400 Gb/s = 50 GB/s, one ConnectX-7 per GPU as in a DGX
 *               H100 (NVIDIA DGX H100 User Guide, "Networking"); 10 us
 *   ethernet    100 Gb/s = 12.5 GB/s of RoCE per GPU; 20 us
 *   nvlink      the GPU type's NVLink, for servers inside one NVLink domain
 *               (an HGX node, a GB200 NVL72 rack)
 */
static const struct link_spec links[] = {
	{"nvlink", 0, 0},
	{"infiniband", 50, 10},
	{"ethernet", 12.5, 20},
};

const struct link_spec *catalog_link(const char *name)
{
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		if (!strcmp(links[i].name, name))
			return &links[i];
	return NULL;
}

const struct gpu_specs *catalog_gpu_specs(const struct gpu_type *gpu)
{
	if (!gpu)
		return NULL;
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		if (strcmp(specs[i].name, gpu->name) == 0)
			return &specs[i];
	return NULL;
}

double catalog_gpu_power(const struct gpu_specs *s, double u)
{
	if (u < 0)
		u = 0;
	if (u > 1)
		u = 1;
	return s->idle_watts + (s->tdp_watts - s->idle_watts) * u;
}
