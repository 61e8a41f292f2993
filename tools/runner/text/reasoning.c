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
	for (;;) {
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
