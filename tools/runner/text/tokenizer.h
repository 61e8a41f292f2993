/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tokenizer stored in a GGUF file's metadata (tokenizer.ggml.*), as
 * llama.cpp implements it:
 *  - "llama": SentencePiece BPE. The text gets a leading space, spaces
 *    become U+2581 "▁"; adjacent pieces merge, highest score first, while
 *    the merge is a token; a piece that is no token falls back to its
 *    bytes' <0xNN> tokens.
 *  - "gpt2": byte-level BPE. A pre-tokenizer (GPT-2's, Llama 3's, Qwen2's,
 *    o200k's, DeepSeek V3's or Kimi K2's, by tokenizer.ggml.pre; see
 *    pretokenizer.c) splits the text into words, each
 *    byte maps to a printable code point (GPT-2's byte-to-unicode map),
 *    and pairs merge in the order of tokenizer.ggml.merges.
 * User-defined tokens found in the text are taken as they are; control
 * tokens (<s>, ...) are never parsed from text.
 */
#ifndef TPRUN_TOKENIZER_H
#define TPRUN_TOKENIZER_H

#include <stddef.h>

struct gguf;

enum tp_tok_kind { TP_TOK_SPM = 1, TP_TOK_BPE };
enum tp_tok_pre {
	TP_PRE_GPT2, TP_PRE_LLAMA3, TP_PRE_QWEN2, TP_PRE_GPT4O, TP_PRE_DEEPSEEK3,
	TP_PRE_KIMI_K2,
};
/* GGUF token types */
enum {
	TP_TT_NORMAL = 1, TP_TT_UNKNOWN, TP_TT_CONTROL, TP_TT_USER,
	TP_TT_UNUSED, TP_TT_BYTE,
};

struct tp_strmap;

struct tp_tok {
	enum tp_tok_kind kind;
	enum tp_tok_pre pre;
	int n;
	char **piece;		/* NUL-terminated copies */
	int *len;
	float *score;
	int *type;
	int bos, eos, eot, unk;	/* -1 when absent */
	int add_bos, add_eos, add_space_prefix, ignore_merges;
	int byte_tok[256];	/* token of each byte, -1 when none */
	struct tp_strmap *ids;	/* piece -> id */
	struct tp_strmap *merges; /* "left right" -> rank */
	unsigned char *eog;	/* end of generation, as llama.cpp: EOS, EOT,
				 * EOM and the tokens <|eot_id|>, <|im_end|>... */
	int *user;		/* user-defined tokens, longest first */
	int nuser;
	int *spec;		/* user-defined and control tokens, longest
				 * first (parsed from text with TP_ENC_CTL) */
	int nspec;
	char *chat_template;	/* tokenizer.chat_template, or NULL */
};

/*
 * Load the tokenizer of G. 0 = loaded, 1 = the file has none
 * (no tokenizer.ggml.model), -1 = malformed or unsupported (ERR says
 * what). VOCAB: the model's vocabulary size, which must match.
 */
int tp_tok_load(struct tp_tok *t, const struct gguf *g, int vocab, char *err,
		size_t errlen);
void tp_tok_free(struct tp_tok *t);

/*
 * Encode TEXT (LEN bytes). FLAGS: TP_ENC_BOS adds BOS/EOS when the file
 * asks; TP_ENC_CTL also takes control tokens (<|im_start|>, </s>...)
 * found in the text as they are (a chat template's rendering; never
 * for text from a user). Returns the number of ids, *IDS malloc'ed.
 */
#define TP_ENC_BOS 1
#define TP_ENC_CTL 2
int tp_tok_encode(const struct tp_tok *t, const char *text, size_t len,
		  int flags, int **ids);
/* The bytes token ID stands for (control tokens: none). Returns the
 * length; OUT gets at most CAP bytes. */
size_t tp_tok_piece(const struct tp_tok *t, int id, char *out, size_t cap);
/* End of generation (EOS, EOT, EOM and llama.cpp's known end tokens). */
int tp_tok_is_eog(const struct tp_tok *t, int id);

/* Streaming decode: bytes come out only as whole UTF-8 sequences. */
struct tp_detok {
	char pend[8];
	int npend;
};
/* Append token ID's bytes; writes the complete part to OUT (at least
 * CAP >= piece length + 8) and returns its length. */
size_t tp_detok_push(struct tp_detok *d, const struct tp_tok *t, int id,
		     char *out, size_t cap);
/* What is left (an incomplete sequence, as is). */
size_t tp_detok_flush(struct tp_detok *d, char *out);

/* The small "llama" tokenizer --export-gguf writes for VOCAB tokens
 * (VOCAB >= TP_TOK_SYNTH_MIN), as metadata of W. */
#define TP_TOK_SYNTH_MIN 259
struct gguf_writer;
void tp_tok_synth_write(struct gguf_writer *w, int vocab);
/* Its tokenizer.chat_template: Zephyr's. */
extern const char tp_tok_synth_chat_template[];
/* The same tokenizer, for synthetic runs. 0, or -1 and ERR. */
int tp_tok_synth(struct tp_tok *t, int vocab, char *err, size_t errlen);

#endif /* TPRUN_TOKENIZER_H */
