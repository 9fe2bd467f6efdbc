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
	return unknown(err, flag, what, name, footprint_quant_names, QUANT_COUNT);
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

/* The document's members, one a line, and the rows of "gpus", one a line. */
static const struct jsonw_style doc_style = {"\n  ", "\n  ", "\n", " "};
static const struct jsonw_style gpus_style = {"\n    ", "\n    ", "\n  ", " "};

void estimate_json_fixed(struct jsonw *w, const char *key, double v, int decimals)
{
	jsonw_key(w, key);
	jsonw_real(w, v, JSONW_DEC(decimals));
}

void estimate_json_int(struct jsonw *w, const char *key, int64_t v)
{
	jsonw_key(w, key);
	jsonw_int(w, v);
}

static void member_string(struct jsonw *w, const char *key, const char *v)
{
	jsonw_key(w, key);
	jsonw_string(w, v);
}

void estimate_json_row(struct jsonw *w, const char *gpu, const char *verdict)
{
	jsonw_object(w, &jsonw_inline);
	member_string(w, "gpu", gpu);
	member_string(w, "verdict", verdict);
}

void estimate_json_begin(struct jsonw *w, FILE *out, const struct estimate *e,
			 const struct estimate_traffic *t, const struct firstcut_service *s,
			 const char *link)
{
	jsonw_init(w, out);
	jsonw_object(w, &doc_style);
	member_string(w, "model", e->model->name);
	member_string(w, "quant", footprint_quant_name(e->quant));
	jsonw_key(w, "rate");
	jsonw_real(w, t->rate, JSONW_SIG(6));
	jsonw_key(w, "prompt_tail");
	jsonw_real(w, s->prompt_tail, JSONW_SIG(6));
	if (link)
		member_string(w, "link", link);
	member_string(w, "estimate", "first cut");
	jsonw_key(w, "gpus");
	jsonw_array(w, &gpus_style);
}

void estimate_json_end(struct jsonw *w)
{
	while (w->depth > 0)
		jsonw_close(w);
	fputc('\n', w->out);
}

void estimate_write_json(FILE *out, const struct estimate *e)
{
	const struct footprint *fp = &e->fp;
	struct jsonw w;
	jsonw_init(&w, out);
	jsonw_object(&w, &doc_style);
	member_string(&w, "model", e->model->name);
	member_string(&w, "quant", footprint_quant_name(e->quant));
	member_string(&w, "kv_cache", footprint_quant_name(e->kv));
	member_string(&w, "gpu", e->gpu->name);
	estimate_json_int(&w, "context", e->context);
	estimate_json_int(&w, "batch", e->batch);
	estimate_json_int(&w, "tp", e->tp);
	estimate_json_fixed(&w, "params", e->model->params, 0);
	estimate_json_fixed(&w, "active_params", model_active_params(e->model), 0);
	estimate_json_fixed(&w, "gpu_memory_bytes", e->gpu->memory_bytes, 0);
	estimate_json_fixed(&w, "weights_bytes", e->weights_bytes, 0);
	estimate_json_fixed(&w, "kv_bytes_per_token", e->kv_bytes_per_token, 0);
	estimate_json_fixed(&w, "kv_bytes", e->kv_bytes, 0);
	estimate_json_fixed(&w, "overhead_bytes_per_gpu", fp->overhead_per_gpu, 0);
	estimate_json_int(&w, "min_tensor_parallel", e->min_tp);
	estimate_json_fixed(&w, "weights_bytes_per_gpu", fp->weights_per_gpu, 0);
	estimate_json_fixed(&w, "kv_capacity_bytes", fp->kv_capacity_per_gpu * e->tp, 0);
	estimate_json_int(&w, "kv_capacity_tokens", fp->kv_tokens);
	estimate_json_int(&w, "max_sequences", e->max_sequences);
	jsonw_key(&w, "batch_fits");
	jsonw_bool(&w, e->batch <= e->max_sequences);
	estimate_json_fixed(&w, "prefill_s", e->prefill.total_s, 6);
	member_string(&w, "prefill_bound", bound(&e->prefill));
	estimate_json_fixed(&w, "decode_step_s", e->decode.total_s, 6);
	member_string(&w, "decode_bound", bound(&e->decode));
	estimate_json_end(&w);
}
