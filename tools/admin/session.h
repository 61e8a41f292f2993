/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the commands that talk to tbrdma devices do first: check the module
 * is loaded, open RDMA netlink, find a device -- with the error message and
 * exit code for each way that fails.
 */
#ifndef TBRDMA_ADMIN_SESSION_H
#define TBRDMA_ADMIN_SESSION_H

#include "device.h"
#include "rdma_nl.h"

/* TBR_EXIT_OK with @nl open, or the exit code after an error message. */
int session_open(struct rdma_nl *nl);
/* Look up tbrdma device @name: TBR_EXIT_OK, or an exit code (and a message). */
int session_device(struct rdma_nl *nl, const char *name,
		   struct tbr_device *dev);

#endif /* TBRDMA_ADMIN_SESSION_H */
