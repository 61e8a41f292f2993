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

static int tbr_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct tbr_dev *tdev;

	mutex_lock(&tbr_devices_lock);
	tdev = tbr_dev_find_by_netdev_locked(ndev);
	if (!tdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Not inline: unregistering waits for users, and we hold RTNL. */
		ib_unregister_device_queued(&tdev->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		tbr_port_event(tdev, tbr_netdev_port_active(ndev) ?
				     IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
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
