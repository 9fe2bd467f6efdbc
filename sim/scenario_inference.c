/*
 * scenario_inference.c - the keys of inference workloads: replicas and autoscaling,
 * batching, memory, requests, SLOs, and the checks that a server fits its GPUs.
 */
#include "gpuplan/scenario.h"

#include <math.h>
#include <string.h>

#include "gpuplan/footprint.h"
#include "gpuplan/requests.h"
#include "gpuplan/units.h"

#include "scenario_int.h"

/* --- inference workloads ------------------------------------------------- */

/*
 * kind: inference (docs/inference.md).  The keys of
 * a server go to w->inference, allocated with the kind (which is read before
 * the other keys).  finish_inference resolves what depends on several keys:
 * GPUs against tensor_parallel, the KV-cache type, the typical context and
 * whether the model fits a unit of some pool at that TP degree.
 */
#define REQUESTS_HINT                                                                              \
	"{process: poisson, rate: 5/s, prompt_tokens: 1000, output_tokens: 200} or {trace: PATH, " \
	"format: azure}"
#define TOKENS_HINT                  "a number of tokens like 512, or {dist: lognormal, mean: 1000, sigma: 1}"
#define INFER_DEFAULT_MAX_BATCH      256  /* vLLM's max_num_seqs */
#define INFER_DEFAULT_BATCHED_TOKENS 2048 /* vLLM's max_num_batched_tokens with chunked prefill */
#define INFER_DEFAULT_LOAD_BANDWIDTH 2e9  /* bytes/s: safetensors from local NVMe or a warm cache */

struct inference_spec *ld_new_inference(void)
{
	struct inference_spec *in = gp_xcalloc(1, sizeof *in);
	in->replicas = in->max_replicas = 1;
	in->tokenize_workers = 1;
	in->scale_interval = 15 * SIM_SECOND;
	in->scale_down_window = 5 * SIM_MINUTE;
	in->load_bandwidth = INFER_DEFAULT_LOAD_BANDWIDTH;
	in->tensor_parallel = 1;
	in->max_batch = INFER_DEFAULT_MAX_BATCH;
	in->max_batched_tokens = INFER_DEFAULT_BATCHED_TOKENS;
	in->kv_cache = -1; /* resolved from the weights */
	in->route = ROUTE_ROUND_ROBIN;
	in->requests.speedup = 1;
	in->requests.repeat = 1;
	in->requests.count = -1;
	in->slo.percentile = 99;
	return in;
}

/* The server keys exist only beside kind: inference. */
static struct inference_spec *inference_of(struct loader *ld, const struct ynode *v, void *obj,
					   const char *key)
{
	struct workload_spec *w = obj;
	if (!w->inference)
		gp_located(ld->err, v->loc,
			   "%s applies to inference workloads; expected kind: "
			   "inference beside it",
			   key);
	return w->inference;
}

static int infer_replicas_min(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "min", 0, 100000, &n);
	((struct inference_spec *)obj)->replicas = (int32_t)n;
	return rc;
}

static int infer_replicas_max(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "max", 1, 100000, &n);
	((struct inference_spec *)obj)->max_replicas = (int32_t)n;
	return rc;
}

static int infer_target_queue(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_positive(ld, v, "target_queue", "a number of waiting requests > 0, like 4",
			       &((struct inference_spec *)obj)->target_queue);
}

static int infer_interval(struct loader *ld, const struct ynode *v, void *obj)
{
	sim_time *t = &((struct inference_spec *)obj)->scale_interval;
	int rc = ld_get_duration(ld, v, "interval", true, t);
	/* A lower bound, as autoscale.scan_interval's: at 1us an hour of one
	 * service took more than 2 min of scale events (0.4 s at 15s).  The
	 * HPA's --horizontal-pod-autoscaler-sync-period defaults to 15s. */
	if (!rc && *t < SIM_SECOND)
		rc = ld_bad_value(ld, v, "interval",
				  "a duration of at least 1s (the HPA's sync period defaults to "
				  "15s)");
	return rc;
}

static int infer_scale_down(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "scale_down_window", false,
			       &((struct inference_spec *)obj)->scale_down_window);
}

static int infer_load_bandwidth(struct loader *ld, const struct ynode *v, void *obj)
{
	double *bw = &((struct inference_spec *)obj)->load_bandwidth;
	if (v->kind != YNODE_SCALAR || units_bandwidth(v->value, bw) || !(*bw > 0))
		return ld_bad_value(ld, v, "load_bandwidth", "a bandwidth like 2GB/s");
	return GP_OK;
}

