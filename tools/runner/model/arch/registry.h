/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The architectures tprun runs (one file each in this folder), and the
 * ways into the model that pick one (registry.c): a GGUF file by its
 * general.architecture; synthetic weights and their export by the name
 * asked for (llama's by default).
 */
#ifndef TPRUN_MODEL_ARCH_REGISTRY_H
#define TPRUN_MODEL_ARCH_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "model/arch.h"
#include "model/model.h"

extern const struct tp_arch tp_arch_llama;
extern const struct tp_arch tp_arch_qwen2;
extern const struct tp_arch tp_arch_qwen3;
extern const struct tp_arch tp_arch_qwen3moe;
extern const struct tp_arch tp_arch_glm4moe;
extern const struct tp_arch tp_arch_deepseek2;
extern const struct tp_arch tp_arch_gpt_oss;

/* The architecture NAME (NULL: llama), or NULL when there is none. */
const struct tp_arch *tp_arch_find(const char *name);

/*
 * GGUF weights: only the shard is read, by ranges of the file, into
 * memory of the rank's own; nothing else of the file is mapped but its
 * header while it is parsed. 0, or -1 and ERR.
 */
int tp_weights_gguf(struct tp_weights *w, const char *path, int rank,
		    int nranks, int expert_split, char *err, size_t errlen);
/*
 * Synthetic weights of architecture ARCH (NULL: llama) and shape C
 * (the architecture's own numerics set over C's: RoPE's mode, the
 * routing): TYPE is how they are stored.
 */
int tp_weights_synth(struct tp_weights *w, const char *arch,
		     const struct tp_config *c, uint64_t seed,
		     enum tp_type type, int rank, int nranks, char *err,
		     size_t errlen);
/*
 * Whether NRANKS ranks can run the synthetic model of ARCH and shape C
 * in TYPE (tp_synth_check on the architecture's numerics): 0, or -1 and
 * ERR.
 */
int tp_synth_check_arch(const char *arch, const struct tp_config *c,
			enum tp_type type, int nranks, char *err,
			size_t errlen);
/*
 * Write the synthetic model (ARCH, C, SEED) to PATH as GGUF, weights in
 * TYPE. TIED: leave output.weight out (the head reuses token_embd.weight).
 */
int tp_export_gguf(const char *path, const char *arch,
		   const struct tp_config *c, uint64_t seed, enum tp_type type,
		   int tied, char *err, size_t errlen);

#endif /* TPRUN_MODEL_ARCH_REGISTRY_H */
