// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ranks connected for a command: the rendezvous over TCP, then the
 * all-reduce's transport (RDMA, or TCP over the rendezvous' data
 * connections), then the liveness monitor; and their teardown.
 */
#include <stdlib.h>
#include <unistd.h>

#include "base/util.h"
#include "cmd/connect.h"
#include "comm/liveness.h"
#include "comm/transport.h"

/* More ranks on this machine than it has CPUs. */
int tp_oversubscribed(const struct tp_opts *o)
{
	int here = o->local ? o->nranks : o->local_size ? o->local_size : 1;

	return here > sysconf(_SC_NPROCESSORS_ONLN);
}

int tp_spin_us(const struct tp_opts *o)
{
	if (o->spin_us >= 0)
		return o->spin_us;
	return tp_oversubscribed(o) ? 0 : 1000;
}

int tp_connect_ranks(struct tp_opts *o, uint64_t hash, size_t max_floats,
		     struct tp_rdv *rdv, struct tp_xport **rdma,
		     struct tp_xport **tcp)
{
	struct tp_peer_addr *peers;
	int me = o->rank, N = o->nranks, lfd = o->listen_fd, p, n;
	size_t sb, rb;
	char err[300];

	peers = tp_calloc(TP_MAX_RANKS, sizeof(*peers));
	n = tp_parse_peers(o->peers, peers, TP_MAX_RANKS, err, sizeof(err));
	if (n != N) {
		tp_err("%s", n < 0 ? err : "--peers must list every rank");
		goto fail;
	}
	if (lfd < 0) {
		lfd = tp_listen(o->listen_host, peers[me].port, err,
				sizeof(err));
		if (lfd < 0) {
			tp_err("%s", err);
			goto fail;
		}
	}
	tp_info("rendezvous: %d ranks, listening on port %s", N,
		peers[me].port);
	p = tp_rdv_connect(rdv, me, N, peers, lfd, hash,
			   o->connect_timeout_ms);
	close(lfd);
	o->listen_fd = -1;
	if (p)
		goto fail;
	tp_ar_sizes(N, o->algo, max_floats, &sb, &rb);
	if (o->transport == TP_TR_RDMA) {
		*rdma = tp_rdma_new(o->device, o->ib_port, o->gid_index, me, N,
				    sb, rb, tp_spin_us(o), tp_oversubscribed(o),
				    o->timeout_ms);
		if (!*rdma)
			goto fail;
		tp_info("RDMA on %s", tp_rdma_describe(*rdma));
		for (p = 0; p < N; p++) {
			unsigned char out[TP_RDMA_INFO_LEN], in[TP_RDMA_INFO_LEN];

			if (p == me)
				continue;
			tp_rdma_info(*rdma, p, out);
			if (tp_rdv_xchg(rdv, p, out, in, sizeof(out),
					o->connect_timeout_ms) ||
			    tp_rdma_connect(*rdma, p, in))
				goto fail;
		}
		/* nobody writes before every QP is ready to receive */
		if (tp_rdv_barrier(rdv, o->connect_timeout_ms))
			goto fail;
	}
	if (o->transport == TP_TR_TCP || o->compare)
		*tcp = tp_tcp_new(rdv->data, (const char (*)[280])rdv->name, me,
				  N, sb, rb, o->tcp_spin_us, o->timeout_ms);
	if (tp_mon_start(rdv, o->peer_timeout_ms))
		goto fail;
	free(peers);
	return 0;
fail:
	free(peers);
	return -1;
}

void tp_disconnect_ranks(struct tp_rdv *rdv, struct tp_xport *rdma,
			 struct tp_xport *tcp)
{
	if (rdma)
		rdma->ops->destroy(rdma);
	if (tcp)
		tcp->ops->destroy(tcp);
	tp_rdv_close(rdv);
}
