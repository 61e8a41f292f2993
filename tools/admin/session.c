// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "report.h"
#include "session.h"
#include "sysfs.h"

int session_open(struct rdma_nl *nl)
{
	int err;

	if (!tbr_module_loaded())
		return tbr_error(TBR_EXIT_NO_MODULE,
				 "the tbrdma kernel module is not loaded (modprobe tbrdma)");
	err = rdma_nl_open(nl);
	if (err == -EPROTONOSUPPORT)
		return tbr_error(TBR_EXIT_NO_MODULE,
				 "the kernel has no RDMA netlink: is ib_core loaded?");
	if (err)
		return tbr_error(tbr_exit_for_errno(err),
				 "cannot open RDMA netlink: %s", strerror(-err));
	return TBR_EXIT_OK;
}

int session_device(struct rdma_nl *nl, const char *name,
		   struct tbr_device *dev)
{
	int err = tbr_device_get(nl, name, dev);

	switch (err) {
	case 0:
		return TBR_EXIT_OK;
	case -ENODEV:
		return tbr_error(TBR_EXIT_NO_DEVICE, "no RDMA device named %s",
				 name);
	case -EMEDIUMTYPE:
		return tbr_error(TBR_EXIT_NO_DEVICE,
				 "%s is not a tbrdma device", name);
	default:
		return tbr_error(tbr_exit_for_errno(err), "%s: %s", name,
				 strerror(-err));
	}
}
