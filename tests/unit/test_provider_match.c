// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider device matching (provider/match.c) against fake sysfs trees.
 *
 * The fake root is a fresh directory under $TBRDMA_TEST_SYSFS_ROOT when
 * set (e.g. to keep the tree on a particular filesystem), else under
 * $TMPDIR or /tmp.  Only this test reads that variable; the provider
 * itself always uses libibverbs' sysfs root.
 */
#define _GNU_SOURCE	/* nftw() */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "../../provider/match.h"
#include "../../uapi/tbrdma-abi.h"

static char root[PATH_MAX];

/* snprintf into a PATH_MAX buffer; a truncated path is a setup error. */
static __attribute__((format(printf, 2, 3))) void
pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		bail_out("path too long: %s", fmt);
}

/* Where the fake sysfs lives: the only place an env override is honoured. */
static void make_fake_root(void)
{
	const char *base = getenv("TBRDMA_TEST_SYSFS_ROOT");

	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	pathf(root, "%s/tbrdma-sysfs-XXXXXX", base);
	if (!mkdtemp(root))
		bail_out("mkdtemp under %s: %s", base, strerror(errno));
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

static void remove_fake_root(void)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	pathf(tmp, "%s", path);
	for (p = tmp + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			bail_out("mkdir %s: %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		bail_out("mkdir %s: %s", tmp, strerror(errno));
}

static void write_file(const char *dir, const char *name, const char *data,
		       size_t len)
{
	char path[PATH_MAX];
	int fd;

	pathf(path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		bail_out("write %s: %s", path, strerror(errno));
	close(fd);
}

/*
 * Create <root>/class/infiniband/<name> with the files a real ib device
 * has, plus tbrdma_abi_version holding attr (NULL: no attribute).
 * Returns the device directory in a static buffer.
 */
static const char *fake_ibdev(const char *name, const char *attr,
			      size_t attr_len)
{
	static char dir[PATH_MAX];
	char ports[PATH_MAX];

	pathf(dir, "%s/class/infiniband/%s", root, name);
	mkdirs(dir);
	write_file(dir, "node_type", "1: CA\n", 6);
	write_file(dir, "node_guid", "0000:0000:0000:0001\n", 20);
	pathf(ports, "%s/ports/1", dir);
	mkdirs(ports);
	write_file(ports, "state", "4: ACTIVE\n", 10);
	if (attr)
		write_file(dir, TBRDMA_SYSFS_ABI_ATTR, attr, attr_len);
	return dir;
}

#define FAKE(name, lit) fake_ibdev(name, lit, sizeof(lit) - 1)

/* Our ABI version as a string literal ("2"), so the cases below follow
 * TBRDMA_UVERBS_ABI_VERSION instead of hard-coding it. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define OUR_VER STR(TBRDMA_UVERBS_ABI_VERSION)

static void check(const char *name, const char *dir,
		  enum tbrdma_match_result expected)
{
	is_int(tbrdma_match_ibdev_dir(dir, NULL), expected, "%s", name);
}

static void test_match(void)
{
	unsigned long v = 12345;
	char dir[PATH_MAX], newer[32];

	/* What the kernel module writes. */
	is_int(tbrdma_match_ibdev_dir(FAKE("tbrdma0", OUR_VER "\n"), &v),
	       TBRDMA_MATCH_OK, "attribute with our version matches");
	is_int(v, TBRDMA_UVERBS_ABI_VERSION, "parsed version reported");
	check("no trailing newline still matches", FAKE("tbrdma1", OUR_VER),
	      TBRDMA_MATCH_OK);

	/* The name plays no part: renamed devices match, look-alikes don't. */
	check("renamed device with attribute matches",
	      FAKE("rocep0s1", OUR_VER "\n"), TBRDMA_MATCH_OK);
	check("tbrdma-named device without attribute does not match",
	      FAKE("tbrdma9", NULL), TBRDMA_MATCH_NO_ATTR);

	/* Other drivers' devices. */
	check("rxe-like device does not match", FAKE("rxe0", NULL),
	      TBRDMA_MATCH_NO_ATTR);
	pathf(dir, "%s/class/infiniband/absent", root);
	check("missing device directory does not match", dir,
	      TBRDMA_MATCH_NO_ATTR);

	/* Another ABI generation of our own module. */
	v = 0;
	snprintf(newer, sizeof(newer), "%d\n", TBRDMA_UVERBS_ABI_VERSION + 1);
	is_int(tbrdma_match_ibdev_dir(fake_ibdev("tbrdma_v2", newer,
						  strlen(newer)), &v),
	       TBRDMA_MATCH_WRONG_VERSION, "newer ABI does not match");
	is_int(v, TBRDMA_UVERBS_ABI_VERSION + 1, "wrong version still reported");
	check("version 0 does not match", FAKE("tbrdma_v0", "0\n"),
	      TBRDMA_MATCH_WRONG_VERSION);

	/* Malformed contents. */
	check("empty file", FAKE("e0", ""), TBRDMA_MATCH_BAD_FORMAT);
	check("newline only", FAKE("e1", "\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("garbage", FAKE("e2", "abc\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("leading space", FAKE("e3", " " OUR_VER "\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("trailing space", FAKE("e4", OUR_VER " \n"), TBRDMA_MATCH_BAD_FORMAT);
	check("plus sign", FAKE("e5", "+" OUR_VER "\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("minus sign", FAKE("e6", "-" OUR_VER "\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("hex", FAKE("e7", "0x" OUR_VER "\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("trailing junk", FAKE("e8", OUR_VER "abc\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("two newlines", FAKE("e9", OUR_VER "\n\n"), TBRDMA_MATCH_BAD_FORMAT);
	check("embedded NUL", fake_ibdev("e10", OUR_VER "\0", sizeof(OUR_VER)),
	      TBRDMA_MATCH_BAD_FORMAT);
	check("overflowing number", FAKE("e11", "99999999999999999999999\n"),
	      TBRDMA_MATCH_BAD_FORMAT);
	/* Leading zeros keep the value ours: only the length limit rejects. */
	check("over-long file",
	      FAKE("e12", "0000000000000000000000000000000000000000" OUR_VER "\n"),
	      TBRDMA_MATCH_BAD_FORMAT);

	/* An attribute that is not a file. */
	pathf(dir, "%s/%s", FAKE("d0", NULL),
		 TBRDMA_SYSFS_ABI_ATTR);
	mkdirs(dir);
	pathf(dir, "%s/class/infiniband/d0", root);
	check("attribute that is a directory", dir, TBRDMA_MATCH_NO_ATTR);
}

static void test_ibdev_dir(void)
{
	char buf[PATH_MAX], small[8], want[PATH_MAX];

	is_int(tbrdma_ibdev_dir(buf, sizeof(buf), "/x/class/infiniband/a",
				root, "b"), 0, "ibdev_path given");
	is_str(buf, "/x/class/infiniband/a", "ibdev_path wins over the name");

	pathf(want, "%s/class/infiniband/tbrdma0", root);
	is_int(tbrdma_ibdev_dir(buf, sizeof(buf), "", root, "tbrdma0"), 0,
	       "empty ibdev_path falls back to the name");
	is_str(buf, want, "fallback path built under the sysfs root");
	is_int(tbrdma_match_ibdev_dir(buf, NULL), TBRDMA_MATCH_OK,
	       "fallback path finds the attribute");
	is_int(tbrdma_ibdev_dir(buf, sizeof(buf), NULL, root, "tbrdma0"), 0,
	       "NULL ibdev_path falls back too");

	is_int(tbrdma_ibdev_dir(buf, sizeof(buf), "", root, ""), -1,
	       "no path and no name");
	is_int(tbrdma_ibdev_dir(buf, sizeof(buf), "", root, "../x"), -1,
	       "name with a slash is refused");
	is_int(tbrdma_ibdev_dir(small, sizeof(small), "/sys/class/x", NULL,
				NULL), -1, "truncation is an error");
	is_int(tbrdma_ibdev_dir(buf, 0, "/a", NULL, NULL), -1,
	       "zero-size buffer");
}

int main(void)
{
	int ret;

	/* Keep the attribute name in step with the kernel side. */
	_Static_assert(sizeof(TBRDMA_SYSFS_ABI_ATTR) ==
			       sizeof("tbrdma_abi_version"),
		       "attribute name");

	make_fake_root();
	plan(NO_PLAN);
	diag("fake sysfs root %s", root);
	test_match();
	test_ibdev_dir();
	ret = done();
	remove_fake_root();
	return ret;
}
