// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's rendezvous, TCP all-reduce transport and liveness monitor
 * (tools/runner/comm/{rendezvous,tcp,liveness}.c) as N real processes on
 * 127.0.0.1:
 *  - they meet, run 300 all-reduces (mesh and ring) with exact sums, agree
 *    at the end and exit 0;
 *  - a rank started with another configuration is refused by name;
 *  - a rank killed with SIGKILL: every other rank exits non-zero, naming
 *    it, within 10 s;
 *  - a rank that hangs (SIGSTOP): the others notice the silence and exit
 *    with code 3 within the peer timeout plus a little;
 *  - ranks that generated different tokens fail at the end;
 *  - peer lists with several addresses a rank, and which one a host
 *    reaches a peer at (route.c: the kernel's route, as RDMA CM asks).
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "comm/allreduce.h"
#include "comm/liveness.h"
#include "comm/rendezvous.h"
#include "comm/transport.h"
#include "tap.h"

#define N 3
#define MAXF 2048

enum scenario { OK, MISMATCH, KILL, STOP, DIVERGE };

static int child(int rank, const int *lfd, const struct tp_peer_addr *peers,
		 enum scenario sc)
{
	struct tp_rdv rdv;
	struct tp_xport *x;
	struct tp_ar ar;
	size_t sb, rb, i, n;
	float *v = calloc(MAXF, sizeof(float));
	uint64_t hash = 42 + (sc == MISMATCH && rank == 2);
	int k, r;

	tp_log_rank = rank;
	for (r = 0; r < N; r++)
		if (r != rank)
			close(lfd[r]);
	if (tp_rdv_connect(&rdv, rank, N, peers, lfd[rank], hash, 10000))
		return 1;
	tp_ar_sizes(N, TP_ALGO_AUTO, MAXF, &sb, &rb);
	/* odd ranks sleep in poll() at once, even ones spin first */
	x = tp_tcp_new(rdv.data, (const char (*)[280])rdv.name, rank, N, sb,
		       rb, rank % 2 ? 0 : 200, 20000);
	tp_ar_init(&ar, x, TP_ALGO_AUTO, 256, MAXF);
	/* short only where silence is the point: a loaded machine may
	 * starve a rank's heartbeats for a while */
	if (tp_mon_start(&rdv, sc == STOP ? 1500 : 10000))
		return 1;
	for (k = 0; k < 300; k++) {
		n = 1 + (size_t)(k * 37) % MAXF;	/* mesh and ring sizes */
		if ((sc == KILL || sc == STOP) && rank == 1 && k == 30)
			raise(sc == KILL ? SIGKILL : SIGSTOP);
		for (i = 0; i < n; i++)
			v[i] = (float)(rank * 1000 + k + (int)i % 7);
		if (tp_allreduce(&ar, v, n)) {
			tp_mon_abort(-1);	/* as tprun does */
			return 1;
		}
		for (i = 0; i < n; i++)
			if (v[i] != (float)(3000 + 3 * k + 3 * ((int)i % 7))) {
				tp_err("wrong sum at call %d element %zu", k, i);
				return 1;
			}
	}
	if (tp_mon_finish(sc == DIVERGE && rank == 0 ? 1 : 2, 10000))
		return 1;
	return 0;
}

static int port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	getsockname(fd, (struct sockaddr *)&sa, &len);
	return ntohs(sa.sin_port);
}

struct outcome {
	int status[N];
	double secs[N];		/* exit time after the first exit */
	char log[8192];
};

static void launch(enum scenario sc, struct outcome *o)
{
	struct tp_peer_addr peers[N];
	int lfd[N], r, left = N, pipefd[2];
	pid_t pid[N];
	uint64_t first = 0;
	char err[256];
	ssize_t got;
	size_t len = 0;

	memset(o, 0, sizeof(*o));
	if (pipe(pipefd))
		bail_out("pipe");
	for (r = 0; r < N; r++) {
		lfd[r] = tp_listen("127.0.0.1", "0", err, sizeof(err));
		if (lfd[r] < 0)
			bail_out("%s", err);
		snprintf(peers[r].host, sizeof(peers[r].host), "127.0.0.1");
		snprintf(peers[r].port, sizeof(peers[r].port), "%d",
			 port_of(lfd[r]));
	}
	fflush(stdout);
	for (r = 0; r < N; r++) {
		pid[r] = fork();
		if (pid[r] == 0) {
			close(pipefd[0]);
			dup2(pipefd[1], 2);
			_exit(child(r, lfd, peers, sc));
		}
	}
	close(pipefd[1]);
	for (r = 0; r < N; r++)
		close(lfd[r]);
	while (left) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG | WUNTRACED);

		if (p > 0) {
			for (r = 0; r < N && pid[r] != p; r++)
				;
			if (WIFSTOPPED(st)) {	/* the hung rank: time it */
				first = tp_now_ns();
				continue;
			}
			if (!first)
				first = tp_now_ns();
			o->status[r] = st;
			o->secs[r] = (double)(tp_now_ns() - first) / 1e9;
			left--;
			pid[r] = 0;
			continue;
		}
		if (first && tp_now_ns() - first > 30000000000ull) {
			for (r = 0; r < N; r++)
				if (pid[r]) {
					kill(pid[r], SIGKILL);
					o->secs[r] = 99;
				}
		}
		/* the stopped rank is released once the others are gone */
		if (sc == STOP && left == 1 && pid[1])
			kill(pid[1], SIGKILL);
		usleep(10000);
	}
	while (len < sizeof(o->log) - 1 &&
	       (got = read(pipefd[0], o->log + len, sizeof(o->log) - 1 - len)) > 0)
		len += (size_t)got;
	close(pipefd[0]);
}

