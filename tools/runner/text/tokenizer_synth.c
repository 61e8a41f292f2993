// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The small SentencePiece ("llama") vocabulary of synthetic models, which
 * --export-gguf writes and synthetic --prompt runs use:
 *
 *   0 <unk>, 1 <s> (BOS), 2 </s> (EOS), 3..258 the byte tokens <0x00>..
 *   <0xFF>, then "▁" and the printable ASCII characters, then merged
 *   pieces with falling scores (every prefix of " word" for common
 *   English words, and of common word endings, so that merges compete),
 *   then "▁" + two letters, then <unused N> up to the vocabulary size.
 *
 * Deterministic: a function of the vocabulary size only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "gguf/gguf.h"
#include "text/tokenizer_internal.h"

static const char *const words[] = {
	"the", "of", "and", "to", "in", "is", "was", "that", "for", "it",
	"with", "as", "his", "on", "be", "at", "by", "this", "had", "not",
	"are", "but", "from", "or", "have", "an", "they", "which", "one",
	"you", "were", "her", "all", "she", "there", "would", "their", "we",
	"him", "been", "has", "when", "who", "will", "more", "no", "if",
	"out", "so", "said", "what", "up", "its", "about", "into", "than",
	"them", "can", "only", "other", "new", "some", "could", "time",
	"these", "two", "may", "then", "do", "first", "any", "my", "now",
	"such", "like", "our", "over", "man", "me", "even", "most", "made",
	"after", "also", "did", "many", "before", "must", "through", "back",
	"years", "where", "much", "your", "way", "well", "down", "should",
	"because", "each", "just", "those", "people", "how", "too", "little",
	"state", "good", "very", "make", "world", "still", "own", "see",
	"hello", "Hello", "The", "model", "token", "cable", "Thunderbolt",
	"rank", "tensor", "parallel", "once", "upon", "a", "I", "A",
};

static const char *const ends[] = {
	"ing", "ed", "er", "es", "ly", "tion", "ent", "al", "ers", "th",
	"he", "an", "re", "on", "at", "nd", "st", "en", "es", "or",
};

struct vb {
	char **s;
	float *score;
	int32_t *type;
	int n, cap, first_piece;
};

static void add(struct vb *v, const char *s, int type, float score)
{
	if (v->n == v->cap)
		return;
	v->s[v->n] = tp_strdup(s);
	v->type[v->n] = type;
	v->score[v->n] = score;
	v->n++;
}

/* A merged piece, unless the vocabulary has it already. */
static void piece(struct vb *v, const char *s)
{
	int i;

	for (i = v->first_piece; i < v->n; i++)
		if (!strcmp(v->s[i], s))
			return;
	add(v, s, TP_TT_NORMAL, -(float)(v->n - v->first_piece + 1));
}

/* Every prefix of PRE + W of two characters or more. */
static void prefixes(struct vb *v, const char *pre, const char *w)
{
	char buf[64];
	size_t p = strlen(pre), k;

	for (k = 1; k <= strlen(w); k++) {
		snprintf(buf, sizeof(buf), "%s%.*s", pre, (int)k, w);
		if (p || k >= 2)
			piece(v, buf);
	}
}

