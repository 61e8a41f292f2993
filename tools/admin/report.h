/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Error and warning messages on stderr, all prefixed "tbrdma: ". */
#ifndef TBRDMA_ADMIN_REPORT_H
#define TBRDMA_ADMIN_REPORT_H

#include "exit_codes.h"

/* Print an error and return @exit_code, for "return tbr_error(...)". */
int tbr_error(int exit_code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tbr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The exit code for a failed system call's errno (positive or negative). */
int tbr_exit_for_errno(int err);

#endif /* TBRDMA_ADMIN_REPORT_H */
