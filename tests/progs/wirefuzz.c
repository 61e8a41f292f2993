// SPDX-License-Identifier: GPL-2.0-only
/*
 * Wire fuzzer: a black-box peer that sends malformed, truncated, forged and
 * replayed tbrdma frames at a live device through an AF_PACKET socket.
 *
 * The frame layout is mirrored here from Documentation/wire-protocol.md on
 * purpose (not included from kmod/wire.h): the fuzzer checks the documented
 * protocol, and a layout change that the document does not follow shows up.
 *
 * Usage (run where the interface is, e.g. in the peer's namespace):
 *   wirefuzz --ifname tbv1 --dst-mac 02:..:.. [--seed N] [--iters N]
 *            [--qpns DST:PEER,...] [--qpn-max N] [--capture-ms N]
 *            [--no-csum-ok] [--pace-us N] [--secs N]
 *            [--skip CLASS,...] [--only CLASS,...]
 *
 * --qpns      victim QPs at the destination: DST is the QP number there,
 *             PEER the QP it is connected to (forged src_qpn).  Anything
 *             may happen to these QPs.
 * --qpn-max   QPs above this number (up to the device's 16385) are
 *             protected: no frame that could be valid is addressed to them;
 *             they only get exact replays of captured frames (which a
 *             correct responder recognises as duplicates) and frames that
 *             must be dropped before any QP is looked at.
 * --capture-ms  capture real frames on the interface for this long before
 *             fuzzing (they are replayed later, exact or modified).
 * --no-csum-ok  the device runs with checksum=0: frames without a checksum
 *             are valid too, so half the structured frames carry none.
 * --pace-us   spread the frames: on average this long per frame (sleeps
 *             every 64 frames), so they meet more of the traffic.
 * --skip, --only  frame classes by the names the summary prints.
 *
 * retx/ack-flood and duplicate-request aim at the retransmission and ACK
 * paths of a victim whose real PSNs were captured (its own requests, its
 * peer's requests to it); the summary says how many did.
 *
 * Prints counts per frame class and the checksum check on captured frames
 * (ours must agree with the stack's); exit 0 unless sending failed or
 * a captured frame's checksum disagrees with ours.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- the documented frame layout ---- */
#define ETH_P_TBR	0x88B5
#define WIRE_VERSION	3
#define HDR_LEN		48
#define ETH_LEN		14

enum { OP_SEND = 1, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ_REQ,
       OP_CMP_SWAP, OP_FETCH_ADD, OP_SEND_INV, OP_ATOMIC_WRITE,
       OP_READ_RESP = 16,
       OP_ATOMIC_RESP, OP_ACK };
enum { TR_RC, TR_UC, TR_UD };
#define WF_FIRST	0x01
#define WF_LAST		0x02
#define WF_ACK_REQ	0x04
#define WF_SOLICITED	0x08
#define WF_CSUM		0x10
#define WF_ACK_PSN	0x20	/* requests of RC/XRC: an 8-byte piggybacked ACK follows */
#define PIGGY_LEN	8
#define TR_XRC		3

/* Field offsets in the 48-byte header (big-endian). */
#define O_VERSION	0
#define O_OPCODE	1
#define O_FLAGS		2
#define O_TRANSPORT	3
#define O_DST_QPN	4
#define O_SRC_QPN	8
#define O_PSN		12
#define O_CSUM		16
#define O_MSG_LEN	20
#define O_MSG_OFF	24
#define O_PAY_LEN	28
#define O_IMM		32
#define O_RKEY		36
#define O_VA		40

#define MAX_QP		16385	/* QP numbers the device hands out: 2..16385 */

/* Extension length by opcode/transport; -1 for an unknown opcode. */
static int ext_len(int op, int tr)
{
	switch (op) {
	case OP_SEND: case OP_SEND_IMM: case OP_SEND_INV: return tr == TR_UD ? 40 : 0;
	case OP_WRITE: case OP_WRITE_IMM: case OP_ATOMIC_WRITE:
	case OP_READ_RESP: case OP_ATOMIC_RESP: return 0;
	case OP_READ_REQ: return 8;
	case OP_CMP_SWAP: case OP_FETCH_ADD: return 16;
	case OP_ACK: return 8;
	default: return -1;
	}
}

/*
 * Bytes after the header of the frame at F: the extension by opcode and a
 * piggybacked ACK (WF_ACK_PSN, after it); -1 where the receiver drops the
 * frame for its opcode or flags.
 */
static int frame_ext_len(const uint8_t *f)
{
	int op = f[ETH_LEN + O_OPCODE], tr = f[ETH_LEN + O_TRANSPORT];
	int ext = ext_len(op, tr);

	if (ext < 0 || !(f[ETH_LEN + O_FLAGS] & WF_ACK_PSN))
		return ext;
	if (op < OP_SEND || op > OP_ATOMIC_WRITE || (tr != TR_RC && tr != TR_XRC))
		return -1;
	return ext + PIGGY_LEN;
}

/*
 * ---- The Internet checksum (RFC 1071), as the stack computes it for the
 * device: the ones' complement of the ones' complement sum of the 16-bit
 * big-endian words, an odd last byte padded with zero.  Over a frame whose
 * checksum field holds it, the same function gives 0. ----
 */
static uint16_t inet_csum(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* ---- PRNG: xorshift64*, seeded ---- */
static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}
static uint32_t rn(uint32_t n) { return n ? (uint32_t)(rnd() % n) : 0; }
static int chance(int pct) { return rn(100) < (uint32_t)pct; }

static void put8(uint8_t *f, int off, uint8_t v) { f[ETH_LEN + off] = v; }
static void put32(uint8_t *f, int off, uint32_t v) { v = htonl(v); memcpy(f + ETH_LEN + off, &v, 4); }
static void put64(uint8_t *f, int off, uint64_t v) { put32(f, off, v >> 32); put32(f, off + 4, (uint32_t)v); }
static uint32_t get32(const uint8_t *f, int off) { uint32_t v; memcpy(&v, f + ETH_LEN + off, 4); return ntohl(v); }

