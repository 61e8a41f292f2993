// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: data integrity of the verbs data path on one device (loopback).
 *
 * P processes (fork) each run Q RC QP pairs (see integ.h for the topology)
 * and issue a seeded random mix of SEND, SEND_WITH_IMM, RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP and
 * ATOMIC_FETCH_AND_ADD: sizes 1 B..--max-size biased to small, random
 * offsets and 1..16-SGE lists, inline when small, signalled or not, post
 * lists.  Every byte that moves is checked against a pattern derived from
 * the seed and the op index, every destination is guarded by canaries, and
 * all processes hammer the same NCNT counters with atomics whose history is
 * then checked against a model (atomic_model.h).
 *
 * Usage: integrity [-d DEV] [-g GID_INDEX] [--seed N] [--ops N] [--qps N]
 *                  [--procs N] [--max-size BYTES[K|M]] [--timeout SECS]
 *                  [--stall SECS] [--no-fence] [--ack-timeout N]
 *                  [--dev2 DEV --gid2 GID_INDEX] [--bulk] [--min-bytes N]
 * --bulk: a data transfer instead of the mix: only SEND, RDMA_WRITE and
 * RDMA_READ, each of max-size/2..max-size bytes, every byte checked as
 * always.  With --dev2 the bytes are counted per direction (a WRITE or
 * SEND of an even process and a READ of an odd one move data from DEV to
 * DEV2), and --min-bytes N requires each direction to carry at least N.
 * Defaults: tbrlo0, GID 1, seed 1, 10^5 ops, 4 processes x 4 QP pairs,
 * 8 MiB.  Prints TAP; exit 0 only if everything was right.  A QP with no
 * completion for --stall seconds (60) fails the run and prints what every
 * unfinished QP waits for.
 *
 * Run time on rdma_rxe in the TCG guest (2 vCPUs): 10^5 ops, 4 x 4, up to
 * 256 KiB: 55-85 s (~900 MiB moved); 3000 ops up to 8 MiB, 2 x 2: 8-15 s.
 * Memory: 4 x max-size per QP pair (shared, pinned).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "integ.h"
#include "vutil.h"

struct shared *sh;
struct layout lay;
int me;

static const char *const names[NOPTYPES] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "CMP_AND_SWP", "FETCH_AND_ADD",
};

const char *op_name(int type)
{
	return type >= 0 && type < NOPTYPES ? names[type] : "?";
}

int op_recv(const struct op *op)
{
	return op->type == OP_SEND || op->type == OP_SEND_IMM ||
	       op->type == OP_WRITE_IMM;
}

long ops_for(const struct cfg *c, int p, int q)
{
	long pairs = (long)c->procs * c->qps, i = (long)p * c->qps + q;

	return c->ops / pairs + (i < c->ops % pairs);
}

/* Log-uniform in [lo, hi]: as many ops per octave, so small sizes dominate
 * while every size class up to hi still appears. */
static uint32_t log_uniform(struct rng *r, uint64_t lo, uint64_t hi)
{
	int a = 63 - __builtin_clzll(lo), b = 63 - __builtin_clzll(hi);
	int o = a + rnd_below(r, b - a + 1);
	uint64_t x = (1ull << o) > lo ? 1ull << o : lo;
	uint64_t y = (2ull << o) - 1 < hi ? (2ull << o) - 1 : hi;

	return x + rnd_below(r, y - x + 1);
}

