// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: a seeded, reproducible fuzzer of everything user space can
 * hand the kernel module through the uverbs interface.
 *
 *  verbs  random sequences of libibverbs calls through our provider:
 *         create/destroy PD, CQ, QP, SRQ, MR, MW, AH with random (often
 *         invalid) sizes, flags and access; ibv_modify_qp with random masks
 *         and values in random state order; posts with random opcodes, SGE
 *         counts, keys, addresses, lengths, inline sizes; resize_cq,
 *         req_notify, destroys in the wrong order (fuzz_verbs.c).
 *  raw    malformed uverbs commands on a context of our own: legacy write()
 *         headers with wrong lengths and bad handles, driver data of the
 *         wrong size for every create, ioctl()s with random objects,
 *         methods and attributes, random mmap offsets (fuzz_raw.c).
 *  ring   random values written into the shared rings (counters, WQE
 *         fields, SGEs, flags) of QPs that carry traffic, then doorbells;
 *         optionally from a second thread at the same time (fuzz_ring.c).
 *
 * The contract: every call returns success or an error, every completion
 * has a valid status and opcode, the kernel stays healthy (the harness
 * checks dmesg), and after each layer a fresh QP pair still moves data.
 * Each layer draws from its own random stream derived from --seed, and its
 * iteration count is a fixed share of --iters, so "--seed S --iters N
 * --layers raw" replays exactly the raw part of a run.
 *
 * Usage: fuzz_uverbs [-d DEV] [-g GID_INDEX] [--seed S] [--iters N]
 *                    [--layers verbs,raw,ring] [--no-racer] [--verbose]
 *                    [--watchdog SECS]
 * --watchdog: exit 3, naming the running call, after SECS without progress.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "fuzz.h"

struct fuzz F;

/* ---- random values ------------------------------------------------------ */

uint32_t rnd_u32(struct rng *r)
{
	static const uint32_t special[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 255, 256, 511,
		512, 513, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536,
		65537, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
		0x00ffffff, 0x01000000,
	};
	uint32_t v;

	switch (rnd(r, 4)) {
	case 0:
		return special[rnd(r, sizeof(special) / sizeof(special[0]))];
	case 1:
		return rnd(r, 64);
	case 2:
		v = 1U << rnd(r, 32);
		return v + rnd(r, 3) - 1;
	default:
		return (uint32_t)rnd64(r);
	}
}

uint64_t rnd_u64(struct rng *r)
{
	switch (rnd(r, 4)) {
	case 0:
		return rnd_u32(r);
	case 1:
		return (uint64_t)rnd_u32(r) << 32 | rnd_u32(r);
	case 2:
		return ~0ULL - rnd(r, 4);
	default:
		return rnd64(r);
	}
}

uint32_t rnd_count(struct rng *r, uint32_t limit)
{
	switch (rnd(r, 10)) {
	case 0:
		return limit + rnd(r, 3) - 1;		/* at the limit */
	case 1:
		return rnd_u32(r);
	default:
		return rnd(r, limit < 64 ? limit + 1 : 64);
	}
}

/* ---- bookkeeping -------------------------------------------------------- */

/* What is running now: cheap to set every iteration, formatted only when
 * someone needs to see it. */
static const char *note_layer = "start", *note_what = "";
static uint64_t note_iter;
static unsigned int watchdog_secs;

void fuzz_note(const char *layer, uint64_t iter, const char *what)
{
	note_layer = layer;
	note_iter = iter;
	note_what = what;
	if (F.verbose)
		fprintf(stderr, "%s %" PRIu64 ": %s\n", layer, iter, what);
	/* The watchdog fires after watchdog_secs without progress. */
	if (watchdog_secs && (iter & 1023) == 0)
		alarm(watchdog_secs);
}

static void format_note(char *buf, size_t len)
{
	snprintf(buf, len, "%s iteration %" PRIu64 ": %s", note_layer,
		 note_iter, note_what);
}

static void watchdog(int sig)
{
	static const char msg[] = "fuzz_uverbs: WATCHDOG: no progress; last: ";
	char note[160];
	ssize_t n;

	(void)sig;
	format_note(note, sizeof(note));	/* not async-signal-safe; we exit */
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	n = write(STDOUT_FILENO, note, strlen(note));
	n = write(STDOUT_FILENO, "\n", 1);
	(void)n;
	_exit(3);
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	F.failures++;
	if (F.failures > 50)
		return;		/* enough to see the pattern */
	printf("# FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	{
		char note[160];

		format_note(note, sizeof(note));
		printf(" [in %s]\n", note);
	}
	fflush(stdout);
}

void fuzz_ret(const char *what, int ret)
{
	if (ret == 0) {
		F.ok_ret++;
		return;
	}
	F.err_ret++;
	if (ret == -1)
		ret = errno;
	if (ret < 0)
		ret = -ret;
	if (ret <= 0 || ret >= 4096)
		fuzz_fail("%s returned %d, neither 0 nor an error code", what,
			  ret);
}