/* ---- state ---- */
struct victim {
	uint32_t qpn, peer;
	int seen;		/* a request of its peer was captured: */
	uint32_t psn;		/* its PSN, so the next one is the expected PSN */
	uint8_t transport;
	int req_seen;		/* a request of its own was captured: */
	uint32_t req_psn;	/* its PSN, inside the window it waits on */
};
static struct victim victims[64];
static int nvictims;
static long qpn_max = -1;	/* protected QPs above this (-1: none) */
static int no_csum_ok;
static uint8_t dmac[6], smac[6];
static int mtu = 1500, sock, ifindex;

#define NCAP 512
static struct { uint8_t *f; int len; int out; } cap[NCAP];
static int ncap, cap_next;
static unsigned long cap_csum_ok, cap_csum_bad, cap_csum_offloaded, cap_seen;

enum cls { C_RANDOM, C_FIELD, C_TRUNC, C_PSN, C_CSUM, C_READ, C_ATOMIC, C_ACK,
	   C_RESP, C_UD, C_CONT, C_INSEQ, C_RETX, C_DUP, C_REPLAY, C_REPLAY_MOD, C_REPLAY_BAD, C_NCLS };
static const char *cls_name[C_NCLS] = {
	"random-bytes", "one-field-corrupted", "truncated", "psn-far/forged-src",
	"bad/missing-csum", "read-request", "atomic", "ack-syndrome",
	"forged-response", "ud/gsi", "send-continuation", "in-sequence",
	"retx/ack-flood", "duplicate-request", "replay-exact", "replay-modified",
	"replay-invalidated",
};
static unsigned long sent[C_NCLS];
static unsigned long retx_aimed, dup_aimed;	/* at a victim's real PSNs */
static unsigned int skip;	/* classes not to send (--skip, --only) */
static int only_cls = -1;	/* with --only: what a skipped class becomes */

static int protected_qpn(uint32_t q)
{
	q &= 0xffffff;
	return qpn_max >= 0 && q > (uint32_t)qpn_max && q <= MAX_QP;
}

static int is_victim(uint32_t q)
{
	for (int i = 0; i < nvictims; i++)
		if (victims[i].qpn == (q & 0xffffff))
			return 1;
	return 0;
}

/* A destination QP number that never names a protected QP. */
static uint32_t pick_dst(uint32_t *peer)
{
	uint32_t q;
	int k = rn(100);

	*peer = rn(MAX_QP + 2);
	if (nvictims && k < 45) {
		struct victim *v = &victims[rn(nvictims)];

		if (chance(70))
			*peer = v->peer;
		return v->qpn;
	}
	if (k < 55)
		return rn(2);				/* the special QPs */
	if (k < 75 && qpn_max >= 0)
		return rn(qpn_max + 1);			/* old, maybe destroyed */
	do {
		q = k < 90 ? MAX_QP + 1 + rn(0xffffff - MAX_QP) : (uint32_t)rnd();
	} while (protected_qpn(q));
	return q;
}

static uint32_t huge32(void)
{
	static const uint32_t v[] = { 0xffffffff, 0x80000000, 0x7fffffff, 0x80000001,
				      0xfffffff8, 0x10000, 0x1000000, 65523 };
	return chance(50) ? v[rn(8)] : (uint32_t)rnd();
}

/*
 * The checksum over what the receiver will hash: the headers its opcode and
 * transport imply plus pay_len bytes (a frame may be longer: padding).  A
 * frame too short for that is dropped before the checksum is looked at.
 */
static void set_csum(uint8_t *f, int len)
{
	int ext = frame_ext_len(f);
	uint64_t n = (uint64_t)HDR_LEN + (ext < 0 ? 0 : ext) + get32(f, O_PAY_LEN);

	if (n > (uint64_t)(len - ETH_LEN))
		n = len - ETH_LEN;
	put32(f, O_CSUM, 0);	/* the checksum and the 16 bits after it, 0 */
	put32(f, O_CSUM, (uint32_t)inet_csum(f + ETH_LEN, n) << 16);
}

/*
 * A well-formed frame: opcode OP, transport TR, PAY payload bytes, to DST
 * from SRC.  Returns its length (Ethernet header included).
 */
