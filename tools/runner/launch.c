// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --local N: N ranks on this machine. The launcher opens N listening
 * sockets on 127.0.0.1 (ports chosen by the kernel, so runs never collide),
 * forks one process per rank with its socket and the peer list, and
 * waits. Rank 0 prints the report. When a rank fails, the others notice
 * by themselves (monitor.c); any still running 10 s later are killed.
 * The exit code is 0 only if every rank exited 0.
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

#include "rendezvous.h"
#include "run.h"
#include "util.h"

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static int port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
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
	if (o->synthetic && tp_config_check(&o->cfg, N, err, sizeof(err))) {
		tp_err("%s", err);
		return TP_EXIT_USAGE;
	}
	for (i = 0; i < N; i++) {
		lfd[i] = tp_listen("127.0.0.1", "0", err, sizeof(err));
		if (lfd[i] < 0) {
			tp_err("%s", err);
			return TP_EXIT_FAIL;
		}
		tp_appendf(peers, cap, &pos, "%s127.0.0.1:%d", i ? "," : "",
			   port_of(lfd[i]));
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
