// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Recognise tbrdma devices by a sysfs attribute rather than by name.
 *
 * The kernel module registers with driver_id RDMA_DRIVER_UNKNOWN (it is
 * out of tree), so libibverbs cannot match it by driver id, and udev may
 * rename the device, so its name proves nothing.  Instead the module
 * publishes <ibdev>/TBRDMA_SYSFS_ABI_ATTR containing its ABI version in
 * decimal plus "\n"; a device matches only if that file exists and holds
 * exactly our TBRDMA_UVERBS_ABI_VERSION.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../uapi/tbrdma-abi.h"
#include "match.h"

/* Big enough for any sane version; a longer file is rejected, not cut. */
#define ABI_ATTR_MAX 32

/* Strict parse: one or more decimal digits, optionally one trailing "\n".
 * Anything else (sign, spaces, hex, trailing junk) means the file was not
 * written by our kernel module. */
static int parse_version(const char *buf, size_t len, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -1;
		if (v > (~0UL - 9) / 10)	/* would overflow */
			return -1;
		v = v * 10 + (unsigned long)(buf[i] - '0');
	}
	*out = v;
	return 0;
}

enum tbrdma_match_result tbrdma_match_ibdev_dir(const char *ibdev_dir,
						unsigned long *version)
{
	char path[4096];
	char buf[ABI_ATTR_MAX + 1];
	unsigned long v;
	ssize_t len;
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", ibdev_dir,
		     TBRDMA_SYSFS_ABI_ATTR);
	if (n < 0 || (size_t)n >= sizeof(path))
		return TBRDMA_MATCH_NO_ATTR;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return TBRDMA_MATCH_NO_ATTR;
	/* sysfs hands out a whole attribute in one read. */
	do {
		len = read(fd, buf, sizeof(buf));
	} while (len < 0 && errno == EINTR);
	close(fd);

	if (len < 0)	/* e.g. EISDIR: not an attribute file */
		return TBRDMA_MATCH_NO_ATTR;
	if ((size_t)len > ABI_ATTR_MAX || parse_version(buf, (size_t)len, &v))
		return TBRDMA_MATCH_BAD_FORMAT;
	if (version)
		*version = v;
	return v == TBRDMA_UVERBS_ABI_VERSION ? TBRDMA_MATCH_OK :
						TBRDMA_MATCH_WRONG_VERSION;
}

int tbrdma_ibdev_dir(char *buf, size_t size, const char *ibdev_path,
		     const char *sysfs_root, const char *ibdev_name)
{
	int n;

	if (!size)
		return -1;
	if (ibdev_path && ibdev_path[0])
		n = snprintf(buf, size, "%s", ibdev_path);
	else if (sysfs_root && ibdev_name && ibdev_name[0] &&
		 !strchr(ibdev_name, '/'))
		n = snprintf(buf, size, "%s/class/infiniband/%s", sysfs_root,
			     ibdev_name);
	else
		return -1;
	if (n < 0 || (size_t)n >= size)
		return -1;
	return 0;
}
