// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loading the tokenizer from GGUF metadata (tokenizer.ggml.*): every
 * array is checked for its element type and length, every id for its
 * range, before anything is used; the strings are copied, so the
 * tokenizer outlives the file's mapping.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "gguf/gguf.h"
#include "text/tokenizer_internal.h"

static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Open addressing, FNV-1a; keys are not copied. */
struct tp_strmap {
	size_t cap;
	const char **key;
	int *klen, *val;
};

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static struct tp_strmap *map_new(size_t n)
{
	struct tp_strmap *m = tp_calloc(1, sizeof(*m));

	for (m->cap = 16; m->cap < 2 * n + 16; m->cap *= 2)
		;
	m->key = tp_calloc(m->cap, sizeof(*m->key));
	m->klen = tp_calloc(m->cap, sizeof(int));
	m->val = tp_calloc(m->cap, sizeof(int));
	return m;
}

static void map_free(struct tp_strmap *m)
{
	if (!m)
		return;
	free(m->key);
	free(m->klen);
	free(m->val);
	free(m);
}

/* Insert (first one wins, as in llama.cpp's token_to_id). */
static void map_put(struct tp_strmap *m, const char *k, int len, int v)
{
	size_t i = fnv(k, (size_t)len) & (m->cap - 1);

	for (; m->key[i]; i = (i + 1) & (m->cap - 1))
		if (m->klen[i] == len && !memcmp(m->key[i], k, (size_t)len))
			return;
	m->key[i] = k;
	m->klen[i] = len;
	m->val[i] = v;
}

int tp_map_get(const struct tp_strmap *m, const char *k, size_t len)
{
	size_t i;

	if (!m)
		return -1;
	for (i = fnv(k, len) & (m->cap - 1); m->key[i];
	     i = (i + 1) & (m->cap - 1))
		if ((size_t)m->klen[i] == len && !memcmp(m->key[i], k, len))
			return m->val[i];
	return -1;
}

void tp_tok_free(struct tp_tok *t)
{
	int i;

	for (i = 0; t->piece && i < t->n; i++)
		free(t->piece[i]);
	free(t->piece);
	free(t->len);
	free(t->score);
	free(t->type);
	free(t->user);
	free(t->spec);
	free(t->chat_template);
	free(t->eog);
	map_free(t->ids);
	if (t->merges) {
		for (i = 0; i < (int)t->merges->cap; i++)
			free((char *)t->merges->key[i]);
		map_free(t->merges);
	}
	memset(t, 0, sizeof(*t));
}

/* An array KEY of type TYPE and N elements: 1, 0 absent, -1 wrong. */
static int get_arr(const struct gguf *g, const char *key, uint32_t type,
		   uint64_t n, const struct gguf_kv **kv, char *err,
		   size_t errlen)
{
	*kv = gguf_find_kv(g, key);
	if (!*kv)
		return 0;
	if ((*kv)->type != GGUF_ARRAY || (*kv)->arr_type != type)
		return bad(err, errlen, "metadata %s is not an array of %s",
			   key, type == GGUF_STRING ? "strings" :
			   type == GGUF_F32 ? "f32" : "i32");
	if (n && (*kv)->arr_n != n)
		return bad(err, errlen,
			   "metadata %s has %llu entries, the vocabulary %llu",
			   key, (unsigned long long)(*kv)->arr_n,
			   (unsigned long long)n);
	return 1;
}

static int get_id(const struct gguf *g, const char *key, int n, int *id,
		  char *err, size_t errlen)
{
	int64_t v;
	int r = gguf_get_int(g, key, &v);

	if (r < 0)
		return bad(err, errlen, "metadata %s is not an integer", key);
	if (r == 0)
		return 0;
	if (v < 0 || v >= n)
		return bad(err, errlen,
			   "metadata %s = %lld is outside the vocabulary (%d tokens)",
			   key, (long long)v, n);
	*id = (int)v;
	return 0;
}

static int get_bool(const struct gguf *g, const char *key, int *b, char *err,
		    size_t errlen)
{
	int64_t v;
	int r = gguf_get_int(g, key, &v);

	if (r < 0)
		return bad(err, errlen, "metadata %s is not a boolean", key);
	if (r)
		*b = v != 0;
	return 0;
}