void fuzz_ptr(const char *what, const void *p)
{
	if (p) {
		F.ok_ret++;
		return;
	}
	F.err_ret++;
	/* libibverbs does not set errno on every path; a NULL is the error. */
	(void)what;
}

void fuzz_check_wc(const struct ibv_wc *wc, bool own_wr_ids)
{
	F.completions++;
	if (wc->status != IBV_WC_SUCCESS)
		F.err_completions++;
	if ((unsigned int)wc->status > IBV_WC_GENERAL_ERR)
		fuzz_fail("completion with status %u", wc->status);
	switch ((int)wc->opcode) {
	case IBV_WC_SEND:
	case IBV_WC_RDMA_WRITE:
	case IBV_WC_RDMA_READ:
	case IBV_WC_COMP_SWAP:
	case IBV_WC_FETCH_ADD:
	case IBV_WC_BIND_MW:
	case IBV_WC_LOCAL_INV:
	case IBV_WC_RECV:
	case IBV_WC_RECV_RDMA_WITH_IMM:
		break;
	default:
		/* Flushed WQEs may carry any opcode byte: status says it all. */
		if (wc->status == IBV_WC_SUCCESS)
			fuzz_fail("successful completion with opcode %u",
				  wc->opcode);
	}
	if (own_wr_ids && !fuzz_is_wr_id(wc->wr_id))
		fuzz_fail("completion (status %u) with wr_id %#" PRIx64
			  " that was never posted", wc->status, wc->wr_id);
}

void fuzz_drain_async(struct ibv_context *ctx)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(ctx, &ev)) {
		F.async_events++;
		if (ev.event_type == IBV_EVENT_QP_FATAL ||
		    ev.event_type == IBV_EVENT_CQ_ERR ||
		    ev.event_type == IBV_EVENT_QP_ACCESS_ERR ||
		    ev.event_type == IBV_EVENT_QP_REQ_ERR)
			F.fatal_events++;
		ibv_ack_async_event(&ev);
	}
}

/* ---- health check ------------------------------------------------------- */

int fuzz_health(const char *when)
{
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_qp *a = NULL, *b = NULL;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct conn c;
	struct ibv_sge sge;
	struct ibv_send_wr swr = { 0 }, *bad_s;
	struct ibv_recv_wr rwr = { 0 }, *bad_r;
	struct ibv_wc wc;
	uint8_t *buf;
	int err = -1, got = 0, i;

	buf = aligned_alloc(4096, 8192);
	if (!buf)
		return -1;
	for (i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	memset(buf + 4096, 0, 4096);
	conn_defaults(&c, &F.v);
	pd = ibv_alloc_pd(F.v.ctx);
	cq = ibv_create_cq(F.v.ctx, 8, NULL, NULL, 0);
	if (!pd || !cq)
		goto out;
	mr = ibv_reg_mr(pd, buf, 8192, c.access);
	ia.send_cq = ia.recv_cq = cq;
	a = ibv_create_qp(pd, &ia);
	b = ibv_create_qp(pd, &ia);
	if (!mr || !a || !b)
		goto out;
	if (qp_connect(a, &F.v, b->qp_num, &c) ||
	    qp_connect(b, &F.v, a->qp_num, &c))
		goto out;
	sge = (struct ibv_sge){ (uintptr_t)(buf + 4096), 4096, mr->lkey };
	rwr.wr_id = 2;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	if (ibv_post_recv(b, &rwr, &bad_r))
		goto out;
	sge = (struct ibv_sge){ (uintptr_t)buf, 4096, mr->lkey };
	swr.wr_id = 1;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(a, &swr, &bad_s))
		goto out;
	while (got < 2 && poll_wc(cq, &wc, 5000) == 1) {
		if (wc.status != IBV_WC_SUCCESS)
			goto out;
		got++;
	}
	if (got == 2 && !memcmp(buf, buf + 4096, 4096))
		err = 0;
out:
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	free(buf);
	ok(err == 0, "device still works after %s (RC send of 4 KiB checked)",
	   when);
	return err;
}

/* ---- main --------------------------------------------------------------- */

enum { L_VERBS = 1, L_RAW = 2, L_RING = 4 };

static int parse_layers(const char *s)
{
	int m = 0;
	char *dup = strdup(s), *tok, *save = NULL;

	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "verbs"))
			m |= L_VERBS;
		else if (!strcmp(tok, "raw"))
			m |= L_RAW;
		else if (!strcmp(tok, "ring"))
			m |= L_RING;
		else {
			fprintf(stderr, "unknown layer '%s'\n", tok);
			exit(2);
		}
	}
	free(dup);
	return m;
}

static uint64_t layer_seed(uint64_t seed, uint64_t layer)
{
	struct rng r = { seed ^ (layer * 0x5851f42d4c957f2dULL) };

	return rnd64(&r);
}

