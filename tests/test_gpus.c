/*
 * test_gpus.c - the GPUs added for issue 43 (B200, GB200, A10G, MI300X) with
 * their NVML memory totals, the second half of the GPU table
 * (catalog_specs.h: FP8, FP4, power, links, prices) for every catalog GPU,
 * the B200's MIG profiles, and the peaks the roofline takes from them.
 * Sources are in docs/gpus.md.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "gpuplan/catalog_specs.h"
#include "gpuplan/roofline.h"

#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

static const struct gpu_type *gpu(const char *name)
{
	const struct gpu_type *g = catalog_gpu(name);
	cr_assert_not_null(g, "%s", name);
	return g;
}

/* Datasheets, dense: HGX B200 (per GPU: 2.25 PF BF16, 4.5 PF FP8/INT8, 9 PF
 * FP4, 8 TB/s), GB200 NVL72 (per GPU: 2.5, 5, 10 PF, 8 TB/s), MI300X (1,307.4
 * TF BF16, 2,614.9 FP8/INT8, 5.3 TB/s), A10G (70 TF, 140 TOPS, 600 GB/s).
 * Memory: the NVML total nvidia-smi shows (B200 183,359 MiB, GB200 189,471,
 * A10G 23,028) and rocm-smi's VRAM total for MI300X (206,141,652,992 B =
 * 196,592 MiB). */
static const struct {
	const char *name, *product;
	double mib, gbs, bf16, int8, fp8, fp4;
	int sms;
	size_t n_mig;
	double idle, tdp, link;
} want[] = {
	{"B200", "NVIDIA-B200", 183359, 8000, 2250, 4500, 4500, 9000, 148, 6, 192, 1000, 900},
	{"GB200", "NVIDIA-GB200", 189471, 8000, 2500, 5000, 5000, 10000, 152, 0, 163, 1200, 900},
	{"A10G", "NVIDIA-A10G", 23028, 600, 70, 140, 0, 0, 80, 0, 60, 300, 32},
	{"MI300X", "AMD-Instinct-MI300X", 196592, 5300, 1307.4, 2614.9, 2615, 0, 304, 0, 134, 750,
	 448},
};

Test(gpus, the_new_gpus_match_their_datasheets_and_nvml_totals)
{
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const struct gpu_type *g = gpu(want[i].name);
		const struct gpu_specs *s = catalog_gpu_specs(g);
		cr_assert_not_null(s, "%s specs", g->name);
		cr_assert_str_eq(g->product, want[i].product);
		cr_assert_eq(g->memory_bytes, want[i].mib * MiB, "%s memory", g->name);
		cr_assert_eq(g->hbm_bandwidth, want[i].gbs * 1e9, "%s bandwidth", g->name);
		cr_assert_eq(g->bf16_tflops, want[i].bf16, "%s bf16", g->name);
		cr_assert_eq(g->int8_tops, want[i].int8, "%s int8", g->name);
		cr_assert_eq(s->fp8_tflops, want[i].fp8, "%s fp8", g->name);
		cr_assert_eq(s->fp4_tflops, want[i].fp4, "%s fp4", g->name);
		cr_assert_eq(g->sm_count, want[i].sms, "%s SMs", g->name);
		cr_assert_eq(g->n_mig, want[i].n_mig, "%s MIG", g->name);
		cr_assert_eq(s->idle_watts, want[i].idle, "%s idle", g->name);
		cr_assert_eq(s->tdp_watts, want[i].tdp, "%s TDP", g->name);
		cr_assert_eq(s->link_gbps, want[i].link, "%s link", g->name);
	}
	/* The B200's 180 GB is 178.9 GiB to NVML, not 180 GiB. */
	cr_assert_lt(gpu("B200")->memory_bytes, 180 * GiB);
}