static const struct key_rule replicas_rules[] = {
	{"min", infer_replicas_min},
	{"max", infer_replicas_max},
	{"target_queue", infer_target_queue},
	{"interval", infer_interval},
	{"scale_down_window", infer_scale_down},
	{"load_bandwidth", infer_load_bandwidth},
};

#define REPLICAS_HINT "a whole number like 2, or {min: 1, max: 8, target_queue: 4}"

/* replicas: N | {min, max, target_queue, interval, scale_down_window, load_bandwidth} */
int ld_workload_replicas(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "replicas");
	if (!in)
		return GP_EINPUT;
	int64_t n = 0;
	if (v->kind != YNODE_MAP) {
		int rc = ld_get_int(ld, v, "replicas", 1, 100000, &n);
		in->replicas = in->max_replicas = (int32_t)n;
		return rc;
	}
	int rc = ld_walk_map(ld, v, "replicas", REPLICAS_HINT, replicas_rules, N_OF(replicas_rules),
			     in);
	if (!rc)
		rc = ld_require(ld, v, "max", "replicas", "the largest number of replicas, like 8");
	if (!rc)
		rc = ld_require(ld, v, "target_queue", "replicas",
				"the waiting requests per replica to scale at, like 4");
	if (!rc && !ynode_get(v, "min"))
		in->replicas = 1;
	if (!rc && in->max_replicas < in->replicas)
		return gp_located(ld->err, ynode_get(v, "max")->loc,
				  "max %d is below min %d; expected max >= min",
				  (int)in->max_replicas, (int)in->replicas);
	return rc;
}

int ld_workload_tensor_parallel(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "tensor_parallel");
	int64_t n = 0;
	int rc = in ? ld_get_int(ld, v, "tensor_parallel", 1, FOOTPRINT_MAX_TP, &n) : GP_EINPUT;
	if (!rc)
		in->tensor_parallel = (int32_t)n;
	return rc;
}

int ld_workload_max_batch(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "max_batch");
	int64_t n = 0;
	int rc = in ? ld_get_int(ld, v, "max_batch", 1, 100000, &n) : GP_EINPUT;
	if (!rc)
		in->max_batch = (int32_t)n;
	return rc;
}

int ld_workload_max_batched_tokens(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "max_batched_tokens");
	int64_t n = 0;
	int rc = in ? ld_get_int(ld, v, "max_batched_tokens", 1, 10000000, &n) : GP_EINPUT;
	if (!rc)
		in->max_batched_tokens = (int32_t)n;
	return rc;
}

int ld_workload_memory_fraction(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "memory_fraction");
	return in ? ld_get_fraction(ld, v, "memory_fraction", &in->memory_fraction) : GP_EINPUT;
}

int ld_workload_kv_cache(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "kv_cache");
	return in ? ld_get_enum(ld, v, "kv_cache", footprint_quant_names, QUANT_COUNT,
				&in->kv_cache)
		  : GP_EINPUT;
}

static int tokenize_time(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "tokenize.time", false,
			       &((struct inference_spec *)obj)->tokenize);
}

static int tokenize_workers(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 1;
	int rc = ld_get_int(ld, v, "tokenize.workers", 1, 1024, &n);
	((struct inference_spec *)obj)->tokenize_workers = (int32_t)n;
	return rc;
}

static const struct key_rule tokenize_rules[] = {
	{"time", tokenize_time},
	{"workers", tokenize_workers},
};

/* tokenize: 80ms | {time: 80ms, workers: 4} (CPU tokenizer workers per replica,
 * as vLLM's API server processes; default one). */
int ld_workload_tokenize(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "tokenize");
	if (!in)
		return GP_EINPUT;
	if (v->kind != YNODE_MAP)
		return ld_get_duration(ld, v, "tokenize", false, &in->tokenize);
	int rc = ld_walk_map(ld, v, "tokenize", "a duration like 80ms, or {time: 80ms, workers: 4}",
			     tokenize_rules, N_OF(tokenize_rules), in);
	if (!rc)
		rc = ld_require(ld, v, "time", "tokenize", "the CPU time per request, like 80ms");
	return rc;
}

