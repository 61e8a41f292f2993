/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A rank's weights from a GGUF file (load_gguf.c): the loading itself,
 * and the readers an architecture's read_config and load_layer use.
 * Every reader returns 0, or -1 with "PATH: what is wrong" in the
 * loader's error buffer.
 */
#ifndef TPRUN_MODEL_LOAD_GGUF_H
#define TPRUN_MODEL_LOAD_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "gguf/gguf.h"
#include "model/model.h"

struct tp_arch;

/* A GGUF file being loaded into one rank's weights. */
struct tp_gguf_load {
	struct gguf g;
	int fd;
	struct tp_weights *w;
	const char *path;
	char *err;
	size_t errlen;
	char arch[16];		/* "llama", "qwen2": the metadata's prefix */
	char key[96];		/* scratch for tp_gguf_key() */
};

/*
 * The weights of the GGUF file PATH for RANK of NRANKS (the experts
 * shared as EXPERT_SPLIT says, enum tp_expert_split), by the
 * architecture its general.architecture names among ARCHS[NARCHS]
 * (model/arch/registry.c passes them). 0, or -1 and ERR.
 */
int tp_gguf_load_weights(struct tp_weights *w, const char *path, int rank,
			 int nranks, int expert_split,
			 const struct tp_arch *const *archs, int narchs,
			 char *err, size_t errlen);

/* "PATH: MESSAGE" into the loader's error buffer; returns -1. */
int tp_gguf_bad(struct tp_gguf_load *L, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "ARCH.SUFFIX", the key of a model parameter (llama.cpp's names). */
const char *tp_gguf_key(struct tp_gguf_load *L, const char *suffix);
/*
 * Metadata KEY as an integer in 0..2^30, or DEF when absent (DEF < 0:
 * it must be there); as a number, DEF when absent.
 */
int tp_gguf_int(struct tp_gguf_load *L, const char *key, int64_t def,
		int *out);
int tp_gguf_float(struct tp_gguf_load *L, const char *key, double def,
		  float *out);
/*
 * The hyperparameters llama.cpp's llama family shares (ARCH.* keys:
 * widths, heads, RMSNorm epsilon, RoPE base and linear scaling), and the
 * vocabulary size from token_embd.weight.
 */
int tp_gguf_read_config(struct tp_gguf_load *L, struct tp_config *c);
/*
 * The experts' hyperparameters, under the keys llama.cpp reads
 * (expert_count, expert_used_count, expert_feed_forward_length,
 * expert_shared_count, leading_dense_block_count, expert_weights_scale,
 * expert_weights_norm, expert_gating_func, expert_group_count,
 * expert_group_used_count; absent ones 0), checked: there are experts,
 * the experts used are among them, the gating is one tprun has. The
 * architecture fills in its defaults after.
 */
/*
 * RoPE scaling (rope.scaling.*), as llama.cpp applies it to every
 * architecture of the llama family: linear (positions times 1/factor)
 * or YaRN (model/rope_scaling.c); the others refused by name.
 */
int tp_gguf_read_rope_scaling(struct tp_gguf_load *L, struct tp_config *c);
int tp_gguf_read_moe(struct tp_gguf_load *L, struct tp_config *c);
/* The tensor FMT (%d: LAYER) is there, NDIMS-D, NE0 x NE1 x NE2: for the
 * tensors llama.cpp requires but never uses (GLM's NextN layer). */
int tp_gguf_expect(struct tp_gguf_load *L, const char *fmt, int layer,
		   int ndims, uint64_t ne0, uint64_t ne1, uint64_t ne2);
/*
 * Rows [R0,R1) x columns [C0,C1) of the ROWS x COLS tensor named FMT
 * (%d: LAYER) into memory of the rank's own, cut as tp_mat_shard() cuts.
 */
int tp_gguf_shard(struct tp_gguf_load *L, const char *fmt, int layer,
		  int rows, int cols, int r0, int r1, int c0, int c1,
		  struct tp_mat *out);
/* The whole ROWS x COLS tensor named FMT, rows as stored (not
 * interleaved: a router, which the portable kernels read). */
int tp_gguf_matrix(struct tp_gguf_load *L, const char *fmt, int layer,
		   int rows, int cols, struct tp_mat *out);
/*
 * The experts of this rank's shard (sh.e0..e1) of the 3-D tensor named
 * FMT (COLS x ROWS x expert_count, the experts one after another): rows
 * [R0,R1) x columns [C0,C1) of each (C0, C1 on the type's blocks) into
 * OUT[0..e1-e0). Refused, naming the tensor, when its shape is not that.
 */
int tp_gguf_experts(struct tp_gguf_load *L, const char *fmt, int layer,
		    int rows, int cols, int r0, int r1, int c0, int c1,
		    struct tp_mat *out);
/*
 * Matrices S0..S1-1 of the 3-D tensor named FMT (COLS x ROWS x N2, one
 * after another: a head's of DeepSeek's attn_k_b) whole into OUT[].
 * Refused, naming the tensor, when its shape is not that.
 */
int tp_gguf_slabs(struct tp_gguf_load *L, const char *fmt, int layer,
		  int n2, int s0, int s1, int rows, int cols,
		  struct tp_mat *out);
/* The N-vector named FMT (%d: LAYER) as F32 (norms are small, may be
 * F16); from element R0 on, for a rank's rows of a bias. */
int tp_gguf_vector(struct tp_gguf_load *L, const char *fmt, int layer,
		   int n, const float **out);
int tp_gguf_vector_rows(struct tp_gguf_load *L, const char *fmt, int layer,
			int n, int r0, const float **out);
/* The same, ROWS of N (a 2-D tensor, whole: gpt-oss's expert biases). */
int tp_gguf_floats(struct tp_gguf_load *L, const char *fmt, int layer,
		   int rows, int n, const float **out);

#endif /* TPRUN_MODEL_LOAD_GGUF_H */
