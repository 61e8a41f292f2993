/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The tokenizer's internals, shared by the tokenizer*.c and pretokenizer.c. */
#ifndef TPRUN_TOKENIZER_INTERNAL_H
#define TPRUN_TOKENIZER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "text/tokenizer.h"
#include "text/utf8.h"

/* piece -> id, or -1 */
int tp_map_get(const struct tp_strmap *m, const char *k, size_t len);

/* GPT-2's byte-to-unicode map, and back (-1: no byte). */
uint32_t tp_gpt2_byte_cp(int byte);
int tp_gpt2_cp_byte(uint32_t cp);

/* Pre-tokenizer: split CPS[0..N) into words; END[k] = the end of word k.
 * Returns the number of words. */
int tp_pretok(enum tp_tok_pre pre, const uint32_t *cps, int n, int *end);

#endif /* TPRUN_TOKENIZER_INTERNAL_H */
