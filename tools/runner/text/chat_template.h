/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Chat templates. A GGUF file carries its model's chat template as Jinja
 * source (tokenizer.chat_template); tprun has no Jinja engine, it
 * recognises the known families by their markers, as llama.cpp does
 * (llama2 "[INST]", llama3 "<|start_header_id|>", chatml "<|im_start|>",
 * zephyr "<|user|>"; Qwen3's chatml with "<think>", GLM-4.5's "[gMASK]<sop>"
 * with "<think>"; gpt-oss's harmony "<|channel|>"; DeepSeek V3's
 * "<｜User｜>", "<｜Assistant｜>" and "<｜end▁of▁sentence｜>", R1's with
 * "<think>", V3.1's with "<think></think>"; Kimi K2's
 * "<|im_assistant|>assistant<|im_middle|>") and renders a conversation in
 * that family's format, as the template's Jinja renders it (for Qwen3 and
 * GLM-4.5: the earlier answers' thinking left out, and the "no thinking"
 * variants of the templates' enable_thinking; for R1 and V3.1 the earlier
 * answers' thinking left out, R1's answer opened with "<think>\n", V3.1's
 * without thinking, its template's default).
 * Any other template is refused with a message. The rendering leaves out
 * the BOS token: the tokenizer adds it when the file asks.
 */
#ifndef TPRUN_CHAT_H
#define TPRUN_CHAT_H

#include <stddef.h>

enum tp_chat_style {
	TP_CHAT_LLAMA2 = 1, TP_CHAT_LLAMA3, TP_CHAT_CHATML, TP_CHAT_ZEPHYR,
	TP_CHAT_QWEN3, TP_CHAT_GLM45, TP_CHAT_HARMONY, TP_CHAT_DEEPSEEK3,
	TP_CHAT_DEEPSEEK_R1, TP_CHAT_DEEPSEEK31, TP_CHAT_KIMI_K2,
};

/* Rendering flags: the template's enable_thinking = false. */
#define TP_CHAT_NO_THINK 1

struct tp_chat_msg {
	const char *role;	/* "system", "user" or "assistant" */
	const char *content;
};

/* The style of template TMPL, or -1 and ERR (none, or not recognised). */
int tp_chat_detect(const char *tmpl, char *err, size_t errlen);
/* "llama2", ..., or NULL; and back (-1 when unknown). */
const char *tp_chat_name(int style);
int tp_chat_by_name(const char *name);
/*
 * The prompt for the N messages M, ending where the assistant's answer
 * starts. EOS: the text of the end-of-sequence token (llama2, zephyr
 * close turns with it). Returns a malloc'ed string, or NULL and ERR (an
 * unknown role, no message).
 */
char *tp_chat_render(int style, const struct tp_chat_msg *m, int n,
		     const char *eos, char *err, size_t errlen);
/* The same with FLAGS (TP_CHAT_NO_THINK). */
char *tp_chat_render_flags(int style, const struct tp_chat_msg *m, int n,
			   const char *eos, int flags, char *err,
			   size_t errlen);
/* 1 when STYLE's models think first, in <think>...</think>. */
int tp_chat_thinks(int style);

struct tp_tok;
/*
 * The token ids of the conversation M (N messages) in the chat format of
 * T's template: BOS as the file asks, the template's control tokens as
 * tokens. Returns the count (*IDS malloc'ed), or -1 and ERR.
 */
int tp_chat_encode(const struct tp_tok *t, const struct tp_chat_msg *m,
		   int n, int **ids, char *err, size_t errlen);
/*
 * The same with FLAGS; *THINK (when not NULL) tells how the answer
 * starts: 0 without thinking, 1 perhaps with a <think> block, 2 inside
 * one (the prompt ended with <think>: llama.cpp's "thinking forced open"),
 * 3 in harmony channels (TP_THINK_* of text/reasoning.h).
 */
int tp_chat_encode_flags(const struct tp_tok *t, const struct tp_chat_msg *m,
			 int n, int flags, int *think, int **ids, char *err,
			 size_t errlen);

#endif /* TPRUN_CHAT_H */