void gen_op(struct rng *r, const struct cfg *c, struct op *op)
{
	static const uint8_t mix[20] = {	/* weights: 4 2 4 2 4 2 2 */
		OP_SEND, OP_SEND, OP_SEND, OP_SEND, OP_SEND_IMM, OP_SEND_IMM,
		OP_WRITE, OP_WRITE, OP_WRITE, OP_WRITE, OP_WRITE_IMM, OP_WRITE_IMM,
		OP_READ, OP_READ, OP_READ, OP_READ, OP_CAS, OP_CAS, OP_FAA, OP_FAA,
	};
	static const uint8_t bulk[3] = { OP_SEND, OP_WRITE, OP_READ };
	uint64_t u = rnd(r), m = c->max_size, s;

	if (c->bulk) {	/* a data transfer: big messages, no atomics */
		op->type = bulk[u % 3];
		op->key = rnd(r);
		op->imm = (uint32_t)rnd(r);
		op->size = m / 2 + rnd_below(r, m - m / 2 + 1);
		return;
	}
	op->type = mix[u % 20];
	if (!c->atomics && (op->type == OP_CAS || op->type == OP_FAA))
		op->type = OP_READ;
	op->key = rnd(r);
	op->imm = (uint32_t)rnd(r);
	u = rnd_below(r, 1000);
	if (u < 550)
		s = 1 + rnd_below(r, 64);
	else if (u < 800)
		s = 65 + rnd_below(r, 4096 - 64);
	else if (u < 970)
		s = log_uniform(r, 4097, 65536);
	else if (u < 997 || m <= 65536)
		s = log_uniform(r, 65537, m > 65537 ? m : 65537);
	else
		s = m;	/* the largest message, exactly */
	op->size = op->type == OP_CAS || op->type == OP_FAA ? 8 : s < m ? s : m;
}

void fail_op(const char *fmt, ...)
{
	struct result *res = &sh->res[me];
	char buf[sizeof(res->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# process %d: %s\n", me, buf);
	if (!res->failed) {
		memcpy(res->why, buf, sizeof(buf));
		res->failed = 1;
	}
	__atomic_store_n(&sh->abort, 1, __ATOMIC_SEQ_CST);
}

/* Sense-reversing barrier over shared memory; gives up on abort/timeout. */
static int barrier(int n, int timeout_ms)
{
	struct barrier *b = &sh->bar;
	int gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
	uint64_t end = now_ms() + timeout_ms;

	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == n) {
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&b->gen, 1, __ATOMIC_RELEASE);
		return 0;
	}
	while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen) {
		if (__atomic_load_n(&sh->abort, __ATOMIC_RELAXED) || now_ms() > end)
			return -1;
		sched_yield();
	}
	return 0;
}

struct proc {
	struct vctx v;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *rq[MAX_QPS], *pq[MAX_QPS];	/* requester, responder */
	struct req *req[MAX_QPS];
	struct resp *resp[MAX_QPS];
	struct ibv_mr *cmr;
};

static struct ibv_qp *make_qp(struct proc *p)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = p->scq, .recv_cq = p->rcq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH,
			.max_send_sge = p->v.attr.max_sge < MAX_SGE ? p->v.attr.max_sge : MAX_SGE,
			.max_recv_sge = p->v.attr.max_sge < MAX_SGE ? p->v.attr.max_sge : MAX_SGE,
			.max_inline_data = 256,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(p->pd, &ia);

	if (!qp) {	/* a device may offer less inline data: not an error */
		ia.cap.max_inline_data = 0;
		qp = ibv_create_qp(p->pd, &ia);
	}
	return qp;
}

