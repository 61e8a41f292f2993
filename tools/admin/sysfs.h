/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading the kernel's files under a root directory that tests can move:
 * sysfs under $TBRDMA_SYSFS_ROOT/sys, configuration under $TBRDMA_ETC_ROOT/etc
 * (both default to "/").  Every sysfs access of the tool goes through here,
 * so the Thunderbolt link checks run unchanged on a fake tree.
 */
#ifndef TBRDMA_ADMIN_SYSFS_H
#define TBRDMA_ADMIN_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#define TBR_PATH_MAX 4096

/* The roots without a trailing slash ("" for the real one). */
const char *tbr_sysfs_root(void);
const char *tbr_etc_root(void);

/* "<sysfs root>/sys/<fmt...>" into @buf; -ENAMETOOLONG if it does not fit. */
int tbr_sysfs_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "<etc root>/etc/<fmt...>" */
int tbr_etc_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Read a small text file whole into @buf (NUL-terminated, trailing
 * whitespace removed).  0, or -errno; -EFBIG if it does not fit.
 */
int tbr_read_text(const char *path, char *buf, size_t size);
/* tbr_read_text() of a path under the sysfs root. */
int tbr_sysfs_read(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool tbr_sysfs_exists(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* The last component of the symlink's target (e.g. a device's driver). */
int tbr_sysfs_link_name(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Write @text to an existing file (a sysfs attribute).  0 or -errno. */
int tbr_write_text(const char *path, const char *text);

/* Is the tbrdma kernel module loaded (/sys/module/tbrdma)? */
bool tbr_module_loaded(void);

#endif /* TBRDMA_ADMIN_SYSFS_H */
