// SPDX-License-Identifier: GPL-2.0-only
/*
 * The network transport's part of a QP's life: its state is allocated with
 * the QP on a network device, set from the PSNs at RTR and RTS, flushed on
 * error and torn down at destroy.
 */
#include <linux/etherdevice.h>
#include <linux/slab.h>

#include "net.h"

int tbr_net_qp_create(struct tbr_qp *qp)
{
	struct tbr_net_qp *net;

	net = kzalloc(sizeof(*net), GFP_KERNEL);
	if (!net)
		return -ENOMEM;
	net->resp.xfer = kmalloc(sizeof(*net->resp.xfer), GFP_KERNEL);
	if (tbr_qp_is_reliable(qp))
		net->req.win = kvcalloc(TBR_NET_WINDOW, sizeof(*net->req.win),
					GFP_KERNEL);
	if (!net->resp.xfer || (tbr_qp_is_reliable(qp) && !net->req.win)) {
		kvfree(net->req.win);
		kfree(net->resp.xfer);
		kfree(net);
		return -ENOMEM;
	}
	spin_lock_init(&net->req.lock);
	spin_lock_init(&net->resp.lock);
	net->req.qp = qp;
	net->resp.qp = qp;
	timer_setup(&net->req.timer, tbr_net_req_timeout, 0);
	tbr_net_ack_timer_init(&net->resp);
	qp->net = net;
	return 0;
}

/* Give back what the window holds; no completions (destroy, reset). */
static void tbr_net_req_drop(struct tbr_net_req *rq)
{
	while (rq->tail != rq->head) {
		tbr_sgl_put(&rq->win[rq->head & (TBR_NET_WINDOW - 1)].local);
		rq->head++;
	}
}

/* Remember a connected RC QP that goes away, for its peer's last frames. */
static void tbr_net_tomb_add(struct tbr_qp *qp)
{
	struct tbr_dev *tdev = qp->tdev;
	struct tbr_net_tomb *t;
	unsigned long flags;

	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->net->resp.started)
		return;
	spin_lock_irqsave(&tdev->tomb_lock, flags);
	t = &tdev->tombs[tdev->tomb_next++ % TBR_NET_TOMBS];
	t->qpn = qp->ibqp.qp_num;
	t->dest_qpn = qp->dest_qpn;
	t->epsn = qp->net->resp.epsn;
	ether_addr_copy(t->dmac, tbr_net_peer_mac(qp));
	t->expires = jiffies + TBR_NET_TOMB_SECS * HZ;
	spin_unlock_irqrestore(&tdev->tomb_lock, flags);
}

/*
 * A request for a QP that does not exist: if it is a late duplicate for a
 * QP destroyed moments ago, acknowledge it as that QP would have.
 */
void tbr_net_tomb_answer(struct tbr_dev *tdev, const struct tbr_wire_hdr *hdr)
{
	u32 qpn = be32_to_cpu(hdr->dst_qpn) & TBR_PSN_MASK;
	u32 src = be32_to_cpu(hdr->src_qpn) & TBR_PSN_MASK;
	u32 psn = be32_to_cpu(hdr->psn) & TBR_PSN_MASK;
	struct tbr_net_tomb *t, found = { .expires = 0 };
	unsigned long flags;
	int i;

	if (!tdev->tombs || hdr->transport != TBR_TRANSPORT_RC)
		return;
	spin_lock_irqsave(&tdev->tomb_lock, flags);
	for (i = 0; i < TBR_NET_TOMBS; i++) {
		t = &tdev->tombs[i];
		if (t->expires && time_before(jiffies, t->expires) &&
		    t->qpn == qpn && t->dest_qpn == src) {
			found = *t;
			break;
		}
	}
	spin_unlock_irqrestore(&tdev->tomb_lock, flags);
	if (!found.expires || !tbr_psn_before(psn, found.epsn))
		return;

	tbr_net_xmit_ack(tdev, found.dmac, TBR_TRANSPORT_RC, qpn, src,
			 tbr_psn_add(found.epsn, -1), TBR_SYN_ACK, 0);
}

/* RESET: the send queue emptied under the lock its softirq users take. */
void tbr_net_sq_discard(struct tbr_qp *qp)
{
	spin_lock_bh(&qp->net->req.lock);
	tbr_queue_discard(&qp->sq);
	spin_unlock_bh(&qp->net->req.lock);
}

