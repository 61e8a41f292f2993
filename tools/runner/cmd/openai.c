// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* OpenAI-compatible JSON for tprun serve; see openai.h. */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "cmd/openai.h"
#include "text/chat_template.h"
#include "text/reasoning.h"
#include "text/tokenizer.h"

#define MAX_MESSAGES 1024

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

/* Field KEY of O: 1 present with type TYPE, 0 absent (or null), -1 of
 * another type (ERR says so). NUMBER accepts int and double. */
static int field(json_object *o, const char *key, json_type type,
		 json_object **v, char *err, size_t errlen)
{
	static const char *const tn[] = {
		[json_type_null] = "null", [json_type_boolean] = "a boolean",
		[json_type_double] = "a number", [json_type_int] = "an integer",
		[json_type_object] = "an object", [json_type_array] = "an array",
		[json_type_string] = "a string",
	};
	json_type t;

	if (!json_object_object_get_ex(o, key, v) || !*v)
		return 0;
	t = json_object_get_type(*v);
	if (t == type || (type == json_type_double && t == json_type_int))
		return 1;
	return bad(err, errlen, "'%s' must be %s", key, tn[type]);
}

static int get_int(json_object *o, const char *key, long lo, long hi,
		   long *out, char *err, size_t errlen)
{
	json_object *v;
	int r = field(o, key, json_type_int, &v, err, errlen);
	int64_t x;

	if (r <= 0)
		return r;
	x = json_object_get_int64(v);
	if (x < lo || x > hi)
		return bad(err, errlen, "'%s' must be in %ld..%ld", key, lo, hi);
	*out = (long)x;
	return 1;
}

static int get_num(json_object *o, const char *key, double lo, double hi,
		   float *out, char *err, size_t errlen)
{
	json_object *v;
	int r = field(o, key, json_type_double, &v, err, errlen);
	double x;

	if (r <= 0)
		return r;
	x = json_object_get_double(v);
	if (!(x >= lo && x <= hi))
		return bad(err, errlen, "'%s' must be in %g..%g", key, lo, hi);
	*out = (float)x;
	return 1;
}

static int completion_prompt(const struct tp_srv *s, json_object *req,
			     struct tp_job *j, char *err, size_t errlen)
{
	json_object *p;
	int r = field(req, "prompt", json_type_string, &p, err, errlen);

	if (r < 0 && json_object_is_type(p, json_type_array)) {
		if (json_object_array_length(p) != 1 ||
		    !json_object_is_type(json_object_array_get_idx(p, 0),
					 json_type_string))
			return bad(err, errlen, "'prompt' must be a string or an array of one string");
		p = json_object_array_get_idx(p, 0);
		r = 1;
	}
	if (r < 0)
		return -1;
	if (!r)
		return bad(err, errlen, "'prompt' is missing");
	j->nprompt = tp_tok_encode(s->tok, json_object_get_string(p),
				   (size_t)json_object_get_string_len(p),
				   TP_ENC_BOS, &j->prompt);
	return 0;
}

/*
 * Whether the model thinks first (chat_template_kwargs.enable_thinking,
 * else the server's --reasoning-budget), and whether its thinking goes
 * to reasoning_content (reasoning_format "auto" or "deepseek", else the
 * server's --reasoning-format) or stays in the content ("none"), as in
 * llama.cpp's server. *FLAGS the template's, *SPLIT the answer's.
 */
static int thinking(const struct tp_srv *s, json_object *req, int *flags,
		    int *split, char *err, size_t errlen)
{
	json_object *k, *v;
	int r;

	*flags = s->def_think ? 0 : TP_CHAT_NO_THINK;
	*split = s->def_split;
	r = field(req, "chat_template_kwargs", json_type_object, &k, err,
		  errlen);
	if (r < 0)
		return -1;
	if (r && field(k, "enable_thinking", json_type_boolean, &v, err,
		       errlen) < 0)
		return bad(err, errlen, "'chat_template_kwargs.enable_thinking' must be a boolean");
	if (r && v)
		*flags = json_object_get_boolean(v) ? 0 : TP_CHAT_NO_THINK;
	r = field(req, "reasoning_format", json_type_string, &v, err, errlen);
	if (r < 0)
		return -1;
	if (r) {
		const char *f = json_object_get_string(v);

		if (!strcmp(f, "none"))
			*split = 0;
		else if (!strcmp(f, "auto") || !strcmp(f, "deepseek"))
			*split = 1;
		else
			return bad(err, errlen, "'reasoning_format' must be none, auto or deepseek");
	}
	return 0;
}

