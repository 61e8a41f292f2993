/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tbrdma: RDMA verbs over Thunderbolt/USB4 (and any Ethernet-type netdev).
 *
 * Private structures of the kernel module.  One struct tbr_dev per RDMA
 * device; each verbs object embeds the core's object as its first member so
 * the RDMA core can allocate it for us (INIT_RDMA_OBJ_SIZE).
 *
 * The path of one send work request, file by file:
 *   post.c (kernel consumers) or a user doorbell -> tx.c (send engine:
 *   copy the WQE out of the SQ ring, validate, resolve local keys) ->
 *   loopback.c (the transport: hand the message to the destination QP) ->
 *   rx.c (responder: remote keys, receive WQEs, data movement, responder
 *   completion) -> back in tx.c, the requester's completion (cq.c).
 */
#ifndef TBRDMA_H
#define TBRDMA_H

#include <linux/idr.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "../uapi/tbrdma-abi.h"
#include "compat.h"
#include "limits.h"
#include "queue.h"
#include "ah.h"
#include "counters.h"
#include "peers.h"

#define TBR_PORT	1	/* every tbrdma device has exactly one port */

struct tbr_dev {
	struct ib_device ibdev;		/* must stay first: ib_alloc_device() */
	struct net_device *ndev;	/* held (dev_hold) for the device's life */
	enum tbrdma_mode mode;
	struct list_head list;		/* entry in tbr_devices, under tbr_devices_lock */
	struct ida pd_ida;		/* PD numbers; its range is the PD limit */

	struct xarray mr_xa;		/* MR index (key >> 8) -> tbr_mr */
	u32 mr_next;			/* cyclic allocation of MR indices */
	u8 *mr_gen;			/* per index: generation of its last key */
	struct xarray qp_xa;		/* QP number -> tbr_qp */
	u32 qp_next;
	struct xarray ah_xa;		/* AH handle -> tbr_ah */
	u32 ah_next;
	struct xarray srq_xa;		/* XRC SRQ number -> tbr_srq */
	u32 srq_next;
	atomic_t num_cq;
	atomic_t num_srq;
	struct tbr_counters __percpu *counters;
	struct tbr_peers peers;		/* who frames came from (peers.c) */
	bool csum;			/* checksum frames out, require it in */
	spinlock_t tomb_lock;		/* destroyed RC QPs that still ACK (net_qp.c) */
	u32 tomb_next;
	struct tbr_net_tomb *tombs;	/* TBR_NET_TOMBS, network devices only */
};

/* Count on the local CPU; any context. */
static inline void tbr_count(struct tbr_dev *tdev, enum tbr_counter c, u64 n)
{
	this_cpu_add(tdev->counters->v[c], n);
}

struct tbr_xfer;
struct tbr_net_qp;
struct tbr_net_tomb;

struct tbr_doorbell;

struct tbr_ucontext {
	struct ib_ucontext ibuc;
	struct tbr_doorbell *doorbell;	/* its doorbell file's state, or NULL */
};

struct tbr_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/* An XRC domain: only the core's object; SRQs and TGT QPs point to it. */
struct tbr_xrcd {
	struct ib_xrcd ibxrcd;
};

enum tbr_mr_type {
	TBR_MR_USER,		/* pinned user pages, addresses are user iovas */
	TBR_MR_DMA,		/* kernel consumers: addresses are kernel virtual */
	TBR_MR_FAST,		/* kernel consumers' fast registration (REG_MR) */
	TBR_MR_MW,		/* a memory window's key (mw.c): no memory */
};

/* A key is an index into tbr_dev.mr_xa and 8 bits the consumer may vary. */
#define TBR_KEY_INDEX(key)	((key) >> 8)

/* A fast-registration MR is FREE (no key works) or VALID (its key works). */
enum tbr_mr_state {
	TBR_MR_FREE,
	TBR_MR_VALID,
};

