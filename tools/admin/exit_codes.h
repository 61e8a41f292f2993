/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exit codes of the tbrdma tool, one per kind of failure, so scripts can
 * tell "fix the command line" from "load the module" from "run as root".
 * Documented in tbrdma(8); the guest selftests check each one.
 */
#ifndef TBRDMA_ADMIN_EXIT_CODES_H
#define TBRDMA_ADMIN_EXIT_CODES_H

enum tbr_exit {
	TBR_EXIT_OK = 0,
	TBR_EXIT_USAGE = 1,		/* bad command line */
	TBR_EXIT_NO_DEVICE = 2,		/* no such RDMA device or netdev */
	TBR_EXIT_NO_MODULE = 3,		/* tbrdma (or the RDMA core) not loaded */
	TBR_EXIT_PERMISSION = 4,	/* needs root (CAP_NET_ADMIN, /etc) */
	TBR_EXIT_FAILURE = 5,		/* anything else the system refused */
};

#endif /* TBRDMA_ADMIN_EXIT_CODES_H */
