// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A rank's weights from a GGUF file: what every architecture shares (the
 * file, the hyperparameters of llama.cpp's llama family, the vocabulary
 * ends) and the readers the architectures' files use for the rest. The
 * header is parsed from a mapping of the file; the rank's shard of every
 * tensor is then read with pread() into memory of its own: whole rows
 * for the column-parallel matrices and the output head (one range each),
 * the rank's column range of each row for the row-parallel ones. Nothing the
 * rank does not own is ever mapped in, and what it holds is exactly its
 * shard: without that, a column slice of a row-parallel matrix would
 * fault in every page of it (a page holds the columns of several ranks).
 * The embedding table is not held at all: a row is read per token.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "gguf/gguf.h"
#include "kernels/matmul.h"
#include "model/arch.h"
#include "model/load_gguf.h"
#include "model/model.h"

/* The whole tensor NAME as a ROWS x COLS matrix view (ne = {COLS, ROWS}). */
static int full_mat(struct tp_gguf_load *L, const char *name, int rows,
		    int cols, struct tp_mat *m)
{
	const struct gguf_tensor *t = gguf_find_tensor(&L->g, name);

	if (!t)
		return tp_gguf_bad(L, "tensor %s is missing", name);
	if (t->ndims > 2 || t->ne[0] != (uint64_t)cols ||
	    t->ne[1] != (uint64_t)rows)
		return tp_gguf_bad(L, "tensor %s is %llu x %llu, expected %d x %d (columns x rows)",
				   name, (unsigned long long)t->ne[0],
				   (unsigned long long)t->ne[1], cols, rows);
	if ((uintptr_t)t->data % (t->type == TP_F32 ? 4 : 2))
		return tp_gguf_bad(L, "tensor %s is not aligned in the file", name);
	m->type = (enum tp_type)t->type;
	m->rows = rows;
	m->cols = cols;
	m->stride = tp_type_bytes(m->type, (size_t)cols);
	m->data = t->data;
	return 0;
}

/* LEN bytes of the file at the place P of the mapping (not touched). */
static int read_at(struct tp_gguf_load *L, const void *p, void *buf, size_t len,
		   const char *what)
{
	long long off = (const unsigned char *)p - L->g.base;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(L->fd, (char *)buf + got, len - got,
				  off + (long long)got);

		if (n > 0)
			got += (size_t)n;
		else if (!(n < 0 && errno == EINTR))
			return tp_gguf_bad(L, "reading %s: %s", what, n ?
					   strerror(errno) :
					   "the file got shorter");
	}
	return 0;
}

/*
 * Rows [r0,r1) x columns [c0,c1) of FULL into memory of the rank's own:
 * the columns widened to whole blocks of its type, then cut by
 * tp_mat_shard() (a view when C0 starts a block, else F32), as the
 * synthetic weights are.
 */
static int read_shard(struct tp_gguf_load *L, const struct tp_mat *full,
		      int r0, int r1, int c0, int c1, const char *what,
		      struct tp_mat *out)
{
	int blk = tp_type_block(full->type), i;
	int cb0 = c0 / blk * blk, cb1 = (c1 + blk - 1) / blk * blk;
	size_t skip = tp_type_bytes(full->type, (size_t)cb0);
	size_t stride = tp_type_bytes(full->type, (size_t)(cb1 - cb0));
	char *data = tp_weights_alloc(L->w, stride * (size_t)(r1 - r0));
	struct tp_mat part = {
		.type = full->type, .rows = r1 - r0, .cols = cb1 - cb0,
		.stride = stride, .data = data,
	};

	if (stride == full->stride) {	/* whole rows: one range */
		if (read_at(L, tp_mat_row(full, r0), data,
			    stride * (size_t)(r1 - r0), what))
			return -1;
	} else {
		for (i = r0; i < r1; i++)
			if (read_at(L, (const char *)tp_mat_row(full, i) + skip,
				    data + (size_t)(i - r0) * stride, stride,
				    what))
				return -1;
	}
	tp_mat_shard(L->w, &part, 0, r1 - r0, c0 - cb0, c1 - cb0, out);
	tp_mat_interleave(out);	/* for decoding, where it gains */
	return 0;
}