static void build(struct vb *v, int vocab)
{
	char b[32];
	int i, c, d;

	memset(v, 0, sizeof(*v));
	v->cap = vocab;
	v->s = tp_calloc((size_t)vocab, sizeof(char *));
	v->score = tp_calloc((size_t)vocab, sizeof(float));
	v->type = tp_calloc((size_t)vocab, sizeof(int32_t));
	add(v, "<unk>", TP_TT_UNKNOWN, 0);
	add(v, "<s>", TP_TT_CONTROL, 0);
	add(v, "</s>", TP_TT_CONTROL, 0);
	for (i = 0; i < 256; i++) {
		snprintf(b, sizeof(b), "<0x%02X>", i);
		add(v, b, TP_TT_BYTE, 0);
	}
	add(v, "\xe2\x96\x81", TP_TT_NORMAL, -1e6f);
	for (c = 0x21; c < 0x7f; c++) {
		b[0] = (char)c;
		b[1] = 0;
		add(v, b, TP_TT_NORMAL, -1e6f);
	}
	v->first_piece = v->n;
	for (i = 0; i < (int)(sizeof(words) / sizeof(words[0])); i++)
		prefixes(v, "\xe2\x96\x81", words[i]);
	for (i = 0; i < (int)(sizeof(ends) / sizeof(ends[0])); i++)
		prefixes(v, "", ends[i]);
	for (c = 'a'; c <= 'z'; c++)
		for (d = 'a' - 1; d <= 'z'; d++) {
			snprintf(b, sizeof(b), "\xe2\x96\x81%c%c", c,
				 d < 'a' ? 0 : d);
			piece(v, b);
		}
	for (i = 0; v->n < vocab; i++) {
		snprintf(b, sizeof(b), "<unused%d>", i);
		add(v, b, TP_TT_UNUSED, 0);
	}
}

static void vb_free(struct vb *v)
{
	int i;

	for (i = 0; i < v->n; i++)
		free(v->s[i]);
	free(v->s);
	free(v->score);
	free(v->type);
}

/* Zephyr's template (its model card's): <|user|> turns closed by </s> */
const char tp_tok_synth_chat_template[] =
	"{% for message in messages %}\n"
	"{% if message['role'] == 'user' %}\n"
	"{{ '<|user|>\\n' + message['content'] + eos_token }}\n"
	"{% elif message['role'] == 'system' %}\n"
	"{{ '<|system|>\\n' + message['content'] + eos_token }}\n"
	"{% elif message['role'] == 'assistant' %}\n"
	"{{ '<|assistant|>\\n'  + message['content'] + eos_token }}\n"
	"{% endif %}\n"
	"{% if loop.last and add_generation_prompt %}\n"
	"{{ '<|assistant|>' }}\n"
	"{% endif %}\n"
	"{% endfor %}";

void tp_tok_synth_write(struct gguf_writer *w, int vocab)
{
	struct vb v;

	if (vocab < TP_TOK_SYNTH_MIN)
		return;
	build(&v, vocab);
	gguf_writer_str(w, "tokenizer.ggml.model", "llama");
	gguf_writer_str_array(w, "tokenizer.ggml.tokens",
			      (const char *const *)v.s, (uint64_t)v.n);
	gguf_writer_f32_array(w, "tokenizer.ggml.scores", v.score,
			      (uint64_t)v.n);
	gguf_writer_i32_array(w, "tokenizer.ggml.token_type", v.type,
			      (uint64_t)v.n);
	gguf_writer_u32(w, "tokenizer.ggml.unknown_token_id", 0);
	gguf_writer_u32(w, "tokenizer.ggml.bos_token_id", 1);
	gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", 2);
	gguf_writer_bool(w, "tokenizer.ggml.add_bos_token", 1);
	gguf_writer_bool(w, "tokenizer.ggml.add_eos_token", 0);
	gguf_writer_str(w, "tokenizer.chat_template", tp_tok_synth_chat_template);
	vb_free(&v);
}

int tp_tok_synth(struct tp_tok *t, int vocab, char *err, size_t errlen)
{
	struct gguf_writer *w;
	unsigned char *bytes;
	struct gguf g;
	size_t len;
	int r;

	if (vocab < TP_TOK_SYNTH_MIN) {
		snprintf(err, errlen,
			 "the synthetic model's vocabulary (%d) is too small for its tokenizer: --prompt needs --vocab %d or more",
			 vocab, TP_TOK_SYNTH_MIN);
		return -1;
	}
	w = gguf_writer_new(GGUF_DEFAULT_ALIGNMENT);
	tp_tok_synth_write(w, vocab);
	bytes = gguf_writer_bytes(w, &len);
	gguf_writer_free(w);
	r = gguf_parse(&g, bytes, len, err, errlen);
	if (!r) {
		r = tp_tok_load(t, &g, vocab, err, errlen) ? -1 : 0;
		gguf_close(&g);
	}
	free(bytes);
	return r;
}