/* step_overhead: 0.3ms, the server's fixed time per iteration (scheduling,
 * sampling, launches), in place of the GPU type's calibrated default. */
int ld_workload_step_overhead(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "step_overhead");
	if (!in)
		return GP_EINPUT;
	in->step_overhead_given = true;
	return ld_get_duration(ld, v, "step_overhead", false, &in->step_overhead);
}

int ld_workload_route(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"round-robin", "least-outstanding"};
	struct inference_spec *in = inference_of(ld, v, obj, "route");
	int r = 0;
	int rc = in ? ld_get_enum(ld, v, "route", names, N_OF(names), &r) : GP_EINPUT;
	if (!rc)
		in->route = (enum route_policy)r;
	return rc;
}

/* slo: {ttft: 2s, tpot: 100ms, e2e: 60s, percentile: 99} */
static int slo_ttft(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "ttft", true, &((struct slo_spec *)obj)->ttft);
}

static int slo_tpot(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "tpot", true, &((struct slo_spec *)obj)->tpot);
}

static int slo_e2e(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_duration(ld, v, "e2e", true, &((struct slo_spec *)obj)->e2e);
}

static int slo_percentile(struct loader *ld, const struct ynode *v, void *obj)
{
	double *p = &((struct slo_spec *)obj)->percentile;
	if (v->kind != YNODE_SCALAR || units_number(v->value, p) || !(*p > 0 && *p <= 100))
		return ld_bad_value(ld, v, "percentile", "a percentile in (0, 100] like 99");
	return GP_OK;
}

static const struct key_rule slo_rules[] = {
	{"ttft", slo_ttft}, {"tpot", slo_tpot}, {"e2e", slo_e2e}, {"percentile", slo_percentile}};

int ld_workload_slo(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "slo");
	return in ? ld_walk_map(ld, v, "slo", "a map like {ttft: 2s, tpot: 100ms, percentile: 99}",
				slo_rules, N_OF(slo_rules), &in->slo)
		  : GP_EINPUT;
}

/* Token counts: a number, or a distribution whose parameters are tokens. */
static int tok_number(struct loader *ld, const struct ynode *v, const char *what, double lo,
		      double *out)
{
	char hint[64];
	snprintf(hint, sizeof hint, "a number of tokens >= %g", lo);
	if (v->kind != YNODE_SCALAR || units_number(v->value, out) || *out < lo || *out > 1e7)
		return ld_bad_value(ld, v, what, hint);
	return GP_OK;
}

static int tok_mean(struct loader *ld, const struct ynode *v, void *obj)
{
	return tok_number(ld, v, "mean", 1, &((struct dist *)obj)->mean);
}

static int tok_min(struct loader *ld, const struct ynode *v, void *obj)
{
	return tok_number(ld, v, "min", 1, &((struct dist *)obj)->min);
}

static int tok_max(struct loader *ld, const struct ynode *v, void *obj)
{
	return tok_number(ld, v, "max", 1, &((struct dist *)obj)->max);
}

static const struct key_rule tok_dist_rules[] = {
	{"dist", ld_dist_kind},   {"mean", tok_mean}, {"sigma", ld_dist_sigma},
	{"shape", ld_dist_shape}, {"min", tok_min},   {"max", tok_max},
};

static int load_tokens(struct loader *ld, const struct ynode *v, const char *what, struct dist *d)
{
	if (v->kind == YNODE_SCALAR) {
		d->kind = DIST_FIXED;
		return tok_number(ld, v, what, 1, &d->mean);
	}
	int rc = ld_walk_map(ld, v, what, TOKENS_HINT, tok_dist_rules, N_OF(tok_dist_rules), d);
	if (!rc)
		rc = ld_require(ld, v, "dist", what,
				"fixed, exponential, lognormal, gamma or uniform");
	if (!rc && d->kind == DIST_EMPIRICAL)
		rc = gp_located(ld->err, ynode_get(v, "dist")->loc,
				"dist empirical is for durations; expected fixed, exponential, "
				"lognormal, gamma or uniform");
	if (rc)
		return rc;
	const char *const *params = ld_dist_params[d->kind];
	const char *allowed[3] = {"dist", params[0], params[1]};
	char kind[48];
	snprintf(kind, sizeof kind, "dist %s", ld_dist_names[d->kind]);
	for (size_t i = 0; i < 2 && params[i] && !rc; i++)
		rc = ld_require(ld, v, params[i], kind,
				!strcmp(params[i], "sigma") || !strcmp(params[i], "shape")
					? ld_dist_param_hint(params[i])
					: "a number of tokens");
	if (!rc)
		rc = ld_only_keys(ld, v, allowed, N_OF(allowed), kind);
	if (!rc && d->kind == DIST_UNIFORM && d->max < d->min)
		return gp_located(ld->err, ynode_get(v, "max")->loc,
				  "max is below min; expected min <= max");
	return rc;
}

