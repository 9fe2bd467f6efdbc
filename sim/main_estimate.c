/*
 * main_estimate.c - `gpuplan estimate` on the command line: one model (a
 * catalog name or a config.json) on one GPU type.
 */
#include "gpuplan/estimate.h"

#include <stdio.h>

#include "main_int.h"

int cmd_estimate(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct estimate_request req = {.context = ESTIMATE_DEFAULT_CONTEXT,
				       .batch = ESTIMATE_DEFAULT_BATCH};
	int64_t tp = 0;
	bool json = false;
	const struct cli_opt opts[] = {
		{.name = "--model",
		 .kind = CLI_NAME,
		 .target = &req.model,
		 .meta = "M",
		 .help = "llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b, llama-3-70b,\nmistral-7b"},
		{.name = "--model-config",
		 .kind = CLI_PATH,
		 .target = &req.model_config,
		 .meta = "PATH",
		 .help = "a Hugging Face config.json instead of --model (models/*.json)"},
		{.name = "--quant",
		 .kind = CLI_NAME,
		 .target = &req.quant,
		 .meta = "Q",
		 .required = true,
		 .help = "weights: fp16, bf16, fp8, int8, int4"},
		{.name = "--gpu",
		 .kind = CLI_NAME,
		 .target = &req.gpu,
		 .meta = "G",
		 .required = true,
		 .help = "a catalog GPU type: A100-80GB, H100-80GB, L40S, L4, T4, ..."},
		{.name = "--context",
		 .kind = CLI_INT,
		 .target = &req.context,
		 .meta = "N",
		 .help = "tokens per sequence, prompt + output (default 4096)",
		 .lo = 1,
		 .hi = 100000000,
		 .expects = "an integer from 1 to 100000000"},
		{.name = "--batch",
		 .kind = CLI_INT,
		 .target = &req.batch,
		 .meta = "B",
		 .help = "sequences decoding together (default 1)",
		 .lo = 1,
		 .hi = 100000000,
		 .expects = "an integer from 1 to 100000000"},
		{.name = "--tp",
		 .kind = CLI_INT,
		 .target = &tp,
		 .meta = "N",
		 .help = "tensor-parallel degree (default: the smallest that fits)",
		 .lo = 1,
		 .hi = 1024,
		 .expects = "an integer from 1 to 1024"},
		{.name = "--kv-cache",
		 .kind = CLI_NAME,
		 .target = &req.kv_cache,
		 .meta = "Q",
		 .help = "KV-cache type (default: fp16; bf16 for bf16 weights)"},
		{.name = "--json",
		 .kind = CLI_FLAG,
		 .target = &json,
		 .help = "print one JSON object"},
	};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	req.tp = (int)tp;
	struct estimate e;
	struct gp_err err;
	if ((rc = estimate_compute(&req, &e, &err))) {
		estimate_free(&e);
		return fail(rc, &err, false);
	}
	if (json)
		estimate_write_json(stdout, &e);
	else
		estimate_write_text(stdout, &e);
	estimate_free(&e);
	return 0;
}
