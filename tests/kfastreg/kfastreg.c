// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test-only module for tests/selftests/275-fastreg.sh: fast registration
 * as a kernel consumer uses it, and the errors the verbs spec gives.
 *
 * QP A on device dev_a owns a fast-registration MR over three pages;
 * QP B on dev_b (the same device for loopback) is its RC peer and uses
 * the rkey.  The QPs are joined by hand with the ports' IPv4 GIDs and
 * the MACs of the GIDs' netdevs.  Every check prints
 * "kfastreg: ok N - what" or "kfastreg: not ok N - what"; loading fails
 * (-EIO) when any check failed.  Nothing stays loaded on success either
 * (-ECANCELED), like a test program that exits.
 */
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_a = "tbrlo0";
static char *dev_b = "tbrlo0";
module_param(dev_a, charp, 0444);
module_param(dev_b, charp, 0444);

#define NPAGES		3
#define BUFLEN		(NPAGES * PAGE_SIZE)
#define MSGLEN		8000

struct side {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int gid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];	/* of the GID's netdev */
};

static struct side a, b;
static struct ib_pd *pd_other;		/* a second PD on dev_a */
static int tests, failures;

/*
 * The devices are found by name through a client, as a kernel consumer
 * finds devices: ib_device_get_by_name() is no longer exported (7.x).
 * The reference taken here keeps each device registered until
 * side_free(); the client goes away after that.
 */
static int kfastreg_add_one(struct ib_device *dev)
{
	if (!a.dev && !strcmp(dev_name(&dev->dev), dev_a) &&
	    ib_device_try_get(dev))
		a.dev = dev;
	if (!b.dev && !strcmp(dev_name(&dev->dev), dev_b) &&
	    ib_device_try_get(dev))
		b.dev = dev;
	return 0;
}

static void kfastreg_remove_one(struct ib_device *dev, void *client_data)
{
}

static struct ib_client kfastreg_client = {
	.name = "tbrdma_kfastreg",
	.add = kfastreg_add_one,
	.remove = kfastreg_remove_one,
};

static void check(bool ok, const char *what)
{
	tests++;
	if (!ok)
		failures++;
	pr_info("kfastreg: %sok %d - %s\n", ok ? "" : "not ", tests, what);
}

