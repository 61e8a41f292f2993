/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The network transport: tbrdma frames over an Ethernet-type netdev
 * (wire.h).  Split by direction and role:
 *   net_frame.c  building, checksumming and sending one frame
 *   net_rx.c     the packet handler: checks a frame, finds its QP
 *   net_resp.c   the responder: executes requests in PSN order, ACKs
 *   net_req.c    the requester: RC WQEs in flight, ACKs, retransmission
 * UD and UC sends go out from the send engine directly (unreliable).
 */
#ifndef TBRDMA_NET_H
#define TBRDMA_NET_H

#include <linux/hrtimer.h>
#include <linux/timer.h>

#include "msg.h"
#include "psn.h"
#include "ack_turn.h"
#include "rtt.h"
#include "wire.h"

#define TBR_NET_WINDOW		16	/* RC WQEs in flight per QP, a power of 2 */
#define TBR_NET_FRAME_WINDOW	64	/* RC frames sent and not yet acknowledged */
#define TBR_NET_ACK_EVERY	16	/* the responder ACKs at least this often */
#define TBR_NET_ACK_DELAY_MAX_US 1000	/* the longest an ACK is held back */
#define TBR_NET_PROBE_DIV	8	/* probe early after timeout / this of quiet */
#define TBR_NET_READ_CHUNK	64	/* READ response frames one request asks for */
#define TBR_NET_REPLAY		16	/* atomic results kept for duplicates */
#define TBR_NET_COPYBREAK	256	/* payloads up to this are copied, not paged */
/*
 * READ requests kept for duplicates: each outstanding request holds a PSN
 * of the requester's frame window, so no more can be outstanding.  A
 * duplicate READ is answered only if it is one of these, so a forged or
 * replayed request for any older PSN cannot make us read and send up to
 * 64 frames.  A recent one is answered as often as it comes: on a lossy
 * link the requester asks for the same chunk again and again.
 */
#define TBR_NET_READS		TBR_NET_FRAME_WINDOW

/* One RC WQE between its first transmission and its completion. */
struct tbr_inflight {
	struct tbr_sgl local;		/* requester memory, MR references held */
	u64 wr_id;
	u64 length;
	u64 remote_addr;
	u64 compare_add;
	u64 swap;
	u32 opcode;			/* enum ib_uverbs_wr_opcode */
	u32 rkey;
	__be32 imm;
	u32 first_psn;
	u32 nframes;
	u32 seg;			/* payload bytes per frame */
	u32 read_next;			/* READ/atomic: next response frame expected */
	u32 xrc_srqn;			/* XRC: the SRQ every frame names */
	u32 read_asked;			/* answers lost before it were asked for again */
	enum ib_wc_status status;	/* set when it is done */
	bool done;
	bool signaled;
	bool solicited;
	u8 inline_buf[TBR_MAX_INLINE];
};

struct tbr_net_req {
	spinlock_t lock;		/* everything below; taken from softirq */
	struct tbr_inflight *win;	/* TBR_NET_WINDOW entries */
	u32 head;			/* oldest WQE in flight (free-running) */
	u32 tail;			/* next free entry */
	u32 psn_next;			/* next PSN to give a new WQE */
	u32 send_psn;			/* next PSN to transmit, behind psn_next after a NAK */
	u32 sent_high;			/* first PSN never transmitted: before it, resends */
	u32 acked_psn;			/* every PSN before it is acknowledged */
	u8 retry_left;
	bool blocked;			/* the engine waits for the window to open */
	bool send_due;			/* an answer let something go out: send it */
	bool probing;			/* after a timeout or RNR NAK: one frame out, wait */
	bool timing;			/* a retransmission deadline is running */
	unsigned long deadline;		/* jiffies: when it runs out */
	unsigned long probe_at;		/* jiffies: the early probe, if still quiet */
	unsigned long probe_span;	/* jiffies between early probes */
	struct timer_list timer;	/* retransmission; may fire early, see tbr_req_arm() */
	struct tbr_rtt rtt;		/* round trips measured, for the early probe */
	bool rtt_timing;		/* rtt_psn is out and timed */
	u32 rtt_psn;			/* a frame that asked for an answer */
	u64 rtt_sent_ns;		/* local_clock() when it went out */
	struct tbr_qp *qp;
};

struct tbr_replay {
	u32 psn;
	bool valid;
	u64 orig;
};

struct tbr_read_seen {
	u32 psn;
	bool valid;
};

/* tbr_net_resp.ack_owed: an ACK for the PSN in the low 24 bits is owed. */
#define TBR_NET_ACK_OWED	BIT(24)

