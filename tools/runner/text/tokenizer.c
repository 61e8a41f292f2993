// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Encoding and decoding, following llama.cpp's llm_tokenizer_spm and
 * llm_tokenizer_bpe step by step (the same merge order, the same tie
 * breaks), so that both give the same ids for the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "text/tokenizer_internal.h"

struct ids {
	int *v;
	int n, cap;
};

static void push(struct ids *o, int id)
{
	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->v = realloc(o->v, (size_t)o->cap * sizeof(int));
		if (!o->v)
			tp_die("out of memory");
	}
	o->v[o->n++] = id;
}

struct sym {
	int prev, next;
	const char *text;
	int n;
};

struct bigram {
	int left, right, size;
	float score;	/* SPM: higher first; BPE: the rank, lower first */
};

struct heap {
	struct bigram *b;
	int n, cap, spm;
};

static int before(const struct heap *h, const struct bigram *a,
		  const struct bigram *b)
{
	if (a->score != b->score)
		return h->spm ? a->score > b->score : a->score < b->score;
	return a->left < b->left;
}

static void heap_push(struct heap *h, struct bigram x)
{
	int i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->b = realloc(h->b, (size_t)h->cap * sizeof(*h->b));
		if (!h->b)
			tp_die("out of memory");
	}
	for (i = h->n++; i > 0 && before(h, &x, &h->b[(i - 1) / 2]);
	     i = (i - 1) / 2)
		h->b[i] = h->b[(i - 1) / 2];
	h->b[i] = x;
}

static struct bigram heap_pop(struct heap *h)
{
	struct bigram top = h->b[0], x = h->b[--h->n];
	int i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && before(h, &h->b[c + 1], &h->b[c]))
			c++;
		if (!before(h, &h->b[c], &x))
			break;
		h->b[i] = h->b[c];
		i = c;
	}
	if (h->n)
		h->b[i] = x;
	return top;
}

/* llama.cpp's unicode_len_utf8: by the high nibble of the first byte. */
static int lead_len(unsigned char c)
{
	static const int tab[16] = { 1, 1, 1, 1, 1, 1, 1, 1,
				     1, 1, 1, 1, 2, 2, 3, 4 };
	return tab[c >> 4];
}

static int split_syms(const char *s, int len, struct sym *sy)
{
	int i = 0, n = 0, l;

	while (i < len) {
		l = lead_len((unsigned char)s[i]);
		if (l > len - i)
			l = len - i;
		sy[n] = (struct sym){ n - 1, i + l < len ? n + 1 : -1, s + i, l };
		i += l;
		n++;
	}
	return n;
}

static void add_bigram(const struct tp_tok *t, struct heap *h,
		       const struct sym *sy, int l, int r)
{
	struct bigram b = { l, r, 0, 0 };
	char key[2 * 4096 + 2];
	int id, n;

	if (l < 0 || r < 0)
		return;
	b.size = sy[l].n + sy[r].n;
	if (h->spm) {
		id = tp_map_get(t->ids, sy[l].text, (size_t)b.size);
		if (id < 0)
			return;
		b.score = t->score[id];
	} else {
		if (b.size + 1 > (int)sizeof(key))
			return;
		memcpy(key, sy[l].text, (size_t)sy[l].n);
		key[sy[l].n] = ' ';
		memcpy(key + sy[l].n + 1, sy[r].text, (size_t)sy[r].n);
		n = tp_map_get(t->merges, key, (size_t)b.size + 1);
		if (n < 0)
			return;
		b.score = (float)n;
	}
	heap_push(h, b);
}

/* Merge S (LEN bytes) as SPM or BPE, and append its tokens. */
static void merge(const struct tp_tok *t, const char *s, int len,
		  struct ids *out)
{
	struct sym *sy = tp_calloc((size_t)len + 1, sizeof(*sy));
	struct heap h = { .spm = t->kind == TP_TOK_SPM };
	int n = split_syms(s, len, sy), i, j, id;

