/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tbrdma wire protocol: what travels in one Ethernet frame between two
 * tbrdma devices.  Documentation/wire-protocol.md describes it byte by
 * byte; keep the two in step.  Every multi-byte field is big-endian.
 *
 *   Ethernet header (EtherType TBR_ETH_P)
 *   struct tbr_wire_hdr          always
 *   struct tbr_wire_xrc          requests of transport XRC
 *   one extension by opcode:     struct tbr_wire_ud    (transport UD)
 *                                struct tbr_wire_read  (READ_REQUEST)
 *                                struct tbr_wire_atomic (CMP_SWAP, FETCH_ADD)
 *                                struct tbr_wire_ack   (ACK)
 *   struct tbr_wire_piggy        requests of RC/XRC with TBR_WF_ACK_PSN
 *   payload (pay_len bytes)
 *
 * Only this header's first two bytes are fixed for all versions: a frame
 * whose version is not ours is dropped and counted, so a peer speaking
 * another version never gets a reply and its connections time out.
 */
#ifndef TBRDMA_WIRE_H
#define TBRDMA_WIRE_H

#include <linux/types.h>

/* IEEE 802 Local Experimental EtherType 1. */
#define TBR_ETH_P		0x88B5
/*
 * 3: a request may carry its sender's ACK (TBR_WF_ACK_PSN); 2: the
 * checksum is the Internet checksum (1 carried XXH64).
 */
#define TBR_WIRE_VERSION	3

enum tbr_wire_opcode {
	/* requests: requester -> responder */
	TBR_OP_SEND = 1,
	TBR_OP_SEND_IMM,
	TBR_OP_WRITE,
	TBR_OP_WRITE_IMM,
	TBR_OP_READ_REQUEST,
	TBR_OP_CMP_SWAP,
	TBR_OP_FETCH_ADD,
	TBR_OP_SEND_INV,	/* rkey: the responder's key to invalidate */
	TBR_OP_ATOMIC_WRITE,	/* one frame, 8 payload bytes stored at once */
	/* responses: responder -> requester (RC only) */
	TBR_OP_READ_RESPONSE = 16,
	TBR_OP_ATOMIC_RESPONSE,
	TBR_OP_ACK,
};

enum tbr_wire_transport {
	TBR_TRANSPORT_RC = 0,
	TBR_TRANSPORT_UC = 1,
	TBR_TRANSPORT_UD = 2,
	TBR_TRANSPORT_XRC = 3,	/* RC between an XRC_INI and an XRC_TGT QP */
};

/* tbr_wire_hdr.flags */
#define TBR_WF_FIRST		0x01	/* first frame of a message */
#define TBR_WF_LAST		0x02	/* last frame of a message */
#define TBR_WF_ACK_REQ		0x04	/* answer with an ACK now */
#define TBR_WF_SOLICITED	0x08	/* solicited event at the receiver */
#define TBR_WF_CSUM		0x10	/* csum holds the frame's checksum */
#define TBR_WF_ACK_PSN		0x20	/* a struct tbr_wire_piggy follows */

/* PSNs are 24 bits, as in InfiniBand. */
#define TBR_PSN_MASK		0xffffff

struct tbr_wire_hdr {
	u8 version;		/* TBR_WIRE_VERSION */
	u8 opcode;		/* enum tbr_wire_opcode */
	u8 flags;		/* TBR_WF_* */
	u8 transport;		/* enum tbr_wire_transport */
	__be32 dst_qpn;
	__be32 src_qpn;
	__be32 psn;		/* low 24 bits */
	__sum16 csum;		/* Internet checksum of the frame (RFC 1071) */
	__be16 csum_pad;	/* 0 */
	__be32 msg_len;		/* requests: length of the whole message */
	__be32 msg_off;		/* requests and READ_RESPONSE: where this payload goes */
	__be32 pay_len;		/* payload bytes after the extension */
	__be32 imm;		/* SEND_IMM, WRITE_IMM */
	__be32 rkey;		/* WRITE*, READ_REQUEST, atomics; SEND_INV */
	__be64 va;		/* WRITE*, READ_REQUEST, atomics: start of the message */
} __packed;

/* Requests of transport XRC: which XRC SRQ at the responder they are for. */
struct tbr_wire_xrc {
	__be32 srqn;		/* low 24 bits */
	__be32 reserved;
} __packed;

struct tbr_wire_ud {
	__be32 qkey;
	__be32 reserved;
	u8 sgid[16];
	u8 dgid[16];
} __packed;

struct tbr_wire_read {
	__be32 resp_seg;	/* payload bytes per READ_RESPONSE frame */
	__be32 reserved;
} __packed;

struct tbr_wire_atomic {
	__be64 compare_add;
	__be64 swap;
} __packed;