/* Set-up: objects, exchange through shared memory, connect. */
static int setup(struct cfg *c, struct proc *p)
{
	int ncqe = 2 * c->qps * (SQ_DEPTH + RQ_DEPTH), err, q;
	int next = (me + 1) % c->procs, prev = (me + c->procs - 1) % c->procs;
	struct conn cn;

	const char *dev = (me & 1) && c->dev2 ? c->dev2 : c->dev;
	int gid_index = (me & 1) && c->dev2 ? c->gid_index2 : c->gid_index;

	if (vctx_open(&p->v, dev, gid_index))
		return fail_op("cannot open %s", dev), -1;
	sh->pub[me].gid = p->v.gid;
	p->pd = ibv_alloc_pd(p->v.ctx);
	p->scq = p->pd ? ibv_create_cq(p->v.ctx, ncqe, NULL, NULL, 0) : NULL;
	/* Odd processes put sends and receives on one CQ, even ones on two. */
	p->rcq = me & 1 ? p->scq : p->scq ? ibv_create_cq(p->v.ctx, ncqe, NULL, NULL, 0) : NULL;
	p->cmr = p->rcq ? ibv_reg_mr(p->pd, lay.cnt_page, 4096,
				     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
				     IBV_ACCESS_REMOTE_READ) : NULL;
	if (!p->cmr)
		return fail_op("PD/CQ/counter MR creation failed: %s", strerror(errno)), -1;
	sh->pub[me].cnt_rkey = p->cmr->rkey;
	for (q = 0; q < c->qps; q++) {
		p->rq[q] = make_qp(p);
		p->pq[q] = p->rq[q] ? make_qp(p) : NULL;
		if (!p->pq[q])
			return fail_op("ibv_create_qp: %s", strerror(errno)), -1;
		sh->pub[me].req_qpn[q] = p->rq[q]->qp_num;
		sh->pub[me].resp_qpn[q] = p->pq[q]->qp_num;
		p->resp[q] = resp_new(c, q, p->pd, p->pq[q]);
		if (!p->resp[q])
			return -1;
	}
	if (barrier(c->procs, 60000))
		return fail_op("set-up barrier: another process failed or hung"), -1;
	conn_defaults(&cn, &p->v);
	cn.timeout = c->ack_timeout;
	for (q = 0; q < c->qps; q++) {
		cn.dgid = &sh->pub[next].gid;
		err = qp_connect(p->rq[q], &p->v, sh->pub[next].resp_qpn[q], &cn);
		cn.dgid = &sh->pub[prev].gid;
		if (!err)
			err = qp_connect(p->pq[q], &p->v, sh->pub[prev].req_qpn[q], &cn);
		if (err)
			return fail_op("connecting QP pair %d: %s", q, strerror(err)), -1;
		p->req[q] = req_new(c, q, p->pd, p->rq[q]);
		if (!p->req[q] || resp_replenish(p->resp[q]))
			return -1;
	}
	if (barrier(c->procs, 60000))
		return fail_op("connect barrier: another process failed or hung"), -1;
	return 0;
}

static int dispatch(const struct cfg *c, struct proc *p, const struct ibv_wc *wc)
{
	for (int q = 0; q < c->qps; q++) {
		if (wc->qp_num == p->rq[q]->qp_num)
			return req_complete(p->req[q], wc);
		if (wc->qp_num == p->pq[q]->qp_num)
			return resp_complete(p->resp[q], wc);
	}
	fail_op("completion for unknown QP %u (status %s)", wc->qp_num,
		ibv_wc_status_str(wc->status));
	return -1;
}

/* What every unfinished QP waits for (on a stall or an abort). */
static void dump_state(const struct cfg *c, struct proc *p)
{
	char buf[1024];

	for (int q = 0; q < c->qps; q++) {
		if (!req_done(p->req[q])) {
			req_state(p->req[q], buf, sizeof(buf));
			fprintf(stderr, "# process %d: %s (QP state %d)\n", me, buf,
				qp_state(p->rq[q]));
		}
		if (!resp_done(p->resp[q])) {
			resp_state(p->resp[q], buf, sizeof(buf));
			fprintf(stderr, "# process %d: %s (QP state %d)\n", me, buf,
				qp_state(p->pq[q]));
		}
	}
}

static int run(const struct cfg *c, struct proc *p)
{
	uint64_t last = now_ms();
	struct ibv_wc wc[16];

	for (;;) {
		int done = 1, got = 0, n, q;

		if (__atomic_load_n(&sh->abort, __ATOMIC_RELAXED)) {
			if (!sh->res[me].failed)
				dump_state(c, p);
			return -1;
		}
		for (q = 0; q < c->qps; q++) {
			if (req_idle_post(p->req[q]) || resp_replenish(p->resp[q]))
				return -1;
			done &= req_done(p->req[q]) && resp_done(p->resp[q]);
		}
		if (done)
			return 0;
		for (struct ibv_cq *cq = p->scq; cq; cq = cq == p->rcq ? NULL : p->rcq) {
			n = ibv_poll_cq(cq, 16, wc);
			if (n < 0)
				return fail_op("ibv_poll_cq: %d", n), -1;
			for (int i = 0; i < n; i++)
				if (dispatch(c, p, &wc[i]))
					return -1;
			got += n;
		}
		if (got) {
			last = now_ms();
		} else if (now_ms() - last > (uint64_t)c->stall_ms) {
			dump_state(c, p);
			return fail_op("no completion for %d s: stalled", c->stall_ms / 1000), -1;
		} else {
			sched_yield();
		}
	}
}

