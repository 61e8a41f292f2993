// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RC requester's timers: the retransmission deadline (the QP's ACK
 * timeout), the early probe before it, and the round trip the probe's
 * wait is measured against (rtt.h).  When the deadline passes with
 * nothing acknowledged, the first unacknowledged frame goes out again
 * alone and asks for an answer (a probe), retry_cnt times in a row at
 * most.
 */
#include <linux/sched/clock.h>

#include "net_req.h"
#include "timers.h"

/*
 * Start the retransmission deadline again from now.  The timer itself is
 * moved only when it would fire too late: in a ping-pong every message
 * starts a deadline and its ACK ends it, and a timer operation for each
 * (under the timer base's lock, interrupts off) costs more than a timer
 * that now and then fires early, finds the deadline moved on and waits
 * for it.  An ACK that leaves nothing outstanding just stops the deadline.
 * The early probe waits an eighth of the timeout, or longer when answers
 * take longer on this connection (rtt.h); a tick more than that, so that
 * a probe never goes out before the wait has passed in full.
 */
void tbr_req_arm(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;
	unsigned long long us = tbr_ack_timeout_us(qp->timeout);
	unsigned long long probe_us;
	unsigned long span;

	rq->timing = us != 0;		/* timeout 0: wait for ever */
	if (!rq->timing)
		return;
	us = min(us, 60ULL * USEC_PER_SEC);
	/*
	 * Two ticks at least: a deadline one tick away may end at the next
	 * tick, microseconds from now, and the responder may hold its ACK
	 * back for up to TBR_NET_ACK_DELAY_MAX_US (net_resp.c), a tick at
	 * HZ=1000.  The early probe is a tick more than its wait, so two
	 * ticks too.
	 */
	span = max(usecs_to_jiffies(us), 2UL);
	rq->deadline = jiffies + span;
	probe_us = tbr_rtt_probe_us(&rq->rtt, us);
	rq->probe_span = probe_us >= us ? span :
			 min(usecs_to_jiffies(probe_us) + 1, span);
	rq->probe_at = jiffies + rq->probe_span;
	if (!timer_pending(&rq->timer) ||
	    time_before(rq->probe_at, rq->timer.expires))
		mod_timer(&rq->timer, rq->probe_at);
}

/*
 * Time the round trip of a frame that asks for an answer (one at a time):
 * @psn goes out now for the first time.  A frame sent again is not timed,
 * nor any before it (Karn's rule: whose answer came would be unknown).
 */
void tbr_req_rtt_sent(struct tbr_net_req *rq, u32 psn, bool again)
{
	if (again) {
		if (rq->rtt_timing && !tbr_psn_before(rq->rtt_psn, psn))
			rq->rtt_timing = false;
		return;
	}
	if (rq->rtt_timing)
		return;
	rq->rtt_timing = true;
	rq->rtt_psn = psn;
	rq->rtt_sent_ns = local_clock();
}

/* Every PSN before @next is acknowledged now: a timed frame's answer. */
void tbr_req_rtt_acked(struct tbr_net_req *rq, u32 next)
{
	s64 ns;

	if (!rq->rtt_timing || !tbr_psn_before(rq->rtt_psn, next))
		return;
	rq->rtt_timing = false;
	ns = local_clock() - rq->rtt_sent_ns;
	if (ns >= 0)		/* the clocks of two CPUs may differ a little */
		tbr_rtt_sample(&rq->rtt, (u32)min_t(u64, div_u64(ns, NSEC_PER_USEC),
						    TBR_RTT_MAX_US));
}

/*
 * Send the first unacknowledged frame alone, asking for an answer, and
 * let that answer tell where the responder is: a lost ACK costs one
 * frame, not a window.  Sent from the timer itself.
 */
static void tbr_req_probe(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;

	rq->send_psn = tbr_req_resend_from(rq, tbr_req_at(rq, rq->head));
	rq->probing = true;
	tbr_req_kick(qp);
}

/* No ACK came in time: send everything unacknowledged again, or give up. */
void tbr_net_req_timeout(struct timer_list *t)
{
	struct tbr_net_req *rq = timer_container_of(rq, t, timer);
	struct tbr_qp *qp = rq->qp;
	struct tbr_inflight *e;
	enum ib_qp_state state;

	spin_lock_bh(&rq->lock);
	state = READ_ONCE(qp->state);
	if (!rq->timing || !tbr_req_count(rq) ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD)) {
		rq->timing = false;	/* a transmission starts the next one */
		goto out;
	}
	/*
	 * An RNR wait: the responder answered, and we hold back on purpose
	 * until the probe after the wait.  Neither a timeout nor an early
	 * probe; the deadline starts again from now (a refusing peer uses
	 * up rnr_retry, not retry_cnt).
	 */
	if (READ_ONCE(qp->rnr_wait)) {
		tbr_req_arm(qp);
		goto out;
	}
	if (time_before(jiffies, rq->deadline)) {
		if (time_before(jiffies, rq->probe_at)) {
			/* Early: armed for frames acknowledged since. */
			mod_timer(&rq->timer, rq->probe_at);
			goto out;
		}
		/*
		 * Nothing acknowledged for an eighth of the timeout, and for
		 * longer than an answer takes on this connection (rtt.h): the
		 * last frames of a burst, or their ACK or NAK, are likely
		 * lost, and nothing after them will tell.  Probe now, without
		 * using up a retry, instead of idling for the rest of the
		 * timeout (a second per loss at the usual timeouts).  Again
		 * after as long until the deadline or an answer
		 * (tbr_req_arm() starts a new deadline): a probe
		 * lost too, or its answer, would otherwise cost the whole
		 * timeout, which is what stalled atomics at 10 % loss (one
		 * frame each, nothing after the last of a burst to tell).
		 */
		tbr_count(qp->tdev, TBR_CNT_EARLY_PROBES, 1);
		tbr_req_probe(qp);
		rq->probe_at = jiffies + rq->probe_span;
		mod_timer(&rq->timer, time_before(rq->probe_at, rq->deadline) ?
			  rq->probe_at : rq->deadline);
		goto out;
	}
	tbr_count(qp->tdev, TBR_CNT_ACK_TIMEOUTS, 1);
	e = tbr_req_at(rq, rq->head);
	if (!rq->retry_left) {
		/* The peer is gone: the head fails, the QP goes to error. */
		if (!e->done) {
			e->done = true;
			e->status = IB_WC_RETRY_EXC_ERR;
		}
		tbr_req_advance(qp);
		goto out;
	}
	rq->retry_left--;
	rq->timing = false;	/* the probe starts the next deadline */
	tbr_req_probe(qp);
out:
	spin_unlock_bh(&rq->lock);
}
