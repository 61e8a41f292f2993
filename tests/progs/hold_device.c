// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test helper: open DEV and hold it the way an application does (a
 * PD, an MR, a CQ and an RC QP in INIT with one receive posted), print
 * "ready", then wait for the device to go away under it.
 *
 * When the device is removed (rmmod, netdev deleted, `rdma link delete`)
 * the kernel must not wait for us: we expect IB_EVENT_DEVICE_FATAL (after
 * any port or GID events), our posted receive completed with a flush error
 * (a program that only polls its CQ learns it that way; the kernel wrote
 * it before the fatal event), then every destroy and the close to succeed
 * (libibverbs reports the kernel's EIO for a destroy on a removed device
 * as success only with RDMAV_ALLOW_DISASSOC_DESTROY set: we set it, as an
 * application that wants to clean up and carry on would).  Prints one line
 * per step; exits 0 only if all of that held.  A test may also just kill
 * it, to check that the kernel cleans up.
 *
 * Usage: hold_device DEV
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define FLUSH_WAIT_SECS 10

static int fail(const char *what)
{
	fprintf(stderr, "hold_device: %s\n", what);
	return 1;
}

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

/* The one receive must come back flushed, from the ring we still poll. */
static int wait_flushed_recv(struct ibv_cq *cq)
{
	time_t end = time(NULL) + FLUSH_WAIT_SECS;
	struct ibv_wc wc;
	int n;

	while (time(NULL) < end) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return fail("ibv_poll_cq failed after the device went away");
		if (n == 0) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id != 7 || wc.status != IBV_WC_WR_FLUSH_ERR) {
			fprintf(stderr, "hold_device: completion wr_id %llu status %s\n",
				(unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
			return 1;
		}
		return 0;
	}
	return fail("the posted receive was never flushed");
}

int main(int argc, char **argv)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	struct ibv_qp_init_attr qp_init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_recv_wr rwr = { .wr_id = 7, .num_sge = 1 }, *bad;
	struct ibv_async_event event;
	struct ibv_context *ctx;
	struct ibv_sge sge;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	static char buf[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEV\n", argv[0]);
		return 2;
	}
	setenv("RDMAV_ALLOW_DISASSOC_DESTROY", "1", 1);	/* before any verb */
	ctx = open_by_name(argv[1]);
	if (!ctx)
		return fail("cannot open the device");
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!mr || !cq)
		return fail("cannot allocate a PD, MR or CQ");
	qp_init.send_cq = cq;
	qp_init.recv_cq = cq;
	qp = ibv_create_qp(pd, &qp_init);
	if (!qp || ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return fail("cannot create an RC QP and move it to INIT");
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = sizeof(buf),
				.lkey = mr->lkey };
	rwr.sg_list = &sge;
	if (ibv_post_recv(qp, &rwr, &bad))
		return fail("cannot post a receive");
	printf("ready\n");
	fflush(stdout);

	/*
	 * Blocks until something happens to the device.  A port going down or
	 * a GID going away comes first when the netdev goes; the fatal event
	 * is the last the device sends.
	 */
	do {
		if (ibv_get_async_event(ctx, &event))
			return fail("ibv_get_async_event failed");
		printf("async event: %s\n", ibv_event_type_str(event.event_type));
		ibv_ack_async_event(&event);
	} while (event.event_type != IBV_EVENT_DEVICE_FATAL);
	fflush(stdout);

	if (wait_flushed_recv(cq))
		return 1;
	printf("receive flushed\n");
	fflush(stdout);

	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dereg_mr(mr) ||
	    ibv_dealloc_pd(pd))
		return fail("a destroy failed after the device went away");
	if (ibv_close_device(ctx))
		return fail("ibv_close_device failed");
	printf("closed\n");
	return 0;
}
