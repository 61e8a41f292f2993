// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Chat templates by family; see chat_template.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

static const char *const names[] = {
	[TP_CHAT_LLAMA2] = "llama2", [TP_CHAT_LLAMA3] = "llama3",
	[TP_CHAT_CHATML] = "chatml", [TP_CHAT_ZEPHYR] = "zephyr",
};

const char *tp_chat_name(int style)
{
	if (style < TP_CHAT_LLAMA2 || style > TP_CHAT_ZEPHYR)
		return NULL;
	return names[style];
}

int tp_chat_by_name(const char *name)
{
	int i;

	for (i = TP_CHAT_LLAMA2; i <= TP_CHAT_ZEPHYR; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int tp_chat_detect(const char *tmpl, char *err, size_t errlen)
{
	if (!tmpl) {
		snprintf(err, errlen, "the model has no chat template (tokenizer.chat_template)");
		return -1;
	}
	/* the order matters: ChatML templates may mention [INST] too */
	if (strstr(tmpl, "<|im_start|>"))
		return TP_CHAT_CHATML;
	if (strstr(tmpl, "<|start_header_id|>"))
		return TP_CHAT_LLAMA3;
	if (strstr(tmpl, "[INST]"))
		return TP_CHAT_LLAMA2;
	if (strstr(tmpl, "<|user|>") && strstr(tmpl, "<|assistant|>") &&
	    !strstr(tmpl, "<|end|>"))
		return TP_CHAT_ZEPHYR;
	snprintf(err, errlen,
		 "the model's chat template is not one tprun knows (llama2 [INST], llama3 <|start_header_id|>, chatml <|im_start|>, zephyr <|user|>); it starts: %.60s",
		 tmpl);
	return -1;
}

struct sb {
	char *s;
	size_t len, cap;
};

static void put(struct sb *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 1 > b->cap) {
		b->cap = 2 * (b->len + n + 1);
		b->s = realloc(b->s, b->cap);
		if (!b->s)
			tp_die("out of memory");
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

/* S without leading and trailing white space (llama2/3 templates strip). */
static void put_trim(struct sb *b, const char *s)
{
	const char *e;
	char *c;

	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t' ||
			 e[-1] == '\r'))
		e--;
	c = strndup(s, (size_t)(e - s));
	if (!c)
		tp_die("out of memory");
	put(b, c);
	free(c);
}

/* [INST] turns; the system text goes into the first one, in <<SYS>>. */
static void llama2(struct sb *b, const struct tp_chat_msg *m, int n,
		   const char *eos)
{
	const char *sys = NULL;
	int i, first = 1;

	for (i = 0; i < n; i++) {
		if (!strcmp(m[i].role, "system")) {
			sys = m[i].content;
		} else if (!strcmp(m[i].role, "user")) {
			if (!first)
				put(b, "<s>");
			put(b, "[INST] ");
			if (sys) {
				put(b, "<<SYS>>\n");
				put_trim(b, sys);
				put(b, "\n<</SYS>>\n\n");
				sys = NULL;
			}
			put_trim(b, m[i].content);
			put(b, " [/INST]");
			first = 0;
		} else {
			put(b, " ");
			put_trim(b, m[i].content);
			put(b, " ");
			put(b, eos);
			first = 0;
		}
	}
}

char *tp_chat_render(int style, const struct tp_chat_msg *m, int n,
		     const char *eos, char *err, size_t errlen)
{
	struct sb b = { 0 };
	int i;

	if (n < 1) {
		snprintf(err, errlen, "no messages");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (strcmp(m[i].role, "system") && strcmp(m[i].role, "user") &&
		    strcmp(m[i].role, "assistant")) {
			snprintf(err, errlen,
				 "message %d: role '%.40s' is none of system, user, assistant",
				 i, m[i].role);
			return NULL;
		}
	put(&b, "");
	switch (style) {
	case TP_CHAT_LLAMA2:
		llama2(&b, m, n, eos);
		break;
	case TP_CHAT_LLAMA3:
		for (i = 0; i < n; i++) {
			put(&b, "<|start_header_id|>");
			put(&b, m[i].role);
			put(&b, "<|end_header_id|>\n\n");
			put_trim(&b, m[i].content);
			put(&b, "<|eot_id|>");
		}
		put(&b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
		break;
	case TP_CHAT_CHATML:
		for (i = 0; i < n; i++) {
			put(&b, "<|im_start|>");
			put(&b, m[i].role);
			put(&b, "\n");
			put(&b, m[i].content);
			put(&b, "<|im_end|>\n");
		}
		put(&b, "<|im_start|>assistant\n");
		break;
	case TP_CHAT_ZEPHYR:
		for (i = 0; i < n; i++) {
			put(&b, "<|");
			put(&b, m[i].role);
			put(&b, "|>\n");
			put(&b, m[i].content);
			put(&b, eos);
			put(&b, "\n");
		}
		put(&b, "<|assistant|>\n");
		break;
	default:
		free(b.s);
		snprintf(err, errlen, "unknown chat style %d", style);
		return NULL;
	}
	return b.s;
}

int tp_chat_encode(const struct tp_tok *t, const struct tp_chat_msg *m,
		   int n, int **ids, char *err, size_t errlen)
{
	int style = tp_chat_detect(t->chat_template, err, errlen), r;
	const char *eos = t->eos >= 0 ? t->piece[t->eos] : "";
	char *text;

	if (style < 0)
		return -1;
	text = tp_chat_render(style, m, n, eos, err, errlen);
	if (!text)
		return -1;
	r = tp_tok_encode(t, text, strlen(text), TP_ENC_BOS | TP_ENC_CTL, ids);
	free(text);
	return r;
}
