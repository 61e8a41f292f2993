// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun: logging, fatal errors, allocation and clocks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int tp_log_rank = -1;
int tp_verbose;

static void vlog(const char *fmt, va_list ap)
{
	char buf[1024];
	size_t n;

	if (tp_log_rank >= 0)
		n = (size_t)snprintf(buf, sizeof(buf), "tprun[rank %d]: ",
				     tp_log_rank);
	else
		n = (size_t)snprintf(buf, sizeof(buf), "tprun: ");
	if (n < sizeof(buf))
		vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	n = strlen(buf);
	if (n + 1 < sizeof(buf)) {
		buf[n++] = '\n';
		buf[n] = 0;
	}
	/* One write: lines of several ranks do not interleave. */
	if (write(STDERR_FILENO, buf, n) < 0)
		return;
}

void tp_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void tp_info(const char *fmt, ...)
{
	va_list ap;

	if (!tp_verbose)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void tp_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
	exit(TP_EXIT_FAIL);
}

void *tp_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		tp_die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *tp_alloc_pages(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, bytes ? bytes : 1))
		tp_die("out of memory (%zu bytes)", bytes);
	memset(p, 0, bytes);
	return p;
}

char *tp_strdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		tp_die("out of memory");
	return d;
}

uint64_t tp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tp_appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*pos += (size_t)n;
	if (*pos >= len)
		*pos = len - 1;
}
