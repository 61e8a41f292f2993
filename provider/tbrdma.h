/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private types of the tbrdma provider: what it wraps around the
 * libibverbs objects, and how the driver data of each command is laid out
 * after the core uverbs structs.
 */
#ifndef TBRDMA_PROVIDER_H
#define TBRDMA_PROVIDER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rdma-core-private.h"
#include "../uapi/tbrdma-abi.h"
#include "queue.h"

/* container_of without the GNU statement-expression dependency. */
#define tbrdma_container_of(ptr, type, member) \
	((type *)((uintptr_t)(ptr) - offsetof(type, member)))

struct tbrdma_device {
	struct verbs_device ibv_dev;	/* first: libibverbs owns the start */
};

struct tbrdma_context {
	struct verbs_context ibv_ctx;
	enum tbrdma_mode mode;		/* from GET_CONTEXT; loopback or netdev */
	int doorbell_fd;		/* from GET_CONTEXT; -1: ring via uverbs */
	/* Does the module stamp completions?  0 not asked yet, 1 no, 2 yes
	 * (cq.c asks the device once; relaxed atomics: any thread may). */
	int completion_stamps;
};

struct tbrdma_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;			/* kernel's PD number, for diagnostics */
};

/* What a work queue accepts per WQE: the smaller of what the kernel
 * granted and what fits in one of its slots. */
struct tbrdma_wq_caps {
	uint32_t max_sge;
	uint32_t max_inline;		/* send queues only */
	bool sig_all;			/* sq_sig_all: every send WQE signaled */
};

/*
 * A work queue (SQ, RQ or SRQ) as user space produces it.  Each has its
 * own lock, so posting sends and receives on one QP never contend.
 */
struct tbrdma_wq {
	pthread_spinlock_t lock;
	struct tbrdma_queue q;		/* q.map NULL: the QP has no such queue */
	struct tbrdma_wq_caps caps;
};

/* A CQ ring a resize replaced, kept mapped until the CQ is destroyed. */
struct tbrdma_cq_retired {
	struct tbrdma_cq_retired *next;
	struct tbrdma_queue q;
};

struct tbrdma_cq {
	union {				/* ibv_cq_ex starts with an ibv_cq */
		struct ibv_cq ibv_cq;
		struct ibv_cq_ex ibv_cq_ex;	/* ibv_create_cq_ex() */
	};
	pthread_spinlock_t lock;	/* pollers, arming and resize */
	struct tbrdma_queue q;		/* q.map NULL after a failed remap */
	/*
	 * The lock-free "is it empty?" look of poll_cq (cq.c, cq_peek_empty):
	 * the ring's header, NULL while a resize runs or after one failed,
	 * and a copy of q.index, both written under the lock.  Rings a
	 * resize replaced stay mapped (retired) until destroy_cq, so a
	 * poller that read the old header pointer never touches an unmapped
	 * page.
	 */
	struct tbrdma_queue_hdr *peek_hdr;
	uint32_t peek_index;
	struct tbrdma_cq_retired *retired;
	/* Extended CQs: the completion ibv_start_poll/ibv_next_poll found,
	 * valid (and its slot not yet consumed) until the next call. */
	struct ibv_wc cur;
	uint64_t cur_ns;		/* its completion_ns */
	bool cur_valid;
	/* With IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK: CLOCK_REALTIME
	 * minus CLOCK_MONOTONIC, taken by start_poll. */
	int64_t wallclock_offset_ns;
	bool wants_wallclock;
};

/*
 * The ibv_wr_* posting state of a QP (wr.c).  Only meaningful between
 * ibv_wr_start() and ibv_wr_complete()/ibv_wr_abort(), i.e. while the
 * thread holds sq.lock, which it does for that whole critical region.
 * Nothing is published before wr_complete, so discarding a batch is just
 * forgetting this state.
 */
struct tbrdma_wr_batch {
	uint32_t producer;		/* counter of the next slot to claim */
	uint32_t consumer;		/* the kernel's consumer, last read */
	int err;			/* first error; wr_complete returns it */
	bool open;			/* a builder claimed slot, cur is open */
	bool need_ud;			/* UD: open WQE has no address yet */
	void *slot;			/* the claimed slot */
	struct tbrdma_send_wqe cur;	/* its header, committed last */
};

struct tbrdma_qp {
	/* First, for every QP: libibverbs reads vqp.comp_mask of any
	 * ibv_qp (ibv_qp_to_qp_ex).  vqp.qp is the ibv_qp we hand out. */
	struct verbs_qp vqp;
	struct tbrdma_wq sq;
	struct tbrdma_wq rq;		/* unmapped on an SRQ */
	struct tbrdma_wr_batch wr;	/* extended QPs: ibv_wr_* state */
};

struct tbrdma_srq {
	union {
		struct ibv_srq ibv_srq;
		struct verbs_srq vsrq;	/* vsrq.srq is ibv_srq; XRC: srq_num */
	};
	struct tbrdma_wq rq;
};

struct tbrdma_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_handle;		/* goes into tbrdma_send_wqe.wr.ud.ah */
};

