/*
 * modelcfg.h - a model architecture from a Hugging Face config.json
 * (`--model-config PATH`, the `model_config:` key; docs/inference.md).
 *
 * Reads the keys transformers' configs use: hidden_size, num_hidden_layers,
 * num_attention_heads, num_key_value_heads, head_dim, intermediate_size,
 * vocab_size, tie_word_embeddings; the experts of a mixture (Mixtral and
 * GPT-OSS num_local_experts, Qwen3-MoE num_experts, DeepSeek n_routed_experts;
 * num_experts_per_tok or experts_per_token; moe_intermediate_size,
 * n_shared_experts, first_k_dense_replace); and DeepSeek's multi-head latent
 * attention (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
 * v_head_dim).  A multimodal config's text_config is read when the top level
 * has no hidden_size.  Other keys are ignored.  The parameter count is
 * derived from the architecture (modelcfg.c says how).
 *
 * The JSON is read with the scenario's YAML reader (ytree), so errors name
 * FILE:LINE:COL and the key.
 */
#ifndef GPUPLAN_MODELCFG_H
#define GPUPLAN_MODELCFG_H

#include "gpuplan/catalog.h"

/* Reads PATH into a new *out, named after the file (its name without .json,
 * or its folder's for a file called config.json).  GP_EINPUT with err
 * located at the key for a missing or invalid value. */
int modelcfg_load(const char *path, struct model_arch **out, struct gp_err *err);

/* The same from memory; name is used in locations and as the model's name. */
int modelcfg_parse(const char *name, const char *text, size_t len, struct model_arch **out,
		   struct gp_err *err);

void modelcfg_free(struct model_arch *m);

#endif