static int chat_prompt(const struct tp_srv *s, json_object *req,
		       struct tp_job *j, char *err, size_t errlen)
{
	struct tp_chat_msg *m;
	json_object *a, *e, *v;
	size_t n, i;
	int flags, split, r = field(req, "messages", json_type_array, &a, err,
				    errlen);

	if (r <= 0)
		return r ? -1 : bad(err, errlen, "'messages' is missing");
	if (thinking(s, req, &flags, &split, err, errlen))
		return -1;
	n = json_object_array_length(a);
	if (n < 1 || n > MAX_MESSAGES)
		return bad(err, errlen, "'messages' must hold 1..%d messages",
			   MAX_MESSAGES);
	m = tp_calloc(n, sizeof(*m));
	for (i = 0; i < n; i++) {
		e = json_object_array_get_idx(a, i);
		if (!json_object_is_type(e, json_type_object)) {
			free(m);
			return bad(err, errlen, "messages[%zu] must be an object", i);
		}
		r = field(e, "role", json_type_string, &v, err, errlen);
		if (r <= 0) {
			free(m);
			return r ? -1 : bad(err, errlen, "messages[%zu] has no 'role'", i);
		}
		m[i].role = json_object_get_string(v);
		r = field(e, "content", json_type_string, &v, err, errlen);
		if (r <= 0) {
			free(m);
			return r ? bad(err, errlen, "messages[%zu]: 'content' must be a string", i) :
				   bad(err, errlen, "messages[%zu] has no 'content'", i);
		}
		m[i].content = json_object_get_string(v);
	}
	j->nprompt = tp_chat_encode_flags(s->tok, m, (int)n, flags, &j->think,
					  &j->prompt, err, errlen);
	if (!split)
		j->think = 0;
	free(m);
	return j->nprompt < 0 ? -1 : 0;
}

static int params(const struct tp_srv *s, json_object *req, struct tp_job *j,
		  char *err, size_t errlen)
{
	json_object *v;
	long x = s->def_tokens, seed = (long)(s->def_seed & 0x7fffffffffffffffull);
	int r;

	j->temperature = s->def_temperature;
	j->top_p = s->def_top_p;
	if (field(req, "model", json_type_string, &v, err, errlen) < 0 ||
	    (r = field(req, "stream", json_type_boolean, &v, err, errlen)) < 0)
		return -1;
	j->stream = r && json_object_get_boolean(v);
	if (get_int(req, "n", 1, 1, &x, err, errlen) < 0)
		return bad(err, errlen, "'n' must be 1 (one answer per request)");
	x = s->def_tokens;
	if (get_int(req, "max_tokens", 1, 1 << 24, &x, err, errlen) < 0 ||
	    (j->chat && get_int(req, "max_completion_tokens", 1, 1 << 24, &x,
				err, errlen) < 0) ||
	    get_num(req, "temperature", 0, 2, &j->temperature, err, errlen) < 0 ||
	    get_num(req, "top_p", 1e-6, 1, &j->top_p, err, errlen) < 0 ||
	    get_int(req, "seed", 0, 0x7fffffffffffffffl, &seed, err, errlen) < 0)
		return -1;
	j->max_tokens = (int)x;
	j->seed = (uint64_t)seed;
	return 0;
}

int tp_oai_parse(const struct tp_srv *s, const char *body, size_t len,
		 int chat, struct tp_job *j, char *err, size_t errlen)
{
	struct json_tokener *tk = json_tokener_new_ex(32);
	enum json_tokener_error e;
	json_object *req;
	size_t end;
	int r = -1;

	if (!tk)
		tp_die("out of memory");
	/* with the NUL: a number or literal at the end is complete */
	req = json_tokener_parse_ex(tk, body, (int)len + 1);
	e = json_tokener_get_error(tk);
	end = json_tokener_get_parse_end(tk);
	while (end < len && body[end] && strchr(" \t\r\n", body[end]))
		end++;
	if (e == json_tokener_continue) {
		bad(err, errlen, "the body is not JSON: it ends early");
		goto out;
	}
	if (e != json_tokener_success) {
		bad(err, errlen, "the body is not JSON: %s",
		    json_tokener_error_desc(e));
		goto out;
	}
	if (end != len) {
		bad(err, errlen, "the body has more after its JSON value");
		goto out;
	}
	if (!json_object_is_type(req, json_type_object)) {
		bad(err, errlen, "the body must be a JSON object");
		goto out;
	}
	j->chat = chat;
	if (params(s, req, j, err, errlen) ||
	    (chat ? chat_prompt : completion_prompt)(s, req, j, err, errlen))
		goto out;
	if (j->nprompt < 1) {
		bad(err, errlen, "the prompt is empty (no tokens)");
		goto out;
	}
	if (j->nprompt >= s->ctx) {
		bad(err, errlen, "the prompt is %d tokens, the context (--ctx) %d",
		    j->nprompt, s->ctx);
		goto out;
	}
	if (j->max_tokens > s->ctx - j->nprompt)
		j->max_tokens = s->ctx - j->nprompt;
	r = 0;
out:
	json_object_put(req);
	json_tokener_free(tk);
	return r;
}

