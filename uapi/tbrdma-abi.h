/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * tbrdma user/kernel ABI: everything tbrdma.ko and libtbrdma exchange.
 *
 * Included by the kernel module (kmod/) and by the rdma-core provider
 * (provider/).  Only fixed-size types, explicit padding, no pointers, so the
 * layout is the same for every compiler and both sides can assert sizes.
 *
 * Versioning: TBRDMA_UVERBS_ABI_VERSION is the driver ABI version the kernel
 * reports in /sys/class/infiniband_verbs/uverbsN/abi_version and in the
 * per-device attribute TBRDMA_SYSFS_ABI_ATTR.  The provider refuses any
 * device whose version differs from the one it was built with.  Structures
 * only ever grow at the end; the kernel copies min(its size, user size).
 */
#ifndef TBRDMA_ABI_H
#define TBRDMA_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define TBRDMA_UVERBS_ABI_VERSION	2

/* Name of the provider, of the rdma link type and of the kernel module. */
#define TBRDMA_DRIVER_NAME		"tbrdma"

/*
 * Per-device sysfs attributes, under /sys/class/infiniband/<ibdev>/.
 * The provider matches a device by reading TBRDMA_SYSFS_ABI_ATTR: udev may
 * rename devices, so the name alone proves nothing.
 */
#define TBRDMA_SYSFS_ABI_ATTR		"tbrdma_abi_version"
#define TBRDMA_SYSFS_MODE_ATTR		"tbrdma_mode"

/* Contents of TBRDMA_SYSFS_MODE_ATTR, and tbrdma_alloc_ucontext_resp.mode. */
enum tbrdma_mode {
	TBRDMA_MODE_LOOPBACK = 1,	/* netdev lo: traffic stays in the kernel */
	TBRDMA_MODE_NETDEV = 2,		/* an Ethernet-type link (thunderbolt-net, veth) */
};

#define TBRDMA_MODE_LOOPBACK_NAME	"loopback"
#define TBRDMA_MODE_NETDEV_NAME		"netdev"

/*
 * Driver data of IB_USER_VERBS_CMD_GET_CONTEXT.  The request is optional
 * (a provider that sends none gets no doorbell file).
 */
struct tbrdma_alloc_ucontext_req {
	__u32 flags;		/* TBRDMA_UCTX_*: what the provider asks for */
	__u32 reserved;		/* 0 */
};

/*
 * Ask for (request) and got (response) a doorbell file: a file descriptor,
 * close-on-exec, installed in the calling process, on which
 * ioctl(fd, TBRDMA_IOCTL_SQ_DOORBELL, qp_num) does what a POST_SEND with
 * no work requests does on the uverbs file, for a QP of this context,
 * without the uverbs command parser (a few microseconds per message).
 * The provider closes it with the context.  Errors: EINVAL for a QP
 * number that is not one of this context's QPs, EIO once the context is
 * gone (device removed), ENOTTY for any other request, EACCES when used
 * with other credentials than it was created with (as uverbs does).
 */
#define TBRDMA_UCTX_DOORBELL_FD		(1U << 0)

#define TBRDMA_IOCTL_MAGIC		0xdb
#define TBRDMA_IOCTL_SQ_DOORBELL	_IO(TBRDMA_IOCTL_MAGIC, 1)

struct tbrdma_alloc_ucontext_resp {
	__u32 abi_version;	/* TBRDMA_UVERBS_ABI_VERSION */
	__u32 mode;		/* enum tbrdma_mode */
	__u32 flags;		/* TBRDMA_UCTX_*: what was granted */
	__s32 doorbell_fd;	/* with TBRDMA_UCTX_DOORBELL_FD; else -1 */
};

/* Driver data of IB_USER_VERBS_CMD_ALLOC_PD (no request data). */
struct tbrdma_alloc_pd_resp {
	__u32 pdn;		/* device-unique PD number, for diagnostics */
	__u32 reserved;
};

/*
 * Shared queues.
 *
 * Every send queue (SQ), receive queue (RQ), shared receive queue (SRQ) and
 * completion queue (CQ) of a user object is one ring in memory the kernel
 * allocates and user space maps with mmap() on the uverbs file, at the
 * offset the create (or resize) response gives.  The mapping starts with a
 * struct tbrdma_queue_hdr, and slot i of the ring starts at
 * TBRDMA_QUEUE_SLOTS_OFFSET + i * slot_size.  The number of slots is a power
 * of two; producer and consumer are free-running 32-bit counters (slot =
 * counter & (slots - 1)), so producer - consumer is the fill level.
 *
 * SQ, RQ, SRQ: user space produces work queue entries (WQEs), the kernel
 * consumes them.  CQ: the kernel produces completion queue entries (CQEs),
 * user space consumes them.  A side writes only its own counter; it writes
 * the slot contents before publishing the counter (release), and reads the
 * other side's counter before reading slots (acquire).  The kernel copies
 * every WQE out of the ring before validating it and treats every value
 * user space wrote as untrusted: a bad WQE completes in error, a bad counter
 * puts the queue's QP (or CQ) in error.
 */
