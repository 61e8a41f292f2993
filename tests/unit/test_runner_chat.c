// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's chat templates (tools/runner/text/chat_template.c): which family
 * a GGUF file's tokenizer.chat_template is, what each family renders for a
 * conversation, and that the rendering's control tokens are encoded as the
 * tokens themselves (while the same text from a user is not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/gguf.h"
#include "tap.h"
#include "text/chat_template.h"
#include "text/reasoning.h"
#include "text/tokenizer.h"
#include "text/tokenizer_internal.h"

/* Shortened from the models' own templates: only the markers matter. */
static const char llama2_tmpl[] =
	"{% if messages[0]['role'] == 'system' %}{% set system_message = '<<SYS>>\\n' + messages[0]['content'] | trim + '\\n<</SYS>>\\n\\n' %}"
	"{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}";
static const char llama3_tmpl[] =
	"{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}";
static const char chatml_tmpl[] =
	"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
static const char phi3_tmpl[] =
	"{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}";
static const char gemma_tmpl[] =
	"{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}";

static const struct tp_chat_msg conv[] = {
	{ "system", "Be brief." },
	{ "user", " Hi! " },
	{ "assistant", "Hello." },
	{ "user", "2+2?" },
};

static void render(int style, const char *want, const char *name)
{
	char err[200] = "", *s;

	s = tp_chat_render(style, conv, 4, "</s>", err, sizeof(err));
	is_str(s ? s : err, want, "%s: a system message and two turns", name);
	free(s);
}

static void test_detect(void)
{
	char err[300];

	is_int(tp_chat_detect(llama2_tmpl, err, sizeof(err)), TP_CHAT_LLAMA2,
	       "Llama 2's template is llama2");
	is_int(tp_chat_detect(llama3_tmpl, err, sizeof(err)), TP_CHAT_LLAMA3,
	       "Llama 3's template is llama3");
	is_int(tp_chat_detect(chatml_tmpl, err, sizeof(err)), TP_CHAT_CHATML,
	       "ChatML (Qwen) is chatml");
	is_int(tp_chat_detect(tp_tok_synth_chat_template, err, sizeof(err)),
	       TP_CHAT_ZEPHYR, "Zephyr's (the synthetic tokenizer's) is zephyr");
	ok(tp_chat_detect(phi3_tmpl, err, sizeof(err)) == -1 &&
	   strstr(err, "not one tprun knows"),
	   "Phi-3's <|user|>...<|end|> is refused: %s", err);
	ok(tp_chat_detect(gemma_tmpl, err, sizeof(err)) == -1 &&
	   strstr(err, "<start_of_turn>"),
	   "Gemma's is refused, the message quotes it");
	ok(tp_chat_detect(NULL, err, sizeof(err)) == -1 &&
	   strstr(err, "no chat template"), "no template: %s", err);
	is_int(tp_chat_by_name("chatml"), TP_CHAT_CHATML, "names map back");
	ok(tp_chat_by_name("jinja") == -1 && !tp_chat_name(0),
	   "unknown names and styles");
}

static void test_render(void)
{
	static const struct tp_chat_msg bad[] = { { "tool", "x" } };
	char err[200] = "", *s;

	render(TP_CHAT_LLAMA2,
	       "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi! [/INST] Hello. </s>"
	       "<s>[INST] 2+2? [/INST]", "llama2");
	render(TP_CHAT_LLAMA3,
	       "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
	       "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
	       "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
	       "<|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|>"
	       "<|start_header_id|>assistant<|end_header_id|>\n\n", "llama3");
	render(TP_CHAT_CHATML,
	       "<|im_start|>system\nBe brief.<|im_end|>\n"
	       "<|im_start|>user\n Hi! <|im_end|>\n"
	       "<|im_start|>assistant\nHello.<|im_end|>\n"
	       "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n",
	       "chatml");
	render(TP_CHAT_ZEPHYR,
	       "<|system|>\nBe brief.</s>\n<|user|>\n Hi! </s>\n"
	       "<|assistant|>\nHello.</s>\n<|user|>\n2+2?</s>\n<|assistant|>\n",
	       "zephyr");
	s = tp_chat_render(TP_CHAT_LLAMA2, conv + 1, 1, "</s>", err,
			   sizeof(err));
	is_str(s, "[INST] Hi! [/INST]", "llama2: one user message, no system");
	free(s);
	s = tp_chat_render(TP_CHAT_CHATML, bad, 1, "", err, sizeof(err));
	ok(!s && strstr(err, "'tool'"), "an unknown role is refused: %s", err);
	s = tp_chat_render(TP_CHAT_CHATML, conv, 0, "", err, sizeof(err));
	ok(!s, "no messages is refused: %s", err);
}

/* A tokenizer (byte-level BPE) with ChatML's control tokens. */
static int chatml_tok(struct tp_tok *t, const char *tmpl, char *err,
		      size_t errlen)
{
	struct gguf_writer *w = gguf_writer_new(GGUF_DEFAULT_ALIGNMENT);
	const char *tok[258];
	int32_t type[258];
	char sym[256][5];
	unsigned char *b;
	struct gguf g;
	size_t len;
	int i, r;

	for (i = 0; i < 256; i++) {
		sym[i][tp_utf8_put(sym[i], tp_gpt2_byte_cp(i))] = 0;
		tok[i] = sym[i];
		type[i] = TP_TT_NORMAL;
	}
	tok[256] = "<|im_start|>";
	tok[257] = "<|im_end|>";
	type[256] = type[257] = TP_TT_CONTROL;
	gguf_writer_str(w, "tokenizer.ggml.model", "gpt2");
	gguf_writer_str(w, "tokenizer.ggml.pre", "qwen2");
	gguf_writer_str_array(w, "tokenizer.ggml.tokens", tok, 258);
	gguf_writer_i32_array(w, "tokenizer.ggml.token_type", type, 258);
	gguf_writer_str_array(w, "tokenizer.ggml.merges", NULL, 0);
	gguf_writer_u32(w, "tokenizer.ggml.eos_token_id", 257);
	gguf_writer_bool(w, "tokenizer.ggml.add_bos_token", 0);
	if (tmpl)
		gguf_writer_str(w, "tokenizer.chat_template", tmpl);
	b = gguf_writer_bytes(w, &len);
	gguf_writer_free(w);
	r = gguf_parse(&g, b, len, err, errlen);
	if (!r) {
		r = tp_tok_load(t, &g, 258, err, errlen);
		gguf_close(&g);
	}
	free(b);
	return r;
}

static void test_encode(void)
{
	static const struct tp_chat_msg hi[] = { { "user", "hi" } };
	/* <|im_start|> u s e r \n h i <|im_end|> \n <|im_start|> a ... \n */
	static const int want[] = { 256, 'u', 's', 'e', 'r', '\n', 'h', 'i',
				    257, '\n', 256, 'a', 's', 's', 'i', 's',
				    't', 'a', 'n', 't', '\n' };
	struct tp_tok t;
	char err[300] = "";
	int *ids = NULL, n;

	ok(!tp_tok_synth(&t, 400, err, sizeof(err)) &&
	   t.chat_template && strstr(t.chat_template, "<|user|>"),
	   "the synthetic tokenizer carries Zephyr's template (%s)", err);
	n = tp_chat_encode(&t, hi, 1, &ids, err, sizeof(err));
	/* BOS, then "<|user|>\nhi" ... "</s>" is token 2, not text */
	ok(n > 4 && ids[0] == 1, "zephyr: BOS first (%d ids)", n);
	{
		int i, eos = 0;

		for (i = 1; i < n; i++)
			eos += ids[i] == 2;
		is_int(eos, 1, "zephyr: the turn's </s> is the EOS token, once");
	}
	free(ids);
	tp_tok_free(&t);

	ok(!chatml_tok(&t, chatml_tmpl, err, sizeof(err)),
	   "a ChatML tokenizer loads (%s)", err);
	n = tp_chat_encode(&t, hi, 1, &ids, err, sizeof(err));
	ok(n == (int)(sizeof(want) / sizeof(want[0])) &&
	   !memcmp(ids, want, sizeof(want)),
	   "chatml: <|im_start|> and <|im_end|> are control tokens, no BOS");
	free(ids);
	n = tp_tok_encode(&t, "<|im_start|>", 12, TP_ENC_BOS, &ids);
	ok(n > 1 && ids[0] != 256,
	   "the same text as a plain prompt is not parsed (%d ids)", n);
	free(ids);
	tp_tok_free(&t);

	ok(!chatml_tok(&t, NULL, err, sizeof(err)), "without a template");
	ok(tp_chat_encode(&t, hi, 1, &ids, err, sizeof(err)) == -1 &&
	   strstr(err, "no chat template"), "chat is refused: %s", err);
	tp_tok_free(&t);
}

/*
 * Qwen3's and GLM-4.5's renderings, as the models' own Jinja templates
 * render them (the expected texts were checked with Python's jinja2 and
 * the templates of Qwen3 and GLM-4.6, trim_blocks and lstrip_blocks as
 * llama.cpp and transformers apply them): the earlier answer's thinking
 * left out, enable_thinking = false.
 */
static void test_thinking(void)
{
	static const char qwen3_tmpl[] =
		"{%- if messages[0].role == 'system' %}{{- '<|im_start|>system\\n' }}"
		"{%- set reasoning_content = message.content.split('</think>')[0] %}"
		"{{- '<|im_start|>' + message.role + '\\n<think>\\n' }}";
	static const char glm_tmpl[] =
		"[gMASK]<sop>\n{%- if m.role == 'user' -%}<|user|>\n"
		"{{ '\\n<think></think>' }}<|assistant|>";
	static const struct tp_chat_msg c[] = {
		{ "system", "S" }, { "user", "Q1" },
		{ "assistant", "<think>\nr1\n</think>\n\nA1" },
		{ "user", " Q2 " },
	};
	static const struct tp_chat_msg last[] = {
		{ "user", "Q1" },
		{ "assistant", "<think>\n\nr1 </think>\n\n ans </think>\nA2\n" },
	};
	static const struct {
		int style, flags, which;
		const char *want;
	} cases[] = {
		{ TP_CHAT_QWEN3, 0, 0, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\n Q2 <|im_end|>\n<|im_start|>assistant\n" },
		{ TP_CHAT_QWEN3, TP_CHAT_NO_THINK, 0, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n<|im_start|>user\n Q2 <|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n" },
		{ TP_CHAT_QWEN3, 0, 1, "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\n<think>\nr1 \n</think>\n\nA2\n<|im_end|>\n<|im_start|>assistant\n" },
		{ TP_CHAT_GLM45, 0, 0, "[gMASK]<sop><|system|>\nS<|user|>\nQ1<|assistant|>\n<think></think>\nA1<|user|>\n Q2 <|assistant|>" },
		{ TP_CHAT_GLM45, TP_CHAT_NO_THINK, 0, "[gMASK]<sop><|system|>\nS<|user|>\nQ1/nothink<|assistant|>\n<think></think>\nA1<|user|>\n Q2 /nothink<|assistant|>\n<think></think>" },
		{ TP_CHAT_GLM45, 0, 1, "[gMASK]<sop><|user|>\nQ1<|assistant|>\n<think>r1</think>\nA2<|assistant|>" },
	};
	char err[200] = "", *s;
	unsigned i;

	is_int(tp_chat_detect(qwen3_tmpl, err, sizeof(err)), TP_CHAT_QWEN3,
	       "Qwen3's template (ChatML with <think>) is recognised");
	is_int(tp_chat_detect(glm_tmpl, err, sizeof(err)), TP_CHAT_GLM45,
	       "GLM-4.5's template ([gMASK]<sop>, <|assistant|>, <think>) is recognised");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = tp_chat_render_flags(cases[i].style, cases[i].which ? last : c,
					 cases[i].which ? 2 : 4, "",
					 cases[i].flags, err, sizeof(err));
		ok(s && !strcmp(s, cases[i].want), "%s%s%s: as its Jinja renders it",
		   tp_chat_name(cases[i].style),
		   cases[i].flags ? ", enable_thinking false" : "",
		   cases[i].which ? ", an answer after the last question" : "");
		if (s && strcmp(s, cases[i].want))
			diag("got  %s", s);
		free(s);
	}
}

/* gpt-oss's harmony format: the system header of its template (with
 * today's date), the system message as developer instructions, earlier
 * answers in the final channel. */
static void test_harmony(void)
{
	static const char tmpl[] =
		"{{- \"<|start|>system<|message|>\" }}{{- build_system_message() }}"
		"{{- \"<|start|>assistant<|channel|>final<|message|>\" }}<|start|>user";
	static const struct tp_chat_msg c[] = {
		{ "system", "S" }, { "user", "Q1" }, { "assistant", "A1" },
		{ "user", "Q2" },
	};
	static const char head[] = "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: ";
	static const char tail[] = "\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|><|start|>developer<|message|># Instructions\n\nS\n\n<|end|><|start|>user<|message|>Q1<|end|><|start|>assistant<|channel|>final<|message|>A1<|end|><|start|>user<|message|>Q2<|end|><|start|>assistant";
	char err[200] = "", *s;
	size_t h = sizeof(head) - 1;

	is_int(tp_chat_detect(tmpl, err, sizeof(err)), TP_CHAT_HARMONY,
	       "gpt-oss's template (<|channel|>) is recognised as harmony");
	s = tp_chat_render(TP_CHAT_HARMONY, c, 4, "", err, sizeof(err));
	ok(s && !strncmp(s, head, h) && strlen(s) == h + 10 + strlen(tail) &&
	   s[h + 4] == '-' && s[h + 7] == '-' && !strcmp(s + h + 10, tail),
	   "harmony: as gpt-oss's Jinja renders it (date, developer instructions, final channel)");
	if (s && strcmp(s + (strlen(s) > h + 10 ? h + 10 : 0), tail))
		diag("got  %s", s);
	free(s);
	is_int(tp_chat_by_name("harmony"), TP_CHAT_HARMONY,
	       "harmony by name");
}

/*
 * DeepSeek V3, R1, V3.1 and Kimi K2: detection by the markers llama.cpp
 * looks for, and two conversations rendered as the models' own templates
 * render them (the want strings are @huggingface/jinja's rendering of
 * llama.cpp's models/templates DeepSeek-R1-Distill-Llama-8B, DeepSeek-V3.1
 * and Kimi-K2-Instruct, BOS left out: the tokenizer adds it; V3's is R1's
 * without the thinking).
 */
static void test_deepseek_kimi(void)
{
	static const struct tp_chat_msg c1[] = {
		{ "system", "Be brief." }, { "user", "Hi" },
		{ "assistant", "<think>\nhmm\n</think>\n\nHello!" },
		{ "user", "Again" },
	}, c2[] = {
		{ "user", "Hi" }, { "assistant", "Hello!" }, { "user", "Again" },
	};
	static const struct {
		const char *tmpl;
		int style;
		const char *want1, *want2;
	} t[] = {
		{ "{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}",
		  TP_CHAT_DEEPSEEK3,
		  "Be brief.<｜User｜>Hi<｜Assistant｜><think>\nhmm\n</think>\n\nHello!<｜end▁of▁sentence｜><｜User｜>Again<｜Assistant｜>",
		  "<｜User｜>Hi<｜Assistant｜>Hello!<｜end▁of▁sentence｜><｜User｜>Again<｜Assistant｜>" },
		{ "{{'<｜User｜>' + message['content']}}{% set content = content.split('</think>')[-1] %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{{'<｜Assistant｜><think>\\n'}}",
		  TP_CHAT_DEEPSEEK_R1,
		  "Be brief.<｜User｜>Hi<｜Assistant｜>\n\nHello!<｜end▁of▁sentence｜><｜User｜>Again<｜Assistant｜><think>\n",
		  "<｜User｜>Hi<｜Assistant｜>Hello!<｜end▁of▁sentence｜><｜User｜>Again<｜Assistant｜><think>\n" },
		{ "{{'<｜User｜>' + message['content']}}{{'<｜Assistant｜>'}}{{'<think></think>'}}{{content + '<｜end▁of▁sentence｜>'}}{{'<think>'}}",
		  TP_CHAT_DEEPSEEK31,
		  "Be brief.<｜User｜>Hi<｜Assistant｜><think></think>\n\nHello!<｜end▁of▁sentence｜><｜User｜>Again<｜Assistant｜><think></think>",
		  "<｜User｜>Hi<｜Assistant｜><think></think>Hello!<｜end▁of▁sentence｜><｜User｜>Again<｜Assistant｜><think></think>" },
		{ "<|im_system|>system<|im_middle|>You are Kimi{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>{%- endif -%}",
		  TP_CHAT_KIMI_K2,
		  "<|im_system|>system<|im_middle|>Be brief.<|im_end|><|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|><think>\nhmm\n</think>\n\nHello!<|im_end|><|im_user|>user<|im_middle|>Again<|im_end|><|im_assistant|>assistant<|im_middle|>",
		  "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>\n<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>Hello!<|im_end|><|im_user|>user<|im_middle|>Again<|im_end|><|im_assistant|>assistant<|im_middle|>" },
	};
	char err[300] = "", *s;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *name = tp_chat_name(t[i].style);

		is_int(tp_chat_detect(t[i].tmpl, err, sizeof(err)), t[i].style,
		       "%s: its template's markers are recognised", name);
		s = tp_chat_render(t[i].style, c1, 4, "", err, sizeof(err));
		is_str(s ? s : err, t[i].want1,
		       "%s: a system message and two turns, as its Jinja renders them",
		       name);
		free(s);
		s = tp_chat_render(t[i].style, c2, 3, "", err, sizeof(err));
		is_str(s ? s : err, t[i].want2,
		       "%s: no system message, as its Jinja renders it", name);
		free(s);
		is_int(tp_chat_by_name(name), t[i].style, "%s by name", name);
	}
}

#define LONG_NAME "ffffffffffffffffffffffffffffffffffffffffffffffffffffffff" \
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

/* The reasoning and content of TEXT as one piece, and in pieces of every
 * size: the same. */
static void split(const char *name, const char *text, int how,
		  const char *think, const char *content)
{
	size_t len = strlen(text), step, i, n;
	int bad = 0;

	for (step = len ? len : 1; step >= 1; step--) {
		struct tp_reasoning r;
		char th[512] = "", ct[512] = "", a[512], b[512];
		size_t nt = 0, nc = 0, ta, tb;

		tp_reasoning_start(&r, how);
		for (i = 0; i <= len; i += step) {
			n = len - i < step ? len - i : step;
			tp_reasoning_push(&r, text + i, n, i + n >= len, a, &ta,
					  b, &tb);
			memcpy(th + nt, a, ta);
			memcpy(ct + nc, b, tb);
			nt += ta;
			nc += tb;
			if (i + n >= len)
				break;
		}
		th[nt] = ct[nc] = 0;
		if (strcmp(th, think) || strcmp(ct, content)) {
			bad++;
			diag("pieces of %zu: [%s] [%s]", step, th, ct);
		}
	}
	ok(!bad, "%s: the reasoning and the content, in pieces of every size as in one",
	   name);
}

static void test_reasoning(void)
{
	split("think, then answer", "<think>\nI wonder.\n</think>\n\nHello!",
	      TP_THINK_MAYBE, "I wonder.", "Hello!");
	split("an empty think block", "<think>\n\n</think>\n\nPlain",
	      TP_THINK_MAYBE, "", "Plain");
	split("<think> not at the start: content",
	      "Hello <think>not</think>", TP_THINK_MAYBE, "",
	      "Hello <think>not</think>");
	split("white space before <think>: content", " <think>x</think>y",
	      TP_THINK_MAYBE, "", " <think>x</think>y");
	split("a start of <think> that ends the answer", "<thin",
	      TP_THINK_MAYBE, "", "<thin");
	split("an unclosed think block, a start of </think> in it",
	      "<think>a </thi b \n", TP_THINK_MAYBE, "a </thi b", "");
	split("the prompt ended in <think>", "a  b</think> c </think>\n",
	      TP_THINK_OPEN, "a  b", "c </think>\n");
	split("nothing after </think>", "<think>x</think>", TP_THINK_MAYBE,
	      "x", "");
	/* gpt-oss: what its harmony answers look like (<|return|> ends
	 * generation and is not in the text) */
	split("harmony: analysis, then final",
	      "<|channel|>analysis<|message|>User greets. Answer.<|end|>"
	      "<|start|>assistant<|channel|>final<|message|>Hello! How can I help?",
	      TP_THINK_HARMONY, "User greets. Answer.",
	      "Hello! How can I help?");
	split("harmony: a final channel alone, up to its end tag",
	      "<|channel|>final<|message|> a<|b <|end <|return|>",
	      TP_THINK_HARMONY, "", " a<|b <|end ");
	split("harmony: two analysis messages, commentary as content",
	      "<|channel|>analysis<|message|>A<|end|>"
	      "<|start|>assistant<|channel|>analysis<|message|>B<|end|>"
	      "<|start|>assistant<|channel|>commentary<|message|>C<|end|>"
	      "<|start|>assistant<|channel|>final<|message|>D",
	      TP_THINK_HARMONY, "AB", "CD");
	split("harmony: cut inside the analysis channel",
	      "<|channel|>analysis<|message|>thinking <|en", TP_THINK_HARMONY,
	      "thinking <|en", "");
	split("harmony: a header and no message: nothing",
	      "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|chan",
	      TP_THINK_HARMONY, "x", "");
	split("harmony: an answer without markers is all content",
	      "Plain <|channel|>analysis<|message|>x", TP_THINK_HARMONY, "",
	      "Plain <|channel|>analysis<|message|>x");
	split("harmony: a header longer than 128 bytes is content",
	      "<|channel|>" LONG_NAME "<|message|>x", TP_THINK_HARMONY, "",
	      "<|channel|>" LONG_NAME "<|message|>x");
}

int main(void)
{
	plan(NO_PLAN);
	test_detect();
	test_render();
	test_encode();
	test_thinking();
	test_harmony();
	test_deepseek_kimi();
	test_reasoning();
	return done();
}