static int exited(int st, int code)
{
	return WIFEXITED(st) && (code < 0 ? WEXITSTATUS(st) != 0 :
				 WEXITSTATUS(st) == code);
}

static void test_peer_lists(void)
{
	struct tp_peer_addr pa[4];
	struct tp_route rt;
	char err[200], addrs[512];
	int n;

	n = tp_parse_peers("10.0.0.1:5,10.1.0.2|10.2.0.2:6,[fe80::1]|[2001:db8::2]|h:7",
			   pa, 4, err, sizeof(err));
	ok(n == 3 && !strcmp(pa[0].host, "10.0.0.1") && !pa[0].nalt &&
	   !strcmp(pa[0].port, "5") && pa[1].nalt == 1 &&
	   !strcmp(tp_peer_host(&pa[1], 1), "10.2.0.2") &&
	   !strcmp(pa[1].port, "6") && pa[2].nalt == 2 &&
	   !strcmp(pa[2].host, "fe80::1") &&
	   !strcmp(tp_peer_host(&pa[2], 1), "2001:db8::2") &&
	   !strcmp(tp_peer_host(&pa[2], 2), "h") && !strcmp(pa[2].port, "7"),
	   "peer list: one address, a|b:port, [v6]|[v6]|name:port");
	ok(tp_parse_peers("a|:1", pa, 4, err, sizeof(err)) < 0 &&
	   tp_parse_peers("|a:1", pa, 4, err, sizeof(err)) < 0 &&
	   tp_parse_peers("a|b", pa, 4, err, sizeof(err)) < 0 &&
	   tp_parse_peers("a|b|c|d|e|f|g|h|i:1", pa, 4, err, sizeof(err)) < 0 &&
	   tp_parse_peers("[::1:1", pa, 4, err, sizeof(err)) < 0,
	   "peer list: empty addresses, no port, more than 8 addresses, an open bracket refused (%s)",
	   err);
	ok(!tp_route_get("127.0.0.1", &rt) && rt.onlink && rt.local &&
	   !strcmp(rt.src, "127.0.0.1") && rt.ifindex > 0,
	   "route to 127.0.0.1: on this host, by %s, from %s", rt.ifname,
	   rt.src);
	ok(tp_route_get("not-an-address", &rt) < 0 &&
	   tp_route_get("0.0.0.0.1", &rt) < 0,
	   "no route for what is no address");
	tp_parse_peers("127.0.0.1|127.0.0.2:1,198.51.100.7|127.0.0.1:1", pa, 4,
		       err, sizeof(err));
	ok(tp_peer_pick(&pa[0], &rt) == 0 && tp_peer_pick(&pa[1], &rt) != 1,
	   "a peer's first address may be this host's (ranks on one host), another never is");
	n = tp_local_addrs(addrs, sizeof(addrs));
	ok(n >= 0 && !strstr(addrs, "127.0.0.1") && !strstr(addrs, "[::1]"),
	   "this host's addresses for the rendezvous: %d (%s), no loopback", n,
	   addrs);
}

int main(void)
{
	struct outcome o;

	plan(NO_PLAN);
	signal(SIGPIPE, SIG_IGN);
	test_peer_lists();

	launch(OK, &o);
	ok(exited(o.status[0], 0) && exited(o.status[1], 0) &&
	   exited(o.status[2], 0),
	   "3 ranks meet, run 300 all-reduces over TCP with exact sums, agree, exit 0");
	if (o.log[0])
		diag("%s", o.log);

	launch(MISMATCH, &o);
	ok(exited(o.status[0], -1) && exited(o.status[1], -1) &&
	   exited(o.status[2], -1) && strstr(o.log, "different configuration"),
	   "a rank with another configuration: every rank fails, the message says why");
	diag("%.300s", o.log);

	launch(KILL, &o);
	ok(WIFSIGNALED(o.status[1]) && exited(o.status[0], -1) &&
	   exited(o.status[2], -1) && o.secs[0] < 10 && o.secs[2] < 10 &&
	   strstr(o.log, "rank 1"),
	   "rank 1 killed: ranks 0 and 2 exit non-zero after %.2f and %.2f s, naming rank 1",
	   o.secs[0], o.secs[2]);
	diag("%.400s", o.log);

	launch(STOP, &o);
	ok(exited(o.status[0], TP_EXIT_PEER) && exited(o.status[2], TP_EXIT_PEER) &&
	   o.secs[0] < 6 && o.secs[2] < 6 && strstr(o.log, "silent"),
	   "rank 1 hangs: ranks 0 and 2 exit with code 3 after %.2f and %.2f s (peer timeout 1.5 s)",
	   o.secs[0], o.secs[2]);
	diag("%.400s", o.log);

	launch(DIVERGE, &o);
	ok(exited(o.status[1], -1) && exited(o.status[2], -1) &&
	   strstr(o.log, "generated different tokens"),
	   "ranks whose tokens differ fail at the end");
	diag("%.300s", o.log);
	return done();
}
