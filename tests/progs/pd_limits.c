// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: a tbrdma device seen through libibverbs and our provider.
 * Opens DEV, checks what query_device_ex / query_port report, then
 * allocates protection domains until the device refuses and checks that
 * the limit is exactly the max_pd it reported less the PDs others hold
 * (IN_USE, e.g. the kernel's MAD layer), that the refusal is ENOMEM, and
 * that a freed PD can be allocated again.
 *
 * Usage: pd_limits DEV IN_USE        Prints TAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "../unit/tap.h"

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex attr = {};
	struct ibv_port_attr port = {};
	struct ibv_context *ctx;
	struct ibv_pd **pds;
	int n = 0, refusal = 0, in_use, room;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV IN_USE\n", argv[0]);
		return 2;
	}
	in_use = atoi(argv[2]);
	plan(9);

	ctx = open_by_name(argv[1]);
	if (!ok(ctx != NULL, "device %s is listed and opens", argv[1]))
		return done();

	is_int(ibv_query_device_ex(ctx, NULL, &attr), 0, "query_device_ex");
	ok(attr.orig_attr.max_pd > 0, "max_pd %d > 0", attr.orig_attr.max_pd);
	is_int(ibv_query_port(ctx, 1, &port), 0, "query_port");
	is_int(port.state, IBV_PORT_ACTIVE, "port is ACTIVE");
	is_int(port.link_layer, IBV_LINK_LAYER_ETHERNET,
	       "link layer is Ethernet");

	room = attr.orig_attr.max_pd - in_use;
	pds = calloc(attr.orig_attr.max_pd + 1, sizeof(*pds));
	if (!pds)
		return 2;
	while (n <= attr.orig_attr.max_pd) {
		pds[n] = ibv_alloc_pd(ctx);
		if (!pds[n]) {
			refusal = errno;
			break;
		}
		n++;
	}
	is_int(n, room, "exactly max_pd - %d PDs allocate", in_use);
	is_int(refusal, ENOMEM, "the next one fails with ENOMEM");

	if (n > 0) {
		ibv_dealloc_pd(pds[--n]);
		pds[n] = ibv_alloc_pd(ctx);
		if (pds[n])
			n++;
	}
	ok(n == room, "a freed PD can be allocated again");

	while (n > 0)
		ibv_dealloc_pd(pds[--n]);
	free(pds);
	ibv_close_device(ctx);
	return done();
}
