/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* UTF-8 code points in and out of bytes (utf8.c). */
#ifndef TPRUN_UTF8_H
#define TPRUN_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* UTF-8: the code point at S (at most N bytes), its length in *LEN (an
 * invalid byte is 1 byte, code point 0xFFFD). */
uint32_t tp_utf8_get(const char *s, size_t n, int *len);
/* The same, with surrogates, overlong forms and code points past U+10FFFF
 * invalid too (text out as JSON must be UTF-8 a strict decoder takes;
 * the tokenizer reads text as llama.cpp does, with tp_utf8_get). */
uint32_t tp_utf8_get_strict(const char *s, size_t n, int *len);
size_t tp_utf8_put(char *out, uint32_t cp);
/* Length of the UTF-8 sequence that starts with byte C (1 if invalid). */
int tp_utf8_seq_len(unsigned char c);

#endif /* TPRUN_UTF8_H */
