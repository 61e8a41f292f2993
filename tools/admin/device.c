// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/tbrdma-abi.h"

#include "device.h"
#include "sysfs.h"

bool tbr_device_is_ours(const char *ibdev)
{
	return tbr_sysfs_exists("class/infiniband/%s/" TBRDMA_SYSFS_MODE_ATTR,
				ibdev);
}

/* The sysfs and port parts of a device netlink already named. */
static int complete_device(struct rdma_nl *nl, struct tbr_device *dev)
{
	char text[32];
	int err;

	err = tbr_sysfs_read(dev->mode, sizeof(dev->mode),
			     "class/infiniband/%s/" TBRDMA_SYSFS_MODE_ATTR,
			     dev->nl.name);
	if (err)
		return err;
	dev->abi_version = 0;
	if (!tbr_sysfs_read(text, sizeof(text),
			    "class/infiniband/%s/" TBRDMA_SYSFS_ABI_ATTR,
			    dev->nl.name))
		dev->abi_version = strtoul(text, NULL, 10);
	return rdma_nl_port_get(nl, dev->nl.index, TBR_PORT, &dev->port);
}

struct list_ctx {
	struct tbr_device *devs;
	size_t n, cap;
	int err;
};

static int collect_ours(const struct rdma_nl_dev *nldev, void *arg)
{
	struct list_ctx *ctx = arg;
	struct tbr_device *grown;

	if (!tbr_device_is_ours(nldev->name))
		return 0;
	if (ctx->n == ctx->cap) {
		ctx->cap = ctx->cap ? 2 * ctx->cap : 8;
		grown = realloc(ctx->devs, ctx->cap * sizeof(*grown));
		if (!grown) {
			ctx->err = -ENOMEM;
			return 1;
		}
		ctx->devs = grown;
	}
	memset(&ctx->devs[ctx->n], 0, sizeof(ctx->devs[0]));
	ctx->devs[ctx->n++].nl = *nldev;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct tbr_device *x = a, *y = b;

	return strcmp(x->nl.name, y->nl.name);
}

int tbr_devices_list(struct rdma_nl *nl, struct tbr_device **devs, size_t *n)
{
	struct list_ctx ctx = { 0 };
	size_t i, kept = 0;
	int err;

	err = rdma_nl_dev_list(nl, collect_ours, &ctx);
	if (err < 0 || ctx.err) {
		free(ctx.devs);
		return err < 0 ? err : ctx.err;
	}
	/* A device deleted since the dump is no longer there: skip it. */
	for (i = 0; i < ctx.n; i++) {
		err = complete_device(nl, &ctx.devs[i]);
		if (err == -ENOENT || err == -ENODEV || err == -EINVAL)
			continue;
		if (err) {
			free(ctx.devs);
			return err;
		}
		ctx.devs[kept++] = ctx.devs[i];
	}
	if (kept)
		qsort(ctx.devs, kept, sizeof(ctx.devs[0]), by_name);
	*devs = ctx.devs;
	*n = kept;
	return 0;
}

int tbr_device_get(struct rdma_nl *nl, const char *name,
		   struct tbr_device *dev)
{
	int err;

	memset(dev, 0, sizeof(*dev));
	err = rdma_nl_dev_by_name(nl, name, &dev->nl);
	if (err)
		return err;
	if (!tbr_device_is_ours(name))
		return -EMEDIUMTYPE;
	err = complete_device(nl, dev);
	/* Gone between the two questions: as if it never was. */
	return (err == -ENOENT || err == -EINVAL) ? -ENODEV : err;
}
