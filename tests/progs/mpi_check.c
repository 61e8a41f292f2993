// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_check: collectives and point-to-point through an MPI library, every
 * result checked against what it must be (180-mpi-ucx.sh runs it under Open
 * MPI's UCX PML on a tbrdma device).
 *
 *   mpi_check [--max BYTES] [--iters N]
 *
 * For every message size from 8 bytes up to --max (x8 each step):
 *  - MPI_Allreduce (sum) of int64 vectors whose elements depend on rank and
 *    index: the sum has a closed form;
 *  - MPI_Alltoall: block j of rank r's send buffer is a pattern of (r, j);
 *    block i of what it receives must be the pattern of (i, r);
 *  - point-to-point around a ring (MPI_Sendrecv) and a pairwise exchange
 *    with MPI_Isend/MPI_Irecv/MPI_Waitall, every byte checked;
 *  - MPI_Bcast from a rotating root.
 * Rank 0 prints one line per size and "mpi_check: PASS" at the end; any
 * mismatch prints where and exits 1 (MPI_Abort).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static void die(const char *what, size_t size, size_t at, long long got,
		long long want)
{
	fprintf(stderr,
		"mpi_check: rank %d: %s, %zu bytes: element %zu is %lld, want %lld\n",
		rank, what, size, at, got, want);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int from, int to, size_t i, int iter)
{
	return (unsigned char)(from * 131 + to * 71 + i * 13 + iter * 7 + 1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "mpi_check: out of memory (%zu bytes)\n", n);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return p;
}

static void check_allreduce(size_t size, int iter)
{
	size_t n = size / sizeof(int64_t), i;
	int64_t *in = xmalloc(n * sizeof(*in)), *out = xmalloc(n * sizeof(*out));

	for (i = 0; i < n; i++)
		in[i] = (int64_t)rank * 1000003 + (int64_t)i * (rank + 1) + iter;
	MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < n; i++) {
		/* sum over r of r*1000003 + i*(r+1) + iter */
		int64_t p = nranks;
		int64_t want = 1000003 * p * (p - 1) / 2 +
			       (int64_t)i * p * (p + 1) / 2 + p * iter;

		if (out[i] != want)
			die("MPI_Allreduce", size, i, out[i], want);
	}
	free(in);
	free(out);
}

static void check_alltoall(size_t size, int iter)
{
	unsigned char *s = xmalloc(size * nranks), *r = xmalloc(size * nranks);
	size_t i;
	int j;

	for (j = 0; j < nranks; j++)
		for (i = 0; i < size; i++)
			s[j * size + i] = pat(rank, j, i, iter);
	memset(r, 0, size * nranks);
	MPI_Alltoall(s, (int)size, MPI_BYTE, r, (int)size, MPI_BYTE,
		     MPI_COMM_WORLD);
	for (j = 0; j < nranks; j++)
		for (i = 0; i < size; i++)
			if (r[j * size + i] != pat(j, rank, i, iter))
				die("MPI_Alltoall", size, j * size + i,
				    r[j * size + i], pat(j, rank, i, iter));
	free(s);
	free(r);
}

static void check_ring(size_t size, int iter)
{
	unsigned char *s = xmalloc(size), *r = xmalloc(size);
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	size_t i;

	for (i = 0; i < size; i++)
		s[i] = pat(rank, next, i, iter);
	memset(r, 0, size);
	MPI_Sendrecv(s, (int)size, MPI_BYTE, next, 7, r, (int)size, MPI_BYTE,
		     prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < size; i++)
		if (r[i] != pat(prev, rank, i, iter))
			die("MPI_Sendrecv ring", size, i, r[i],
			    pat(prev, rank, i, iter));
	free(s);
	free(r);
}

/* Everyone sends to everyone with nonblocking calls. */
static void check_pairwise(size_t size, int iter)
{
	unsigned char *s = xmalloc(size * nranks), *r = xmalloc(size * nranks);
	MPI_Request *req = xmalloc(2 * nranks * sizeof(*req));
	size_t i;
	int j, n = 0;

	memset(r, 0, size * nranks);
	for (j = 0; j < nranks; j++) {
		for (i = 0; i < size; i++)
			s[j * size + i] = pat(rank, j, i, iter + 5);
		MPI_Irecv(r + j * size, (int)size, MPI_BYTE, j, 9,
			  MPI_COMM_WORLD, &req[n++]);
	}
	for (j = 0; j < nranks; j++)
		MPI_Isend(s + j * size, (int)size, MPI_BYTE, j, 9,
			  MPI_COMM_WORLD, &req[n++]);
	MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
	for (j = 0; j < nranks; j++)
		for (i = 0; i < size; i++)
			if (r[j * size + i] != pat(j, rank, i, iter + 5))
				die("MPI_Isend/MPI_Irecv", size, j * size + i,
				    r[j * size + i], pat(j, rank, i, iter + 5));
	free(s);
	free(r);
	free(req);
}

static void check_bcast(size_t size, int iter)
{
	unsigned char *b = xmalloc(size);
	int root = iter % nranks;
	size_t i;

	for (i = 0; i < size; i++)
		b[i] = rank == root ? pat(root, 0, i, iter) : 0;
	MPI_Bcast(b, (int)size, MPI_BYTE, root, MPI_COMM_WORLD);
	for (i = 0; i < size; i++)
		if (b[i] != pat(root, 0, i, iter))
			die("MPI_Bcast", size, i, b[i], pat(root, 0, i, iter));
	free(b);
}

int main(int argc, char **argv)
{
	size_t max = 1 << 20, size;
	int iters = 3, it, a;
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--max") && a + 1 < argc) {
			max = strtoul(argv[++a], NULL, 0);
		} else if (!strcmp(argv[a], "--iters") && a + 1 < argc) {
			iters = atoi(argv[++a]);
		} else {
			if (!rank)
				fprintf(stderr,
					"usage: mpi_check [--max BYTES] [--iters N]\n");
			MPI_Finalize();
			return 2;
		}
	}
	for (size = 8; size <= max; size *= 8) {
		t0 = MPI_Wtime();
		for (it = 0; it < iters; it++) {
			check_allreduce(size, it);
			check_alltoall(size, it);
			check_ring(size, it);
			check_pairwise(size, it);
			check_bcast(size, it);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (!rank)
			printf("mpi_check: %d ranks, %zu bytes: allreduce alltoall sendrecv isend/irecv bcast ok x%d (%.3f s)\n",
			       nranks, size, iters, MPI_Wtime() - t0);
	}
	if (!rank)
		printf("mpi_check: PASS\n");
	MPI_Finalize();
	return 0;
}
