// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: the doorbell file (kmod/doorbell.c, uapi TBRDMA_UCTX_DOORBELL_FD).
 *
 *   - the provider's context has one, and it rings our own QP;
 *   - it refuses what is not a QP of its own context: the GSI QP (the
 *     kernel's), a QP of another context of the same process, numbers
 *     that do not fit in 32 bits, other requests;
 *   - a context asked for by hand (a raw GET_CONTEXT on a uverbs file of
 *     our own) gets one only when it asks and can be told the descriptor,
 *     close-on-exec; unknown request flags and non-zero reserved or
 *     trailing bytes are refused;
 *   - without a free descriptor the context comes without a doorbell;
 *   - once its context is gone (the uverbs file closed) it answers EIO;
 *   - a forked child, whose credentials are a copy, gets EACCES, as it
 *     would from the uverbs file.
 *
 * Usage: doorbell DEV
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "../../uapi/tbrdma-abi.h"
#include "../unit/tap.h"
#include "vutil.h"

#define DOORBELL_NAME "anon_inode:[tbrdma-doorbell]"

/* How many doorbell files this process has open; the last one in @fd. */
static int doorbells(int *fd)
{
	char target[128];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t len;

		len = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (!strcmp(target, DOORBELL_NAME)) {
			n++;
			if (fd)
				*fd = atoi(e->d_name);
		}
	}
	closedir(d);
	return n;
}

/* ioctl's errno, or 0 on success. */
static int ring(int fd, unsigned int cmd, unsigned long arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

struct raw_ctx {
	int uverbs_fd;
	int async_fd;
	uint32_t flags;		/* granted */
	int32_t doorbell_fd;
};

/*
 * GET_CONTEXT by hand on a new uverbs file: @req (NULL: no driver data),
 * @extra zero or non-zero trailing bytes after it, @drv_out bytes of
 * driver response.  Returns 0 or the errno of the write().
 */
static int raw_get_context(const char *uverbs, const struct tbrdma_alloc_ucontext_req *req,
			   uint32_t extra, size_t drv_out, struct raw_ctx *rc)
{
	struct {
		struct ib_uverbs_get_context_resp core;
		struct tbrdma_alloc_ucontext_resp drv;
	} resp;
	struct {
		struct ib_uverbs_cmd_hdr h;
		struct ib_uverbs_get_context c;
		struct tbrdma_alloc_ucontext_req req;
		uint32_t extra[2];
	} cmd;
	size_t in = sizeof(cmd.h) + sizeof(cmd.c);
	ssize_t n;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0xff, sizeof(resp));
	rc->uverbs_fd = open(uverbs, O_RDWR | O_CLOEXEC);
	rc->async_fd = -1;
	rc->flags = 0;
	rc->doorbell_fd = -1;
	if (rc->uverbs_fd < 0)
		return errno;
	if (req) {
		cmd.req = *req;
		in += sizeof(cmd.req);
		if (extra) {
			cmd.extra[0] = 0;
			cmd.extra[1] = extra == 1 ? 0 : extra;
			in += sizeof(cmd.extra);
		}
	}
	cmd.h.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	cmd.h.in_words = in / 4;
	cmd.h.out_words = (sizeof(resp.core) + drv_out) / 4;
	cmd.c.response = (uintptr_t)&resp;
	n = write(rc->uverbs_fd, &cmd, in);
	if (n < 0)
		return errno;
	rc->async_fd = resp.core.async_fd;
	if (drv_out >= offsetof(struct tbrdma_alloc_ucontext_resp, doorbell_fd) + 4) {
		rc->flags = resp.drv.flags;
		rc->doorbell_fd = resp.drv.doorbell_fd;
	}
	return 0;
}

static void raw_close(struct raw_ctx *rc)
{
	if (rc->doorbell_fd >= 0)
		close(rc->doorbell_fd);
	if (rc->async_fd >= 0)
		close(rc->async_fd);
	if (rc->uverbs_fd >= 0)
		close(rc->uverbs_fd);
	rc->uverbs_fd = rc->async_fd = rc->doorbell_fd = -1;
}

