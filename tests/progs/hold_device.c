// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test helper: open DEV, allocate a PD, print "ready" and wait to be
 * killed.  Lets a test check what happens while a process uses a device.
 *
 * Usage: hold_device DEV
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEV\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx || !ibv_alloc_pd(ctx)) {
		fprintf(stderr, "cannot open %s or allocate a PD\n", argv[1]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
