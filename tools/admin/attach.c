// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tbrdma attach NETDEV [NAME]` and `tbrdma detach NAME`: the same RDMA
 * netlink requests as `rdma link add NAME type tbrdma netdev NETDEV` and
 * `rdma link delete NAME`, with errors that say what to do.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/tbrdma-abi.h"

#include "commands.h"
#include "device.h"
#include "report.h"
#include "rtnl.h"
#include "session.h"
#include "sysfs.h"

static bool ibdev_exists(const char *name)
{
	return tbr_sysfs_exists("class/infiniband/%s", name);
}

/* The first free "tbrlo<N>" (on lo) or "tbr<N>" (on a real link). */
static int default_name(const struct netdev_info *nd, char *buf, size_t size)
{
	const char *prefix = nd->loopback ? "tbrlo" : "tbr";
	int i;

	for (i = 0; i < 1000; i++) {
		snprintf(buf, size, "%s%d", prefix, i);
		if (!ibdev_exists(buf))
			return 0;
	}
	return -ENFILE;
}

/* Which tbrdma device, if any, already sits on @netdev. */
static bool device_on_netdev(const char *netdev, char *name, size_t size)
{
	struct tbr_device *devs = NULL;
	struct rdma_nl nl;
	size_t n = 0, i;
	bool found = false;

	if (rdma_nl_open(&nl))
		return false;
	if (!tbr_devices_list(&nl, &devs, &n)) {
		for (i = 0; i < n && !found; i++) {
			if (devs[i].port.has_netdev &&
			    !strcmp(devs[i].port.netdev, netdev)) {
				snprintf(name, size, "%s", devs[i].nl.name);
				found = true;
			}
		}
	}
	free(devs);
	rdma_nl_close(&nl);
	return found;
}

static int link_add_error(int err, const char *name, const char *netdev)
{
	char other[RDMA_DEV_NAME_MAX];

	switch (-err) {
	case EPERM:
	case EACCES:
		return tbr_error(TBR_EXIT_PERMISSION,
				 "permission denied: attaching needs root (CAP_NET_ADMIN)");
	case ENODEV:
		return tbr_error(TBR_EXIT_NO_DEVICE,
				 "no network interface named %s", netdev);
	case ENFILE:
		return tbr_error(TBR_EXIT_FAILURE,
				 "an RDMA device named %s already exists", name);
	case EEXIST:
		if (device_on_netdev(netdev, other, sizeof(other)))
			return tbr_error(TBR_EXIT_FAILURE,
					 "%s already has tbrdma device %s",
					 netdev, other);
		return tbr_error(TBR_EXIT_FAILURE,
				 "%s already has a tbrdma device", netdev);
	case EINVAL:
		/* The core answers EINVAL when no module serves the type. */
		if (!tbr_module_loaded())
			return tbr_error(TBR_EXIT_NO_MODULE,
					 "the tbrdma kernel module is not loaded and could not be loaded (modprobe tbrdma; is it installed?)");
		return tbr_error(TBR_EXIT_FAILURE,
				 "the kernel refused %s on %s: tbrdma attaches to Ethernet-type interfaces and lo",
				 name, netdev);
	default:
		return tbr_error(tbr_exit_for_errno(err),
				 "attaching %s to %s: %s", name, netdev,
				 strerror(-err));
	}
}

static const struct option write_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Options of attach/detach: only --help.  -1 to go on, else an exit code. */
static int parse_write_options(int argc, char **argv, const char *command,
			       int min_args, int max_args)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "h", write_options, NULL)) !=
	       -1) {
		if (opt == 'h') {
			print_usage(command, false);
			return TBR_EXIT_OK;
		}
		print_usage(command, true);
		return TBR_EXIT_USAGE;
	}
	if (argc - optind < min_args || argc - optind > max_args) {
		print_usage(command, true);
		return TBR_EXIT_USAGE;
	}
	return -1;
}

int cmd_attach(int argc, char **argv, const struct global_opts *g)
{
	char name[RDMA_DEV_NAME_MAX], mode[16];
	struct netdev_info nd;
	struct rdma_nl nl;
	const char *netdev;
	int rc, err;

	(void)g;
	rc = parse_write_options(argc, argv, "attach", 1, 2);
	if (rc >= 0)
		return rc;
	netdev = argv[optind];

	err = netdev_lookup(netdev, &nd);
	if (err == -ENODEV)
		return tbr_error(TBR_EXIT_NO_DEVICE,
				 "no network interface named %s", netdev);
	if (err)
		return tbr_error(tbr_exit_for_errno(err), "%s: %s", netdev,
				 strerror(-err));

	if (optind + 1 < argc) {
		if (strlen(argv[optind + 1]) >= sizeof(name) ||
		    strpbrk(argv[optind + 1], "%/ ") || !argv[optind + 1][0])
			return tbr_error(TBR_EXIT_USAGE,
					 "'%s' cannot be an RDMA device name (up to %zu characters, no '%%', '/' or spaces)",
					 argv[optind + 1], sizeof(name) - 1);
		snprintf(name, sizeof(name), "%s", argv[optind + 1]);
		if (ibdev_exists(name))
			return tbr_error(TBR_EXIT_FAILURE,
					 "an RDMA device named %s already exists",
					 name);
	} else if (default_name(&nd, name, sizeof(name))) {
		return tbr_error(TBR_EXIT_FAILURE, "no free device name");
	}

	err = rdma_nl_open(&nl);
	if (err == -EPROTONOSUPPORT)
		return tbr_error(TBR_EXIT_NO_MODULE,
				 "the kernel has no RDMA netlink: is ib_core loaded?");
	if (err)
		return tbr_error(tbr_exit_for_errno(err),
				 "cannot open RDMA netlink: %s", strerror(-err));
	err = rdma_nl_link_add(&nl, name, TBRDMA_DRIVER_NAME, netdev);
	rdma_nl_close(&nl);
	if (err)
		return link_add_error(err, name, netdev);

	if (tbr_sysfs_read(mode, sizeof(mode),
			   "class/infiniband/%s/" TBRDMA_SYSFS_MODE_ATTR, name))
		snprintf(mode, sizeof(mode), "unknown");
	printf("%s: attached to %s (%s mode)\n", name, netdev, mode);
	return TBR_EXIT_OK;
}

int cmd_detach(int argc, char **argv, const struct global_opts *g)
{
	struct tbr_device dev;
	struct rdma_nl nl;
	const char *name;
	int rc, err;

	(void)g;
	rc = parse_write_options(argc, argv, "detach", 1, 1);
	if (rc >= 0)
		return rc;
	name = argv[optind];

	rc = session_open(&nl);
	if (rc)
		return rc;
	rc = session_device(&nl, name, &dev);
	if (!rc) {
		err = rdma_nl_link_del(&nl, dev.nl.index);
		if (err == -EPERM || err == -EACCES)
			rc = tbr_error(TBR_EXIT_PERMISSION,
				       "permission denied: detaching needs root (CAP_NET_ADMIN)");
		else if (err)
			rc = tbr_error(tbr_exit_for_errno(err),
				       "detaching %s: %s", name, strerror(-err));
		else
			printf("%s: detached from %s\n", name,
			       dev.port.has_netdev ? dev.port.netdev : "its netdev");
	}
	rdma_nl_close(&nl);
	return rc;
}
