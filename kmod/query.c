// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the device reports about itself.  Limits come from limits.h and are
 * the ones the code enforces; port state and MTU follow the netdev live.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_mad.h>

#include "tbrdma.h"
#include "mtu.h"
#include "speed.h"

int tbr_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		     struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	/* 16 bits each, the layout rdma-core prints as major.minor.sub. */
	attr->fw_ver = (u64)TBR_FW_MAJOR << 32 | TBR_FW_MINOR << 16 | TBR_FW_SUB;
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = TBR_VENDOR_ID;
	attr->vendor_part_id = TBR_VENDOR_PART_ID;
	attr->hw_ver = TBR_HW_VERSION;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_mr_size = TBR_MAX_MR_SIZE;
	attr->max_pd = TBR_MAX_PD;
	attr->max_pkeys = TBR_PKEY_TABLE_LEN;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC;
#ifdef TBR_HAS_ATOMIC_WRITE
	attr->device_cap_flags |= IB_DEVICE_ATOMIC_WRITE;
#endif
	attr->max_fast_reg_page_list_len = TBR_MAX_FAST_REG_PAGES;
	attr->max_qp = TBR_MAX_QP;
	attr->max_qp_wr = TBR_MAX_QP_WR;
	attr->max_send_sge = TBR_MAX_SGE;
	attr->max_recv_sge = TBR_MAX_SGE;
	attr->max_sge_rd = TBR_MAX_SGE;
	attr->max_cq = TBR_MAX_CQ;
	attr->max_cqe = TBR_MAX_CQE;
	attr->max_mr = TBR_MAX_MR;
	attr->max_mw = TBR_MAX_MR;	/* MRs and windows share one key space */
	attr->max_srq = TBR_MAX_SRQ;
	attr->max_srq_wr = TBR_MAX_SRQ_WR;
	attr->max_srq_sge = TBR_MAX_SGE;
	attr->max_ah = TBR_MAX_AH;
	attr->max_qp_rd_atom = TBR_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = TBR_MAX_RD_ATOM;
	attr->max_res_rd_atom = TBR_MAX_RD_ATOM * TBR_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	/*
	 * Completion timestamps are CLOCK_MONOTONIC in ns, 64 bits: a
	 * 1 GHz "core clock" (in kHz) makes one tick one nanosecond.
	 */
	attr->timestamp_mask = U64_MAX;
	attr->hca_core_clock = 1000000;
	/* `rdma link delete` is how an administrator removes our devices. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}

/*
 * The link's speed as ethtool reports it, in Mb/s, or 0 when it reports
 * none (thunderbolt-net, lo).  Unlike ib_get_eth_speed() this stays quiet:
 * query_port runs often and an unknown speed is normal for our links.
 */
static unsigned int tbr_netdev_speed_mbps(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;
	unsigned int mbps = 0;

	rtnl_lock();
	if (ndev->reg_state == NETREG_REGISTERED &&
	    !__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN)
		mbps = ks.base.speed;
	rtnl_unlock();
	return mbps;
}

static void tbr_query_speed(struct tbr_dev *tdev, struct ib_port_attr *attr)
{
	struct tbr_ib_rate rate;

	/* Loopback moves data by memory copy: report the fastest rate. */
	if (tdev->mode == TBRDMA_MODE_LOOPBACK)
		rate = tbr_ib_rate_for_mbps(~0U);
	else
		rate = tbr_ib_rate_for_mbps(tbr_netdev_speed_mbps(tdev->ndev));
	attr->active_speed = rate.speed;
	attr->active_width = rate.width;
}

int tbr_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *attr)
{
	struct tbr_dev *tdev = to_tdev(ibdev);
	struct net_device *ndev = tdev->ndev;
	unsigned int mtu = tbr_ib_mtu_for_netdev_mtu(READ_ONCE(ndev->mtu));

	/* The core zeroes *attr before calling us. */
	attr->max_mtu = ib_mtu_int_to_enum(TBR_IB_MTU_MAX);
	attr->active_mtu = ib_mtu_int_to_enum(mtu ? mtu : TBR_IB_MTU_MIN);
	attr->gid_tbl_len = TBR_GID_TABLE_LEN;
	attr->pkey_tbl_len = TBR_PKEY_TABLE_LEN;
	attr->max_msg_sz = TBR_MAX_MSG_SIZE;
	/* uverbs turns this into the IP_BASED_GIDS port capability. */
	attr->ip_gids = true;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_vl_num = 1;

	if (mtu && tbr_netdev_port_active(ndev)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	tbr_query_speed(tdev, attr);
	return 0;
}

/*
 * A loopback device runs the GSI QP (QP1) for the MAD layer and RDMA CM.
 * A netdev device cannot carry it until the network transport exists, so
 * it must not claim MAD support (the MAD layer would try to create QP1);
 * RoCEv2 addressing alone already gives the GID table and Ethernet AHs.
 */
int tbr_get_port_immutable(struct ib_device *ibdev, u32 port,
			   struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;

	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	/* RoCEv2 addressing, GSI and CM: RDMA CM works as over RoCE. */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

int tbr_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= TBR_PKEY_TABLE_LEN)
		return -EINVAL;
	*pkey = TBR_DEFAULT_PKEY;
	return 0;
}

enum rdma_link_layer tbr_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

void tbr_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", TBR_FW_MAJOR,
		 TBR_FW_MINOR, TBR_FW_SUB);
}
