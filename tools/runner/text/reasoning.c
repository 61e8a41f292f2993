// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An answer's reasoning and content, as a stream; see reasoning.h. */
#include <stdlib.h>
#include <string.h>

#include "text/reasoning.h"

enum {
	AT_START,	/* nothing decided: a "<think>" may come */
	THINKING,	/* in the reasoning, none of it out yet */
	REASONING,	/* in the reasoning, some out (white space held) */
	AFTER,		/* after "</think>": white space dropped */
	CONTENT,	/* everything is content */
	HEADER,		/* harmony: before a message's <|message|> */
	ANALYSIS,	/* harmony: in the analysis channel's text */
	FINAL,		/* harmony: in another channel's text */
};

static const char open_tag[] = "<think>", close_tag[] = "</think>";

static int ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

void tp_reasoning_init(struct tp_reasoning *r, int open)
{
	memset(r, 0, sizeof(*r));
	r->state = open ? THINKING : AT_START;
}

void tp_reasoning_start(struct tp_reasoning *r, int how)
{
	tp_reasoning_init(r, how == TP_THINK_OPEN);
	if (how == TP_THINK_HARMONY) {
		r->harmony = 1;
		r->state = HEADER;
	}
}

/* The length of the longest end of S[0..N) that starts TAG (not all of
 * it): what must wait for the next piece. */
static size_t tag_start(const char *s, size_t n, const char *tag)
{
	size_t k = strlen(tag) - 1;

	for (k = k < n ? k : n; k > 0; k--)
		if (!memcmp(s + n - k, tag, k))
			return k;
	return 0;
}

static void out(char *dst, size_t *n, const char *s, size_t len)
{
	memcpy(dst + *n, s, len);
	*n += len;
}

/* Reasoning S[0..LEN), its end already without white space: without
 * white space at the start of the reasoning. */
static void reasoning(struct tp_reasoning *r, const char *s, size_t len,
		      char *think, size_t *nthink)
{
	if (r->state == THINKING) {
		while (len && ws(*s)) {
			s++;
			len--;
		}
		if (!len)
			return;
		r->state = REASONING;
	}
	out(think, nthink, s, len);
}

static const char msg_tag[] = "<|message|>", analysis[] = "<|channel|>analysis";
static const char *const end_tags[] = { "<|end|>", "<|return|>", "<|call|>" };

/* The first end tag of a harmony message in P[0..N): where (NULL: none)
 * and its length in *TLEN; else in *HELD how many bytes at the end may
 * start one. */
static const char *message_end(const char *p, size_t n, size_t *tlen,
			       size_t *held)
{
	const char *first = NULL, *c;
	size_t i, k;

	*held = 0;
	for (i = 0; i < sizeof(end_tags) / sizeof(end_tags[0]); i++) {
		c = memmem(p, n, end_tags[i], strlen(end_tags[i]));
		if (c && (!first || c < first)) {
			first = c;
			*tlen = strlen(end_tags[i]);
		}
		k = tag_start(p, n, end_tags[i]);
		if (k > *held)
			*held = k;
	}
	return first;
}

/* One harmony step on P[0..*N): 1 to go on, 0 when the rest is held. */
static int harmony_step(struct tp_reasoning *r, const char **pp, size_t *np,
			int last, char *think, size_t *nthink, char *text,
			size_t *ntext)
{
	const char *p = *pp, *c;
	size_t n = *np, e, k, tlen = 0;

	switch (r->state) {
	case HEADER:
		if (n && (p[0] != '<' || (n > 1 && p[1] != '|'))) {
			r->state = CONTENT;	/* not a harmony header */
			return 1;
		}
		c = memmem(p, n, msg_tag, sizeof(msg_tag) - 1);
		if (c && (size_t)(c - p) > sizeof(r->hold) - sizeof(msg_tag)) {
			r->state = CONTENT;	/* too long for a header */
			return 1;
		}
		if (c) {
			r->state = memmem(p, (size_t)(c - p), analysis,
					  sizeof(analysis) - 1) ?
				   ANALYSIS : FINAL;
			*np = n - (size_t)(c - p) - (sizeof(msg_tag) - 1);
			*pp = c + sizeof(msg_tag) - 1;
			return 1;
		}
		if (last) {		/* a header and no message: dropped */
			*np = 0;
			return 0;
		}
		if (n > sizeof(r->hold)) {
			r->state = CONTENT;	/* too long for a header */
			return 1;
		}
		return 0;
	case ANALYSIS:
	case FINAL:
		c = message_end(p, n, &tlen, &k);
		e = c ? (size_t)(c - p) : last ? n : n - k;
		if (r->state == ANALYSIS)
			out(think, nthink, p, e);
		else
			out(text, ntext, p, e);
		if (c) {
			r->state = HEADER;
			*np = n - e - tlen;
			*pp = c + tlen;
			return 1;
		}
		*np = n - e;
		*pp = p + e;
		return 0;
	default:	/* CONTENT */
		out(text, ntext, p, n);
		*np = 0;
		return 0;
	}
}

void tp_reasoning_push(struct tp_reasoning *r, const char *s, size_t len,
		       int last, char *think, size_t *nthink, char *text,
		       size_t *ntext)
{
	char *t = malloc(r->nhold + len + 1);
	const char *p = t, *c;
	size_t n = r->nhold + len, k, e;

	if (!t)
		abort();
	memcpy(t, r->hold, r->nhold);
	memcpy(t + r->nhold, s, len);
	r->nhold = 0;
	*nthink = *ntext = 0;
	while (r->harmony &&
	       harmony_step(r, &p, &n, last, think, nthink, text, ntext))
		;
	for (; !r->harmony;) {
		switch (r->state) {
		case AT_START:
			if (n >= sizeof(open_tag) - 1 &&
			    !memcmp(p, open_tag, sizeof(open_tag) - 1)) {
				p += sizeof(open_tag) - 1;
				n -= sizeof(open_tag) - 1;
				r->state = THINKING;
				continue;
			}
			if (!last && n < sizeof(open_tag) - 1 &&
			    !memcmp(p, open_tag, n))
				break;	/* held: "<think>" may still come */
			r->state = CONTENT;
			continue;
		case THINKING:
		case REASONING:
			c = memmem(p, n, close_tag, sizeof(close_tag) - 1);
			e = c ? (size_t)(c - p) : n;
			/* unclosed: hold what may start the tag, and the
			 * white space that may end the reasoning */
			k = c || last ? 0 : tag_start(p, n, close_tag);
			e -= k;
			while (e && ws(p[e - 1]))
				e--;
			reasoning(r, p, e, think, nthink);
			if (c) {
				n -= (size_t)(c - p) + sizeof(close_tag) - 1;
				p = c + sizeof(close_tag) - 1;
				r->state = AFTER;
				continue;
			}
			if (last) {
				n = 0;
				break;
			}
			/* more held than fits: the start of it goes out */
			while (n - e > sizeof(r->hold)) {
				reasoning(r, p + e, 1, think, nthink);
				e++;
			}
			p += e;
			n -= e;
			break;
		case AFTER:
			while (n && ws(*p)) {
				p++;
				n--;
			}
			if (!n)
				break;
			r->state = CONTENT;
			continue;
		case CONTENT:
			out(text, ntext, p, n);
			n = 0;
			break;
		}
		break;
	}
	memcpy(r->hold, p, n);
	r->nhold = n;
	free(t);
}
