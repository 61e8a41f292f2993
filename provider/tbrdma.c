// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tbrdma provider for libibverbs (rdma-core 44): registration, device
 * matching, device and context lifetime.  The verbs themselves are in
 * verbs.c (queries, PDs), cq.c, qp.c, srq.c, mr.c, ah.c, and the fast
 * path in post.c (posting) and cq.c (polling).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "match.h"
#include "tbrdma.h"

static const struct verbs_context_ops tbrdma_ctx_ops;

/*
 * Called by libibverbs for every uverbs device, before the ABI range check.
 * No match table: the kernel device has no driver id and its name may
 * have been changed by udev, so the sysfs attribute decides alone.
 */
static bool tbrdma_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char dir[PATH_MAX];

	/* v44 fills ibdev_path on both the netlink and the sysfs discovery
	 * path; the rebuild from the name is only a safety net. */
	if (tbrdma_ibdev_dir(dir, sizeof(dir), sysfs_dev->ibdev_path,
			     ibv_get_sysfs_path(), sysfs_dev->ibdev_name))
		return false;
	return tbrdma_match_ibdev_dir(dir, NULL) == TBRDMA_MATCH_OK;
}

static struct verbs_device *
tbrdma_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct tbrdma_device *dev;

	(void)sysfs_dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void tbrdma_uninit_device(struct verbs_device *verbs_device)
{
	free(tbrdma_container_of(verbs_device, struct tbrdma_device, ibv_dev));
}

static struct verbs_context *tbrdma_alloc_context(struct ibv_device *ibdev,
						  int cmd_fd,
						  void *private_data)
{
	struct tbrdma_cmd_get_context cmd = {
		.drv.flags = TBRDMA_UCTX_DOORBELL_FD,
	};
	struct tbrdma_cmd_get_context_resp resp = {};
	struct tbrdma_context *ctx;
	int ret;

	(void)private_data;
	/*
	 * The kernel rejects ioctls whose header driver_id differs from the
	 * device's, and ours is RDMA_DRIVER_UNKNOWN.  The offset is passed
	 * as a pointer value, which is how libibverbs expects it.
	 */
	ctx = _verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)(uintptr_t)offsetof(
			struct tbrdma_context, ibv_ctx),
		RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ctx->doorbell_fd = -1;
	ret = rdma_core_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err;
	if (resp.drv.flags & TBRDMA_UCTX_DOORBELL_FD)
		ctx->doorbell_fd = resp.drv.doorbell_fd;

	/* The sysfs attribute was already checked, but a module reloaded
	 * in between, or one that sends no driver data (abi_version 0),
	 * must not get a context. */
	if (resp.drv.abi_version != TBRDMA_UVERBS_ABI_VERSION) {
		tbrdma_err(&ctx->ibv_ctx, "kernel ABI %u, provider ABI %u",
			   resp.drv.abi_version, TBRDMA_UVERBS_ABI_VERSION);
		ret = EPROTO;
		goto err;
	}
	switch (resp.drv.mode) {
	case TBRDMA_MODE_LOOPBACK:
	case TBRDMA_MODE_NETDEV:
		ctx->mode = resp.drv.mode;
		break;
	default:
		tbrdma_err(&ctx->ibv_ctx, "unknown mode %u", resp.drv.mode);
		ret = EPROTO;
		goto err;
	}

	verbs_set_ops(&ctx->ibv_ctx, &tbrdma_ctx_ops);
	return &ctx->ibv_ctx;

err:
	if (ctx->doorbell_fd >= 0)
		close(ctx->doorbell_fd);
	verbs_uninit_context(&ctx->ibv_ctx);	/* also closes cmd_fd */
	free(ctx);
	errno = ret;
	return NULL;
}

static void tbrdma_free_context(struct ibv_context *ibctx)
{
	struct tbrdma_context *ctx = to_tctx(ibctx);

	if (ctx->doorbell_fd >= 0)
		close(ctx->doorbell_fd);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/* What the provider implements; NULL members keep libibverbs' defaults,
 * which fail with EOPNOTSUPP/ENOSYS (e.g. rereg, XRC). */
static const struct verbs_context_ops tbrdma_ctx_ops = {
	.query_device_ex = tbrdma_query_device_ex,
	.query_port = tbrdma_query_port,
	.alloc_pd = tbrdma_alloc_pd,
	.dealloc_pd = tbrdma_dealloc_pd,
	.free_context = tbrdma_free_context,

	.create_cq = tbrdma_create_cq,
	.create_cq_ex = tbrdma_create_cq_ex,
	.query_rt_values = tbrdma_query_rt_values,
	.resize_cq = tbrdma_resize_cq,
	.destroy_cq = tbrdma_destroy_cq,
	.poll_cq = tbrdma_poll_cq,
	.req_notify_cq = tbrdma_req_notify_cq,

	.create_qp = tbrdma_create_qp,
	.create_qp_ex = tbrdma_create_qp_ex,
	.modify_qp = tbrdma_modify_qp,
	.query_qp = tbrdma_query_qp,
	.destroy_qp = tbrdma_destroy_qp,
	.post_send = tbrdma_post_send,
	.post_recv = tbrdma_post_recv,

	.close_xrcd = tbrdma_close_xrcd,
	.create_srq = tbrdma_create_srq,
	.create_srq_ex = tbrdma_create_srq_ex,
	.get_srq_num = tbrdma_get_srq_num,
	.open_qp = tbrdma_open_qp,
	.open_xrcd = tbrdma_open_xrcd,
	.modify_srq = tbrdma_modify_srq,
	.query_srq = tbrdma_query_srq,
	.destroy_srq = tbrdma_destroy_srq,
	.post_srq_recv = tbrdma_post_srq_recv,

	.reg_mr = tbrdma_reg_mr,
	.dereg_mr = tbrdma_dereg_mr,
	.alloc_mw = tbrdma_alloc_mw,
	.dealloc_mw = tbrdma_dealloc_mw,
	.bind_mw = tbrdma_bind_mw,

	.create_ah = tbrdma_create_ah,
	.destroy_ah = tbrdma_destroy_ah,
};

/*
 * Empty: matching is match_device()'s job.  But libibverbs 44 walks every
 * provider's table, unchecked, for devices that have a driver id (rxe,
 * mlx5, ...), so the table must exist: a lone sentinel.
 */
static const struct verbs_match_ent tbrdma_match_table[] = {
	{ .kind = 0 },
};

static const struct verbs_device_ops tbrdma_dev_ops = {
	.name = TBRDMA_DRIVER_NAME,
	/* The uverbs driver ABI: the kernel's ib_device_ops.uverbs_abi_ver,
	 * read by libibverbs from sysfs/netlink as verbs_sysfs_dev.abi_ver. */
	.match_min_abi_version = TBRDMA_UVERBS_ABI_VERSION,
	.match_max_abi_version = TBRDMA_UVERBS_ABI_VERSION,
	.match_table = tbrdma_match_table,
	.match_device = tbrdma_match_device,
	.alloc_device = tbrdma_alloc_device,
	.uninit_device = tbrdma_uninit_device,
	.alloc_context = tbrdma_alloc_context,
};

/* dlopen() of lib<name>-rdmav<N>.so runs this; it is how libibverbs learns
 * about a dynamically loaded provider (verbs_register_driver_<N>). */
static void __attribute__((constructor)) tbrdma_register_driver(void)
{
	VERBS_REGISTER_DRIVER(&tbrdma_dev_ops);
}
