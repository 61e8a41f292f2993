// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ranks connected for a command: the rendezvous over TCP, then the
 * all-reduce's transport (RDMA, or TCP over the rendezvous' data
 * connections), then the liveness monitor; and their teardown.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "cmd/connect.h"
#include "comm/liveness.h"
#include "comm/route.h"
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

/* Rank 0's table of every rank's device per peer ("" : over IP only). */
static char (*link_dev)[TP_MAX_RANKS][TP_LINK_NAME];

const char *tp_link_device(int rank, int peer)
{
	return link_dev ? link_dev[rank][peer] : NULL;
}

/*
 * Every rank sends rank 0 its device per peer over the control
 * connection (the others' answers from rank 0 are its own, unused).
 */
static int gather_links(const struct tp_opts *o, struct tp_rdv *rdv,
			struct tp_xport *x)
{
	size_t len = (size_t)TP_MAX_RANKS * TP_LINK_NAME;
	char (*mine)[TP_LINK_NAME] = tp_calloc(TP_MAX_RANKS, TP_LINK_NAME);
	char (*theirs)[TP_LINK_NAME] = tp_calloc(TP_MAX_RANKS, TP_LINK_NAME);
	char gid[64];
	int p, r, ret = 0;

	for (p = 0; p < o->nranks; p++)
		if (p != o->rank)
			tp_rdma_link(x, p, mine[p], TP_LINK_NAME, gid,
				     sizeof(gid));
	if (o->rank == 0) {
		free(link_dev);
		link_dev = tp_calloc(TP_MAX_RANKS, sizeof(*link_dev));
		memcpy(link_dev[0], mine, len);
	}
	for (r = 0; r < o->nranks && !ret; r++) {
		if (r == o->rank || (o->rank && r))
			continue;
		ret = tp_rdv_xchg(rdv, r, mine, theirs, len,
				  o->connect_timeout_ms);
		if (!ret && o->rank == 0) {
			for (p = 0; p < TP_MAX_RANKS; p++)
				theirs[p][TP_LINK_NAME - 1] = 0;
			memcpy(link_dev[r], theirs, len);
		}
	}
	free(mine);
	free(theirs);
	return ret;
}

/*
 * Which device serves each peer (LINKS[peer]): what -d says, else the
 * device on the route to the peer's address (route.c), else none (the
 * peer is reached over IP only: a route through a gateway, or no
 * device with the route's source address).
 */
static int pick_links(const struct tp_opts *o, const struct tp_rdv *rdv,
		      struct tp_rdma_link *links)
{
	int me = o->rank, p;

	for (p = 0; p < o->nranks; p++) {
		const struct tp_route *rt = &rdv->route[p];
		struct tp_rdma_link *l = &links[p];
		int r;

		memset(l, 0, sizeof(*l));
		l->gid_index = o->gid_index;
		if (p == me)
			continue;
		r = tp_opts_peer_device(o, me, p, l->dev, sizeof(l->dev));
		if (r < 0) {
			tp_err("-d %s has no device for %srank %d", o->devices,
			       o->local_rank >= 0 ? "local " : "",
			       o->local_rank >= 0 ? o->local_rank : me);
			return -1;
		}
		if (r) {
			if (!strcmp(l->dev, "none"))
				l->dev[0] = 0;
			tp_info("rank %d: %s (-d)", p,
				l->dev[0] ? l->dev : "over IP only");
			continue;
		}
		if (rt->onlink && !tp_route_device(rt, o->ib_port, l->dev,
						   sizeof(l->dev),
						   &l->gid_index)) {
			if (o->gid_index >= 0)
				l->gid_index = o->gid_index;
			tp_info("rank %d (%s): %s, GID %d (the route to it leaves by %s from %s)",
				p, rdv->name[p], l->dev, l->gid_index,
				rt->ifname, rt->src);
		} else {
			tp_info("rank %d (%s): over IP only (%s)", p,
				rdv->name[p], !rt->src[0] ? "no route to it" :
				!rt->onlink ? "its route has a gateway: no cable" :
				"no RDMA device has the route's source address");
		}
	}
	return 0;
}

/*
 * The RDMA transport: a QP per peer on its device, connected over the
 * control connections; then whether the links carry the algorithm, and
 * (rank 0) every rank's device per peer, for the report.
 */
static int connect_rdma(struct tp_opts *o, struct tp_rdv *rdv, size_t sb,
			size_t rb, struct tp_xport **rdma)
{
	struct tp_rdma_link *links = tp_calloc(TP_MAX_RANKS, sizeof(*links));
	int me = o->rank, N = o->nranks, p, ret = -1;
	char err[300];

	if (pick_links(o, rdv, links))
		goto out;
	*rdma = tp_rdma_new(links, o->ib_port, me, N, sb, rb, tp_spin_us(o),
			    tp_oversubscribed(o), o->timeout_ms);
	if (!*rdma)
		goto out;
	for (p = 0; p < N; p++) {
		unsigned char out[TP_RDMA_INFO_LEN], in[TP_RDMA_INFO_LEN];

		if (p == me)
			continue;
		tp_rdma_info(*rdma, p, out);
		if (tp_rdv_xchg(rdv, p, out, in, sizeof(out),
				o->connect_timeout_ms) ||
		    tp_rdma_connect(*rdma, p, in))
			goto out;
	}
	tp_info("RDMA on %s", tp_rdma_describe(*rdma));
	if (tp_ar_links_check(*rdma, o->algo, err, sizeof(err))) {
		tp_err("%s", err);
		goto out;
	}
	if (gather_links(o, rdv, *rdma))
		goto out;
	/* nobody writes before every QP is ready to receive */
	ret = tp_rdv_barrier(rdv, o->connect_timeout_ms);
out:
	free(links);
	return ret;
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
	o->listen_fd = -1;
	if (p) {
		close(lfd);
		goto fail;
	}
	tp_rdv_turn_away(rdv, lfd);
	tp_ar_sizes(N, o->algo, max_floats, &sb, &rb);
	if (o->transport == TP_TR_RDMA && connect_rdma(o, rdv, sb, rb, rdma))
		goto fail;
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
