/*
 * modelcfg.c - a struct model_arch from a Hugging Face config.json
 * (modelcfg.h).
 *
 * Parameters, from the architecture (biases and the norms' scales beyond one
 * per layer and block are left out: under 0.1 % of any model here):
 *   embedding and lm_head   vocab x hidden each; one of them if tied
 *   attention per layer     q and o: hidden x heads x head_dim each;
 *                           k and v: hidden x kv_heads x head_dim each
 *     latent (DeepSeek MLA) q: hidden x q_lora + q_lora x heads x (nope + rope)
 *                           (hidden x heads x (nope + rope) without q_lora);
 *                           kv: hidden x (kv_lora + rope) + kv_lora x heads x
 *                           (nope + v); o: heads x v x hidden
 *   MLP per dense layer     3 x hidden x intermediate (gated: gate, up, down)
 *   MoE per layer           experts x 3 x hidden x moe_intermediate (routed)
 *                           + shared x 3 x hidden x moe_intermediate
 *                           + hidden x experts (the router); the first
 *                           first_k_dense_replace layers are dense
 *   norms                   2 x hidden per layer + hidden
 * Active parameters: all of them less the routed experts a token skips,
 * expert_params x (1 - top_k / experts); the embedding counts, as Mixtral's,
 * Qwen's and DeepSeek's published active counts do (OpenAI's for GPT-OSS
 * leave the input embedding out).
 * KV cache: kv_heads x head_dim per layer for K and for V.  MLA caches one
 * latent of kv_lora + rope per token and layer, replicated on every GPU of
 * a TP group (vLLM's MLA backend): it is entered as one KV head of
 * (kv_lora + rope) / 2, so K + V = the latent; attention FLOPs then count
 * heads x that half-latent per key, about half of what absorbed MLA does.
 * Sliding-window layers (GPT-OSS, Mistral) are counted as full attention.
 */
#include "gpuplan/modelcfg.h"

#include "gpuplan/ytree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 128

/* The model and its name in one block: modelcfg_free frees both. */
struct owned_model {
	struct model_arch m;
	char name[NAME_MAX_LEN];
};

struct reader {
	const struct ynode *map;
	const char *file;
	struct gp_err *err;
};

/* The integer under key: *v stays as given when the key is absent or null;
 * an error unless it is a whole number in [lo, 2^31). */
static int get_int(const struct reader *r, const char *key, long lo, int *v, bool required)
{
	const struct ynode *n = ynode_get(r->map, key);
	if (!n || (n->kind == YNODE_SCALAR && !n->quoted && !strcmp(n->value, "null"))) {
		if (!required)
			return GP_OK;
		return gp_located(r->err, r->map->loc,
				  "no %s; expected a Hugging Face config.json with hidden_size, "
				  "num_hidden_layers, num_attention_heads, intermediate_size and "
				  "vocab_size",
				  key);
	}
	char *end = NULL;
	errno = 0;
	long x = n->kind == YNODE_SCALAR && !n->quoted ? strtol(n->value, &end, 10) : 0;
	if (n->kind != YNODE_SCALAR || n->quoted || !end || *end || end == n->value || errno ||
	    x < lo || x > 2147483647L)
		return gp_located(r->err, n->loc,
				  "%s: expected a whole number of at least %ld, got %s", key, lo,
				  n->kind == YNODE_SCALAR ? n->value : "a list or map");
	*v = (int)x;
	return GP_OK;
}

static int get_bool(const struct reader *r, const char *key, bool *v)
{
	const struct ynode *n = ynode_get(r->map, key);
	if (!n)
		return GP_OK;
	if (n->kind == YNODE_SCALAR && !n->quoted &&
	    (!strcmp(n->value, "true") || !strcmp(n->value, "false"))) {
		*v = n->value[0] == 't';
		return GP_OK;
	}
	return gp_located(r->err, n->loc, "%s: expected true or false, got %s", key,
			  n->kind == YNODE_SCALAR ? n->value : "a list or map");
}

struct arch {
	int hidden, layers, heads, kv_heads, head_dim, ffn, vocab;
	bool tied;
	int experts, top_k, moe_ffn, shared, first_dense;
	int q_lora, kv_lora, nope, rope, v_dim;
};