static int build(uint8_t *f, int op, int tr, uint32_t dst, uint32_t src, int pay)
{
	int ext = ext_len(op, tr), len;

	if (ext < 0)
		ext = 0;
	if (ETH_LEN + HDR_LEN + ext + pay > ETH_LEN + mtu)
		pay = mtu - HDR_LEN - ext;
	len = ETH_LEN + HDR_LEN + ext + pay;
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	if (chance(10)) {	/* a stranger: the device's peer table must cope */
		for (int i = 6; i < 12; i++)
			f[i] = rnd();
		f[6] = (f[6] & 0xfe) | 0x02;	/* unicast, locally administered */
	}
	f[12] = ETH_P_TBR >> 8;
	f[13] = ETH_P_TBR & 0xff;
	memset(f + ETH_LEN, 0, HDR_LEN + ext);
	for (int i = 0; i < pay; i++)
		f[ETH_LEN + HDR_LEN + ext + i] = rnd();
	put8(f, O_VERSION, WIRE_VERSION);
	put8(f, O_OPCODE, op);
	put8(f, O_FLAGS, WF_FIRST | WF_LAST | (chance(30) ? WF_ACK_REQ : 0) |
	     (chance(10) ? WF_SOLICITED : 0));
	put8(f, O_TRANSPORT, tr);
	put32(f, O_DST_QPN, dst);
	put32(f, O_SRC_QPN, src);
	put32(f, O_PSN, rn(1 << 24));
	put32(f, O_MSG_LEN, pay);
	put32(f, O_MSG_OFF, 0);
	put32(f, O_PAY_LEN, pay);
	put32(f, O_IMM, rnd());
	put32(f, O_RKEY, chance(50) ? rn(4096) << 8 | rn(256) : (uint32_t)rnd());
	put64(f, O_VA, chance(50) ? rnd() : rnd() & 0x7fffffffff00ULL);
	uint8_t *e = f + ETH_LEN + HDR_LEN;
	switch (op) {
	case OP_READ_REQ:
		put32(f, O_MSG_LEN, rn(65536));
		put32(f, O_PAY_LEN, 0);
		put32(f, HDR_LEN, 1024);	/* resp_seg */
		break;
	case OP_CMP_SWAP: case OP_FETCH_ADD:
		put32(f, O_MSG_LEN, 8);
		for (int i = 0; i < 16; i++)
			e[i] = rnd();
		break;
	case OP_ACK:
		e[0] = rn(6);
		e[1] = rn(32);
		break;
	case OP_SEND: case OP_SEND_IMM: case OP_SEND_INV:
		if (tr == TR_UD) {
			uint32_t qk = chance(50) ? 0x80010000 : chance(50) ? 0x11111111 : (uint32_t)rnd();

			qk = htonl(qk);
			memcpy(e, &qk, 4);
			for (int i = 8; i < 40; i++)
				e[i] = rnd();
		}
		break;
	}
	if (!no_csum_ok || chance(50)) {
		f[ETH_LEN + O_FLAGS] |= WF_CSUM;
		set_csum(f, len);
	}
	return len;
}

static int valid_op(void)
{
	static const int ops[] = { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM,
				   OP_READ_REQ, OP_CMP_SWAP, OP_FETCH_ADD,
				   OP_SEND_INV, OP_ATOMIC_WRITE, OP_READ_RESP,
				   OP_ATOMIC_RESP, OP_ACK };
	return ops[rn(sizeof(ops) / sizeof(ops[0]))];
}

/* Recompute the checksum after a change, as a fuzzer that passes it would. */
static void fix_csum(uint8_t *f, int len)
{
	if (f[ETH_LEN + O_FLAGS] & WF_CSUM && len >= ETH_LEN + HDR_LEN)
		set_csum(f, len);
}

static int gen_field(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int op = valid_op(), tr = chance(80) ? TR_RC : rn(3);
	int len = build(f, op, tr, dst, peer, rn(2) ? rn(2048) : 0);

	switch (rn(12)) {
	case 0: put8(f, O_VERSION, chance(50) ? 0 : rn(256)); break;
	case 1: put8(f, O_OPCODE, rn(256)); break;
	case 2: put8(f, O_TRANSPORT, chance(50) ? 3 + rn(253) : rn(3)); break;
	case 3: put32(f, O_PAY_LEN, huge32()); break;
	case 4: put32(f, O_PAY_LEN, get32(f, O_PAY_LEN) + 1 + rn(64)); break;
	case 5: put32(f, O_MSG_LEN, huge32()); break;
	case 6: put32(f, O_MSG_OFF, huge32()); break;
	case 7: /* a middle or last frame whose offsets do not add up */
		put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~(WF_FIRST | WF_LAST) & 0xff);
		if (chance(50))
			put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] | WF_LAST);
		put32(f, O_MSG_OFF, rn(2) ? rn(1 << 20) : get32(f, O_MSG_LEN));
		put32(f, O_MSG_LEN, rn(2) ? huge32() : get32(f, O_MSG_OFF) + get32(f, O_PAY_LEN) - rn(3));
		break;
	case 8: put8(f, O_FLAGS, (rnd() & ~WF_CSUM) | (f[ETH_LEN + O_FLAGS] & WF_CSUM)); break;
	case 9: put32(f, O_RKEY, huge32()); put64(f, O_VA, (uint64_t)huge32() << 32 | huge32()); break;
	case 10: { /* a random header byte */
		int o = rn(HDR_LEN);

		if (o < O_CSUM || o >= O_CSUM + 4)
			put8(f, o, rnd());
		break;
	}
	default: put32(f, O_DST_QPN, dst | (uint32_t)rn(256) << 24); break;
	}
	if (protected_qpn(get32(f, O_DST_QPN)))
		put32(f, O_DST_QPN, MAX_QP + 1);
	fix_csum(f, len);
	return len;
}

static int gen_random(uint8_t *f)
{
	int len = rn(2) ? ETH_LEN + rn(HDR_LEN + 64) : ETH_LEN + rn(mtu + 1);

	build(f, OP_ACK, TR_RC, MAX_QP + 1, 0, 0);
	for (int i = ETH_LEN; i < len; i++)
		f[i] = rnd();
	if (chance(50))
		put8(f, O_VERSION, WIRE_VERSION);
	if (len >= ETH_LEN + 8 && protected_qpn(get32(f, O_DST_QPN)))
		put32(f, O_DST_QPN, MAX_QP + 1);
	return len;
}

static int gen_trunc(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int op = valid_op(), tr = chance(70) ? TR_RC : rn(3);
	int len = build(f, op, tr, dst, peer, rn(3) ? 0 : rn(512));
	int hl = ETH_LEN + HDR_LEN + ext_len(op, tr);

	/* Every length from nothing to the whole header, and into the payload. */
	if (chance(80))
		return ETH_LEN + rn(hl - ETH_LEN + 1);
	return hl + rn(len - hl + 1);
}

