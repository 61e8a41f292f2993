// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_bench: what an MPI application sees of a transport, for
 * tests/bench/50-clients.sh (2 ranks):
 *
 *   latency    half the round trip of an 8-byte MPI_Send/MPI_Recv ping-pong,
 *              median over --iters;
 *   bandwidth  1 MiB messages, a window of 16 MPI_Isend/MPI_Irecv, MB/s of
 *              the median window;
 *   allreduce  MPI_Allreduce of 16 KiB of doubles (one decode step of a
 *              4096-wide model), median.
 *
 * Every message is checked (a wrong byte aborts the run: a fast wrong
 * answer is not a result).  Rank 0 prints one line:
 *   mpi_bench: lat_us=L bw_MBps=B allreduce_us=A
 *
 *   mpi_bench [--iters N]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BW_BYTES (1 << 20)
#define BW_WINDOW 16
#define AR_BYTES (16 << 10)
#define WARMUP 10

static int rank;

static void fail(const char *what, int iter)
{
	fprintf(stderr, "mpi_bench: rank %d: %s wrong in iteration %d\n", rank,
		what, iter);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static double pingpong_us(int iters, double *t)
{
	unsigned char msg[8];

	for (int i = -WARMUP; i < iters; i++) {
		double t0 = MPI_Wtime();

		if (rank == 0) {
			memset(msg, i & 0xff, sizeof(msg));
			MPI_Send(msg, sizeof(msg), MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(msg, sizeof(msg), MPI_BYTE, 1, 2, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (msg[0] != (unsigned char)~i || msg[7] != (unsigned char)~i)
				fail("ping-pong reply", i);
		} else {
			MPI_Recv(msg, sizeof(msg), MPI_BYTE, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (msg[0] != (unsigned char)i || msg[7] != (unsigned char)i)
				fail("ping-pong message", i);
			memset(msg, ~i & 0xff, sizeof(msg));
			MPI_Send(msg, sizeof(msg), MPI_BYTE, 0, 2, MPI_COMM_WORLD);
		}
		if (i >= 0)
			t[i] = (MPI_Wtime() - t0) * 1e6 / 2;
	}
	return median(t, iters);
}

static double bandwidth_mbps(int iters, double *t)
{
	unsigned char *buf = malloc((size_t)BW_BYTES * BW_WINDOW);
	MPI_Request req[BW_WINDOW];
	int bw_iters = iters / 10 > 4 ? iters / 10 : 4;

	if (!buf)
		fail("allocation", 0);
	for (int i = -2; i < bw_iters; i++) {
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int w = 0; w < BW_WINDOW; w++) {
			unsigned char *m = buf + (size_t)w * BW_BYTES;

			if (rank == 0) {
				m[0] = (unsigned char)(i + w);
				m[BW_BYTES - 1] = (unsigned char)(i - w);
				MPI_Isend(m, BW_BYTES, MPI_BYTE, 1, 3,
					  MPI_COMM_WORLD, &req[w]);
			} else {
				MPI_Irecv(m, BW_BYTES, MPI_BYTE, 0, 3,
					  MPI_COMM_WORLD, &req[w]);
			}
		}
		MPI_Waitall(BW_WINDOW, req, MPI_STATUSES_IGNORE);
		/* The window is complete when the receiver says so. */
		MPI_Barrier(MPI_COMM_WORLD);
		if (i >= 0)
			t[i] = MPI_Wtime() - t0;
		if (rank == 1)
			for (int w = 0; w < BW_WINDOW; w++) {
				unsigned char *m = buf + (size_t)w * BW_BYTES;

				if (m[0] != (unsigned char)(i + w) ||
				    m[BW_BYTES - 1] != (unsigned char)(i - w))
					fail("bandwidth message", i);
			}
	}
	free(buf);
	return (double)BW_BYTES * BW_WINDOW / median(t, bw_iters) / 1e6;
}

static double allreduce_us(int iters, double *t, int nranks)
{
	int n = AR_BYTES / sizeof(double);
	double *in = malloc(AR_BYTES), *out = malloc(AR_BYTES);

	if (!in || !out)
		fail("allocation", 0);
	for (int i = -WARMUP; i < iters; i++) {
		double t0;

		for (int k = 0; k < n; k++)
			in[k] = rank + k + i;
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (i >= 0)
			t[i] = (MPI_Wtime() - t0) * 1e6;
		/* Integers below 2^53: the sum is exact in any order. */
		for (int k = 0; k < n; k++)
			if (out[k] != (double)nranks * (nranks - 1) / 2 +
					      (double)nranks * (k + i))
				fail("allreduce sum", i);
	}
	free(in);
	free(out);
	return median(t, iters);
}

int main(int argc, char **argv)
{
	int iters = 1000, nranks;
	double lat, bw, ar, *t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atoi(argv[++i]);
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: mpi_bench [--iters N]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (nranks != 2 || iters < 10) {
		if (rank == 0)
			fprintf(stderr, "mpi_bench: 2 ranks and --iters >= 10\n");
		MPI_Finalize();
		return 2;
	}
	t = malloc(sizeof(*t) * (size_t)iters);
	if (!t)
		fail("allocation", 0);
	lat = pingpong_us(iters, t);
	bw = bandwidth_mbps(iters, t);
	ar = allreduce_us(iters, t, nranks);
	if (rank == 0)
		printf("mpi_bench: lat_us=%.2f bw_MBps=%.1f allreduce_us=%.2f\n",
		       lat, bw, ar);
	free(t);
	MPI_Finalize();
	return 0;
}
