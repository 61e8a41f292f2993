/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The tokenizer's internals, shared by tok_*.c and tokenizer.c. */
#ifndef TPRUN_TOK_INT_H
#define TPRUN_TOK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "text/tokenizer.h"

/* piece -> id, or -1 */
int tp_map_get(const struct tp_strmap *m, const char *k, size_t len);

/* UTF-8: the code point at S (at most N bytes), its length in *LEN (an
 * invalid byte is 1 byte, code point 0xFFFD). */
uint32_t tp_utf8_get(const char *s, size_t n, int *len);
size_t tp_utf8_put(char *out, uint32_t cp);
/* Length of the UTF-8 sequence that starts with byte C (1 if invalid). */
int tp_utf8_seq_len(unsigned char c);

/* GPT-2's byte-to-unicode map, and back (-1: no byte). */
uint32_t tp_gpt2_byte_cp(int byte);
int tp_gpt2_cp_byte(uint32_t cp);

/* Pre-tokenizer: split CPS[0..N) into words; END[k] = the end of word k.
 * Returns the number of words. */
int tp_pretok(enum tp_tok_pre pre, const uint32_t *cps, int n, int *end);

#endif /* TPRUN_TOK_INT_H */
