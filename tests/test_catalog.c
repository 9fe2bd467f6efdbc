/* test_catalog.c - the built-in GPU, MIG and model tables (catalog.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "gpuplan/catalog.h"

#define MiB (1024.0 * 1024.0)

/* Datasheet figures (dense; FP16 tensor for T4 and V100); memory is NVML's
 * total in MiB, as nvidia-smi and GFD's nvidia.com/gpu.memory label report it
 * (docs/sharing.md lists the outputs): an L4 is 23,034 MiB, an L40S 46,068,
 * an H100 80GB HBM3 81,559, an A10G or A10 23,028, a T4 15,360. */
static const struct {
	const char *name;
	const char *product;
	double memory_mib;
	double bandwidth_gbs;
	double bf16_tflops;
	double int8_tops;
	int sms;
	size_t n_mig;
} expected[] = {
	{"A100-40GB", "NVIDIA-A100-SXM4-40GB", 40960, 1555, 312, 624, 108, 6},
	{"A100-80GB", "NVIDIA-A100-SXM4-80GB", 81920, 2039, 312, 624, 108, 6},
	{"H100-80GB", "NVIDIA-H100-80GB-HBM3", 81559, 3350, 989, 1979, 132, 6},
	{"H200-141GB", "NVIDIA-H200", 143771, 4800, 989, 1979, 132, 6},
	{"L40S", "NVIDIA-L40S", 46068, 864, 362, 733, 142, 0},
	{"L4", "NVIDIA-L4", 23034, 300, 121, 242, 58, 0},
	{"A10", "NVIDIA-A10", 23028, 600, 125, 250, 72, 0},
	{"T4", "Tesla-T4", 15360, 320, 65, 130, 40, 0},
	{"V100-16GB", "Tesla-V100-SXM2-16GB", 16384, 900, 125, 62, 80, 0},
	{"V100-32GB", "Tesla-V100-SXM2-32GB", 32768, 900, 125, 62, 80, 0},
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

Test(catalog_gpu, every_gpu_matches_its_datasheet)
{
	for (size_t i = 0; i < N_EXPECTED; i++) {
		const struct gpu_type *g = catalog_gpu(expected[i].name);
		cr_assert_not_null(g, "%s missing", expected[i].name);
		cr_assert_str_eq(g->name, expected[i].name);
		cr_assert_str_eq(g->product, expected[i].product);
		cr_assert_eq(g->memory_bytes, expected[i].memory_mib * MiB, "%s memory", g->name);
		cr_assert_eq(g->hbm_bandwidth, expected[i].bandwidth_gbs * 1e9, "%s bandwidth",
			     g->name);
		cr_assert_eq(g->bf16_tflops, expected[i].bf16_tflops, "%s bf16", g->name);
		cr_assert_eq(g->int8_tops, expected[i].int8_tops, "%s int8", g->name);
		cr_assert_eq(g->sm_count, expected[i].sms, "%s SMs", g->name);
		cr_assert_eq(g->n_mig, expected[i].n_mig, "%s MIG profiles", g->name);
		cr_assert_eq(g->mig == NULL, expected[i].n_mig == 0, "%s MIG table", g->name);
	}
}

/* The ten above and the four of test_gpus.c (B200, GB200, A10G, MI300X). */
Test(catalog_gpu, the_table_holds_exactly_the_fourteen_documented_gpus)
{
	cr_assert_eq(catalog_gpu_count(), N_EXPECTED + 4);
	for (size_t i = 0; i < catalog_gpu_count(); i++) {
		const struct gpu_type *g = catalog_gpu_at(i);
		cr_assert_not_null(g);
		cr_assert_eq(catalog_gpu(g->name), g, "%s is found by its own name", g->name);
	}
	cr_assert_null(catalog_gpu_at(catalog_gpu_count()));
}

Test(catalog_gpu, lookup_ignores_case_but_not_spelling)
{
	cr_assert_eq(catalog_gpu("a100-80gb"), catalog_gpu("A100-80GB"));
	cr_assert_eq(catalog_gpu("l40s"), catalog_gpu("L40S"));
	cr_assert_null(catalog_gpu("A100"));
	cr_assert_null(catalog_gpu("A100-80GB "));
	cr_assert_null(catalog_gpu("B300"));
	cr_assert_null(catalog_gpu(""));
	cr_assert_null(catalog_gpu(NULL));
}

/* Profiles as NVIDIA's MIG user guide lists them: name, compute sevenths,
 * memory eighths, max; memory in MiB as NVML reports it (GFD's
 * nvidia.com/mig-<profile>.memory, nvidia-smi mig -lgip's GiB x 1024). */
struct want_mig {
	const char *name;
	int g, m, max;
	double mib;
};

static void check_mig(const char *gpu, const struct want_mig *want, size_t n)
{
	const struct gpu_type *g = catalog_gpu(gpu);
	cr_assert_not_null(g);
	cr_assert_eq(g->n_mig, n, "%s profile count", gpu);
	for (size_t i = 0; i < n; i++) {
		const struct mig_profile *p = catalog_mig_profile(g, want[i].name);
		cr_assert_not_null(p, "%s %s missing", gpu, want[i].name);
		cr_assert_eq(p, &g->mig[i], "%s profiles in documented order", gpu);
		cr_assert_eq(p->compute_slices, want[i].g, "%s %s compute", gpu, p->name);
		cr_assert_eq(p->memory_slices, want[i].m, "%s %s memory slices", gpu, p->name);
		cr_assert_eq(p->max_instances, want[i].max, "%s %s max", gpu, p->name);
		cr_assert_eq(p->memory_bytes, want[i].mib * MiB, "%s %s bytes", gpu, p->name);
		/* A profile holds at most its share of the card. */
		cr_assert_leq(p->memory_bytes, g->memory_bytes * p->memory_slices / 8.0);
	}
}

/* GFD on an A100-SXM4-40GB (GPU Operator docs, "GPU Operator with MIG"):
 * mig-1g.5gb.memory 4864, mig-2g.10gb 9984, mig-3g.20gb 20096; nvidia-smi
 * (driver 580) shows a 4g.20gb at 20096 MiB; -lgip lists 7g.40gb at 39.50 GiB. */
Test(catalog_mig, a100_40gb_profiles_report_nvml_memory)
{
	static const struct want_mig w[] = {
		{"1g.5gb", 1, 1, 7, 4864},   {"1g.10gb", 1, 2, 4, 9984},
		{"2g.10gb", 2, 2, 3, 9984},  {"3g.20gb", 3, 4, 2, 20096},
		{"4g.20gb", 4, 4, 1, 20096}, {"7g.40gb", 7, 8, 1, 40448},
	};
	check_mig("A100-40GB", w, sizeof w / sizeof w[0]);
}

/* GFD on an A100-80GB (driver 515): mig-1g.10gb.memory 9728, mig-2g.20gb
 * 19968, mig-3g.40gb 40192; the same card's -lgip lists 7g.80gb at 79.00 GiB.
 * Issue 39: 1g.10gb 9,728, 2g.20gb 19,968, 3g.40gb 40,192. */
Test(catalog_mig, a100_80gb_profiles_report_nvml_memory)
{
	static const struct want_mig w[] = {
		{"1g.10gb", 1, 1, 7, 9728},  {"1g.20gb", 1, 2, 4, 19968},
		{"2g.20gb", 2, 2, 3, 19968}, {"3g.40gb", 3, 4, 2, 40192},
		{"4g.40gb", 4, 4, 1, 40192}, {"7g.80gb", 7, 8, 1, 80896},
	};
	check_mig("A100-80GB", w, sizeof w / sizeof w[0]);
}

/* GFD on an H100 80GB HBM3 (GPU Operator docs): mig-1g.10gb.memory 9984,
 * mig-2g.20gb 20096; -lgip: 1g.20gb 19.62, 3g.40gb and 4g.40gb 39.50,
 * 7g.80gb 79.25 GiB (MIG User Guide, H100 profiles). */
Test(catalog_mig, h100_80gb_profiles_report_nvml_memory)
{
	static const struct want_mig w[] = {
		{"1g.10gb", 1, 1, 7, 9984},  {"1g.20gb", 1, 2, 4, 20096},
		{"2g.20gb", 2, 2, 3, 20096}, {"3g.40gb", 3, 4, 2, 40448},
		{"4g.40gb", 4, 4, 1, 40448}, {"7g.80gb", 7, 8, 1, 81152},
	};
	check_mig("H100-80GB", w, sizeof w / sizeof w[0]);
}

/* No public NVML figure per H200 profile yet: eighths of 143,771 MiB. */
Test(catalog_mig, h200_profiles_are_eighths_of_its_nvml_total)
{
	static const struct want_mig w[] = {
		{"1g.18gb", 1, 1, 7, 17971}, {"1g.35gb", 1, 2, 4, 35942},
		{"2g.35gb", 2, 2, 3, 35942}, {"3g.71gb", 3, 4, 2, 71885},
		{"4g.71gb", 4, 4, 1, 71885}, {"7g.141gb", 7, 8, 1, 143771},
	};
	check_mig("H200-141GB", w, sizeof w / sizeof w[0]);
}

Test(catalog_mig, every_profile_fits_seven_compute_and_eight_memory_slices)
{
	for (size_t i = 0; i < catalog_gpu_count(); i++) {
		const struct gpu_type *g = catalog_gpu_at(i);
		for (size_t k = 0; k < g->n_mig; k++) {
			const struct mig_profile *p = &g->mig[k];
			cr_assert(p->compute_slices >= 1 && p->compute_slices <= 7, "%s %s",
				  g->name, p->name);
			cr_assert(p->memory_slices >= 1 && p->memory_slices <= 8, "%s %s", g->name,
				  p->name);
			cr_assert(p->max_instances >= 1);
			cr_assert_leq(p->max_instances * p->compute_slices, 7, "%s %s", g->name,
				      p->name);
			cr_assert_leq(p->max_instances * p->memory_slices, 8, "%s %s", g->name,
				      p->name);
			cr_assert_leq(p->memory_bytes * p->max_instances, g->memory_bytes);
		}
	}
}

Test(catalog_mig, profile_name_starts_with_its_compute_slices)
{
	for (size_t i = 0; i < catalog_gpu_count(); i++) {
		const struct gpu_type *g = catalog_gpu_at(i);
		for (size_t k = 0; k < g->n_mig; k++)
			cr_assert_eq(g->mig[k].name[0] - '0', g->mig[k].compute_slices, "%s",
				     g->mig[k].name);
	}
}

Test(catalog_mig, unknown_profiles_and_non_mig_gpus_give_null)
{
	cr_assert_null(catalog_mig_profile(catalog_gpu("A100-80GB"), "1g.5gb"));
	cr_assert_null(catalog_mig_profile(catalog_gpu("A100-40GB"), "3g.40gb"));
	cr_assert_null(catalog_mig_profile(catalog_gpu("L4"), "1g.10gb"));
	cr_assert_null(catalog_mig_profile(NULL, "1g.10gb"));
	cr_assert_null(catalog_mig_profile(catalog_gpu("H100-80GB"), NULL));
	cr_assert_not_null(catalog_mig_profile(catalog_gpu("H100-80GB"), "3G.40GB"));
}

/* ---- models ---------------------------------------------------------- */

Test(catalog_model, architectures_match_their_config_json)
{
	static const struct {
		const char *name;
		double params;
		int layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
	} w[] = {
		{"llama-2-7b", 6.74e9, 32, 4096, 32, 32, 128, 11008, 32000},
		{"llama-2-13b", 13.0e9, 40, 5120, 40, 40, 128, 13824, 32000},
		{"llama-2-70b", 69.0e9, 80, 8192, 64, 8, 128, 28672, 32000},
		{"llama-3-8b", 8.03e9, 32, 4096, 32, 8, 128, 14336, 128256},
		{"llama-3-70b", 70.6e9, 80, 8192, 64, 8, 128, 28672, 128256},
		{"mistral-7b", 7.24e9, 32, 4096, 32, 8, 128, 14336, 32000},
	};
	cr_assert_eq(catalog_model_count(), sizeof w / sizeof w[0]);
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		const struct model_arch *m = catalog_model(w[i].name);
		cr_assert_not_null(m, "%s missing", w[i].name);
		cr_assert_eq(m, catalog_model_at(i));
		cr_assert_eq(m->params, w[i].params, "%s params", m->name);
		cr_assert_eq(m->layers, w[i].layers, "%s layers", m->name);
		cr_assert_eq(m->hidden, w[i].hidden, "%s hidden", m->name);
		cr_assert_eq(m->heads, w[i].heads, "%s heads", m->name);
		cr_assert_eq(m->kv_heads, w[i].kv_heads, "%s kv_heads", m->name);
		cr_assert_eq(m->head_dim, w[i].head_dim, "%s head_dim", m->name);
		cr_assert_eq(m->ffn, w[i].ffn, "%s ffn", m->name);
		cr_assert_eq(m->vocab, w[i].vocab, "%s vocab", m->name);
		cr_assert_eq(m->heads * m->head_dim, m->hidden, "%s heads x head_dim = hidden",
			     m->name);
		cr_assert_eq(m->heads % m->kv_heads, 0, "%s GQA groups are whole", m->name);
	}
	cr_assert_null(catalog_model_at(catalog_model_count()));
}

Test(catalog_model, lookup_ignores_case)
{
	cr_assert_eq(catalog_model("Llama-2-13B"), catalog_model("llama-2-13b"));
	cr_assert_eq(catalog_model("MISTRAL-7B"), catalog_model("mistral-7b"));
	cr_assert_null(catalog_model("llama-2"));
	cr_assert_null(catalog_model("gpt-4"));
	cr_assert_null(catalog_model(NULL));
}

Test(catalog_model, fp16_weights_match_the_design_examples)
{
	/* docs/sharing.md: 70B FP16 about 140 GB, 13B about 26 GB, 7B about 14 GB. */
	cr_assert_float_eq(catalog_model("llama-2-70b")->params * 2 / 1e9, 138.0, 3.0);
	cr_assert_float_eq(catalog_model("llama-2-13b")->params * 2 / 1e9, 26.0, 0.5);
	cr_assert_float_eq(catalog_model("llama-2-7b")->params * 2 / 1e9, 13.5, 0.5);
}