static int gen_psn(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int op = valid_op();
	int len = build(f, op, TR_RC, dst, peer,
			op <= OP_WRITE_IMM ? rn(1024) : op == OP_ATOMIC_RESP ? 8 : 0);
	static const uint32_t d[] = { 1, 2, 63, 64, 65, 0x7fffff, 0x800000, 0x800001,
				      0xffffff, 0xfffff0 };

	/* Relative to a random base; with no idea of the epsn, both sides of it. */
	put32(f, O_PSN, (get32(f, O_PSN) + d[rn(10)]) & (chance(90) ? 0xffffff : 0xffffffff));
	fix_csum(f, len);
	return len;
}

static int gen_csum(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int len = build(f, valid_op(), TR_RC, dst, peer, rn(1024));

	switch (rn(3)) {
	case 0: /* flag set, checksum wrong */
		f[ETH_LEN + O_FLAGS] |= WF_CSUM;
		set_csum(f, len);
		put32(f, O_CSUM, get32(f, O_CSUM) ^ (1u << rn(32)));
		break;
	case 1: /* flag set, a payload or header bit flipped after */
		f[ETH_LEN + O_FLAGS] |= WF_CSUM;
		set_csum(f, len);
		f[ETH_LEN + rn(len - ETH_LEN)] ^= 1 << rn(8);
		if (protected_qpn(get32(f, O_DST_QPN)) || (f[ETH_LEN + O_FLAGS] & WF_CSUM) == 0) {
			put32(f, O_DST_QPN, MAX_QP + 1);
			put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] | WF_CSUM);
			put32(f, O_CSUM, get32(f, O_CSUM) ^ 1);
		}
		break;
	default: /* no checksum at all */
		put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~WF_CSUM);
		put32(f, O_CSUM, rnd());
		break;
	}
	return len;
}

static int gen_read(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	static const uint32_t seg[] = { 0, 1, 2, 7, 1024, 65536, 0x7fffffff, 0xffffffff };
	int len = build(f, OP_READ_REQ, chance(85) ? TR_RC : rn(3), dst, peer, 0);

	put32(f, O_PAY_LEN, 0);
	put32(f, O_MSG_LEN, chance(50) ? huge32() : rn(1 << 20));
	put32(f, HDR_LEN, chance(80) ? seg[rn(8)] : (uint32_t)rnd());
	if (chance(20))
		put32(f, O_PAY_LEN, rn(16));	/* a READ request carries nothing */
	if (chance(20))
		put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~WF_LAST);
	fix_csum(f, len);
	return len;
}

static int gen_atomic(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int len = build(f, chance(50) ? OP_CMP_SWAP : OP_FETCH_ADD, TR_RC, dst, peer, 0);

	switch (rn(4)) {
	case 0: put64(f, O_VA, (rnd() & ~7ULL) | (1 + rn(7))); break;	/* misaligned */
	case 1: put32(f, O_MSG_LEN, chance(50) ? rn(16) : huge32()); break;
	case 2: put32(f, O_PAY_LEN, 8); len += 8; memset(f + len - 8, 0x5a, 8); break;
	default: put8(f, O_FLAGS, WF_FIRST | (f[ETH_LEN + O_FLAGS] & WF_CSUM)); break;
	}
	fix_csum(f, len);
	return len;
}

static int gen_ack(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int len = build(f, OP_ACK, chance(90) ? TR_RC : rn(3), dst, peer, 0);

	f[ETH_LEN + HDR_LEN] = chance(50) ? rn(6) : rnd();	/* syndrome */
	f[ETH_LEN + HDR_LEN + 1] = rnd();			/* rnr_timer */
	if (chance(20))
		put32(f, O_PAY_LEN, rn(64));
	fix_csum(f, len);
	return len;
}

static int gen_resp(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer);
	int op = chance(50) ? OP_READ_RESP : OP_ATOMIC_RESP;
	int len = build(f, op, TR_RC, dst, peer, op == OP_ATOMIC_RESP ? (chance(80) ? 8 : rn(32)) : rn(4096));

	if (chance(30))
		put32(f, O_MSG_OFF, huge32());
	fix_csum(f, len);
	return len;
}

static int gen_ud(uint8_t *f)
{
	uint32_t peer, dst = chance(50) ? 1 : pick_dst(&peer);

	return build(f, chance(50) ? OP_SEND : OP_SEND_IMM, TR_UD, dst, rnd(), rn(300));
}

/*
 * A SEND message that starts small and goes on big: a FIRST frame (not
 * LAST) of a short message at PSN P, then at P + 1 a middle frame that
 * claims a huge message and an offset far beyond the receive buffer the
 * first frame took.  On UC a FIRST frame starts a message at any PSN, so a
 * victim UC QP with a posted receive takes both.  Two frames: the second
 * is left in F2 (length *LEN2).
 */
static uint8_t f2[65536 + ETH_LEN];
static int len2;

static int gen_cont(uint8_t *f)
{
	uint32_t peer, dst = pick_dst(&peer), psn = rn(1 << 24);
	int tr = chance(70) ? TR_UC : TR_RC, len;

	len = build(f, OP_SEND, tr, dst, peer, 32);
	put8(f, O_FLAGS, WF_FIRST | (f[ETH_LEN + O_FLAGS] & WF_CSUM));
	put32(f, O_PSN, psn);
	put32(f, O_MSG_LEN, 64 + rn(64));
	fix_csum(f, len);

	len2 = build(f2, OP_SEND, tr, dst, peer, 64);
	put8(f2, O_FLAGS, (chance(50) ? WF_LAST : 0) | (f2[ETH_LEN + O_FLAGS] & WF_CSUM));
	put32(f2, O_PSN, (psn + 1) & 0xffffff);
	switch (rn(3)) {
	case 0: put32(f2, O_MSG_OFF, 1 << 20); put32(f2, O_MSG_LEN, 0x7fffffff); break;
	case 1: put32(f2, O_MSG_OFF, 4096 + rn(65536)); put32(f2, O_MSG_LEN, get32(f2, O_MSG_OFF) + 64 + rn(2) * 100); break;
	default: put32(f2, O_MSG_OFF, 32); put32(f2, O_MSG_LEN, 0x10000 + rn(1 << 20)); break;
	}
	if (f2[ETH_LEN + O_FLAGS] & WF_LAST)	/* LAST: the offsets must add up */
		put32(f2, O_MSG_LEN, get32(f2, O_MSG_OFF) + 64);
	fix_csum(f2, len2);
	return len;
}

