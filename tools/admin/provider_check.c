// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider_check.h"

#ifndef TBRDMA_PROVIDER_DIR
#error "TBRDMA_PROVIDER_DIR: libibverbs' provider directory, from the Makefile"
#endif
#ifndef TBRDMA_PROVIDER_PABI
#error "TBRDMA_PROVIDER_PABI: the private ABI of libibverbs, from the Makefile"
#endif
/* libibverbs appends its private ABI to a provider's name. */
#define PROVIDER_SUFFIX "-rdmav" TBRDMA_PROVIDER_PABI ".so"

/* The library a "driver X" value names, if it is tbrdma's. */
static bool tbrdma_library(const char *value, char *lib, size_t size)
{
	const char *base = strrchr(value, '/');

	if (value[0] != '/') {
		if (strcmp(value, "tbrdma"))
			return false;
		return snprintf(lib, size, "%s/libtbrdma" PROVIDER_SUFFIX,
				TBRDMA_PROVIDER_DIR) < (int)size;
	}
	if (!base || strcmp(base + 1, "libtbrdma"))
		return false;
	return snprintf(lib, size, "%s" PROVIDER_SUFFIX, value) < (int)size;
}

static bool scan_driver_file(const char *path, char *lib, size_t size)
{
	char line[TBR_PATH_MAX], value[TBR_PATH_MAX];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, " driver %4095s", value) == 1 &&
			tbrdma_library(value, lib, size);
	fclose(f);
	return found;
}

void provider_check(struct provider_check *pc)
{
	char dir[TBR_PATH_MAX], path[TBR_PATH_MAX];
	const char *env = getenv("RDMAV_DRIVERS");
	struct dirent **names;
	int n, i;

	memset(pc, 0, sizeof(*pc));
	snprintf(pc->rdmav_drivers, sizeof(pc->rdmav_drivers), "%s",
		 env ? env : "");
	if (tbr_etc_path(dir, sizeof(dir), "libibverbs.d"))
		return;
	n = scandir(dir, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);

		if (!pc->driver_file[0] && len > 7 &&
		    !strcmp(names[i]->d_name + len - 7, ".driver") &&
		    snprintf(path, sizeof(path), "%s/%s", dir,
			     names[i]->d_name) < (int)sizeof(path) &&
		    scan_driver_file(path, pc->library, sizeof(pc->library))) {
			snprintf(pc->driver_file, sizeof(pc->driver_file), "%s",
				 path);
			pc->library_exists = access(pc->library, R_OK) == 0;
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

bool provider_found(const struct provider_check *pc)
{
	return (pc->driver_file[0] && pc->library_exists) ||
	       pc->rdmav_drivers[0];
}