static inline struct tbrdma_context *to_tctx(struct ibv_context *ibctx)
{
	return tbrdma_container_of(ibctx, struct tbrdma_context,
				   ibv_ctx.context);
}

static inline struct tbrdma_pd *to_tpd(struct ibv_pd *ibpd)
{
	return tbrdma_container_of(ibpd, struct tbrdma_pd, ibv_pd);
}

static inline struct tbrdma_cq *to_tcq(struct ibv_cq *ibcq)
{
	return tbrdma_container_of(ibcq, struct tbrdma_cq, ibv_cq);
}

static inline struct tbrdma_qp *to_tqp(struct ibv_qp *ibqp)
{
	return tbrdma_container_of(ibqp, struct tbrdma_qp, vqp.qp);
}

static inline struct tbrdma_qp *to_tqp_ex(struct ibv_qp_ex *ibqpx)
{
	return tbrdma_container_of(ibqpx, struct tbrdma_qp, vqp.qp_ex);
}

static inline struct tbrdma_srq *to_tsrq(struct ibv_srq *ibsrq)
{
	return tbrdma_container_of(ibsrq, struct tbrdma_srq, ibv_srq);
}

static inline struct tbrdma_ah *to_tah(struct ibv_ah *ibah)
{
	return tbrdma_container_of(ibah, struct tbrdma_ah, ibv_ah);
}

/*
 * Whole responses as the kernel writes them: core response, then our
 * driver data (the kernel's udata->outbuf) right behind it.  The asserts
 * make sure the compiler adds no padding in between or after.
 */
struct tbrdma_cmd_get_context {
	struct ibv_get_context ibv_cmd;
	struct tbrdma_alloc_ucontext_req drv;
};

struct tbrdma_cmd_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct tbrdma_alloc_ucontext_resp drv;
};

struct tbrdma_cmd_alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct tbrdma_alloc_pd_resp drv;
};

_Static_assert(offsetof(struct tbrdma_cmd_get_context, drv) ==
		       sizeof(struct ibv_get_context),
	       "GET_CONTEXT driver data must follow the core request");
_Static_assert(offsetof(struct tbrdma_cmd_get_context_resp, drv) ==
		       sizeof(struct ib_uverbs_get_context_resp),
	       "GET_CONTEXT driver data must follow the core response");
_Static_assert(sizeof(struct tbrdma_cmd_get_context_resp) ==
		       sizeof(struct ib_uverbs_get_context_resp) +
			       sizeof(struct tbrdma_alloc_ucontext_resp),
	       "GET_CONTEXT response has no tail padding");
_Static_assert(offsetof(struct tbrdma_cmd_alloc_pd_resp, drv) ==
		       sizeof(struct ib_uverbs_alloc_pd_resp),
	       "ALLOC_PD driver data must follow the core response");
_Static_assert(sizeof(struct tbrdma_cmd_alloc_pd_resp) ==
		       sizeof(struct ib_uverbs_alloc_pd_resp) +
			       sizeof(struct tbrdma_alloc_pd_resp),
	       "ALLOC_PD response has no tail padding");

/* The data-path responses, each checked like the two above. */
#define TBRDMA_DECLARE_RESP(_name, _core, _drv)                               \
	struct _name {                                                        \
		struct _core ibv_resp;                                        \
		struct _drv drv;                                              \
	};                                                                    \
	_Static_assert(offsetof(struct _name, drv) == sizeof(struct _core),   \
		       #_name ": driver data must follow the core response"); \
	_Static_assert(sizeof(struct _name) ==                                \
			       sizeof(struct _core) + sizeof(struct _drv),    \
		       #_name ": no tail padding");                           \
	_Static_assert(sizeof(struct _name) % 4 == 0,                         \
		       #_name ": out_words counts 4-byte words")

TBRDMA_DECLARE_RESP(tbrdma_cmd_create_cq_resp, ib_uverbs_create_cq_resp,
		    tbrdma_create_cq_resp);
TBRDMA_DECLARE_RESP(tbrdma_cmd_resize_cq_resp, ib_uverbs_resize_cq_resp,
		    tbrdma_create_cq_resp);
TBRDMA_DECLARE_RESP(tbrdma_cmd_create_qp_resp, ib_uverbs_create_qp_resp,
		    tbrdma_create_qp_resp);
TBRDMA_DECLARE_RESP(tbrdma_cmd_create_srq_resp, ib_uverbs_create_srq_resp,
		    tbrdma_create_srq_resp);
TBRDMA_DECLARE_RESP(tbrdma_cmd_create_ah_resp, ib_uverbs_create_ah_resp,
		    tbrdma_create_ah_resp);

/* Logging through libibverbs ($VERBS_LOG_LEVEL, $VERBS_LOG_FILE). */
#define tbrdma_err(vctx, fmt, ...)                                           \
	__verbs_log(vctx, VERBS_LOG_ERR, "tbrdma: %s: " fmt "\n",           \
		    (vctx)->context.device->name, ##__VA_ARGS__)

/* verbs.c: the verbs this stage implements. */
int tbrdma_query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size);
int tbrdma_query_port(struct ibv_context *context, uint8_t port,
		      struct ibv_port_attr *attr);
struct ibv_pd *tbrdma_alloc_pd(struct ibv_context *context);
int tbrdma_dealloc_pd(struct ibv_pd *pd);

/* cq.c */
struct ibv_cq *tbrdma_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector);
int tbrdma_resize_cq(struct ibv_cq *cq, int cqe);
int tbrdma_query_rt_values(struct ibv_context *context,
			   struct ibv_values_ex *values);
struct ibv_cq_ex *tbrdma_create_cq_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr);
void tbrdma_cq_ex_init(struct tbrdma_cq *cq, uint64_t wc_flags);
int tbrdma_destroy_cq(struct ibv_cq *cq);
int tbrdma_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int tbrdma_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* qp.c */
struct ibv_qp *tbrdma_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr);
struct ibv_qp *tbrdma_open_qp(struct ibv_context *context,
			      struct ibv_qp_open_attr *attr);