int tp_gguf_shard(struct tp_gguf_load *L, const char *fmt, int layer,
		  int rows, int cols, int r0, int r1, int c0, int c1,
		  struct tp_mat *out)
{
	struct tp_mat full;
	char name[96];

	snprintf(name, sizeof(name), fmt, layer);
	if (full_mat(L, name, rows, cols, &full))
		return -1;
	return read_shard(L, &full, r0, r1, c0, c1, name, out);
}

int tp_gguf_matrix(struct tp_gguf_load *L, const char *fmt, int layer,
		   int rows, int cols, struct tp_mat *out)
{
	struct tp_mat full;
	char name[96];
	char *data;

	snprintf(name, sizeof(name), fmt, layer);
	if (full_mat(L, name, rows, cols, &full))
		return -1;
	data = tp_weights_alloc(L->w, full.stride * (size_t)rows);
	if (read_at(L, full.data, data, full.stride * (size_t)rows, name))
		return -1;
	*out = full;
	out->data = data;
	out->interleaved = 0;
	return 0;
}

/* Rows [R0,R1) of each of N expert slabs of ROWS rows of T one after
 * another in the file, columns [C0,C1) of each row (SKIP bytes into it,
 * PART bytes), to DST: whole rows in one read, slices through a bounce
 * buffer of whole rows (one read a row would be millions of reads). */
static int read_slabs(struct tp_gguf_load *L, const struct gguf_tensor *t,
		      const char *name, int e0, int n, int rows, int r0,
		      int r1, size_t stride, size_t skip, size_t part,
		      char *dst)
{
	const char *base = (const char *)t->data;
	size_t nr = (size_t)(r1 - r0), chunk, got, i;
	char *buf;
	int e;

	if (part == stride) {
		if (r0 == 0 && r1 == rows)	/* the slabs are contiguous */
			return read_at(L, base + (size_t)e0 * rows * stride,
				       dst, (size_t)n * nr * stride, name);
		for (e = 0; e < n; e++)
			if (read_at(L, base + ((size_t)(e0 + e) * rows + r0) *
					stride, dst + (size_t)e * nr * stride,
				    nr * stride, name))
				return -1;
		return 0;
	}
	chunk = (1u << 20) / stride + 1;
	buf = tp_calloc(chunk, stride);
	for (e = 0; e < n; e++)
		for (i = 0; i < nr; i += got) {
			size_t k;

			got = nr - i < chunk ? nr - i : chunk;
			if (read_at(L, base + ((size_t)(e0 + e) * rows + r0 +
					       i) * stride,
				    buf, got * stride, name)) {
				free(buf);
				return -1;
			}
			for (k = 0; k < got; k++)
				memcpy(dst + ((size_t)e * nr + i + k) * part,
				       buf + k * stride + skip, part);
		}
	free(buf);
	return 0;
}

int tp_gguf_experts(struct tp_gguf_load *L, const char *fmt, int layer,
		    int rows, int cols, int r0, int r1, int c0, int c1,
		    struct tp_mat *out)
{
	const struct tp_shard *sh = &L->w->sh;
	int E = L->w->cfg.moe.experts, n = sh->e1 - sh->e0, blk, i;
	const struct gguf_tensor *t;
	size_t stride, part, nr = (size_t)(r1 - r0);
	char name[96];
	char *data;

