// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout checks of provider/rdma-core-private.h, our declaration of
 * rdma-core 44's private provider ABI.  Most of them are compile-time:
 * if a slot moves, this file does not build and `make check` fails.  The
 * same facts are also reported as TAP lines so a run shows what was
 * checked.
 *
 * The expected order is v44.0 libibverbs/driver.h's verbs_context_ops
 * (alphabetical; also in shared/notes/platform-facts.md).
 */
#include <stddef.h>

#include "tap.h"
#include "../../provider/tbrdma.h"	/* pulls in rdma-core-private.h */

#define V44_CONTEXT_OPS(X)                                                    \
	X(advise_mr) X(alloc_dm) X(alloc_mw) X(alloc_null_mr)                 \
	X(alloc_parent_domain) X(alloc_pd) X(alloc_td) X(async_event)         \
	X(attach_counters_point_flow) X(attach_mcast) X(bind_mw)              \
	X(close_xrcd) X(cq_event) X(create_ah) X(create_counters)             \
	X(create_cq) X(create_cq_ex) X(create_flow)                           \
	X(create_flow_action_esp) X(create_qp) X(create_qp_ex)                \
	X(create_rwq_ind_table) X(create_srq) X(create_srq_ex) X(create_wq)   \
	X(dealloc_mw) X(dealloc_pd) X(dealloc_td) X(dereg_mr) X(destroy_ah)   \
	X(destroy_counters) X(destroy_cq) X(destroy_flow)                     \
	X(destroy_flow_action) X(destroy_qp) X(destroy_rwq_ind_table)         \
	X(destroy_srq) X(destroy_wq) X(detach_mcast) X(free_context)          \
	X(free_dm) X(get_srq_num) X(import_dm) X(import_mr) X(import_pd)      \
	X(modify_cq) X(modify_flow_action_esp) X(modify_qp)                   \
	X(modify_qp_rate_limit) X(modify_srq) X(modify_wq) X(open_qp)         \
	X(open_xrcd) X(poll_cq) X(post_recv) X(post_send) X(post_srq_ops)     \
	X(post_srq_recv) X(query_device_ex) X(query_ece) X(query_port)        \
	X(query_qp) X(query_qp_data_in_order) X(query_rt_values)              \
	X(query_srq) X(read_counters) X(reg_dm_mr) X(reg_dmabuf_mr)           \
	X(reg_mr) X(req_notify_cq) X(rereg_mr) X(resize_cq) X(set_ece)        \
	X(unimport_dm) X(unimport_mr) X(unimport_pd)

/* Position of each op in the v44 list. */
#define SLOT_ENUM(op) V44_SLOT_##op,
enum { V44_CONTEXT_OPS(SLOT_ENUM) V44_SLOT_COUNT };

_Static_assert(V44_SLOT_COUNT == VERBS_CONTEXT_OPS_COUNT, "76 ops in v44");

