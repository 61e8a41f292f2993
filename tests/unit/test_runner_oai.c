// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun serve's OpenAI JSON (tools/runner/cmd/openai.c): good requests read
 * into a job (prompt ids, defaults, limits), bad ones refused with a
 * message naming the field, answers and chunks that parse back as JSON with
 * the fields clients read, the job queue's text kept valid UTF-8, and
 * random corruptions of good bodies: each is read or refused, never a
 * crash.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/job_queue.h"
#include "cmd/openai.h"
#include "tap.h"
#include "text/reasoning.h"
#include "text/tokenizer.h"

static struct tp_tok tok;
static struct tp_srv srv = {
	.tok = &tok, .model_name = "m.gguf", .ctx = 64, .def_tokens = 16,
	.def_temperature = 0, .def_top_p = 0.9f, .def_seed = 5,
};

/* Parse BODY; the job in *J (freed by the caller), ERR. */
static int parse(const char *body, int chat, struct tp_job **j, char *err,
		 size_t errlen)
{
	*j = tp_job_new();
	err[0] = 0;
	return tp_oai_parse(&srv, body, strlen(body), chat, *j, err, errlen);
}

static int refused(const char *body, int chat, const char *why)
{
	struct tp_job *j;
	char err[300];
	int r = parse(body, chat, &j, err, sizeof(err));

	tp_job_put(j);
	if (r == 0 || !strstr(err, why)) {
		diag("%s: %d '%s'", body, r, err);
		return 0;
	}
	return 1;
}

static void test_good(void)
{
	struct tp_job *j;
	char err[300];
	int *ids, n;

	ok(!parse("{\"prompt\": \"Hello world\"}", 0, &j, err, sizeof(err)),
	   "a prompt alone (%s)", err);
	n = tp_tok_encode(&tok, "Hello world", 11, TP_ENC_BOS, &ids);
	ok(j->nprompt == n && !memcmp(j->prompt, ids, (size_t)n * sizeof(int)),
	   "its ids are the tokenizer's, BOS first");
	ok(j->max_tokens == 16 && j->temperature == 0 && j->seed == 5 &&
	   !j->stream && !j->chat, "the server's defaults");
	free(ids);
	tp_job_put(j);
	ok(!parse(" {\"prompt\": [\"x\"], \"max_tokens\": 1000, \"temperature\": 1,"
		  " \"top_p\": 0.5, \"seed\": 9, \"stream\": true, \"n\": 1,"
		  " \"model\": \"gpt-4\", \"logprobs\": null, \"extra\": {}}\n",
		  0, &j, err, sizeof(err)),
	   "every field, unknown ones ignored (%s)", err);
	ok(j->max_tokens == 64 - j->nprompt && j->temperature == 1 &&
	   j->top_p == 0.5f && j->seed == 9 && j->stream,
	   "max_tokens cut to the context, the rest as given");
	tp_job_put(j);
	ok(!parse("{\"messages\": [{\"role\": \"system\", \"content\": \"s\"},"
		  " {\"role\": \"user\", \"content\": \"hi\"}],"
		  " \"max_completion_tokens\": 3}", 1, &j, err, sizeof(err)) &&
	   j->chat && j->max_tokens == 3 && j->nprompt > 4,
	   "a chat in the synthetic tokenizer's template (%s)", err);
	tp_job_put(j);
}

