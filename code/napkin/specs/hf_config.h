/* A model from a Hugging Face config.json: the shape the model table holds,
 * read from the keys transformers writes, so the calculator can size a
 * reader's own model (napkin --model-config FILE).
 *
 * Architectures read: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe,
 * deepseek_v3, gpt_oss, llama4, minimax_m2 (mixtral's keys), glm_moe_dsa
 * (GLM-5: DeepSeek-V3's keys; its sparse-attention indexer is not read, the
 * attention priced as dense MLA) and kimi_k2 (model_type, or the
 * architectures list; a multimodal config's text_config, as Kimi-K2.5's).
 * The later families' own keys (experts, latent ranks, windows, MXFP4 or
 * int4 group-32 experts) are read as the table's `arch` column; see
 * family_shape in hf_config.c.  A config with linear_attention layers
 * (Qwen3.5's qwen3_5_moe) is refused: linear attention is not priced yet.  Keys: num_hidden_layers, hidden_size,
 * num_attention_heads, intermediate_size, vocab_size (required);
 * num_key_value_heads (default: the attention heads, as transformers does),
 * head_dim (default hidden_size / num_attention_heads), num_local_experts and
 * num_experts_per_tok (mixtral; default 1), tie_word_embeddings (default
 * false), max_position_embeddings (default unknown).  Attention biases
 * (qwen2's q, k and v) are left out, as the table leaves them out: they are
 * a few hundred thousand of billions of parameters.
 *
 * The row is checked by the table's own parser, so a config gives exactly
 * the model a models.tsv row with the same numbers would.
 *
 * Bounded whatever the file holds: a text over 256 KiB is refused before it
 * is parsed, num_hidden_layers is checked against the table's limit
 * (MODEL_LAYERS_MAX) before anything uses it, and each list of layers is
 * read once; names and paths in messages are escaped (text_escape.h). */
#ifndef NAPKIN_HF_CONFIG_H
#define NAPKIN_HF_CONFIG_H

#include <stddef.h>

#include "specs.h"

/* Parse config.json text.  `origin` names the file in messages and becomes
 * the model's source; `key` becomes its key.  Returns 0, or -1 with a message
 * in err naming the file and the missing or bad key ("config.json: key
 * 'num_hidden_layers' is missing (architecture GPT2LMHeadModel, model_type
 * gpt2, is not one napkin reads: llama, mistral, mixtral, qwen2, ...)"). */
int model_from_hf_config(const char *json_text, const char *origin, const char *key, model_spec *out, char *err,
                         size_t errlen);

/* The same, reading the file at path. */
int model_from_hf_config_file(const char *path, const char *key, model_spec *out, char *err, size_t errlen);

#endif