struct tbr_mr {
	struct ib_mr ibmr;
	enum tbr_mr_type type;
	u32 pdn;
	/*
	 * What lookups check.  Fixed for user and DMA MRs; a fast-registration
	 * MR's change with REG_MR and invalidation, under @lock (its ibmr
	 * keys are the consumer's, ib_update_fast_reg_key() writes them).
	 */
	spinlock_t lock;
	enum tbr_mr_state state;
	u32 key;		/* lkey == rkey */
	int access;		/* IB_ACCESS_* */
	u64 iova;
	u64 length;
	/* TBR_MR_FAST: the page list map_mr_sg fills, and what REG_MR fixed */
	u64 *page_list;		/* kernel virtual addresses, page_size aligned */
	u32 max_pages;
	u32 map_npages;		/* as map_mr_sg left them */
	u32 map_shift;
	u32 map_fbo;
	u32 npages;		/* as registered */
	u32 page_shift;
	u32 fbo;		/* offset of iova in page_list[0] */
	/*
	 * TBR_MR_MW, under @lock: iova, length, access and key above are the
	 * window's; @mw_mr is the MR it is bound to (NULL: none), which
	 * cannot be deregistered while it counts this binding in @mw_count.
	 */
	u32 mw_type;		/* IB_MW_TYPE_1 or IB_MW_TYPE_2 */
	u32 mw_qpn;		/* type 2: the QP it was bound through */
	struct tbr_mr *mw_mr;
	/* An MR that windows may bind to: how many are, under @lock. */
	u32 mw_count;
	bool dying;		/* dereg/dealloc begun: no new bindings */
	struct ib_umem *umem;
	struct page **pages;	/* TBR_MR_USER: every page of the region */
	void *kva;		/* TBR_MR_USER: all of them, mapped contiguously */
	unsigned int page_offset;	/* of iova within pages[0] */
	refcount_t users;	/* 1 while registered + one per lookup in flight */
	struct completion released;
	struct rcu_head rcu;	/* lookups may still read it after xa_erase */
};

/*
 * A memory window: its key lives in a tbr_mr of type TBR_MR_MW, freed
 * after an RCU grace period (the core frees the ib_mw at once).
 */
struct tbr_mw {
	struct ib_mw ibmw;
	struct tbr_mr *ent;
};

struct tbr_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* producers of CQEs; the kernel-consumer poll */
	struct tbr_queue queue;
	struct ib_qp **slot_qp;	/* kernel CQs: the QP of each CQE, for ib_wc.qp */
	bool overflowed;
};

/* A receive queue: the RQ of a QP, or an SRQ. */
struct tbr_recvq {
	spinlock_t lock;	/* takes WQEs; posts for kernel consumers */
	struct tbr_queue queue;
	u32 max_sge;
};

struct tbr_srq {
	struct ib_srq ibsrq;
	struct tbr_recvq rq;
	u32 limit;		/* 0: not armed */
	u32 pdn;		/* of its PD: XRC requests' memory checks */
	/*
	 * XRC SRQs: the number requests name (ibsrq.ext.xrc.srq_num, an
	 * index in tdev->srq_xa), and lookups in flight from the responder.
	 */
	u32 srqn;
	refcount_t users;	/* 1 while it exists + one per lookup */
	struct completion released;
};

struct tbr_ah {
	struct ib_ah ibah;
	u32 handle;
	struct tbr_ah_info *info;	/* what the send engine reads, RCU-freed */
};

/* Bits of tbr_qp.tx_flags */
enum {
	TBR_TX_RUNNING,		/* one thread runs the send engine */
	TBR_TX_PENDING,		/* someone asked for a run while it ran */
};

struct tbr_qp {
	struct ib_qp ibqp;
	struct tbr_dev *tdev;
	u32 pdn;
	bool is_user;
	bool sq_sig_all;
	u32 max_send_sge;
	u32 max_inline;

