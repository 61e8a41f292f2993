// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun serve's HTTP server; see http.h. */
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"
#include "cmd/http.h"
#include "cmd/openai.h"
#include "comm/rendezvous.h"
#include "text/reasoning.h"

struct tp_http {
	struct MHD_Daemon *d;
};

/* One request: its body as it arrives. */
struct req {
	char *body;
	size_t len;
	int too_big;
};

/* A streamed answer. */
struct stream {
	const struct tp_srv *s;
	struct tp_job *j;
	size_t have;		/* bytes of the job's text sent */
	int state;		/* 0 role, 1 text, 2 [DONE], 3 end */
	char *pend;		/* formatted, not yet handed to MHD */
	size_t plen, poff;
	struct tp_reasoning rs;	/* the job's thinking and content */
	int flushed;		/* the reasoning split's last piece out */
};

/* libmicrohttpd's messages (a client gone mid-answer, ...): with -v. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (!tp_verbose)
		return;
	fputs("tprun: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status,
			     char *json)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(json), json,
					    MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(json);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result fail(struct MHD_Connection *c, unsigned int status,
			    const char *msg)
{
	const char *type = status == 404 ? "not_found_error" :
			   status == 503 ? "server_error" :
			   "invalid_request_error";

	tp_info("http: %u: %s", status, msg);
	return reply(c, status, tp_oai_error(msg, type));
}

/* The client closed its connection (or reset it). */
static int gone(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd pf;

	if (!ci)
		return 0;
	pf.fd = ci->connect_fd;
	pf.events = POLLRDHUP;
	return poll(&pf, 1, 0) > 0 &&
	       (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void sse(struct stream *st, char *json)
{
	size_t n = strlen(json);

	st->pend = tp_calloc(1, n + 9);
	st->plen = (size_t)snprintf(st->pend, n + 9, "data: %s\n\n", json);
	st->poff = 0;
	free(json);
}

/* The next piece of the stream into st->pend (blocks up to a second). */
static void next(struct stream *st)
{
	struct tp_job *j = st->j;
	char text[4096];
	size_t n;
	int end;

	if (st->state == 0) {
		st->state = 1;
		tp_reasoning_start(&st->rs, j->think);
		if (j->chat) {
			sse(st, tp_oai_chunk(st->s, j, NULL, 0, NULL, 0, NULL,
					     1));
			return;
		}
	}
	if (st->state == 2) {
		st->pend = strdup("data: [DONE]\n\n");
		st->plen = strlen(st->pend);
		st->poff = 0;
		st->state = 3;
		return;
	}
	end = tp_job_read(j, st->have, text, sizeof(text), &n, 1000);
	st->have += n;
	if (j->chat && j->think && (n || (end && !st->flushed))) {
		/* the text split into thinking and content; what may be a
		 * tag's start waits for the next piece */
		char think[sizeof(text) + TP_REASONING_HOLD];
		char content[sizeof(text) + TP_REASONING_HOLD];
		size_t tn, cn;

		tp_reasoning_push(&st->rs, text, n, end, think, &tn, content,
				  &cn);
		st->flushed = end;
		if (tn || cn) {
			sse(st, tp_oai_chunk(st->s, j, content, cn, think, tn,
					     NULL, 0));
			return;
		}
		n = 0;
	}
	if (n) {
		sse(st, tp_oai_chunk(st->s, j, text, n, NULL, 0, NULL, 0));
	} else if (!end) {
		/* a comment: keeps proxies open, finds closed clients */
		st->pend = strdup(": waiting\n\n");
		st->plen = strlen(st->pend);
		st->poff = 0;
	} else if (!j->finish) {
		sse(st, tp_oai_error(tp_job_stopped() ? tp_job_stopped() :
				     "generation failed (the server stops)",
				     "server_error"));
		st->state = 3;
	} else {
		sse(st, tp_oai_chunk(st->s, j, NULL, 0, NULL, 0, j->finish, 0));
		st->state = 2;
	}
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	size_t n;

	(void)pos;
	if (!st->pend || st->poff == st->plen) {
		free(st->pend);
		st->pend = NULL;
		if (st->state == 3)
			return MHD_CONTENT_READER_END_OF_STREAM;
		next(st);
		if (!st->pend)
			tp_die("out of memory");
	}
	n = st->plen - st->poff < max ? st->plen - st->poff : max;
	memcpy(buf, st->pend + st->poff, n);
	st->poff += n;
	return (ssize_t)n;
}

/* The response is gone: sent, or its client closed the connection. */
static void stream_free(void *cls)
{
	struct stream *st = cls;

	if (st->state != 3)
		tp_job_cancel(st->j);
	tp_job_put(st->j);
	free(st->pend);
	free(st);
	tp_job_http(-1);
}

static enum MHD_Result answer(struct MHD_Connection *c,
			      const struct tp_srv *s, struct tp_job *j)
{
	struct MHD_Response *r;
	struct stream *st;
	enum MHD_Result ret;

	if (j->stream) {
		st = tp_calloc(1, sizeof(*st));
		st->s = s;
		st->j = j;
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
						      reader, st, stream_free);
		if (!r) {
			stream_free(st);
			return MHD_NO;
		}
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/event-stream");
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
					"no-cache");
		ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
	while (!tp_job_wait(j, 500))
		if (gone(c)) {
			tp_info("http: job %llu: the client went away", j->id);
			tp_job_cancel(j);
			tp_job_put(j);
			tp_job_http(-1);
			return MHD_NO;
		}
	if (!j->finish) {
		tp_job_put(j);
		ret = fail(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			   tp_job_stopped() ? tp_job_stopped() :
			   "generation failed (the server stops)");
		tp_job_http(-1);
		return ret;
	}
	ret = reply(c, MHD_HTTP_OK,
		    tp_oai_answer(s, j, j->text, j->len, j->ntok, j->finish));
	tp_job_put(j);
	tp_job_http(-1);
	return ret;
}

static enum MHD_Result generate(struct MHD_Connection *c,
				const struct tp_srv *s, struct req *q, int chat)
{
	struct tp_job *j = tp_job_new();
	char err[400];

	if (tp_oai_parse(s, q->body ? q->body : "", q->len, chat, j, err,
			 sizeof(err))) {
		tp_job_put(j);
		return fail(c, MHD_HTTP_BAD_REQUEST, err);
	}
	switch (tp_job_queue(j)) {
	case -1:
		tp_job_put(j);
		return fail(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			    "the server is busy (too many queued requests): try again");
	case -2:
		tp_job_put(j);
		return fail(c, MHD_HTTP_SERVICE_UNAVAILABLE, tp_job_stopped());
	}
	tp_job_http(1);
	tp_info("http: job %llu: %s, %d prompt tokens, at most %d more%s",
		j->id, chat ? "chat" : "completion", j->nprompt, j->max_tokens,
		j->stream ? ", streamed" : "");
	return answer(c, s, j);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *data,
			       size_t *data_size, void **con_cls)
{
	const struct tp_srv *s = cls;
	struct req *q = *con_cls;
	int post = !strcmp(method, "POST"), get = !strcmp(method, "GET");
	int chat = !strcmp(url, "/v1/chat/completions");
	int comp = !strcmp(url, "/v1/completions");
	const char *cl;

	(void)version;
	if (!q) {
		q = tp_calloc(1, sizeof(*q));
		*con_cls = q;
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > TP_OAI_BODY_MAX)
			return fail(c, MHD_HTTP_CONTENT_TOO_LARGE,
				    "the body is larger than 1 MiB");
		return MHD_YES;
	}
	if (*data_size) {
		if (q->len + *data_size > TP_OAI_BODY_MAX) {
			q->too_big = 1;
		} else {
			q->body = realloc(q->body, q->len + *data_size + 1);
			if (!q->body)
				tp_die("out of memory");
			memcpy(q->body + q->len, data, *data_size);
			q->len += *data_size;
			q->body[q->len] = 0;
		}
		*data_size = 0;
		return MHD_YES;
	}
	if (q->too_big)
		return fail(c, MHD_HTTP_CONTENT_TOO_LARGE,
			    "the body is larger than 1 MiB");
	if (!strcmp(url, "/v1/models") || !strcmp(url, "/health")) {
		if (!get)
			return fail(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "use GET here");
		return reply(c, MHD_HTTP_OK, url[1] == 'h' ?
			     strdup("{\"status\":\"ok\"}") : tp_oai_models(s));
	}
	if (!chat && !comp) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "no such path: %.80s (/v1/completions, /v1/chat/completions, /v1/models)",
			 url);
		return fail(c, MHD_HTTP_NOT_FOUND, msg);
	}
	if (!post)
		return fail(c, MHD_HTTP_METHOD_NOT_ALLOWED, "use POST here");
	return generate(c, s, q, chat);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *q = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (q) {
		free(q->body);
		free(q);
		*con_cls = NULL;
	}
}

