/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Translation between libibverbs' structs and the ring entries of
 * uapi/tbrdma-abi.h: work requests to WQEs, CQEs to work completions, and
 * the doorbell command.  Pure functions (no locks, no system calls, no
 * libibverbs calls), unit-tested on the host in tests/unit/test_wqe.c.
 */
#ifndef TBRDMA_WQE_H
#define TBRDMA_WQE_H

#include <stddef.h>

#include "tbrdma.h"

/*
 * Write the send WQE for wr into slot (slot_size bytes) of a QP of type
 * qp_type.  Returns 0, or EINVAL when the WR cannot be posted: an opcode
 * the QP type does not allow (UD: SEND, SEND_WITH_IMM; UC: no READ or
 * atomics; RC, UC: no TSO/ATOMIC_WRITE/FLUSH; BIND_MW, LOCAL_INV: no
 * payload, their SGEs are ignored), unknown send_flags, more
 * SGEs than caps->max_sge, more inline bytes than caps->max_inline,
 * INLINE with READ or an atomic, a UD WR without an AH.  Nothing but slot
 * is written; on error the slot may hold a partial WQE (it is not
 * published).
 */
int tbrdma_build_send_wqe(const struct ibv_send_wr *wr,
			  enum ibv_qp_type qp_type,
			  const struct tbrdma_wq_caps *caps, void *slot,
			  size_t slot_size);

/*
 * A send WQE step by step.  tbrdma_build_send_wqe() is these steps applied
 * to one ibv_send_wr; the ibv_wr_* builders (wr.c) call the same steps as
 * the application calls them, so both posting APIs share one translation
 * and one set of rules.  The header is assembled in private memory (*wqe)
 * and copied into the slot last (commit); the payload (SGEs or inline
 * bytes) goes straight into the slot behind the header.  Every step
 * returns 0 or EINVAL and writes nothing outside *wqe and the slot.
 *
 *  1. tbrdma_send_wqe_init(): opcode allowed on the QP type, send_flags
 *     known; wr_id, opcode, flags (plus SIGNALED for sq_sig_all), imm for
 *     the *_WITH_IMM opcodes.  IBV_SEND_INLINE is accepted but not stored:
 *     step 3 decides whether the WQE is inline.
 *  2. the remote part, by opcode and QP type: _set_rdma(), _set_atomic(),
 *     _set_ud() (UD: every WQE needs an AH).
 *  3. the payload: _set_sges(), or _inline_start() then _inline_add() per
 *     buffer.  A later payload call replaces an earlier one.
 *  4. tbrdma_send_wqe_commit(): the header into the slot.
 */
int tbrdma_send_wqe_init(struct tbrdma_send_wqe *wqe, uint64_t wr_id,
			 enum ibv_wr_opcode opcode, unsigned int send_flags,
			 __be32 imm_data, enum ibv_qp_type qp_type,
			 const struct tbrdma_wq_caps *caps);
void tbrdma_send_wqe_set_rdma(struct tbrdma_send_wqe *wqe,
			      uint64_t remote_addr, uint32_t rkey);
void tbrdma_send_wqe_set_atomic(struct tbrdma_send_wqe *wqe,
				uint64_t remote_addr, uint64_t compare_add,
				uint64_t swap, uint32_t rkey);
/* LOCAL_INV, SEND_WITH_INV: the rkey to invalidate. */
void tbrdma_send_wqe_set_inv(struct tbrdma_send_wqe *wqe, uint32_t rkey);
/* ATOMIC_WRITE: the 8 bytes at @value, inline (after set_rdma). */
int tbrdma_send_wqe_set_atomic_write(struct tbrdma_send_wqe *wqe, void *slot,
				     size_t slot_size, const void *value);
/* BIND_MW: the window (by its current rkey), its new rkey, what to bind. */
void tbrdma_send_wqe_set_bind(struct tbrdma_send_wqe *wqe, uint32_t mw_rkey,
			      uint32_t new_rkey,
			      const struct ibv_mw_bind_info *info);
/* EINVAL without an AH. */
int tbrdma_send_wqe_set_ud(struct tbrdma_send_wqe *wqe, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey);
/* EINVAL: more than caps->max_sge, or than fit in the slot. */
int tbrdma_send_wqe_set_sges(struct tbrdma_send_wqe *wqe, void *slot,
			     size_t slot_size,
			     const struct tbrdma_wq_caps *caps,
			     const struct ibv_sge *sg_list, size_t num_sge);
/* EINVAL for READ and atomics (their data goes into local memory) and for
 * BIND_MW and LOCAL_INV (no data). */
int tbrdma_send_wqe_inline_start(struct tbrdma_send_wqe *wqe);
/* Append len bytes; EINVAL past caps->max_inline or the slot's end. */
int tbrdma_send_wqe_inline_add(struct tbrdma_send_wqe *wqe, void *slot,
			       size_t slot_size,
			       const struct tbrdma_wq_caps *caps,
			       const void *addr, size_t len);
void tbrdma_send_wqe_commit(void *slot, const struct tbrdma_send_wqe *wqe);

/* Write the receive WQE for wr.  0 or EINVAL (too many SGEs). */
int tbrdma_build_recv_wqe(const struct ibv_recv_wr *wr,
			  const struct tbrdma_wq_caps *caps, void *slot,
			  size_t slot_size);

/* Convert one CQE into the work completion libibverbs returns. */
void tbrdma_cqe_to_wc(const struct tbrdma_cqe *cqe, struct ibv_wc *wc);

/*
 * The SQ doorbell: a legacy IB_USER_VERBS_CMD_POST_SEND with no work
 * requests (what rdma-core's rxe provider sends), written to the uverbs
 * file in one write() of sizeof(*cmd) bytes.  resp receives bad_wr.
 */
void tbrdma_build_doorbell(struct ibv_post_send *cmd, uint32_t qp_handle,
			   struct ib_uverbs_post_send_resp *resp);

#endif /* TBRDMA_WQE_H */