/* The first IPv4-mapped RoCEv2 GID of the port. */
static int find_v4_gid(struct side *s)
{
	const struct ib_gid_attr *attr;
	int i;

	for (i = 0; i < 64; i++) {
		attr = rdma_get_gid_attr(s->dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw) &&
		    attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
			struct net_device *ndev;

			s->gid_index = i;
			s->gid = attr->gid;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				ether_addr_copy(s->mac, ndev->dev_addr);
			rcu_read_unlock();
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

static int side_init(struct side *s, const char *name)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};

	if (!s->dev) {
		pr_info("kfastreg: no RDMA device %s\n", name);
		return -ENODEV;
	}
	if (find_v4_gid(s))
		return -ENOENT;
	s->pd = ib_alloc_pd(s->dev, 0);
	if (IS_ERR(s->pd))
		return PTR_ERR(s->pd);
	s->cq = ib_alloc_cq(s->dev, NULL, 32, 0, IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return PTR_ERR(s->cq);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ib_create_qp(s->pd, &init);
	return PTR_ERR_OR_ZERO(s->qp);
}

static int qp_connect(struct side *s, struct side *peer)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RESET,
	};
	int err;

	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE);
	if (err)
		return err;
	attr = (struct ib_qp_attr) {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
	};
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	attr = (struct ib_qp_attr) {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = peer->qp->qp_num,
		.rq_psn = 1,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
	};
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &peer->gid, 0, s->gid_index, 64, 0);
	/* Kernel consumers resolve the peer's MAC themselves (RDMA CM does). */
	ether_addr_copy(attr.ah_attr.roce.dmac, peer->mac);
	err = ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	attr = (struct ib_qp_attr) {
		.qp_state = IB_QPS_RTS,
		.sq_psn = 1,
		.timeout = 14,
		.retry_cnt = 3,
		.rnr_retry = 3,
		.max_rd_atomic = 1,
	};
	return ib_modify_qp(s->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/* Both QPs back to RTS (after an error put them in ERR). */
static int reconnect(void)
{
	struct ib_wc wc;
	int err;

	err = qp_connect(&a, &b) ?: qp_connect(&b, &a);
	while (ib_poll_cq(a.cq, 1, &wc) > 0)
		;
	while (b.cq != a.cq && ib_poll_cq(b.cq, 1, &wc) > 0)
		;
	return err;
}

/* The next completion of @cq for @wr_id, waiting up to 5 s. */
static int wait_wc(struct ib_cq *cq, u64 wr_id, struct ib_wc *wc)
{
	int i;

	for (i = 0; i < 5000; i++) {
		while (ib_poll_cq(cq, 1, wc) > 0)
			if (wc->wr_id == wr_id)
				return 0;
		usleep_range(500, 1000);
	}
	return -ETIMEDOUT;
}

static int post_and_wait(struct side *s, struct ib_send_wr *wr,
			 struct ib_wc *wc)
{
	const struct ib_send_wr *bad;
	int err = ib_post_send(s->qp, wr, &bad);

	if (!err)
		err = wait_wc(s->cq, wr->wr_id, wc);
	if (err)
		pr_info("kfastreg: posting opcode %d: %d\n", wr->opcode, err);
	else if (wc->status != IB_WC_SUCCESS)
		pr_info("kfastreg: opcode %d completed with %s\n", wr->opcode,
			ib_wc_status_msg(wc->status));
	return err;
}

static enum ib_wc_status reg(struct side *s, struct ib_mr *mr, int access,
			     enum ib_wc_opcode *op)
{
	struct ib_reg_wr wr = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 100,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr,
		.key = mr->rkey,
		.access = access,
	};
	struct ib_wc wc;

	if (post_and_wait(s, &wr.wr, &wc))
		return -1;
	if (op)
		*op = wc.opcode;
	return wc.status;
}

static enum ib_wc_status local_inv(struct side *s, u32 key,
				   enum ib_wc_opcode *op)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV, .wr_id = 101,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};
	struct ib_wc wc;

	if (post_and_wait(s, &wr, &wc))
		return -1;
	if (op)
		*op = wc.opcode;
	return wc.status;
}

/* B: RDMA WRITE or READ of @len bytes of @local at @addr under @rkey. */
static enum ib_wc_status rdma_op(enum ib_wr_opcode opcode, void *local,
				 u32 len, u64 addr, u32 rkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)local, .length = len,
		.lkey = b.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = opcode, .wr_id = 200, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = addr,
		.rkey = rkey,
	};
	struct ib_wc wc;

	if (post_and_wait(&b, &wr.wr, &wc))
		return -1;
	return wc.status;
}

/* B sends @len bytes with invalidation of @rkey; A's receive completion. */
static enum ib_wc_status send_inv(u32 rkey, void *rbuf, void *sbuf,
				  struct ib_wc *rwc, enum ib_wc_status *sstatus)
{
	struct ib_sge rsge = {
		.addr = (uintptr_t)rbuf, .length = 64,
		.lkey = a.pd->local_dma_lkey,
	};
	struct ib_sge ssge = {
		.addr = (uintptr_t)sbuf, .length = 64,
		.lkey = b.pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_id = 300, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.opcode = IB_WR_SEND_WITH_INV, .wr_id = 301, .sg_list = &ssge,
		.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};
	const struct ib_recv_wr *rbad;
	struct ib_wc swc;

	if (ib_post_recv(a.qp, &rwr, &rbad) ||
	    post_and_wait(&b, &swr, &swc))
		return -1;
	*sstatus = swc.status;
	if (wait_wc(a.cq, 300, rwc))
		return -1;
	return rwc->status;
}

