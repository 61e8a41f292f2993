// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoPE scaling from a GGUF file's ARCH.rope.scaling.* keys, as llama.cpp
 * reads them: the factor (rope.scaling.factor, or the older
 * rope.scale_linear) divides the positions, whatever the type; YaRN
 * (gpt-oss, Qwen's long-context files) blends that with the unscaled
 * angle per pair and scales cos and sin (tp_rope_table_yarn), over the
 * original_context_length the model was trained at. What this runner
 * does not compute (LongRoPE, DeepSeek's log multiplier, YaRN factors
 * other than llama.cpp's defaults) is refused by name.
 */
#include <stdio.h>
#include <string.h>

#include "gguf/gguf.h"
#include "model/load_gguf.h"

/* The float KEY (suffix) must be DEF when the file gives it. */
static int only(struct tp_gguf_load *L, const char *suffix, float def)
{
	float v;

	if (tp_gguf_float(L, tp_gguf_key(L, suffix), def, &v))
		return -1;
	if (v != def)
		return tp_gguf_bad(L, "%s is %g: only %g is supported",
				   L->key, v, def);
	return 0;
}

static int read_yarn(struct tp_gguf_load *L, struct tp_config *c)
{
	int train;

	if (c->rope_scale == 0)
		return tp_gguf_bad(L, "YaRN without %s: the scaling needs a factor",
				   tp_gguf_key(L, "rope.scaling.factor"));
	if (tp_gguf_int(L, tp_gguf_key(L, "context_length"), 0, &train) ||
	    tp_gguf_int(L, tp_gguf_key(L, "rope.scaling.original_context_length"),
			train, &c->yarn_orig_ctx) ||
	    tp_gguf_float(L, tp_gguf_key(L, "rope.scaling.yarn_beta_fast"), 32,
			  &c->yarn_beta_fast) ||
	    tp_gguf_float(L, tp_gguf_key(L, "rope.scaling.yarn_beta_slow"), 1,
			  &c->yarn_beta_slow) ||
	    tp_gguf_float(L, tp_gguf_key(L, "rope.scaling.yarn_log_multiplier"),
			  0, &c->yarn_log_mul) ||
	    only(L, "rope.scaling.yarn_ext_factor", 1) ||
	    only(L, "rope.scaling.yarn_attn_factor", 1) ||
	    only(L, "rope.scaling.attn_factor", 1))
		return -1;
	/* the multiplier only deepseek2's attention applies (mla.c) */
	if (c->yarn_log_mul != 0 && strcmp(L->arch, "deepseek2"))
		return tp_gguf_bad(L, "%s is %g: only 0 is supported (a YaRN log multiplier is deepseek2's)",
				   tp_gguf_key(L, "rope.scaling.yarn_log_multiplier"),
				   c->yarn_log_mul);
	if (!(c->yarn_log_mul >= 0 && c->yarn_log_mul < 100))
		return tp_gguf_bad(L, "%s is %g: out of range (0..100)",
				   tp_gguf_key(L, "rope.scaling.yarn_log_multiplier"),
				   c->yarn_log_mul);
	if (c->yarn_orig_ctx < 1 || c->yarn_orig_ctx > (1 << 24))
		return tp_gguf_bad(L, "%s is %d: YaRN needs the original context length (1..%d)",
				   tp_gguf_key(L, "rope.scaling.original_context_length"),
				   c->yarn_orig_ctx, 1 << 24);
	if (!(c->yarn_beta_fast > 0 && c->yarn_beta_fast < 1e4 &&
	      c->yarn_beta_slow > 0 && c->yarn_beta_slow < 1e4))
		return tp_gguf_bad(L, "YaRN's beta_fast %g and beta_slow %g are out of range",
				   c->yarn_beta_fast, c->yarn_beta_slow);
	return 0;
}

int tp_gguf_read_rope_scaling(struct tp_gguf_load *L, struct tp_config *c)
{
	struct gguf_str st;
	float factor = 0;
	int yarn = 0;

	if (gguf_get_str(&L->g, tp_gguf_key(L, "rope.scaling.type"), &st) == 1 &&
	    !gguf_str_eq(st, "none") && !gguf_str_eq(st, "linear")) {
		if (!gguf_str_eq(st, "yarn"))
			return tp_gguf_bad(L, "RoPE scaling type '%.*s' (%s) is not supported (none, linear and yarn are)",
					   (int)(st.len < 40 ? st.len : 40),
					   st.p, L->key);
		yarn = 1;
	}
	if (tp_gguf_float(L, tp_gguf_key(L, "rope.scaling.factor"), 0,
			  &factor))
		return -1;
	if (factor == 0 &&
	    tp_gguf_float(L, tp_gguf_key(L, "rope.scale_linear"), 0, &factor))
		return -1;
	if (factor != 0 && !(factor > 0 && factor < 1e6))
		return tp_gguf_bad(L, "RoPE scaling factor %g (%s) is out of range",
				   factor, L->key);
	c->rope_scale = factor != 0 ? 1.0f / factor : 0;
	return yarn ? read_yarn(L, c) : 0;
}