	struct mutex modify_lock;	/* serialises modify_qp */
	spinlock_t state_lock;	/* state and attributes below */
	enum ib_qp_state state;
	u32 dest_qpn;
	u32 qkey;
	int access;		/* qp_access_flags */
	enum ib_mtu path_mtu;
	u8 min_rnr_timer;
	u8 rnr_retry;
	u8 retry_cnt;
	u8 timeout;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u32 sq_psn;
	u32 rq_psn;
	struct rdma_ah_attr av;	/* RC/UC: the path to the peer */
	bool sq_drained_notify;

	/* send engine (tx.c) */
	spinlock_t sq_post_lock;	/* kernel consumers posting to the SQ */
	struct tbr_queue sq;
	unsigned long tx_flags;
	void *wqe;		/* private copy of the WQE being executed */
	struct tbr_xfer *xfer;	/* scratch for executing it */
	u8 rnr_left;		/* RNR retries left for the head WQE */
	u8 rnr_backoff;		/* RNR NAKs in a row: the next wait's doubling */
	u8 retry_left;		/* loopback XRC: ACK timeouts left for it */
	bool rnr_wait;		/* the head WQE waits for rnr_timer */
	bool destroyed;		/* the engine must not start again */
	struct hrtimer rnr_timer;
	struct work_struct tx_work;	/* runs the engine from a workqueue */

	/* receive side (rx.c) */
	struct tbr_recvq rq;	/* unused when srq is set */
	struct tbr_srq *srq;

	/* network devices only: the reliable transport's state (net.h) */
	struct tbr_net_qp *net;

	refcount_t users;	/* 1 while it exists + one per lookup */
	struct completion released;
};

/*
 * Send driver data back with a command's response.  ABI structures only
 * grow at their end, so an older provider gets the prefix it knows.
 */
static inline int tbr_respond(struct ib_udata *udata, void *resp,
			      size_t len)
{
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

static inline struct tbr_dev *to_tdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct tbr_dev, ibdev);
}

static inline struct tbr_pd *to_tpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct tbr_pd, ibpd);
}

static inline struct tbr_mr *to_tmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct tbr_mr, ibmr);
}

static inline struct tbr_mw *to_tmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct tbr_mw, ibmw);
}

static inline struct tbr_cq *to_tcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct tbr_cq, ibcq);
}

static inline struct tbr_srq *to_tsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct tbr_srq, ibsrq);
}

static inline struct tbr_ah *to_tah(struct ib_ah *ibah)
{
	return container_of(ibah, struct tbr_ah, ibah);
}

static inline struct tbr_qp *to_tqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct tbr_qp, ibqp);
}

/* The user context that created @qp (that of its PD); NULL for a kernel QP. */
static inline struct ib_ucontext *tbr_qp_ucontext(struct tbr_qp *qp)
{
	struct ib_pd *pd = qp->ibqp.pd;

	return pd && pd->uobject ? pd->uobject->context : NULL;
}