static void find_uverbs(void)
{
	struct ibv_device *d = F.v.ctx->device;
	char path[300];
	FILE *f;
	int v = 0;

	snprintf(F.uverbs_path, sizeof(F.uverbs_path), "/dev/infiniband/%s",
		 d->dev_name);
	snprintf(path, sizeof(path), "%s/%s", d->ibdev_path,
		 "tbrdma_abi_version");
	f = fopen(path, "r");
	if (f) {
		F.is_tbrdma = fscanf(f, "%d", &v) == 1 && v > 0;
		fclose(f);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fuzz_uverbs [-d DEV] [-g GID_INDEX] [--seed S] [--iters N]\n"
		"                   [--layers verbs,raw,ring] [--no-racer] [--verbose]\n"
		"                   [--watchdog SECS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "layers", required_argument, NULL, 'l' },
		{ "no-racer", no_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "watchdog", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "tbrlo0";
	uint64_t seed, iters = 100000, n_verbs, n_raw, n_ring;
	int gid = 1, layers = L_VERBS | L_RAW | L_RING, racer = 1, c;
	unsigned int wd = 0;
	bool seeded = false;
	time_t t0;

	while ((c = getopt_long(argc, argv, "d:g:s:n:l:Rvw:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); seeded = true; break;
		case 'n': iters = strtoull(optarg, NULL, 0); break;
		case 'l': layers = parse_layers(optarg); break;
		case 'R': racer = 0; break;
		case 'v': F.verbose = true; break;
		case 'w': wd = (unsigned int)atoi(optarg); break;
		default: usage();
		}
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		       ((uint64_t)getpid() << 40);
	}
	F.seed = seed;
	F.dev = dev;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The shares are fixed whatever --layers says, so a single layer
	 * replays with the same --iters. */
	n_verbs = iters * 35 / 100;
	n_raw = iters * 35 / 100;
	n_ring = iters - n_verbs - n_raw;

	printf("# fuzz_uverbs: seed %" PRIu64 " (reproduce: fuzz_uverbs -d %s -g %d"
	       " --seed %" PRIu64 " --iters %" PRIu64 ")\n",
	       seed, dev, gid, seed, iters);
	plan(NO_PLAN);
	if (vctx_open(&F.v, dev, gid))
		return ok(0, "open %s", dev), done();
	find_uverbs();
	/* Async events are drained without waiting. */
	fcntl(F.v.ctx->async_fd, F_SETFL,
	      fcntl(F.v.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	if (wd) {
		signal(SIGALRM, watchdog);
		watchdog_secs = wd;
		alarm(wd);
	}
	diag("device %s (%s), %s", dev, F.uverbs_path,
	     F.is_tbrdma ? "tbrdma" : "not tbrdma: no ring layer");
	t0 = time(NULL);

	if (layers & L_VERBS) {
		uint64_t f0 = F.failures, i0 = F.iters;

		fuzz_verbs(layer_seed(seed, 1), n_verbs);
		ok(F.failures == f0, "verbs: %" PRIu64 " calls, %" PRIu64
		   " ok, %" PRIu64 " errors, %" PRIu64 " completions (%" PRIu64
		   " in error), %" PRIu64 " async events",
		   F.iters - i0, F.ok_ret, F.err_ret, F.completions,
		   F.err_completions, F.async_events);
		fuzz_drain_async(F.v.ctx);
		fuzz_health("the verbs layer");
	}
	if (layers & L_RAW) {
		uint64_t f0 = F.failures, i0 = F.iters, ok0 = F.ok_ret,
			 e0 = F.err_ret;

		fuzz_raw(layer_seed(seed, 2), n_raw);
		ok(F.failures == f0, "raw: %" PRIu64 " commands, %" PRIu64
		   " accepted, %" PRIu64 " refused", F.iters - i0,
		   F.ok_ret - ok0, F.err_ret - e0);
		fuzz_health("the raw layer");
	}
	if (layers & L_RING) {
		if (!F.is_tbrdma) {
			skip(1, "ring layer: %s is not a tbrdma device", dev);
		} else {
			uint64_t f0 = F.failures, i0 = F.iters,
				 c0 = F.completions, ec0 = F.err_completions;

			fuzz_ring(layer_seed(seed, 3), n_ring, racer);
			ok(F.failures == f0, "ring: %" PRIu64 " steps, %" PRIu64
			   " scribbles, %" PRIu64 " completions (%" PRIu64
			   " in error), %" PRIu64 " fatal events",
			   F.iters - i0, F.scribbles, F.completions - c0,
			   F.err_completions - ec0, F.fatal_events);
			fuzz_drain_async(F.v.ctx);
			fuzz_health("the ring layer");
		}
	}
	alarm(0);
	diag("%" PRIu64 " iterations in %ld s, %" PRIu64 " failures, seed %"
	     PRIu64, F.iters, (long)(time(NULL) - t0), F.failures, seed);
	vctx_close(&F.v);
	return done();
}
