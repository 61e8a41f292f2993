// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-device sysfs attributes.  The provider identifies our devices by
 * tbrdma_abi_version (names can be changed by udev), and admin tools read
 * the mode without opening the device.
 */
#include <linux/sysfs.h>

#include "tbrdma.h"

static ssize_t tbrdma_abi_version_show(struct device *device,
				       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", TBRDMA_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(tbrdma_abi_version);

static ssize_t tbrdma_mode_show(struct device *device,
				struct device_attribute *attr, char *buf)
{
	struct tbr_dev *tdev = rdma_device_to_drv_device(device, struct tbr_dev,
							 ibdev);

	return sysfs_emit(buf, "%s\n", tdev->mode == TBRDMA_MODE_LOOPBACK ?
				       TBRDMA_MODE_LOOPBACK_NAME :
				       TBRDMA_MODE_NETDEV_NAME);
}
static DEVICE_ATTR_RO(tbrdma_mode);

/* The peers frames came from: "MAC RX_PACKETS MS_AGO", most recent first. */
static ssize_t tbrdma_peers_show(struct device *device,
				 struct device_attribute *attr, char *buf)
{
	struct tbr_dev *tdev = rdma_device_to_drv_device(device, struct tbr_dev,
							 ibdev);

	return tbr_peers_show(tdev, buf);
}
static DEVICE_ATTR_RO(tbrdma_peers);

static struct attribute *tbr_dev_attrs[] = {
	&dev_attr_tbrdma_abi_version.attr,
	&dev_attr_tbrdma_mode.attr,
	&dev_attr_tbrdma_peers.attr,
	NULL,
};

const struct attribute_group tbr_dev_attr_group = {
	.attrs = tbr_dev_attrs,
};
