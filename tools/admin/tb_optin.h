/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The opt-in for Thunderbolt auto-attach: tbrdma's module parameter
 * thunderbolt_attach.  At run time it is /sys/module/tbrdma/parameters/
 * thunderbolt_attach (Y attaches every thunderbolt-net netdev at once, N
 * stops attaching new ones); across boots it is the line
 *     options tbrdma thunderbolt_attach=1
 * in /etc/modprobe.d/tbrdma.conf.  Both paths follow TBRDMA_SYSFS_ROOT and
 * TBRDMA_ETC_ROOT (sysfs.h).
 */
#ifndef TBRDMA_ADMIN_TB_OPTIN_H
#define TBRDMA_ADMIN_TB_OPTIN_H

#include <stdbool.h>

#include "sysfs.h"

#define OPTIN_PARAM "thunderbolt_attach"
#define OPTIN_CONF_FILE "modprobe.d/tbrdma.conf"	/* under /etc */

struct optin_persisted {
	int value;			/* 1, 0, or -1: no file sets it */
	char file[TBR_PATH_MAX];	/* the file whose setting counts */
};

/* A kernel bool parameter's value ("1", "y", "on", "N", ...): 1, 0, -1. */
int optin_parse_bool(const char *text);

/*
 * Does this modprobe.d line (continuations joined) set the parameter?
 * Returns 1 and its value in *value (the last one on the line), else 0.
 */
int optin_line_sets(const char *line, int *value);

/*
 * @old (a modprobe.d file's content, or NULL if it does not exist) with
 * every tbrdma thunderbolt_attach setting replaced by one line setting it
 * to @enable; other lines and other tbrdma options are kept.  malloc()ed,
 * NULL on allocation failure.
 */
char *optin_rewrite(const char *old, bool enable);

/*
 * The persisted setting: what modprobe would pass, from every
 * .conf file in /etc/modprobe.d, in modprobe's order (the last setting wins).
 */
int optin_read_persisted(struct optin_persisted *p);
/* Rewrite /etc/modprobe.d/tbrdma.conf atomically.  0 or -errno. */
int optin_write_persisted(bool enable);

/*
 * The running module's value: 0; -ENOENT: module not loaded;
 * -EOPNOTSUPP: the loaded module has no such parameter.
 */
int optin_runtime_get(bool *enabled);
int optin_runtime_set(bool enable);

#endif /* TBRDMA_ADMIN_TB_OPTIN_H */