	snprintf(name, sizeof(name), fmt, layer);
	t = gguf_find_tensor(&L->g, name);
	if (!t)
		return tp_gguf_bad(L, "tensor %s is missing", name);
	if (t->ndims != 3 || t->ne[0] != (uint64_t)cols ||
	    t->ne[1] != (uint64_t)rows || t->ne[2] != (uint64_t)E)
		return tp_gguf_bad(L, "tensor %s is %llu x %llu x %llu (%u-D), expected %d x %d x %d (columns x rows x experts; %s.expert_count is %d)",
				   name, (unsigned long long)t->ne[0],
				   (unsigned long long)t->ne[1],
				   (unsigned long long)t->ne[2], t->ndims, cols,
				   rows, E, L->arch, E);
	blk = tp_type_block((enum tp_type)t->type);
	if (c0 % blk || (c1 - c0) % blk)
		return tp_gguf_bad(L, "tensor %s (%s): columns %d..%d of this rank's share do not start and end on its blocks of %d",
				   name, gguf_ggml_type_name(t->type), c0, c1,
				   blk);
	stride = tp_type_bytes((enum tp_type)t->type, (size_t)cols);
	part = tp_type_bytes((enum tp_type)t->type, (size_t)(c1 - c0));
	data = tp_weights_alloc(L->w, (size_t)n * nr * part);
	if (read_slabs(L, t, name, sh->e0, n, rows, r0, r1, stride,
		       tp_type_bytes((enum tp_type)t->type, (size_t)c0), part,
		       data))
		return -1;
	for (i = 0; i < n; i++) {
		out[i] = (struct tp_mat){
			.type = (enum tp_type)t->type, .rows = (int)nr,
			.cols = c1 - c0, .stride = part,
			.data = data + (size_t)i * nr * part,
		};
		tp_mat_interleave(&out[i]);	/* for decoding */
	}
	return 0;
}

int tp_gguf_slabs(struct tp_gguf_load *L, const char *fmt, int layer,
		  int n2, int s0, int s1, int rows, int cols,
		  struct tp_mat *out)
{
	const struct gguf_tensor *t;
	size_t stride, nr = (size_t)rows;
	char name[96];
	char *data;
	int i;

	snprintf(name, sizeof(name), fmt, layer);
	t = gguf_find_tensor(&L->g, name);
	if (!t)
		return tp_gguf_bad(L, "tensor %s is missing", name);
	if (t->ndims > 3 || t->ne[0] != (uint64_t)cols ||
	    t->ne[1] != (uint64_t)rows || t->ne[2] != (uint64_t)n2)
		return tp_gguf_bad(L, "tensor %s is %llu x %llu x %llu (%u-D), expected %d x %d x %d",
				   name, (unsigned long long)t->ne[0],
				   (unsigned long long)t->ne[1],
				   (unsigned long long)t->ne[2], t->ndims, cols,
				   rows, n2);
	stride = tp_type_bytes((enum tp_type)t->type, (size_t)cols);
	data = tp_weights_alloc(L->w, (size_t)(s1 - s0) * nr * stride);
	if (s1 > s0 && read_slabs(L, t, name, s0, s1 - s0, rows, 0, rows,
				  stride, 0, stride, data))
		return -1;
	for (i = 0; i < s1 - s0; i++) {
		out[i] = (struct tp_mat){
			.type = (enum tp_type)t->type, .rows = rows,
			.cols = cols, .stride = stride,
			.data = data + (size_t)i * nr * stride,
		};
		tp_mat_interleave(&out[i]);
	}
	return 0;
}

int tp_gguf_floats(struct tp_gguf_load *L, const char *fmt, int layer,
		   int rows, int n, const float **out)
{
	struct tp_mat m;
	float *v;
	char *raw;
	char name[96];
	int r, i;

	snprintf(name, sizeof(name), fmt, layer);
	if (full_mat(L, name, rows, n, &m))
		return -1;
	v = tp_weights_alloc(L->w, (size_t)rows * n * sizeof(float));
	raw = tp_calloc(m.stride, (size_t)rows);
	r = read_at(L, m.data, raw, m.stride * (size_t)rows, name);
	for (i = 0; !r && i < rows; i++)
		tp_row_to_f32(m.type, raw + (size_t)i * m.stride,
			      v + (size_t)i * n, (size_t)n);
	free(raw);
	*out = v;
	return r;
}

int tp_gguf_vector(struct tp_gguf_load *L, const char *fmt, int layer, int n,
		   const float **out)
{
	return tp_gguf_floats(L, fmt, layer, 1, n, out);
}

/*
 * The embedding table: where its rows are, for tp_embed_row(); and the
 * output head's rows of this rank (the table's own when they are tied).
 */
