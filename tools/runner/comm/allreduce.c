// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Mesh and ring all-reduce over a transport; see allreduce.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "comm/allreduce.h"

const char *tp_algo_name(enum tp_algo a)
{
	switch (a) {
	case TP_ALGO_AUTO: return "auto";
	case TP_ALGO_MESH: return "mesh";
	case TP_ALGO_RING: return "ring";
	}
	return "?";
}

enum tp_algo tp_ar_choose(enum tp_algo req, int nranks, size_t bytes,
			  size_t ring_min)
{
	if (req != TP_ALGO_AUTO)
		return req;
	/* with two ranks the ring moves as much as the mesh, in two steps */
	if (nranks <= 2 || bytes < ring_min)
		return TP_ALGO_MESH;
	return TP_ALGO_RING;
}

enum tp_algo tp_ar_algo(const struct tp_ar *ar, size_t bytes)
{
	if (ar->ring_only)
		return TP_ALGO_RING;
	return tp_ar_choose(ar->algo, ar->nranks, bytes, ar->ring_min);
}

int tp_ar_links_check(const struct tp_xport *x, enum tp_algo algo, char *err,
		      size_t errlen)
{
	int N = x->nranks, me = x->rank, p;
	int right = (me + 1) % N, left = (me + N - 1) % N;

	for (p = 0; p < N; p++) {
		if (p == me || x->link_mask >> p & 1)
			continue;
		if (algo == TP_ALGO_MESH) {
			snprintf(err, errlen,
				 "--algorithm mesh writes to every rank, and rank %d has no RDMA link to rank %d (reached over IP only): use ring or auto",
				 me, p);
			return -1;
		}
		if (p == right || p == left) {
			snprintf(err, errlen,
				 "rank %d has no RDMA link to rank %d, its neighbour in the ring of ranks 0..%d: number the ranks in the order of the cables (or give -d a device for it)",
				 me, p, N - 1);
			return -1;
		}
	}
	return 0;
}

void tp_ring_chunk(size_t n, int nranks, int i, size_t *off, size_t *len)
{
	size_t b = n * (size_t)i / (size_t)nranks;
	size_t e = n * (size_t)(i + 1) / (size_t)nranks;

	*off = b;
	*len = e - b;
}

/*
 * Send buffer:    [mesh: 2 halves x slot][ring: 2 x (2N-2) x chunk]
 * Receive buffer: [mesh: 2 halves x N slots][ring: same as send]
 * A mesh slot holds a vector of up to max_floats floats and, right after
 * the vector of a call, its sender's entry time (8 bytes). An algorithm
 * that cannot be chosen gets no area.
 */
#define STAMP_BYTES sizeof(uint64_t)

static size_t slot_bytes(size_t max_floats)
{
	return (max_floats * sizeof(float) + STAMP_BYTES + 63) & ~(size_t)63;
}

struct layout {
	size_t mesh_s, mesh_r, ring_s, ring_r, chunk_max, sbytes, rbytes;
};

static void layout(int N, enum tp_algo algo, size_t max_floats,
		   struct layout *l)
{
	size_t slot = slot_bytes(max_floats), ring = 0;

	l->chunk_max = (max_floats + (size_t)N - 1) / (size_t)N;
	if (algo != TP_ALGO_MESH && N >= 2)
		ring = 2 * (size_t)(2 * N - 2) * l->chunk_max * sizeof(float);
	l->mesh_s = 0;
	l->mesh_r = 0;
	l->ring_s = algo == TP_ALGO_RING ? 0 : 2 * slot;
	l->ring_r = algo == TP_ALGO_RING ? 0 : 2 * (size_t)N * slot;
	l->sbytes = l->ring_s + ring;
	l->rbytes = l->ring_r + ring;
}

void tp_ar_sizes(int nranks, enum tp_algo algo, size_t max_floats,
		 size_t *sbuf_bytes, size_t *rbuf_bytes)
{
	struct layout l;

	layout(nranks, algo, max_floats, &l);
	*sbuf_bytes = l.sbytes;
	*rbuf_bytes = l.rbytes;
}

