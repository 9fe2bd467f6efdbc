/*
 * estimate_disagg.c - `gpuplan estimate --rate R --disaggregated`: the first
 * cut of a service whose prefill and decode run on separate workers
 * (firstcut_disagg.c), on one GPU type or each of the catalog's, labelled as
 * an estimate; `gpuplan search` over each role's replicas confirms it
 * (docs/inference.md, "Disaggregated prefill and decode").
 */
#include "gpuplan/estimate.h"

#include "gpuplan/catalog_specs.h"
#include "gpuplan/firstcut.h"

#include <math.h>
#include <string.h>

#include "estimate_int.h"

static const char *why(enum firstcut_verdict v)
{
	switch (v) {
	case FIRSTCUT_NO_FIT: return "does not fit (tensor parallel up to 8)";
	case FIRSTCUT_TPOT: return "one sequence alone decodes slower than --tpot";
	case FIRSTCUT_TAIL_PROMPT:
		return "the tail prompt's prefill and transfer alone exceed --ttft";
	default: return "";
	}
}

static void header(FILE *out, const struct estimate *e, const struct estimate_traffic *t,
		   const struct firstcut_service *s, const struct link_spec *l)
{
	estimate_traffic_text(out, e, t, s);
	fprintf(out, "; KV over %s\n", l->name);
	fprintf(out,
		"first-cut estimate, disaggregated (prefill: roofline token rate, M/G/1 wait, "
		"tail transfer; decode: batch within --tpot); confirm it with gpuplan search:\n");
	fprintf(out, "%-11s %2s %7s %6s %5s %8s %9s %8s %7s %5s %6s\n", "gpu", "tp", "prefill",
		"decode", "gpus", "$/h", "ttft-p-s", "kv-p-s", "util-p%", "batch", "util-d%");
}

static void row(FILE *out, const struct gpu_type *g, const struct firstcut_disagg *f,
		double usd_per_gpu_hour)
{
	if (f->verdict != FIRSTCUT_OK) {
		fprintf(out, "%-11s %s\n", g->name, why(f->verdict));
		return;
	}
	fprintf(out, "%-11s %2d %7d %6d %5d %8.2f %9.3f %8.4f %7.1f %5d %6.1f\n", g->name, f->tp,
		f->prefill_replicas, f->decode_replicas, f->gpus, f->gpus * usd_per_gpu_hour,
		f->ttft_tail_s, f->transfer_tail_s, 100 * f->prefill_utilisation, f->batch,
		100 * f->decode_utilisation);
}

static void row_json(struct jsonw *w, const struct gpu_type *g, const struct firstcut_disagg *f,
		     double usd_per_gpu_hour)
{
	static const char *const names[] = {"ok", "no_fit", "tpot", "tail_prompt"};
	estimate_json_row(w, g->name, names[f->verdict]);
	if (f->verdict == FIRSTCUT_OK) {
		estimate_json_int(w, "tp", f->tp);
		estimate_json_int(w, "prefill_replicas", f->prefill_replicas);
		estimate_json_int(w, "decode_replicas", f->decode_replicas);
		estimate_json_int(w, "gpus", f->gpus);
		estimate_json_fixed(w, "usd_per_hour", f->gpus * usd_per_gpu_hour, 4);
		estimate_json_fixed(w, "ttft_tail_s", f->ttft_tail_s, 6);
		estimate_json_fixed(w, "wait_tail_s", f->wait_tail_s, 6);
		estimate_json_fixed(w, "prefill_tail_s", f->prefill_tail_s, 6);
		estimate_json_fixed(w, "transfer_tail_s", f->transfer_tail_s, 6);
		estimate_json_fixed(w, "prefill_utilisation", f->prefill_utilisation, 4);
		estimate_json_int(w, "batch", f->batch);
		estimate_json_fixed(w, "decode_step_s", f->decode_step_s, 6);
		estimate_json_fixed(w, "decode_utilisation", f->decode_utilisation, 4);
	}
	jsonw_close(w);
}

int estimate_disagg(const struct estimate_request *req, const struct estimate_traffic *t, bool json,
		    FILE *out, struct gp_err *err)
{
	const struct link_spec *l = catalog_link(t->link ? t->link : "infiniband");
	if (!l)
		return gp_errorf(
			err, GP_EINPUT,
			"--link: unknown link '%s'; expected nvlink, infiniband or ethernet",
			t->link);
	struct estimate e;
	int rc = estimate_resolve(req, &e, err);
	if (!rc)
		rc = estimate_check_traffic(t, err);
	if (rc) {
		estimate_free(&e);
		return rc;
	}
	size_t n = e.gpu ? 1 : catalog_gpu_count();
	struct jsonw w = {.out = out};
	for (size_t i = 0; i < n; i++) {
		const struct gpu_type *g = e.gpu ? e.gpu : catalog_gpu_at(i);
		struct firstcut_service s;
		struct firstcut_disagg f;
		estimate_service_of(&e, req, t, g, &s);
		s.prompt_cv2 = exp(t->prompt_sigma * t->prompt_sigma) - 1;
		firstcut_disagg_size(&s, l->gbps * 1e9 * CATALOG_LINK_EFF, l->latency_us * 1e-6,
				     &f);
		const struct gpu_specs *sp = catalog_gpu_specs(g);
		double price = s.usd_per_gpu_hour > 0 ? s.usd_per_gpu_hour
			       : sp                   ? sp->usd_per_hour
						      : 0;
		if (i == 0 && json)
			estimate_json_begin(&w, out, &e, t, &s, l->name);
		else if (i == 0)
			header(out, &e, t, &s, l);
		if (json)
			row_json(&w, g, &f, price);
		else
			row(out, g, &f, price);
	}
	if (json)
		estimate_json_end(&w);
	estimate_free(&e);
	return GP_OK;
}
