// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An MPI benchmark for `make bench`'s fallback rows (scripts/bench-guest.sh
 * mpi_rows): the time of a ping-pong, an allreduce and an alltoall at each
 * size, the same program over whichever transport mpirun picks (mtl ofi +
 * efa on softsrd, or btl tcp), so that the two compare like for like.
 *
 *   srd_mpi_bench [MAX_BYTES [SECONDS]]
 *
 * Sizes: 8 B, then times 4 up to MAX_BYTES (default 1 MiB), and MAX_BYTES
 * itself.  Each (operation, size) gets one untimed warm-up call, then
 * batches of calls, each up to 4 times as many as the last, until one
 * batch takes SECONDS (default 0.25) on the slowest rank (every rank
 * learns that time, so all call alike); that batch is the figure.  A
 * call slower than SECONDS is measured once.  Operations:
 *
 *   pingpong   ranks i and i + N/2 in pairs, all pairs at once (with
 *              --host A:N/2,B:N/2 each pair spans the two hosts): the
 *              one-way time, half the round trip
 *   allreduce  MPI_Allreduce of SIZE bytes of int32 (MPI_SUM)
 *   alltoall   MPI_Alltoall of SIZE bytes to each rank
 *
 * Rank 0 prints a line per measurement, "srd_mpi_bench: OP SIZE ITERS
 * USEC" with USEC the slowest rank's mean time per call (per one-way
 * transfer for pingpong), and checks the allreduce's and the alltoall's
 * results at the end of each size; any wrong result exits 1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { PINGPONG, ALLREDUCE, ALLTOALL, NR_OPS };

static const char *const op_name[NR_OPS] = { "pingpong", "allreduce", "alltoall" };

static int rank, nranks;
static uint8_t *sbuf, *rbuf;

/* One call of @op at @n bytes. */
static void one(enum op op, size_t n)
{
	int half = nranks / 2, peer;

	switch (op) {
	case PINGPONG:
		if (rank < half) {
			peer = rank + half;
			MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank < 2 * half) {
			peer = rank - half;
			MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
		}
		break;
	case ALLREDUCE:
		MPI_Allreduce(sbuf, rbuf, (int)(n / sizeof(int32_t)), MPI_INT32_T,
			      MPI_SUM, MPI_COMM_WORLD);
		break;
	case ALLTOALL:
		MPI_Alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE,
			     MPI_COMM_WORLD);
		break;
	default:
		break;
	}
}

/* @k calls of @op at @n bytes, all ranks started together: this rank's seconds. */
static double timed(enum op op, size_t n, long k)
{
	double t0;
	long i;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < k; i++)
		one(op, n);
	return MPI_Wtime() - t0;
}

/* Whether the last call of @op at @n bytes left the right result in rbuf. */
static int result_ok(enum op op, size_t n)
{
	const int32_t *r = (const int32_t *)rbuf;
	size_t i, words = n / sizeof(int32_t);
	int p;

	switch (op) {
	case ALLREDUCE:
		/* Each rank's word i is rank + i: the sum is known. */
		for (i = 0; i < words; i++)
			if (r[i] != (int32_t)(nranks * (nranks - 1) / 2 + nranks * i))
				return 0;
		return 1;
	case ALLTOALL:
		/* Rank p's block for this rank starts with p's byte. */
		for (p = 0; p < nranks; p++)
			if (rbuf[p * n] != (uint8_t)(p * 16 + rank))
				return 0;
		return 1;
	default:
		return 1;
	}
}

/* The send buffer as result_ok expects it for @op at @n bytes. */
static void fill(enum op op, size_t n)
{
	int32_t *s = (int32_t *)sbuf;
	size_t i;
	int p;

	if (op == ALLREDUCE)
		for (i = 0; i < n / sizeof(int32_t); i++)
			s[i] = (int32_t)(rank + i);
	else if (op == ALLTOALL)
		for (p = 0; p < nranks; p++)
			sbuf[p * n] = (uint8_t)(rank * 16 + p);
}

/* At most this many calls in a batch. */
#define MAX_CALLS 100000

/* The next batch after @k calls took @took seconds: about @secs long, 4 * @k at most. */
static long next_k(long k, double secs, double took)
{
	double want = took > 0 ? k * secs / took * 1.2 : 4.0 * k;

	if (want > 4.0 * k)
		want = 4.0 * k;
	if (want > MAX_CALLS)
		want = MAX_CALLS;
	return want > k ? (long)want : k + 1;
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	double secs = argc > 2 ? atof(argv[2]) : 0.25;
	int bad = 0, ok, all_ok;
	size_t n, next;
	enum op op;
	double t, tmax = 0;
	long k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (max < 8 || nranks < 2 || nranks % 2) {
		if (!rank)
			fprintf(stderr, "srd_mpi_bench: MAX_BYTES >= 8 and an even rank count, please\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	sbuf = calloc(nranks, max);
	rbuf = calloc(nranks, max);
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 2);

	for (n = 8; n; n = next) {
		next = n == max ? 0 : n * 4 < max ? n * 4 : max;
		for (op = PINGPONG; op < NR_OPS; op++) {
			fill(op, n);
			one(op, n);
			/*
			 * Batches of calls, each up to 4 times the last, until
			 * one takes SECONDS on the slowest rank: its mean.
			 */
			for (k = 1;; k = next_k(k, secs, tmax)) {
				t = timed(op, n, k);
				MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX,
					      MPI_COMM_WORLD);
				if (tmax >= secs || k >= MAX_CALLS)
					break;
			}
			ok = result_ok(op, n);
			MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
			if (!all_ok)
				bad = 1;
			if (!rank) {
				printf("srd_mpi_bench: %s %zu %ld %.2f%s\n", op_name[op], n, k,
				       tmax / k * 1e6 / (op == PINGPONG ? 2 : 1),
				       all_ok ? "" : " WRONG RESULT");
				fflush(stdout);
			}
		}
	}
	if (!rank)
		printf("srd_mpi_bench: %d ranks, %s\n", nranks, bad ? "wrong results" : "results checked");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return bad;
}
