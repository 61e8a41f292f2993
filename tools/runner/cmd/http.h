/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tprun serve's HTTP side (libmicrohttpd, a thread per connection):
 * POST /v1/completions and /v1/chat/completions (whole answers, or
 * server-sent events with "stream": true), GET /v1/models and /health.
 * Each request becomes a job (job_queue.h) that rank 0's generation loop
 * serves; errors are JSON: 400 for a bad request, 404 for an unknown
 * path, 405 for a wrong method, 413 for a body over 1 MiB, 503 when the
 * queue is full. A client that closes its connection cancels its job.
 */
#ifndef TPRUN_HTTP_H
#define TPRUN_HTTP_H

#include <stddef.h>

#include "cmd/job_queue.h"

struct tp_http;

/* Listen on ADDR:PORT ([v6]:port too; port 0: any, the one taken is
 * logged) and serve S. NULL and ERR on failure. */
struct tp_http *tp_http_start(const char *addr_port, const struct tp_srv *s,
			      char *err, size_t errlen);
void tp_http_stop(struct tp_http *h);

#endif /* TPRUN_HTTP_H */
