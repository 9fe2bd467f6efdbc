/*
 * estimate_fleet.c - `gpuplan estimate --rate ...` and `--compare-gpus`: the
 * first cut of a service (firstcut.h) on one GPU type or on each of the
 * catalog's, with GPUs, $/h, $ per million tokens and tokens per joule.
 */
#include "gpuplan/estimate.h"

#include "gpuplan/firstcut.h"
#include "gpuplan/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "estimate_int.h"

/* --price TYPE=USD: the price of the type, or 0 when none is given.
 * Validated first by check_prices. */
static double price_of(const struct estimate_traffic *t, const struct gpu_type *g)
{
	double usd = 0;
	for (size_t i = 0; i < t->n_prices; i++) {
		const char *eq = strchr(t->prices[i], '=');
		if ((size_t)(eq - t->prices[i]) == strlen(g->name) &&
		    !strncasecmp(t->prices[i], g->name, strlen(g->name)))
			usd = strtod(eq + 1, NULL);
	}
	return usd;
}

static int check_prices(const struct estimate_traffic *t, struct gp_err *err)
{
	for (size_t i = 0; i < t->n_prices; i++) {
		const char *p = t->prices[i], *eq = strchr(p, '=');
		char name[64];
		double usd;
		if (!eq || eq == p || (size_t)(eq - p) >= sizeof name ||
		    units_number(eq + 1, &usd) || !(usd > 0))
			return gp_errorf(err, GP_EINPUT,
					 "--price expects TYPE=USD, a GPU type and its price per "
					 "GPU-hour like H100-80GB=3.50, got '%s'",
					 p);
		snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
		if (!catalog_gpu(name))
			return gp_errorf(err, GP_EINPUT,
					 "--price %s: '%s' is not a catalog GPU type", p, name);
	}
	return GP_OK;
}

int estimate_check_traffic(const struct estimate_traffic *t, struct gp_err *err)
{
	const char *bad = !(t->rate > 0)                                    ? "--rate"
			  : !(t->prompt_mean >= 1)                          ? "--prompt"
			  : !(t->output_mean >= 1)                          ? "--output"
			  : !(t->prompt_sigma >= 0 && t->prompt_sigma <= 4) ? "--prompt-sigma"
			  : !(t->output_sigma >= 0 && t->output_sigma <= 4) ? "--output-sigma"
			  : !(t->percentile > 0 && t->percentile < 100)     ? "--percentile"
									    : NULL;
	if (bad)
		return gp_errorf(err, GP_EINPUT, "%s: out of range; expected %s", bad,
				 !strcmp(bad, "--rate")         ? "a rate above 0 like 10/s"
				 : !strcmp(bad, "--percentile") ? "a percentile between 0 and 100"
				 : strstr(bad, "sigma")         ? "a lognormal sigma from 0 to 4"
								: "at least 1 token");
	return check_prices(t, err);
}

void estimate_service_of(const struct estimate *e, const struct estimate_request *req,
			 const struct estimate_traffic *t, const struct gpu_type *g,
			 struct firstcut_service *s)
{
	*s = (struct firstcut_service){
		.model = e->model,
		.weights = e->quant,
		.kv = e->kv,
		.gpu = g,
		.tp = req->tp,
		.memory_fraction = 0.9,
		.max_batch = 256,
		.max_batched_tokens = 2048,
		.rate = t->rate,
		.prompt_mean = t->prompt_mean,
		.prompt_tail = ceil(firstcut_lognormal_quantile(t->prompt_mean, t->prompt_sigma,
								t->percentile)),
		.output_mean = t->output_mean,
		.output_cv2 = exp(t->output_sigma * t->output_sigma) - 1,
		.ttft_slo_s = t->ttft_s,
		.tpot_slo_s = t->tpot_s,
		.percentile = t->percentile,
		.usd_per_gpu_hour = price_of(t, g),
	};
}

static const char *why(enum firstcut_verdict v)
{
	switch (v) {
	case FIRSTCUT_NO_FIT: return "does not fit (tensor parallel up to 8)";
	case FIRSTCUT_TPOT: return "one sequence alone decodes slower than --tpot";
	case FIRSTCUT_TAIL_PROMPT: return "the tail prompt's prefill alone exceeds --ttft";
	default: return "";
	}
}

static const char *verdict_name(enum firstcut_verdict v)
{
	static const char *const names[] = {"ok", "no_fit", "tpot", "tail_prompt"};
	return names[v];
}