static int read_arch(const struct reader *r, struct arch *a)
{
	int rc;
	memset(a, 0, sizeof *a);
	if ((rc = get_int(r, "hidden_size", 1, &a->hidden, true)) ||
	    (rc = get_int(r, "num_hidden_layers", 1, &a->layers, true)) ||
	    (rc = get_int(r, "num_attention_heads", 1, &a->heads, true)) ||
	    (rc = get_int(r, "intermediate_size", 1, &a->ffn, true)) ||
	    (rc = get_int(r, "vocab_size", 1, &a->vocab, true)))
		return rc;
	a->kv_heads = a->heads;
	a->head_dim = a->hidden / a->heads;
	if ((rc = get_int(r, "num_key_value_heads", 1, &a->kv_heads, false)) ||
	    (rc = get_int(r, "head_dim", 1, &a->head_dim, false)) ||
	    (rc = get_bool(r, "tie_word_embeddings", &a->tied)) ||
	    (rc = get_int(r, "num_local_experts", 0, &a->experts, false)) ||
	    (rc = get_int(r, "num_experts", 0, &a->experts, false)) ||
	    (rc = get_int(r, "n_routed_experts", 0, &a->experts, false)) ||
	    (rc = get_int(r, "experts_per_token", 0, &a->top_k, false)) ||
	    (rc = get_int(r, "num_experts_per_tok", 0, &a->top_k, false)))
		return rc;
	a->moe_ffn = a->ffn;
	if ((rc = get_int(r, "moe_intermediate_size", 1, &a->moe_ffn, false)) ||
	    (rc = get_int(r, "n_shared_experts", 0, &a->shared, false)) ||
	    (rc = get_int(r, "first_k_dense_replace", 0, &a->first_dense, false)) ||
	    (rc = get_int(r, "q_lora_rank", 0, &a->q_lora, false)) ||
	    (rc = get_int(r, "kv_lora_rank", 0, &a->kv_lora, false)))
		return rc;
	if (a->kv_lora && ((rc = get_int(r, "qk_nope_head_dim", 1, &a->nope, true)) ||
			   (rc = get_int(r, "qk_rope_head_dim", 1, &a->rope, true)) ||
			   (rc = get_int(r, "v_head_dim", 1, &a->v_dim, true))))
		return rc;
	const struct ynode *at = ynode_get(r->map, "num_key_value_heads");
	if (a->heads % a->kv_heads)
		return gp_located(r->err, at->loc,
				  "num_key_value_heads %d does not divide the %d attention heads",
				  a->kv_heads, a->heads);
	if (a->experts == 1 || (a->experts > 1) != (a->top_k > 0) || a->top_k > a->experts)
		return gp_located(r->err, r->map->loc,
				  "%d experts with %d per token; expected 2 or more experts and 1 "
				  "to that many per token (num_experts_per_tok), or neither",
				  a->experts, a->top_k);
	if (a->first_dense > a->layers)
		return gp_located(r->err, ynode_get(r->map, "first_k_dense_replace")->loc,
				  "first_k_dense_replace %d exceeds the %d layers", a->first_dense,
				  a->layers);
	if (a->kv_lora && (a->kv_lora + a->rope) % 2)
		return gp_located(
			r->err, ynode_get(r->map, "kv_lora_rank")->loc,
			"kv_lora_rank + qk_rope_head_dim is odd (%d); expected an even latent",
			a->kv_lora + a->rope);
	return GP_OK;
}

/* The counts of the header comment. */
static void fill(struct model_arch *m, const struct arch *a)
{
	double h = a->hidden, heads = a->heads, attn;
	if (a->kv_lora) {
		double qk = a->nope + a->rope;
		double q =
			a->q_lora ? h * a->q_lora + (double)a->q_lora * heads * qk : h * heads * qk;
		attn = q + h * (a->kv_lora + a->rope) + a->kv_lora * heads * (a->nope + a->v_dim) +
		       heads * a->v_dim * h;
	} else {
		attn = 2 * h * heads * a->head_dim + 2 * h * a->kv_heads * a->head_dim;
	}
	int moe_layers = a->experts ? a->layers - a->first_dense : 0;
	double expert = 3 * h * a->moe_ffn;
	double routed = (double)moe_layers * a->experts * expert;
	double params = (double)a->vocab * h * (a->tied ? 1 : 2) + a->layers * attn +
			(a->layers - moe_layers) * 3 * h * a->ffn + routed +
			moe_layers * (a->shared * expert + h * a->experts) + a->layers * 2 * h + h;
	m->params = params;
	m->layers = a->layers;
	m->hidden = a->hidden;
	m->heads = a->heads;
	m->kv_heads = a->kv_lora ? 1 : a->kv_heads;
	m->head_dim = a->kv_lora ? (a->kv_lora + a->rope) / 2 : a->head_dim;
	m->ffn = a->experts ? a->moe_ffn : a->ffn;
	m->vocab = a->vocab;
	m->tied_embeddings = a->tied;
	m->experts = a->experts;
	m->experts_per_token = a->top_k;
	m->expert_params = routed;
	m->active_params =
		a->experts ? params - routed * (1 - (double)a->top_k / a->experts) : params;
}

/* "models/qwen3-8b.json" -> "qwen3-8b"; "Qwen3-8B/config.json" -> "Qwen3-8B". */
static void model_name(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (!strcmp(base, "config.json") && base > path + 1) {
		const char *end = base - 1, *start = end;
		while (start > path && start[-1] != '/')
			start--;
		base = start;
		n = (size_t)(end - start);
	} else if (n > 5 && !strcmp(base + n - 5, ".json")) {
		n -= 5;
	}
	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), base);
}

static int build(const char *path, struct ytree *t, struct model_arch **out, struct gp_err *err)
{
	struct reader r = {t->root, path, err};
	if (!t->root || t->root->kind != YNODE_MAP)
		return gp_located(err, t->root ? t->root->loc : (struct srcloc){path, 0, 0},
				  "expected a JSON object (a Hugging Face config.json)");
	const struct ynode *text = ynode_get(t->root, "text_config");
	if (!ynode_get(t->root, "hidden_size") && text && text->kind == YNODE_MAP)
		r.map = text;
	struct arch a;
	int rc = read_arch(&r, &a);
	if (rc)
		return rc;
	struct owned_model *o = gp_xcalloc(1, sizeof *o);
	model_name(path, o->name, sizeof o->name);
	o->m.name = o->name;
	fill(&o->m, &a);
	*out = &o->m;
	return GP_OK;
}

int modelcfg_load(const char *path, struct model_arch **out, struct gp_err *err)
{
	struct ytree *t = NULL;
	*out = NULL;
	int rc = ytree_load(path, &t, err);
	if (!rc)
		rc = build(path, t, out, err);
	if (t)
		ytree_free(t);
	return rc;
}

int modelcfg_parse(const char *name, const char *text, size_t len, struct model_arch **out,
		   struct gp_err *err)
{
	struct ytree *t = NULL;
	*out = NULL;
	int rc = ytree_parse(name, text, len, &t, err);
	if (!rc)
		rc = build(name, t, out, err);
	if (t)
		ytree_free(t);
	return rc;
}

void modelcfg_free(struct model_arch *m)
{
	free(m); /* the first member of its struct owned_model */
}
