/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The part of rdma-core 44's *private* provider ABI (symbol version
 * IBVERBS_PRIVATE_34) that libtbrdma uses.
 *
 * Debian 12 ships libibverbs 44.0 but not its provider headers
 * (infiniband/driver.h, infiniband/kern-abi.h), so this file declares, in
 * our own words, the types and functions a provider needs.  Every layout
 * below must match what libibverbs.so.1 was built with; the facts come from
 * rdma-core tag v44.0:
 *
 *   libibverbs/driver.h    verbs_match_ent, verbs_sysfs_dev,
 *                          verbs_device_ops, verbs_device,
 *                          verbs_context_ops (76 pointers, alphabetical),
 *                          prototypes of the exported helpers.
 *   libibverbs/kern-abi.h  command structs = ib_uverbs_cmd_hdr followed by
 *                          the kernel's core payload (DECLARE_CMD).
 *   libibverbs/cmd.c, cmd_cq.c, cmd_qp.c, cmd_srq.c
 *                          ibv_cmd_* prototypes and how they place driver
 *                          data: requests past sizeof(*cmd), responses
 *                          past sizeof(core response) (_write_set_uhw).
 *   providers/rxe/rxe.c    the zero-WR POST_SEND write() used as doorbell.
 *   libibverbs/init.c      how match_table / match_device / the ABI range
 *                          and alloc_device are used when devices are found.
 *   libibverbs/sysfs.c,    ibdev_path is "<sysfs>/class/infiniband/<ibdev>"
 *   libibverbs/ibdev_nl.c  whether devices come from sysfs or netlink.
 *
 * Exported symbols and versions were checked with
 * `objdump -T /usr/lib/x86_64-linux-gnu/libibverbs.so.1`.
 *
 * Only declare what the provider really uses: each extra declaration is one
 * more thing that can silently drift from the binary.  If rdma-core is ever
 * upgraded past IBVERBS_PRIVATE_34, the provider fails to load (the
 * versioned symbols are missing) instead of misbehaving; this file then has
 * to be re-checked against the new tag.
 */
#ifndef TBRDMA_RDMA_CORE_PRIVATE_H
#define TBRDMA_RDMA_CORE_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>	/* enum rdma_driver_id */

/* The private ABI generation this file describes (the "34" in
 * IBVERBS_PRIVATE_34 and in the provider file name lib<name>-rdmav34.so). */
#define RDMA_CORE_PABI_VERSION 34

/* ---- generic helpers (rdma-core uses ccan/list.h) ---------------------- */

/* Same shape as ccan's struct list_node: the intrusive links libibverbs
 * keeps inside verbs_device and verbs_sysfs_dev.  We never walk them. */
struct rdmacore_list_node {
	struct rdmacore_list_node *next;
	struct rdmacore_list_node *prev;
};

/* ---- device matching (driver.h) ---------------------------------------- */

/* verbs_match_ent.kind */
enum {
	VERBS_MATCH_SENTINEL = 0,	/* end of a match table */
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,	/* fnmatch pattern; name matches use
					 * "rdma_device:*N<prefix>*" */
	VERBS_MATCH_DRIVER_ID = 3,	/* enum rdma_driver_id from netlink */
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * One uverbs device found by libibverbs, handed to match_device() and
 * alloc_device().  The provider only reads it.  ibdev_path is filled on
 * both discovery paths of v44 (sysfs.c/init.c and ibdev_nl.c) as
 * "<ibv_get_sysfs_path()>/class/infiniband/<ibdev_name>".
 */
struct verbs_sysfs_dev {
	struct rdmacore_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;	/* table entry that matched */
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];	/* "uverbsN" */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];	/* "tbrdma0", after udev renames */
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;			/* enum rdma_driver_id */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;			/* driver uverbs ABI (uverbs_abi_ver) */
	struct timespec time_created;
};

struct verbs_device;

/* What a provider registers.  libibverbs (init.c) first tries match_table
 * (driver id, then name, then modalias) when it is non-NULL, then calls
 * match_device() unconditionally when it is set, then rejects the device
 * unless match_min_abi_version <= abi_ver <= match_max_abi_version. */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	/* Mandatory: libibverbs calls it for every matched device. */
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Embedded at the start of the provider's device struct.  libibverbs fills
 * ops, refcount, entry, sysfs and the ibv_device fields after
 * alloc_device() returns. */