static void test_bad(void)
{
	char big[200];
	int i;

	ok(refused("", 0, "not JSON"), "an empty body");
	ok(refused("{\"prompt\": \"x\"", 0, "not JSON"), "JSON cut short");
	ok(refused("{\"prompt\": \"x\"} {}", 0, "more after"), "two values");
	ok(refused("\"x\"", 0, "JSON object"), "a string");
	ok(refused("null", 0, "JSON object"), "null");
	ok(refused("{}", 0, "'prompt' is missing"), "no prompt");
	ok(refused("{\"prompt\": null}", 0, "'prompt' is missing"), "a null prompt");
	ok(refused("{\"prompt\": [\"a\", \"b\"]}", 0, "array of one string"),
	   "two prompts");
	{
		struct tp_job *j;
		char err[300];

		ok(!parse("{\"prompt\": \"\"}", 0, &j, err, sizeof(err)) &&
		   j->nprompt == 1 && j->prompt[0] == tok.bos,
		   "an empty prompt is BOS alone (the synthetic tokenizer adds it)");
		tp_job_put(j);
	}
	ok(refused("{\"prompt\": \"x\", \"max_tokens\": 1.5}", 0, "an integer"),
	   "a fractional max_tokens");
	ok(refused("{\"prompt\": \"x\", \"max_tokens\": -1}", 0, "1.."),
	   "a negative max_tokens");
	ok(refused("{\"prompt\": \"x\", \"top_p\": 0}", 0, "'top_p' must be in"),
	   "top_p 0");
	ok(refused("{\"prompt\": \"x\", \"stream\": 1}", 0, "a boolean"),
	   "stream as a number");
	ok(refused("{\"prompt\": \"x\", \"model\": 3}", 0, "'model' must be"),
	   "model as a number");
	ok(refused("{\"prompt\": \"x\", \"seed\": -3}", 0, "'seed'"), "a negative seed");
	ok(refused("{\"messages\": {}}", 1, "an array"), "messages as an object");
	ok(refused("{\"messages\": [3]}", 1, "must be an object"), "a number message");
	ok(refused("{\"messages\": [{\"content\": \"x\"}]}", 1, "no 'role'"),
	   "no role");
	ok(refused("{\"messages\": [{\"role\": \"user\", \"content\": [1]}]}", 1,
		   "'content' must be a string"), "content as an array");
	ok(refused("{\"prompt\": \"x\"}", 1, "'messages' is missing"),
	   "a completion body to chat");
	snprintf(big, sizeof(big), "{\"prompt\": \"");
	for (i = 0; i < 70; i++)
		strcat(big, "q ");
	strcat(big, "\"}");
	ok(refused(big, 0, "the context (--ctx) 64"), "a prompt over the context");
	{
		char deep[400] = "{\"prompt\": \"x\", \"a\": ";

		for (i = 0; i < 100; i++)
			strcat(deep, "[");
		ok(refused(deep, 0, "not JSON"), "nesting 100 deep");
	}
}

/* TEXT parses as JSON with KEY (a path "choices.0.text") equal to WANT. */
static int has(const char *text, const char *want_object, const char *want)
{
	json_object *o = json_tokener_parse(text), *c, *v;
	int r = 0;

	if (!o)
		return 0;
	if (json_object_object_get_ex(o, "object", &v) &&
	    !strcmp(json_object_get_string(v), want_object) &&
	    json_object_object_get_ex(o, "choices", &c) &&
	    json_object_array_length(c) == 1) {
		c = json_object_array_get_idx(c, 0);
		if (json_object_object_get_ex(c, "text", &v) ||
		    (json_object_object_get_ex(c, "message", &v) &&
		     json_object_object_get_ex(v, "content", &v)) ||
		    (json_object_object_get_ex(c, "delta", &v) &&
		     json_object_object_get_ex(v, "content", &v)))
			r = !strcmp(json_object_get_string(v), want);
	}
	json_object_put(o);
	return r;
}

