// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work requests to WQEs, CQEs to work completions, and the doorbell
 * command.  The ABI chose its numbers so that most fields copy across:
 * the checks below pin every value we rely on at compile time.
 */
#include <errno.h>
#include <string.h>

#include "wqe.h"

/* Compare enums of different types as plain ints (-Wenum-compare). */
#define SAME_VALUE(a, b) ((int)(a) == (int)(b))

/* WQE opcodes are enum ib_uverbs_wr_opcode values, equal to IBV_WR_*. */
_Static_assert(SAME_VALUE(IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE),
	       "opcode");
_Static_assert(SAME_VALUE(IBV_WR_RDMA_WRITE_WITH_IMM,
			  IB_UVERBS_WR_RDMA_WRITE_WITH_IMM), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_SEND, IB_UVERBS_WR_SEND), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_SEND_WITH_IMM, IB_UVERBS_WR_SEND_WITH_IMM),
	       "opcode");
_Static_assert(SAME_VALUE(IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_ATOMIC_CMP_AND_SWP,
			  IB_UVERBS_WR_ATOMIC_CMP_AND_SWP), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_ATOMIC_FETCH_AND_ADD,
			  IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_LOCAL_INV, IB_UVERBS_WR_LOCAL_INV), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_BIND_MW, IB_UVERBS_WR_BIND_MW), "opcode");
_Static_assert(SAME_VALUE(IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV),
	       "opcode");
_Static_assert(SAME_VALUE(IBV_WR_ATOMIC_WRITE, TBRDMA_WR_ATOMIC_WRITE),
	       "opcode");

/* WQE send_flags are the IBV_SEND_* bits. */
_Static_assert(TBRDMA_WQE_FENCE == IBV_SEND_FENCE, "send flag");
_Static_assert(TBRDMA_WQE_SIGNALED == IBV_SEND_SIGNALED, "send flag");
_Static_assert(TBRDMA_WQE_SOLICITED == IBV_SEND_SOLICITED, "send flag");
_Static_assert(TBRDMA_WQE_INLINE == IBV_SEND_INLINE, "send flag");

/* CQE opcodes (send side) are enum ib_uverbs_wc_opcode values. */
_Static_assert(SAME_VALUE(IBV_WC_SEND, IB_UVERBS_WC_SEND), "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_RDMA_WRITE, IB_UVERBS_WC_RDMA_WRITE),
	       "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_RDMA_READ, IB_UVERBS_WC_RDMA_READ),
	       "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_COMP_SWAP, IB_UVERBS_WC_COMP_SWAP),
	       "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_FETCH_ADD, IB_UVERBS_WC_FETCH_ADD),
	       "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_BIND_MW, IB_UVERBS_WC_BIND_MW), "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_LOCAL_INV, IB_UVERBS_WC_LOCAL_INV),
	       "wc opcode");
_Static_assert(SAME_VALUE(IBV_WC_ATOMIC_WRITE, TBRDMA_WC_ATOMIC_WRITE),
	       "wc opcode");

/* A libibverbs SGE has the ring's SGE layout; we still copy by field. */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct tbrdma_sge), "sge");
_Static_assert(sizeof(struct tbrdma_send_wqe) == 64, "send WQE header");
_Static_assert(sizeof(struct tbrdma_recv_wqe) == 16, "recv WQE header");
_Static_assert(sizeof(struct tbrdma_cqe) == 64, "CQE");

#define TBRDMA_WQE_KNOWN_FLAGS (TBRDMA_WQE_FENCE | TBRDMA_WQE_SIGNALED | \
				TBRDMA_WQE_SOLICITED | TBRDMA_WQE_INLINE)

/* Which opcodes each transport carries (IBTA: UD sends only; UC has no
 * responder resources, so no READ or atomics). */
static bool opcode_allowed(enum ibv_wr_opcode opcode, enum ibv_qp_type type)
{
	/* An XRC send QP is an RC requester whose WQEs name a remote SRQ. */
	if (type == IBV_QPT_XRC_SEND)
		type = IBV_QPT_RC;
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC ||
		       type == IBV_QPT_UD;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	/* Memory windows: binding and invalidation on connected QPs. */
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_WRITE:
		return type == IBV_QPT_RC;
	default:
		/* TSO, FLUSH, driver opcodes: not offered by the device. */
		return false;
	}
}