static int req_process(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"poisson", "gamma"};
	int p = 0;
	int rc = ld_get_enum(ld, v, "process", names, N_OF(names), &p);
	((struct request_spec *)obj)->process = (enum request_process)p;
	return rc;
}

static int req_rate(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_rate(ld, v, "rate", &((struct request_spec *)obj)->rate);
}

static int req_shape(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_positive(ld, v, "shape",
			       "a number > 0 like 0.5 (below 1 is burstier than poisson)",
			       &((struct request_spec *)obj)->shape);
}

static int req_from(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_clock(ld, v, "requests from", &((struct request_spec *)obj)->from);
}

static int req_count(struct loader *ld, const struct ynode *v, void *obj)
{
	return ld_get_int(ld, v, "count", 1, INT64_MAX, &((struct request_spec *)obj)->count);
}

static int req_prompt(struct loader *ld, const struct ynode *v, void *obj)
{
	return load_tokens(ld, v, "prompt_tokens", &((struct request_spec *)obj)->prompt_tokens);
}

static int req_output(struct loader *ld, const struct ynode *v, void *obj)
{
	return load_tokens(ld, v, "output_tokens", &((struct request_spec *)obj)->output_tokens);
}

static int req_trace(struct loader *ld, const struct ynode *v, void *obj)
{
	struct request_spec *rs = obj;
	char *path = NULL;
	rs->process = REQUESTS_TRACE;
	int rc = ld_get_string(ld, v, "trace", "a path to an Azure LLM trace, like traces/conv.csv",
			       &path);
	if (rc)
		return rc;
	rs->trace_path = ld_resolve(ld->sc->dir, path);
	free(path);
	return GP_OK;
}

static int req_format(struct loader *ld, const struct ynode *v, void *obj)
{
	static const char *const names[] = {"azure"};
	int f = 0;
	(void)obj;
	if (v->kind == YNODE_SCALAR && !strcmp(v->value, "csv"))
		return gp_located(ld->err, v->loc,
				  "format 'csv' is for batch job traces; expected "
				  "azure (TIMESTAMP,ContextTokens,GeneratedTokens)");
	return ld_get_enum(ld, v, "format", names, N_OF(names), &f);
}

static int req_speedup(struct loader *ld, const struct ynode *v, void *obj)
{
	double *k = &((struct request_spec *)obj)->speedup;
	int rc = ld_get_positive(ld, v, "speedup", "a factor > 0 like 2 (twice as fast)", k);
	if (!rc && *k > 1e6)
		return ld_bad_value(ld, v, "speedup", "a factor from 0 to 1000000");
	return rc;
}

static int req_repeat(struct loader *ld, const struct ynode *v, void *obj)
{
	int64_t n = 0;
	int rc = ld_get_int(ld, v, "repeat", 1, 1000000, &n);
	((struct request_spec *)obj)->repeat = (int32_t)n;
	return rc;
}

static const struct key_rule request_rules[] = {
	{"process", req_process},      {"rate", req_rate},
	{"shape", req_shape},          {"from", req_from},
	{"count", req_count},          {"prompt_tokens", req_prompt},
	{"output_tokens", req_output}, {"trace", req_trace},
	{"format", req_format},        {"speedup", req_speedup},
	{"repeat", req_repeat},        {"rate_by_hour", ld_read_later},
	{"by_weekday", ld_read_later},
};

static const char *const synthetic_keys[] = {"process",       "rate",         "shape",
					     "from",          "count",        "prompt_tokens",
					     "output_tokens", "rate_by_hour", "by_weekday"};
static const char *const trace_keys[] = {"trace", "format", "speedup", "repeat", "from"};

