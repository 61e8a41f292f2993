// SPDX-License-Identifier: GPL-2.0-only
/*
 * A device going away under the processes that use it.
 *
 * However it goes (its netdev deleted or the cable pulled, `rdma link
 * delete`, rmmod), the core does not wait for the processes that have it
 * open: it disassociates them (ucontext.c) and destroys their objects for
 * them.  A process that only polls its CQ ring would then wait for ever for
 * the completions of requests that died with the device.  So first every
 * user QP goes to the error state and both its queues are flushed to the
 * rings, each outstanding request completing with IB_WC_WR_FLUSH_ERR.
 *
 * The hook is an ib_client's remove callback: the core calls those while it
 * unregisters the device, in the reverse order of the clients'
 * registration, and this module depends on ib_uverbs (for ib_umem_get), so
 * ours runs before uverbs' disassociates anything.  Kernel consumers' QPs
 * are left to them: their own clients' remove callbacks destroy them.
 */
#include <linux/module.h>

#include "tbrdma.h"

static int tbr_removal_add(struct ib_device *ibdev)
{
	/* Only our devices: for any other, an error means no remove call. */
	return ibdev->ops.owner == THIS_MODULE ? 0 : -EOPNOTSUPP;
}

static void tbr_removal_flush(struct tbr_qp *qp)
{
	if (!tbr_qp_ucontext(qp) || READ_ONCE(qp->state) == IB_QPS_RESET)
		return;
	tbr_qp_set_error(qp);	/* flushes the receive side */
	/* The send side flushes in its engine: run it now. */
	tbr_tx_kick(qp);
	flush_work(&qp->tx_work);
}

static void tbr_removal_remove(struct ib_device *ibdev, void *client_data)
{
	tbr_qp_for_each(to_tdev(ibdev), tbr_removal_flush);
}

static struct ib_client tbr_removal_client = {
	.name = "tbrdma-removal",
	.add = tbr_removal_add,
	.remove = tbr_removal_remove,
};

/* Before the first device registers, so every device gets the hook. */
int tbr_removal_init(void)
{
	return ib_register_client(&tbr_removal_client);
}

/* After the last device is gone (ours would be flushed again otherwise). */
void tbr_removal_exit(void)
{
	ib_unregister_client(&tbr_removal_client);
}