static void teardown(const struct cfg *c, struct proc *p)
{
	/* Orderly destruction exercises the destroy paths; the kernel would
	 * clean up at exit anyway. */
	for (int q = 0; q < c->qps; q++) {
		if (p->rq[q])
			ibv_destroy_qp(p->rq[q]);
		if (p->pq[q])
			ibv_destroy_qp(p->pq[q]);
	}
	if (p->cmr)
		ibv_dereg_mr(p->cmr);
	/* The rest (MRs, CQs, PD, context) goes when the process exits. */
}

static int child(struct cfg *c)
{
	struct proc p = {};
	int err = setup(c, &p);

	if (!err)
		err = run(c, &p);
	if (!err)
		sh->res[me].finished = 1;
	/* A responder must outlive its requester's last ACK: a lost ACK means
	 * a retransmission that only a live QP answers. */
	if (!err && barrier(c->procs, c->stall_ms))
		fail_op("final barrier: another process did not finish");
	teardown(c, &p);
	return err ? 1 : 0;
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v <<= 10; break;
	case 'm': case 'M': v <<= 20; break;
	case 'g': case 'G': v <<= 30; break;
	}
	return v;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-d DEV] [-g GID_INDEX] [--seed N] [--ops N] [--qps N]\n"
		"       [--procs N] [--max-size BYTES[K|M]] [--timeout SECS] [--stall SECS]\n"
		"       [--no-fence] [--ack-timeout N] [--dev2 DEV --gid2 GID_INDEX]\n"
		"       [--bulk] [--min-bytes BYTES[K|M|G]]\n"
		"--dev2: odd processes use DEV (two hosts: every QP pair crosses)\n"
		"--bulk: only SEND, WRITE, READ of max-size/2..max-size bytes\n",
		prog);
	exit(2);
}

static void parse(int argc, char **argv, struct cfg *c, int *timeout)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "gid", 1, NULL, 'g' },
		{ "dev2", 1, NULL, 'D' }, { "gid2", 1, NULL, 'G' },
		{ "seed", 1, NULL, 's' }, { "ops", 1, NULL, 'n' },
		{ "qps", 1, NULL, 'q' }, { "procs", 1, NULL, 'p' },
		{ "max-size", 1, NULL, 'm' }, { "timeout", 1, NULL, 't' },
		{ "stall", 1, NULL, 'S' }, { "no-fence", 0, NULL, 'F' },
		{ "ack-timeout", 1, NULL, 'A' }, { "bulk", 0, NULL, 'B' },
		{ "min-bytes", 1, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	int o;

	*c = (struct cfg){ .seed = 1, .ops = 100000, .qps = 4, .procs = 4,
			   .max_size = 8 << 20, .dev = "tbrlo0", .gid_index = 1,
			   .stall_ms = 60000, .fence = 1, .ack_timeout = 14 };
	*timeout = 900;
	while ((o = getopt_long(argc, argv, "d:g:", lo, NULL)) != -1) {
		switch (o) {
		case 'd': c->dev = optarg; break;
		case 'g': c->gid_index = atoi(optarg); break;
		case 'D': c->dev2 = optarg; break;
		case 'G': c->gid_index2 = atoi(optarg); break;
		case 's': c->seed = strtoull(optarg, NULL, 0); break;
		case 'n': c->ops = strtol(optarg, NULL, 0); break;
		case 'q': c->qps = atoi(optarg); break;
		case 'p': c->procs = atoi(optarg); break;
		case 'm': c->max_size = parse_size(optarg); break;
		case 't': *timeout = atoi(optarg); break;
		case 'S': c->stall_ms = atoi(optarg) * 1000; break;
		case 'F': c->fence = 0; break;
		case 'A': c->ack_timeout = atoi(optarg); break;
		case 'B': c->bulk = 1; break;
		case 'M': c->min_bytes = parse_size(optarg); break;
		default: usage(argv[0]);
		}
	}
	if (optind != argc || c->ops < 1 || c->qps < 1 || c->qps > MAX_QPS ||
	    c->procs < 1 || c->procs > MAX_PROCS || c->max_size < 1 ||
	    (c->dev2 && c->procs % 2) || c->ack_timeout < 1 || c->ack_timeout > 31 ||
	    c->max_size > (1u << 30))
		usage(argv[0]);
}

