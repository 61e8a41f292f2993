// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Weights from a GGUF file of the llama or qwen2 architecture (qwen2:
 * llama with biases on Q, K and V, and RoPE on halves). The file is
 * memory-mapped; a rank's tensors are views of its rows and columns in
 * the mapping (see tp_mat_shard), so it reads only its shard of each
 * split tensor (plus the replicated embedding, output and norms).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "model.h"
#include "util.h"

struct gload {
	struct gguf g;
	struct tp_weights *w;
	const char *path;
	char *err;
	size_t errlen;
	char arch[16];		/* "llama", "qwen2" */
	char key[96];		/* scratch for key() */
};

static int bad(struct gload *L, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(struct gload *L, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(L->err, L->errlen, "%s: %s", L->path, msg);
	return -1;
}

static int get_int(struct gload *L, const char *key, int64_t def, int *out)
{
	int64_t v = def;
	int r = gguf_get_int(&L->g, key, &v);

	if (r < 0)
		return bad(L, "metadata %s is not an integer", key);
	if (r == 0 && def < 0)
		return bad(L, "metadata %s is missing", key);
	if (v < 0 || v > (1 << 30))
		return bad(L, "metadata %s = %lld is out of range", key,
			   (long long)v);
	*out = (int)v;
	return 0;
}

static int get_float(struct gload *L, const char *key, double def, float *out)
{
	double v = def;

	if (gguf_get_float(&L->g, key, &v) < 0)
		return bad(L, "metadata %s is not a number", key);
	*out = (float)v;
	return 0;
}

/* The whole tensor NAME as a ROWS x COLS matrix view (ne = {COLS, ROWS}). */
static int full_mat(struct gload *L, const char *name, int rows, int cols,
		    struct tp_mat *m)
{
	const struct gguf_tensor *t = gguf_find_tensor(&L->g, name);

	if (!t)
		return bad(L, "tensor %s is missing", name);
	if (t->ndims > 2 || t->ne[0] != (uint64_t)cols ||
	    t->ne[1] != (uint64_t)rows)
		return bad(L, "tensor %s is %llu x %llu, expected %d x %d (columns x rows)",
			   name, (unsigned long long)t->ne[0],
			   (unsigned long long)t->ne[1], cols, rows);
	if ((uintptr_t)t->data % (t->type == TP_F32 ? 4 : 2))
		return bad(L, "tensor %s is not aligned in the file", name);
	m->type = (enum tp_type)t->type;
	m->rows = rows;
	m->cols = cols;
	m->stride = tp_type_bytes(m->type, (size_t)cols);
	m->data = t->data;
	return 0;
}

static int shard(struct gload *L, const char *fmt, int layer, int rows,
		 int cols, int r0, int r1, int c0, int c1, struct tp_mat *out)
{
	struct tp_mat full;
	char name[96];

	snprintf(name, sizeof(name), fmt, layer);
	if (full_mat(L, name, rows, cols, &full))
		return -1;
	tp_mat_shard(L->w, &full, r0, r1, c0, c1, out);
	return 0;
}

/* A norm vector as F32 (copied: they are small and may be F16). */
static int vec(struct gload *L, const char *fmt, int layer, int n,
	       const float **out)
{
	struct tp_mat m;
	float *v;
	char name[96];

	snprintf(name, sizeof(name), fmt, layer);
	if (full_mat(L, name, 1, n, &m))
		return -1;
	v = tp_weights_alloc(L->w, (size_t)n * sizeof(float));
	tp_row_to_f32(m.type, m.data, v, (size_t)n);
	*out = v;
	return 0;
}

/* "ARCH.SUFFIX", the key of a model parameter (llama.cpp's names). */
static const char *key(struct gload *L, const char *suffix)
{
	snprintf(L->key, sizeof(L->key), "%s.%s", L->arch, suffix);
	return L->key;
}

static int read_config(struct gload *L, struct tp_config *c)
{
	const struct gguf_tensor *emb;
	struct gguf_str arch, st;
	float factor = 0;

	if (gguf_get_str(&L->g, "general.architecture", &arch) != 1)
		return bad(L, "general.architecture is missing");
	if (gguf_str_eq(arch, "llama") || gguf_str_eq(arch, "qwen2"))
		snprintf(L->arch, sizeof(L->arch), "%.*s", (int)arch.len,
			 arch.p);
	else
		return bad(L, "architecture '%.*s' is not supported (llama and qwen2 are)",
			   (int)(arch.len < 40 ? arch.len : 40), arch.p);
	memset(c, 0, sizeof(*c));
	if (get_int(L, key(L, "embedding_length"), -1, &c->dim) ||
	    get_int(L, key(L, "block_count"), -1, &c->layers) ||
	    get_int(L, key(L, "feed_forward_length"), -1, &c->ffn) ||
	    get_int(L, key(L, "attention.head_count"), -1, &c->heads))
		return -1;
	if (get_int(L, key(L, "attention.head_count_kv"), c->heads,
		    &c->kv_heads) ||
	    get_int(L, key(L, "attention.key_length"),
		    c->heads ? c->dim / c->heads : 0, &c->head_dim) ||
	    get_int(L, key(L, "rope.dimension_count"), c->head_dim,
		    &c->rot_dim) ||
	    get_float(L, key(L, "attention.layer_norm_rms_epsilon"), 1e-5,
		      &c->eps) ||
	    get_float(L, key(L, "rope.freq_base"), 10000.0, &c->rope_base))
		return -1;
	/* Qwen2 rotates the halves of each head ("neox"), llama pairs */
	c->rope_neox = gguf_str_eq(arch, "qwen2");
	/*
	 * RoPE scaling as llama.cpp reads it: positions times 1/factor
	 * (rope.scaling.factor, or the older rope.scale_linear), whatever
	 * the type; the types that change more than that (YaRN, LongRoPE)
	 * are refused. rope_freqs.weight (Llama 3.1) is read with the
	 * tensors.
	 */
	if (gguf_get_str(&L->g, key(L, "rope.scaling.type"), &st) == 1 &&
	    !gguf_str_eq(st, "none") && !gguf_str_eq(st, "linear"))
		return bad(L, "RoPE scaling type '%.*s' (%s) is not supported (none and linear are)",
			   (int)(st.len < 40 ? st.len : 40), st.p, L->key);
	if (get_float(L, key(L, "rope.scaling.factor"), 0, &factor))
		return -1;
	if (factor == 0 &&
	    get_float(L, key(L, "rope.scale_linear"), 0, &factor))
		return -1;
	if (factor != 0 && !(factor > 0 && factor < 1e6))
		return bad(L, "RoPE scaling factor %g (%s) is out of range",
			   factor, L->key);
	c->rope_scale = factor != 0 ? 1.0f / factor : 0;
	emb = gguf_find_tensor(&L->g, "token_embd.weight");
	if (!emb || emb->ndims != 2 || emb->ne[1] > (1u << 24))
		return bad(L, "tensor token_embd.weight is missing or not 2-D");
	c->vocab = (int)emb->ne[1];
	return 0;
}

/* Qwen2's bias of N rows as F32, from row R0 (this rank's first). */
static int bias(struct gload *L, const char *fmt, int layer, int n, int r0,
		const float **out)
{
	const float *full;

	if (vec(L, fmt, layer, n, &full))
		return -1;
	*out = full + r0;
	return 0;
}

int tp_weights_gguf(struct tp_weights *w, const char *path, int rank,
		    int nranks, char *err, size_t errlen)
{
	struct gload L = { .w = w, .path = path, .err = err, .errlen = errlen };
	struct tp_config *c = &w->cfg;
	const struct tp_shard *sh = &w->sh;
	int l, hd, qd, ret = -1;
	char msg[400];

	memset(w, 0, sizeof(*w));
	if (gguf_open(&L.g, path, err, errlen))
		return -1;
	if (read_config(&L, c))
		goto out;
	if (tp_config_check(c, nranks, msg, sizeof(msg))) {
		bad(&L, "%s", msg);
		goto out;
	}
	hd = c->head_dim;
	qd = c->heads * hd;
	{	/* MLP split on the down weight's blocks (256: K-quants) */
		const struct gguf_tensor *dn =
			gguf_find_tensor(&L.g, "blk.0.ffn_down.weight");

		tp_shard_plan_unit(c, rank, nranks, dn ?
				   tp_type_block((enum tp_type)dn->type) : 32,
				   &w->sh);
	}
	snprintf(w->source, sizeof(w->source), "%s", path);
	w->layer = tp_calloc((size_t)c->layers, sizeof(*w->layer));
	if (full_mat(&L, "token_embd.weight", c->vocab, c->dim, &w->tok_embd))
		goto out;
	w->wtype = w->tok_embd.type;
	if (gguf_find_tensor(&L.g, "output.weight")) {
		if (full_mat(&L, "output.weight", c->vocab, c->dim, &w->output))
			goto out;
	} else {
		w->output = w->tok_embd;	/* tied embeddings */
	}
	if (vec(&L, "output_norm.weight", 0, c->dim, &w->out_norm))
		goto out;
	if (gguf_find_tensor(&L.g, "rope_freqs.weight") &&
	    vec(&L, "rope_freqs.weight", 0, c->rot_dim / 2, &w->rope_freqs))
		goto out;
	for (l = 0; l < c->layers; l++) {
		struct tp_layer *y = &w->layer[l];

		if (vec(&L, "blk.%d.attn_norm.weight", l, c->dim,
			&y->attn_norm) ||
		    vec(&L, "blk.%d.ffn_norm.weight", l, c->dim, &y->ffn_norm) ||
		    shard(&L, "blk.%d.attn_q.weight", l, qd, c->dim,
			  sh->q0 * hd, sh->q1 * hd, 0, c->dim, &y->wq) ||
		    shard(&L, "blk.%d.attn_k.weight", l, c->kv_heads * hd,
			  c->dim, sh->kv0 * hd, sh->kv1 * hd, 0, c->dim,
			  &y->wk) ||
		    shard(&L, "blk.%d.attn_v.weight", l, c->kv_heads * hd,
			  c->dim, sh->kv0 * hd, sh->kv1 * hd, 0, c->dim,
			  &y->wv) ||
		    shard(&L, "blk.%d.attn_output.weight", l, c->dim, qd, 0,
			  c->dim, sh->q0 * hd, sh->q1 * hd, &y->wo) ||
		    shard(&L, "blk.%d.ffn_gate.weight", l, c->ffn, c->dim,
			  sh->f0, sh->f1, 0, c->dim, &y->wgate) ||
		    shard(&L, "blk.%d.ffn_up.weight", l, c->ffn, c->dim,
			  sh->f0, sh->f1, 0, c->dim, &y->wup) ||
		    shard(&L, "blk.%d.ffn_down.weight", l, c->dim, c->ffn, 0,
			  c->dim, sh->f0, sh->f1, &y->wdown))
			goto out;
		if (c->rope_neox &&	/* qwen2 */
		    (bias(&L, "blk.%d.attn_q.bias", l, qd, sh->q0 * hd,
			  &y->bq) ||
		     bias(&L, "blk.%d.attn_k.bias", l, c->kv_heads * hd,
			  sh->kv0 * hd, &y->bk) ||
		     bias(&L, "blk.%d.attn_v.bias", l, c->kv_heads * hd,
			  sh->kv0 * hd, &y->bv)))
			goto out;
	}
	w->map = L.g.map;
	w->map_len = L.g.map_len;
	gguf_release(&L.g);
	return 0;
out:
	gguf_close(&L.g);
	tp_weights_free(w);
	return ret;
}