static int run(void)
{
	struct scatterlist sg[NPAGES];
	enum ib_wc_status st, sst;
	struct ib_mr *mr, *mr_other;
	enum ib_wc_opcode op;
	u8 *buf, *src, *dst;
	struct ib_wc wc;
	int i, n, nents;
	u32 old;

	buf = kzalloc(BUFLEN, GFP_KERNEL);	/* page aligned: a power of two */
	src = kmalloc(MSGLEN, GFP_KERNEL);
	dst = kzalloc(MSGLEN, GFP_KERNEL);
	if (!buf || !src || !dst)
		return -ENOMEM;
	for (i = 0; i < MSGLEN; i++)
		src[i] = i * 7 + 3;

	check(a.dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS,
	      "IB_DEVICE_MEM_MGT_EXTENSIONS is set");
	check(a.dev->attrs.max_fast_reg_page_list_len >= NPAGES,
	      "max_fast_reg_page_list_len covers the test");
	mr = ib_alloc_mr(a.pd, IB_MR_TYPE_SG_GAPS, NPAGES);
	check(IS_ERR(mr), "alloc_mr of type SG_GAPS is refused");
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	mr = ib_alloc_mr(a.pd, IB_MR_TYPE_MEM_REG, NPAGES);
	check(!IS_ERR(mr), "alloc_mr(MEM_REG, 3 pages)");
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	mr_other = ib_alloc_mr(pd_other, IB_MR_TYPE_MEM_REG, NPAGES);
	if (IS_ERR(mr_other))
		return PTR_ERR(mr_other);

	/* Three pages, the first entered 100 bytes in: a first-byte offset. */
	sg_init_table(sg, NPAGES);
	for (i = 0; i < NPAGES; i++)
		sg_set_buf(&sg[i], buf + i * PAGE_SIZE, PAGE_SIZE);
	sg[0].offset += 100;
	sg[0].length -= 100;
	nents = ib_dma_map_sg(a.dev, sg, NPAGES, DMA_BIDIRECTIONAL);
	n = ib_map_mr_sg(mr, sg, nents, NULL, PAGE_SIZE);
	check(n == nents && mr->length == BUFLEN - 100 &&
	      (mr->iova & ~PAGE_MASK) == 100,
	      "map_mr_sg: all entries, length and first-byte offset");
	ib_map_mr_sg(mr_other, sg, nents, NULL, PAGE_SIZE);

	ib_update_fast_reg_key(mr, 0x5a);
	st = reg(&a, mr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		 IB_ACCESS_REMOTE_READ, &op);
	check(st == IB_WC_SUCCESS && op == IB_WC_REG_MR,
	      "REG_MR completes as IB_WC_REG_MR");
	check((mr->rkey & 0xff) == 0x5a, "the key's low byte is the consumer's");

	st = rdma_op(IB_WR_RDMA_WRITE, src, MSGLEN, mr->iova + 50, mr->rkey);
	check(st == IB_WC_SUCCESS && !memcmp(buf + 150, src, MSGLEN),
	      "peer's RDMA WRITE across the pages lands at iova + 50");
	st = rdma_op(IB_WR_RDMA_READ, dst, MSGLEN, mr->iova + 50, mr->rkey);
	check(st == IB_WC_SUCCESS && !memcmp(dst, src, MSGLEN),
	      "peer's RDMA READ returns it");

	st = rdma_op(IB_WR_RDMA_WRITE, src, 8, mr->iova + mr->length - 4,
		     mr->rkey);
	check(st == IB_WC_REM_ACCESS_ERR, "WRITE past the end: remote access error");
	reconnect();
	st = rdma_op(IB_WR_RDMA_WRITE, src, 8, mr->iova, mr->rkey + 1);
	check(st == IB_WC_REM_ACCESS_ERR, "WRITE with a wrong key byte: remote access error");
	reconnect();

	st = reg(&a, mr, IB_ACCESS_LOCAL_WRITE, NULL);
	check(st == IB_WC_LOC_QP_OP_ERR, "REG_MR of a VALID MR: local QP operation error");
	reconnect();
	st = local_inv(&a, mr->rkey ^ 0x01, NULL);
	check(st == IB_WC_LOC_PROT_ERR, "LOCAL_INV with a wrong key: local protection error");
	reconnect();
	st = local_inv(&a, mr->rkey, &op);
	check(st == IB_WC_SUCCESS && op == IB_WC_LOCAL_INV,
	      "LOCAL_INV completes as IB_WC_LOCAL_INV");
	st = rdma_op(IB_WR_RDMA_WRITE, src, 8, mr->iova, mr->rkey);
	check(st == IB_WC_REM_ACCESS_ERR, "the invalidated rkey fails remotely");
	reconnect();

	/* Registered again under a new key, read-only for the peer. */
	old = mr->rkey;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	st = reg(&a, mr, IB_ACCESS_REMOTE_READ, NULL);
	check(st == IB_WC_SUCCESS && mr->rkey != old, "REG_MR again, a new key");
	st = rdma_op(IB_WR_RDMA_READ, dst, 64, mr->iova, old);
	check(st == IB_WC_REM_ACCESS_ERR, "the old key stays dead");
	reconnect();
	st = rdma_op(IB_WR_RDMA_WRITE, src, 64, mr->iova, mr->rkey);
	check(st == IB_WC_REM_ACCESS_ERR, "WRITE to a read-only registration: remote access error");
	reconnect();

	/* Remote invalidation. */
	st = send_inv(mr->rkey, dst, src, &wc, &sst);
	check(st == IB_WC_SUCCESS && sst == IB_WC_SUCCESS &&
	      (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	      wc.ex.invalidate_rkey == mr->rkey,
	      "SEND_WITH_INV: IB_WC_WITH_INVALIDATE and ex.invalidate_rkey");
	st = rdma_op(IB_WR_RDMA_READ, dst, 64, mr->iova, mr->rkey);
	check(st == IB_WC_REM_ACCESS_ERR, "the remotely invalidated rkey fails");
	reconnect();

	/* A key of another PD may not be invalidated by the peer. */
	ib_update_fast_reg_key(mr, 0x11);
	reg(&a, mr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE, NULL);
	st = send_inv(mr_other->rkey, dst, src, &wc, &sst);
	check(st == IB_WC_REM_INV_REQ_ERR && sst == IB_WC_REM_INV_REQ_ERR,
	      "SEND_WITH_INV of another PD's key: invalid request, both sides");
	reconnect();
	st = reg(&a, mr_other, IB_ACCESS_LOCAL_WRITE, NULL);
	check(st == IB_WC_LOC_PROT_ERR, "REG_MR of another PD's MR: local protection error");
	reconnect();
	st = local_inv(&a, mr->rkey, NULL);
	check(st == IB_WC_SUCCESS, "LOCAL_INV before the next test");
	st = reg(&a, mr, IB_ACCESS_REMOTE_WRITE, NULL);
	check(st == IB_WC_LOC_ACCESS_ERR,
	      "REG_MR with remote write but no local write: local access error");
	reconnect();

	ib_dma_unmap_sg(a.dev, sg, NPAGES, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr_other);
	ib_dereg_mr(mr);
	kfree(buf);
	kfree(src);
	kfree(dst);
	return 0;
}

static void side_free(struct side *s)
{
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	if (s->dev)
		ib_device_put(s->dev);
	memset(s, 0, sizeof(*s));
}

static int __init kfastreg_init(void)
{
	int err;

	err = ib_register_client(&kfastreg_client);
	if (err)
		return err;
	err = side_init(&a, dev_a) ?: side_init(&b, dev_b);
	if (!err) {
		pd_other = ib_alloc_pd(a.dev, 0);
		err = PTR_ERR_OR_ZERO(pd_other);
	}
	if (!err)
		err = reconnect();
	if (err)
		pr_info("kfastreg: set-up failed: %d\n", err);
	else
		err = run();
	if (!IS_ERR_OR_NULL(pd_other))
		ib_dealloc_pd(pd_other);
	side_free(&b);
	side_free(&a);
	ib_unregister_client(&kfastreg_client);
	pr_info("kfastreg: %d checks, %d failed\n", tests, failures);
	if (err)
		return err;
	return failures ? -EIO : -ECANCELED;
}

module_init(kfastreg_init);
MODULE_DESCRIPTION("tbrdma test: fast registration semantics");
MODULE_LICENSE("GPL");
