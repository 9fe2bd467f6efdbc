/*
 * estimate.c - `gpuplan estimate` (estimate.h): validates the names and the
 * tensor-parallel degree, then asks footprint.c and roofline.c.  The figures
 * are for whole GPUs of the named type; step times use the roofline defaults
 * of that type.
 */
#include "gpuplan/estimate.h"

#include "estimate_int.h"

#include "gpuplan/modelcfg.h"
#include "gpuplan/ytree.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#define MAX_NAMES 64

/* "did you mean 'A100-40GB' or 'A100-80GB'?" when name begins two or three
 * names and the closest by edit distance is not one of them ("A10" for
 * "A100" would mislead). */
static bool prefix_hint(struct gp_err *err, const char *flag, const char *what, const char *name,
			const char *const *names, size_t n)
{
	const char *hits[3];
	size_t k = 0, len = strlen(name);
	for (size_t i = 0; i < n && len >= 2; i++)
		if (strncasecmp(names[i], name, len) == 0 && k++ < 3)
			hits[k - 1] = names[i];
	if (k < 2 || k > 3)
		return false;
	gp_errorf(err, GP_EINPUT, "%s: unknown %s '%s'; did you mean '%s'%s%s%s or '%s'?", flag,
		  what, name, hits[0], k == 3 ? ", '" : "", k == 3 ? hits[1] : "",
		  k == 3 ? "'" : "", hits[k - 1]);
	return true;
}

/* "--model: unknown model 'x'; did you mean 'y'?", or the list of names. */
static int unknown(struct gp_err *err, const char *flag, const char *what, const char *name,
		   const char *const *names, size_t n)
{
	const char *close = ytree_closest(name, names, n);
	bool begins = close && strncasecmp(close, name, strlen(name)) == 0;
	if (!begins && prefix_hint(err, flag, what, name, names, n))
		return GP_EINPUT;
	if (!begins)
		close = ytree_suggest(name, names, n);
	if (close)
		return gp_errorf(err, GP_EINPUT, "%s: unknown %s '%s'; did you mean '%s'?", flag,
				 what, name, close);
	char list[512] = "";
	size_t used = 0;
	for (size_t i = 0; i < n && used < sizeof list; i++)
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
					 names[i]);
	return gp_errorf(err, GP_EINPUT, "%s: unknown %s '%s'; expected one of %s", flag, what,
			 name, list);
}

static int find_model(const char *name, const struct model_arch **m, struct gp_err *err)
{
	const char *names[MAX_NAMES];
	size_t n = 0;
	if ((*m = catalog_model(name)))
		return GP_OK;
	while (n < MAX_NAMES && catalog_model_at(n))
		names[n] = catalog_model_at(n)->name, n++;
	return unknown(err, "--model", "model", name, names, n);
}

static int find_gpu(const char *name, const struct gpu_type **g, struct gp_err *err)
{
	const char *names[MAX_NAMES];
	size_t n = 0;
	if ((*g = catalog_gpu(name)))
		return GP_OK;
	while (n < MAX_NAMES && catalog_gpu_at(n))
		names[n] = catalog_gpu_at(n)->name, n++;
	return unknown(err, "--gpu", "GPU type", name, names, n);
}

static int find_quant(const char *flag, const char *what, const char *name, enum quant *q,
		      struct gp_err *err)
{
	if (footprint_quant_parse(name, q) == GP_OK)
		return GP_OK;
	return unknown(err, flag, what, name, quant_names, QUANT_COUNT);
}

/* "one GPU needs 128.52 GiB of weights + 2.00 GiB runtime + 1.25 GiB of KV
 * for a sequence of 4096 tokens = 131.77 GiB and has 80.00 GiB" */
static void need_text(char *buf, size_t len, const struct footprint *fp, int64_t context)
{
	double total = footprint_bytes_per_gpu(fp, context);
	double kv = total - fp->weights_per_gpu - fp->overhead_per_gpu;
	snprintf(buf, len,
		 "one GPU needs %.2f GiB of weights + %.2f GiB runtime + %.2f GiB of KV for a "
		 "sequence of %" PRId64 " tokens = %.2f GiB and has %.2f GiB",
		 fp->weights_per_gpu / GP_GIB, fp->overhead_per_gpu / GP_GIB, kv / GP_GIB, context,
		 total / GP_GIB, fp->memory_per_gpu / GP_GIB);
}