static inline bool tbr_qp_is_xrc(const struct tbr_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* RC and both XRC ends: acknowledged, retried, errors are fatal to the QP. */
static inline bool tbr_qp_is_reliable(const struct tbr_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || tbr_qp_is_xrc(qp);
}

/*
 * Does the QP have a receive queue of its own?  Not on an SRQ, and never
 * for XRC: an XRC_INI QP only sends, an XRC_TGT QP takes each message's
 * receive WQE from the XRC SRQ the message names.
 */
static inline bool tbr_qp_has_rq(const struct tbr_qp *qp)
{
	return !qp->srq && !tbr_qp_is_xrc(qp);
}

/* UD and the GSI QP send datagrams; RC and UC are connected. */
static inline bool tbr_qp_is_datagram(const struct tbr_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct tbr_cq *tbr_qp_scq(struct tbr_qp *qp)
{
	return to_tcq(qp->ibqp.send_cq);
}

static inline struct tbr_cq *tbr_qp_rcq(struct tbr_qp *qp)
{
	return to_tcq(qp->ibqp.recv_cq);
}

/* device.c: the list of devices and their life cycle */
extern struct list_head tbr_devices;
extern struct mutex tbr_devices_lock;
extern struct workqueue_struct *tbr_wq;
int tbr_dev_add(const char *name, struct net_device *ndev);
struct tbr_dev *tbr_dev_find_by_netdev_locked(struct net_device *ndev);
struct tbr_dev *tbr_dev_get_by_netdev_rcu(struct net_device *ndev);
void tbr_dev_remove_all(void);

/* query.c: attributes the core and user space ask for */
int tbr_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		     struct ib_udata *udata);
int tbr_query_port(struct ib_device *ibdev, u32 port,
		   struct ib_port_attr *attr);
int tbr_get_port_immutable(struct ib_device *ibdev, u32 port,
			   struct ib_port_immutable *immutable);
int tbr_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
enum rdma_link_layer tbr_get_link_layer(struct ib_device *ibdev, u32 port);
void tbr_get_dev_fw_str(struct ib_device *ibdev, char *str);

/* main.c */
extern int tbr_checksum;

/* net_rx.c: the packet handler of the network transport */
int tbr_net_init(void);
void tbr_net_exit(void);

/* netdev.c: follow the attached netdev's state */
int tbr_netdev_events_init(void);
void tbr_netdev_events_exit(void);
bool tbr_netdev_port_active(struct net_device *ndev);

/* thunderbolt.c: opt-in auto-attach to thunderbolt-net netdevs */
void tbr_tbt_start(void);
void tbr_tbt_stop(void);
void tbr_tbt_netdev_registered(struct net_device *ndev);
bool tbr_tbt_is_thunderbolt(struct net_device *ndev);

/* removal.c */
int tbr_removal_init(void);
void tbr_removal_exit(void);

/* doorbell.c */
struct file *tbr_doorbell_create(struct tbr_ucontext *uctx, int *fd);
void tbr_doorbell_install(struct file *file, int fd);
void tbr_doorbell_discard(struct tbr_ucontext *uctx, struct file *file,
			  int fd);
void tbr_doorbell_detach(struct tbr_ucontext *uctx);

/* ucontext.c */
int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void tbr_dealloc_ucontext(struct ib_ucontext *ibuc);
void tbr_disassociate_ucontext(struct ib_ucontext *ibuc);
int tbr_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void tbr_mmap_free(struct rdma_user_mmap_entry *entry);

/* pd.c */
int tbr_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int tbr_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* counters.c */
struct rdma_hw_stats *tbr_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port);
int tbr_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index);

/* sysfs.c */
extern const struct attribute_group tbr_dev_attr_group;

/* mr.c: memory regions and the keys that name them */
struct ib_mr *tbr_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *tbr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, struct ib_udata *udata);
struct ib_mr *tbr_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg);
int tbr_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset);
enum ib_wc_status tbr_mr_fast_reg(struct tbr_dev *tdev, u32 pdn, u32 key,
				  int access, u64 iova, u64 length);
enum ib_wc_status tbr_mr_invalidate(struct tbr_dev *tdev, u32 pdn, u32 qpn,
				    u32 key, bool remote);
struct tbr_mr *tbr_mr_alloc(struct tbr_dev *tdev, struct tbr_pd *pd,
			    int access);
void tbr_mr_publish(struct tbr_dev *tdev, struct tbr_mr *mr);
struct tbr_mr *tbr_mr_get_index(struct tbr_dev *tdev, u32 key, u32 pdn,
				enum tbr_mr_type type);
struct tbr_mr *tbr_mr_get_remote(struct tbr_dev *tdev, u32 key, u32 pdn,
				 u32 qpn, int access, u64 addr, u64 len);
int tbr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct tbr_mr *tbr_mr_get(struct tbr_dev *tdev, u32 key, u32 pdn,
			  int access, u64 addr, u64 len);
