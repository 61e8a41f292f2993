// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The liveness thread; see liveness.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"
#include "comm/liveness.h"

#define HEARTBEAT_NS 250000000u

static struct {
	struct tp_rdv *r;
	pthread_t thread;
	int running;
	uint64_t peer_timeout_ns;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int finishing;		/* main asked for bye */
	uint64_t hash;
	int done;		/* every peer said bye (or failure) */
	int failed;
	uint64_t last_seen[TP_MAX_RANKS];
	int bye[TP_MAX_RANKS];
	int closed[TP_MAX_RANKS];
	uint64_t bye_hash[TP_MAX_RANKS];
	unsigned char buf[TP_MAX_RANKS][16];
	int buflen[TP_MAX_RANKS];
	void (*on_lost)(const char *why);	/* before the exit */
	uint64_t stalled_ns, stalled_at;	/* our own last stall */
} M = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* 'A' and the rank that is the cause (ourselves: our own failure). */
static void send_abort(int culprit)
{
	unsigned char b[2] = { 'A', (unsigned char)culprit };
	int p;

	for (p = 0; p < M.r->nranks; p++)
		if (p != M.r->rank && M.r->ctrl[p] >= 0)
			(void)!send(M.r->ctrl[p], b, sizeof(b),
				    MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Rank P is gone or failing: say so, tell the others (TELL), exit. */
static _Noreturn void lost_tell(int p, const char *why, int tell)
{
	char msg[600];
	uint64_t now = tp_now_ns();

	snprintf(msg, sizeof(msg), "rank %d (%s) %s", p, M.r->name[p], why);
	/* we ourselves were stopped (a paused machine) and come back late:
	 * the others have given us up */
	if (M.stalled_ns > M.peer_timeout_ns &&
	    now - M.stalled_at < 2 * M.peer_timeout_ns + 5000000000ull)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 " (this rank itself did not run for %.1f s: it comes back late, the others have given it up)",
			 (double)M.stalled_ns / 1e9);
	tp_err("%s: exiting", msg);
	if (tell)
		send_abort(p);
	if (M.on_lost)
		M.on_lost(msg);
	_exit(TP_EXIT_PEER);
}

static _Noreturn void lost(int p, const char *why)
{
	lost_tell(p, why, 1);
}

static void send_all(const unsigned char *b, size_t len)
{
	int p;

	for (p = 0; p < M.r->nranks; p++)
		if (p != M.r->rank && !M.closed[p] &&
		    send(M.r->ctrl[p], b, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
		    errno != EAGAIN && !M.bye[p])
			lost(p, "is unreachable (its control connection failed: the process died or the link is down)");
}

/*
 * Messages: 'H' heartbeat; 'A' + the rank at fault (the sender itself, or
 * the rank it lost); 'B' + 8 bytes of token hash.
 */
static void input(int p)
{
	unsigned char *b = M.buf[p];
	ssize_t n = recv(M.r->ctrl[p], b + M.buflen[p],
			 sizeof(M.buf[p]) - (size_t)M.buflen[p], MSG_DONTWAIT);
	int i, used;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (M.bye[p]) {
			M.closed[p] = 1;	/* a normal end */
			return;
		}
		lost(p, n == 0 ? "closed its control connection before the end: the process died" :
		     "lost its control connection (reset): the process died or the link is down");
	}
	M.buflen[p] += (int)n;
	M.last_seen[p] = tp_now_ns();
	for (used = 0; used < M.buflen[p];) {
		switch (b[used]) {
		case 'H':
			used++;
			break;
		case 'A': {
			int c;
			char why[96];

			if (M.buflen[p] - used < 2)
				goto keep;
			c = b[used + 1];
			if (c == M.r->rank) {
				char me[200];

				/* P may only pass on what another rank found */
				snprintf(me, sizeof(me),
					 "says this rank (%d) was given up: a rank had no answer from it in time (was this machine stopped, or is a link to it down?)",
					 c);
				lost_tell(p, me, 0);
			}
			if (c == p || c >= M.r->nranks)
				lost(p, "failed (see its messages)");
			snprintf(why, sizeof(why), "is gone (rank %d lost it)", p);
			lost(c, why);
		}
		case 'B':
			if (M.buflen[p] - used < 9)
				goto keep;
			M.bye_hash[p] = 0;
			for (i = 1; i < 9; i++)
				M.bye_hash[p] = M.bye_hash[p] << 8 | b[used + i];
			M.bye[p] = 1;
			used += 9;
			break;
		default:
			lost(p, "sent garbage on its control connection");
		}
	}
keep:
	memmove(b, b + used, (size_t)(M.buflen[p] - used));
	M.buflen[p] -= used;
}

static void *monitor(void *arg)
{
	uint64_t next_hb = 0, prev = tp_now_ns();
	int sent_bye = 0;

	(void)arg;
	for (;;) {
		struct pollfd pf[TP_MAX_RANKS];
		int idx[TP_MAX_RANKS], n = 0, p, i, all;
		uint64_t now = tp_now_ns();

		/*
		 * We did not run for a second (a stopped process, a paused
		 * virtual machine): the silence we would see is ours, not
		 * the peers'. Start counting again.
		 */
		if (now - prev > 1000000000u) {
			for (p = 0; p < M.r->nranks; p++)
				M.last_seen[p] = now;
			M.stalled_ns = now - prev;
			M.stalled_at = now;
		}
		prev = now;

		pthread_mutex_lock(&M.lock);
		if (M.finishing && !sent_bye) {
			unsigned char b[9] = { 'B' };

			for (i = 1; i < 9; i++)
				b[i] = (unsigned char)(M.hash >> (8 * (8 - i)));
			send_all(b, sizeof(b));
			sent_bye = 1;
		}
		pthread_mutex_unlock(&M.lock);
		if (now >= next_hb) {
			send_all((const unsigned char *)"H", 1);
			next_hb = now + HEARTBEAT_NS;
		}
		for (p = 0, all = 1; p < M.r->nranks; p++) {
			if (p == M.r->rank)
				continue;
			if (!M.bye[p])
				all = 0;
			if (!M.bye[p] && now - M.last_seen[p] > M.peer_timeout_ns) {
				char why[128];

				snprintf(why, sizeof(why),
					 "has been silent for %.1f s: it hangs or the link is down",
					 (double)(now - M.last_seen[p]) / 1e9);
				lost(p, why);
			}
			if (M.closed[p])
				continue;
			pf[n].fd = M.r->ctrl[p];
			pf[n].events = POLLIN;
			idx[n++] = p;
		}
		if (sent_bye && all) {
			pthread_mutex_lock(&M.lock);
			M.done = 1;
			pthread_cond_broadcast(&M.cond);
			pthread_mutex_unlock(&M.lock);
			return NULL;
		}
		if (poll(pf, (nfds_t)n, 100) > 0)
			for (i = 0; i < n; i++)
				if (pf[i].revents)
					input(idx[i]);
	}
}

int tp_mon_start(struct tp_rdv *r, int peer_timeout_ms)
{
	uint64_t now = tp_now_ns();
	int p;

	M.r = r;
	M.peer_timeout_ns = (uint64_t)peer_timeout_ms * 1000000u;
	for (p = 0; p < r->nranks; p++)
		M.last_seen[p] = now;
	if (pthread_create(&M.thread, NULL, monitor, NULL)) {
		tp_err("cannot start the monitor thread");
		return -1;
	}
	M.running = 1;
	return 0;
}

int tp_mon_finish(uint64_t token_hash, int timeout_ms)
{
	struct timespec ts;
	int p, ret = 0, r = 0;

	if (!M.running)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&M.lock);
	M.hash = token_hash;
	M.finishing = 1;
	while (!M.done && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&M.cond, &M.lock, &ts);
	pthread_mutex_unlock(&M.lock);
	if (!M.done) {
		for (p = 0; p < M.r->nranks; p++)
			if (p != M.r->rank && !M.bye[p])
				tp_err("rank %d (%s) did not finish within %d ms",
				       p, M.r->name[p], timeout_ms);
		return -1;	/* the thread keeps watching until exit */
	}
	pthread_join(M.thread, NULL);
	M.running = 0;
	for (p = 0; p < M.r->nranks; p++)
		if (p != M.r->rank && M.bye_hash[p] != token_hash) {
			tp_err("rank %d generated different tokens (hash %016llx, ours %016llx): the ranks diverged",
			       p, (unsigned long long)M.bye_hash[p],
			       (unsigned long long)token_hash);
			ret = -1;
		}
	return ret;
}

void tp_mon_on_lost(void (*fn)(const char *why))
{
	M.on_lost = fn;
}

void tp_mon_abort(int culprit)
{
	if (!M.r)
		return;
	/*
	 * Our failure is often a peer's death seen from the data path; give
	 * the monitor a moment to see it too: it then exits naming that
	 * rank, which is the message the others should get.
	 */
	if (M.running)
		usleep(300000);
	if (culprit < 0 || culprit >= M.r->nranks)
		culprit = M.r->rank;
	send_abort(culprit);
}