/* A SEND half received is given up without a completion (destroy, reset). */
static void tbr_net_cont_drop(struct tbr_net_qp *net)
{
	spin_lock_bh(&net->resp.lock);
	tbr_rx_cont_drop(&net->resp.cont);
	spin_unlock_bh(&net->resp.lock);
}

/* After tbr_tx_stop(): the engine never runs again, no frame finds the QP. */
void tbr_net_qp_destroy(struct tbr_qp *qp)
{
	struct tbr_net_qp *net = qp->net;

	if (!net)
		return;
	tbr_net_tomb_add(qp);
	timer_delete_sync(&net->req.timer);
	/*
	 * Only the receive path starts it, and no frame finds the QP now:
	 * stopped, it stays stopped.  An ACK it held back goes out now, for
	 * the peer's last requests, which were executed.
	 */
	hrtimer_cancel(&net->resp.ack_timer);
	tbr_net_ack_flush(qp);
	spin_lock_bh(&net->req.lock);
	tbr_net_req_drop(&net->req);
	spin_unlock_bh(&net->req.lock);
	tbr_net_cont_drop(net);
	kvfree(net->req.win);
	kfree(net->resp.xfer);
	kfree(net);
	qp->net = NULL;
}

/* modify_qp took the QP to @next; the transport follows. */
void tbr_net_qp_start(struct tbr_qp *qp, enum ib_qp_state next)
{
	struct tbr_net_qp *net = qp->net;

	if (!net)
		return;
	switch (next) {
	case IB_QPS_RESET:
		timer_delete_sync(&net->req.timer);
		spin_lock_bh(&net->req.lock);
		tbr_net_req_drop(&net->req);
		net->req.head = 0;
		net->req.tail = 0;
		net->req.timing = false;
		spin_unlock_bh(&net->req.lock);
		tbr_net_cont_drop(net);
		/* RESET executes nothing, so nothing starts the timer again. */
		tbr_net_ack_cancel(&net->resp);
		break;
	case IB_QPS_RTR:
		spin_lock_bh(&net->resp.lock);
		net->resp.started = true;
		net->resp.epsn = qp->rq_psn;
		net->resp.nak_sent = false;
		net->resp.unacked = 0;
		atomic_set(&net->resp.ack_owed, 0);
		memset(net->resp.replay, 0, sizeof(net->resp.replay));
		memset(net->resp.reads, 0, sizeof(net->resp.reads));
		spin_unlock_bh(&net->resp.lock);
		break;
	case IB_QPS_RTS:
		spin_lock_bh(&net->req.lock);
		if (net->req.head == net->req.tail) {
			net->req.psn_next = qp->sq_psn;
			net->req.send_psn = qp->sq_psn;
			net->req.sent_high = qp->sq_psn;
			net->req.acked_psn = qp->sq_psn;
			/* A new connection: its round trips are still to learn. */
			net->req.rtt = (struct tbr_rtt){ 0 };
			net->req.rtt_timing = false;
		}
		net->req.retry_left = qp->retry_cnt;
		spin_unlock_bh(&net->req.lock);
		break;
	default:
		break;
	}
}

/*
 * An XRC SRQ is being destroyed: a SEND half received into it (its first
 * frames came, the rest never may) completes as flushed now and lets the
 * SRQ go.  Process context.
 */
void tbr_net_srq_gone(struct tbr_dev *tdev, struct tbr_srq *srq)
{
	unsigned long qpn;
	struct tbr_qp *qp;

	if (tdev->mode != TBRDMA_MODE_NETDEV)
		return;
	xa_for_each(&tdev->qp_xa, qpn, qp) {
		qp = tbr_qp_get(tdev, qpn);
		if (!qp)
			continue;
		if (qp->net && qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
			spin_lock_bh(&qp->net->resp.lock);
			if (qp->net->resp.cont.srq == srq)
				tbr_rx_cont_flush(qp, &qp->net->resp.cont);
			spin_unlock_bh(&qp->net->resp.lock);
		}
		tbr_qp_put(qp);
	}
}

/*
 * In error: a SEND half received completes as flushed, and an ACK held
 * back goes out now.  Process context.
 */
void tbr_net_qp_error(struct tbr_qp *qp)
{
	struct tbr_net_qp *net = qp->net;

	if (!net)
		return;
	if (tbr_qp_is_reliable(qp))
		tbr_net_ack_flush(qp);
	spin_lock_bh(&net->resp.lock);
	tbr_rx_cont_flush(qp, &net->resp.cont);
	spin_unlock_bh(&net->resp.lock);
}
