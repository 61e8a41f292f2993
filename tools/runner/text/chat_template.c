// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Chat templates by family; see chat_template.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "text/chat_template.h"
#include "text/reasoning.h"
#include "text/tokenizer.h"

static const char *const names[] = {
	[TP_CHAT_LLAMA2] = "llama2", [TP_CHAT_LLAMA3] = "llama3",
	[TP_CHAT_CHATML] = "chatml", [TP_CHAT_ZEPHYR] = "zephyr",
	[TP_CHAT_QWEN3] = "qwen3", [TP_CHAT_GLM45] = "glm4.5",
	[TP_CHAT_HARMONY] = "harmony", [TP_CHAT_DEEPSEEK3] = "deepseek3",
	[TP_CHAT_DEEPSEEK_R1] = "deepseek-r1",
	[TP_CHAT_DEEPSEEK31] = "deepseek3.1", [TP_CHAT_KIMI_K2] = "kimi-k2",
};

const char *tp_chat_name(int style)
{
	if (style < TP_CHAT_LLAMA2 || style > TP_CHAT_KIMI_K2)
		return NULL;
	return names[style];
}

int tp_chat_by_name(const char *name)
{
	int i;

	for (i = TP_CHAT_LLAMA2; i <= TP_CHAT_KIMI_K2; i++)
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
	/* the order matters: ChatML templates may mention [INST] too, and
	 * Qwen3's is ChatML that thinks; gpt-oss's names <|start|> and
	 * <|end|> as zephyr's might */
	if (strstr(tmpl, "<|channel|>"))
		return TP_CHAT_HARMONY;
	/* llama.cpp's tests for DeepSeek V3 and Kimi K2; then R1 thinks
	 * first, V3.1 answers after an empty think block */
	if (strstr(tmpl, "<｜Assistant｜>") && strstr(tmpl, "<｜User｜>") &&
	    strstr(tmpl, "<｜end▁of▁sentence｜>"))
		return strstr(tmpl, "<think></think>") ? TP_CHAT_DEEPSEEK31 :
		       strstr(tmpl, "<think>") ? TP_CHAT_DEEPSEEK_R1 :
		       TP_CHAT_DEEPSEEK3;
	if (strstr(tmpl, "<|im_assistant|>assistant<|im_middle|>"))
		return TP_CHAT_KIMI_K2;
	if (strstr(tmpl, "<|im_start|>") && strstr(tmpl, "<think>"))
		return TP_CHAT_QWEN3;
	if (strstr(tmpl, "<|im_start|>"))
		return TP_CHAT_CHATML;
	if (strstr(tmpl, "[gMASK]<sop>") && strstr(tmpl, "<|assistant|>") &&
	    strstr(tmpl, "<think>"))
		return TP_CHAT_GLM45;
	if (strstr(tmpl, "<|start_header_id|>"))
		return TP_CHAT_LLAMA3;
	if (strstr(tmpl, "[INST]"))
		return TP_CHAT_LLAMA2;
	if (strstr(tmpl, "<|user|>") && strstr(tmpl, "<|assistant|>") &&
	    !strstr(tmpl, "<|end|>"))
		return TP_CHAT_ZEPHYR;
	snprintf(err, errlen,
		 "the model's chat template is not one tprun knows (llama2 [INST], llama3 <|start_header_id|>, chatml <|im_start|>, zephyr <|user|>, qwen3, glm4.5 [gMASK]<sop>, harmony <|channel|>, deepseek3 <｜User｜>, kimi-k2 <|im_middle|>); it starts: %.60s",
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

/* [S, E) without the characters in SET at the start (L) and end (R). */
static void strip(const char **s, const char **e, const char *set, int l,
		  int r)
{
	while (l && *s < *e && strchr(set, **s))
		(*s)++;
	while (r && *e > *s && strchr(set, (*e)[-1]))
		(*e)--;
}

static void put_n(struct sb *b, const char *s, const char *e)
{
	char *c = strndup(s, (size_t)(e - s));

	if (!c)
		tp_die("out of memory");
	put(b, c);
	free(c);
}

/*
 * An answer's text split as Qwen3's and GLM-4.5's templates split it:
 * with a "</think>", the reasoning is what comes before the first one
 * (after the last "<think>" in it, newlines off its ends) and the content
 * what follows the last one (newlines off its start); else all content.
 */
struct parts {
	const char *r0, *r1, *c0, *c1;
};

static struct parts split_think(const char *text)
{
	const char *close = strstr(text, "</think>"), *p, *last;
	struct parts x = { text, text, text, text + strlen(text) };

	if (!close)
		return x;
	x.r0 = text;
	x.r1 = close;
	strip(&x.r0, &x.r1, "\n", 0, 1);
	for (p = x.r0; (p = strstr(p, "<think>")) && p < x.r1; p++)
		x.r0 = p + 7;
	strip(&x.r0, &x.r1, "\n", 1, 0);
	for (last = close; (p = strstr(last + 8, "</think>")); last = p)
		;
	x.c0 = last + 8;
	strip(&x.c0, &x.c1, "\n", 1, 0);
	return x;
}

/* The index of the last user message (Qwen3: not a tool's response), or
 * -1 (GLM) or N - 1 (Qwen3) when there is none. */
static int last_user(const struct tp_chat_msg *m, int n, int none)
{
	int i;

	for (i = n - 1; i >= 0; i--)
		if (!strcmp(m[i].role, "user"))
			return i;
	return none;
}

/* Qwen3's template (its rendering without tools). */
static void qwen3(struct sb *b, const struct tp_chat_msg *m, int n,
		  int flags)
{
	int q = last_user(m, n, n - 1), i;

	for (i = 0; i < n; i++) {
		struct parts x;

		put(b, "<|im_start|>");
		put(b, m[i].role);
		put(b, "\n");
		if (strcmp(m[i].role, "assistant")) {
			put(b, m[i].content);
			put(b, "<|im_end|>\n");
			continue;
		}
		x = split_think(m[i].content);
		if (i > q && (i == n - 1 || x.r1 > x.r0)) {
			strip(&x.r0, &x.r1, "\n", 1, 1);
			put(b, "<think>\n");
			put_n(b, x.r0, x.r1);
			put(b, "\n</think>\n\n");
			strip(&x.c0, &x.c1, "\n", 1, 0);
		}
		put_n(b, x.c0, x.c1);
		put(b, "<|im_end|>\n");
	}
	put(b, "<|im_start|>assistant\n");
	if (flags & TP_CHAT_NO_THINK)
		put(b, "<think>\n\n</think>\n\n");
}

/* GLM-4.5's template (its rendering without tools). */
static void glm45(struct sb *b, const struct tp_chat_msg *m, int n,
		  int flags)
{
	static const char ws[] = " \t\n\r\v\f";
	int q = last_user(m, n, -1), i;
	size_t len;

	put(b, "[gMASK]<sop>");
	for (i = 0; i < n; i++) {
		struct parts x;

		if (!strcmp(m[i].role, "user")) {
			put(b, "<|user|>\n");
			put(b, m[i].content);
			len = strlen(m[i].content);
			if ((flags & TP_CHAT_NO_THINK) &&
			    (len < 8 || strcmp(m[i].content + len - 8,
					      "/nothink")))
				put(b, "/nothink");
		} else if (!strcmp(m[i].role, "system")) {
			put(b, "<|system|>\n");
			put(b, m[i].content);
		} else {
			put(b, "<|assistant|>");
			x = split_think(m[i].content);
			strip(&x.r0, &x.r1, ws, 1, 1);
			put(b, "\n<think>");
			if (i > q && x.r1 > x.r0)
				put_n(b, x.r0, x.r1);
			put(b, "</think>");
			strip(&x.c0, &x.c1, ws, 1, 1);
			if (x.c1 > x.c0) {
				put(b, "\n");
				put_n(b, x.c0, x.c1);
			}
		}
	}
	put(b, "<|assistant|>");
	if (flags & TP_CHAT_NO_THINK)
		put(b, "\n<think></think>");
}

int tp_chat_thinks(int style)
{
	return style == TP_CHAT_QWEN3 || style == TP_CHAT_GLM45;
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
	return tp_chat_render_flags(style, m, n, eos, 0, err, errlen);
}

/*
 * gpt-oss's harmony format, as its template renders a conversation
 * without tools at its default reasoning effort: the system header with
 * today's date (UTC, the template's strftime_now), a system message as
 * the developer's instructions, earlier answers in the final channel.
 */
static void harmony(struct sb *b, const struct tp_chat_msg *m, int n)
{
	char date[16] = "1970-01-01";
	time_t now = time(NULL);
	struct tm tm;
	int i;

	if (gmtime_r(&now, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	put(b, "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: ");
	put(b, date);
	put(b, "\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>");
	if (!strcmp(m[0].role, "system")) {
		put(b, "<|start|>developer<|message|># Instructions\n\n");
		put(b, m[0].content);
		put(b, "\n\n<|end|>");
	}
	for (i = 0; i < n; i++) {
		if (!strcmp(m[i].role, "system"))
			continue;
		put(b, "<|start|>");
		put(b, m[i].role);
		put(b, strcmp(m[i].role, "assistant") ? "<|message|>" :
			"<|channel|>final<|message|>");
		put(b, m[i].content);
		put(b, "<|end|>");
	}
	put(b, "<|start|>assistant");
}

/*
 * DeepSeek V3's, R1's and V3.1's templates (without tools): the system
 * messages first (BOS before them is the tokenizer's), then the turns;
 * R1 keeps of an earlier answer what follows its last "</think>", V3.1
 * what follows the first, after an empty think block.
 */
static void deepseek(struct sb *b, const struct tp_chat_msg *m, int n,
		     int style)
{
	const char *c, *p;
	int i, sys = 0, after_user = 0;

	for (i = 0; i < n; i++)
		if (!strcmp(m[i].role, "system")) {
			if (sys++)
				put(b, "\n\n");
			put(b, m[i].content);
		}
	for (i = 0; i < n; i++) {
		if (!strcmp(m[i].role, "user")) {
			put(b, "<｜User｜>");
			put(b, m[i].content);
			after_user = 1;
			continue;
		}
		if (strcmp(m[i].role, "assistant"))
			continue;
		c = m[i].content;
		if (style == TP_CHAT_DEEPSEEK31) {
			if (after_user)
				put(b, "<｜Assistant｜><think></think>");
			if ((p = strstr(c, "</think>")))
				c = p + 8;
		} else {
			put(b, "<｜Assistant｜>");
			while (style == TP_CHAT_DEEPSEEK_R1 &&
			       (p = strstr(c, "</think>")))
				c = p + 8;
		}
		put(b, c);
		put(b, "<｜end▁of▁sentence｜>");
		after_user = 0;
	}
	put(b, "<｜Assistant｜>");
	if (style == TP_CHAT_DEEPSEEK_R1)
		put(b, "<think>\n");
	else if (style == TP_CHAT_DEEPSEEK31)
		put(b, "<think></think>");
}

/* Kimi K2's template (without tools), with its default system message. */
static void kimi_k2(struct sb *b, const struct tp_chat_msg *m, int n)
{
	int i;

	if (strcmp(m[0].role, "system"))
		put(b, "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>\n");
	for (i = 0; i < n; i++) {
		put(b, !strcmp(m[i].role, "user") ? "<|im_user|>user" :
		       !strcmp(m[i].role, "assistant") ?
		       "<|im_assistant|>assistant" : "<|im_system|>system");
		put(b, "<|im_middle|>");
		put(b, m[i].content);
		put(b, "<|im_end|>");
	}
	put(b, "<|im_assistant|>assistant<|im_middle|>");
}

char *tp_chat_render_flags(int style, const struct tp_chat_msg *m, int n,
			   const char *eos, int flags, char *err,
			   size_t errlen)
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
	case TP_CHAT_QWEN3:
		qwen3(&b, m, n, flags);
		break;
	case TP_CHAT_GLM45:
		glm45(&b, m, n, flags);
		break;
	case TP_CHAT_HARMONY:
		harmony(&b, m, n);
		break;
	case TP_CHAT_DEEPSEEK3:
	case TP_CHAT_DEEPSEEK_R1:
	case TP_CHAT_DEEPSEEK31:
		deepseek(&b, m, n, style);
		break;
	case TP_CHAT_KIMI_K2:
		kimi_k2(&b, m, n);
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
	return tp_chat_encode_flags(t, m, n, 0, NULL, ids, err, errlen);
}

int tp_chat_encode_flags(const struct tp_tok *t, const struct tp_chat_msg *m,
			 int n, int flags, int *think, int **ids, char *err,
			 size_t errlen)
{
	int style = tp_chat_detect(t->chat_template, err, errlen), r;
	const char *eos = t->eos >= 0 ? t->piece[t->eos] : "";
	size_t len;
	char *text;

	if (style < 0)
		return -1;
	text = tp_chat_render_flags(style, m, n, eos, flags, err, errlen);
	if (!text)
		return -1;
	len = strlen(text);
	if (think && style == TP_CHAT_HARMONY)
		*think = TP_THINK_HARMONY;	/* it always reasons first */
	else if (think)
		*think = (len >= 7 && !strcmp(text + len - 7, "<think>")) ||
			 (len >= 8 && !strcmp(text + len - 8, "<think>\n")) ?
			 TP_THINK_OPEN : tp_chat_thinks(style) &&
			 !(flags & TP_CHAT_NO_THINK);
	r = tp_tok_encode(t, text, strlen(text), TP_ENC_BOS | TP_ENC_CTL, ids);
	free(text);
	return r;
}