	for (i = 1; i < n; i++)
		add_bigram(t, &h, sy, i - 1, i);
	while (h.n) {
		struct bigram b = heap_pop(&h);
		struct sym *l = &sy[b.left], *r = &sy[b.right];

		if (!l->n || !r->n || l->n + r->n != b.size ||
		    l->next != b.right)
			continue;
		l->n += r->n;
		r->n = 0;
		l->next = r->next;
		if (r->next >= 0)
			sy[r->next].prev = b.left;
		add_bigram(t, &h, sy, l->prev, b.left);
		add_bigram(t, &h, sy, b.left, l->next);
	}
	for (i = n ? 0 : -1; i >= 0; i = sy[i].next) {
		id = tp_map_get(t->ids, sy[i].text, (size_t)sy[i].n);
		if (id >= 0) {
			push(out, id);
			continue;
		}
		for (j = 0; j < sy[i].n; j++) {
			unsigned char c = (unsigned char)sy[i].text[j];

			if (t->kind == TP_TOK_SPM)
				push(out, t->byte_tok[c] >= 0 ? t->byte_tok[c] :
				     t->unk >= 0 ? t->unk : 0);
			else if (t->byte_tok[c] >= 0)
				push(out, t->byte_tok[c]);
		}
	}
	free(h.b);
	free(sy);
}

static void spm_text(const struct tp_tok *t, const char *s, size_t len,
		     int space, struct ids *out)
{
	char *e = tp_calloc(3 * len + 4, 1);
	size_t i, n = 0;

	if (space) {
		memcpy(e, "\xe2\x96\x81", 3);
		n = 3;
	}
	for (i = 0; i < len; i++) {
		if (s[i] == ' ') {
			memcpy(e + n, "\xe2\x96\x81", 3);
			n += 3;
		} else {
			e[n++] = s[i];
		}
	}
	merge(t, e, (int)n, out);
	free(e);
}

static void bpe_text(const struct tp_tok *t, const char *s, size_t len,
		     struct ids *out)
{
	uint32_t *cp = tp_calloc(len + 1, sizeof(uint32_t));
	int *coff = tp_calloc(len + 2, sizeof(int)), *end;
	char *w = tp_calloc(2 * len + 8, 1);
	int ncp = 0, l, nw, k, a, i, wn, id;
	size_t off = 0;

	while (off < len) {
		coff[ncp] = (int)off;
		cp[ncp++] = tp_utf8_get(s + off, len - off, &l);
		off += (size_t)l;
	}
	coff[ncp] = (int)len;
	end = tp_calloc((size_t)ncp + 1, sizeof(int));
	nw = tp_pretok(t->pre, cp, ncp, end);
	for (k = 0, a = 0; k < nw; a = end[k++]) {
		for (i = coff[a], wn = 0; i < coff[end[k]]; i++)
			wn += (int)tp_utf8_put(w + wn,
					       tp_gpt2_byte_cp((unsigned char)s[i]));
		id = t->ignore_merges ? tp_map_get(t->ids, w, (size_t)wn) : -1;
		if (id >= 0)
			push(out, id);
		else
			merge(t, w, wn, out);
	}
	free(end);
	free(w);
	free(coff);
	free(cp);
}

struct enc {
	const struct tp_tok *t;
	struct ids *out;
	int prev_special;
	const int *list;	/* the tokens taken from the text as they are */
	int nlist;
};

static void raw(struct enc *e, const char *s, size_t len)
{
	if (!len)
		return;
	if (e->t->kind == TP_TOK_SPM)
		spm_text(e->t, s, len, e->t->add_space_prefix && e->prev_special,
			 e->out);
	else
		bpe_text(e->t, s, len, e->out);
	e->prev_special = 0;
}

/* User-defined tokens (and control tokens with TP_ENC_CTL), longest
 * first, split the text (llama.cpp's tokenizer_st_partition); the rest
 * is raw text. */
static void part(struct enc *e, const char *s, size_t len, int k)
{
	const struct tp_tok *t = e->t;
	const char *p;
	int u;

	for (; k < e->nlist; k++) {
		u = e->list[k];
		if (memmem(s, len, t->piece[u], (size_t)t->len[u]))
			break;
	}
	if (k == e->nlist) {
		raw(e, s, len);
		return;
	}
	u = e->list[k];
	while ((p = memmem(s, len, t->piece[u], (size_t)t->len[u]))) {
		part(e, s, (size_t)(p - s), k + 1);
		push(e->out, u);
		e->prev_special = 1;
		len -= (size_t)(p - s) + (size_t)t->len[u];
		s = p + t->len[u];
	}
	part(e, s, len, k + 1);
}

