/*
 * main_estimate.c - `gpuplan estimate` on the command line: one model (a
 * catalog name or a config.json) on one GPU type.
 */
#include "gpuplan/estimate.h"
#include "gpuplan/units.h"

#include <stdio.h>
#include <string.h>

#include "main_int.h"

/* --rate: 10/s, 300/m, or a bare number of requests per second. */
static int parse_rate(const char *value, void *target, struct gp_err *err)
{
	double *r = target;
	if ((units_rate(value, r) && units_number(value, r)) || !(*r > 0))
		return gp_errorf(err, GP_EINPUT, "--rate expects %s, got '%s'", UNITS_HINT_RATE,
				 value);
	return GP_OK;
}

/* --ttft, --tpot: a duration, kept in seconds. */
static int parse_seconds(const char *value, void *target, struct gp_err *err)
{
	sim_time t;
	if (units_duration(value, &t) || t <= 0)
		return gp_errorf(err, GP_EINPUT, "expected %s, got '%s'", UNITS_HINT_DURATION,
				 value);
	*(double *)target = sim_seconds(t);
	return GP_OK;
}

static int parse_number(const char *value, void *target, struct gp_err *err)
{
	if (units_number(value, target))
		return gp_errorf(err, GP_EINPUT, "expected a number, got '%s'", value);
	return GP_OK;
}

int cmd_estimate(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct estimate_request req = {.context = ESTIMATE_DEFAULT_CONTEXT,
				       .batch = ESTIMATE_DEFAULT_BATCH};
	int64_t tp = 0, prompt = ESTIMATE_DEFAULT_PROMPT, output = ESTIMATE_DEFAULT_OUTPUT;
	bool json = false, compare = false;
	const char *route = NULL;
	struct estimate_traffic t = {.prompt_sigma = ESTIMATE_DEFAULT_SIGMA,
				     .output_sigma = ESTIMATE_DEFAULT_SIGMA,
				     .percentile = ESTIMATE_DEFAULT_PERCENTILE};
	struct cli_list prices = {0};
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
		{.name = "--rate",
		 .kind = CLI_PARSE,
		 .target = &t.rate,
		 .meta = "R",
		 .parse = parse_rate,
		 .help = "requests/s of a service: print its first-cut size (an estimate)"},
		{.name = "--compare-gpus",
		 .kind = CLI_FLAG,
		 .target = &compare,
		 .help = "the first cut on every catalog GPU type, instead of --gpu"},
		{.name = "--route",
		 .kind = CLI_NAME,
		 .target = &route,
		 .meta = "GPU:MAX,...,GPU",
		 .help = "a routed service: groups by prompt length, each on its GPU type\n"
			 "(L40S:2048,H100-80GB: prompts up to 2048 tokens on L40S, the rest on\n"
			 "H100-80GB); the first cut of each group and of the fleet"},
		{.name = "--prompt",
		 .kind = CLI_INT,
		 .target = &prompt,
		 .meta = "N",
		 .help = "mean prompt tokens, lognormal (default 1000)",
		 .lo = 1,
		 .hi = 10000000,
		 .expects = "an integer from 1 to 10000000"},
		{.name = "--output",
		 .kind = CLI_INT,
		 .target = &output,
		 .meta = "N",
		 .help = "mean output tokens, lognormal (default 200)",
		 .lo = 1,
		 .hi = 10000000,
		 .expects = "an integer from 1 to 10000000"},
		{.name = "--prompt-sigma",
		 .kind = CLI_PARSE,
		 .target = &t.prompt_sigma,
		 .meta = "S",
		 .parse = parse_number,
		 .help = "lognormal sigma of the prompts (default 1)"},
		{.name = "--output-sigma",
		 .kind = CLI_PARSE,
		 .target = &t.output_sigma,
		 .meta = "S",
		 .parse = parse_number,
		 .help = "lognormal sigma of the outputs (default 1)"},
		{.name = "--ttft",
		 .kind = CLI_PARSE,
		 .target = &t.ttft_s,
		 .meta = "D",
		 .parse = parse_seconds,
		 .help = "TTFT bound at the percentile, like 500ms"},
		{.name = "--tpot",
		 .kind = CLI_PARSE,
		 .target = &t.tpot_s,
		 .meta = "D",
		 .parse = parse_seconds,
		 .help = "bound on the time per output token"},
		{.name = "--percentile",
		 .kind = CLI_PARSE,
		 .target = &t.percentile,
		 .meta = "P",
		 .parse = parse_number,
		 .help = "of the TTFT bound and the tail prompt (default 99)"},
		{.name = "--disaggregated",
		 .kind = CLI_FLAG,
		 .target = &t.disaggregated,
		 .help = "with --rate: prefill and decode workers sized separately"},
		{.name = "--link",
		 .kind = CLI_NAME,
		 .target = &t.link,
		 .meta = "L",
		 .help = "of --disaggregated: nvlink, infiniband (default), ethernet"},
		{.name = "--price",
		 .kind = CLI_LIST,
		 .target = &prices,
		 .meta = "TYPE=USD",
		 .help = "price per GPU-hour of a type (default: docs/gpus.md's)"},
	};
	int rc = cli_parse(cmd, opts, N_OPTS(opts), argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	req.tp = (int)tp;
	struct gp_err err GP_ERR_SCOPE = {0};
	if (compare || t.rate > 0 || route) {
		t.prompt_mean = (double)prompt;
		t.output_mean = (double)output;
		t.prices = prices.v;
		t.n_prices = prices.n;
		if (route && (compare || req.gpu || json || t.disaggregated))
			rc = gp_errorf(
				&err, GP_EINPUT,
				"--route names each group's GPU type and prints text; expected "
				"no --gpu, --compare-gpus, --json or --disaggregated beside it");
		else if (route && !(t.rate > 0))
			rc = gp_errorf(&err, GP_EINPUT, "--route needs --rate R");
		else if (route)
			rc = estimate_route(&req, &t, route, stdout, &err);
		else if (compare && req.gpu)
			rc = gp_errorf(&err, GP_EINPUT,
				       "--compare-gpus compares every GPU type; expected no --gpu");
		else if (!(t.rate > 0))
			rc = gp_errorf(&err, GP_EINPUT, "--compare-gpus needs --rate R");
		else if (!compare && !req.gpu)
			rc = gp_errorf(&err, GP_EINPUT,
				       "estimate: missing --gpu (or --compare-gpus)");
		else if (t.disaggregated)
			rc = estimate_disagg(&req, &t, json, stdout, &err);
		else
			rc = estimate_fleet(&req, &t, json, stdout, &err);
		cli_list_free(&prices);
		return rc ? cli_fail(rc, &err, false) : 0;
	}
	cli_list_free(&prices);
	if (!req.gpu) {
		gp_errorf(&err, GP_EINPUT, "estimate: missing --gpu");
		return cli_fail(GP_EINPUT, &err, false);
	}
	struct estimate e;
	if ((rc = estimate_compute(&req, &e, &err))) {
		estimate_free(&e);
		return cli_fail(rc, &err, false);
	}
	if (json)
		estimate_write_json(stdout, &e);
	else
		estimate_write_text(stdout, &e);
	estimate_free(&e);
	return 0;
}