struct verbs_device {
	struct ibv_device device;	/* must stay first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct rdmacore_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((uintptr_t)dev -
				       offsetof(struct verbs_device, device));
}

/* ---- memory regions (driver.h) ----------------------------------------- */

/* verbs_mr.mr_type; libibverbs' ibv_dereg_mr() reads it (fork handling). */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/* What a provider's reg_mr returns (as &vmr->ibv_mr) and dereg_mr gets.
 * ibv_cmd_reg_mr() fills all of it. */
struct verbs_mr {
	struct ibv_mr ibv_mr;	/* must stay first */
	enum ibv_mr_type mr_type;
	int access;
};

/* ---- queue pairs (driver.h) -------------------------------------------- */

/* v44 driver.h: an XRC domain and an SRQ as libibverbs' helpers fill them. */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask.  libibverbs' ibv_qp_to_qp_ex() (IBVERBS_1.6) returns
 * &vqp->qp_ex only when VERBS_QP_EX is set, else NULL; objdump of v44's
 * libibverbs.so.1 shows `testb $0x2, 0x160(%rdi)`, i.e. this bit at
 * offset sizeof(struct ibv_qp_ex) == 352 (LP64). */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/*
 * What a provider's QP struct starts with, for every QP: libibverbs casts
 * any struct ibv_qp * to it (ibv_qp_to_qp_ex), so even QPs created by the
 * old create_qp must have a zeroed comp_mask here.  ibv_cmd_create_qp_ex()
 * fills qp (handle, qp_num, context, pd, cqs, state, mutex/cond) and resets
 * comp_mask; the provider then sets VERBS_QP_EX and the qp_ex.wr_* ops.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;	/* qp_ex.qp_base is qp */
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* ---- per-context operations (driver.h) --------------------------------- */

/*
 * Every op a provider can implement, in the exact v44 order (alphabetical).
 * verbs_set_ops() reads this struct member by member, so the order and the
 * count are ABI.  Unset members stay NULL and libibverbs keeps its own
 * defaults (mostly returning EOPNOTSUPP/ENOSYS).
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

#define VERBS_CONTEXT_OPS_COUNT 76

/* Index of an op inside verbs_context_ops; used by the layout checks. */
#define VERBS_OP_INDEX(op) \
	(offsetof(struct verbs_context_ops, op) / sizeof(void (*)(void)))

/* ---- uverbs write() command layouts (kern-abi.h) ------------------------ */

/*
 * A legacy command buffer is the 8-byte ib_uverbs_cmd_hdr immediately
 * followed by the kernel's core request struct from <rdma/ib_user_verbs.h>.
 * The ibv_cmd_* helpers take a pointer to this and a total size; anything
 * past sizeof(struct) is the provider's own request data (udata in the
 * kernel).  Responses are the kernel's core response struct, likewise
 * followed by the provider's response data.  Upstream wraps the core part
 * in a union with the flattened fields; the bytes are the same.
 */
#define TBRDMA_DECLARE_UVERBS_CMD(_name, _kabi)                               \
	struct _name {                                                        \
		struct ib_uverbs_cmd_hdr hdr;                                 \
		struct _kabi core_payload;                                    \
	};                                                                    \
	_Static_assert(sizeof(struct _name) ==                                \
			       sizeof(struct ib_uverbs_cmd_hdr) +             \
				       sizeof(struct _kabi),                  \
		       #_name ": no padding between header and payload")

TBRDMA_DECLARE_UVERBS_CMD(ibv_get_context, ib_uverbs_get_context);
TBRDMA_DECLARE_UVERBS_CMD(ibv_query_port, ib_uverbs_query_port);
TBRDMA_DECLARE_UVERBS_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
/* The data-path objects (v44 kern-abi.h DECLARE_CMD/DECLARE_CMDX lines of
 * the same names).  ibv_post_send is only used as the doorbell. */
TBRDMA_DECLARE_UVERBS_CMD(ibv_create_cq, ib_uverbs_create_cq);
TBRDMA_DECLARE_UVERBS_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
TBRDMA_DECLARE_UVERBS_CMD(ibv_create_qp, ib_uverbs_create_qp);
TBRDMA_DECLARE_UVERBS_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
TBRDMA_DECLARE_UVERBS_CMD(ibv_query_qp, ib_uverbs_query_qp);
TBRDMA_DECLARE_UVERBS_CMD(ibv_create_srq, ib_uverbs_create_srq);
TBRDMA_DECLARE_UVERBS_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
TBRDMA_DECLARE_UVERBS_CMD(ibv_query_srq, ib_uverbs_query_srq);
TBRDMA_DECLARE_UVERBS_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
TBRDMA_DECLARE_UVERBS_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
TBRDMA_DECLARE_UVERBS_CMD(ibv_create_ah, ib_uverbs_create_ah);
TBRDMA_DECLARE_UVERBS_CMD(ibv_post_send, ib_uverbs_post_send);
/* XRC: domains, XRC SRQs, opening a TGT QP another process created. */
TBRDMA_DECLARE_UVERBS_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
TBRDMA_DECLARE_UVERBS_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
TBRDMA_DECLARE_UVERBS_CMD(ibv_open_qp, ib_uverbs_open_qp);

/*
 * Extended (_ex) commands put ib_uverbs_ex_cmd_hdr after the basic header
 * (24 bytes in all) and need 8-byte multiples.  Not used yet: declared so
 * the next stage (e.g. create_cq_ex) has the pinned header size.
 */
struct ibv_ex_cmd_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

/* ---- exported functions (all IBVERBS_PRIVATE_34 unless noted) ---------- */

/* Called from the provider's constructor; the "_34" in the name is the
 * private ABI generation, so a mismatched libibverbs fails at dlopen(). */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * calloc()s alloc_size bytes, initialises the verbs_context found
 * context_offset bytes into it (passed as a fake pointer, as upstream's
 * macro does) and records driver_id for the ioctl header.  On failure it
 * closes cmd_fd and returns NULL with errno set.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
/* Releases what _verbs_init_and_alloc_context set up, closes the fds; the
 * provider still frees its own allocation. */
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* The ibv_cmd_* helpers return 0 or a positive errno value. */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/*
 * The data-path object commands (v44 driver.h; cmd.c, cmd_cq.c, cmd_qp.c,
 * cmd_srq.c, cmd_mr.c, cmd_ah.c).  cmd/cmd_size: the request, of which the
 * bytes past sizeof(*cmd) are driver data (we send none); resp/resp_size:
 * the core response followed directly by the driver's response data (the
 * bytes past sizeof(*resp)).  The helpers fill the handle and the object
 * fields libibverbs owns (context, handle, qp_num, cqe, lkey/rkey, the
 * qp/srq mutex and cond, ...), and the caps the kernel granted in *attr.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
/* Also waits until every event reported for the CQ has been acked. */
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/*
 * v44 cmd_qp.c: what ibv_cmd_create_qp does (same cmd and resp types, same
 * ibv_icmd_create_qp underneath, so our driver data lands behind
 * ib_uverbs_create_qp_resp exactly as there), for a verbs_qp and an
 * ibv_qp_init_attr_ex; both of our create_qp entry points use it, so
 * ibv_cmd_create_qp is not declared here.  Accepts only
 * comp_mask bits PD | XRCD | SEND_OPS_FLAGS (else EINVAL); send_ops_flags
 * are not passed to the kernel.  Writes the granted caps to attr_ex->cap.
 * (ibv_cmd_create_qp_ex2 would take struct ibv_create_qp_ex and a 40-byte
 * ib_uverbs_ex_create_qp_resp core instead; not used.)
 */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/*
 * v44 cmd.c, cmd_srq.c, cmd_qp.c: XRC.  open_xrcd needs both FD and OFLAGS
 * in attr->comp_mask; create_srq_ex fills srq->srq_num (and srq_type,
 * xrcd, cq) from the response; open_qp fills qp like create_qp_ex.
 */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

/* v44: the iova (hca_va) and access come before vmr. */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/* Fills mw (context, pd, rkey, handle, type) from the response. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/* v44: no request buffer; the helper builds CREATE_AH itself. */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* Exported as IBVERBS_1.0 but only declared in the private header: the sysfs
 * root libibverbs uses ("/sys", or $SYSFS_PATH when not setuid). */
const char *ibv_get_sysfs_path(void);

/* Logging, gated by $VERBS_LOG_LEVEL and written to $VERBS_LOG_FILE. */
enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};
void __verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt,
		 ...) __attribute__((format(printf, 3, 4)));

