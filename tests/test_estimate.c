/*
 * test_estimate.c - `gpuplan estimate` (estimate.h): the figures it reports,
 * its located errors, and bin/gpuplan's text and JSON output and exit codes
 * (run from the repository root, as `make test` does).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "gpuplan/estimate.h"

static struct estimate_request request(const char *m, const char *q, const char *g)
{
	return (struct estimate_request){
		.model = m, .quant = q, .gpu = g, .context = 4096, .batch = 1};
}

Test(estimate, llama_2_70b_fp16_needs_two_a100_80gb)
{
	struct estimate_request req = request("llama-2-70b", "fp16", "A100-80GB");
	struct estimate e;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(estimate_compute(&req, &e, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(e.weights_bytes, 138e9);
	cr_assert_eq(e.kv_bytes_per_token, 327680);
	cr_assert_eq(e.kv_bytes, 327680.0 * 4096);
	cr_assert_eq(e.min_tp, 2);
	cr_assert_eq(e.tp, 2);
	cr_assert_eq(e.fp.kv_tokens, 5627 * 16);
	cr_assert_eq(e.max_sequences, 21);
	cr_assert_gt(e.prefill.compute_s, e.prefill.memory_s);
	cr_assert_gt(e.decode.memory_s, e.decode.compute_s);
	cr_assert_gt(e.decode.comm_s, 0);
}

Test(estimate, names_ignore_case_and_defaults_apply)
{
	struct estimate_request req = request("Llama-3-8B", "INT4", "l4");
	struct estimate e;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(estimate_compute(&req, &e, &err), GP_OK, "%s", err.msg);
	cr_assert_str_eq(e.model->name, "llama-3-8b");
	cr_assert_str_eq(e.gpu->name, "L4");
	cr_assert_eq(e.quant, QUANT_INT4);
	cr_assert_eq(e.kv, QUANT_FP16);
	cr_assert_eq(e.tp, 1);
	req.kv_cache = "fp8";
	req.tp = 2;
	req.batch = 8;
	cr_assert_eq(estimate_compute(&req, &e, &err), GP_OK, "%s", err.msg);
	cr_assert_eq(e.kv, QUANT_FP8);
	cr_assert_eq(e.kv_bytes_per_token, 65536);
	cr_assert_eq(e.kv_bytes, 65536.0 * 4096 * 8);
	cr_assert_eq(e.tp, 2, "a larger TP than needed is allowed");
	cr_assert_eq(e.min_tp, 1);
}

static void expect_error(struct estimate_request req, const char *msg)
{
	struct estimate e;
	struct gp_err err GP_ERR_SCOPE = {0};
	cr_assert_eq(estimate_compute(&req, &e, &err), GP_EINPUT, "expected: %s", msg);
	cr_assert_str_eq(err.msg, msg);
}

Test(estimate, unknown_names_are_located_at_their_flag_with_a_suggestion)
{
	expect_error(request("llama-2-7", "fp16", "A100-80GB"),
		     "--model: unknown model 'llama-2-7'; did you mean 'llama-2-7b'?");
	/* One GPU type begins with the name: that one, not "A10" two edits away. */
	expect_error(request("llama-3-8b", "fp16", "H100"),
		     "--gpu: unknown GPU type 'H100'; did you mean 'H100-80GB'?");
	expect_error(request("gpt-4", "fp16", "A100-80GB"),
		     "--model: unknown model 'gpt-4'; expected one of llama-2-7b, llama-2-13b, "
		     "llama-2-70b, llama-3-8b, llama-3-70b, mistral-7b");
	expect_error(request("llama-2-7b", "int3", "A100-80GB"),
		     "--quant: unknown quantization 'int3'; did you mean 'int8'?");
	expect_error(request("llama-2-7b", "fp16", "A100"),
		     "--gpu: unknown GPU type 'A100'; did you mean 'A100-40GB' or 'A100-80GB'?");
	expect_error(request("llama-2-7b", "fp16", "H100-80G"),
		     "--gpu: unknown GPU type 'H100-80G'; did you mean 'H100-80GB'?");
	struct estimate_request req = request("llama-2-7b", "fp16", "T4");
	req.kv_cache = "fp32";
	expect_error(req, "--kv-cache: unknown KV-cache type 'fp32'; did you mean 'fp16'?");
}