/* Device capabilities every process must agree on. */
static int probe(struct cfg *c)
{
	struct vctx v;

	if (vctx_open(&v, c->dev, c->gid_index))
		return -1;
	c->atomics = v.attr.atomic_cap != IBV_ATOMIC_NONE;
	c->send_sge = c->recv_sge = v.attr.max_sge < MAX_SGE ? v.attr.max_sge : MAX_SGE;
	c->read_sge = v.attr.max_sge_rd ? v.attr.max_sge_rd : v.attr.max_sge;
	if (c->read_sge > c->send_sge)
		c->read_sge = c->send_sge;
	if (c->max_size > v.port.max_msg_sz) {
		diag("--max-size %zu is above the port's max_msg_sz %u: using that",
		     c->max_size, v.port.max_msg_sz);
		c->max_size = v.port.max_msg_sz;
	}
	diag("device %s: max_sge %d, max_sge_rd %d, atomic_cap %d, max_qp_rd_atom %d, active_mtu %d",
	     c->dev, v.attr.max_sge, v.attr.max_sge_rd, v.attr.atomic_cap,
	     v.attr.max_qp_rd_atom, 128 << v.port.active_mtu);
	vctx_close(&v);
	return 0;
}

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bail_out("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

static void allocate(struct cfg *c)
{
	size_t pg = 4096;
	struct rng r;

	c->lsize = c->rsize = (c->max_size + 16384 + pg - 1) & ~(pg - 1);
	c->vsize = (2 * c->max_size + 65536 + pg - 1) & ~(pg - 1);
	sh = map(sizeof(*sh));
	lay.logcap = c->ops / c->procs + c->qps + 1;
	for (int p = 0; p < c->procs; p++) {
		lay.log[p] = map(lay.logcap * sizeof(struct alog));
		for (int q = 0; q < c->qps; q++) {
			lay.L[p][q] = map(c->lsize);
			lay.R[p][q] = map(c->rsize);
			lay.V[p][q] = map(c->vsize);
		}
	}
	lay.cnt_page = map(pg);
	memset(lay.cnt_page, CANARY, pg);
	rng_seed(&r, c->seed, 0xA70, 0);
	for (int i = 0; i < NCNT; i++) {
		/* High bits set: a 32-bit or truncating implementation shows. */
		sh->cnt_init[i] = 0xA5A5000000000000ull | (rnd(&r) >> 20);
		*counter_addr(&lay, i) = sh->cnt_init[i];
	}
}

/* Wait for every child; kill them all if the run takes too long. */
static void reap(pid_t *pid, int n, int *status, int timeout)
{
	uint64_t end = now_ms() + 1000ull * timeout;
	int left = n, killed = 0;

	while (left) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);

		if (w > 0) {
			for (int i = 0; i < n; i++)
				if (pid[i] == w)
					status[i] = st;
			left--;
			continue;
		}
		if (!killed && now_ms() > end) {
			diag("timeout after %d s: killing the processes", timeout);
			__atomic_store_n(&sh->abort, 1, __ATOMIC_SEQ_CST);
			usleep(2000000);
			for (int i = 0; i < n; i++)
				kill(pid[i], SIGKILL);
			killed = 1;
		}
		usleep(10000);
	}
}

