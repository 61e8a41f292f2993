/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The all-reduce (sum of float vectors over N ranks), with two algorithms
 * over one small transport interface (RDMA, TCP, or threads in one
 * process for the unit tests).
 *
 * mesh  Every rank writes its whole vector into its own slot of every
 *       peer's receive buffer, then adds the N slots in rank order
 *       0..N-1: the same bits on every rank, in one round trip. Moves
 *       (N-1) x n per rank: the fit for small (decode-time) messages and
 *       for a fully cabled mesh, where each pair has its own link.
 * ring  Reduce-scatter then all-gather around the ring of ranks, in
 *       chunks of n/N: 2(N-1)/N x n per rank, 2(N-1) sequential steps.
 *       The fit for large (prefill) messages when the links are shared,
 *       and the only one for a cluster cabled as a ring (rank r to r+1
 *       and r-1 only): it writes to the right-hand neighbour alone.
 *       Each chunk is summed in a different order, but the all-gather
 *       hands every rank the same bits.
 *
 * Buffers are registered once, at start: a send buffer (what this rank
 * writes from) and a receive buffer (what peers write into), each split
 * in two halves used by alternate calls (the parity of the call number).
 *
 * Flow control, why two halves suffice without acknowledgements: a peer
 * P writes into our half h during call s and into the same half again at
 * call s+2. P starts call s+2 only after finishing call s+1, and P cannot
 * finish call s+1 without data we send in call s+1 (mesh: our vector;
 * ring: data that passed through us), which we send only after we have
 * finished call s, that is after we have consumed half h. On the send
 * side, a half is refilled two calls later, after waiting for the
 * completions of the writes that read it (wait_sent).
 */
#ifndef TPRUN_ALLREDUCE_H
#define TPRUN_ALLREDUCE_H

#include <stddef.h>
#include <stdint.h>

/* The most ranks tprun runs (the size of every per-rank array). */
#define TP_MAX_RANKS 64

enum tp_algo { TP_ALGO_AUTO, TP_ALGO_MESH, TP_ALGO_RING };

struct tp_xport;

struct tp_xport_ops {
	/*
	 * Write LEN bytes at SRC_OFF of our send buffer to DST_OFF of
	 * PEER's receive buffer. PEER counts one more message from us when
	 * all the bytes are there. PAR tags the write for wait_sent().
	 */
	int (*put)(struct tp_xport *x, int peer, size_t src_off,
		   size_t dst_off, size_t len, int par);
	/* Wait until COUNT messages from PEER have arrived in all. */
	int (*wait_recv)(struct tp_xport *x, int peer, uint64_t count);
	/* Wait until no write tagged PAR still reads the send buffer. */
	int (*wait_sent)(struct tp_xport *x, int par);
	void (*destroy)(struct tp_xport *x);
};

/* Every transport returns -1 after reporting the error (tp_err). */
struct tp_xport {
	const struct tp_xport_ops *ops;
	const char *name;
	int rank, nranks;
	unsigned char *sbuf, *rbuf;
	size_t sbuf_len, rbuf_len;
	uint64_t bytes_sent;
	uint64_t peer_bytes[TP_MAX_RANKS];	/* of them, to each peer */
	/* the peers put() reaches (RDMA: those with a device; TCP: all) */
	uint64_t link_mask;
	int lost_peer;		/* the peer a failure is about, or -1 */
	int timeout_ms;		/* longest wait for one message */
};

struct tp_samples {
	double *v;
	size_t n, cap;
};

/* Statistics of one phase (prefill or decode). */
struct tp_ar_stats {
	uint64_t calls, mesh, ring, bytes;
	double *us;		/* latency of each call */
	size_t n, cap;
	/*
	 * Mesh calls, where the ranks share a clock: how much later than
	 * this rank the last rank entered the call (waiting for peers), and
	 * the rest of the call (the transfer and the sum).
	 */
	struct tp_samples late, xfer;
};

struct tp_ar {
	struct tp_xport *x;
	int rank, nranks;
	enum tp_algo algo;
	size_t ring_min;	/* auto: ring from this many bytes, N > 2 */
	size_t max_floats, chunk_max;
	size_t mesh_s, mesh_r, ring_s, ring_r;	/* area offsets, bytes */
	uint64_t calls;
	uint64_t expect[TP_MAX_RANKS];
	int phase;		/* which st[] the calls are counted in */
	int ring_only;		/* links to the ring's neighbours only */
	int same_clock;		/* the ranks' tp_now_ns() compare (--local) */
	struct tp_ar_stats st[3];
};

#define TP_PHASE_PREFILL 0
#define TP_PHASE_DECODE 1
/* calls outside the layers (the logits gather): counted apart */
#define TP_PHASE_AUX 2

/* The buffer sizes a transport must provide for these parameters. */
void tp_ar_sizes(int nranks, enum tp_algo algo, size_t max_floats,
		 size_t *sbuf_bytes, size_t *rbuf_bytes);
void tp_ar_init(struct tp_ar *ar, struct tp_xport *x, enum tp_algo algo,
		size_t ring_min, size_t max_floats);
void tp_ar_free(struct tp_ar *ar);
void tp_ar_stats_free(struct tp_ar_stats *st);
/* Sum V (N floats) over all ranks, in place. 0, or -1 (reported). */
int tp_allreduce(struct tp_ar *ar, float *v, size_t n);
/*
 * ACC += the sum of IN (N floats) over all ranks (the model's residual
 * add, in the same pass as the sum); IN may be clobbered, and must not
 * overlap ACC. Without a copy
 * when IN is where tp_ar_input() said to build it.
 */
int tp_allreduce_add(struct tp_ar *ar, float *in, float *acc, size_t n);
/*
 * Where to build the input of the next all-reduce of N floats so that it
 * goes out without a copy (the mesh's half of the registered send
 * buffer), or NULL: build it anywhere. Valid until that all-reduce.
 */
float *tp_ar_input(struct tp_ar *ar, size_t n);
/* Every rank has arrived: one empty message to and from every peer
 * (a ring all-reduce of N floats where only the neighbours have links). */
int tp_ar_barrier(struct tp_ar *ar);
enum tp_algo tp_ar_choose(enum tp_algo req, int nranks, size_t bytes,
			  size_t ring_min);
/* What AR runs for BYTES: the ring, when not every pair has a link. */
enum tp_algo tp_ar_algo(const struct tp_ar *ar, size_t bytes);
/*
 * Whether the links of X (x->link_mask, as both ends of each pair agree)
 * carry ALGO: the mesh needs a link to every rank, the ring (and auto,
 * which then runs the ring only) to both neighbours. 0, or -1 and ERR.
 */
int tp_ar_links_check(const struct tp_xport *x, enum tp_algo algo, char *err,
		      size_t errlen);
const char *tp_algo_name(enum tp_algo a);
/* Chunk I of N floats in the ring: [off, off+len). */
void tp_ring_chunk(size_t n, int nranks, int i, size_t *off, size_t *len);

/* Percentile P (0..100, nearest rank) of the samples; 0 if none. */
double tp_percentile(const double *v, size_t n, double p);

/* In-process transport over threads (loopback.c), for the unit tests. */
struct tp_loop;
struct tp_loop *tp_loop_new(int nranks, size_t sbuf_bytes, size_t rbuf_bytes);
struct tp_xport *tp_loop_xport(struct tp_loop *l, int rank);
void tp_loop_free(struct tp_loop *l);

#endif /* TPRUN_ALLREDUCE_H */
