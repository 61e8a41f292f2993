/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Private types of the tbrdma provider: what it wraps around the
 * libibverbs objects, and how the driver data of each command is laid out
 * after the core uverbs structs.
 */
#ifndef TBRDMA_PROVIDER_H
#define TBRDMA_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "rdma-core-private.h"
#include "../uapi/tbrdma-abi.h"

/* container_of without the GNU statement-expression dependency. */
#define tbrdma_container_of(ptr, type, member) \
	((type *)((uintptr_t)(ptr) - offsetof(type, member)))

struct tbrdma_device {
	struct verbs_device ibv_dev;	/* first: libibverbs owns the start */
};

struct tbrdma_context {
	struct verbs_context ibv_ctx;
	enum tbrdma_mode mode;		/* from GET_CONTEXT; loopback or netdev */
};

struct tbrdma_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;			/* kernel's PD number, for diagnostics */
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

/*
 * Whole responses as the kernel writes them: core response, then our
 * driver data (the kernel's udata->outbuf) right behind it.  The asserts
 * make sure the compiler adds no padding in between or after.
 */
struct tbrdma_cmd_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct tbrdma_alloc_ucontext_resp drv;
};

struct tbrdma_cmd_alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct tbrdma_alloc_pd_resp drv;
};

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

#endif /* TBRDMA_PROVIDER_H */
