/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The model: a decoder-only transformer of the Llama family, split
 * Megatron-style over N ranks.
 *
 *   x = embedding[token]
 *   per layer:  h = rmsnorm(x) ; q,k,v = Wq h, Wk h, Wv h   (column-parallel:
 *               rotary embedding on q,k ; attention over the  this rank's
 *               KV cache, grouped-query                         heads only)
 *               x += allreduce(Wo attn)                       (row-parallel)
 *               h = rmsnorm(x) ; m = silu(Wgate h) * (Wup h)   (column-parallel)
 *               x += allreduce(Wdown m)                       (row-parallel)
 *   logits = Woutput rmsnorm(x)        (replicated on every rank)
 *
 * Query heads and MLP columns are split in contiguous ranges cut on
 * whole blocks of the row-parallel matrices' types, balanced by bytes
 * (shard.c); a rank computes the K/V heads its query heads read (a K/V
 * head shared by two ranks' query heads is computed by both).
 *
 * That is llama's layer. Which tensors a layer has, how they are read and
 * how it runs belongs to its architecture (arch.h, one file each in
 * model/arch/), built from the blocks of attention.h and ffn.h.
 */
#ifndef TPRUN_MODEL_H
#define TPRUN_MODEL_H

#include "comm/allreduce.h"
#include "kernels/types.h"

struct tp_config {
	int dim;	/* model width (embedding length) */
	int layers;
	int heads;	/* query heads */
	int kv_heads;	/* key/value heads (grouped-query attention) */
	int head_dim;	/* usually dim / heads */
	int rot_dim;	/* rotary dimensions per head (<= head_dim, even) */
	int ffn;	/* MLP hidden width */
	int vocab;
	float eps;	/* RMSNorm epsilon */
	float rope_base;
	/* zero for synthetic models and plain llama files: */
	int rope_neox;	/* rotate (v[i], v[i + rot/2]) (Qwen2), not pairs */
	float rope_scale;	/* linear RoPE scaling: 1 / factor (0: none) */
	/* YaRN (rope.scaling.type yarn): the context the model was trained
	 * at before scaling (0: no YaRN; rope_scale is then 1 / factor) */
	int yarn_orig_ctx;
	float yarn_beta_fast, yarn_beta_slow;
	/* deepseek2's rope.scaling.yarn_log_multiplier (0.1 x DeepSeek's
	 * mscale_all_dim; 0: none), which scales its attention scores */
	float yarn_log_mul;
	/* sliding-window attention (gpt-oss): a layer L with L % swa_period
	 * below swa_period - 1 sees the last swa_window positions (0: none) */
	int swa_window, swa_period;
	/* layers in the file after these, which the forward pass skips
	 * (GLM-4.5's multi-token prediction layer): for the export */
	int nextn_layers;
	struct tp_moe_config {
		int experts;	/* routed experts per MoE layer (0: dense) */
		int used;	/* experts each token goes to (top k) */
		int ffn;	/* each expert's FFN width */
		int shared;	/* shared experts: one FFN shared x ffn wide */
		int dense_layers;	/* the first layers: dense MLPs */
		int gating;	/* enum tp_moe_gating */
		int act;	/* enum tp_moe_act: the experts' activation */
		int norm;	/* the chosen experts' weights sum to 1 */
		float scale;	/* ... then times this (0 or 1: not) */
		int groups, groups_used;	/* group-limited routing, or 0 */
		int split;	/* enum tp_expert_split: across the ranks */
	} moe;
	/* multi-head latent attention (deepseek2, model/mla.h): then
	 * head_dim is a query's and key's width (nope + rot_dim), kv_heads 1 */
	struct tp_mla_config {
		int kv_lora;	/* the latent's width (0: no MLA) */
		int q_lora;	/* attn_q_a's rank, or 0: a plain attn_q */
		int v_dim;	/* a value head's width */
	} mla;
};

/* How a router turns its logits into the experts' probabilities. */
enum tp_moe_gating {
	TP_GATE_SOFTMAX = 1, TP_GATE_SIGMOID = 2,
	TP_GATE_SOFTMAX_WEIGHT = 3,	/* top k by logit, softmax over them */
};

/* The experts' activation: SwiGLU, or gpt-oss's clamped one
 * (tp_swiglu_oai). */
enum tp_moe_act { TP_ACT_SWIGLU, TP_ACT_SWIGLU_OAI };

/*
 * How N ranks share the experts (shard.c, Documentation/runner.md):
 * each a slice of every expert's FFN width, or whole experts each.
 */
enum tp_expert_split { TP_SPLIT_AUTO, TP_SPLIT_WIDTH, TP_SPLIT_EXPERTS };

/* Check a configuration for N ranks (shard.c): 0, or -1 and ERR. */
int tp_config_check(const struct tp_config *c, int nranks, char *err,
		    size_t errlen);

/* What one rank owns. Ranges are [begin, end); a range may be empty. */
struct tp_shard {
	int rank, nranks;
	int q0, q1;	/* query heads */
	int kv0, kv1;	/* K/V heads those query heads read */
	int f0, f1;	/* MLP columns */
	int v0, v1;	/* output head rows (vocabulary entries) */
	/* MoE layers (tp_shard_experts): experts held, each one's FFN
	 * columns held, the shared experts' FFN columns held */
	int e0, e1;
	int x0, x1;
	int s0, s1;
};

/* Balanced split of TOTAL into PARTS: begin of part I is TOTAL*I/PARTS. */
void tp_split(long total, int parts, int i, long *begin, long *end);

/*
 * Items of WIDTH elements each (a head of head_dim columns, an MLP
 * column) side by side in a row stored in blocks of BLOCK elements: a
 * cut between two items falls on a block boundary every this many
 * items (BLOCK / gcd(WIDTH, BLOCK)).
 */
int tp_block_items(int width, int block);
/*
 * Split COUNTS[0..N-1] (a number of units each, of PER_UNIT bytes) out
 * of UNITS over N parts that already weigh BASE[0..N-1] bytes, so that
 * the heaviest part weighs as little as it can: water filling, ties to
 * the lower part. Integers only, so every rank computes the same split.
 */
void tp_split_fill(long units, int nparts, const uint64_t *base,
		   uint64_t per_unit, long *counts);

/*
 * What a plan cuts and weighs (shard.c). A row-parallel matrix (the
 * attention output, ffn_down) is cut between columns, and only on a
 * block of its type: a cut inside a block would leave that shard's
 * blocks starting mid-block (held in F32, computing other bits than one
 * rank). The blocks are the least common multiple over the layers;
 * the bytes are the whole matrices', summed over the layers.
 */
struct tp_shard_cost {
	int o_block, down_block;	/* 1 for F32/F16/BF16 */
	uint64_t q, kv, o;		/* attn_q; attn_k + attn_v; attn_output */
	uint64_t gate_up, down;		/* ffn_gate + ffn_up; ffn_down */
};

/* Add a matrix of TYPE, ROWS x COLS, to *BYTES; BLOCK (if not NULL)
 * becomes the lcm of itself and TYPE's block. */
void tp_shard_cost_add(uint64_t *bytes, int *block, enum tp_type type,
		       long rows, long cols);

/*
 * RANK's shard of C over NRANKS ranks: query heads in whole blocks of
 * the attention output (balanced to within one such group), then MLP
 * columns in whole blocks of ffn_down, given to the ranks so that every
 * rank's layers weigh as close to 1/N of the bytes as the blocks allow
 * (a rank with a group of heads more holds fewer columns). A rank may
 * hold no heads. 0, or -1 and ERR when the model cannot be cut into N
 * pieces on whole blocks.
 */
int tp_shard_plan(const struct tp_config *c, const struct tp_shard_cost *k,
		  int rank, int nranks, struct tp_shard *s, char *err,
		  size_t errlen);

/*
 * The experts of RANK (sh.e0.., x0.., s0..): by c->moe.split, the
 * routed experts' FFN columns cut on multiples of UNIT (the block of
 * ffn_down_exps' type), the shared experts' on multiples of SHARED_UNIT.
 * 0, or -1 and ERR when the experts cannot be shared that way.
 */
int tp_shard_experts(const struct tp_config *c, int rank, int nranks,
		     int unit, int shared_unit, struct tp_shard *s, char *err,
		     size_t errlen);

/* The output head's rows of RANK (sh.v0, sh.v1): a balanced split. */
void tp_split_vocab(const struct tp_config *c, int rank, int nranks,
		    struct tp_shard *s);

/* The attention block of a layer: this rank's heads (attention.h). */
struct tp_attn_weights {
	const float *norm;		/* dim */
	struct tp_mat wq, wk, wv;	/* rows: local heads x head_dim */
	struct tp_mat wo;		/* dim x local q dims */
	const float *bq, *bk, *bv;	/* biases (local rows), or NULL */
	const float *q_norm, *k_norm;	/* per-head RMSNorm (head_dim), or NULL */
	const float *sinks;		/* per local head: a logit every
					   softmax adds (gpt-oss), or NULL */
	const float *bo;		/* output bias (dim), on rank 0 only */
};

/* The SwiGLU MLP of a layer: this rank's columns (ffn.h). */
struct tp_ffn_weights {
	const float *norm;		/* dim */
	struct tp_mat wgate, wup;	/* rows: local MLP columns */
	struct tp_mat wdown;		/* dim x local MLP columns */
};

/* A mixture-of-experts FFN block (moe.h). */
struct tp_moe_weights {
	const float *norm;		/* dim */
	struct tp_mat router;		/* experts x dim, whole on every rank */
	const float *probs_bias;	/* experts: selection bias, or NULL */
	const float *router_b;		/* experts: the router's bias, or NULL */
	/* gpt-oss's expert biases, or NULL: gate and up (experts x ffn,
	 * whole), down (experts x dim, on the rank that adds it) */
	const float *gate_b, *up_b, *down_b;
	/* experts e0..e1 of the shard, each its columns x0..x1: */
	struct tp_mat *gate, *up;	/* rows: local columns, x dim */
	struct tp_mat *down;		/* dim x local columns */
	struct tp_ffn_weights shared;	/* columns s0..s1; no norm. Or none:
					   shared.wgate.data NULL */
};

/* Multi-head latent attention (mla.h): this rank's heads. */
struct tp_mla_weights {
	const float *norm;		/* dim */
	struct tp_mat wq;		/* local heads x head_dim rows, or */
	struct tp_mat wq_a, wq_b;	/* q_lora x dim (whole); local rows */
	const float *q_a_norm;		/* q_lora */
	struct tp_mat wkv_a;		/* (kv_lora + rot_dim) x dim, whole */
	const float *kv_a_norm;		/* kv_lora */
	struct tp_mat *k_b;		/* per local head: kv_lora x nope */
	struct tp_mat *v_b;		/* per local head: v_dim x kv_lora */
	struct tp_mat wo;		/* dim x local heads x v_dim */
};

struct tp_layer {
	struct tp_attn_weights attn;
	struct tp_mla_weights mla;	/* kv_a_norm NULL: not MLA */
	struct tp_ffn_weights ffn;
	struct tp_moe_weights moe;	/* router.data NULL: a dense layer */
};

/*
 * Where the token embedding's rows come from. No rank holds the table
 * (vocab x dim, as large as a layer or two): a row is read from the
 * file (or computed, for synthetic weights) per token.
 */
struct tp_embed {
	enum tp_type type;
	size_t row_bytes;
	int fd;			/* the GGUF file (0: synthetic) */
	long long off;		/* the table's offset in it */
	uint64_t seed;		/* synthetic weights: their seed */
};

struct tp_arch;

struct tp_weights {
	const struct tp_arch *arch;	/* its layers' tensors and forward */
	struct tp_config cfg;
	struct tp_shard sh;
	struct tp_embed embd;
	struct tp_mat output;		/* rows sh.v0..v1 of the output head */
	const float *out_norm;
	const float *rope_freqs;	/* rot_dim / 2 divisors (Llama 3), or NULL */
	struct tp_layer *layer;
	enum tp_type wtype;		/* the main weight type, for reports */
	char source[256];		/* "synthetic seed 1" / the file */
	/* memory this shard owns, freed by tp_weights_free() */
	void **owned;
	int nowned, capowned;
	size_t owned_bytes;		/* what the rank holds of the model */
	size_t file_size;		/* of the GGUF file (0: synthetic) */
	double load_s;			/* how long loading took */
};

/* The rank's memory for its weights, freed together (weights.c). */
void *tp_weights_alloc(struct tp_weights *w, size_t bytes);
void tp_weights_free(struct tp_weights *w);
/*
 * The shard [r0,r1) x [c0,c1) of FULL: a view into FULL's memory when
 * column C0 starts a block of FULL's type, else a copy converted to F32
 * (which tp_shard_plan's cuts never need).
 */
void tp_mat_shard(struct tp_weights *w, const struct tp_mat *full, int r0,
		  int r1, int c0, int c1, struct tp_mat *out);

struct tp_model;

/*
 * The vocabulary ends of the model (vocab_ends.c). The embedding row of
 * TOKEN as DIM floats: 0, or -1 (reported: the file could not be read).
 */
int tp_embed_row(const struct tp_weights *w, int token, float *out);
/*
 * m->logits (every entry, on every rank) from m->xb: each rank computes
 * its rows of the output head, the others' come over AR (NULL: one rank).
 */
int tp_head_logits(struct tp_model *m, struct tp_ar *ar);

struct tp_moe_buf;
struct tp_mla_buf;

struct tp_model {
	const struct tp_weights *w;
	struct tp_config cfg;
	int nq, nkv, nf;	/* local query heads, K/V heads, MLP columns */
	int ctx, max_batch;
	/*
	 * Layer L's K (and V) rows of nkv x head_dim floats: kv_slots[L] of
	 * them from row kv_row[L] of kcache/vcache, position P in row
	 * P % kv_slots[L]. ctx slots, or in a sliding-window layer a ring
	 * of the window plus a batch (tp_attn_cache_slots). Their values
	 * are kv_type's (F32, or F16: kernels/kvcache.h), kv_bytes of them.
	 */
	void *kcache, *vcache;
	enum tp_type kv_type;
	size_t kv_bytes;
	int *kv_slots;
	size_t *kv_row;
	float *x, *xb, *q, *k, *v, *att, *part, *g, *u, *scores, *rope;
	float *logits;		/* vocab, of the last token of a forward */
	struct tp_moe_buf *moe;	/* MoE layers' working memory (moe.c) */
	struct tp_mla_buf *mla;	/* latent attention's (mla.c) */
};

/* The working memory for CTX positions, batches of MAX_BATCH (forward.c). */
int tp_model_init(struct tp_model *m, const struct tp_weights *w, int ctx,
		  int max_batch);
/* The same, with SWA_FULL set: every layer keeps all CTX positions (the
 * reference a window layer's ring is tested against). */
int tp_model_init_kv(struct tp_model *m, const struct tp_weights *w, int ctx,
		     int max_batch, int swa_full);
/* The same with the KV cache's values in KV_TYPE (TP_F32, the others'
 * type, or TP_F16). 0, or -1 (reported) for another type. */
int tp_model_init_cache(struct tp_model *m, const struct tp_weights *w,
			int ctx, int max_batch, int swa_full,
			enum tp_type kv_type);
void tp_model_free(struct tp_model *m);
/*
 * Run N tokens (N <= max_batch) at positions POS..POS+N-1; afterwards
 * m->logits holds the last token's logits. AR may be NULL for one rank.
 * Returns 0, or -1 (reported) for a token outside the vocabulary, a
 * position outside the context, or a failed all-reduce.
 */
int tp_forward(struct tp_model *m, const int *tokens, int n, int pos,
	       struct tp_ar *ar);

#endif /* TPRUN_MODEL_H */
