/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --export-gguf: a synthetic model as a GGUF file (export.c). */
#ifndef TPRUN_MODEL_EXPORT_H
#define TPRUN_MODEL_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct gguf_writer;
struct tp_arch;

/* A synthetic model being written. */
struct tp_export {
	struct gguf_writer *gw;
	const struct tp_config *c;
	uint64_t seed;
	enum tp_type type;	/* the weights' type (norms: F32) */
};

/*
 * The tensor named FMT (%d: LAYER), ROWS x COLS of synthetic tensor
 * TENSOR's values, stored as WANT, or as the type llama.cpp's quantizer
 * falls back to for rows of COLS (tp_type_for_cols(), said on stderr).
 */
void tp_export_tensor(struct tp_export *e, enum tp_type want,
		      const char *fmt, int layer, int tensor, int rows,
		      int cols);

/*
 * Write the synthetic model (C, SEED) of ARCH to PATH as GGUF, weights in
 * TYPE. TIED: leave output.weight out (the head reuses
 * token_embd.weight). 0, or -1 and ERR.
 */
int tp_export_synthetic(const char *path, const struct tp_arch *arch,
			const struct tp_config *c, uint64_t seed,
			enum tp_type type, int tied, char *err,
			size_t errlen);

#endif /* TPRUN_MODEL_EXPORT_H */
