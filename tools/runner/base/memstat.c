// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* This process's peak resident set (VmHWM), from /proc/self/status. */
#include <stdio.h>

#include "base/memstat.h"

uint64_t tp_peak_rss(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}