struct tp_http *tp_http_start(const char *addr_port, const struct tp_srv *s,
			      char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	const union MHD_DaemonInfo *di;
	struct tp_peer_addr pa;
	struct addrinfo *ai;
	struct tp_http *h;
	unsigned int flags;
	int r;

	if (tp_parse_peers(addr_port, &pa, 1, err, errlen) != 1) {
		snprintf(err, errlen, "--http %s: want ADDR:PORT", addr_port);
		return NULL;
	}
	r = getaddrinfo(pa.host, pa.port, &hints, &ai);
	if (r) {
		snprintf(err, errlen, "--http %s: %s", addr_port,
			 gai_strerror(r));
		return NULL;
	}
	flags = MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG |
		(ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0);
	h = tp_calloc(1, sizeof(*h));
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, (void *)s,
				MHD_OPTION_SOCK_ADDR, ai->ai_addr,
				MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_CONNECTION_TIMEOUT, 600u,
				MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!h->d) {
		snprintf(err, errlen, "--http %s: cannot listen there (in use?)",
			 addr_port);
		free(h);
		return NULL;
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, "tprun: serving %s on http://%s%s%s:%u/v1/\n", s->model_name,
	       strchr(pa.host, ':') ? "[" : "", pa.host,
	       strchr(pa.host, ':') ? "]" : "", di ? di->port : 0);
	return h;
}

void tp_http_stop(struct tp_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