void tp_ar_init(struct tp_ar *ar, struct tp_xport *x, enum tp_algo algo,
		size_t ring_min, size_t max_floats)
{
	struct layout l;

	memset(ar, 0, sizeof(*ar));
	ar->x = x;
	ar->rank = x->rank;
	ar->nranks = x->nranks;
	ar->algo = algo;
	ar->ring_min = ring_min;
	ar->max_floats = max_floats;
	ar->ring_only = x->nranks > 2 &&
			(x->link_mask | 1ull << x->rank) !=
			(x->nranks < 64 ? (1ull << x->nranks) - 1 : ~0ull);
	layout(x->nranks, algo, max_floats, &l);
	ar->mesh_s = l.mesh_s;
	ar->mesh_r = l.mesh_r;
	ar->ring_s = l.ring_s;
	ar->ring_r = l.ring_r;
	ar->chunk_max = l.chunk_max;
}

void tp_ar_stats_free(struct tp_ar_stats *st)
{
	free(st->us);
	free(st->late.v);
	free(st->xfer.v);
	st->us = st->late.v = st->xfer.v = NULL;
}

void tp_ar_free(struct tp_ar *ar)
{
	tp_ar_stats_free(&ar->st[0]);
	tp_ar_stats_free(&ar->st[1]);
	tp_ar_stats_free(&ar->st[2]);
}

/* The send buffer's mesh half PAR: this rank's vector of the call. */
static float *mesh_own(const struct tp_ar *ar, int par)
{
	return (float *)(ar->x->sbuf + ar->mesh_s +
			 (size_t)par * slot_bytes(ar->max_floats));
}

/*
 * O = (or += with ADD) A + B. Never the same memory (the slots are the
 * transport's), and in blocks of a fixed 8, which the compiler turns into
 * vector adds at -O2: element by element the same operations, so the
 * same bits, with a quarter of the instructions.
 */
static void sum2(float *restrict o, const float *restrict a,
		 const float *restrict b, size_t n, int add)
{
	size_t i, k;

	if (add) {
		for (i = 0; i + 8 <= n; i += 8)
			for (k = 0; k < 8; k++)
				o[i + k] += a[i + k] + b[i + k];
		for (; i < n; i++)
			o[i] += a[i] + b[i];
	} else {
		for (i = 0; i + 8 <= n; i += 8)
			for (k = 0; k < 8; k++)
				o[i + k] = a[i + k] + b[i + k];
		for (; i < n; i++)
			o[i] = a[i] + b[i];
	}
}