static int vocab_ends(struct tp_gguf_load *L)
{
	struct tp_weights *w = L->w;
	const struct tp_config *c = &w->cfg;
	struct tp_mat emb, out;
	const char *head = "output.weight";

	if (full_mat(L, "token_embd.weight", c->vocab, c->dim, &emb))
		return -1;
	w->embd.type = emb.type;
	w->embd.row_bytes = emb.stride;
	w->embd.off = (const unsigned char *)emb.data - L->g.base;
	w->wtype = emb.type;
	if (gguf_find_tensor(&L->g, head)) {
		if (full_mat(L, head, c->vocab, c->dim, &out))
			return -1;
	} else {	/* tied embeddings */
		out = emb;
		head = "token_embd.weight";
	}
	return read_shard(L, &out, w->sh.v0, w->sh.v1, 0, c->dim, head,
			  &w->output);
}

int tp_gguf_read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	const struct gguf_tensor *emb;
	int vlen;

	if (tp_gguf_int(L, tp_gguf_key(L, "embedding_length"), -1, &c->dim) ||
	    tp_gguf_int(L, tp_gguf_key(L, "block_count"), -1, &c->layers) ||
	    tp_gguf_int(L, tp_gguf_key(L, "feed_forward_length"), -1,
			&c->ffn) ||
	    tp_gguf_int(L, tp_gguf_key(L, "attention.head_count"), -1,
			&c->heads))
		return -1;
	if (tp_gguf_int(L, tp_gguf_key(L, "attention.head_count_kv"),
			c->heads, &c->kv_heads) ||
	    tp_gguf_int(L, tp_gguf_key(L, "attention.key_length"),
			c->heads ? c->dim / c->heads : 0, &c->head_dim) ||
	    tp_gguf_int(L, tp_gguf_key(L, "rope.dimension_count"),
			c->head_dim, &c->rot_dim) ||
	    tp_gguf_float(L, tp_gguf_key(L, "attention.layer_norm_rms_epsilon"),
			  1e-5, &c->eps) ||
	    tp_gguf_float(L, tp_gguf_key(L, "rope.freq_base"), 10000.0,
			  &c->rope_base) ||
	    tp_gguf_int(L, tp_gguf_key(L, "attention.value_length"),
			c->head_dim, &vlen))
		return -1;
	/* latent attention's widths are its architecture's to check */
	if (vlen != c->head_dim && !c->mla.kv_lora)
		return tp_gguf_bad(L, "%s is %d where the key length is %d: values of another width than keys are not supported",
				   L->key, vlen, c->head_dim);
	if (tp_gguf_read_rope_scaling(L, c))
		return -1;
	emb = gguf_find_tensor(&L->g, "token_embd.weight");
	if (!emb || emb->ndims != 2 || emb->ne[1] > (1u << 24))
		return tp_gguf_bad(L, "tensor token_embd.weight is missing or not 2-D");
	c->vocab = (int)emb->ne[1];
	return 0;
}

int tp_gguf_read_moe(struct tp_gguf_load *L, struct tp_config *c)
{
	struct tp_moe_config *e = &c->moe;
	int norm = 0, gating = 0;

	if (tp_gguf_int(L, tp_gguf_key(L, "expert_count"), 0, &e->experts) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_used_count"), 0, &e->used) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_feed_forward_length"), 0,
			&e->ffn) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_shared_count"), 0,
			&e->shared) ||
	    tp_gguf_int(L, tp_gguf_key(L, "leading_dense_block_count"), 0,
			&e->dense_layers) ||
	    tp_gguf_float(L, tp_gguf_key(L, "expert_weights_scale"), 0,
			  &e->scale) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_weights_norm"), 0, &norm) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_gating_func"), 0, &gating) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_group_count"), 0,
			&e->groups) ||
	    tp_gguf_int(L, tp_gguf_key(L, "expert_group_used_count"), 0,
			&e->groups_used))
		return -1;
	e->norm = norm != 0;
	e->gating = gating;
	if (e->experts < 1)
		return tp_gguf_bad(L, "%s is %d: a %s model needs experts",
				   tp_gguf_key(L, "expert_count"), e->experts,
				   L->arch);
	if (e->used < 1 || e->used > e->experts)
		return tp_gguf_bad(L, "%s is %d: it must be 1..%d (expert_count)",
				   tp_gguf_key(L, "expert_used_count"),
				   e->used, e->experts);
	if (gating > TP_GATE_SIGMOID)
		return tp_gguf_bad(L, "%s = %d: only softmax (1) and sigmoid (2) gating are supported",
				   tp_gguf_key(L, "expert_gating_func"), gating);
	return 0;
}

