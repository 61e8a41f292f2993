/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The 16-bit floats F16 and BF16, to and from float (float16.c). */
#ifndef TPRUN_KERNELS_FLOAT16_H
#define TPRUN_KERNELS_FLOAT16_H

#include <stdint.h>

/* Call once before the other functions (fills the F16 table). */
void tp_math_init(void);

float tp_f16_to_f32(uint16_t h);
/* Every F16 value as float, by its bits: the fast tp_f16_to_f32. */
extern float tp_f16_table[65536];
uint16_t tp_f32_to_f16(float f);	/* round to nearest even */
float tp_bf16_to_f32(uint16_t h);
uint16_t tp_f32_to_bf16(float f);	/* round to nearest even */

#endif /* TPRUN_KERNELS_FLOAT16_H */