/* "; --quant int4 fits at --tp 2", or "" when no format fits on 8 GPUs. */
static void quant_hint(char *buf, size_t len, const struct estimate *e)
{
	static const enum quant order[] = {QUANT_FP16, QUANT_INT8, QUANT_INT4};
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		if (footprint_quant_weight_bytes(order[i]) >=
		    footprint_quant_weight_bytes(e->quant))
			continue;
		int tp = footprint_min_tp(e->model, order[i], footprint_quant_default_kv(order[i]),
					  e->gpu->memory_bytes, e->context);
		if (tp) {
			snprintf(buf, len, "; --quant %s fits at --tp %d",
				 footprint_quant_name(order[i]), tp);
			return;
		}
	}
}

/* The error for a model that does not fit at tp (given) or at any TP (tp 0). */
static int does_not_fit(const struct estimate *e, int tp, struct gp_err *err)
{
	char need[256], hint[64];
	struct footprint fp;
	int shown = tp ? tp : FOOTPRINT_MAX_TP;
	footprint_compute(e->model, e->quant, e->kv, shown, e->gpu->memory_bytes, &fp);
	need_text(need, sizeof need, &fp, e->context);
	if (tp && e->min_tp)
		return gp_errorf(err, GP_EINPUT,
				 "--tp %d: %s in %s does not fit on %d x %s: %s; the smallest "
				 "tensor-parallel degree that fits is %d",
				 tp, e->model->name, footprint_quant_name(e->quant), tp,
				 e->gpu->name, need, e->min_tp);
	quant_hint(hint, sizeof hint, e);
	return gp_errorf(err, GP_EINPUT,
			 "--quant %s: %s does not fit on %s at any tensor-parallel degree up to "
			 "%d (at --tp %d, %s)%s",
			 footprint_quant_name(e->quant), e->model->name, e->gpu->name,
			 FOOTPRINT_MAX_TP, shown, need, hint);
}

static void step_times(struct estimate *e)
{
	struct roofline r;
	struct roofline_work w = ROOFLINE_WORK_NONE;
	roofline_init(&r, e->model, e->quant, e->kv, e->gpu, NULL, GPU_SHARE_WHOLE, e->tp);
	roofline_add_prefill(&w, (double)e->context, 0);
	roofline_terms(&r, &w, &e->prefill);
	w = ROOFLINE_WORK_NONE;
	roofline_add_decode(&w, (double)e->batch, (double)e->context);
	roofline_terms(&r, &w, &e->decode);
}

int estimate_resolve(const struct estimate_request *req, struct estimate *e, struct gp_err *err)
{
	int rc;
	memset(e, 0, sizeof *e);
	if (!req->model == !req->model_config)
		return gp_errorf(err, GP_EINPUT, "estimate: %s",
				 req->model ? "expected --model or --model-config, not both"
					    : "missing --model M or --model-config PATH");
	if (req->model_config) {
		if ((rc = modelcfg_load(req->model_config, &e->owned, err)))
			return rc;
		e->model = e->owned;
	}
	if ((!e->model && (rc = find_model(req->model, &e->model, err))) ||
	    (rc = find_quant("--quant", "quantization", req->quant, &e->quant, err)) ||
	    (req->gpu && (rc = find_gpu(req->gpu, &e->gpu, err))))
		return rc;
	e->kv = footprint_quant_default_kv(e->quant);
	if (req->kv_cache &&
	    (rc = find_quant("--kv-cache", "KV-cache type", req->kv_cache, &e->kv, err)))
		return rc;
	if (req->tp && !footprint_tp_valid(e->model, req->tp))
		return gp_errorf(err, GP_EINPUT,
				 "--tp %d: must be a positive divisor of the %d attention heads "
				 "of %s",
				 req->tp, e->model->heads, e->model->name);
	return GP_OK;
}

