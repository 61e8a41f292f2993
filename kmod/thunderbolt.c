// SPDX-License-Identifier: GPL-2.0-only
/*
 * Thunderbolt auto-attach, opt-in: with the module parameter
 * thunderbolt_attach=Y every thunderbolt-net netdev gets an RDMA device
 * "tbr%d", whether it exists when the parameter is switched on (or at load
 * time) or registers later (a cable plugged in).  Off by default: exposing
 * memory to whatever is plugged into a port is an administrator's decision.
 * Switching it off stops new attachments; existing devices stay until their
 * netdev goes away (netdev.c) or `rdma link delete`.  Switching it on again,
 * or writing Y again, attaches every thunderbolt-net netdev without one.
 *
 * Netdev notifiers run under RTNL, and registering an RDMA device takes RTNL
 * (the GID cache, the core's clients), so attaching is deferred to tbr_wq:
 * a request holds a reference on its netdev until the work has run.
 */
#include <linux/device.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>

#include "tbrdma.h"
#include "tbt_match.h"

static bool tbr_tbt_attach;

/* Requests may be queued (tbr_tbt_start to tbr_tbt_stop); written under RTNL. */
static bool tbr_tbt_running;

struct tbr_tbt_req {
	struct list_head list;
	struct net_device *ndev;
	netdevice_tracker tracker;
};

static LIST_HEAD(tbr_tbt_reqs);
static DEFINE_SPINLOCK(tbr_tbt_reqs_lock);	/* guards tbr_tbt_reqs */

static void tbr_tbt_work_fn(struct work_struct *work);
static DECLARE_WORK(tbr_tbt_work, tbr_tbt_work_fn);

/*
 * drivers/net/thunderbolt.c makes the tb_service its netdev's parent.  Under
 * RTNL a registered netdev's parent stays bound: its driver unregisters the
 * netdev (taking RTNL) before the driver core unbinds it.
 */
bool tbr_tbt_is_thunderbolt(struct net_device *ndev)
{
	struct device *parent = ndev->dev.parent;
	struct device_driver *drv;

	if (!parent)
		return false;
	drv = READ_ONCE(parent->driver);
	return drv && tbr_tbt_driver_match(drv->name);
}

static bool tbr_tbt_queued_locked(struct net_device *ndev)
{
	struct tbr_tbt_req *req;

	lockdep_assert_held(&tbr_tbt_reqs_lock);
	list_for_each_entry(req, &tbr_tbt_reqs, list)
		if (req->ndev == ndev)
			return true;
	return false;
}

/*
 * A netdev registered (RTNL held): queue its attachment if it is a
 * Thunderbolt link and auto-attach is on.
 */
void tbr_tbt_netdev_registered(struct net_device *ndev)
{
	struct tbr_tbt_req *req;
	bool queued;

	ASSERT_RTNL();
	if (!tbr_tbt_running || !READ_ONCE(tbr_tbt_attach) ||
	    !tbr_tbt_is_thunderbolt(ndev))
		return;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return;
	req->ndev = ndev;

	spin_lock(&tbr_tbt_reqs_lock);
	queued = tbr_tbt_queued_locked(ndev);
	if (!queued) {
		netdev_hold(ndev, &req->tracker, GFP_ATOMIC);
		list_add_tail(&req->list, &tbr_tbt_reqs);
	}
	spin_unlock(&tbr_tbt_reqs_lock);

	if (queued)
		kfree(req);
	else
		queue_work(tbr_wq, &tbr_tbt_work);
}

/* Every netdev in every namespace, as if each had just registered. */
static void tbr_tbt_scan(void)
{
	struct net_device *ndev;
	struct net *net;

	/* Not before tbr_tbt_start(): parameters are set at load time too. */
	if (!READ_ONCE(tbr_tbt_running))
		return;
	rtnl_lock();
	if (tbr_tbt_running) {
		down_read(&net_rwsem);
		for_each_net(net)
			for_each_netdev(net, ndev)
				tbr_tbt_netdev_registered(ndev);
		up_read(&net_rwsem);
	}
	rtnl_unlock();
}

static void tbr_tbt_attach_one(struct net_device *ndev)
{
	int err;

	/*
	 * Switched off meanwhile, or the cable pulled already: a stale answer
	 * only costs a device that tbr_dev_add() removes again.
	 */
	if (!READ_ONCE(tbr_tbt_attach) ||
	    READ_ONCE(ndev->reg_state) != NETREG_REGISTERED)
		return;

	err = tbr_dev_add("tbr%d", ndev);
	switch (err) {
	case 0:
		netdev_info(ndev, "tbrdma: RDMA device attached (thunderbolt_attach)\n");
		break;
	case -EEXIST:	/* `rdma link add` was first, or a rescan */
	case -ENODEV:	/* unplugged while we attached */
		break;
	default:
		netdev_warn(ndev, "tbrdma: cannot attach an RDMA device: %d\n",
			    err);
		break;
	}
}

static void tbr_tbt_work_fn(struct work_struct *work)
{
	struct tbr_tbt_req *req;

	for (;;) {
		spin_lock(&tbr_tbt_reqs_lock);
		req = list_first_entry_or_null(&tbr_tbt_reqs,
					       struct tbr_tbt_req, list);
		if (req)
			list_del(&req->list);
		spin_unlock(&tbr_tbt_reqs_lock);
		if (!req)
			return;

		tbr_tbt_attach_one(req->ndev);
		netdev_put(req->ndev, &req->tracker);
		kfree(req);
	}
}

/* Module init, once everything else runs: attach what exists already. */
void tbr_tbt_start(void)
{
	rtnl_lock();
	WRITE_ONCE(tbr_tbt_running, true);
	rtnl_unlock();
	if (READ_ONCE(tbr_tbt_attach))
		tbr_tbt_scan();
}

/* Module exit, before the devices are removed: no attachment from now on. */
void tbr_tbt_stop(void)
{
	struct tbr_tbt_req *req, *tmp;

	rtnl_lock();
	WRITE_ONCE(tbr_tbt_running, false);
	rtnl_unlock();

	cancel_work_sync(&tbr_tbt_work);
	/* Nobody queues any more and the work has stopped: drop the rest. */
	list_for_each_entry_safe(req, tmp, &tbr_tbt_reqs, list) {
		list_del(&req->list);
		netdev_put(req->ndev, &req->tracker);
		kfree(req);
	}
}

/* A write takes effect at once: switching on attaches what exists. */
static int tbr_tbt_param_set(const char *val, const struct kernel_param *kp)
{
	int err;

	err = param_set_bool(val, kp);
	if (!err && READ_ONCE(tbr_tbt_attach))
		tbr_tbt_scan();
	return err;
}

static const struct kernel_param_ops tbr_tbt_param_ops = {
	.flags = KERNEL_PARAM_OPS_FL_NOARG,
	.set = tbr_tbt_param_set,
	.get = param_get_bool,
};

module_param_cb(thunderbolt_attach, &tbr_tbt_param_ops, &tbr_tbt_attach,
		0644);
MODULE_PARM_DESC(thunderbolt_attach,
		 "Create an RDMA device tbr<N> for every thunderbolt-net netdev, present and future (default: no; switching off keeps existing devices)");