Test(estimate, a_model_that_does_not_fit_names_the_smallest_tp_or_quantization)
{
	struct estimate_request req = request("llama-2-70b", "fp16", "A100-80GB");
	req.tp = 1;
	expect_error(req, "--tp 1: llama-2-70b in fp16 does not fit on 1 x A100-80GB: one GPU "
			  "needs 128.52 GiB of weights + 2.00 GiB runtime + 1.25 GiB of KV for a "
			  "sequence of 4096 tokens = 131.77 GiB and has 80.00 GiB; the smallest "
			  "tensor-parallel degree that fits is 2");
	req = request("llama-2-70b", "fp16", "T4");
	expect_error(req,
		     "--quant fp16: llama-2-70b does not fit on T4 at any tensor-parallel "
		     "degree up to 8 (at --tp 8, one GPU needs 16.07 GiB of weights + 2.00 GiB "
		     "runtime + 0.16 GiB of KV for a sequence of 4096 tokens = 18.22 GiB and "
		     "has 15.00 GiB); --quant int8 fits at --tp 8");
	req.tp = 3;
	expect_error(req, "--tp 3: must be a positive divisor of the 64 attention heads of "
			  "llama-2-70b");
}

/* --- bin/gpuplan ---------------------------------------------------------- */

static char out[8192];

/* Runs bin/gpuplan with args, stdout and stderr into out; returns the exit code. */
static int gpuplan(const char *args)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "bin/gpuplan %s 2>&1", args);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	int status = pclose(p);
	cr_assert(WIFEXITED(status), "%s", cmd);
	return WEXITSTATUS(status);
}

static void expect_key(const char *key_value)
{
	cr_assert_not_null(strstr(out, key_value), "'%s' missing from:\n%s", key_value, out);
}

Test(estimate_cli, json_has_the_documented_keys_in_order)
{
	cr_assert_eq(gpuplan("estimate --model llama-2-70b --quant fp16 --gpu A100-80GB --json"), 0,
		     "%s", out);
	static const char *const keys[] = {
		"\"model\": \"llama-2-70b\"",
		"\"quant\": \"fp16\"",
		"\"kv_cache\": \"fp16\"",
		"\"gpu\": \"A100-80GB\"",
		"\"context\": 4096",
		"\"batch\": 1",
		"\"tp\": 2",
		"\"params\": 69000000000",
		"\"gpu_memory_bytes\": 85899345920",
		"\"weights_bytes\": 138000000000",
		"\"kv_bytes_per_token\": 327680",
		"\"kv_bytes\": 1342177280",
		"\"overhead_bytes_per_gpu\": 2147483648",
		"\"min_tensor_parallel\": 2",
		"\"weights_bytes_per_gpu\": 69000000000",
		"\"kv_capacity_bytes\": ",
		"\"kv_capacity_tokens\": 90032",
		"\"max_sequences\": 21",
		"\"batch_fits\": true",
		"\"prefill_s\": 1.",
		"\"prefill_bound\": \"compute\"",
		"\"decode_step_s\": 0.04",
		"\"decode_bound\": \"memory\"",
	};
	const char *at = out;
	cr_assert_eq(out[0], '{');
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *hit = strstr(at, keys[i]);
		cr_assert_not_null(hit, "'%s' missing or out of order in:\n%s", keys[i], out);
		at = hit;
	}
	cr_assert_str_eq(out + strlen(out) - 2, "}\n");
}

Test(estimate_cli, options_change_the_figures)
{
	cr_assert_eq(gpuplan("estimate --model llama-2-7b --quant int4 --gpu L4 --context 2048 "
			     "--batch 64 --kv-cache int8 --json"),
		     0, "%s", out);
	expect_key(
		"\"weights_bytes\": 3889736625,"); /* 16-bit embedding and lm_head (footprint.c) */
	expect_key("\"kv_cache\": \"int8\"");
	expect_key("\"kv_bytes_per_token\": 262144,");
	expect_key("\"kv_bytes\": 34359738368,");
	expect_key("\"context\": 2048,");
	expect_key("\"batch\": 64,");
	expect_key("\"batch_fits\": false"); /* 34 GB of KV against 20 GB */
	cr_assert_eq(gpuplan("estimate --model llama-2-70b --quant fp16 --gpu A100-80GB --tp 4 "
			     "--json"),
		     0, "%s", out);
	expect_key("\"tp\": 4,");
	expect_key("\"min_tensor_parallel\": 2,");
}

