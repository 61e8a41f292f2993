// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <stdio.h>
#include <string.h>

#include "rtnl.h"
#include "sysfs.h"

/* libnl reports its own error numbers; the ones that matter here. */
static int errno_from_nl(int nlerr)
{
	switch (-nlerr) {
	case NLE_OBJ_NOTFOUND:
	case NLE_NODEV:
		return -ENODEV;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOMEM:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

int netdev_lookup(const char *name, struct netdev_info *info)
{
	struct rtnl_link *link = NULL;
	struct nl_sock *sk;
	struct nl_addr *addr;
	unsigned int flags;
	const char *kind;
	int err;

	if (strlen(name) >= IF_NAMESIZE)
		return -ENODEV;
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err < 0) {
		err = errno_from_nl(err);
		goto out;
	}
	err = rtnl_link_get_kernel(sk, 0, name, &link);
	if (err < 0) {
		err = errno_from_nl(err);
		goto out;
	}

	memset(info, 0, sizeof(*info));
	info->ifindex = rtnl_link_get_ifindex(link);
	snprintf(info->name, sizeof(info->name), "%s",
		 rtnl_link_get_name(link));
	info->mtu = rtnl_link_get_mtu(link);
	flags = rtnl_link_get_flags(link);
	info->admin_up = flags & IFF_UP;
	info->carrier = rtnl_link_get_carrier(link);
	info->loopback = flags & IFF_LOOPBACK;
	rtnl_link_operstate2str(rtnl_link_get_operstate(link), info->operstate,
				sizeof(info->operstate));
	kind = rtnl_link_get_type(link);
	snprintf(info->kind, sizeof(info->kind), "%s", kind ? kind : "");
	addr = rtnl_link_get_addr(link);
	if (addr)
		nl_addr2str(addr, info->address, sizeof(info->address));
	err = 0;
out:
	if (link)
		rtnl_link_put(link);
	nl_socket_free(sk);
	return err;
}

void netdev_driver(const struct netdev_info *info, char *buf, size_t size)
{
	if (!tbr_sysfs_link_name(buf, size, "class/net/%s/device/driver",
				 info->name))
		return;
	if (info->kind[0])
		snprintf(buf, size, "%s", info->kind);
	else if (info->loopback)
		snprintf(buf, size, "loopback");
	else if (size)
		buf[0] = '\0';
}
