// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun serve's job queue; see job_queue.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "cmd/job_queue.h"
#include "text/utf8.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* any change: a new job, new text, an end */
	struct tp_job *head, *tail;
	int n;
	unsigned long long next_id;
	struct tp_job *running;	/* taken by tp_job_next, not ended yet */
	int http_open;		/* requests the HTTP side has not answered */
	char stop[512];		/* why the server stopped ("": it runs) */
} Q = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

struct tp_job *tp_job_new(void)
{
	struct tp_job *j = tp_calloc(1, sizeof(*j));

	j->refs = 1;
	j->text = tp_calloc(1, 1);
	j->cap = 1;
	return j;
}

static void deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

int tp_job_queue(struct tp_job *j)
{
	pthread_mutex_lock(&Q.lock);
	if (Q.stop[0]) {
		pthread_mutex_unlock(&Q.lock);
		return -2;
	}
	if (Q.n >= TP_QUEUE_MAX) {
		pthread_mutex_unlock(&Q.lock);
		return -1;
	}
	j->id = ++Q.next_id;
	j->refs++;
	j->next = NULL;
	if (Q.tail)
		Q.tail->next = j;
	else
		Q.head = j;
	Q.tail = j;
	Q.n++;
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
	return 0;
}

static struct tp_job *pop(void)
{
	struct tp_job *j = Q.head;

	if (j) {
		Q.head = j->next;
		if (!Q.head)
			Q.tail = NULL;
		Q.n--;
	}
	return j;
}

struct tp_job *tp_job_next(int timeout_ms)
{
	struct timespec ts;
	struct tp_job *j;
	int r = 0;

	deadline(&ts, timeout_ms);
	pthread_mutex_lock(&Q.lock);
	for (;;) {
		while ((j = pop()) && j->cancelled) {
			j->done = 1;
			pthread_cond_broadcast(&Q.cond);
			pthread_mutex_unlock(&Q.lock);
			tp_job_put(j);
			pthread_mutex_lock(&Q.lock);
		}
		if (j || r == ETIMEDOUT)
			break;
		r = pthread_cond_timedwait(&Q.cond, &Q.lock, &ts);
	}
	Q.running = j;
	pthread_mutex_unlock(&Q.lock);
	return j;
}

void tp_job_append(struct tp_job *j, const char *s, size_t n, int ntok)
{
	size_t i;

	pthread_mutex_lock(&Q.lock);
	/* at most 3 bytes out for each byte in (U+FFFD for a bad byte) */
	if (j->len + 3 * n + 1 > j->cap) {
		j->cap = 2 * (j->len + 3 * n + 1);
		j->text = realloc(j->text, j->cap);
		if (!j->text)
			tp_die("out of memory");
	}
	for (i = 0; i < n;) {
		int l;
		uint32_t cp = tp_utf8_get_strict(s + i, n - i, &l);

		if (cp == 0xfffd && l == 1) {
			memcpy(j->text + j->len, "\xef\xbf\xbd", 3);
			j->len += 3;
		} else {
			memcpy(j->text + j->len, s + i, (size_t)l);
			j->len += (size_t)l;
		}
		i += (size_t)l;
	}
	j->text[j->len] = 0;
	j->ntok = ntok;
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
}

void tp_job_end(struct tp_job *j, const char *finish)
{
	pthread_mutex_lock(&Q.lock);
	if (Q.running == j)
		Q.running = NULL;
	if (!j->done)	/* a job the server's stop failed stays failed */
		j->finish = finish;
	j->done = 1;
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
}

int tp_job_cancelled(struct tp_job *j)
{
	int c;

	pthread_mutex_lock(&Q.lock);
	c = j->cancelled;
	pthread_mutex_unlock(&Q.lock);
	return c;
}

void tp_job_cancel(struct tp_job *j)
{
	pthread_mutex_lock(&Q.lock);
	j->cancelled = 1;
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
}

int tp_job_read(struct tp_job *j, size_t have, char *out, size_t cap,
		size_t *n, int timeout_ms)
{
	struct timespec ts;
	size_t k;
	int r = 0, end;

	deadline(&ts, timeout_ms);
	pthread_mutex_lock(&Q.lock);
	while (j->len <= have && !j->done && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&Q.cond, &Q.lock, &ts);
	k = j->len > have ? j->len - have : 0;
	if (k > cap) {
		k = cap;
		/* the text is valid UTF-8: do not cut a sequence */
		while (k && ((unsigned char)j->text[have + k] & 0xc0) == 0x80)
			k--;
	}
	memcpy(out, j->text + have, k);
	*n = k;
	end = j->done && have + k == j->len;
	pthread_mutex_unlock(&Q.lock);
	return end;
}

int tp_job_wait(struct tp_job *j, int timeout_ms)
{
	struct timespec ts;
	int r = 0, done;

	deadline(&ts, timeout_ms);
	pthread_mutex_lock(&Q.lock);
	while (!j->done && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&Q.cond, &Q.lock, &ts);
	done = j->done;
	pthread_mutex_unlock(&Q.lock);
	return done;
}

void tp_job_put(struct tp_job *j)
{
	int last;

	pthread_mutex_lock(&Q.lock);
	last = !--j->refs;
	pthread_mutex_unlock(&Q.lock);
	if (!last)
		return;
	free(j->prompt);
	free(j->text);
	free(j);
}

void tp_job_fail_all(const char *why)
{
	struct tp_job *j;

	pthread_mutex_lock(&Q.lock);
	if (!Q.stop[0])
		snprintf(Q.stop, sizeof(Q.stop), "%s",
			 why && *why ? why : "the server stops");
	while ((j = pop())) {
		j->done = 1;
		j->refs--;	/* the HTTP side holds another */
	}
	if (Q.running) {	/* its generation will not end it */
		Q.running->finish = NULL;
		Q.running->done = 1;
		Q.running = NULL;
	}
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
}

const char *tp_job_stopped(void)
{
	return Q.stop[0] ? Q.stop : NULL;
}

void tp_job_http(int delta)
{
	pthread_mutex_lock(&Q.lock);
	Q.http_open += delta;
	pthread_cond_broadcast(&Q.cond);
	pthread_mutex_unlock(&Q.lock);
}

int tp_job_drain(int timeout_ms)
{
	struct timespec ts;
	int r = 0, open;

	deadline(&ts, timeout_ms);
	pthread_mutex_lock(&Q.lock);
	while (Q.http_open > 0 && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&Q.cond, &Q.lock, &ts);
	open = Q.http_open;
	pthread_mutex_unlock(&Q.lock);
	return open;
}