Test(estimate_cli, text_output_gives_gb_and_gib)
{
	cr_assert_eq(gpuplan("estimate --model llama-2-13b --quant fp16 --gpu A100-40GB"), 0, "%s",
		     out);
	expect_key("llama-2-13b, fp16 weights, fp16 KV cache, on A100-40GB (40 GiB)");
	expect_key("weights              26.00 GB (24.21 GiB)");
	expect_key("KV per token         819,200 B");
	expect_key("min tensor parallel  1");
	expect_key("max sequences        ");
	expect_key("prefill ");
	expect_key("decode step ");
}

/* The weights line adds up as printed: Llama-3-8B keeps its embedding and
 * untied lm_head (128,256 x 4,096 x 2 = 1.05e9) at 2 B; the other 6.98e9
 * params at 0.51953125 B (int4) give 3.63e9 + 2.10e9 = 5.73e9 bytes.  It
 * printed "8.03B params x 0.519531 B" (4.17e9), which no longer matched. */
Test(estimate_cli, quantized_weights_show_the_16_bit_embedding)
{
	cr_assert_eq(gpuplan("estimate --model llama-3-8b --quant int4 --gpu L4"), 0, "%s", out);
	expect_key("weights              5.73 GB (5.33 GiB)  6.98B params x 0.519531 B + 1.05B "
		   "embedding and lm_head x 2 B");
}

Test(estimate_cli, bad_input_exits_2_with_a_located_message)
{
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{"estimate --model llama-2-7 --quant fp16 --gpu T4",
		 "gpuplan: error: --model: unknown model 'llama-2-7'; did you mean 'llama-2-7b'?\n"},
		{"estimate --model llama-2-7b --quant fp4 --gpu T4",
		 "gpuplan: error: --quant: unknown quantization 'fp4'; did you mean 'fp8'?\n"},
		{"estimate --model llama-2-7b --quant fp16 --gpu T5",
		 "gpuplan: error: --gpu: unknown GPU type 'T5'; did you mean 'T4'?\n"},
		{"estimate --model llama-2-70b --quant fp16 --gpu A100-80GB --tp 1",
		 "gpuplan: error: --tp 1: llama-2-70b in fp16 does not fit on 1 x A100-80GB"},
		{"estimate --quant fp16 --gpu T4", "gpuplan: error: estimate: missing --model"},
		{"estimate --model llama-2-7b --gpu T4",
		 "gpuplan: error: estimate: missing --quant"},
		{"estimate --model llama-2-7b --quant fp16 --gpu T4 --context 0",
		 "gpuplan: error: --context expects an integer from 1 to 100000000, got '0'"},
		{"estimate --model llama-2-7b --quant fp16 --gpu T4 --batch x",
		 "gpuplan: error: --batch expects an integer"},
		{"estimate --model llama-2-7b --quant fp16 --gpu T4 --tp",
		 "gpuplan: error: --tp expects an integer"},
		{"estimate --model llama-2-7b --quant fp16 --gpu T4 --bogus",
		 "gpuplan: error: unknown option '--bogus'"},
		{"estimate --model", "gpuplan: error: --model expects a name"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(gpuplan(bad[i].args), 2, "%s:\n%s", bad[i].args, out);
		cr_assert_eq(strncmp(out, bad[i].msg, strlen(bad[i].msg)), 0, "%s:\n%s",
			     bad[i].args, out);
	}
}

Test(estimate_cli, help_is_not_an_error)
{
	cr_assert_eq(gpuplan("estimate --help"), 0, "%s", out);
	expect_key("usage: gpuplan estimate (--model M | --model-config PATH) --quant Q (--gpu G | "
		   "--compare-gpus)");
	cr_assert_eq(gpuplan("--help"), 0, "%s", out);
	expect_key("  estimate (--model M | --model-config PATH)");
}