struct tbr_net_resp {
	/*
	 * The ACK owed for requests executed in order and not yet
	 * acknowledged: TBR_NET_ACK_OWED | the PSN, or 0.  Set by the
	 * responder (under its lock); taken by whichever sends it first,
	 * the requester on a request frame (under its own lock) or
	 * ack_timer, hence atomic.
	 */
	atomic_t ack_owed;
	struct hrtimer ack_timer;	/* sends an owed ACK nobody carried */
	/*
	 * The turn open since a request asked for an ACK: its local_clock(),
	 * or 0.  Opened by the responder, ended by our requester's next
	 * request or by the next ask (ack_turn.h).  turn8 smooths the turns;
	 * whoever ends one folds it in (two at once on two CPUs may lose a
	 * sample, which only makes the estimate a turn older).
	 */
	atomic64_t turn_start;
	u32 turn8;
	/*
	 * Waits that ran out in a row, and the asks still to answer at
	 * once because of them (ack_turn.h); under lock, but a carried
	 * ACK clears hold_misses without it.
	 */
	u32 hold_misses;
	u32 hold_skip;
	struct tbr_qp *qp;
	spinlock_t lock;		/* everything below; frames of one QP in order */
	bool started;			/* RTR was reached: epsn means something */
	u32 epsn;			/* the PSN expected next */
	bool nak_sent;			/* a sequence NAK for epsn is out */
	u32 nak_trigger;		/* the frame that made us send it */
	u32 unacked;			/* requests executed since the last ACK */
	u32 replay_next;
	struct tbr_replay replay[TBR_NET_REPLAY];
	u32 reads_next;
	struct tbr_read_seen reads[TBR_NET_READS];
	struct tbr_xfer *xfer;		/* scratch for executing one frame */
	struct tbr_rx_cont cont;	/* a SEND between its frames */
};

/*
 * What a destroyed RC QP leaves behind for a few seconds, like TCP's
 * TIME_WAIT: if the peer's last frames come again because our final ACK
 * was lost, they are still acknowledged instead of timing out the peer.
 */
#define TBR_NET_TOMBS		16
#define TBR_NET_TOMB_SECS	5

struct tbr_net_tomb {
	u32 qpn;
	u32 dest_qpn;
	u32 epsn;
	u8 dmac[ETH_ALEN];
	unsigned long expires;		/* jiffies; 0: unused */
};

struct tbr_net_qp {
	struct tbr_net_req req;
	struct tbr_net_resp resp;
};

static inline struct tbr_rx_cont *tbr_rx_cont_of(struct tbr_qp *qp)
{
	return qp->net ? &qp->net->resp.cont : NULL;
}

/* A frame to send: headers filled in by the caller, payload from a list. */
struct tbr_frame {
	struct tbr_wire_hdr hdr;
	union {
		struct tbr_wire_ud ud;
		struct tbr_wire_read read;
		struct tbr_wire_atomic atomic;
		struct tbr_wire_ack ack;
		struct {		/* requests of transport XRC */
			struct tbr_wire_xrc xrc;
			union {
				struct tbr_wire_read read;
				struct tbr_wire_atomic atomic;
			};
		} x;
	} ext;
	struct tbr_wire_piggy piggy;	/* sent after ext with TBR_WF_ACK_PSN */
	const u8 *dmac;
	const struct tbr_sgl *pay;	/* NULL: no payload */
	u64 pay_off;
	u32 pay_len;
	bool snapshot;			/* copy the payload now, never send the pages */
};

/* net_frame.c */
u32 tbr_net_max_payload(struct tbr_dev *tdev, u8 opcode, u8 transport);
int tbr_net_xmit(struct tbr_dev *tdev, struct tbr_frame *f);
void tbr_net_xmit_ack(struct tbr_dev *tdev, const u8 *dmac, u8 transport,
		      u32 src_qpn, u32 dst_qpn, u32 psn, u8 syndrome,
		      u8 rnr_timer);
void tbr_net_frame_init(struct tbr_frame *f, struct tbr_qp *qp, u8 opcode,
			u32 dst_qpn, u32 psn);
bool tbr_net_csum_ok(const struct sk_buff *skb, unsigned int len);
u8 tbr_net_transport(const struct tbr_qp *qp);
const u8 *tbr_net_peer_mac(struct tbr_qp *qp);

/* net_resp.c */
void tbr_net_resp_rx(struct tbr_qp *qp, const struct sk_buff *skb,
		     const struct tbr_wire_hdr *hdr, unsigned int hdr_len);
void tbr_net_send_ack(struct tbr_qp *qp, u8 syndrome, u32 psn);
void tbr_net_ack_timer_init(struct tbr_net_resp *rs);
bool tbr_net_ack_carry(struct tbr_qp *qp, u32 *psn);
void tbr_net_ack_flush(struct tbr_qp *qp);
void tbr_net_ack_cancel(struct tbr_net_resp *rs);

/* net_req.c */
void tbr_net_req_process(struct tbr_qp *qp);
void tbr_net_req_rx(struct tbr_qp *qp, const struct sk_buff *skb,
		    const struct tbr_wire_hdr *hdr, unsigned int hdr_len);
void tbr_net_req_rx_piggy(struct tbr_qp *qp, const struct tbr_wire_hdr *hdr);
void tbr_net_req_timeout(struct timer_list *t);
void tbr_net_req_rnr_over(struct tbr_qp *qp);
enum tbr_resp tbr_net_send_unreliable(struct tbr_qp *qp, u32 dst_qpn,
				      struct tbr_msg *msg);

/* net_qp.c: the transport's part of a QP's life */
void tbr_net_tomb_answer(struct tbr_dev *tdev, const struct tbr_wire_hdr *hdr);
int tbr_net_qp_create(struct tbr_qp *qp);
void tbr_net_qp_destroy(struct tbr_qp *qp);
void tbr_net_qp_start(struct tbr_qp *qp, enum ib_qp_state next);
void tbr_net_qp_error(struct tbr_qp *qp);
void tbr_net_sq_discard(struct tbr_qp *qp);
void tbr_net_srq_gone(struct tbr_dev *tdev, struct tbr_srq *srq);

#endif /* TBRDMA_NET_H */
