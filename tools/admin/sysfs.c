// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs.h"

/* A root from the environment, "" when unset, "/" or only slashes. */
static const char *root_from_env(const char *var, char *store, size_t size)
{
	const char *v = getenv(var);
	size_t len;

	if (!v)
		return "";
	len = strlen(v);
	while (len > 0 && v[len - 1] == '/')
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(store, v, len);
	store[len] = '\0';
	return store;
}

const char *tbr_sysfs_root(void)
{
	static char root[TBR_PATH_MAX];

	return root_from_env("TBRDMA_SYSFS_ROOT", root, sizeof(root));
}

const char *tbr_etc_root(void)
{
	static char root[TBR_PATH_MAX];

	return root_from_env("TBRDMA_ETC_ROOT", root, sizeof(root));
}

static int vpath(char *buf, size_t size, const char *root, const char *dir,
		 const char *fmt, va_list ap)
{
	int prefix = snprintf(buf, size, "%s/%s/", root, dir);
	int n;

	if (prefix < 0 || (size_t)prefix >= size)
		return -ENAMETOOLONG;
	n = vsnprintf(buf + prefix, size - prefix, fmt, ap);
	if (n < 0 || (size_t)n >= size - prefix)
		return -ENAMETOOLONG;
	return 0;
}

int tbr_sysfs_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(buf, size, tbr_sysfs_root(), "sys", fmt, ap);
	va_end(ap);
	return err;
}

int tbr_etc_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(buf, size, tbr_etc_root(), "etc", fmt, ap);
	va_end(ap);
	return err;
}

int tbr_read_text(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
		if (len == size - 1) {
			char extra;

			/* Full: an error only if there is more. */
			if (read(fd, &extra, 1) > 0)
				err = -EFBIG;
			break;
		}
	}
	close(fd);
	if (err)
		return err;
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	return 0;
}

int tbr_sysfs_read(char *buf, size_t size, const char *fmt, ...)
{
	char path[TBR_PATH_MAX];
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), tbr_sysfs_root(), "sys", fmt, ap);
	va_end(ap);
	return err ? err : tbr_read_text(path, buf, size);
}

bool tbr_sysfs_exists(const char *fmt, ...)
{
	char path[TBR_PATH_MAX];
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), tbr_sysfs_root(), "sys", fmt, ap);
	va_end(ap);
	return !err && access(path, F_OK) == 0;
}

int tbr_sysfs_link_name(char *buf, size_t size, const char *fmt, ...)
{
	char path[TBR_PATH_MAX], target[TBR_PATH_MAX];
	const char *name;
	va_list ap;
	ssize_t n;
	int err;

	va_start(ap, fmt);
	err = vpath(path, sizeof(path), tbr_sysfs_root(), "sys", fmt, ap);
	va_end(ap);
	if (err)
		return err;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	name = strrchr(target, '/');
	name = name ? name + 1 : target;
	if (strlen(name) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, name);
	return 0;
}

int tbr_write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, err = 0;

	/*
	 * No O_CREAT: this writes attributes, which must already exist.
	 * O_TRUNC as the shell's "echo Y >" (sysfs ignores it; a fake tree's
	 * plain file then holds what sysfs would show).
	 */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

bool tbr_module_loaded(void)
{
	return tbr_sysfs_exists("module/tbrdma");
}