static void check_atomics(const struct cfg *c)
{
	static struct alog buf[1];
	struct alog *all;
	long total = 0;

	for (int p = 0; p < c->procs; p++)
		total += sh->nlog[p];
	all = total ? malloc(total * sizeof(*all)) : buf;
	if (!all)
		bail_out("out of memory");
	for (int i = 0; i < NCNT; i++) {
		struct model_result m;
		uint64_t final = *counter_addr(&lay, i);
		long n = 0;

		for (int p = 0; p < c->procs; p++)
			for (long k = 0; k < sh->nlog[p]; k++)
				if (lay.log[p][k].counter == i)
					all[n++] = lay.log[p][k];
		int bad = model_check(all, n, sh->cnt_init[i], final, &m);

		if (!ok(!bad,
			"counter %d: %ld FETCH_AND_ADD + %ld CMP_AND_SWP (%ld swapped) from %d processes consistent, final 0x%" PRIx64,
			i, m.faa, m.cas, m.cas_ok, c->procs, final))
			diag("  %s", m.why);
	}
	/* Counters sit at byte 24 of 64-byte lines; all else must be canary. */
	long bad = -1;

	for (int i = 0; i < 4096 && bad < 0; i++)
		if ((i % 64 < 24 || i % 64 >= 32 || i / 64 >= NCNT) &&
		    lay.cnt_page[i] != CANARY)
			bad = i;
	if (!ok(bad < 0, "atomics changed no byte next to the counters"))
		diag("  byte %ld of the counter page is 0x%02x", bad, lay.cnt_page[bad]);
	if (all != buf)
		free(all);
}

int main(int argc, char **argv)
{
	struct cfg c;
	pid_t pid[MAX_PROCS];
	int status[MAX_PROCS], timeout;
	long ops = 0, recvs = 0, atomics = 0;
	uint64_t bytes = 0, t0, dir[2] = { 0, 0 };
	int all_done = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse(argc, argv, &c, &timeout);
	if (probe(&c))
		bail_out("cannot use device %s", c.dev);
	diag("seed %" PRIu64 ", %ld ops, %d processes x %d QP pairs, sizes 1..%zu, atomics %s",
	     c.seed, c.ops, c.procs, c.qps, c.max_size, c.atomics ? "on" : "off (device has none)");
	allocate(&c);
	t0 = now_ms();
	for (int p = 0; p < c.procs; p++) {
		fflush(NULL);
		pid[p] = fork();
		if (pid[p] < 0)
			bail_out("fork: %s", strerror(errno));
		if (pid[p] == 0) {
			me = p;
			_exit(child(&c));
		}
	}
	reap(pid, c.procs, status, timeout);
	t0 = now_ms() - t0;

	for (int p = 0; p < c.procs; p++) {
		struct result *r = &sh->res[p];

		ok(WIFEXITED(status[p]) && WEXITSTATUS(status[p]) == 0 &&
		   r->finished && !r->failed,
		   "process %d: %ld ops (%ld receives, %ld atomics, %.1f MiB) all verified",
		   p, r->ops, r->recvs, r->atomics, r->bytes / 1048576.0);
		if (r->failed)
			diag("  %s", r->why);
		else if (!WIFEXITED(status[p]))
			diag("  killed by signal %d", WTERMSIG(status[p]));
		else if (!r->finished)
			diag("  stopped because another process failed");
		all_done &= r->finished && !r->failed;
		ops += r->ops;
		recvs += r->recvs;
		atomics += r->atomics;
		bytes += r->bytes;
		/* dir[0]: DEV -> DEV2 (or all of it on one device) */
		dir[p & 1] += r->bytes_out;
		dir[!(p & 1)] += r->bytes_in;
	}
	if (c.dev2) {
		diag("%s -> %s: %.1f MiB, %s -> %s: %.1f MiB, every byte checked",
		     c.dev, c.dev2, dir[0] / 1048576.0, c.dev2, c.dev,
		     dir[1] / 1048576.0);
	} else {
		dir[0] += dir[1];
		dir[1] = dir[0];
	}
	if (c.min_bytes)
		ok(dir[0] >= c.min_bytes && dir[1] >= c.min_bytes,
		   "each direction moved at least %.1f MiB (%.1f and %.1f)",
		   c.min_bytes / 1048576.0, dir[0] / 1048576.0,
		   dir[1] / 1048576.0);
	is_int(ops, c.ops, "every op was issued and checked");
	if (c.atomics && all_done)
		check_atomics(&c);
	else if (c.atomics)	/* atomics in flight were never logged */
		skip(NCNT + 1, "atomic model: not every process finished");
	diag("%ld ops (%ld receives, %ld atomics), %.1f MiB in %.1f s: %.0f ops/s",
	     ops, recvs, atomics, bytes / 1048576.0, t0 / 1000.0,
	     t0 ? ops * 1000.0 / t0 : 0);
	return done();
}
