// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "report.h"

static void vreport(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "tbrdma: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int tbr_error(int exit_code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("", fmt, ap);
	va_end(ap);
	return exit_code;
}

void tbr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

int tbr_exit_for_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EPERM:
	case EACCES:
		return TBR_EXIT_PERMISSION;
	case ENODEV:
		return TBR_EXIT_NO_DEVICE;
	default:
		return TBR_EXIT_FAILURE;
	}
}
