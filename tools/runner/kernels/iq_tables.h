/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lookup tables of GGML's IQ and MXFP4 weight types (iq_tables.c,
 * generated from GGML's own dequantisation by gen-iq-tables.py).
 *
 * A grid entry is a group of 8 (IQ1, IQ2) or 4 (IQ3) quant values, one
 * byte each, element 0 in the lowest byte; a block stores an index into
 * the grid per group, signs and scales apart:
 *   IQ2_XXS  256 entries  bytes 8, 25, 43      (x 1/8 in the products)
 *   IQ2_XS   512 entries  bytes 8, 25, 43
 *   IQ2_S   1024 entries  bytes 8, 25, 43, 62
 *   IQ3_XXS  256 entries  bytes 4, 12, ..., 52, 62 (x 1/4)
 *   IQ3_S    512 entries  bytes 1, 3, ..., 15
 *   IQ1_S/M 2048 entries  signed bytes -1, 0, 1 (plus a shift of +-1/8)
 * Signs of IQ2_XXS, IQ2_XS and IQ3_XXS: 7 bits per group of 8 index
 * tp_ksigns_iq2xs, whose eighth bit makes the count of minus signs even
 * (bit j set: element j negative); tp_ksigns64_iq2xs is the same as 8
 * bytes of +1 / -1, the operand of a byte-wise sign instruction.
 */
#ifndef TPRUN_IQ_TABLES_H
#define TPRUN_IQ_TABLES_H

#include <stdint.h>

/* IQ4_NL and IQ4_XS: a 4-bit quant q stands for tp_kvalues_iq4nl[q] */
extern const int8_t tp_kvalues_iq4nl[16];
/* MXFP4: an E2M1 value times 2 (the block scale is halved to match) */
extern const int8_t tp_kvalues_mxfp4[16];
extern const uint8_t tp_ksigns_iq2xs[128];
extern const uint64_t tp_ksigns64_iq2xs[128];
extern const uint64_t tp_iq2xxs_grid[256];
extern const uint64_t tp_iq2xs_grid[512];
extern const uint64_t tp_iq2s_grid[1024];
extern const uint32_t tp_iq3xxs_grid[256];
extern const uint32_t tp_iq3s_grid[512];
extern const uint64_t tp_iq1s_grid[2048];

#endif /* TPRUN_IQ_TABLES_H */