/* Every member sits exactly where v44 has it. */
#define SLOT_ASSERT(op)                                                       \
	_Static_assert(VERBS_OP_INDEX(op) == V44_SLOT_##op, "slot of " #op);
V44_CONTEXT_OPS(SLOT_ASSERT)

struct slot {
	const char *name;
	size_t ours;
	size_t v44;
};

#define SLOT_ROW(op) { #op, VERBS_OP_INDEX(op), V44_SLOT_##op },
static const struct slot slots[] = { V44_CONTEXT_OPS(SLOT_ROW) };

int main(void)
{
	size_t i;

	plan(NO_PLAN);

	is_int(sizeof(struct verbs_context_ops),
	       VERBS_CONTEXT_OPS_COUNT * sizeof(void (*)(void)),
	       "verbs_context_ops is 76 pointers");
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		is_int(slots[i].ours, slots[i].v44, "op %s in slot %zu",
		       slots[i].name, slots[i].v44);

	/* Offsets libibverbs reads or writes in our objects (LP64 values
	 * from compiling v44's own definitions). */
#if defined(__x86_64__) || defined(__aarch64__)
	is_int(offsetof(struct verbs_sysfs_dev, ibdev_name), 112,
	       "verbs_sysfs_dev.ibdev_name");
	is_int(offsetof(struct verbs_sysfs_dev, ibdev_path), 176,
	       "verbs_sysfs_dev.ibdev_path");
	is_int(offsetof(struct verbs_sysfs_dev, abi_ver), 968,
	       "verbs_sysfs_dev.abi_ver");
	is_int(offsetof(struct verbs_device_ops, match_device), 32,
	       "verbs_device_ops.match_device");
	is_int(offsetof(struct verbs_device_ops, alloc_context), 40,
	       "verbs_device_ops.alloc_context");
	is_int(offsetof(struct verbs_device_ops, alloc_device), 56,
	       "verbs_device_ops.alloc_device");
	is_int(offsetof(struct verbs_device, ops), sizeof(struct ibv_device),
	       "verbs_device.ops follows ibv_device");
	/* libibverbs 44's ibv_qp_to_qp_ex(): testb $0x2,0x160(%rdi). */
	is_int(offsetof(struct verbs_qp, comp_mask), 0x160,
	       "verbs_qp.comp_mask at 0x160, where ibv_qp_to_qp_ex() tests it");
	is_int(VERBS_QP_EX, 2, "VERBS_QP_EX is bit 1");
	is_int(offsetof(struct tbrdma_qp, vqp), 0,
	       "tbrdma_qp starts with its verbs_qp");
#else
	skip(10, "LP64 offsets pinned for x86_64/aarch64 only");
#endif

	/* Command buffers: 8-byte header + the kernel's core payload. */
	is_int(sizeof(struct ibv_get_context), 16, "GET_CONTEXT request size");
	is_int(sizeof(struct ibv_query_port), 24, "QUERY_PORT request size");
	is_int(sizeof(struct ibv_alloc_pd), 16, "ALLOC_PD request size");
	is_int(sizeof(struct tbrdma_cmd_get_context_resp), 24,
	       "GET_CONTEXT response: 8 core + 16 tbrdma");
	is_int(sizeof(struct tbrdma_cmd_get_context), 24,
	       "GET_CONTEXT request: 16 core + 8 tbrdma");
	is_int(offsetof(struct tbrdma_alloc_ucontext_resp, doorbell_fd), 12,
	       "GET_CONTEXT response: the doorbell descriptor last");
	is_int(offsetof(struct tbrdma_cmd_alloc_pd_resp, drv), 4,
	       "ALLOC_PD driver data right after pd_handle");
	is_int(sizeof(struct tbrdma_cmd_alloc_pd_resp), 12,
	       "ALLOC_PD response: 4 core + 8 tbrdma");

	/* The data path: requests (hdr + core payload, as v44 kern-abi.h)
	 * and responses (core + our driver data right behind it). */
	is_int(sizeof(struct ibv_create_cq), 40, "CREATE_CQ request size");
	is_int(sizeof(struct ibv_resize_cq), 24, "RESIZE_CQ request size");
	is_int(sizeof(struct ibv_create_qp), 64, "CREATE_QP request size");
	is_int(sizeof(struct ibv_modify_qp), 120, "MODIFY_QP request size");
	is_int(sizeof(struct ibv_query_qp), 24, "QUERY_QP request size");
	is_int(sizeof(struct ibv_create_srq), 40, "CREATE_SRQ request size");
	is_int(sizeof(struct ibv_modify_srq), 24, "MODIFY_SRQ request size");
	is_int(sizeof(struct ibv_query_srq), 24, "QUERY_SRQ request size");
	is_int(sizeof(struct ibv_reg_mr), 48, "REG_MR request size");
	is_int(sizeof(struct ibv_create_ah), 64, "CREATE_AH request size");
	is_int(sizeof(struct ibv_post_send), 32, "POST_SEND (doorbell) size");
	is_int(offsetof(struct tbrdma_cmd_create_cq_resp, drv), 8,
	       "CREATE_CQ driver data at 8");
	is_int(sizeof(struct tbrdma_cmd_create_cq_resp), 8 + 24,
	       "CREATE_CQ response: 8 core + 24 tbrdma");
	is_int(offsetof(struct tbrdma_cmd_resize_cq_resp, drv), 8,
	       "RESIZE_CQ driver data at 8");
	is_int(offsetof(struct tbrdma_cmd_create_qp_resp, drv), 32,
	       "CREATE_QP driver data at 32");
	is_int(sizeof(struct tbrdma_cmd_create_qp_resp), 32 + 56,
	       "CREATE_QP response: 32 core + 56 tbrdma");
	is_int(offsetof(struct tbrdma_cmd_create_srq_resp, drv), 16,
	       "CREATE_SRQ driver data at 16");
	is_int(offsetof(struct tbrdma_cmd_create_ah_resp, drv), 4,
	       "CREATE_AH driver data at 4");
	is_int(sizeof(struct tbrdma_cmd_create_ah_resp), 12,
	       "CREATE_AH response: 4 core + 8 tbrdma");
	is_int(sizeof(struct verbs_mr), sizeof(struct ibv_mr) + 8,
	       "verbs_mr: ibv_mr + mr_type + access");

	return done();
}
