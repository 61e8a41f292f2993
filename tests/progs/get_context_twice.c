// SPDX-License-Identifier: GPL-2.0-only
/*
 * get_context_twice UVERBS_FILE EXTRA [rxe] — the reproducer of an RDMA
 * core leak (tests/kernel-bugs/10-get-context-leak.sh).
 *
 * Opens a uverbs file and asks for a context with the ioctl method
 * UVERBS_METHOD_GET_CONTEXT, then EXTRA more times on the same file; those
 * fail with EINVAL (a file has one context).  The core allocates a context
 * before it finds out, and its error path frees it without dropping the
 * task reference resource tracking took, so each process that got such an
 * EINVAL leaves its task_struct behind.  "rxe" sets the header's driver id
 * to rdma_rxe's (the core refuses ioctls that name another driver).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

static int get_context(int fd, unsigned int driver_id)
{
	struct ib_uverbs_ioctl_hdr h = {
		.length = sizeof(h),
		.object_id = UVERBS_OBJECT_DEVICE,
		.method_id = UVERBS_METHOD_GET_CONTEXT,
		.driver_id = driver_id,
	};

	return ioctl(fd, RDMA_VERBS_IOCTL, &h) ? errno : 0;
}

int main(int argc, char **argv)
{
	unsigned int driver_id = RDMA_DRIVER_UNKNOWN;	/* tbrdma's */
	int fd, extra;

	if (argc < 3) {
		fprintf(stderr, "usage: %s UVERBS_FILE EXTRA [rxe]\n", argv[0]);
		return 2;
	}
	extra = atoi(argv[2]);
	if (argc > 3 && !strcmp(argv[3], "rxe"))
		driver_id = RDMA_DRIVER_RXE;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("GET_CONTEXT: %s\n", strerror(get_context(fd, driver_id)));
	for (int i = 0; i < extra; i++)
		printf("GET_CONTEXT again: %s\n",
		       strerror(get_context(fd, driver_id)));
	close(fd);
	return 0;
}
