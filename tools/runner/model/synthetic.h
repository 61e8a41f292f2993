/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Synthetic weights (synthetic.c): seeded values of every tensor, and a
 * rank's shards of them, stored as a GGUF file of the same type would
 * store them.
 */
#ifndef TPRUN_MODEL_SYNTHETIC_H
#define TPRUN_MODEL_SYNTHETIC_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct tp_arch;

/* The tensors of synthetic models, for tp_synth_value(). */
enum tp_tensor_id {
	TP_T_EMBD = 1, TP_T_OUT_NORM, TP_T_OUTPUT, TP_T_ATTN_NORM, TP_T_Q,
	TP_T_K, TP_T_V, TP_T_O, TP_T_FFN_NORM, TP_T_GATE, TP_T_UP, TP_T_DOWN,
	/* Qwen3, GLM */
	TP_T_Q_NORM, TP_T_K_NORM, TP_T_Q_BIAS, TP_T_K_BIAS, TP_T_V_BIAS,
	/* mixture of experts: router, selection bias, routed experts (a
	 * 3-D tensor: expert e's row r is row e x rows + r), shared ones */
	TP_T_ROUTER, TP_T_PROBS_BIAS, TP_T_GATE_EXPS, TP_T_UP_EXPS,
	TP_T_DOWN_EXPS, TP_T_GATE_SHEXP, TP_T_UP_SHEXP, TP_T_DOWN_SHEXP,
	/* GLM-4.5's multi-token prediction layer (exported, never run) */
	TP_T_NEXTN_EH_PROJ,
	/* DeepSeek's latent attention (k_b, v_b: a 3-D tensor, head h's row
	 * r is row h x rows + r) */
	TP_T_Q_A, TP_T_Q_A_NORM, TP_T_Q_B, TP_T_KV_A, TP_T_KV_A_NORM,
	TP_T_K_B, TP_T_V_B,
	/* gpt-oss: attention output bias and sinks, the router's bias, the
	 * experts' (gate and up: expert e's is row e) */
	TP_T_O_BIAS, TP_T_SINKS, TP_T_ROUTER_BIAS, TP_T_GATE_EXPS_BIAS,
	TP_T_UP_EXPS_BIAS, TP_T_DOWN_EXPS_BIAS,
};

/* The value of element (row, col) of a synthetic tensor (full shape). */
float tp_synth_value(const struct tp_config *c, uint64_t seed, int tensor,
		     int layer, long row, long col);
/* The columns of tensor T (its rows' length). */
int tp_synth_cols(const struct tp_config *c, int t);

/* Synthetic weights being made for one rank. */
struct tp_synth {
	struct tp_weights *w;
	const struct tp_config *c;
	uint64_t seed;
	enum tp_type type;	/* how they are stored */
};

/*
 * Rows [R0,R1) x columns [C0,C1) of tensor T (of LAYER), stored as
 * s->type or, for a K-quant and rows of a length it cannot hold, as the
 * type an export of the same model stores that tensor in
 * (tp_type_for_cols); a vector of N as F32.
 */
void tp_synth_mat(struct tp_synth *s, int t, int layer, int r0, int r1,
		  int c0, int c1, struct tp_mat *out);
const float *tp_synth_vec(struct tp_synth *s, int t, int layer, int n);
/* ROWS x N of tensor T as F32, whole (gpt-oss's expert biases). */
const float *tp_synth_rows(struct tp_synth *s, int t, int layer, int rows,
			  int n);
/* The same stored as WANT, rows as they are (not interleaved: a router,
 * which the portable kernels read). */
void tp_synth_mat_as(struct tp_synth *s, enum tp_type want, int t, int layer,
		     int r0, int r1, int c0, int c1, struct tp_mat *out);

/*
 * What the shard plan weighs (tp_shard_plan) for a synthetic model of
 * C stored as TYPE: each matrix in the type tp_synth_mat() stores it in.
 */
void tp_synth_cost(const struct tp_config *c, enum tp_type type,
		   struct tp_shard_cost *k);

/*
 * Whether N ranks can run a synthetic model of C stored as TYPE: the
 * configuration, the type and RANK's shard plan (into *SH). 0, or -1
 * and ERR.
 */
int tp_synth_check(const struct tp_config *c, enum tp_type type, int rank,
		   int nranks, struct tp_shard *sh, char *err, size_t errlen);

/*
 * RANK's shard of a synthetic model of ARCH and configuration C, stored
 * as TYPE. 0, or -1 and ERR.
 */
int tp_synth_weights(struct tp_weights *w, const struct tp_arch *arch,
		     const struct tp_config *c, uint64_t seed,
		     enum tp_type type, int rank, int nranks, char *err,
		     size_t errlen);

#endif /* TPRUN_MODEL_SYNTHETIC_H */
