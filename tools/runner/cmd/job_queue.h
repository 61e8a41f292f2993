/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tprun serve's requests ("jobs") and their queue: the HTTP threads
 * (http.c) queue a job and read its text as it grows; the generation loop
 * (serve.c) takes one job at a time, appends the answer's text and ends
 * it. A job's client that goes away cancels it: a queued job is then
 * skipped, a running one stops at the next token. A job is freed when
 * both sides let it go.
 */
#ifndef TPRUN_JOB_H
#define TPRUN_JOB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct tp_tok;

struct tp_job {
	/* the request, fixed once queued */
	int *prompt;
	int nprompt;
	int max_tokens;
	float temperature, top_p;
	uint64_t seed;
	int chat, stream;
	int think;		/* the answer: 0 all content, 1 may start with
				   a <think> block, 2 starts inside one
				   (text/reasoning.h) */
	unsigned long long id;
	/* the answer, under the queue's lock */
	char *text;		/* valid UTF-8, NUL-terminated */
	size_t len, cap;
	int ntok;		/* tokens generated */
	int done, cancelled;
	const char *finish;	/* "stop", "length", or NULL (failed) */
	int refs;
	struct tp_job *next;
};

/* The server's fixed state, shared by the HTTP threads. */
struct tp_srv {
	const struct tp_tok *tok;
	const char *model_name;
	int ctx;		/* prompt + answer tokens */
	int def_tokens;		/* max_tokens when the request has none */
	float def_temperature, def_top_p;
	uint64_t def_seed;
	int def_think;		/* 0: --reasoning-budget 0 (no thinking) */
	int def_split;		/* reasoning_format: 1 auto, 0 none */
	long created;		/* time(), for /v1/models */
};

#define TP_QUEUE_MAX 16		/* waiting jobs; more get 503 */

struct tp_job *tp_job_new(void);
/* Queue J (it takes a reference); -1 when the queue is full, -2 when
 * the server has stopped (tp_job_stopped() says why). */
int tp_job_queue(struct tp_job *j);
/* The next job not cancelled, waiting at most TIMEOUT_MS; NULL if none. */
struct tp_job *tp_job_next(int timeout_ms);
/* Generation side: text out (made valid UTF-8), the end. */
void tp_job_append(struct tp_job *j, const char *s, size_t n, int ntok);
void tp_job_end(struct tp_job *j, const char *finish);
int tp_job_cancelled(struct tp_job *j);
/* HTTP side: the client is gone. */
void tp_job_cancel(struct tp_job *j);
/*
 * Wait at most TIMEOUT_MS until J has more than HAVE bytes of text or is
 * done; copies what is new (up to CAP bytes, cut on a UTF-8 boundary)
 * into OUT, *N its length. Returns 1 when the job is done and every byte
 * was taken, else 0.
 */
int tp_job_read(struct tp_job *j, size_t have, char *out, size_t cap,
		size_t *n, int timeout_ms);
/* Wait at most TIMEOUT_MS for J to end: 1 when it has. */
int tp_job_wait(struct tp_job *j, int timeout_ms);
void tp_job_put(struct tp_job *j);
/*
 * The server stops (a rank was lost, the all-reduce failed): every job
 * queued and the one running end as failed, and new ones are refused,
 * with WHY, which the HTTP side answers with (503).
 */
void tp_job_fail_all(const char *why);
/* Why the server stopped, or NULL while it runs. */
const char *tp_job_stopped(void);
/* The HTTP side opened (+1) or answered (-1) a generation request. */
void tp_job_http(int delta);
/* Wait at most TIMEOUT_MS until every open request is answered; how
 * many are still open. */
int tp_job_drain(int timeout_ms);

#endif /* TPRUN_JOB_H */