void estimate_traffic_text(FILE *out, const struct estimate *e, const struct estimate_traffic *t,
			   const struct firstcut_service *s)
{
	fprintf(out,
		"%s, %s weights, %g requests/s; prompts lognormal mean %g (p%g %g), outputs mean "
		"%g",
		e->model->name, footprint_quant_name(e->quant), t->rate, t->prompt_mean,
		t->percentile, s->prompt_tail, t->output_mean);
	if (t->ttft_s > 0)
		fprintf(out, "; TTFT p%g <= %g s", t->percentile, t->ttft_s);
	if (t->tpot_s > 0)
		fprintf(out, "; TPOT <= %g s", t->tpot_s);
}

static void header_text(FILE *out, const struct estimate *e, const struct estimate_traffic *t,
			const struct firstcut_service *s)
{
	estimate_traffic_text(out, e, t, s);
	fprintf(out, "\nfirst-cut estimate (roofline capacity, tail prefill, M/G/c wait); "
		     "confirm it with gpuplan search:\n");
	fprintf(out, "%-11s %2s %8s %5s %8s %7s %8s %9s %6s %5s %7s\n", "gpu", "tp", "replicas",
		"gpus", "$/h", "$/Mtok", "tokens/J", "ttft-p-s", "util%", "batch", "cap-rps");
}

void estimate_row_text(FILE *out, const struct gpu_type *g, const struct firstcut *f)
{
	if (f->verdict != FIRSTCUT_OK) {
		fprintf(out, "%-11s %s\n", g->name, why(f->verdict));
		return;
	}
	fprintf(out, "%-11s %2d %8d %5d %8.2f %7.3f %8.2f %9.3f %6.1f %5d %7.2f\n", g->name, f->tp,
		f->replicas, f->gpus, f->usd_per_hour, f->usd_per_mtok, f->tokens_per_joule,
		f->ttft_tail_s, 100 * f->utilisation, f->batch, f->capacity_rps);
}

static void row_json(struct jsonw *w, const struct gpu_type *g, const struct firstcut *f)
{
	estimate_json_row(w, g->name, verdict_name(f->verdict));
	if (f->verdict == FIRSTCUT_OK) {
		estimate_json_int(w, "tp", f->tp);
		estimate_json_int(w, "replicas", f->replicas);
		estimate_json_int(w, "gpus", f->gpus);
		estimate_json_fixed(w, "usd_per_hour", f->usd_per_hour, 4);
		estimate_json_fixed(w, "usd_per_million_tokens", f->usd_per_mtok, 6);
		estimate_json_fixed(w, "tokens_per_joule", f->tokens_per_joule, 6);
		estimate_json_fixed(w, "watts", f->watts, 1);
		estimate_json_fixed(w, "ttft_tail_s", f->ttft_tail_s, 6);
		estimate_json_fixed(w, "wait_tail_s", f->wait_tail_s, 6);
		estimate_json_fixed(w, "prefill_tail_s", f->prefill_tail_s, 6);
		estimate_json_fixed(w, "utilisation", f->utilisation, 4);
		estimate_json_int(w, "batch", f->batch);
		estimate_json_fixed(w, "capacity_rps", f->capacity_rps, 4);
		estimate_json_fixed(w, "decode_step_s", f->decode_step_s, 6);
	}
	jsonw_close(w);
}

int estimate_fleet(const struct estimate_request *req, const struct estimate_traffic *t, bool json,
		   FILE *out, struct gp_err *err)
{
	struct estimate e;
	int rc = estimate_resolve(req, &e, err);
	if (!rc)
		rc = estimate_check_traffic(t, err);
	if (rc) {
		estimate_free(&e);
		return rc;
	}
	size_t n = e.gpu ? 1 : catalog_gpu_count();
	struct firstcut_service s;
	struct jsonw w = {.out = out};
	for (size_t i = 0; i < n; i++) {
		const struct gpu_type *g = e.gpu ? e.gpu : catalog_gpu_at(i);
		struct firstcut f;
		estimate_service_of(&e, req, t, g, &s);
		if (req->tp && !footprint_tp_valid(e.model, req->tp))
			continue;
		firstcut_size(&s, &f);
		if (i == 0 && json)
			estimate_json_begin(&w, out, &e, t, &s, NULL);
		else if (i == 0)
			header_text(out, &e, t, &s);
		if (json)
			row_json(&w, g, &f);
		else
			estimate_row_text(out, g, &f);
	}
	if (json)
		estimate_json_end(&w);
	estimate_free(&e);
	return GP_OK;
}