/* ---- layout pins ------------------------------------------------------- */

_Static_assert(sizeof(struct verbs_context_ops) ==
		       VERBS_CONTEXT_OPS_COUNT * sizeof(void (*)(void)),
	       "verbs_context_ops must be exactly 76 function pointers");
_Static_assert(VERBS_OP_INDEX(advise_mr) == 0, "first op");
_Static_assert(VERBS_OP_INDEX(alloc_pd) == 5, "alloc_pd slot");
_Static_assert(VERBS_OP_INDEX(dealloc_pd) == 26, "dealloc_pd slot");
_Static_assert(VERBS_OP_INDEX(free_context) == 39, "free_context slot");
_Static_assert(VERBS_OP_INDEX(query_device_ex) == 58, "query_device_ex slot");
_Static_assert(VERBS_OP_INDEX(query_port) == 60, "query_port slot");
_Static_assert(VERBS_OP_INDEX(unimport_pd) == 75, "last op");

_Static_assert(offsetof(struct verbs_qp, qp) == 0 &&
		       offsetof(struct verbs_qp, qp_ex) == 0 &&
		       offsetof(struct ibv_qp_ex, qp_base) == 0,
	       "verbs_qp starts with ibv_qp, which starts ibv_qp_ex");
_Static_assert(offsetof(struct verbs_qp, comp_mask) == sizeof(struct ibv_qp_ex),
	       "verbs_qp.comp_mask follows the union");
