// SPDX-License-Identifier: GPL-2.0-only
/*
 * Following the attached netdev: its up/down and carrier changes become port
 * events, and its disappearance (veth deleted, Thunderbolt cable pulled)
 * removes the RDMA device, which holds a reference on it.
 */
#include <linux/netdevice.h>

#include "tbrdma.h"

bool tbr_netdev_port_active(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev);
}

static void tbr_port_event(struct tbr_dev *tdev, enum ib_event_type type)
{
	struct ib_event event = {
		.device = &tdev->ibdev,
		.element.port_num = TBR_PORT,
		.event = type,
	};

	ib_dispatch_event(&event);
}

/*
 * The cable is gone: connected QPs can reach nobody, so they fail now
 * with flush completions instead of each waiting out its retries (a QP
 * with only receives posted would wait for ever).
 */
static void tbr_fail_if_connected(struct tbr_qp *qp)
{
	if (!tbr_qp_is_datagram(qp) &&
	    READ_ONCE(qp->state) != IB_QPS_RESET &&
	    READ_ONCE(qp->state) != IB_QPS_INIT) {
		tbr_qp_event(qp, IB_EVENT_QP_FATAL);
		tbr_qp_set_error(qp);
	}
}

static void tbr_fail_connected_qps(struct tbr_dev *tdev)
{
	tbr_qp_for_each(tdev, tbr_fail_if_connected);
}

static int tbr_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct tbr_dev *tdev;

	if (event == NETDEV_REGISTER)
		tbr_tbt_netdev_registered(ndev);

	mutex_lock(&tbr_devices_lock);
	tdev = tbr_dev_find_by_netdev_locked(ndev);
	if (!tdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * Not inline: unregistering waits for users, and we hold RTNL.
		 * Only a registered device not yet going away (the event comes
		 * again while the netdev waits for its references): one still
		 * registering is removed by tbr_dev_add() itself.
		 */
		if (ib_device_try_get(&tdev->ibdev)) {
			/* Users polling their rings learn it from flushes. */
			tbr_fail_connected_qps(tdev);
			ib_unregister_device_queued(&tdev->ibdev);
			ib_device_put(&tdev->ibdev);
		}
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		if (tbr_netdev_port_active(ndev)) {
			tbr_port_event(tdev, IB_EVENT_PORT_ACTIVE);
			break;
		}
		tbr_port_event(tdev, IB_EVENT_PORT_ERR);
		if (tdev->mode == TBRDMA_MODE_NETDEV)
			tbr_fail_connected_qps(tdev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&tbr_devices_lock);
	return NOTIFY_DONE;
}

static struct notifier_block tbr_netdev_notifier = {
	.notifier_call = tbr_netdev_event,
};

int tbr_netdev_events_init(void)
{
	return register_netdevice_notifier(&tbr_netdev_notifier);
}

void tbr_netdev_events_exit(void)
{
	unregister_netdevice_notifier(&tbr_netdev_notifier);
}