int main(int argc, char **argv)
{
	struct tbrdma_alloc_ucontext_req want = { .flags = TBRDMA_UCTX_DOORBELL_FD };
	struct tbrdma_alloc_ucontext_req bad;
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct raw_ctx rc;
	char uverbs[96];
	int own = -1, before, status, fd_a, fd_b;
	struct rlimit nofile, few;
	uint32_t qpn;
	pid_t pid;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEV\n", argv[0]);
		return 2;
	}
	plan(NO_PLAN);
	ctx = vdev_open(argv[1]);
	if (!ok(ctx != NULL, "device %s opens", argv[1]))
		return done();
	snprintf(uverbs, sizeof(uverbs), "/dev/infiniband/%s", ctx->device->dev_name);
	is_int(doorbells(&own), 1, "the provider's context has a doorbell file");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	init.send_cq = init.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &init) : NULL;
	if (!ok(qp != NULL && own >= 0, "a QP to ring"))
		return done();

	is_int(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, qp->qp_num), 0,
	       "our own QP rings");
	is_int(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, 1), EINVAL,
	       "the GSI QP (the kernel's) is refused");
	is_int(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, 0xffffff), EINVAL,
	       "a QP number nobody has is refused");
	is_int(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, (1UL << 32) | qp->qp_num), EINVAL,
	       "a number beyond 32 bits is refused, not truncated");
	is_int(ring(own, _IO(TBRDMA_IOCTL_MAGIC, 2), qp->qp_num), ENOTTY,
	       "another request is ENOTTY");

	/* A second context, asked for by hand. */
	is_int(raw_get_context(uverbs, &want, 0, sizeof(struct tbrdma_alloc_ucontext_resp), &rc),
	       0, "a raw GET_CONTEXT asking for a doorbell");
	ok(rc.flags & TBRDMA_UCTX_DOORBELL_FD, "it is granted");
	ok(rc.doorbell_fd >= 0 && (fcntl(rc.doorbell_fd, F_GETFD) & FD_CLOEXEC),
	   "the descriptor is open and close-on-exec");
	is_int(doorbells(NULL), 2, "one more doorbell file in the process");
	is_int(ring(rc.doorbell_fd, TBRDMA_IOCTL_SQ_DOORBELL, qp->qp_num), EINVAL,
	       "another context's QP is refused");
	close(rc.uverbs_fd);
	rc.uverbs_fd = -1;
	close(rc.async_fd);
	rc.async_fd = -1;
	is_int(ring(rc.doorbell_fd, TBRDMA_IOCTL_SQ_DOORBELL, qp->qp_num), EIO,
	       "with its context gone it answers EIO");
	raw_close(&rc);

	is_int(raw_get_context(uverbs, NULL, 0, sizeof(struct tbrdma_alloc_ucontext_resp), &rc),
	       0, "a raw GET_CONTEXT without driver data");
	ok(!(rc.flags & TBRDMA_UCTX_DOORBELL_FD) && rc.doorbell_fd == -1,
	   "gets no doorbell");
	raw_close(&rc);

	before = doorbells(NULL);
	is_int(raw_get_context(uverbs, &want, 0, 8, &rc), 0,
	       "asking with no room for the descriptor in the response");
	is_int(doorbells(NULL), before, "gets no doorbell file (none leaks)");
	raw_close(&rc);

	bad = (struct tbrdma_alloc_ucontext_req){ .flags = 1U << 7 };
	is_int(raw_get_context(uverbs, &bad, 0, 16, &rc), EOPNOTSUPP,
	       "an unknown request flag is refused");
	raw_close(&rc);
	bad = (struct tbrdma_alloc_ucontext_req){ .reserved = 1 };
	is_int(raw_get_context(uverbs, &bad, 0, 16, &rc), EOPNOTSUPP,
	       "a non-zero reserved field is refused");
	raw_close(&rc);
	is_int(raw_get_context(uverbs, &want, 0x5a, 16, &rc), EOPNOTSUPP,
	       "non-zero bytes after the request are refused");
	raw_close(&rc);
	is_int(raw_get_context(uverbs, &want, 1, 16, &rc), 0,
	       "zero bytes after the request are fine");
	ok(rc.flags & TBRDMA_UCTX_DOORBELL_FD, "and it is granted");
	raw_close(&rc);
	is_int(doorbells(NULL), 1, "only the provider's doorbell is left");

	/*
	 * No descriptor left for a doorbell: the context still comes, without
	 * one.  The two lowest free numbers go to the uverbs file and the
	 * async event file; the limit leaves nothing after them.
	 */
	fd_a = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fd_b = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fd_a);
	close(fd_b);
	getrlimit(RLIMIT_NOFILE, &nofile);
	few = nofile;
	few.rlim_cur = fd_b + 1;
	if (ok(setrlimit(RLIMIT_NOFILE, &few) == 0, "descriptors limited to %d", fd_b + 1)) {
		is_int(raw_get_context(uverbs, &want, 0, 16, &rc), 0,
		       "with no descriptor left the context is still granted");
		ok(!(rc.flags & TBRDMA_UCTX_DOORBELL_FD) && rc.doorbell_fd == -1,
		   "without a doorbell file");
		raw_close(&rc);
		setrlimit(RLIMIT_NOFILE, &nofile);
	}

	/* A forked child has a copy of our credentials, not ours. */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, qp->qp_num) == EACCES ? 0 : 1);
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	   WEXITSTATUS(status) == 0, "a forked child gets EACCES");

	is_int(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, qp->qp_num), 0,
	       "our QP still rings");
	qpn = qp->qp_num;
	is_int(ibv_destroy_qp(qp), 0, "destroy the QP");
	is_int(ring(own, TBRDMA_IOCTL_SQ_DOORBELL, qpn), EINVAL,
	       "a destroyed QP is refused");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	is_int(ibv_close_device(ctx), 0, "close the device");
	is_int(doorbells(NULL), 0, "closing the device closed its doorbell");
	return done();
}