static int by_len_desc(const void *a, const void *b, void *t)
{
	const int *len = ((const struct tp_tok *)t)->len;
	int x = *(const int *)a, y = *(const int *)b;

	return len[y] != len[x] ? len[y] - len[x] : x - y;
}

static int load_merges(struct tp_tok *t, const struct gguf *g, char *err,
		       size_t errlen)
{
	const struct gguf_kv *kv;
	uint64_t i;
	int r = get_arr(g, "tokenizer.ggml.merges", GGUF_STRING, 0, &kv, err,
			errlen);

	if (r <= 0)
		return r < 0 ? -1 : bad(err, errlen,
				   "tokenizer.ggml.model gpt2 needs tokenizer.ggml.merges");
	if (kv->arr_n > (1u << 24))
		return bad(err, errlen, "tokenizer.ggml.merges: %llu entries is too many",
			   (unsigned long long)kv->arr_n);
	t->merges = map_new(kv->arr_n);
	for (i = 0; i < kv->arr_n; i++) {
		struct gguf_str s = gguf_arr_str(g, kv, i);
		const char *sp = s.len ? memchr(s.p + 1, ' ', s.len - 1) : NULL;
		char *k;

		if (!sp || sp == s.p + s.len - 1 || s.len > 1024)
			return bad(err, errlen,
				   "tokenizer.ggml.merges[%llu] is not \"left right\"",
				   (unsigned long long)i);
		k = tp_calloc(1, s.len + 1);
		memcpy(k, s.p, s.len);
		map_put(t->merges, k, (int)s.len, (int)i);
		if (tp_map_get(t->merges, k, s.len) != (int)i)
			free(k);	/* a duplicate: the first rank stays */
	}
	return 0;
}

static int load_pre(struct tp_tok *t, const struct gguf *g, char *err,
		    size_t errlen)
{
	struct gguf_str s;
	int r = gguf_get_str(g, "tokenizer.ggml.pre", &s);

	if (r < 0)
		return bad(err, errlen, "metadata tokenizer.ggml.pre is not a string");
	t->pre = TP_PRE_GPT2;
	if (r == 0 || gguf_str_eq(s, "default") || gguf_str_eq(s, "gpt-2"))
		return 0;
	if (gguf_str_eq(s, "llama-bpe") || gguf_str_eq(s, "llama3") ||
	    gguf_str_eq(s, "llama-v3") || gguf_str_eq(s, "smaug-bpe")) {
		t->pre = TP_PRE_LLAMA3;
		t->ignore_merges = 1;
		t->add_bos = 1;
		return 0;
	}
	if (gguf_str_eq(s, "qwen2") || gguf_str_eq(s, "deepseek-r1-qwen")) {
		t->pre = TP_PRE_QWEN2;
		return 0;
	}
	/* GLM-4, GLM-4.5: Llama 3's regex, merges as they are */
	if (gguf_str_eq(s, "glm4") || gguf_str_eq(s, "chatglm-bpe")) {
		t->pre = TP_PRE_LLAMA3;
		return 0;
	}
	/* o200k (gpt-oss, Llama 4): words split at case changes */
	if (gguf_str_eq(s, "gpt-4o") || gguf_str_eq(s, "llama4")) {
		t->pre = TP_PRE_GPT4O;
		return 0;
	}
	/* DeepSeek V3/R1 (deepseek2 files); Kimi K2 (the same arch) */
	if (gguf_str_eq(s, "deepseek-v3")) {
		t->pre = TP_PRE_DEEPSEEK3;
		return 0;
	}
	if (gguf_str_eq(s, "kimi-k2")) {
		t->pre = TP_PRE_KIMI_K2;
		return 0;
	}
	return bad(err, errlen,
		   "tokenizer.ggml.pre '%.*s' is not supported (gpt-2, llama-bpe, qwen2, glm4, gpt-4o, deepseek-v3, kimi-k2)",
		   (int)(s.len > 64 ? 64 : s.len), s.p);
}

/* tokenizer.chat_template, kept as it is (chat_template.c recognises it). */
static int load_template(struct tp_tok *t, const struct gguf *g, char *err,
			 size_t errlen)
{
	struct gguf_str s;
	int r = gguf_get_str(g, "tokenizer.chat_template", &s);

	if (r < 0)
		return bad(err, errlen, "metadata tokenizer.chat_template is not a string");
	if (r == 0)
		return 0;
	if (s.len > (1u << 20))
		return bad(err, errlen, "tokenizer.chat_template is %llu bytes long",
			   (unsigned long long)s.len);
	t->chat_template = tp_calloc(1, s.len + 1);
	memcpy(t->chat_template, s.p, s.len);
	return 0;
}