/*
 * A forged request at the PSN a victim expects (its peer's last request
 * seen on the wire, plus one) from the QP it is connected to: this is what
 * reaches the RC responder's execution with bad keys, addresses, lengths
 * and segment sizes.  Without such a victim: a psn-far frame.
 */
static int gen_inseq(uint8_t *f)
{
	static const int ops[] = { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM,
				   OP_READ_REQ, OP_CMP_SWAP, OP_FETCH_ADD,
				   OP_ATOMIC_WRITE };
	struct victim *v = NULL;
	int len, op = ops[rn(sizeof(ops) / sizeof(ops[0]))];

	for (int i = 0, k = rn(nvictims + 1); i < nvictims && !v; i++)
		if (victims[(i + k) % nvictims].seen)
			v = &victims[(i + k) % nvictims];
	if (!v)
		return gen_psn(f);
	len = build(f, op, v->transport, v->qpn, v->peer, op <= OP_WRITE_IMM ? (int)rn(2048) :
		    op == OP_ATOMIC_WRITE ? (chance(70) ? 8 : (int)rn(16)) : 0);
	put32(f, O_PSN, (v->psn + 1 + (chance(80) ? 0 : rn(3))) & 0xffffff);
	switch (rn(6)) {
	case 0: break;						/* random rkey/va */
	case 1: put32(f, O_RKEY, huge32()); break;
	case 2: put64(f, O_VA, (uint64_t)huge32() << 32 | huge32()); break;
	case 3: put32(f, O_MSG_LEN, get32(f, O_MSG_LEN) ? huge32() : rn(1 << 20)); break;
	case 4:
		if (op == OP_READ_REQ)
			put32(f, HDR_LEN, chance(50) ? rn(3) : huge32());
		else if (op >= OP_CMP_SWAP)
			put64(f, O_VA, rnd() | 1);
		else
			put8(f, O_FLAGS, WF_FIRST | (f[ETH_LEN + O_FLAGS] & WF_CSUM));	/* a message that never ends */
		break;
	default: put8(f, O_FLAGS, rnd() & ~WF_CSUM); put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] | WF_CSUM); break;
	}
	if (no_csum_ok && chance(50))
		put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~WF_CSUM);
	fix_csum(f, len);
	return len;
}

/* A victim whose own requests (or its peer's, with PEER) were captured. */
static struct victim *pick_victim(int own)
{
	for (int i = 0, k = rn(nvictims + 1); i < nvictims; i++) {
		struct victim *v = &victims[(i + k) % nvictims];

		if (own ? v->req_seen && v->transport == TR_RC : v->seen)
			return v;
	}
	return NULL;
}

/*
 * The requester's retransmission and ACK paths: a peer that lies about
 * PSNs and floods NAKs.  A burst of 1..32 frames from a victim's peer to
 * the victim, at PSNs around the one it really sent last (from a captured
 * frame): ACKs for PSNs it never sent or long ago, sequence NAKs that make
 * it go back again and again, RNR NAKs with any timer, error NAKs, and
 * READ and atomic answers with lying PSNs, lengths and offsets, requests
 * carrying ACKs (WF_ACK_PSN) for the same lying PSNs.  All but
 * the last go out here; the last is left in F.  Without such a victim: an
 * ack-syndrome frame.
 */
static int gen_retx(uint8_t *f, unsigned long *extra)
{
	struct victim *v = pick_victim(1);
	int n = 1 + rn(32), len = 0;

	if (!v)
		return gen_ack(f);
	retx_aimed++;
	for (int i = 0; i < n; i++) {
		uint32_t psn = v->req_psn + (chance(50) ? rn(8) : rn(256) - 128);
		int k = rn(12);

		if (k >= 10) {
			/*
			 * A request carrying a piggybacked ACK for PSN: the
			 * requester must take it as that ACK, or ignore it.
			 * The request itself at any PSN.
			 */
			len = build(f, OP_WRITE, TR_RC, v->qpn, v->peer, 0);
			put32(f, HDR_LEN, psn & 0xffffff);
			put32(f, HDR_LEN + 4, 0);
			len += PIGGY_LEN;
			put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] | WF_ACK_PSN);
			put32(f, O_PSN, rn(1 << 24));
			if (no_csum_ok && chance(50))
				put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~WF_CSUM);
			fix_csum(f, len);
			if (i < n - 1 && send(sock, f, len, 0) == len)
				(*extra)++;
			continue;
		}
		if (k < 6) {
			static const uint8_t syn[6] = { 0, 2, 2, 1, 0, 2 };	/* ACK, NAK_SEQ, RNR */

			len = build(f, OP_ACK, TR_RC, v->qpn, v->peer, 0);
			f[ETH_LEN + HDR_LEN] = chance(90) ? syn[rn(6)] : 3 + rn(3);
			f[ETH_LEN + HDR_LEN + 1] = chance(50) ? 1 : rn(32);	/* rnr_timer */
		} else {
			int op = k < 9 ? OP_READ_RESP : OP_ATOMIC_RESP;

			len = build(f, op, TR_RC, v->qpn, v->peer,
				    op == OP_ATOMIC_RESP ? (chance(80) ? 8 : (int)rn(16)) :
				    chance(50) ? mtu : (int)rn(mtu + 1));
			if (chance(30))
				put32(f, O_MSG_OFF, chance(50) ? huge32() : rn(1 << 20));
		}
		put32(f, O_PSN, psn & 0xffffff);
		if (no_csum_ok && chance(50))
			put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~WF_CSUM);
		fix_csum(f, len);
		if (i < n - 1 && send(sock, f, len, 0) == len)
			(*extra)++;
	}
	return len;
}

