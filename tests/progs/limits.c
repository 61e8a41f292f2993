// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: the per-device object limits, through libibverbs and our
 * provider.  Opens DEV, checks what query_device_ex / query_port report,
 * then for each object kind named on the command line allocates until the
 * device refuses, and checks that:
 *   - exactly the reported maximum less IN_USE (what others hold, e.g. the
 *     kernel's MAD layer, counted by the caller with `rdma resource`)
 *     could be allocated,
 *   - the refusal is ENOMEM (a clean error, not a crash or a hang),
 *   - after one is freed the next allocation succeeds,
 *   - everything frees.
 * Kinds: pd cq qp mr srq ah.  WR depths, SGEs and inline sizes are checked
 * one above the limit by verbs_extra; pinned memory (RLIMIT_MEMLOCK) too.
 *
 * Usage: limits DEV KIND=IN_USE...     e.g. limits tbrlo0 pd=1 cq=1 qp=0
 * Prints TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "../unit/tap.h"
#include "vutil.h"

/* What every kind's allocator may use: one of each parent object. */
static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_ah_attr ah_attr;
	char page[4096] __attribute__((aligned(4096)));
} env;

static void *new_pd(void) { return ibv_alloc_pd(env.ctx); }
static void free_pd(void *o) { ibv_dealloc_pd(o); }
static void *new_cq(void) { return ibv_create_cq(env.ctx, 1, NULL, NULL, 0); }
static void free_cq(void *o) { ibv_destroy_cq(o); }
static void free_qp(void *o) { ibv_destroy_qp(o); }
static void free_srq(void *o) { ibv_destroy_srq(o); }
static void *new_ah(void) { return ibv_create_ah(env.pd, &env.ah_attr); }
static void free_ah(void *o) { ibv_destroy_ah(o); }
static void free_mr(void *o) { ibv_dereg_mr(o); }

/* The smallest QP there is: one send slot, receives from the shared SRQ
 * (so a QP maps one ring, and 16384 of them stay within vm.max_map_count). */
static void *new_qp(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = env.cq, .recv_cq = env.cq, .srq = env.srq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(env.pd, &a);
}

static void *new_srq(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ibv_create_srq(env.pd, &a);
}

/* Every MR registers the same page: the MR count is what is limited, and
 * pinning one page many times costs no memory. */
static void *new_mr(void)
{
	return ibv_reg_mr(env.pd, env.page, sizeof(env.page),
			  IBV_ACCESS_LOCAL_WRITE);
}

struct kind {
	const char *name;
	void *(*alloc)(void);
	void (*release)(void *);
	int max;	/* filled from query_device */
};

/* Allocate K until refused; check the count, the errno, free-then-alloc. */
static void exhaust(struct kind *k, int in_use)
{
	int room = k->max - in_use, n = 0, refusal = 0;
	void **objs = calloc(k->max + 1, sizeof(*objs));

	if (!objs)
		bail_out("out of memory");
	while (n <= k->max) {
		errno = 0;
		objs[n] = k->alloc();
		if (!objs[n]) {
			refusal = errno;
			break;
		}
		n++;
	}
	is_int(n, room, "%s: exactly max %d - %d in use allocate", k->name,
	       k->max, in_use);
	is_int(refusal, ENOMEM, "%s: the next one fails with ENOMEM (%s)",
	       k->name, strerror(refusal));
	if (n > 0) {
		k->release(objs[--n]);
		objs[n] = k->alloc();
		if (objs[n])
			n++;
	}
	ok(n == room, "%s: after a free the next allocation succeeds", k->name);
	while (n > 0)
		k->release(objs[--n]);
	free(objs);
}

int main(int argc, char **argv)
{
	struct kind kinds[] = {
		{ "pd", new_pd, free_pd, 0 }, { "cq", new_cq, free_cq, 0 },
		{ "qp", new_qp, free_qp, 0 }, { "mr", new_mr, free_mr, 0 },
		{ "srq", new_srq, free_srq, 0 }, { "ah", new_ah, free_ah, 0 },
	};
	struct ibv_device_attr_ex attr = {};
	struct ibv_port_attr port = {};
	union ibv_gid gid;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV KIND=IN_USE...\n", argv[0]);
		return 2;
	}
	env.ctx = vdev_open(argv[1]);
	if (!ok(env.ctx != NULL, "device %s is listed and opens", argv[1]))
		return done();
	is_int(ibv_query_device_ex(env.ctx, NULL, &attr), 0, "query_device_ex");
	kinds[0].max = attr.orig_attr.max_pd;
	kinds[1].max = attr.orig_attr.max_cq;
	kinds[2].max = attr.orig_attr.max_qp;
	kinds[3].max = attr.orig_attr.max_mr;
	kinds[4].max = attr.orig_attr.max_srq;
	kinds[5].max = attr.orig_attr.max_ah;
	is_int(ibv_query_port(env.ctx, 1, &port), 0, "query_port");
	is_int(port.state, IBV_PORT_ACTIVE, "port is ACTIVE");
	is_int(port.link_layer, IBV_LINK_LAYER_ETHERNET, "link layer is Ethernet");

	/* The parents the kinds need, counted against their own limits. */
	env.pd = ibv_alloc_pd(env.ctx);
	env.cq = ibv_create_cq(env.ctx, 1, NULL, NULL, 0);
	env.srq = new_srq();
	if (!env.pd || !env.cq || !env.srq)
		bail_out("cannot set up a PD, a CQ and an SRQ");
	/* AHs to ourselves, through the first GID that has a route (on lo,
	 * an IPv6 link-local GID has none). */
	for (int i = 0; i < port.gid_tbl_len; i++) {
		struct ibv_ah *ah;

		if (ibv_query_gid(env.ctx, 1, i, &gid))
			continue;
		env.ah_attr = (struct ibv_ah_attr){
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = gid, .sgid_index = i, .hop_limit = 1 },
		};
		ah = new_ah();
		if (ah) {
			free_ah(ah);
			break;
		}
		env.ah_attr.is_global = 0;
	}
	if (!env.ah_attr.is_global)
		bail_out("no GID an AH can be made with");

	for (int i = 2; i < argc; i++) {
		char name[8];
		int in_use, found = 0;

		if (sscanf(argv[i], "%7[a-z]=%d", name, &in_use) != 2)
			bail_out("bad argument '%s' (want KIND=IN_USE)", argv[i]);
		for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++) {
			if (strcmp(kinds[j].name, name))
				continue;
			found = 1;
			ok(kinds[j].max > 0, "max_%s %d > 0", name, kinds[j].max);
			/* Our own parent PD, CQ or SRQ is one more in use. */
			exhaust(&kinds[j], in_use + (j == 0 || j == 1 || j == 4));
		}
		if (!found)
			bail_out("unknown kind '%s'", name);
	}
	ibv_destroy_srq(env.srq);
	ibv_destroy_cq(env.cq);
	ibv_dealloc_pd(env.pd);
	ibv_close_device(env.ctx);
	return done();
}