int tp_tok_encode(const struct tp_tok *t, const char *text, size_t len,
		  int flags, int **ids)
{
	struct ids out = { 0 };
	struct enc e = { t, &out, 1, t->user, t->nuser };

	if (flags & TP_ENC_CTL) {
		e.list = t->spec;
		e.nlist = t->nspec;
	}
	if ((flags & TP_ENC_BOS) && t->add_bos && t->bos >= 0)
		push(&out, t->bos);
	part(&e, text, len, 0);
	if ((flags & TP_ENC_BOS) && t->add_eos && t->eos >= 0)
		push(&out, t->eos);
	*ids = out.v ? out.v : tp_calloc(1, sizeof(int));
	return out.n;
}

int tp_tok_is_eog(const struct tp_tok *t, int id)
{
	return id >= 0 && id < t->n && t->eog[id];
}

static size_t put(char *out, size_t cap, size_t n, const char *s, size_t l)
{
	if (n < cap)
		memcpy(out + n, s, l < cap - n ? l : cap - n);
	return n + l;
}

size_t tp_tok_piece(const struct tp_tok *t, int id, char *out, size_t cap)
{
	const char *s;
	size_t n = 0;
	int i, l, ty;
	uint32_t c;

	if (id < 0 || id >= t->n)
		return 0;
	s = t->piece[id];
	ty = t->type[id];
	/* as llama.cpp's token_to_piece without special: nothing */
	if (ty == TP_TT_CONTROL || ty == TP_TT_UNUSED || ty == TP_TT_UNKNOWN)
		return 0;
	if (ty == TP_TT_BYTE) {
		for (i = 0; i < 256 && t->byte_tok[i] != id; i++)
			;
		if (i < 256) {
			char b = (char)i;

			return put(out, cap, 0, &b, 1);
		}
		return 0;
	}
	if (t->kind == TP_TOK_SPM) {
		for (i = 0; i < t->len[id]; i++) {
			if (ty == TP_TT_NORMAL && i + 3 <= t->len[id] &&
			    !memcmp(s + i, "\xe2\x96\x81", 3)) {
				n = put(out, cap, n, " ", 1);
				i += 2;
			} else {
				n = put(out, cap, n, s + i, 1);
			}
		}
		return n;
	}
	for (i = 0; i < t->len[id]; i += l) {
		int b;

		c = tp_utf8_get(s + i, (size_t)(t->len[id] - i), &l);
		b = tp_gpt2_cp_byte(c);
		if (b >= 0) {
			char ch = (char)b;

			n = put(out, cap, n, &ch, 1);
		} else {
			n = put(out, cap, n, s + i, (size_t)l);
		}
	}
	return n;
}

size_t tp_detok_push(struct tp_detok *d, const struct tp_tok *t, int id,
		     char *out, size_t cap)
{
	size_t n, i = 0, k;
	int l;

	memcpy(out, d->pend, (size_t)d->npend);
	n = (size_t)d->npend + tp_tok_piece(t, id, out + d->npend,
					    cap - (size_t)d->npend);
	if (n > cap)
		n = cap;
	d->npend = 0;
	while (i < n) {
		unsigned char c = (unsigned char)out[i];

		l = tp_utf8_seq_len(c);
		if (l > 1 && i + (size_t)l > n) {
			for (k = i + 1; k < n; k++)
				if (((unsigned char)out[k] & 0xc0) != 0x80)
					break;
			if (k == n) {	/* a sequence still coming */
				d->npend = (int)(n - i);
				memcpy(d->pend, out + i, n - i);
				return i;
			}
			l = 1;
		}
		i += (size_t)l;
	}
	return n;
}

size_t tp_detok_flush(struct tp_detok *d, char *out)
{
	size_t n = (size_t)d->npend;

	memcpy(out, d->pend, n);
	d->npend = 0;
	return n;
}