static void test_answers(void)
{
	struct tp_job *j = tp_job_new();
	char *s, buf[64];
	size_t n;
	int r;

	j->id = 7;
	j->nprompt = 3;
	tp_job_append(j, "a\"b\n\xff", 5, 1);
	tp_job_append(j, "\xe2\x82\xac", 3, 2);
	ok(j->len == 10 && !strcmp(j->text, "a\"b\n\xef\xbf\xbd\xe2\x82\xac"),
	   "the job's text stays UTF-8: a byte that is no UTF-8 is U+FFFD");
	r = tp_job_read(j, 0, buf, 6, &n, 0);
	ok(!r && n == 4, "a read is cut before a UTF-8 sequence (%zu bytes)", n);
	tp_job_end(j, "stop");
	r = tp_job_read(j, 4, buf, sizeof(buf), &n, 0);
	ok(r == 1 && n == 6, "the last read says the job is done");
	s = tp_oai_answer(&srv, j, "a\"b", 3, 2, "stop");
	ok(has(s, "text_completion", "a\"b") && strstr(s, "\"cmpl-7\"") &&
	   strstr(s, "\"total_tokens\":5"), "a completion: %s", s);
	free(s);
	j->chat = 1;
	s = tp_oai_answer(&srv, j, "hi", 2, 1, "length");
	ok(has(s, "chat.completion", "hi") && strstr(s, "\"role\":\"assistant\"") &&
	   strstr(s, "\"finish_reason\":\"length\""), "a chat answer: %s", s);
	free(s);
	s = tp_oai_chunk(&srv, j, "x\0y", 3, NULL, 0, NULL, 0);
	ok(strstr(s, "\"chat.completion.chunk\"") && strstr(s, "x\\u0000y") &&
	   strstr(s, "\"finish_reason\":null"), "a chunk, a NUL escaped: %s", s);
	free(s);
	j->think = 1;
	s = tp_oai_answer(&srv, j, "<think>\nWhy?\n</think>\n\nBecause.", 31,
			  9, "stop");
	ok(strstr(s, "\"content\":\"Because.\"") &&
	   strstr(s, "\"reasoning_content\":\"Why?\""),
	   "a thinking model's answer: the thinking in reasoning_content, as llama.cpp's server: %s",
	   s);
	free(s);
	j->think = TP_THINK_HARMONY;
	s = tp_oai_answer(&srv, j,
			  "<|channel|>analysis<|message|>Why?<|end|><|start|>assistant<|channel|>final<|message|>Because.",
			  94, 9, "stop");
	ok(strstr(s, "\"content\":\"Because.\"") &&
	   strstr(s, "\"reasoning_content\":\"Why?\""),
	   "gpt-oss's harmony answer: the analysis channel in reasoning_content, the final one in content: %s",
	   s);
	free(s);
	s = tp_oai_chunk(&srv, j, NULL, 0, "Hm", 2, NULL, 0);
	ok(strstr(s, "\"delta\":{\"reasoning_content\":\"Hm\"}") != NULL,
	   "a chunk of reasoning alone: %s", s);
	free(s);
	j->think = 0;
	s = tp_oai_error("bad \"thing\"", "invalid_request_error");
	{
		json_object *o = json_tokener_parse(s);

		ok(o && strstr(s, "bad \\\"thing\\\""), "an error: %s", s);
		json_object_put(o);
	}
	free(s);
	s = tp_oai_models(&srv);
	ok(strstr(s, "\"id\":\"m.gguf\"") != NULL, "the models: %s", s);
	free(s);
	tp_job_put(j);
}

static void test_corrupt(void)
{
	static const char *const good[] = {
		"{\"prompt\": \"Hello world\", \"max_tokens\": 4, \"temperature\": 0.5, \"stream\": true}",
		"{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"yo\"}], \"seed\": 3}",
	};
	unsigned long long x = 0x9e3779b97f4a7c15ull;
	int i, k, ok_n = 0, bad_n = 0, broken = 0;

	for (i = 0; i < 20000; i++) {
		const char *g = good[i & 1];
		size_t len = strlen(g), m;
		char body[256], err[300];
		struct tp_job *j;
		int r;

		memcpy(body, g, len + 1);
		for (k = 0; k < 1 + (i % 4) && len; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			m = (size_t)(x % len);
			switch (x >> 60 & 3) {
			case 0: body[m] = (char)(x >> 32); break;	/* any byte */
			case 1: body[m] = "{}[]\",:0 tn-"[x >> 40 & 7]; break;
			case 2: len = m; break;				/* cut */
			default: body[m] = 0; break;			/* a NUL */
			}
			body[len] = 0;
		}
		j = tp_job_new();
		err[0] = 0;
		r = tp_oai_parse(&srv, body, len, i & 1, j, err, sizeof(err));
		if (r == 0 && (j->nprompt < 1 || j->nprompt >= srv.ctx ||
			       j->max_tokens < 1 ||
			       j->nprompt + j->max_tokens > srv.ctx))
			broken++;
		if (r && !err[0])
			broken++;
		r ? bad_n++ : ok_n++;
		tp_job_put(j);
	}
	ok(!broken && bad_n > 10000 && ok_n > 100,
	   "20000 corrupted bodies: %d read, %d refused with a message, %d inconsistent",
	   ok_n, bad_n, broken);
}

int main(void)
{
	char err[300] = "";

	plan(NO_PLAN);
	if (!ok(!tp_tok_synth(&tok, 400, err, sizeof(err)),
		"the synthetic tokenizer (%s)", err))
		return done();
	test_good();
	test_bad();
	test_answers();
	test_corrupt();
	tp_tok_free(&tok);
	return done();
}