enum tbr_wire_syndrome {
	TBR_SYN_ACK = 0,	/* every PSN up to psn executed */
	TBR_SYN_RNR_NAK,	/* psn found no receive WQE; rnr_timer says how long to wait */
	TBR_SYN_NAK_SEQ,	/* psn is what the responder expects: resend from there */
	TBR_SYN_NAK_INV,	/* psn was an invalid request */
	TBR_SYN_NAK_ACCESS,	/* psn failed a remote access check */
	TBR_SYN_NAK_OP,		/* the responder failed psn with its own WQE */
};

struct tbr_wire_ack {
	u8 syndrome;		/* enum tbr_wire_syndrome */
	u8 rnr_timer;		/* RNR_NAK: the responder's min_rnr_timer code */
	__be16 reserved;
	__be32 reserved2;
} __packed;

/*
 * A request of RC or XRC with TBR_WF_ACK_PSN carries an ACK for the other
 * direction: its sender's responder has executed every PSN up to ack_psn
 * from the receiver's requester, exactly what an ACK frame with syndrome
 * TBR_SYN_ACK for ack_psn says.  It saves that frame in a ping-pong.
 */
struct tbr_wire_piggy {
	__be32 ack_psn;		/* low 24 bits */
	__be32 reserved;
} __packed;

static inline bool tbr_wire_is_request(u8 opcode)
{
	return opcode >= TBR_OP_SEND && opcode <= TBR_OP_ATOMIC_WRITE;
}

/* May a frame of @opcode and @transport carry TBR_WF_ACK_PSN? */
static inline bool tbr_wire_may_piggy(u8 opcode, u8 transport)
{
	return tbr_wire_is_request(opcode) &&
	       (transport == TBR_TRANSPORT_RC || transport == TBR_TRANSPORT_XRC);
}

/* Bytes of the XRC extension after the header (requests of XRC only). */
static inline unsigned int tbr_wire_xrc_len(u8 opcode, u8 transport)
{
	return transport == TBR_TRANSPORT_XRC && tbr_wire_is_request(opcode) ?
	       sizeof(struct tbr_wire_xrc) : 0;
}

/* Bytes of the header and the extension by opcode; 0: unknown opcode. */
static inline unsigned int tbr_wire_op_hdr_len(u8 opcode, u8 transport)
{
	unsigned int len = sizeof(struct tbr_wire_hdr) +
			   tbr_wire_xrc_len(opcode, transport);

	switch (opcode) {
	case TBR_OP_SEND:
	case TBR_OP_SEND_IMM:
	case TBR_OP_SEND_INV:
		return len + (transport == TBR_TRANSPORT_UD ?
			      sizeof(struct tbr_wire_ud) : 0);
	case TBR_OP_WRITE:
	case TBR_OP_WRITE_IMM:
	case TBR_OP_ATOMIC_WRITE:
	case TBR_OP_READ_RESPONSE:
		return len;
	case TBR_OP_READ_REQUEST:
		return len + sizeof(struct tbr_wire_read);
	case TBR_OP_CMP_SWAP:
	case TBR_OP_FETCH_ADD:
		return len + sizeof(struct tbr_wire_atomic);
	case TBR_OP_ATOMIC_RESPONSE:
		return len;	/* the original value is the 8-byte payload */
	case TBR_OP_ACK:
		return len + sizeof(struct tbr_wire_ack);
	default:
		return 0;
	}
}

/*
 * Bytes of headers before the payload, @flags' TBR_WF_ACK_PSN included;
 * 0 for an opcode we do not know, or the flag where it may not be.
 */
static inline unsigned int tbr_wire_hdr_len(u8 opcode, u8 transport, u8 flags)
{
	unsigned int len = tbr_wire_op_hdr_len(opcode, transport);

	if (!(flags & TBR_WF_ACK_PSN) || !len)
		return len;
	return tbr_wire_may_piggy(opcode, transport) ?
	       len + sizeof(struct tbr_wire_piggy) : 0;
}

/* The piggybacked ACK of a frame with TBR_WF_ACK_PSN, after the others. */
static inline const struct tbr_wire_piggy *
tbr_wire_piggy_of(const struct tbr_wire_hdr *hdr)
{
	return (const void *)((const u8 *)hdr +
			      tbr_wire_op_hdr_len(hdr->opcode, hdr->transport));
}

/* The extension by opcode of a frame: after the XRC one, if any. */
static inline const void *tbr_wire_op_ext(const struct tbr_wire_hdr *hdr)
{
	return (const u8 *)(hdr + 1) +
	       tbr_wire_xrc_len(hdr->opcode, hdr->transport);
}

/* The largest header must fit the budget the path MTU is computed with. */
static_assert(sizeof(struct tbr_wire_hdr) + sizeof(struct tbr_wire_ud) <= 128);
static_assert(sizeof(struct tbr_wire_hdr) + sizeof(struct tbr_wire_xrc) +
	      sizeof(struct tbr_wire_atomic) + sizeof(struct tbr_wire_piggy) <= 128);

#endif /* TBRDMA_WIRE_H */