/* O += A, in blocks of 8 as sum2 (a + b and b + a are the same bits). */
static void add1(float *restrict o, const float *restrict a, size_t n)
{
	size_t i, k;

	for (i = 0; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			o[i + k] += a[i + k];
	for (; i < n; i++)
		o[i] += a[i];
}

/*
 * OUT = (or += with ADD) the sum of the N vectors S[0..N-1], in rank
 * order: ((s0 + s1) + s2) + ..., the same bits on every rank, and what
 * summing into a buffer and then adding that buffer would give.
 */
static void sum_slots(const float *const *s, int N, float *out, size_t n,
		      int add)
{
	size_t i;
	int r;

	if (N == 2) {	/* the common case, in one pass */
		sum2(out, s[0], s[1], n, add);
		return;
	}
	/* blocks of 8 again, through a local sum the compiler vectorises */
	for (i = 0; i + 8 <= n; i += 8) {
		float t[8];
		size_t k;

		for (k = 0; k < 8; k++)
			t[k] = s[0][i + k] + s[1][i + k];
		for (r = 2; r < N; r++)
			for (k = 0; k < 8; k++)
				t[k] += s[r][i + k];
		if (add)
			for (k = 0; k < 8; k++)
				out[i + k] += t[k];
		else
			for (k = 0; k < 8; k++)
				out[i + k] = t[k];
	}
	for (; i < n; i++) {
		float t = s[0][i] + s[1][i];

		for (r = 2; r < N; r++)
			t += s[r][i];
		out[i] = add ? out[i] + t : t;
	}
}

/*
 * IN goes out from the send buffer: it is copied there unless it is
 * there already (tp_ar_input). The sum goes to OUT, never to the send
 * buffer: our writes may still be in flight (a retransmission reads it).
 * Each vector carries its sender's entry time T0 (tp_now_ns): *LATE is
 * how much later than us the last peer entered (0 if none was later), a
 * figure that means something only where the ranks share a clock.
 */
static int mesh(struct tp_ar *ar, const float *in, float *out, size_t n,
		int add, uint64_t t0, double *late)
{
	struct tp_xport *x = ar->x;
	int N = ar->nranks, me = ar->rank, par = (int)(ar->calls & 1), k, r;
	size_t slot = slot_bytes(ar->max_floats), bytes = n * sizeof(float);
	size_t soff = ar->mesh_s + (size_t)par * slot;
	float *own = mesh_own(ar, par);
	const float *src[TP_MAX_RANKS];
	int64_t last = 0;

	if (x->ops->wait_sent(x, par))
		return -1;
	if (in != own)
		memcpy(own, in, bytes);
	memcpy((char *)own + bytes, &t0, STAMP_BYTES);
	for (k = 1; k < N; k++) {
		int p = (me + k) % N;

		if (x->ops->put(x, p, soff,
				ar->mesh_r + ((size_t)par * N + me) * slot,
				bytes + STAMP_BYTES, par))
			return -1;
	}
	for (k = 1; k < N; k++) {
		int p = (me + k) % N;

		if (x->ops->wait_recv(x, p, ++ar->expect[p]))
			return -1;
	}
	for (r = 0; r < N; r++) {
		uint64_t t;

		src[r] = r == me ? own :
			 (const float *)(x->rbuf + ar->mesh_r +
					 ((size_t)par * N + (size_t)r) * slot);
		memcpy(&t, (const char *)src[r] + bytes, STAMP_BYTES);
		if ((int64_t)(t - t0) > last)
			last = (int64_t)(t - t0);
	}
	*late = (double)last / 1000.0;
	sum_slots(src, N, out, n, add);
	return 0;
}

static int ring(struct tp_ar *ar, float *v, size_t n)
{
	struct tp_xport *x = ar->x;
	int N = ar->nranks, me = ar->rank, par = (int)(ar->calls & 1), k;
	int right = (me + 1) % N, left = (me + N - 1) % N, M = 2 * N - 2;
	size_t cs = ar->chunk_max * sizeof(float), off, len;
#define SOFF(m) (ar->ring_s + ((size_t)par * M + (size_t)(m)) * cs)
#define ROFF(m) (ar->ring_r + ((size_t)par * M + (size_t)(m)) * cs)
#define STAGE(m) ((float *)(x->sbuf + SOFF(m)))
#define RECV(m) ((const float *)(x->rbuf + ROFF(m)))

	if (x->ops->wait_sent(x, par))
		return -1;
	/* reduce-scatter: after step k we hold k+2 ranks' sum of a chunk */
	for (k = 0; k < N - 1; k++) {
		int c_s = (me + N - k) % N, c_r = (me + 2 * N - k - 1) % N;

		tp_ring_chunk(n, N, c_s, &off, &len);
		if (k == 0)
			memcpy(STAGE(0), v + off, len * sizeof(float));
		if (len && x->ops->put(x, right, SOFF(k), ROFF(k),
				       len * sizeof(float), par))
			return -1;
		tp_ring_chunk(n, N, c_r, &off, &len);
		if (!len)
			continue;
		if (x->ops->wait_recv(x, left, ++ar->expect[left]))
			return -1;
		if (k < N - 2) {
			float *out = STAGE(k + 1);

			sum2(out, RECV(k), v + off, len, 0);
		} else {	/* chunk c_r = me + 1 is complete */
			add1(v + off, RECV(k), len);
			memcpy(STAGE(N - 1), v + off, len * sizeof(float));
		}
	}
	/* all-gather: pass the complete chunks around */
	for (k = 0; k < N - 1; k++) {
		int m = N - 1 + k;
		int c_s = (me + 1 + N - k) % N, c_r = (me + N - k) % N;

		tp_ring_chunk(n, N, c_s, &off, &len);
		if (len && x->ops->put(x, right, SOFF(m), ROFF(m),
				       len * sizeof(float), par))
			return -1;
		tp_ring_chunk(n, N, c_r, &off, &len);
		if (!len)
			continue;
		if (x->ops->wait_recv(x, left, ++ar->expect[left]))
			return -1;
		memcpy(v + off, RECV(m), len * sizeof(float));
		if (k < N - 2)
			memcpy(STAGE(m + 1), RECV(m), len * sizeof(float));
	}
	return 0;
#undef SOFF
#undef ROFF
#undef STAGE
#undef RECV
}

static void record(double **v, size_t *n, size_t *cap, double us)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*v = realloc(*v, *cap * sizeof(double));
		if (!*v)
			tp_die("out of memory");
	}
	(*v)[(*n)++] = us;
}

