/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The OpenAI API's JSON for tprun serve (json-c): requests of
 * /v1/completions and /v1/chat/completions read into a job, and the
 * answers, whole or as the chunks of a stream, /v1/models and errors.
 * Supported request fields: model (any name), prompt (a string, or an
 * array of one string) or messages (role + string content), max_tokens
 * (max_completion_tokens), temperature, top_p, seed, stream, n (1 only).
 * Other fields are ignored.
 */
#ifndef TPRUN_OAI_H
#define TPRUN_OAI_H

#include <stddef.h>

#include "cmd/job_queue.h"

#define TP_OAI_BODY_MAX (1 << 20)	/* bytes of a request */

/* Read BODY (LEN bytes and a NUL) into J's request. 0, or -1 and ERR
 * (a 400). */
int tp_oai_parse(const struct tp_srv *s, const char *body, size_t len,
		 int chat, struct tp_job *j, char *err, size_t errlen);

/* JSON texts, malloc'ed. TYPE: "invalid_request_error", ... */
char *tp_oai_error(const char *msg, const char *type);
char *tp_oai_models(const struct tp_srv *s);
/* The whole answer: TEXT (LEN bytes), with usage. */
char *tp_oai_answer(const struct tp_srv *s, const struct tp_job *j,
		    const char *text, size_t len, int ntok,
		    const char *finish);
/* One chunk of a stream: TEXT (LEN bytes) as the next delta; FINISH set
 * on the last; FIRST: a chat's opening chunk (the role). */
char *tp_oai_chunk(const struct tp_srv *s, const struct tp_job *j,
		   const char *text, size_t len, const char *finish,
		   int first);

#endif /* TPRUN_OAI_H */