/*
 * The responder's duplicate path: requests a victim executed already (just
 * before the PSN it expects) and just outside what it keeps for them: READ
 * requests (answered again only if recent, and only as asked before),
 * atomics (answered from the saved result, never executed twice), SENDs
 * and WRITEs with ACK_REQ.  Lying lengths, keys and segment sizes.
 * Without a victim: a psn-far frame.
 */
static int gen_dup(uint8_t *f)
{
	static const int ops[] = { OP_READ_REQ, OP_READ_REQ, OP_CMP_SWAP,
				   OP_FETCH_ADD, OP_SEND, OP_WRITE };
	struct victim *v = pick_victim(0);
	int op = ops[rn(6)], len;

	if (!v)
		return gen_psn(f);
	dup_aimed++;
	len = build(f, op, v->transport, v->qpn, v->peer,
		    op == OP_SEND || op == OP_WRITE ? rn(512) : 0);
	put32(f, O_PSN, (v->psn - (chance(70) ? rn(70) : rn(1 << 20))) & 0xffffff);
	put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] | WF_ACK_REQ);
	if (op == OP_READ_REQ) {
		put32(f, O_MSG_LEN, chance(50) ? rn(1 << 20) : huge32());
		put32(f, HDR_LEN, chance(50) ? (uint32_t)(mtu - HDR_LEN) : chance(50) ? rn(4) : huge32());
	}
	if (no_csum_ok && chance(50))
		put8(f, O_FLAGS, f[ETH_LEN + O_FLAGS] & ~WF_CSUM);
	fix_csum(f, len);
	return len;
}

static int gen_replay(uint8_t *f, enum cls *c)
{
	int i = rn(ncap), len = cap[i].len;
	uint32_t dst;

	memcpy(f, cap[i].f, len);
	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	/*
	 * Exactly as sent by the peer's device (outgoing on this interface):
	 * a duplicate the device recognises.  A frame that came the other way
	 * is addressed with the other device's QP numbers: sent back, it could
	 * pass for a request of the QP it came from, so it is only replayed
	 * modified (to a QP that is not protected) or invalidated.
	 */
	if (*c == C_REPLAY && !cap[i].out)
		*c = C_REPLAY_MOD;
	if (len < ETH_LEN + HDR_LEN || *c == C_REPLAY)
		return len;
	dst = get32(f, O_DST_QPN);
	if (*c == C_REPLAY_MOD && (is_victim(dst) || !protected_qpn(dst))) {
		switch (rn(5)) {
		case 0: put32(f, O_PSN, (get32(f, O_PSN) + rn(256) - 128) & 0xffffff); break;
		case 1: put32(f, O_PAY_LEN, get32(f, O_PAY_LEN) + rn(2) * 2 - 1); break;
		case 2: put32(f, O_MSG_OFF, get32(f, O_MSG_OFF) + 1 + rn(4096)); break;
		case 3: put8(f, O_OPCODE, valid_op()); break;
		default: f[ETH_LEN + rn(len - ETH_LEN)] ^= 0xff; break;
		}
		fix_csum(f, len);
		return len;
	}
	/* A frame of a protected QP: only changes the device must drop first. */
	*c = C_REPLAY_BAD;
	switch (rn(4)) {
	case 0: put8(f, O_VERSION, WIRE_VERSION + 1 + rn(254)); return len;
	case 1: return ETH_LEN + rn(HDR_LEN);
	case 2:
		if (f[ETH_LEN + O_FLAGS] & WF_CSUM) {
			/* Any byte but the flags (which hold the CSUM bit). */
			int o = ETH_LEN + rn(len - ETH_LEN);

			if (o == ETH_LEN + O_FLAGS)
				o = ETH_LEN + O_CSUM;
			f[o] ^= 1 << rn(8);
			return len;
		}
		/* fall through */
	default: put8(f, O_OPCODE, 8 + rn(8)); return len;
	}
}