static void find_bytes(struct tp_tok *t)
{
	char b[8];
	int i;

	for (i = 0; i < 256; i++) {
		if (t->kind == TP_TOK_SPM) {
			snprintf(b, sizeof(b), "<0x%02X>", i);
			t->byte_tok[i] = tp_map_get(t->ids, b, 6);
			if (t->byte_tok[i] < 0) {
				b[0] = (char)i;
				t->byte_tok[i] = tp_map_get(t->ids, b, 1);
			}
		} else {
			size_t n = tp_utf8_put(b, tp_gpt2_byte_cp(i));

			t->byte_tok[i] = tp_map_get(t->ids, b, n);
		}
	}
}

static int id_of(const struct tp_tok *t, const char *s)
{
	return tp_map_get(t->ids, s, strlen(s));
}

/*
 * gpt-oss's vocabulary (<|return|> and <|call|> next to <|end|>), as
 * llama.cpp takes it: the harmony markers are printed (user-defined, so
 * an answer shows its channels), and <|end|>, which closes the analysis
 * channel, is printed too and ends nothing (find_eog()); <|return|> does.
 */
static void harmony_types(struct tp_tok *t)
{
	static const char *const shown[] = {
		"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>",
	};
	size_t i;
	int id;

	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		if ((id = id_of(t, shown[i])) >= 0)
			t->type[id] = TP_TT_USER;
	if (id_of(t, "<|return|>") >= 0 && id_of(t, "<|call|>") >= 0 &&
	    (id = id_of(t, "<|end|>")) >= 0)
		t->type[id] = TP_TT_USER;
}

/* llama.cpp's end-of-generation set: EOS, EOT, EOM, and these by text
 * (<|end|> not in a harmony vocabulary: harmony_types()) */
static void find_eog(struct tp_tok *t, int eom)
{
	static const char *const names[] = {
		"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",
		"<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>",
		"<|return|>", "<|call|>",
	};
	size_t i;
	int id;

	t->eog = tp_calloc((size_t)t->n, 1);
	if (t->eos >= 0)
		t->eog[t->eos] = 1;
	if (t->eot >= 0)
		t->eog[t->eot] = 1;
	if (eom >= 0)
		t->eog[eom] = 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		id = id_of(t, names[i]);
		if (id >= 0)
			t->eog[id] = 1;
	}
	if (id_of(t, "<|return|>") >= 0 && id_of(t, "<|call|>") >= 0 &&
	    (id = id_of(t, "<|end|>")) >= 0 && id != t->eos && id != t->eot)
		t->eog[id] = 0;
}

