/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Will libibverbs find the tbrdma provider?  It loads a provider for every
 * "driver NAME" line in /etc/libibverbs.d/ *.driver: a bare name from its
 * own directory (lib<NAME>-rdmav<N>.so, N its private ABI: 34 for rdma-core
 * 44 to 56, 65 for 65), an absolute path as given plus "-rdmav<N>.so";
 * RDMAV_DRIVERS in the environment adds more.  A device
 * without its provider is invisible to ibv_devices.
 */
#ifndef TBRDMA_ADMIN_PROVIDER_CHECK_H
#define TBRDMA_ADMIN_PROVIDER_CHECK_H

#include <stdbool.h>

#include "sysfs.h"

struct provider_check {
	char driver_file[TBR_PATH_MAX];	/* "" if no .driver file names tbrdma */
	char library[TBR_PATH_MAX];	/* the library that file points at */
	bool library_exists;
	char rdmav_drivers[TBR_PATH_MAX];	/* $RDMAV_DRIVERS, "" if unset */
};

void provider_check(struct provider_check *pc);
/* Usable: a driver file pointing at an existing library, or RDMAV_DRIVERS. */
bool provider_found(const struct provider_check *pc);

#endif /* TBRDMA_ADMIN_PROVIDER_CHECK_H */