/* The keys each kind of request stream needs, once the map is read. */
static int check_requests(struct loader *ld, const struct ynode *v, struct request_spec *rs)
{
	int rc;
	if (rs->process == REQUESTS_TRACE) {
		rc = ld_only_keys(ld, v, trace_keys, N_OF(trace_keys), "a trace of requests");
		if (!rc)
			rc = requests_read_azure(rs->trace_path, ynode_get(v, "trace")->loc,
						 ld->max_jobs, SCENARIO_MAX_SPAN, &rs->rows,
						 &rs->n_rows, ld->err);
		if (!rc)
			rs->period = requests_period(rs->rows, rs->n_rows);
		return rc;
	}
	rc = ld_only_keys(ld, v, synthetic_keys, N_OF(synthetic_keys),
			  "a synthetic request process");
	if (!rc)
		rc = ld_weekly_rate(ld, v, false, &rs->weekly);
	if (!rc && rs->weekly.on && rs->process != REQUESTS_POISSON)
		return gp_located(ld->err, ynode_get(v, "rate_by_hour")->loc,
				  "rate_by_hour applies to a poisson process; expected process: "
				  "poisson");
	if (rs->weekly.on) /* the mean rate, for sizing and the reports */
		rs->rate = rs->weekly.week_mass / sim_seconds(7 * SIM_DAY);
	else if (!rc)
		rc = ld_require(ld, v, "rate", "requests",
				UNITS_HINT_RATE ", or rate_by_hour: [24 rates]");
	if (!rc && rs->process == REQUESTS_GAMMA)
		rc = ld_require(ld, v, "shape", "a gamma process", "a number > 0 like 0.5");
	if (!rc && rs->process == REQUESTS_POISSON && ynode_get(v, "shape"))
		return gp_located(ld->err, ynode_get(v, "shape")->loc,
				  "shape applies to a gamma process; expected process: gamma");
	if (!rc)
		rc = ld_require(ld, v, "prompt_tokens", "requests", TOKENS_HINT);
	if (!rc)
		rc = ld_require(ld, v, "output_tokens", "requests", TOKENS_HINT);
	if (!rc && rs->count < 0 && !ld->sc->horizon)
		return gp_located(ld->err, v->loc,
				  "a request process without count never ends; "
				  "expected a count or a scenario horizon");
	return rc;
}

int ld_workload_requests(struct loader *ld, const struct ynode *v, void *obj)
{
	struct inference_spec *in = inference_of(ld, v, obj, "requests");
	if (!in)
		return GP_EINPUT;
	struct request_spec *rs = &in->requests;
	int rc = ld_walk_map(ld, v, "requests", REQUESTS_HINT, request_rules, N_OF(request_rules),
			     rs);
	if (rc)
		return rc;
	if (!!ynode_get(v, "process") + !!ynode_get(v, "trace") != 1)
		return gp_located(ld->err, v->loc,
				  "requests need exactly one of process or trace; "
				  "expected " REQUESTS_HINT);
	return check_requests(ld, v, rs);
}

/* Mean prompt + mean output, in whole tokens: the request the server is sized for. */
static int64_t typical_context(const struct request_spec *rs)
{
	double sum = 0;
	if (rs->process == REQUESTS_TRACE) {
		for (size_t i = 0; i < rs->n_rows; i++)
			sum += rs->rows[i].prompt + rs->rows[i].output;
		sum /= (double)rs->n_rows;
	} else {
		const struct dist *p = &rs->prompt_tokens, *o = &rs->output_tokens;
		sum = scenario_dist_mean(p) + scenario_dist_mean(o);
	}
	return (int64_t)ceil(sum);
}

/* The memory one GPU of a replica may use in pool p: the workload's vram, or
 * memory_fraction of the unit, or the whole unit (no isolation: the GPU). */
static double server_cap(const struct pool_spec *p, const struct workload_spec *w)
{
	const struct inference_spec *in = w->inference;
	double unit = scenario_unit_memory(p, w);
	if (unit <= 0)
		unit = p->gpu->memory_bytes;
	if (in->vram_given)
		return w->vram_bytes;
	return in->memory_fraction > 0 ? in->memory_fraction * unit : unit;
}