/* Take frames the interface sees into the replay pool (round robin). */
static void capture(int wait_ms)
{
	static uint8_t buf[65536 + ETH_LEN];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	struct sockaddr_ll from;
	ssize_t n;

	for (int budget = 64; budget > 0; budget--) {
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof(from),
				      .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		int summed = 1;

		if (poll(&pf, 1, wait_ms) != 1)
			return;
		n = recvmsg(sock, &msg, MSG_DONTWAIT);
		if (n < ETH_LEN + HDR_LEN || buf[12] != ETH_P_TBR >> 8 || buf[13] != (ETH_P_TBR & 0xff))
			continue;
		cap_seen++;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_PACKET && c->cmsg_type == PACKET_AUXDATA) {
				struct tpacket_auxdata aux;

				memcpy(&aux, CMSG_DATA(c), sizeof(aux));
				summed = !(aux.tp_status & TP_STATUS_CSUMNOTREADY);
			}
		/*
		 * Payloads go out zero-copy from registered memory, and a packet
		 * socket copies them only when it is read: by then the owner
		 * may have reused the buffer.  So only header-only frames can be
		 * compared with the checksum the stack computed.  A frame whose
		 * checksum was left to the netdev (veth with checksum offload on)
		 * has none yet.
		 */
		if (buf[ETH_LEN + O_FLAGS] & WF_CSUM && !get32(buf, O_PAY_LEN)) {
			int hl = frame_ext_len(buf);
			uint32_t pay = get32(buf, O_PAY_LEN);

			if (!summed) {
				cap_csum_offloaded++;
			} else if (hl >= 0 && ETH_LEN + HDR_LEN + hl + pay <= (size_t)n) {
				if (inet_csum(buf + ETH_LEN, HDR_LEN + hl + pay) == 0)
					cap_csum_ok++;
				else if (++cap_csum_bad <= 5)
					printf("checksum differs: %s opcode %u transport %u flags 0x%x psn %u pay_len %u frame %zd B\n",
					       from.sll_pkttype == PACKET_OUTGOING ? "outgoing" : "incoming",
					       buf[ETH_LEN + O_OPCODE], buf[ETH_LEN + O_TRANSPORT],
					       buf[ETH_LEN + O_FLAGS], get32(buf, O_PSN) & 0xffffff, pay, n);
			}
		}
		/* The peer's request to a victim: the victim expects PSN + 1 next. */
		if (from.sll_pkttype == PACKET_OUTGOING && buf[ETH_LEN + O_OPCODE] >= OP_SEND &&
		    buf[ETH_LEN + O_OPCODE] <= OP_FETCH_ADD && buf[ETH_LEN + O_TRANSPORT] != TR_UD)
			for (int i = 0; i < nvictims; i++)
				if (victims[i].qpn == (get32(buf, O_DST_QPN) & 0xffffff)) {
					victims[i].seen = 1;
					victims[i].psn = get32(buf, O_PSN) & 0xffffff;
					victims[i].transport = buf[ETH_LEN + O_TRANSPORT];
					if (!victims[i].peer)
						victims[i].peer = get32(buf, O_SRC_QPN);
				}
		/* A victim's own request: the PSNs its requester waits on. */
		if (from.sll_pkttype != PACKET_OUTGOING && buf[ETH_LEN + O_OPCODE] >= OP_SEND &&
		    buf[ETH_LEN + O_OPCODE] <= OP_SEND_INV && buf[ETH_LEN + O_TRANSPORT] == TR_RC)
			for (int i = 0; i < nvictims; i++)
				if (victims[i].qpn == (get32(buf, O_SRC_QPN) & 0xffffff)) {
					victims[i].req_seen = 1;
					victims[i].req_psn = get32(buf, O_PSN) & 0xffffff;
					victims[i].transport = TR_RC;
				}
		if (n > ETH_LEN + mtu)
			continue;
		free(cap[cap_next].f);
		cap[cap_next].f = malloc(n);
		if (!cap[cap_next].f)
			return;
		memcpy(cap[cap_next].f, buf, n);
		cap[cap_next].len = n;
		/*
		 * Sent again unchanged only where no stale payload can pass for
		 * the original: with a checksum (a changed payload fails it) or
		 * with no payload.
		 */
		cap[cap_next].out = from.sll_pkttype == PACKET_OUTGOING &&
				    (!get32(buf, O_PAY_LEN) || buf[ETH_LEN + O_FLAGS] & WF_CSUM);
		cap_next = (cap_next + 1) % NCAP;
		if (ncap < NCAP)
			ncap++;
		wait_ms = 0;
	}
}

