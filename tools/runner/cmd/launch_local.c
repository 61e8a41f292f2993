// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --local N: N ranks on this machine. The launcher opens N listening
 * sockets (ports chosen by the kernel, so runs never collide), each on
 * its rank's device's IPv4 address (the address of the netdev behind an
 * RDMA device, read from its IPv4-mapped GID), else on 127.0.0.1: the
 * rendezvous and the TCP transport then cross the same link as RDMA,
 * forks one process per rank with its socket and the peer list, and
 * waits. Rank 0 prints the report. When a rank fails, the others notice
 * by themselves (comm/liveness.c); any still running 10 s later are killed.
 * The exit code is 0 only if every rank exited 0.
 */
#include <arpa/inet.h>
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
#include "cmd/launch_local.h"
#include "cmd/rank.h"
#include "comm/rendezvous.h"
#include "model/arch/registry.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/*
 * The IPv4 address of DEV's netdev: its port's first IPv4-mapped GID
 * (::ffff:a.b.c.d), or 127.0.0.1 when it has none (an InfiniBand port, a
 * netdev without an address) or no device is named.
 */
static void device_ipv4(const struct tp_opts *o, const char *dev,
			char out[INET_ADDRSTRLEN])
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	char path[400], line[64];
	struct in6_addr a;
	int i;

	snprintf(out, INET_ADDRSTRLEN, "127.0.0.1");
	for (i = 0; *dev && i < 256; i++) {
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/gids/%d", dev,
			 o->ib_port, o->gid_index >= 0 ? o->gid_index : i);
		f = fopen(path, "r");
		if (!f)
			return;
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		line[strcspn(line, "\n")] = 0;
		if (inet_pton(AF_INET6, line, &a) == 1 &&
		    !memcmp(a.s6_addr, v4, 12) &&
		    (a.s6_addr[12] | a.s6_addr[13] | a.s6_addr[14] |
		     a.s6_addr[15])) {
			inet_ntop(AF_INET, a.s6_addr + 12, out, INET_ADDRSTRLEN);
			return;
		}
		if (o->gid_index >= 0)
			return;
	}
}

int tp_launch_local(struct tp_opts *o)
{
	int N = o->local, i, alive, rc = 0, failed = -1;
	int lfd[TP_MAX_RANKS];
	pid_t pid[TP_MAX_RANKS];
	char dev[64], err[300];
	size_t pos = 0, cap = TP_MAX_RANKS * 24;
	char *peers = tp_calloc(cap, 1);
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t deadline = 0;

	for (i = 0; i < N; i++)
		if (tp_opts_device(o, i, dev, sizeof(dev))) {
			tp_err("--devices %s: give one device for all ranks or one per rank (%d)",
			       o->devices, N);
			return TP_EXIT_USAGE;
		}
	o->nranks = N;
	if (N == 1)
		return tp_rank_main(o);
	/* one message, not one per rank (a GGUF file is checked by each) */
	if (o->synthetic &&
	    tp_synth_check_arch(o->arch, &o->cfg, o->wtype, N, err,
				sizeof(err))) {
		tp_err("%s", err);
		return TP_EXIT_USAGE;
	}
	for (i = 0; i < N; i++) {
		char ip[INET_ADDRSTRLEN];

		tp_opts_device(o, i, dev, sizeof(dev));
		device_ipv4(o, dev, ip);
		lfd[i] = tp_listen(ip, "0", err, sizeof(err));
		if (lfd[i] < 0) {
			tp_err("%s", err);
			return TP_EXIT_FAIL;
		}
		tp_appendf(peers, cap, &pos, "%s%s:%d", i ? "," : "", ip,
			   tp_sock_port(lfd[i]));
	}
	o->peers = peers;
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < N; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			tp_die("fork: %s", strerror(errno));
		if (pid[i] == 0) {
			int j;

			for (j = 0; j < N; j++)
				if (j != i)
					close(lfd[j]);
			o->rank = i;
			o->listen_fd = lfd[i];
			exit(tp_rank_main(o));
		}
	}
	for (i = 0; i < N; i++)
		close(lfd[i]);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	for (alive = N; alive;) {
		int st, code;
		pid_t p = waitpid(-1, &st, deadline ? WNOHANG : 0);

		if (got_signal) {
			for (i = 0; i < N; i++)
				if (pid[i] > 0)
					kill(pid[i], SIGTERM);
			if (!rc)
				rc = 128 + got_signal;
			got_signal = 0;
			if (!deadline)
				deadline = tp_now_ns() + 10000000000ull;
		}
		if (p < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p == 0) {
			if (tp_now_ns() > deadline) {
				for (i = 0; i < N; i++)
					if (pid[i] > 0) {
						tp_err("rank %d (pid %d) still runs 10 s after rank %d failed: killing it",
						       i, (int)pid[i], failed);
						kill(pid[i], SIGKILL);
					}
				deadline = tp_now_ns() + 60000000000ull;
			}
			usleep(20000);
			continue;
		}
		for (i = 0; i < N && pid[i] != p; i++)
			;
		if (i == N)
			continue;
		pid[i] = 0;
		alive--;
		if (WIFEXITED(st) && !WEXITSTATUS(st))
			continue;
		if (WIFSIGNALED(st)) {
			tp_err("rank %d (pid %d) was killed by signal %d (%s)", i,
			       (int)p, WTERMSIG(st), strsignal(WTERMSIG(st)));
			code = TP_EXIT_FAIL;
		} else {
			code = WEXITSTATUS(st);
			tp_info("rank %d (pid %d) exited with code %d", i, (int)p,
				code);
		}
		if (!rc) {
			rc = code;
			failed = i;
		}
		if (!deadline)
			deadline = tp_now_ns() + 10000000000ull;
	}
	free(peers);
	return rc;
}