/* "llama-3-70b in fp16 does not fit ..." with the smallest TP that fits. */
static int does_not_fit(struct loader *ld, struct srcloc at, const struct workload_spec *w,
			const struct pool_spec *p, double cap)
{
	const struct inference_spec *in = w->inference;
	enum quant q = (enum quant)w->quantization, kv = (enum quant)in->kv_cache;
	struct footprint fp;
	footprint_compute(w->model, q, kv, in->tensor_parallel, cap, &fp);
	double need = footprint_bytes_per_gpu(&fp, in->context), gib = 1024.0 * 1024 * 1024;
	char what[256];
	snprintf(what, sizeof what,
		 "%s in %s does not fit a replica of %d x %s (pool %s): one GPU needs %.2f GiB "
		 "(weights, runtime and the KV cache of one %lld-token request) and has %.2f GiB",
		 w->model->name, footprint_quant_name(q), (int)in->tensor_parallel, p->gpu->name,
		 p->name, need / gib, (long long)in->context, cap / gib);
	int tp = footprint_min_tp(w->model, q, kv, cap, in->context);
	if (tp && w->request == REQUEST_GPUS && tp <= p->gpus_per_node)
		return gp_located(ld->err, at, "%s; the smallest tensor_parallel that fits is %d",
				  what, tp);
	enum quant narrower;
	if (footprint_widest_fitting_quant(w->model, in->tensor_parallel, cap, in->context,
					   &narrower) &&
	    footprint_quant_weight_bytes(narrower) < footprint_quant_weight_bytes(q))
		return gp_located(ld->err, at, "%s; quantization %s fits", what,
				  footprint_quant_name(narrower));
	return gp_located(ld->err, at, "%s; expected a larger GPU or unit", what);
}

/* The model fits a unit of at least one pool offering the resource. */
static int check_fits(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	const struct scenario *sc = ld->sc;
	const struct ynode *at = ynode_get(item, "tensor_parallel");
	const struct pool_spec *best = NULL;
	double best_cap = 0;
	for (size_t i = 0; i < sc->n_pools; i++) {
		const struct pool_spec *p = &sc->pools[i];
		if (!scenario_pool_offers(p, w) ||
		    (w->request == REQUEST_GPUS && w->gpus > p->gpus_per_node))
			continue;
		double cap = server_cap(p, w);
		struct footprint fp;
		footprint_compute(w->model, (enum quant)w->quantization,
				  (enum quant)w->inference->kv_cache, w->inference->tensor_parallel,
				  cap, &fp);
		if (footprint_max_sequences(&fp, w->inference->context) >= 1)
			return GP_OK;
		if (!best || cap > best_cap)
			best = p, best_cap = cap;
	}
	if (!best)
		return GP_OK; /* no pool offers the resource: check_hosted says so */
	if (!at)
		at = ynode_get(item, "gpus");
	if (!at)
		at = ynode_get(item, "model");
	if (!at)
		at = ynode_get(item, "model_config");
	return does_not_fit(ld, at->loc, w, best, best_cap);
}

/* tensor_parallel and gpus name the same GPUs; a MIG or milli unit holds one. */
static int resolve_tp(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	struct inference_spec *in = w->inference;
	const struct ynode *tp = ynode_get(item, "tensor_parallel"), *g = ynode_get(item, "gpus");
	if (w->request != REQUEST_GPUS) {
		if (tp && in->tensor_parallel > 1)
			return gp_located(ld->err, tp->loc,
					  "tensor_parallel %d needs %d GPUs; a "
					  "replica on a MIG instance or a GPU share has one",
					  (int)in->tensor_parallel, (int)in->tensor_parallel);
		in->tensor_parallel = 1;
	} else if (tp && g && w->gpus != in->tensor_parallel) {
		return gp_located(ld->err, tp->loc,
				  "tensor_parallel %d differs from gpus %d; "
				  "expected one GPU per tensor-parallel rank",
				  (int)in->tensor_parallel, (int)w->gpus);
	} else if (tp) {
		w->gpus = in->tensor_parallel;
	} else {
		in->tensor_parallel = w->gpus;
	}
	if (footprint_tp_valid(w->model, in->tensor_parallel))
		return GP_OK;
	return gp_located(
		ld->err, (tp ? tp : g)->loc,
		"tensor_parallel %d does not divide the %d attention heads of %s; expected "
		"1, 2, 4 or 8",
		(int)in->tensor_parallel, w->model->heads, w->model->name);
}