#define TBRDMA_QUEUE_SLOTS_OFFSET	256

struct tbrdma_queue_hdr {
	__u32 producer;
	__u32 reserved0[15];	/* producer and consumer on separate cache lines */
	__u32 consumer;
	__u32 reserved1[15];
	__u32 flags;		/* TBRDMA_SQ_FLAG_* or TBRDMA_CQ_ARM_*, see there */
	__u32 reserved2[31];
};

/*
 * SQ flags, written by the kernel: while KERNEL_ACTIVE is set, the kernel is
 * processing the SQ (or will come back to it from a timer) and will see any
 * new producer value, so posting needs no doorbell.  User space publishes
 * the producer, issues a full barrier, then reads the flag; the kernel
 * clears the flag, issues a full barrier, then reads the producer once more.
 */
#define TBRDMA_SQ_FLAG_KERNEL_ACTIVE	(1U << 0)

/*
 * RQ flags, written by the kernel: FLUSH is set while the QP is in the error
 * state.  Receives posted then must complete with a flush error, so after
 * posting user space rings the kernel (a POST_RECV command with no work
 * requests) when it sees the flag; otherwise posting a receive needs no
 * system call at all.
 */
#define TBRDMA_RQ_FLAG_FLUSH		(1U << 0)

/*
 * CQ flags, written by user space to arm the CQ (ibv_req_notify_cq) and
 * cleared by the kernel when it raises the completion event: NEXT fires on
 * the next CQE, SOLICITED on the next solicited CQE or error CQE.
 */
#define TBRDMA_CQ_ARM_NEXT		(1U << 0)
#define TBRDMA_CQ_ARM_SOLICITED		(1U << 1)

/* A scatter/gather element: addr is an address inside the MR of lkey. */
struct tbrdma_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* send_flags of a send WQE: the values of IBV_SEND_* and IB_SEND_*. */
#define TBRDMA_WQE_FENCE		(1U << 0)
#define TBRDMA_WQE_SIGNALED		(1U << 1)
#define TBRDMA_WQE_SOLICITED		(1U << 2)
#define TBRDMA_WQE_INLINE		(1U << 3)

/*
 * A send WQE: a 64-byte header followed by num_sge SGEs, or, with
 * TBRDMA_WQE_INLINE, by inline_len bytes of payload copied at post time.
 * opcode is an enum ib_uverbs_wr_opcode value (equal to IBV_WR_*), or
 * TBRDMA_WR_REG_MR.
 *
 * Kernel QPs only (the kernel completes them in error on a user QP): the
 * fast-registration work request of kernel consumers, TBRDMA_WR_REG_MR
 * (the value of the kernel's IB_WR_REG_MR) with wr.reg.
 *
 * RC and UC QPs, user and kernel: IB_UVERBS_WR_LOCAL_INV and
 * IB_UVERBS_WR_SEND_WITH_INV with wr.inv (a fast-registration MR's key or
 * a type 2 memory window's rkey), and IB_UVERBS_WR_BIND_MW with wr.bind
 * (user QPs: ibv_bind_mw() for type 1 windows, IBV_WR_BIND_MW for type 2).
 */
#define TBRDMA_WR_REG_MR		0x20

/*
 * RDMA ATOMIC WRITE (IBTA 1.5), RC and XRC send QPs: wr.rdma names the
 * remote 8 bytes (8-byte aligned, an MR with remote write access), and the
 * WQE carries the 8 bytes to store there in one piece inline
 * (TBRDMA_WQE_INLINE, inline_len 8) whatever the QP's inline limit.
 * Completes with TBRDMA_WC_ATOMIC_WRITE.  The values are those of kernel 6.2's
 * IB_UVERBS_WR_ATOMIC_WRITE and IB_UVERBS_WC_ATOMIC_WRITE (and of
 * libibverbs' IBV_WR_/IBV_WC_ATOMIC_WRITE), which 6.1's headers lack.
 */