/* OUT = (ADD: +=) the sum of IN over all ranks; IN may be clobbered. */
static int allreduce(struct tp_ar *ar, float *in, float *out, size_t n,
		     int add)
{
	struct tp_ar_stats *st = &ar->st[ar->phase];
	uint64_t t0 = tp_now_ns(), sent0 = ar->x->bytes_sent;
	double us, late = -1;
	enum tp_algo a;
	int r;

	if (n > ar->max_floats) {
		tp_err("all-reduce of %zu floats exceeds the %zu registered",
		       n, ar->max_floats);
		return -1;
	}
	a = tp_ar_algo(ar, n * sizeof(float));
	if (a == TP_ALGO_MESH) {
		r = mesh(ar, in, out, n, add, t0, &late);
	} else {
		r = ring(ar, in, n);
		if (!r && add)
			add1(out, in, n);	/* in is the caller's, not out */
		else if (!r && out != in)
			memcpy(out, in, n * sizeof(float));
	}
	ar->calls++;
	st->calls++;
	if (a == TP_ALGO_RING)
		st->ring++;
	else
		st->mesh++;
	/* the payload: the mesh's time stamps are not counted */
	st->bytes += ar->x->bytes_sent - sent0 -
		     (a == TP_ALGO_MESH ? (size_t)(ar->nranks - 1) * STAMP_BYTES : 0);
	us = (double)(tp_now_ns() - t0) / 1000.0;
	record(&st->us, &st->n, &st->cap, us);
	if (ar->same_clock && late >= 0) {
		if (late > us)
			late = us;
		record(&st->late.v, &st->late.n, &st->late.cap, late);
		record(&st->xfer.v, &st->xfer.n, &st->xfer.cap, us - late);
	}
	return r;
}

int tp_allreduce(struct tp_ar *ar, float *v, size_t n)
{
	if (ar->nranks == 1 || n == 0)
		return 0;
	return allreduce(ar, v, v, n, 0);
}

int tp_allreduce_add(struct tp_ar *ar, float *in, float *acc, size_t n)
{
	size_t i;

	if (ar->nranks > 1 && n)
		return allreduce(ar, in, acc, n, 1);
	for (i = 0; i < n; i++)
		acc[i] += in[i];
	return 0;
}

float *tp_ar_input(struct tp_ar *ar, size_t n)
{
	int par = (int)(ar->calls & 1);

	if (ar->nranks == 1 || n == 0 || n > ar->max_floats ||
	    tp_ar_algo(ar, n * sizeof(float)) != TP_ALGO_MESH)
		return NULL;
	/* the writes of two calls ago may still read it */
	if (ar->x->ops->wait_sent(ar->x, par))
		return NULL;	/* the all-reduce will report it */
	return mesh_own(ar, par);
}

int tp_ar_barrier(struct tp_ar *ar)
{
	struct tp_xport *x = ar->x;
	int N = ar->nranks, me = ar->rank, par = (int)(ar->calls & 1), k;

	if (ar->ring_only) {
		/* a float of every rank's has passed through every rank */
		float v[TP_MAX_RANKS] = { 0 };
		int phase = ar->phase, r;

		ar->phase = TP_PHASE_AUX;
		r = tp_allreduce(ar, v, (size_t)N);
		ar->phase = phase;
		return r;
	}

	for (k = 1; k < N; k++)
		if (x->ops->put(x, (me + k) % N, 0, 0, 0, par))
			return -1;
	for (k = 1; k < N; k++) {
		int p = (me + k) % N;

		if (x->ops->wait_recv(x, p, ++ar->expect[p]))
			return -1;
	}
	/* our empty writes done too, or the next call would wait for them */
	return x->ops->wait_sent(x, par);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double tp_percentile(const double *v, size_t n, double p)
{
	double *s, r;
	size_t k;

	if (!n)
		return 0;
	s = tp_calloc(n, sizeof(double));
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	k = k ? k - 1 : 0;
	if (k >= n)
		k = n - 1;
	r = s[k];
	free(s);
	return r;
}