int ld_finish_inference(struct loader *ld, const struct ynode *item, struct workload_spec *w)
{
	/* Batch keys, and why a service has no use for them. */
	static const char *const batch_only[][2] = {
		{"count", "expected requests: " REQUESTS_HINT},
		{"arrival", "expected requests: " REQUESTS_HINT},
		{"duration", "a request lasts its prefill and decode steps"},
		{"deadline", "expected an slo like {ttft: 2s}"},
		{"gpu_busy", "a replica's activity comes from its iterations"},
		{"queue", "replicas are placed as the service starts or scales, before batch work"},
		{"priority",
		 "replicas are placed as the service starts or scales, before batch work"},
		{"pods", "a replica is one pod (tensor_parallel spans the GPUs of one node)"},
		{"gang", "a replica is one pod (tensor_parallel spans the GPUs of one node)"},
	};
	struct inference_spec *in = w->inference;
	for (size_t i = 0; i < item->n; i++)
		for (size_t k = 0; k < N_OF(batch_only); k++)
			if (!strcmp(item->keys[i], batch_only[k][0]))
				return gp_located(ld->err, item->key_locs[i],
						  "%s does not apply to an inference workload; %s",
						  item->keys[i], batch_only[k][1]);
	const struct ynode *limit = ynode_get(ynode_get(item, "restart"), "limit");
	if (limit)
		return gp_located(
			ld->err, limit->loc,
			"limit does not apply to an inference "
			"workload; its replicas restart for ever, as a Deployment's pods do");
	int rc = w->model ? GP_OK
			  : ld_require(ld, item, "model", "inference workload",
				       "a catalog model like llama-3-8b, or model_config: PATH");
	if (!rc)
		rc = ld_require(ld, item, "requests", "inference workload", REQUESTS_HINT);
	if (!rc)
		rc = resolve_tp(ld, item, w);
	if (rc)
		return rc;
	if (!ynode_get(item, "max_batched_tokens") && in->max_batched_tokens < in->max_batch)
		in->max_batched_tokens = in->max_batch;
	if (in->max_batched_tokens < in->max_batch)
		return gp_located(ld->err, ynode_get(item, "max_batched_tokens")->loc,
				  "max_batched_tokens %d is below max_batch %d; expected at least "
				  "one token per sequence (vLLM refuses to start otherwise)",
				  (int)in->max_batched_tokens, (int)in->max_batch);
	if (in->kv_cache < 0)
		in->kv_cache = footprint_quant_default_kv((enum quant)w->quantization);
	in->context = typical_context(&in->requests);
	in->vram_given = ynode_get(item, "vram") != NULL;
	if (in->vram_given && in->memory_fraction > 0)
		return gp_located(ld->err, ynode_get(item, "memory_fraction")->loc,
				  "memory_fraction and vram both size the server; expected one");
	rc = in->disagg ? ld_finish_disagg(ld, item, w) : check_fits(ld, item, w);
	if (rc)
		return rc;
	if (scenario_requests_expected(w, ld->sc->horizon) > ld->max_jobs)
		return gp_located(
			ld->err, ynode_get(item, "requests")->loc,
			"the workload sends %lld requests, above the limit of %lld; "
			"expected fewer, or raise the limit with the environment variable "
			"GPUPLAN_MAX_JOBS",
			(long long)scenario_requests_expected(w, ld->sc->horizon),
			(long long)ld->max_jobs);
	/* What a unit must guarantee for the server to start (placement's filter). */
	if (!in->vram_given) {
		struct footprint fp;
		footprint_compute(w->model, (enum quant)w->quantization, (enum quant)in->kv_cache,
				  in->tensor_parallel, 0, &fp);
		w->vram_bytes = footprint_bytes_per_gpu(&fp, in->context);
		if (in->memory_fraction > 0)
			w->vram_bytes /= in->memory_fraction;
		if (in->disagg)
			w->vram_bytes = ld_disagg_least_vram(w);
	}
	/* No batch jobs: the requests are the work. */
	w->count = 0;
	w->arrival.kind = ARRIVAL_AT;
	w->duration = (struct dist){.kind = DIST_FIXED};
	return GP_OK;
}

int64_t scenario_requests_expected(const struct workload_spec *w, sim_time horizon)
{
	const struct request_spec *rs = &w->inference->requests;
	if (rs->process == REQUESTS_TRACE)
		return (int64_t)rs->n_rows * rs->repeat;
	if (rs->count >= 0)
		return rs->count;
	double span = sim_seconds(horizon - rs->from);
	double n = span > 0 ? ceil(rs->rate * span) : 0;
	return n >= 9.2e18 ? INT64_MAX : (int64_t)n;
}
