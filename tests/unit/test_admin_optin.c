// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `tbrdma thunderbolt enable|disable|status` below the command line: the
 * modprobe.d lines it recognises and rewrites, the file it writes under a
 * temporary root (TBRDMA_ETC_ROOT), which setting modprobe would use when
 * several files set it, and the module parameter under a fake sysfs root.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "tb_optin.h"

static char root[256];	/* a short mkdtemp() path */

static void write_at(const char *rel, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f || fputs(content, f) < 0 || fclose(f))
		bail_out("write %s", path);
}

static char *read_at(const char *rel)
{
	static char text[4096];
	char path[PATH_MAX];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static void mkdir_at(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (mkdir(path, 0755) && errno != EEXIST)
		bail_out("mkdir %s", path);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* optin_write_persisted() writes .tbrdma.conf.XXXXXX and renames it. */
static bool no_temporary_files(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool clean = true;
	DIR *d;

	snprintf(path, sizeof(path), "%s/etc/modprobe.d", root);
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, ".tbrdma.conf.", 13))
			clean = false;
	closedir(d);
	return clean;
}

static void test_parse_bool(void)
{
	ok(optin_parse_bool("1") == 1 && optin_parse_bool("y") == 1 &&
		   optin_parse_bool("Y") == 1 && optin_parse_bool("on") == 1 &&
		   optin_parse_bool("ON") == 1,
	   "true as the kernel spells it");
	ok(optin_parse_bool("0") == 0 && optin_parse_bool("n") == 0 &&
		   optin_parse_bool("N") == 0 && optin_parse_bool("off") == 0,
	   "false as the kernel spells it");
	ok(optin_parse_bool("2") == -1 && optin_parse_bool("yes!") == -1 &&
		   optin_parse_bool("") == -1 && optin_parse_bool("10") == -1,
	   "anything else is not a bool");
}

static int sets(const char *line, int *value)
{
	*value = -5;
	return optin_line_sets(line, value);
}

static void test_line(void)
{
	int v;

	ok(sets("options tbrdma thunderbolt_attach=1", &v) && v == 1,
	   "the line enable writes");
	ok(sets("options\ttbrdma  loopback=1 thunderbolt_attach=0", &v) &&
		   v == 0,
	   "among other options, tabs and double spaces");
	ok(sets("options tbrdma thunderbolt_attach", &v) && v == 1,
	   "a bare bool parameter is true");
	ok(sets("options tbrdma thunderbolt_attach=\"Y\"", &v) && v == 1,
	   "a quoted value");
	ok(sets("options tbrdma thunderbolt_attach=1 thunderbolt_attach=off",
		&v) && v == 0,
	   "the last on the line wins");
	ok(!sets("# options tbrdma thunderbolt_attach=1", &v) &&
		   !sets("options tbrdma loopback=1", &v) &&
		   !sets("options rdma_rxe thunderbolt_attach=1", &v) &&
		   !sets("options tbrdma thunderbolt_attached=1", &v) &&
		   !sets("install tbrdma /bin/true thunderbolt_attach=1", &v) &&
		   !sets("options tbrdma thunderbolt_attach=maybe", &v) &&
		   !sets("", &v),
	   "comments, other modules, other options, other commands ignored");
}

static void test_rewrite(void)
{
	char *out;

	out = optin_rewrite(NULL, true);
	ok(out && out[0] == '#' &&
		   strstr(out, "\noptions tbrdma thunderbolt_attach=1\n") &&
		   out[strlen(out) - 1] == '\n',
	   "a new file: a comment saying who wrote it, then the setting");
	free(out);

	out = optin_rewrite("# mine\n"
			    "options tbrdma loopback=1 thunderbolt_attach=0\n"
			    "blacklist something\n"
			    "options tbrdma thunderbolt_attach=0\n",
			    true);
	is_str(out,
	       "# mine\n"
	       "options tbrdma loopback=1\n"
	       "blacklist something\n"
	       "options tbrdma thunderbolt_attach=1\n",
	       "enable keeps comments, other lines and other tbrdma options");
	free(out);

	out = optin_rewrite("options tbrdma \\\n  thunderbolt_attach=1 \\\n"
			    "  loopback=1\n",
			    false);
	is_str(out,
	       "options tbrdma loopback=1\n"
	       "options tbrdma thunderbolt_attach=0\n",
	       "continued lines are understood (and joined)");
	free(out);
}