int tp_tok_load(struct tp_tok *t, const struct gguf *g, int vocab, char *err,
		size_t errlen)
{
	const struct gguf_kv *tk, *sk, *yk;
	struct gguf_str model;
	int r, i, n, eom = -1;

	memset(t, 0, sizeof(*t));
	t->bos = t->eos = t->eot = t->unk = -1;
	r = gguf_get_str(g, "tokenizer.ggml.model", &model);
	if (r < 0)
		return bad(err, errlen, "metadata tokenizer.ggml.model is not a string");
	if (r == 0)
		return 1;
	if (gguf_str_eq(model, "llama")) {
		t->kind = TP_TOK_SPM;
		t->add_bos = t->add_space_prefix = 1;
	} else if (gguf_str_eq(model, "gpt2")) {
		t->kind = TP_TOK_BPE;
	} else {
		return bad(err, errlen,
			   "tokenizer.ggml.model '%.*s' is not supported (llama, gpt2)",
			   (int)(model.len > 64 ? 64 : model.len), model.p);
	}
	r = get_arr(g, "tokenizer.ggml.tokens", GGUF_STRING, 0, &tk, err, errlen);
	if (r <= 0)
		return r ? -1 : bad(err, errlen, "metadata tokenizer.ggml.tokens is missing");
	if (tk->arr_n < 1 || tk->arr_n > (1u << 24) ||
	    (vocab > 0 && tk->arr_n != (uint64_t)vocab))
		return bad(err, errlen,
			   "tokenizer.ggml.tokens has %llu tokens, the model's vocabulary %d",
			   (unsigned long long)tk->arr_n, vocab);
	n = (int)tk->arr_n;
	/* llama.cpp's defaults when the file names none */
	if (t->kind == TP_TOK_SPM && n > 2) {
		t->unk = 0;
		t->bos = 1;
		t->eos = 2;
	} else if (t->kind == TP_TOK_BPE && n > 11) {
		t->bos = t->eos = 11;
	}
	if (get_arr(g, "tokenizer.ggml.scores", GGUF_F32, (uint64_t)n, &sk, err,
		    errlen) < 0 ||
	    get_arr(g, "tokenizer.ggml.token_type", GGUF_I32, (uint64_t)n, &yk,
		    err, errlen) < 0)
		return -1;
	if (t->kind == TP_TOK_BPE && (load_pre(t, g, err, errlen) ||
				      load_merges(t, g, err, errlen)))
		goto fail;
	if (get_id(g, "tokenizer.ggml.bos_token_id", n, &t->bos, err, errlen) ||
	    get_id(g, "tokenizer.ggml.eos_token_id", n, &t->eos, err, errlen) ||
	    get_id(g, "tokenizer.ggml.eot_token_id", n, &t->eot, err, errlen) ||
	    get_id(g, "tokenizer.ggml.eom_token_id", n, &eom, err, errlen) ||
	    get_id(g, "tokenizer.ggml.unknown_token_id", n, &t->unk, err,
		   errlen) ||
	    get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err,
		     errlen) ||
	    get_bool(g, "tokenizer.ggml.add_eos_token", &t->add_eos, err,
		     errlen) ||
	    get_bool(g, "tokenizer.ggml.add_space_prefix",
		     &t->add_space_prefix, err, errlen))
		goto fail;
	if (t->add_bos && t->bos < 0) {
		bad(err, errlen, "tokenizer.ggml.add_bos_token is set but there is no tokenizer.ggml.bos_token_id");
		goto fail;
	}
	t->n = n;
	t->piece = tp_calloc((size_t)n, sizeof(char *));
	t->len = tp_calloc((size_t)n, sizeof(int));
	t->score = tp_calloc((size_t)n, sizeof(float));
	t->type = tp_calloc((size_t)n, sizeof(int));
	t->user = tp_calloc((size_t)n, sizeof(int));
	t->spec = tp_calloc((size_t)n, sizeof(int));
	t->ids = map_new((size_t)n);
	for (i = 0; i < n; i++) {
		struct gguf_str s = gguf_arr_str(g, tk, (uint64_t)i);

		if (s.len > 4096) {
			bad(err, errlen, "tokenizer.ggml.tokens[%d] is %llu bytes long",
			    i, (unsigned long long)s.len);
			goto fail;
		}
		t->piece[i] = tp_calloc(1, s.len + 1);
		memcpy(t->piece[i], s.p, s.len);
		t->len[i] = (int)s.len;
		if (sk)
			memcpy(&t->score[i], sk->arr_data + 4 * (size_t)i, 4);
		t->type[i] = TP_TT_NORMAL;
		if (yk) {
			int32_t y;

			memcpy(&y, yk->arr_data + 4 * (size_t)i, 4);
			if (y < TP_TT_NORMAL || y > TP_TT_BYTE) {
				bad(err, errlen, "tokenizer.ggml.token_type[%d] = %d is not a token type (1..6)",
				    i, y);
				goto fail;
			}
			t->type[i] = y;
		}
		map_put(t->ids, t->piece[i], t->len[i], i);
	}
	harmony_types(t);
	for (i = 0; i < n; i++) {
		if (t->type[i] == TP_TT_USER && t->len[i])
			t->user[t->nuser++] = i;
		if ((t->type[i] == TP_TT_USER || t->type[i] == TP_TT_CONTROL) &&
		    t->len[i])
			t->spec[t->nspec++] = i;
	}
	qsort_r(t->user, (size_t)t->nuser, sizeof(int), by_len_desc, t);
	qsort_r(t->spec, (size_t)t->nspec, sizeof(int), by_len_desc, t);
	if (load_template(t, g, err, errlen))
		goto fail;
	find_bytes(t);
	find_eog(t, eom);
	return 0;
fail:
	tp_tok_free(t);
	return -1;
}