Test(gpus, every_catalog_gpu_has_power_a_link_and_a_price)
{
	for (size_t i = 0; i < catalog_gpu_count(); i++) {
		const struct gpu_type *g = catalog_gpu_at(i);
		const struct gpu_specs *s = catalog_gpu_specs(g);
		cr_assert_not_null(s, "%s has a specs row", g->name);
		cr_assert_str_eq(s->name, g->name);
		cr_assert_gt(s->tdp_watts, s->idle_watts, "%s", g->name);
		/* held idle is 14-21 % of TDP on every card with a public log */
		cr_assert_geq(s->idle_watts, 0.13 * s->tdp_watts, "%s idle", g->name);
		cr_assert_leq(s->idle_watts, 0.21 * s->tdp_watts, "%s idle", g->name);
		cr_assert_gt(s->link_gbps, 0, "%s", g->name);
		cr_assert_gt(s->usd_per_hour, 0, "%s", g->name);
		/* FP8, where present, is the INT8 rate (to 0.1 %); FP4 twice FP8 */
		if (s->fp8_tflops > 0)
			cr_assert_float_eq(s->fp8_tflops, g->int8_tops, g->int8_tops * 1e-3, "%s",
					   g->name);
		if (s->fp4_tflops > 0)
			cr_assert_eq(s->fp4_tflops, 2 * s->fp8_tflops, "%s", g->name);
	}
	struct gpu_type unknown = *gpu("H100-80GB");
	unknown.name = "B300";
	cr_assert_null(catalog_gpu_specs(&unknown));
	cr_assert_null(catalog_gpu_specs(NULL));
}

Test(gpus, power_is_linear_from_held_idle_to_tdp)
{
	const struct gpu_specs *s = catalog_gpu_specs(gpu("H100-80GB"));
	cr_assert_eq(catalog_gpu_power(s, 0), 145);
	cr_assert_eq(catalog_gpu_power(s, 1), 700);
	cr_assert_float_eq(catalog_gpu_power(s, 0.5), 422.5, 1e-9);
	cr_assert_eq(catalog_gpu_power(s, -1), 145, "clamped below");
	cr_assert_eq(catalog_gpu_power(s, 2), 700, "clamped above");
}

/* nvidia-smi mig -lgip on a B200 (driver 570; NVIDIA gpu-operator PR 1351). */
Test(gpus, b200_mig_profiles_are_what_nvidia_smi_lists)
{
	static const struct {
		const char *name;
		int g, m, max, sms;
		double gib;
	} w[] = {
		{"1g.23gb", 1, 1, 7, 18, 20.50}, {"1g.45gb", 1, 2, 4, 30, 44.25},
		{"2g.45gb", 2, 2, 3, 36, 44.25}, {"3g.90gb", 3, 4, 2, 70, 89.00},
		{"4g.90gb", 4, 4, 1, 72, 89.00}, {"7g.180gb", 7, 8, 1, 148, 178.50},
	};
	const struct gpu_type *g = gpu("B200");
	cr_assert_eq(g->n_mig, sizeof w / sizeof w[0]);
	for (size_t i = 0; i < g->n_mig; i++) {
		const struct mig_profile *p = catalog_mig_profile(g, w[i].name);
		cr_assert_not_null(p, "%s", w[i].name);
		cr_assert_eq(p, &g->mig[i], "documented order");
		cr_assert_eq(p->compute_slices, w[i].g);
		cr_assert_eq(p->memory_slices, w[i].m);
		cr_assert_eq(p->max_instances, w[i].max);
		cr_assert_eq(p->sms, w[i].sms, "%s SMs", p->name);
		cr_assert_eq(p->memory_bytes, w[i].gib * GiB, "%s memory", p->name);
		cr_assert_leq(p->memory_bytes * (8 / p->memory_slices), g->memory_bytes,
			      "%s instances fit the card", p->name);
	}
}

Test(gpus, fp8_runs_at_the_fp8_peak_on_blackwell_and_mi300x_and_weight_only_on_a10g)
{
	struct roofline_gpu k;
	roofline_gpu_defaults(gpu("B200"), &k);
	cr_assert(k.fp8);
	cr_assert_eq(roofline_peak_flops(gpu("B200"), &k, QUANT_FP8), 4500e12);
	cr_assert_eq(roofline_peak_flops(gpu("B200"), &k, QUANT_BF16), 2250e12);
	cr_assert_float_eq(k.link_bandwidth, 900e9 * 0.8, 1);
	roofline_gpu_defaults(gpu("MI300X"), &k);
	cr_assert_eq(roofline_peak_flops(gpu("MI300X"), &k, QUANT_FP8), 2615e12);
	cr_assert_float_eq(k.link_bandwidth, 448e9 * 0.8, 1);
	roofline_gpu_defaults(gpu("A10G"), &k);
	cr_assert_not(k.fp8);
	cr_assert_eq(roofline_peak_flops(gpu("A10G"), &k, QUANT_FP8), 70e12);
	cr_assert_eq(roofline_peak_flops(gpu("A10G"), &k, QUANT_INT8), 140e12);
}
