/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device matching that does not depend on libibverbs, so host unit tests
 * can run it against a fake sysfs tree (tests/unit/test_provider_match.c).
 */
#ifndef TBRDMA_MATCH_H
#define TBRDMA_MATCH_H

#include <stddef.h>

enum tbrdma_match_result {
	TBRDMA_MATCH_OK = 0,		/* attribute present, our ABI version */
	TBRDMA_MATCH_NO_ATTR,		/* not a tbrdma device (or unreadable) */
	TBRDMA_MATCH_BAD_FORMAT,	/* empty, not a decimal number, too long */
	TBRDMA_MATCH_WRONG_VERSION,	/* a tbrdma kernel with another ABI */
};

/*
 * Decide whether the ib device whose sysfs directory is ibdev_dir
 * (".../class/infiniband/<name>") is driven by a tbrdma kernel module of
 * the ABI this provider was built for.  *version (may be NULL) receives the
 * parsed value when the attribute is well formed.
 */
enum tbrdma_match_result tbrdma_match_ibdev_dir(const char *ibdev_dir,
						unsigned long *version);

/*
 * Resolve the sysfs directory of an ib device into buf: ibdev_path when
 * libibverbs filled it, otherwise <sysfs_root>/class/infiniband/<ibdev_name>.
 * Returns 0, or -1 when nothing usable is given or buf is too small.
 */
int tbrdma_ibdev_dir(char *buf, size_t size, const char *ibdev_path,
		     const char *sysfs_root, const char *ibdev_name);

#endif /* TBRDMA_MATCH_H */
