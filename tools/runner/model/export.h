/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef TPRUN_EXPORT_H
#define TPRUN_EXPORT_H

#include <stdint.h>

#include "model/model.h"

/*
 * Write the synthetic model (C, SEED) to PATH as GGUF, weights in TYPE.
 * TIED: leave output.weight out (the head reuses token_embd.weight).
 */
int tp_export_gguf(const char *path, const struct tp_config *c, uint64_t seed,
		   enum tp_type type, int tied, char *err, size_t errlen);

#endif /* TPRUN_EXPORT_H */