void tbr_mr_put(struct tbr_mr *mr);
void *tbr_mr_kaddr(const struct tbr_mr *mr, u64 addr, size_t *contig);
struct page *tbr_mr_page(const struct tbr_mr *mr, u64 addr,
			 unsigned int *page_off);

/* mw.c: memory windows */
int tbr_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int tbr_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status tbr_mw_bind(struct tbr_qp *qp,
			      const struct tbrdma_send_wqe *wqe);
enum ib_wc_status tbr_mw_invalidate(struct tbr_mr *mw, u32 qpn, u32 key,
				    bool remote);
struct tbr_mr *tbr_mw_target(struct tbr_mr *mw, u32 key, u32 pdn, u32 qpn,
			     int access, u64 addr, u64 len);

/* cq.c */
int tbr_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata);
int tbr_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int tbr_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int tbr_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int tbr_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int tbr_cq_post(struct tbr_cq *cq, const struct tbrdma_cqe *cqe,
		struct tbr_qp *qp, bool solicited);

/* srq.c and the receive queues they share with QPs */
int tbr_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
int tbr_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int tbr_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int tbr_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int tbr_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
int tbr_recvq_init(struct tbr_recvq *rq, struct ib_device *ibdev,
		   struct ib_udata *udata, u32 max_wr, u32 max_sge,
		   struct tbrdma_queue_info *info);
void tbr_recvq_destroy(struct tbr_recvq *rq);
int tbr_recvq_post(struct tbr_recvq *rq, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
int tbr_recvq_take(struct tbr_recvq *rq, struct tbrdma_recv_wqe *wqe);
int tbr_recvq_drop(struct tbr_recvq *rq, u64 *wr_id);
void tbr_srq_check_limit(struct tbr_srq *srq, int remaining);
struct tbr_srq *tbr_srq_get_xrc(struct tbr_qp *tgt, u32 srqn);
void tbr_srq_put(struct tbr_srq *srq);
int tbr_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int tbr_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/* ah.c */
int tbr_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		  struct ib_udata *udata);
int tbr_destroy_ah(struct ib_ah *ibah, u32 flags);

/* qp.c: QP objects and their state machine */
int tbr_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata);
int tbr_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int tbr_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int tbr_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
struct tbr_qp *tbr_qp_get(struct tbr_dev *tdev, u32 qpn);
void tbr_qp_put(struct tbr_qp *qp);
void tbr_qp_for_each(struct tbr_dev *tdev, void (*fn)(struct tbr_qp *qp));
void tbr_qp_set_error(struct tbr_qp *qp);
void tbr_qp_event(struct tbr_qp *qp, enum ib_event_type type);

/* post.c: kernel consumers' post verbs, and user doorbells */
int tbr_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int tbr_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);
void tbr_rq_flush(struct tbr_qp *qp);

/* tx.c: the send engine */
void tbr_tx_init(struct tbr_qp *qp);
bool tbr_tx_is_local_op(u32 opcode);
enum ib_wc_status tbr_tx_local_op(struct tbr_qp *qp,
				  const struct tbrdma_send_wqe *wqe);
void tbr_tx_kick(struct tbr_qp *qp);
void tbr_tx_copy_wqe(struct tbr_qp *qp, u32 slot, struct tbrdma_send_wqe *wqe);
void tbr_tx_schedule(struct tbr_qp *qp);
void tbr_tx_stop(struct tbr_qp *qp);
void tbr_tx_retire(struct tbr_qp *qp, u64 wr_id, u32 opcode,
		   enum ib_wc_status status, u32 byte_len, bool signaled);
void tbr_tx_fail(struct tbr_qp *qp);
void tbr_tx_flush_one(struct tbr_qp *qp);
void tbr_tx_sq_drained(struct tbr_qp *qp);
u32 tbr_tx_ud_max(struct tbr_dev *tdev);

#endif /* TBRDMA_H */
