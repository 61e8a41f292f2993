/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The answer of a model that thinks first (Qwen3, GLM-4.5: "<think>
 * ... </think>" and then the answer) split into its reasoning and its
 * content as llama.cpp's server splits it (reasoning_format "auto"):
 * a "<think>" at the very start opens the reasoning (or the prompt ended
 * inside one), "</think>" closes it; the reasoning without white space
 * at its ends, the content without the white space after "</think>".
 * An answer that does not start with "<think>" is all content.
 *
 * gpt-oss's harmony answers come in channels instead, each message
 * "<|channel|>NAME<|message|>TEXT" closed by <|end|> (the next one
 * after "<|start|>assistant"), <|return|> or <|call|>: the "analysis"
 * channel is the reasoning, "final" (and "commentary") the content, the
 * headers and markers neither, as llama.cpp's server splits them. An
 * answer that does not start with a marker is all content.
 *
 * The text may come in pieces (a stream): what could still turn into a
 * tag, or white space that may end the reasoning, is held back until
 * the next piece says, so the pieces of each part add up to what the
 * whole text gives.
 */
#ifndef TPRUN_TEXT_REASONING_H
#define TPRUN_TEXT_REASONING_H

#include <stddef.h>

/* The most bytes held back between pieces. */
#define TP_REASONING_HOLD 128

struct tp_reasoning {
	int state;		/* enum in reasoning.c */
	int harmony;		/* channels, not <think> */
	char hold[TP_REASONING_HOLD];	/* held back (a harmony header) */
	size_t nhold;
};

/* How a chat answer starts (tp_chat_encode_flags' *think). */
enum {
	TP_THINK_NONE,		/* all content */
	TP_THINK_MAYBE,		/* perhaps with a <think> block */
	TP_THINK_OPEN,		/* inside one (the prompt ended with <think>) */
	TP_THINK_HARMONY,	/* in harmony channels (gpt-oss) */
};

/* OPEN: the prompt ended inside a <think> block. */
void tp_reasoning_init(struct tp_reasoning *r, int open);
/* For an answer that starts as HOW says (TP_THINK_*, not NONE). */
void tp_reasoning_start(struct tp_reasoning *r, int how);
/*
 * The next LEN bytes of the answer: the reasoning's part of them to
 * THINK, the content's to TEXT (each at most LEN + TP_REASONING_HOLD
 * bytes long, not NUL-terminated), their lengths in *NTHINK and *NTEXT. LAST: the answer
 * ends here (nothing is held back).
 */
void tp_reasoning_push(struct tp_reasoning *r, const char *s, size_t len,
		       int last, char *think, size_t *nthink, char *text,
		       size_t *ntext);

#endif /* TPRUN_TEXT_REASONING_H */