static int parse_mac(const char *s, uint8_t *m)
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		m[i] = b[i];
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ifname", 1, NULL, 'i' }, { "dst-mac", 1, NULL, 'm' },
		{ "seed", 1, NULL, 's' }, { "iters", 1, NULL, 'n' },
		{ "qpns", 1, NULL, 'q' }, { "qpn-max", 1, NULL, 'M' },
		{ "capture-ms", 1, NULL, 'c' }, { "no-csum-ok", 0, NULL, 'C' },
		{ "pace-us", 1, NULL, 'p' }, { "secs", 1, NULL, 't' },
		{ "skip", 1, NULL, 'S' }, { "only", 1, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname = NULL;
	unsigned long long seed = 1, iters = 100000;
	int capture_ms = 0, pace_us = 0, o, have_dmac = 0;
	double secs = 0, t0;
	unsigned long errs = 0, total = 0;
	static uint8_t f[65536 + ETH_LEN];

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'i': ifname = optarg; break;
		case 'm':
			if (parse_mac(optarg, dmac)) {
				fprintf(stderr, "bad MAC %s\n", optarg);
				return 2;
			}
			have_dmac = 1;
			break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': iters = strtoull(optarg, NULL, 0); break;
		case 'q':
			for (char *s = optarg; *s && nvictims < 64; ) {
				char *e;

				victims[nvictims].qpn = strtoul(s, &e, 0);
				victims[nvictims].peer = *e == ':' ? strtoul(e + 1, &e, 0) : 0;
				nvictims++;
				s = *e == ',' ? e + 1 : e;
				if (*e && *e != ',')
					break;
			}
			break;
		case 'M': qpn_max = strtol(optarg, NULL, 0); break;
		case 'c': capture_ms = atoi(optarg); break;
		case 'C': no_csum_ok = 1; break;
		case 'p': pace_us = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'S': case 'O': {
			unsigned int m = 0;

			for (int i = 0; i < C_NCLS; i++) {
				const char *p = strstr(optarg, cls_name[i]);
				size_t n = strlen(cls_name[i]);

				if (p && (p == optarg || p[-1] == ',') && (!p[n] || p[n] == ','))
					m |= 1u << i;
			}
			if (!m) {
				fprintf(stderr, "--%s %s: no such class\n", o == 'S' ? "skip" : "only", optarg);
				return 2;
			}
			skip = o == 'S' ? m : ~m;
			if (o == 'O' && !(m & 1u << C_FIELD))
				only_cls = __builtin_ctz(m);
			break;
		}
		default:
			fprintf(stderr, "usage: %s --ifname IF --dst-mac MAC [--seed N] [--iters N] "
				"[--qpns DST:PEER,...] [--qpn-max N] [--capture-ms N] [--no-csum-ok] "
				"[--pace-us N] [--secs N] [--skip CLASS,...] [--only CLASS,...]\n", argv[0]);
			return 2;
		}
	}
	if (!ifname || !have_dmac) {
		fprintf(stderr, "--ifname and --dst-mac are required\n");
		return 2;
	}
	/* A known answer: the IPv4 header of RFC 1071's usual example. */
	static const uint8_t ip_hdr[] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00,
					  0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01,
					  0xc0, 0xa8, 0x00, 0xc7 };
	if (inet_csum(ip_hdr, sizeof(ip_hdr)) != 0xb861) {
		fprintf(stderr, "checksum self-check failed\n");
		return 1;
	}
	rng_state = seed * 0x9E3779B97F4A7C15ULL + 0x1234567;
	if (!rng_state)
		rng_state = 1;

	/*
	 * ETH_P_ALL: a socket bound to one protocol sees only frames coming
	 * in, and the replays want the peer's own (outgoing) frames too.  The
	 * socket never sees what it sends itself.
	 */
	sock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (sock < 0) {
		perror("socket(AF_PACKET)");
		return 1;
	}
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(sock, SIOCGIFINDEX, &ifr)) {
		perror(ifname);
		return 1;
	}
	ifindex = ifr.ifr_ifindex;
	if (!ioctl(sock, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	if (!ioctl(sock, SIOCGIFHWADDR, &ifr))
		memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = ifindex };
	if (bind(sock, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("bind");
		return 1;
	}
	/* Whether a frame's checksum was computed yet (TP_STATUS_CSUMNOTREADY). */
	int one = 1;
	if (setsockopt(sock, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one))) {
		perror("PACKET_AUXDATA");
		return 1;
	}
	if (mtu > 65535 - ETH_LEN)
		mtu = 65535 - ETH_LEN;
	printf("wirefuzz: %s (MTU %d), seed %llu, %llu frames, %d victim QPs, protected QPs %s%ld\n",
	       ifname, mtu, seed, iters, nvictims, qpn_max >= 0 ? "> " : "none ", qpn_max);

	if (capture_ms) {
		double end = now_s() + capture_ms / 1000.0;

		while (now_s() < end)
			capture(50);
		printf("captured %lu frames (%d kept) before fuzzing\n", cap_seen, ncap);
	}

	t0 = now_s();
	for (unsigned long long it = 0; it < iters; it++) {
		enum cls c = rn(C_REPLAY + 2);	/* replays: 2 shares of C_NCLS */
		int len;

		len2 = 0;
		if (skip & 1u << c)
			c = only_cls >= 0 ? (enum cls)only_cls : C_FIELD;
		if (c > C_REPLAY)
			c = chance(40) ? C_REPLAY : chance(60) ? C_REPLAY_MOD : C_REPLAY_BAD;
		if (c >= C_REPLAY && (!ncap || skip & 1u << c))
			c = only_cls >= 0 && only_cls < C_REPLAY ? (enum cls)only_cls : C_FIELD;
		switch (c) {
		case C_RANDOM: len = gen_random(f); break;
		case C_FIELD: len = gen_field(f); break;
		case C_TRUNC: len = gen_trunc(f); break;
		case C_PSN: len = gen_psn(f); break;
		case C_CSUM: len = gen_csum(f); break;
		case C_READ: len = gen_read(f); break;
		case C_ATOMIC: len = gen_atomic(f); break;
		case C_ACK: len = gen_ack(f); break;
		case C_RESP: len = gen_resp(f); break;
		case C_UD: len = gen_ud(f); break;
		case C_CONT: len = gen_cont(f); break;
		case C_INSEQ: len = gen_inseq(f); break;
		case C_RETX: len = gen_retx(f, &total); break;
		case C_DUP: len = gen_dup(f); break;
		default: len = gen_replay(f, &c); break;
		}
		if (len < ETH_LEN)
			len = ETH_LEN;
		/*
		 * Whatever a change hit (a flipped byte may make a victim's QP
		 * number a protected one): only exact replays and frames made
		 * to fail the checks before the QP lookup reach protected QPs.
		 */
		if (c != C_REPLAY && c != C_REPLAY_BAD && c != C_CSUM &&
		    len >= ETH_LEN + 8 && protected_qpn(get32(f, O_DST_QPN))) {
			put32(f, O_DST_QPN, MAX_QP + 1);
			fix_csum(f, len);
		}
		if (send(sock, f, len, 0) != len) {
			if (errno != ENOBUFS && errno != EAGAIN && ++errs < 5)
				fprintf(stderr, "send %d bytes (%s): %s\n", len, cls_name[c], strerror(errno));
		} else {
			sent[c]++;
			total++;
		}
		if (len2 && send(sock, f2, len2, 0) == len2)
			total++;
		if ((it & 31) == 0)
			capture(0);
		if (pace_us && (it & 63) == 63)	/* in batches: a sleep costs more than a frame */
			usleep(pace_us * 64);
		if (secs && (it & 255) == 0 && now_s() - t0 > secs)
			break;
	}
	double dt = now_s() - t0;

	printf("sent %lu frames in %.1f s (%.0f/s), %lu send errors\n", total, dt,
	       dt > 0 ? total / dt : 0.0, errs);
	for (int i = 0; i < C_NCLS; i++)
		printf("  %-22s %lu\n", cls_name[i], sent[i]);
	printf("aimed at a victim's real PSNs: %lu retx/ack-flood bursts, %lu duplicate requests\n",
	       retx_aimed, dup_aimed);
	printf("captured %lu frames; checksums of header-only frames reproduced: %lu, disagreeing: %lu,"
	       " left to the netdev: %lu\n", cap_seen, cap_csum_ok, cap_csum_bad, cap_csum_offloaded);
	if (cap_csum_bad) {
		fprintf(stderr, "our checksum disagrees with the stack's on %lu frames\n", cap_csum_bad);
		return 1;
	}
	return errs > total / 10 ? 1 : 0;
}