_Static_assert(offsetof(struct verbs_device, device) == 0,
	       "ibv_device must start verbs_device");
_Static_assert(sizeof(struct rdmacore_list_node) == 2 * sizeof(void *),
	       "ccan list_node is two pointers");

/* Command buffers: header + kernel core payload, byte for byte. */
_Static_assert(sizeof(struct ib_uverbs_cmd_hdr) == 8, "uverbs cmd header");
_Static_assert(sizeof(struct ibv_ex_cmd_hdr) == 24, "uverbs ex cmd header");
_Static_assert(sizeof(struct ibv_get_context) == 16, "GET_CONTEXT request");
_Static_assert(sizeof(struct ibv_query_port) == 24, "QUERY_PORT request");
_Static_assert(sizeof(struct ibv_alloc_pd) == 16, "ALLOC_PD request");
_Static_assert(offsetof(struct ibv_query_port, core_payload.port_num) == 16,
	       "QUERY_PORT port_num, written by ibv_cmd_query_port");
_Static_assert(sizeof(struct ibv_create_cq) == 40, "CREATE_CQ request");
_Static_assert(sizeof(struct ibv_resize_cq) == 24, "RESIZE_CQ request");
_Static_assert(sizeof(struct ibv_create_qp) == 64, "CREATE_QP request");
_Static_assert(sizeof(struct ibv_modify_qp) == 120, "MODIFY_QP request");
_Static_assert(sizeof(struct ibv_query_qp) == 24, "QUERY_QP request");
_Static_assert(sizeof(struct ibv_create_srq) == 40, "CREATE_SRQ request");
_Static_assert(sizeof(struct ibv_modify_srq) == 24, "MODIFY_SRQ request");
_Static_assert(sizeof(struct ibv_query_srq) == 24, "QUERY_SRQ request");
_Static_assert(sizeof(struct ibv_reg_mr) == 48, "REG_MR request");
_Static_assert(sizeof(struct ibv_alloc_mw) == 24, "ALLOC_MW request");
_Static_assert(sizeof(struct ib_uverbs_alloc_mw_resp) == 8, "ALLOC_MW resp");
_Static_assert(sizeof(struct ibv_create_ah) == 64, "CREATE_AH request");
/* The doorbell: 32 bytes, in_words 8. */
_Static_assert(sizeof(struct ibv_post_send) == 32, "POST_SEND request");
_Static_assert(offsetof(struct ibv_post_send, core_payload.response) == 8,
	       "POST_SEND response pointer right after the header");
_Static_assert(sizeof(struct ib_uverbs_post_send_resp) == 4,
	       "POST_SEND response");
_Static_assert(sizeof(struct ib_uverbs_send_wr) == 56, "uverbs send WR");
/* Core responses: the driver data starts right after these. */
_Static_assert(sizeof(struct ib_uverbs_create_cq_resp) == 8, "CREATE_CQ resp");
_Static_assert(sizeof(struct ib_uverbs_resize_cq_resp) == 8, "RESIZE_CQ resp");
_Static_assert(sizeof(struct ib_uverbs_create_qp_resp) == 32, "CREATE_QP resp");
_Static_assert(sizeof(struct ib_uverbs_create_srq_resp) == 16,
	       "CREATE_SRQ resp");
_Static_assert(sizeof(struct ib_uverbs_create_ah_resp) == 4, "CREATE_AH resp");
_Static_assert(sizeof(struct ib_uverbs_reg_mr_resp) == 12, "REG_MR resp");
_Static_assert(offsetof(struct verbs_mr, ibv_mr) == 0, "verbs_mr starts with ibv_mr");
_Static_assert(sizeof(struct ib_uverbs_get_context_resp) == 8,
	       "GET_CONTEXT core response");
_Static_assert(sizeof(struct ib_uverbs_alloc_pd_resp) == 4,
	       "ALLOC_PD core response");

#if defined(__x86_64__) || defined(__aarch64__)
/* LP64 offsets of verbs_sysfs_dev as laid out by rdma-core v44 (checked
 * by compiling upstream's definition).  match_device() reads these. */
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36, "sysfs_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112, "ibdev_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176, "ibdev_path");
_Static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968, "abi_ver");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev size");
_Static_assert(offsetof(struct verbs_device_ops, match_device) == 32,
	       "match_device");
_Static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56,
	       "alloc_device");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops size");
/* libibverbs 44 tests VERBS_QP_EX at byte 0x160 of the QP (see above). */
_Static_assert(offsetof(struct verbs_qp, comp_mask) == 0x160,
	       "verbs_qp.comp_mask where ibv_qp_to_qp_ex() reads it");
_Static_assert(sizeof(struct ibv_qp_ex) == 352, "v44 ibv_qp_ex size");
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent size");
#endif

#endif /* TBRDMA_RDMA_CORE_PRIVATE_H */