#define TBRDMA_WR_ATOMIC_WRITE		15
#define TBRDMA_WC_ATOMIC_WRITE		9

struct tbrdma_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;	/* TBRDMA_WQE_* */
	__u32 num_sge;		/* without TBRDMA_WQE_INLINE */
	__u32 inline_len;	/* with TBRDMA_WQE_INLINE */
	__be32 imm_data;	/* *_WITH_IMM */
	__u32 xrc_remote_srqn;	/* XRC_INI QPs: the responder's XRC SRQ; else 0 */
	union {
		struct {	/* RDMA_WRITE*, RDMA_READ, ATOMIC_WRITE */
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {	/* ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD */
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {	/* UD QPs */
			__u32 ah;	/* tbrdma_create_ah_resp.ah_handle */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {	/* TBRDMA_WR_REG_MR: the MR is key >> 8 */
			__aligned_u64 iova;	/* of its first byte */
			__aligned_u64 length;
			__u32 key;	/* the new lkey == rkey */
			__u32 access;	/* IB_ACCESS_* */
		} reg;
		struct {	/* LOCAL_INV, SEND_WITH_INV */
			__u32 rkey;	/* the key to invalidate */
			__u32 reserved;
		} inv;
		struct {	/* BIND_MW: the window is mw_rkey >> 8 */
			__aligned_u64 addr;	/* first byte, in the MR */
			__aligned_u64 length;	/* 0: type 1 only, unbind */
			__u32 mw_rkey;	/* the window's rkey as allocated/bound */
			__u32 rkey;	/* the new rkey: low 8 bits used */
			__u32 mr_lkey;	/* the MR (needs IBV_ACCESS_MW_BIND) */
			__u32 access;	/* IBV_ACCESS_REMOTE_* (+ LOCAL_WRITE) */
		} bind;
	} wr;
};

/* A receive WQE (RQ and SRQ): a 16-byte header followed by num_sge SGEs. */
struct tbrdma_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* wc_flags of a CQE (tbrdma's own; each side converts to its enum). */
#define TBRDMA_CQE_WITH_IMM		(1U << 0)
#define TBRDMA_CQE_GRH			(1U << 1)
#define TBRDMA_CQE_WITH_INV		(1U << 2)	/* invalidate_rkey is set */

/* network_hdr_type of a CQE: the kernel's enum rdma_network_type values. */
#define TBRDMA_NETWORK_IPV4		2
#define TBRDMA_NETWORK_IPV6		3

/*
 * A CQE.  status is an enum ib_wc_status value and opcode an enum
 * ib_wc_opcode value; both equal libibverbs' IBV_WC_* values.
 */
struct tbrdma_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__be32 imm_data;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;		/* TBRDMA_CQE_* */
	__u16 pkey_index;
	__u8 network_hdr_type;	/* with TBRDMA_CQE_GRH: enum rdma_network_type */
	__u8 reserved0;
	__u32 invalidate_rkey;	/* with TBRDMA_CQE_WITH_INV */
	/*
	 * When the module wrote the CQE, CLOCK_MONOTONIC in ns (user CQs
	 * only): the provider's completion timestamp.  Old modules left
	 * it 0 (the field was reserved).
	 */
	__aligned_u64 completion_ns;
	__u32 reserved1[2];
};

/* Where one queue is and how it is laid out. */
struct tbrdma_queue_info {
	__aligned_u64 mmap_offset;	/* for mmap() on the uverbs file */
	__u32 mmap_size;		/* bytes to map, header included */
	__u32 num_slots;		/* a power of two */
	__u32 slot_size;		/* bytes per WQE/CQE slot */
	__u32 reserved;
};

/* Driver data of CREATE_CQ and RESIZE_CQ (no request data). */
struct tbrdma_create_cq_resp {
	struct tbrdma_queue_info cq;
};

/* Driver data of CREATE_QP (no request data).  A QP on an SRQ has no RQ. */
struct tbrdma_create_qp_resp {
	struct tbrdma_queue_info sq;
	struct tbrdma_queue_info rq;	/* num_slots 0: none */
	__u32 max_inline_data;
	__u32 reserved;
};

/* Driver data of CREATE_SRQ (no request data). */
struct tbrdma_create_srq_resp {
	struct tbrdma_queue_info srq;
};

/* Driver data of CREATE_AH (no request data). */
struct tbrdma_create_ah_resp {
	__u32 ah_handle;	/* goes into tbrdma_send_wqe.wr.ud.ah */
	__u32 reserved;
};

#endif /* TBRDMA_ABI_H */