int tp_gguf_expect(struct tp_gguf_load *L, const char *fmt, int layer,
		   int ndims, uint64_t ne0, uint64_t ne1, uint64_t ne2)
{
	const struct gguf_tensor *t;
	char name[96];

	snprintf(name, sizeof(name), fmt, layer);
	t = gguf_find_tensor(&L->g, name);
	if (!t)
		return tp_gguf_bad(L, "tensor %s is missing", name);
	if (t->ne[0] != ne0 || (ndims > 1 && t->ne[1] != ne1) ||
	    (ndims > 2 && t->ne[2] != ne2) || (int)t->ndims > ndims)
		return tp_gguf_bad(L, "tensor %s is %llu x %llu x %llu, expected %llu x %llu x %llu",
				   name, (unsigned long long)t->ne[0],
				   (unsigned long long)t->ne[1],
				   (unsigned long long)t->ne[2],
				   (unsigned long long)ne0,
				   (unsigned long long)(ndims > 1 ? ne1 : 1),
				   (unsigned long long)(ndims > 2 ? ne2 : 1));
	return 0;
}

int tp_gguf_vector_rows(struct tp_gguf_load *L, const char *fmt, int layer,
			int n, int r0, const float **out)
{
	const float *full;

	if (tp_gguf_vector(L, fmt, layer, n, &full))
		return -1;
	*out = full + r0;
	return 0;
}

/*
 * What the shard plan weighs, from the tensor table: llama.cpp's names
 * of the attention and MLP matrices of every layer, each in its own
 * type (files mix them: Q4_K_M holds some in Q6_K). A layer without
 * them (another architecture's) adds nothing; its loader checks it.
 */
static int shard_cost(struct tp_gguf_load *L, struct tp_shard_cost *k)
{
	static const struct {
		const char *fmt;
		size_t off;	/* of the sum in tp_shard_cost */
		int block;	/* 1: o_block, 2: down_block */
	} m[] = {
		{ "blk.%d.attn_q.weight", offsetof(struct tp_shard_cost, q), 0 },
		{ "blk.%d.attn_k.weight", offsetof(struct tp_shard_cost, kv), 0 },
		{ "blk.%d.attn_v.weight", offsetof(struct tp_shard_cost, kv), 0 },
		{ "blk.%d.attn_output.weight", offsetof(struct tp_shard_cost, o), 1 },
		{ "blk.%d.ffn_gate.weight", offsetof(struct tp_shard_cost, gate_up), 0 },
		{ "blk.%d.ffn_up.weight", offsetof(struct tp_shard_cost, gate_up), 0 },
		{ "blk.%d.ffn_down.weight", offsetof(struct tp_shard_cost, down), 2 },
	};
	char name[96];
	size_t i;
	int l;

	memset(k, 0, sizeof(*k));
	k->o_block = k->down_block = 1;
	for (l = 0; l < L->w->cfg.layers; l++)
		for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			const struct gguf_tensor *t;

			snprintf(name, sizeof(name), m[i].fmt, l);
			t = gguf_find_tensor(&L->g, name);
			if (!t)
				continue;
			if (t->ndims > 2 || t->ne[0] > (1u << 24) ||
			    t->ne[1] > (1u << 24))
				return tp_gguf_bad(L, "tensor %s is not a matrix of a plausible size",
						   name);
			tp_shard_cost_add((uint64_t *)((char *)k + m[i].off),
					  m[i].block == 1 ? &k->o_block :
					  m[i].block == 2 ? &k->down_block :
					  NULL, (enum tp_type)t->type,
					  (long)t->ne[1], (long)t->ne[0]);
		}
	return 0;
}

/*
 * The architecture general.architecture names, among ARCHS[N]: L->arch
 * becomes its name (the prefix of its metadata keys).
 */
