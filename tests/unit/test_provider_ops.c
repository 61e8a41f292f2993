// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Our struct verbs_context_ops against the installed libibverbs itself,
 * not against what we read upstream: every slot of the struct gets a
 * distinct fake pointer, libibverbs' own verbs_set_ops() copies them into
 * a real context, and each op that libibverbs also exposes publicly
 * (struct ibv_context_ops, struct verbs_context, whose layouts come from
 * the installed <infiniband/verbs.h>) must come out holding the pointer
 * we put in the slot of that name.  A slot missing, added or moved in
 * rdma-core-private.h shifts every op after it, and this fails.  Run
 * with each rdma-core we build for (44 on the host, 56 and 65 in the
 * trixie and sid roots: make dist-unit-tests).
 *
 * The names and where they land follow upstream's verbs_set_ops()
 * (libibverbs/dummy_ops.c): SET_OP(ctx, x) -> context.ops.x,
 * SET_PRIV_OP(ctx, x) -> context.ops._compat_x, SET_OP(vctx, x) -> x.
 * The context is made by _verbs_init_and_alloc_context() on /dev/null,
 * which only needs a verbs_device to count references on.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "../../provider/rdma-core-private.h"

#define NSLOTS (sizeof(struct verbs_context_ops) / sizeof(void (*)(void)))

struct test_context {
	struct verbs_context vctx;
};

static struct verbs_context_ops ops;

/* The fake value of slot i: never called, only compared. */
static uintptr_t fake(size_t i)
{
	return 0x10000 + 16 * (uintptr_t)i;
}

static void check(const char *name, const void *got, const void *ours)
{
	size_t slot = ((uintptr_t)ours - fake(0)) / 16;

	is_int((long long)(uintptr_t)got, (long long)(uintptr_t)ours,
	       "%s: libibverbs finds our slot %zu's pointer where it keeps %s",
	       name, slot, name);
}

/* The op has a public copy: through the context's legacy op table ... */
#define CTX(op) check(#op, (const void *)v->context.ops.op, (const void *)ops.op)
#define CTX_COMPAT(op)                                                        \
	check(#op, (const void *)v->context.ops._compat_##op,                 \
	      (const void *)ops.op)
/* ... or in struct verbs_context. */
#define VCTX(op) check(#op, (const void *)v->op, (const void *)ops.op)
#define VCTX2(field, op) check(#op, (const void *)v->field, (const void *)ops.op)

int main(void)
{
	struct verbs_device dev;
	struct test_context *tc;
	struct verbs_context *v;
	void (**slot)(void) = (void (**)(void))&ops;
	size_t i;
	int fd;

	plan(NO_PLAN);
	diag("rdma-core %d, private ABI %d, %zu ops", RDMA_CORE_VERSION,
	     RDMA_CORE_PABI_VERSION, NSLOTS);

	memset(&dev, 0, sizeof(dev));
	/* The context holds a reference; ours keeps the count above zero,
	 * so libibverbs never tries to release this fake device. */
	atomic_init(&dev.refcount, 1);
	fd = open("/dev/null", O_RDWR);
	if (fd < 0)
		bail_out("open /dev/null");
	tc = _verbs_init_and_alloc_context(&dev.device, fd, sizeof(*tc),
					   (struct verbs_context *)offsetof(
						   struct test_context, vctx),
					   RDMA_DRIVER_UNKNOWN);
	if (!tc)
		bail_out("_verbs_init_and_alloc_context failed");
	v = &tc->vctx;

	for (i = 0; i < NSLOTS; i++)
		slot[i] = (void (*)(void))fake(i);
	verbs_set_ops(v, &ops);

	/* struct ibv_context_ops */
	CTX(alloc_mw);
	CTX(bind_mw);
	CTX(dealloc_mw);
	CTX(poll_cq);
	CTX(post_recv);
	CTX(post_send);
	CTX(post_srq_recv);
	CTX(req_notify_cq);
	CTX_COMPAT(alloc_pd);
	CTX_COMPAT(async_event);
	CTX_COMPAT(attach_mcast);
	CTX_COMPAT(cq_event);
	CTX_COMPAT(create_ah);
	CTX_COMPAT(create_cq);
	CTX_COMPAT(create_qp);
	CTX_COMPAT(create_srq);
	CTX_COMPAT(dealloc_pd);
	CTX_COMPAT(dereg_mr);
	CTX_COMPAT(destroy_ah);
	CTX_COMPAT(destroy_cq);
	CTX_COMPAT(destroy_qp);
	CTX_COMPAT(destroy_srq);
	CTX_COMPAT(detach_mcast);
	CTX_COMPAT(modify_qp);
	CTX_COMPAT(modify_srq);
	CTX_COMPAT(query_qp);
	CTX_COMPAT(query_srq);
	CTX_COMPAT(reg_mr);
	CTX_COMPAT(rereg_mr);
	CTX_COMPAT(resize_cq);

	/* struct verbs_context */
	VCTX(advise_mr);
	VCTX(alloc_dm);
	VCTX(alloc_null_mr);
	VCTX(alloc_parent_domain);
	VCTX(alloc_td);
	VCTX(attach_counters_point_flow);
	VCTX(close_xrcd);
	VCTX(create_counters);
	VCTX2(ibv_create_flow, create_flow);
	VCTX(create_flow_action_esp);
	VCTX(create_qp_ex);
	VCTX(create_rwq_ind_table);
	VCTX(create_srq_ex);
	VCTX(create_wq);
	VCTX(dealloc_td);
	VCTX(destroy_counters);
	VCTX2(ibv_destroy_flow, destroy_flow);
	VCTX(destroy_flow_action);
	VCTX(destroy_rwq_ind_table);
	VCTX(destroy_wq);
	VCTX(free_dm);
	VCTX(get_srq_num);
	VCTX(modify_cq);
	VCTX(modify_flow_action_esp);
	VCTX(modify_qp_rate_limit);
	VCTX(modify_wq);
	VCTX(open_qp);
	VCTX(open_xrcd);
	VCTX(post_srq_ops);
	VCTX(query_device_ex);
	VCTX(query_rt_values);
	VCTX(read_counters);
	VCTX(reg_dm_mr);
#if RDMA_CORE_VERSION >= 59
	VCTX(alloc_dmah);
	VCTX(dealloc_dmah);
	VCTX(reg_mr_ex);
#endif
#if RDMA_CORE_VERSION >= 62
	VCTX(dm_export_dmabuf_fd);
#endif
#if RDMA_CORE_VERSION >= 64
	VCTX(alloc_buf);
	VCTX(free_buf);
#endif

	verbs_uninit_context(v);
	free(tc);
	return done();
}
