// SPDX-License-Identifier: GPL-2.0-only
/* Verbs helpers for the guest data-path tests; see vutil.h. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vutil.h"

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct ibv_context *vdev_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

int name_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; s && (s = strstr(s, name)); s += n)
		if ((s == list || s[-1] == ',') && (s[n] == ',' || !s[n]))
			return 1;
	return 0;
}

int vctx_open(struct vctx *v, const char *dev, int gid_index)
{
	memset(v, 0, sizeof(*v));
	v->port_num = 1;
	v->gid_index = gid_index;
	v->ctx = vdev_open(dev);
	if (!v->ctx) {
		fprintf(stderr, "cannot open device %s\n", dev);
		return -1;
	}
	if (ibv_query_device(v->ctx, &v->attr) ||
	    ibv_query_port(v->ctx, v->port_num, &v->port) ||
	    ibv_query_gid(v->ctx, v->port_num, gid_index, &v->gid)) {
		fprintf(stderr, "%s: query device/port/gid %d failed\n", dev,
			gid_index);
		ibv_close_device(v->ctx);
		v->ctx = NULL;
		return -1;
	}
	if (v->port.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, "%s: port 1 is not ACTIVE (%d)\n", dev,
			v->port.state);
		ibv_close_device(v->ctx);
		v->ctx = NULL;
		return -1;
	}
	return 0;
}

void vctx_close(struct vctx *v)
{
	if (v->ctx)
		ibv_close_device(v->ctx);
	v->ctx = NULL;
}

void conn_defaults(struct conn *c, const struct vctx *v)
{
	int rd = v->attr.max_qp_rd_atom;

	if (v->attr.max_qp_init_rd_atom < rd)
		rd = v->attr.max_qp_init_rd_atom;
	if (rd > 16)
		rd = 16;
	c->timeout = 14;	/* ~67 ms: loopback never needs more */
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 1;
	c->rd_atomic = rd;
	c->dgid = NULL;
	c->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
}

uint32_t psn_for(uint32_t qpn)
{
	return (0xffffffu - (qpn * 37u) % 4096u) & 0xffffffu;
}

int qp_to_init(struct ibv_qp *qp, const struct vctx *v, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = v->port_num,
		.qp_access_flags = access,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qp->qp_type != IBV_QPT_UD)
		mask |= IBV_QP_ACCESS_FLAGS;
	else {
		a.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	}
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rtr(struct ibv_qp *qp, const struct vctx *v, uint32_t dqpn,
	      const struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = v->port.active_mtu,
		.dest_qp_num = dqpn,
		.rq_psn = psn_for(dqpn),
		.max_dest_rd_atomic = c->rd_atomic,
		.min_rnr_timer = c->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = c->dgid ? *c->dgid : v->gid,
				.sgid_index = v->gid_index,
				.hop_limit = 64,
			},
			.port_num = v->port_num,
		},
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rts(struct ibv_qp *qp, const struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = psn_for(qp->qp_num),
		.timeout = c->timeout,
		.retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
		.max_rd_atomic = c->rd_atomic,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

int qp_connect(struct ibv_qp *qp, const struct vctx *v, uint32_t dqpn,
	       const struct conn *c)
{
	int err = qp_to_init(qp, v, c->access);

	if (!err)
		err = qp_to_rtr(qp, v, dqpn, c);
	if (!err)
		err = qp_to_rts(qp, c);
	return err;
}

int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n < 0 ? -1 : 1;
		if (now_ms() >= deadline)
			return 0;
		sched_yield();	/* give the (software) device a CPU */
	}
}