static const struct tp_arch *find_arch(struct tp_gguf_load *L,
				       const struct tp_arch *const *archs,
				       int n)
{
	struct gguf_str name;
	char known[200];
	size_t pos = 0;
	int i;

	if (gguf_get_str(&L->g, "general.architecture", &name) != 1) {
		tp_gguf_bad(L, "general.architecture is missing");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (gguf_str_eq(name, archs[i]->name)) {
			snprintf(L->arch, sizeof(L->arch), "%s",
				 archs[i]->name);
			return archs[i];
		}
	known[0] = 0;
	for (i = 0; i < n; i++)
		tp_appendf(known, sizeof(known), &pos, "%s%s",
			   i == 0 ? "" : i == n - 1 ? " and " : ", ",
			   archs[i]->name);
	tp_gguf_bad(L, "architecture '%.*s' is not supported (%s %s)",
		    (int)(name.len < 40 ? name.len : 40), name.p, known,
		    n == 1 ? "is" : "are");
	return NULL;
}

/*
 * The block a cut between the columns of the tensors FMT of every layer
 * has to keep to: the least common multiple of their types' blocks
 * (files mix types: llama.cpp's Q4_K_M gives some layers Q6_K), as
 * tp_shard_cost_add takes it for the dense matrices. 1 when there are
 * none.
 */
static int layers_block(struct tp_gguf_load *L, const char *fmt)
{
	const struct gguf_tensor *t;
	uint64_t bytes = 0;
	char name[96];
	int l, block = 1;

	for (l = 0; l < L->w->cfg.layers; l++) {
		snprintf(name, sizeof(name), fmt, l);
		t = gguf_find_tensor(&L->g, name);
		if (t)
			tp_shard_cost_add(&bytes, &block, (enum tp_type)t->type,
					  0, 0);
	}
	return block;
}

int tp_gguf_load_weights(struct tp_weights *w, const char *path, int rank,
			 int nranks, int expert_split,
			 const struct tp_arch *const *archs, int narchs,
			 char *err, size_t errlen)
{
	struct tp_gguf_load L = {
		.w = w, .path = path, .err = err, .errlen = errlen,
	};
	struct tp_config *c = &w->cfg;
	struct tp_shard_cost cost;
	int l, ret = -1;
	char msg[400];

	memset(w, 0, sizeof(*w));
	L.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (L.fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (gguf_open(&L.g, path, err, errlen)) {
		close(L.fd);
		return -1;
	}
	w->embd.fd = L.fd;	/* closed by tp_weights_free() */
	w->file_size = L.g.size;
	w->arch = find_arch(&L, archs, narchs);
	if (!w->arch || w->arch->read_config(&L, c))
		goto out;
	if (tp_config_check(c, nranks, msg, sizeof(msg))) {
		tp_gguf_bad(&L, "%s", msg);
		goto out;
	}
	if (shard_cost(&L, &cost) ||
	    tp_shard_plan(c, &cost, rank, nranks, &w->sh, msg, sizeof(msg))) {
		tp_gguf_bad(&L, "%s", msg);
		goto out;
	}
	c->moe.split = expert_split;
	if (tp_shard_experts(c, rank, nranks,
			     layers_block(&L, "blk.%d.ffn_down_exps.weight"),
			     layers_block(&L, "blk.%d.ffn_down_shexp.weight"),
			     &w->sh, msg, sizeof(msg))) {
		tp_gguf_bad(&L, "%s", msg);
		goto out;
	}
	tp_split_vocab(c, rank, nranks, &w->sh);
	snprintf(w->source, sizeof(w->source), "%s", path);
	w->layer = tp_calloc((size_t)c->layers, sizeof(*w->layer));
	if (vocab_ends(&L))
		goto out;
	if (tp_gguf_vector(&L, "output_norm.weight", 0, c->dim, &w->out_norm))
		goto out;
	if (gguf_find_tensor(&L.g, "rope_freqs.weight") &&
	    tp_gguf_vector(&L, "rope_freqs.weight", 0, c->rot_dim / 2,
			   &w->rope_freqs))
		goto out;
	for (l = 0; l < c->layers; l++)
		if (w->arch->load_layer(&L, &w->layer[l], l))
			goto out;
	gguf_close(&L.g);	/* the header was all we used of the mapping */
	return 0;
out:
	gguf_close(&L.g);
	tp_weights_free(w);	/* closes the file */
	return ret;
}