/* BIND_MW and LOCAL_INV act on this device's keys: they have no payload. */
static bool opcode_has_payload(enum ibv_wr_opcode opcode)
{
	return opcode != IBV_WR_BIND_MW && opcode != IBV_WR_LOCAL_INV;
}

static bool opcode_reads_into_sges(enum ibv_wr_opcode opcode)
{
	return !opcode_has_payload(opcode) || opcode == IBV_WR_RDMA_READ ||
	       opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static void copy_sges(struct tbrdma_sge *dst, const struct ibv_sge *src,
		      size_t num_sge)
{
	size_t i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

static uint8_t *slot_payload(void *slot)
{
	return (uint8_t *)slot + sizeof(struct tbrdma_send_wqe);
}

int tbrdma_send_wqe_init(struct tbrdma_send_wqe *wqe, uint64_t wr_id,
			 enum ibv_wr_opcode opcode, unsigned int send_flags,
			 __be32 imm_data, enum ibv_qp_type qp_type,
			 const struct tbrdma_wq_caps *caps)
{
	if (!opcode_allowed(opcode, qp_type))
		return EINVAL;
	if (send_flags & ~TBRDMA_WQE_KNOWN_FLAGS)
		return EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr_id;
	wqe->opcode = opcode;
	wqe->send_flags = send_flags & ~TBRDMA_WQE_INLINE;
	if (caps->sig_all)
		wqe->send_flags |= TBRDMA_WQE_SIGNALED;
	if (opcode == IBV_WR_SEND_WITH_IMM ||
	    opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = imm_data;	/* big endian on both sides */
	return 0;
}

void tbrdma_send_wqe_set_rdma(struct tbrdma_send_wqe *wqe,
			      uint64_t remote_addr, uint32_t rkey)
{
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

void tbrdma_send_wqe_set_atomic(struct tbrdma_send_wqe *wqe,
				uint64_t remote_addr, uint64_t compare_add,
				uint64_t swap, uint32_t rkey)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

void tbrdma_send_wqe_set_inv(struct tbrdma_send_wqe *wqe, uint32_t rkey)
{
	wqe->wr.inv.rkey = rkey;
}

void tbrdma_send_wqe_set_bind(struct tbrdma_send_wqe *wqe, uint32_t mw_rkey,
			      uint32_t new_rkey,
			      const struct ibv_mw_bind_info *info)
{
	wqe->wr.bind.mw_rkey = mw_rkey;
	wqe->wr.bind.rkey = new_rkey;
	wqe->wr.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.bind.addr = info->addr;
	wqe->wr.bind.length = info->length;
	wqe->wr.bind.access = info->mw_access_flags;
}

int tbrdma_send_wqe_set_ud(struct tbrdma_send_wqe *wqe, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	if (!ah)
		return EINVAL;
	wqe->wr.ud.ah = to_tah(ah)->ah_handle;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
	return 0;
}

int tbrdma_send_wqe_set_sges(struct tbrdma_send_wqe *wqe, void *slot,
			     size_t slot_size,
			     const struct tbrdma_wq_caps *caps,
			     const struct ibv_sge *sg_list, size_t num_sge)
{
	if (slot_size < sizeof(*wqe) || num_sge > caps->max_sge ||
	    num_sge > (slot_size - sizeof(*wqe)) / sizeof(struct tbrdma_sge))
		return EINVAL;
	copy_sges((struct tbrdma_sge *)slot_payload(slot), sg_list, num_sge);
	wqe->send_flags &= ~TBRDMA_WQE_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = (uint32_t)num_sge;
	return 0;
}

int tbrdma_send_wqe_inline_start(struct tbrdma_send_wqe *wqe)
{
	/* READ and atomics write their result into local memory: there is
	 * nothing to copy inline. */
	if (opcode_reads_into_sges(wqe->opcode))
		return EINVAL;
	wqe->send_flags |= TBRDMA_WQE_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = 0;
	return 0;
}

int tbrdma_send_wqe_inline_add(struct tbrdma_send_wqe *wqe, void *slot,
			       size_t slot_size,
			       const struct tbrdma_wq_caps *caps,
			       const void *addr, size_t len)
{
	size_t limit;

	if (slot_size < sizeof(*wqe) || !(wqe->send_flags & TBRDMA_WQE_INLINE))
		return EINVAL;
	limit = slot_size - sizeof(*wqe);
	if (limit > caps->max_inline)
		limit = caps->max_inline;
	/* inline_len <= limit always holds, so this cannot wrap. */
	if (len > limit - wqe->inline_len)
		return EINVAL;
	if (len)
		memcpy(slot_payload(slot) + wqe->inline_len, addr, len);
	wqe->inline_len += (uint32_t)len;
	return 0;
}

/* The bytes the SGEs name, inline after the header (lkeys unused). */
static int gather_inline(struct tbrdma_send_wqe *wqe, void *slot,
			 size_t slot_size, const struct tbrdma_wq_caps *caps,
			 const struct ibv_sge *sg_list, int num_sge)
{
	int ret = tbrdma_send_wqe_inline_start(wqe);
	int i;

	for (i = 0; !ret && i < num_sge; i++)
		ret = tbrdma_send_wqe_inline_add(
			wqe, slot, slot_size, caps,
			(const void *)(uintptr_t)sg_list[i].addr,
			sg_list[i].length);
	return ret;
}

/*
 * ATOMIC_WRITE's 8 bytes travel inline whatever the QP's max_inline_data
 * (a slot always has room for them): its own inline limit.
 */
static const struct tbrdma_wq_caps atomic_write_caps = {
	.max_inline = sizeof(uint64_t),
};

int tbrdma_send_wqe_set_atomic_write(struct tbrdma_send_wqe *wqe, void *slot,
				     size_t slot_size, const void *value)
{
	int ret = tbrdma_send_wqe_inline_start(wqe);

	return ret ? ret : tbrdma_send_wqe_inline_add(wqe, slot, slot_size,
						      &atomic_write_caps, value,
						      sizeof(uint64_t));
}

void tbrdma_send_wqe_commit(void *slot, const struct tbrdma_send_wqe *wqe)
{
	memcpy(slot, wqe, sizeof(*wqe));
}

int tbrdma_build_send_wqe(const struct ibv_send_wr *wr,
			  enum ibv_qp_type qp_type,
			  const struct tbrdma_wq_caps *caps, void *slot,
			  size_t slot_size)
{
	struct tbrdma_send_wqe wqe;
	int ret;

	if (slot_size < sizeof(wqe) || wr->num_sge < 0)
		return EINVAL;
	ret = tbrdma_send_wqe_init(&wqe, wr->wr_id, wr->opcode,
				   wr->send_flags, wr->imm_data, qp_type, caps);
	if (ret)
		return ret;

	if (qp_type == IBV_QPT_XRC_SEND)
		wqe.xrc_remote_srqn = wr->qp_type.xrc.remote_srqn;
	if (qp_type == IBV_QPT_UD) {
		ret = tbrdma_send_wqe_set_ud(&wqe, wr->wr.ud.ah,
					     wr->wr.ud.remote_qpn,
					     wr->wr.ud.remote_qkey);
		if (ret)
			return ret;
	} else {
		switch (wr->opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
		case IBV_WR_ATOMIC_WRITE:	/* the 8 bytes: SGEs or inline */
			tbrdma_send_wqe_set_rdma(&wqe, wr->wr.rdma.remote_addr,
						 wr->wr.rdma.rkey);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			tbrdma_send_wqe_set_atomic(&wqe,
						   wr->wr.atomic.remote_addr,
						   wr->wr.atomic.compare_add,
						   wr->wr.atomic.swap,
						   wr->wr.atomic.rkey);
			break;
		case IBV_WR_LOCAL_INV:
		case IBV_WR_SEND_WITH_INV:
			tbrdma_send_wqe_set_inv(&wqe, wr->invalidate_rkey);
			break;
		case IBV_WR_BIND_MW:
			if (!wr->bind_mw.mw)
				return EINVAL;
			tbrdma_send_wqe_set_bind(&wqe, wr->bind_mw.mw->rkey,
						 wr->bind_mw.rkey,
						 &wr->bind_mw.bind_info);
			break;
		default:
			break;
		}
	}

	if (!opcode_has_payload(wr->opcode)) {
		/* No SGEs (num_sge and sg_list are not looked at). */
		ret = 0;
	} else if (wr->opcode == IBV_WR_ATOMIC_WRITE) {
		/* Exactly 8 bytes, from as many SGEs as the caller likes. */
		ret = gather_inline(&wqe, slot, slot_size, &atomic_write_caps,
				    wr->sg_list, wr->num_sge);
		if (!ret && wqe.inline_len != sizeof(uint64_t))
			ret = EINVAL;
	} else if (wr->send_flags & IBV_SEND_INLINE) {
		ret = gather_inline(&wqe, slot, slot_size, caps, wr->sg_list,
				    wr->num_sge);
	} else {
		ret = tbrdma_send_wqe_set_sges(&wqe, slot, slot_size, caps,
					       wr->sg_list,
					       (size_t)wr->num_sge);
	}
	if (ret)
		return ret;

	tbrdma_send_wqe_commit(slot, &wqe);
	return 0;
}

int tbrdma_build_recv_wqe(const struct ibv_recv_wr *wr,
			  const struct tbrdma_wq_caps *caps, void *slot,
			  size_t slot_size)
{
	struct tbrdma_recv_wqe wqe;

	if (slot_size < sizeof(wqe) || wr->num_sge < 0 ||
	    (uint32_t)wr->num_sge > caps->max_sge ||
	    (size_t)wr->num_sge >
		    (slot_size - sizeof(wqe)) / sizeof(struct tbrdma_sge))
		return EINVAL;

	memset(&wqe, 0, sizeof(wqe));
	wqe.wr_id = wr->wr_id;
	wqe.num_sge = (uint32_t)wr->num_sge;
	memcpy(slot, &wqe, sizeof(wqe));
	copy_sges((struct tbrdma_sge *)((uint8_t *)slot + sizeof(wqe)),
		  wr->sg_list, (size_t)wr->num_sge);
	return 0;
}

/*
 * A RoCE receive completion has no service level; what hardware reports in
 * sl for a UD receive with a GRH is the packet's L3 header type (mlx5: 1
 * IPv6, 2 IPv4), and UCX's UD transport reads it to find the destination
 * address in the 40 bytes in front of the payload: the last 4 bytes hold an
 * IPv4 header's daddr, the last 16 an IPv6 header's.  Report the same.
 */
#define TBRDMA_WC_SL_IPV6	1
#define TBRDMA_WC_SL_IPV4	2

static uint8_t tbrdma_wc_sl(const struct tbrdma_cqe *cqe)
{
	if (!(cqe->wc_flags & TBRDMA_CQE_GRH))
		return 0;
	switch (cqe->network_hdr_type) {
	case TBRDMA_NETWORK_IPV4:
		return TBRDMA_WC_SL_IPV4;
	case TBRDMA_NETWORK_IPV6:
		return TBRDMA_WC_SL_IPV6;
	default:
		return 0;
	}
}

void tbrdma_cqe_to_wc(const struct tbrdma_cqe *cqe, struct ibv_wc *wc)
{
	unsigned int flags = 0;

	if (cqe->wc_flags & TBRDMA_CQE_WITH_IMM)
		flags |= IBV_WC_WITH_IMM;
	if (cqe->wc_flags & TBRDMA_CQE_GRH)
		flags |= IBV_WC_GRH;
	if (cqe->wc_flags & TBRDMA_CQE_WITH_INV)
		flags |= IBV_WC_WITH_INV;

	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;		/* big endian on both sides */
	if (cqe->wc_flags & TBRDMA_CQE_WITH_INV)	/* shares imm_data's place */
		wc->invalidated_rkey = cqe->invalidate_rkey;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = flags;
	wc->pkey_index = cqe->pkey_index;
	/* Ethernet link layer: no LIDs. */
	wc->slid = 0;
	wc->sl = tbrdma_wc_sl(cqe);
	wc->dlid_path_bits = 0;
}

void tbrdma_build_doorbell(struct ibv_post_send *cmd, uint32_t qp_handle,
			   struct ib_uverbs_post_send_resp *resp)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	/* Legacy write ABI: sizes in 4-byte words, in_words including the
	 * 8-byte header (the kernel insists in_words * 4 == write size). */
	cmd->hdr.in_words = sizeof(*cmd) / 4;
	cmd->hdr.out_words = sizeof(*resp) / 4;
	cmd->core_payload.response = (uintptr_t)resp;
	cmd->core_payload.qp_handle = qp_handle;
	cmd->core_payload.wr_count = 0;
	cmd->core_payload.sge_count = 0;
	/* Checked by the kernel even with no WRs (>= sizeof(send_wr)). */
	cmd->core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
}
