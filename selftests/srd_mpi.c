// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An MPI program for srd_mpi.sh: a ping-pong between rank 0 and every
 * other rank, with every byte checked, over a range of sizes; then an
 * allreduce whose result every rank checks.  Prints one summary line per
 * rank ("rank R of N on HOST: ...") and exits non-zero on any mismatch.
 *
 *   srd_mpi [MAX_BYTES [ITERS]]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint8_t pattern(int round, int from, size_t i)
{
	return (uint8_t)(round * 31 + from * 7 + i * 13 + (i >> 10));
}

static void fill(uint8_t *b, size_t n, int round, int from)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = pattern(round, from, i);
}

/* The first differing offset, or -1. */
static long check(const uint8_t *b, size_t n, int round, int from)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != pattern(round, from, i))
			return (long)i;
	return -1;
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 1 << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 10;
	long long exchanges = 0, bad = 0;
	int rank, size, peer, it, round = 0;
	char host[64] = "?";
	uint8_t *buf;
	size_t n;
	double sum, want;
	long off;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	gethostname(host, sizeof(host) - 1);
	buf = malloc(max ? max : 1);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 2);

	/* Rank 0 ping-pongs with each other rank in turn; each checks. */
	for (peer = 1; peer < size; peer++) {
		for (n = 1; n <= max; n = n < 64 ? n * 8 : n * 4) {
			for (it = 0; it < iters; it++, round++) {
				if (rank == 0) {
					fill(buf, n, round, 0);
					MPI_Send(buf, (int)n, MPI_BYTE, peer, round,
						 MPI_COMM_WORLD);
					MPI_Recv(buf, (int)n, MPI_BYTE, peer, round,
						 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					off = check(buf, n, round, peer);
				} else if (rank == peer) {
					MPI_Recv(buf, (int)n, MPI_BYTE, 0, round,
						 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					off = check(buf, n, round, 0);
					fill(buf, n, round, peer);
					MPI_Send(buf, (int)n, MPI_BYTE, 0, round,
						 MPI_COMM_WORLD);
				} else {
					continue;
				}
				exchanges++;
				if (off >= 0) {
					bad++;
					fprintf(stderr, "rank %d: %zu bytes with %d, "
						"round %d: byte %ld differs\n", rank, n,
						rank ? 0 : peer, round, off);
				}
			}
		}
	}

	/* Every rank adds rank + 1: the sum is size * (size + 1) / 2. */
	sum = rank + 1;
	MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	want = size * (size + 1) / 2.0;

	printf("srd_mpi: rank %d of %d on %s: %lld exchanges up to %zu bytes, "
	       "%lld corrupt; allreduce %g (expected %g)\n", rank, size, host,
	       exchanges, max, bad, sum, want);
	fflush(stdout);
	free(buf);
	MPI_Finalize();
	return bad || sum != want ? 1 : 0;
}