struct ibv_qp *tbrdma_create_qp_ex(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr);
int tbrdma_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask);
int tbrdma_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask, struct ibv_qp_init_attr *init_attr);
int tbrdma_destroy_qp(struct ibv_qp *qp);

/* srq.c */
struct ibv_srq *tbrdma_create_srq(struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr);
int tbrdma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		      int attr_mask);
int tbrdma_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int tbrdma_destroy_srq(struct ibv_srq *srq);
struct ibv_srq *tbrdma_create_srq_ex(struct ibv_context *context,
				     struct ibv_srq_init_attr_ex *attr);
int tbrdma_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_xrcd *tbrdma_open_xrcd(struct ibv_context *context,
				  struct ibv_xrcd_init_attr *attr);
int tbrdma_close_xrcd(struct ibv_xrcd *xrcd);

/* post.c: the fast path */
int tbrdma_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr);
int tbrdma_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);
int tbrdma_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
/* The pieces post_send is made of, shared with the ibv_wr_* API (wr.c).
 * has_room: whether slot 'producer' is free, rereading *consumer from the
 * ring only when the cached value says full.  publish (under the SQ lock):
 * q->index = producer, release-store it, full fence, and tell whether the
 * kernel needs a doorbell (KERNEL_ACTIVE clear).  doorbell: one write(). */
bool tbrdma_wq_has_room(struct tbrdma_queue *q, uint32_t producer,
			uint32_t *consumer);
bool tbrdma_sq_publish(struct tbrdma_queue *q, uint32_t producer);
int tbrdma_sq_doorbell(struct ibv_qp *ibqp);

/* wr.c: extended QPs, the ibv_wr_* posting API.  check: 0, or EOPNOTSUPP
 * when the QP type cannot do one of the IBV_QP_EX_WITH_* ops asked for.
 * init: sets VERBS_QP_EX and the qp_ex ops (builders only for the ops in
 * send_ops_flags); call after the create command, which resets
 * vqp.comp_mask. */
int tbrdma_wr_check_send_ops(enum ibv_qp_type qp_type,
			     uint64_t send_ops_flags);
void tbrdma_wr_init_qp(struct tbrdma_qp *qp, uint64_t send_ops_flags);

/* wq.c: mapping a work queue and working out its caps */
int tbrdma_wq_init(struct tbrdma_wq *wq, int cmd_fd,
		   const struct tbrdma_queue_info *info, bool send,
		   uint32_t granted_sge, uint32_t granted_inline);
void tbrdma_wq_destroy(struct tbrdma_wq *wq);
/* The caps a work queue really accepts, for reporting back: granted values
 * clamped to what the ring can hold. */
uint32_t tbrdma_wq_max_wr(const struct tbrdma_wq *wq, uint32_t granted);

/* mr.c */
struct ibv_mr *tbrdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t hca_va, int access);
int tbrdma_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *tbrdma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int tbrdma_dealloc_mw(struct ibv_mw *mw);
int tbrdma_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		   struct ibv_mw_bind *mw_bind);

/* ah.c */
struct ibv_ah *tbrdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int tbrdma_destroy_ah(struct ibv_ah *ah);

/*
 * May work requests be posted in the QP's state (libibverbs keeps
 * ibv_qp.state: RESET at creation, then what modify_qp and query_qp set)?
 * Sends are an immediate error in RESET, INIT and RTR (IB spec C10-96),
 * receives in RESET (C10-97); in SQD, SQE and ERR they are accepted (and
 * flushed where the state says so).  The kernel checks again: a WQE only
 * executes in RTS.
 */
static inline bool tbrdma_qp_state_can_send(const struct ibv_qp *qp)
{
	return qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT &&
	       qp->state != IBV_QPS_RTR;
}

static inline bool tbrdma_qp_state_can_recv(const struct ibv_qp *qp)
{
	return qp->state != IBV_QPS_RESET;
}

#endif /* TBRDMA_PROVIDER_H */