static void test_persist(void)
{
	struct optin_persisted p;
	char *text, want[PATH_MAX];

	setenv("TBRDMA_ETC_ROOT", root, 1);
	is_int(optin_write_persisted(true), -ENOENT,
	       "no etc directory under the root: error, nothing invented");
	mkdir_at("etc");
	is_int(optin_read_persisted(&p), 0, "reading without modprobe.d");
	ok(p.value == -1 && !p.file[0], "nothing persisted");

	is_int(optin_write_persisted(true), 0, "enable writes");
	text = read_at("etc/modprobe.d/tbrdma.conf");
	ok(text && strstr(text, "options tbrdma thunderbolt_attach=1\n"),
	   "modprobe.d created, tbrdma.conf holds the setting");
	optin_read_persisted(&p);
	snprintf(want, sizeof(want), "%s/etc/modprobe.d/tbrdma.conf", root);
	ok(p.value == 1 && !strcmp(p.file, want), "read back: enabled, there");

	write_at("etc/modprobe.d/tbrdma.conf",
		 "options tbrdma loopback=1 thunderbolt_attach=1\n");
	is_int(optin_write_persisted(false), 0, "disable writes");
	is_str(read_at("etc/modprobe.d/tbrdma.conf"),
	       "options tbrdma loopback=1\n"
	       "options tbrdma thunderbolt_attach=0\n",
	       "disable keeps the admin's other option");
	optin_read_persisted(&p);
	ok(p.value == 0, "read back: disabled");

	/* modprobe reads files in name order: the last setting counts. */
	write_at("etc/modprobe.d/00-early.conf",
		 "options tbrdma thunderbolt_attach=1\n");
	write_at("etc/modprobe.d/zz-late.conf",
		 "options tbrdma thunderbolt_attach=1\n");
	write_at("etc/modprobe.d/zzz-ignored.txt",
		 "options tbrdma thunderbolt_attach=0\n");
	optin_read_persisted(&p);
	snprintf(want, sizeof(want), "%s/etc/modprobe.d/zz-late.conf", root);
	ok(p.value == 1 && !strcmp(p.file, want),
	   "a later file wins over tbrdma.conf; non-.conf files ignored");
	ok(no_temporary_files(), "no temporary file left behind");
}

static void test_runtime(void)
{
	bool on = true;

	setenv("TBRDMA_SYSFS_ROOT", root, 1);
	mkdir_at("sys");
	mkdir_at("sys/module");
	is_int(optin_runtime_get(&on), -ENOENT, "module not loaded");
	is_int(optin_runtime_set(true), -ENOENT,
	       "setting without the module: not loaded");
	mkdir_at("sys/module/tbrdma");
	mkdir_at("sys/module/tbrdma/parameters");
	is_int(optin_runtime_get(&on), -EOPNOTSUPP,
	       "a module without the parameter");
	write_at("sys/module/tbrdma/parameters/thunderbolt_attach", "N\n");
	ok(optin_runtime_get(&on) == 0 && !on, "parameter N: off");
	is_int(optin_runtime_set(true), 0, "switch on");
	is_str(read_at("sys/module/tbrdma/parameters/thunderbolt_attach"), "Y",
	       "Y written to the parameter, as `echo Y >` would");
	ok(optin_runtime_get(&on) == 0 && on, "parameter Y: on");
	write_at("sys/module/tbrdma/parameters/thunderbolt_attach", "what\n");
	is_int(optin_runtime_get(&on), -EPROTO, "an unreadable value");
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/tbrdma-optin-XXXXXX");
	if (!mkdtemp(root))
		bail_out("mkdtemp");
	plan(31);
	test_parse_bool();
	test_line();
	test_rewrite();
	test_persist();
	test_runtime();
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return done();
}