static char *text_of(json_object *o)
{
	char *s = strdup(json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));

	if (!s)
		tp_die("out of memory");
	json_object_put(o);
	return s;
}

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

char *tp_oai_error(const char *msg, const char *type)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();

	add(e, "message", json_object_new_string(msg));
	add(e, "type", json_object_new_string(type));
	add(e, "param", NULL);
	add(e, "code", NULL);
	add(o, "error", e);
	return text_of(o);
}

char *tp_oai_models(const struct tp_srv *s)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	json_object *m = json_object_new_object();

	add(m, "id", json_object_new_string(s->model_name));
	add(m, "object", json_object_new_string("model"));
	add(m, "created", json_object_new_int64(s->created));
	add(m, "owned_by", json_object_new_string("tprun"));
	json_object_array_add(a, m);
	add(o, "object", json_object_new_string("list"));
	add(o, "data", a);
	return text_of(o);
}

/* The fields every answer and chunk starts with. */
static json_object *head(const struct tp_srv *s, const struct tp_job *j,
			 const char *object)
{
	json_object *o = json_object_new_object();
	char id[48];

	snprintf(id, sizeof(id), "%s-%llu", j->chat ? "chatcmpl" : "cmpl",
		 j->id);
	add(o, "id", json_object_new_string(id));
	add(o, "object", json_object_new_string(object));
	add(o, "created", json_object_new_int64((int64_t)time(NULL)));
	add(o, "model", json_object_new_string(s->model_name));
	return o;
}

static json_object *choice(const struct tp_job *j, const char *text,
			   size_t len, const char *think, size_t tlen,
			   const char *finish, const char *key, int role)
{
	json_object *c = json_object_new_object(), *m;

	add(c, "index", json_object_new_int(0));
	if (j->chat) {
		m = json_object_new_object();
		if (role)
			add(m, "role", json_object_new_string("assistant"));
		if (text)
			add(m, "content",
			    json_object_new_string_len(text, (int)len));
		if (think && tlen)
			add(m, "reasoning_content",
			    json_object_new_string_len(think, (int)tlen));
		add(c, key, m);
	} else {
		add(c, "text", json_object_new_string_len(text ? text : "",
							   (int)len));
	}
	add(c, "logprobs", NULL);
	add(c, "finish_reason", finish ? json_object_new_string(finish) : NULL);
	return c;
}

char *tp_oai_answer(const struct tp_srv *s, const struct tp_job *j,
		    const char *text, size_t len, int ntok,
		    const char *finish)
{
	json_object *o = head(s, j, j->chat ? "chat.completion" :
					     "text_completion");
	json_object *a = json_object_new_array(), *u = json_object_new_object();
	char *think = NULL, *content = NULL;
	size_t tlen = 0;

	if (j->chat && j->think) {
		struct tp_reasoning r;

		think = tp_calloc(len + TP_REASONING_HOLD, 1);
		content = tp_calloc(len + TP_REASONING_HOLD, 1);
		tp_reasoning_start(&r, j->think);
		tp_reasoning_push(&r, text, len, 1, think, &tlen, content,
				  &len);
		text = content;
	}
	json_object_array_add(a, choice(j, text, len, think, tlen, finish,
					"message", 1));
	free(think);
	free(content);
	add(o, "choices", a);
	add(u, "prompt_tokens", json_object_new_int(j->nprompt));
	add(u, "completion_tokens", json_object_new_int(ntok));
	add(u, "total_tokens", json_object_new_int(j->nprompt + ntok));
	add(o, "usage", u);
	return text_of(o);
}

char *tp_oai_chunk(const struct tp_srv *s, const struct tp_job *j,
		   const char *text, size_t len, const char *think,
		   size_t tlen, const char *finish, int first)
{
	json_object *o = head(s, j, j->chat ? "chat.completion.chunk" :
					     "text_completion");
	json_object *a = json_object_new_array();

	if (j->chat && !first && !finish && !len && tlen)
		text = NULL;	/* a piece of reasoning alone */
	json_object_array_add(a, choice(j, first ? "" : finish ? NULL : text,
					first ? 0 : len, think, tlen, finish,
					"delta", first));
	add(o, "choices", a);
	return text_of(o);
}
