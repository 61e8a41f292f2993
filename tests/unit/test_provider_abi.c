// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout checks of provider/rdma-core-private.h, our declaration of the
 * private provider ABI of the rdma-core release the provider is built
 * against (44 to 65; rdma-core-abi.h says which).  Most of them are
 * compile-time: if a slot moves, this file does not build and `make check`
 * fails.  The same facts are also reported as TAP lines so a run shows
 * what was checked.
 *
 * The expected order is upstream's libibverbs/driver.h verbs_context_ops
 * of each release, written out here on its own: alphabetical, the 76 ops
 * of v44.0 (also in shared/notes/platform-facts.md), with the ops added
 * in v59.0, v62.0, v64.0 and v65.0 in their places.
 */
#include <stddef.h>

#include "tap.h"
#include "../../provider/tbrdma.h"	/* pulls in rdma-core-private.h */

struct slot {
	const char *name;
	size_t ours;
};

#define OP(op) { #op, VERBS_OP_INDEX(op) },
/* Upstream's order for the release built against; slot i must be op i. */
static const struct slot slots[] = {
	OP(advise_mr)
#if RDMA_CORE_VERSION >= 64
	OP(alloc_buf)
#endif
	OP(alloc_dm)
#if RDMA_CORE_VERSION >= 59
	OP(alloc_dmah)
#endif
	OP(alloc_mw) OP(alloc_null_mr) OP(alloc_parent_domain) OP(alloc_pd)
	OP(alloc_td) OP(async_event) OP(attach_counters_point_flow)
	OP(attach_mcast) OP(bind_mw) OP(close_xrcd) OP(cq_event) OP(create_ah)
#if RDMA_CORE_VERSION >= 65
	OP(create_comp_cntr)
#endif
	OP(create_counters) OP(create_cq) OP(create_cq_ex) OP(create_flow)
	OP(create_flow_action_esp) OP(create_qp) OP(create_qp_ex)
	OP(create_rwq_ind_table) OP(create_srq) OP(create_srq_ex) OP(create_wq)
#if RDMA_CORE_VERSION >= 59
	OP(dealloc_dmah)
#endif
	OP(dealloc_mw) OP(dealloc_pd) OP(dealloc_td) OP(dereg_mr) OP(destroy_ah)
#if RDMA_CORE_VERSION >= 65
	OP(destroy_comp_cntr)
#endif
	OP(destroy_counters) OP(destroy_cq) OP(destroy_flow)
	OP(destroy_flow_action) OP(destroy_qp) OP(destroy_rwq_ind_table)
	OP(destroy_srq) OP(destroy_wq) OP(detach_mcast)
#if RDMA_CORE_VERSION >= 62
	OP(dm_export_dmabuf_fd)
#endif
#if RDMA_CORE_VERSION >= 64
	OP(free_buf)
#endif
	OP(free_context) OP(free_dm) OP(get_srq_num) OP(import_dm) OP(import_mr)
	OP(import_pd)
#if RDMA_CORE_VERSION >= 65
	OP(inc_comp_cntr) OP(inc_err_comp_cntr)
#endif
	OP(modify_cq) OP(modify_flow_action_esp) OP(modify_qp)
	OP(modify_qp_rate_limit) OP(modify_srq) OP(modify_wq) OP(open_qp)
	OP(open_xrcd) OP(poll_cq) OP(post_recv) OP(post_send) OP(post_srq_ops)
	OP(post_srq_recv)
#if RDMA_CORE_VERSION >= 65
	OP(qp_attach_comp_cntr) OP(query_comp_cntr_caps)
#endif
	OP(query_device_ex) OP(query_ece) OP(query_port)
#if RDMA_CORE_VERSION >= 62
	OP(query_port_speed)
#endif
	OP(query_qp) OP(query_qp_data_in_order) OP(query_rt_values) OP(query_srq)
#if RDMA_CORE_VERSION >= 65
	OP(read_comp_cntr)
#endif
	OP(read_counters)
#if RDMA_CORE_VERSION >= 65
	OP(read_err_comp_cntr)
#endif
	OP(reg_dm_mr) OP(reg_dmabuf_mr) OP(reg_mr)
#if RDMA_CORE_VERSION >= 59
	OP(reg_mr_ex)
#endif
	OP(req_notify_cq) OP(rereg_mr) OP(resize_cq)
#if RDMA_CORE_VERSION >= 65
	OP(set_comp_cntr)
#endif
	OP(set_ece)
#if RDMA_CORE_VERSION >= 65
	OP(set_err_comp_cntr)
#endif
	OP(unimport_dm) OP(unimport_mr) OP(unimport_pd)
};

_Static_assert(sizeof(slots) / sizeof(slots[0]) == VERBS_CONTEXT_OPS_COUNT,
	       "as many ops as the release has");

int main(void)
{
	size_t i;

	plan(NO_PLAN);
	diag("rdma-core %d, private ABI %d", RDMA_CORE_VERSION,
	     RDMA_CORE_PABI_VERSION);

	is_int(sizeof(struct verbs_context_ops),
	       VERBS_CONTEXT_OPS_COUNT * sizeof(void (*)(void)),
	       "verbs_context_ops is %d pointers", VERBS_CONTEXT_OPS_COUNT);
	for (i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		is_int(slots[i].ours, i, "op %s in slot %zu", slots[i].name, i);

	/* Offsets libibverbs reads or writes in our objects (LP64 values
	 * from compiling v44's own definitions; the same through v65). */
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
	/* libibverbs 44's ibv_qp_to_qp_ex(): testb $0x2,0x160(%rdi); 56's
	 * and 65's test 0x168 (ibv_qp_ex grew wr_flush in 45). */
	is_int(offsetof(struct verbs_qp, comp_mask),
	       RDMA_CORE_VERSION >= 45 ? 0x168 : 0x160,
	       "verbs_qp.comp_mask where ibv_qp_to_qp_ex() tests it");
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

	/* The data path: requests (hdr + core payload, as kern-abi.h)
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