int estimate_compute(const struct estimate_request *req, struct estimate *e, struct gp_err *err)
{
	int rc = estimate_resolve(req, e, err);
	if (rc)
		return rc;
	if (!e->gpu)
		return gp_errorf(err, GP_EINPUT, "estimate: missing --gpu");
	if (req->context < 1 || req->batch < 1)
		return gp_errorf(err, GP_EINPUT, "--%s: must be at least 1",
				 req->context < 1 ? "context" : "batch");
	e->context = req->context;
	e->batch = req->batch;
	e->weights_bytes = footprint_weights_bytes(e->model, e->quant);
	e->kv_bytes_per_token = footprint_kv_bytes_per_token(e->model, e->kv);
	e->kv_bytes = e->kv_bytes_per_token * (double)e->context * (double)e->batch;
	e->min_tp = footprint_min_tp(e->model, e->quant, e->kv, e->gpu->memory_bytes, e->context);
	e->tp = req->tp ? req->tp : e->min_tp;
	if (!e->tp)
		return does_not_fit(e, 0, err);
	footprint_compute(e->model, e->quant, e->kv, e->tp, e->gpu->memory_bytes, &e->fp);
	e->max_sequences = footprint_max_sequences(&e->fp, e->context);
	if (e->max_sequences < 1)
		return does_not_fit(e, e->tp, err);
	step_times(e);
	return GP_OK;
}

void estimate_free(struct estimate *e)
{
	modelcfg_free(e->owned);
	e->owned = NULL;
	e->model = NULL;
}

/* --- writers ------------------------------------------------------------- */

/* "138.00 GB (128.52 GiB)" */
static const char *size_text(char *buf, size_t len, double bytes)
{
	snprintf(buf, len, "%.2f GB (%.2f GiB)", bytes / 1e9, bytes / GP_GIB);
	return buf;
}

/* 90048 -> "90,048" */
static const char *grouped(char *buf, size_t len, int64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%" PRId64, v < 0 ? -v : v);
	size_t o = 0;
	if (v < 0 && o + 1 < len)
		buf[o++] = '-';
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static const char *bound(const struct roofline_terms *t)
{
	return t->compute_s >= t->memory_s ? "compute" : "memory";
}

void estimate_write_text(FILE *out, const struct estimate *e)
{
	char a[64], b[64];
	const struct model_arch *m = e->model;
	const struct footprint *fp = &e->fp;
	fprintf(out, "%s, %s weights, %s KV cache, on %s (%.0f GiB)\n", m->name,
		footprint_quant_name(e->quant), footprint_quant_name(e->kv), e->gpu->name,
		e->gpu->memory_bytes / GP_GIB);
	double kept = footprint_kept_params(m, e->quant);
	if (kept >= m->params)
		fprintf(out, "  weights              %s  %.2fB params x %g B\n",
			size_text(a, sizeof a, e->weights_bytes), m->params / 1e9,
			footprint_quant_weight_bytes(e->quant));
	else
		fprintf(out,
			"  weights              %s  %.2fB params x %g B + %.2fB embedding%s x 2 B\n",
			size_text(a, sizeof a, e->weights_bytes), (m->params - kept) / 1e9,
			footprint_quant_weight_bytes(e->quant), kept / 1e9,
			m->tied_embeddings ? "" : " and lm_head");
	if (m->experts)
		fprintf(out,
			"  experts              %d per MoE layer, %d per token: %.2fB of the %.2fB "
			"params compute\n",
			m->experts, m->experts_per_token, model_active_params(m) / 1e9,
			m->params / 1e9);
	fprintf(out, "  KV per token         %s B  2 x %d layers x %d KV heads x %d x %g B\n",
		grouped(a, sizeof a, (int64_t)e->kv_bytes_per_token), m->layers, m->kv_heads,
		m->head_dim, footprint_quant_kv_bytes(e->kv));
	char label[64], c[32];
	snprintf(label, sizeof label, "KV for %s x %s", grouped(a, sizeof a, e->context),
		 grouped(c, sizeof c, e->batch));
	fprintf(out, "  %-20s %s\n", label, size_text(b, sizeof b, e->kv_bytes));
	fprintf(out, "  runtime overhead     %s per GPU\n",
		size_text(a, sizeof a, fp->overhead_per_gpu));
	fprintf(out, "  min tensor parallel  %d (the smallest that fits a sequence of %s tokens)\n",
		e->min_tp, grouped(a, sizeof a, e->context));
	fprintf(out, "tensor parallel %d:\n", e->tp);
	fprintf(out, "  per GPU              %s weights + runtime, %s for KV\n",
		size_text(a, sizeof a, fp->weights_per_gpu + fp->overhead_per_gpu),
		size_text(b, sizeof b, fp->kv_capacity_per_gpu));
	fprintf(out, "  KV capacity          %s tokens in blocks of %d\n",
		grouped(a, sizeof a, fp->kv_tokens), FOOTPRINT_BLOCK_TOKENS);
	fprintf(out, "  max sequences        %s at %s tokens%s\n",
		grouped(a, sizeof a, e->max_sequences), grouped(b, sizeof b, e->context),
		e->batch > e->max_sequences ? " (fewer than --batch)" : "");
	fprintf(out, "  prefill              %.1f ms for %s tokens, %s-bound\n",
		e->prefill.total_s * 1e3, grouped(a, sizeof a, e->context), bound(&e->prefill));
	fprintf(out, "  decode step          %.1f ms for %s sequence%s at %s tokens, %s-bound\n",
		e->decode.total_s * 1e3, grouped(a, sizeof a, e->batch), e->batch == 1 ? "" : "s",
		grouped(b, sizeof b, e->context), bound(&e->decode));
}

void estimate_write_json(FILE *out, const struct estimate *e)
{
	const struct footprint *fp = &e->fp;
	fprintf(out, "{\n");
	fprintf(out, "  \"model\": \"%s\",\n", e->model->name);
	fprintf(out, "  \"quant\": \"%s\",\n", footprint_quant_name(e->quant));
	fprintf(out, "  \"kv_cache\": \"%s\",\n", footprint_quant_name(e->kv));
	fprintf(out, "  \"gpu\": \"%s\",\n", e->gpu->name);
	fprintf(out, "  \"context\": %" PRId64 ",\n", e->context);
	fprintf(out, "  \"batch\": %" PRId64 ",\n", e->batch);
	fprintf(out, "  \"tp\": %d,\n", e->tp);
	fprintf(out, "  \"params\": %.0f,\n", e->model->params);
	fprintf(out, "  \"active_params\": %.0f,\n", model_active_params(e->model));
	fprintf(out, "  \"gpu_memory_bytes\": %.0f,\n", e->gpu->memory_bytes);
	fprintf(out, "  \"weights_bytes\": %.0f,\n", e->weights_bytes);
	fprintf(out, "  \"kv_bytes_per_token\": %.0f,\n", e->kv_bytes_per_token);
	fprintf(out, "  \"kv_bytes\": %.0f,\n", e->kv_bytes);
	fprintf(out, "  \"overhead_bytes_per_gpu\": %.0f,\n", fp->overhead_per_gpu);
	fprintf(out, "  \"min_tensor_parallel\": %d,\n", e->min_tp);
	fprintf(out, "  \"weights_bytes_per_gpu\": %.0f,\n", fp->weights_per_gpu);
	fprintf(out, "  \"kv_capacity_bytes\": %.0f,\n", fp->kv_capacity_per_gpu * e->tp);
	fprintf(out, "  \"kv_capacity_tokens\": %" PRId64 ",\n", fp->kv_tokens);
	fprintf(out, "  \"max_sequences\": %" PRId64 ",\n", e->max_sequences);
	fprintf(out, "  \"batch_fits\": %s,\n", e->batch <= e->max_sequences ? "true" : "false");
	fprintf(out, "  \"prefill_s\": %.6f,\n", e->prefill.total_s);
	fprintf(out, "  \"prefill_bound\": \"%s\",\n", bound(&e->prefill));
	fprintf(out, "  \"decode_step_s\": %.6f,\n", e->decode.total_s);
	fprintf(out, "  \"decode_bound\": \"%s\"\n", bound(&e->decode));
	fprintf(out, "}\n");
}
