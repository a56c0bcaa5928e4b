// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * COUNT sends from an SRD QP on DEV_A to an SRD QP on DEV_B that has no
 * receive posted (rnr_retry 7, the default: retry forever).  Prints
 * "posted COUNT" and then holds them, failing if any completes, until a
 * line (or end of file) arrives on standard input; then it posts COUNT
 * receives on B's QP and checks that every send completes OK and every
 * message arrives once and intact.  srd_rnr_stuck.sh runs another user's
 * traffic between the same devices meanwhile (issue 46: no QP can stall
 * another).
 *
 *   srd_rnr_stuck [-m] [-n COUNT] [-t STALL_S] DEV_A IP_A DEV_B IP_B
 *
 * -m: also print "charged BYTES for COUNT sends", what the process's
 * memory cgroup (cgroup v2 memory.current) grew by while it posted them,
 * every ring and buffer being allocated before (srd_memcg.sh).
 * Prints "held S s, 0 completed" and "delivered D intact I dup U secs S",
 * and exits 0 when all went as said; 1 otherwise (no progress for STALL_S
 * seconds, default 120, after the receives are posted).
 */
#include <stdlib.h>
#include <unistd.h>

#include "srd_test.h"

#define STUCK_MAX_COUNT	4096
#define STUCK_MSG_BYTES	64

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-m] [-n COUNT] [-t STALL_S] DEV_A IP_A DEV_B IP_B\n", argv0);
	exit(KSFT_FAIL);
}

/* The calling process's cgroup v2 memory.current, in bytes. */
static long long memcg_current(void)
{
	char path[512] = "/sys/fs/cgroup", line[256];
	long long v = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "0::", 3))
		srd_die("/proc/self/cgroup: no cgroup v2 path", ENOENT);
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(path + strlen(path), sizeof(path) - strlen(path),
		 "%s/memory.current", line + 3);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%lld", &v) != 1)
		srd_die(path, errno ? errno : EIO);
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	uint32_t count = 1000, stall_s = 120, completed = 0, delivered = 0;
	uint32_t intact = 0, dups = 0, i, seq;
	struct ibv_qp_cap cap = { .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc[32];
	struct srd_ep A, B;
	struct srd_dest d;
	long long t0, last, mem0 = 0;
	bool memcg = false;
	uint8_t *seen;
	char line[64];
	int opt, n, k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "mn:t:")) != -1) {
		switch (opt) {
		case 'm': memcg = true; break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 't': stall_s = strtoul(optarg, NULL, 0); break;
		default: usage(argv[0]);
		}
	}
	if (argc - optind != 4 || !count || count > STUCK_MAX_COUNT || !stall_s ||
	    (size_t)count * STUCK_MSG_BYTES > SRD_BUF_SIZE)
		usage(argv[0]);
	argv += optind;
	srd_ep_open(&A, argv[0], argv[1]);
	srd_ep_open(&B, argv[2], argv[3]);
	seen = calloc(count, 1);
	scq = ibv_create_cq(A.ctx, count, NULL, NULL, 0);
	rcq = ibv_create_cq(B.ctx, count, NULL, NULL, 0);
	if (!seen || !scq || !rcq)
		srd_die("ibv_create_cq", errno ? errno : ENOMEM);
	cap.max_send_wr = count;
	cap.max_recv_wr = 1;
	qa = srd_qp_new(A.pd, scq, A.rcq, SRD_QP_SRD, 0, &cap);
	cap.max_send_wr = 1;
	cap.max_recv_wr = count;
	qb = srd_qp_new(B.pd, B.scq, rcq, SRD_QP_SRD, 0, &cap);
	if (!qa || !qb)
		srd_die("ibv_create_qp_ex(IBV_QPT_DRIVER)", errno);
	if (srd_qp_to_rts(qa, SRD_QKEY) || srd_qp_to_rts(qb, SRD_QKEY))
		srd_die("SRD QP to RTS", EINVAL);
	d = srd_dest(srd_ah(&A, &B), qb);

	/* The payloads' pages are the MR's, pinned already. */
	for (i = 0; i < count; i++)
		srd_fill(A.buf + (size_t)i * STUCK_MSG_BYTES, STUCK_MSG_BYTES, i);
	if (memcg)
		mem0 = memcg_current();
	for (i = 0; i < count; i++) {
		uint8_t *p = A.buf + (size_t)i * STUCK_MSG_BYTES;
		struct ibv_sge sg = { (uintptr_t)p, STUCK_MSG_BYTES, A.mr->lkey };
		int rc;

		rc = srd_post_send_sge(qa, i, d, &sg, 1, IBV_WR_SEND_WITH_IMM, i,
				       IBV_SEND_SIGNALED);
		if (rc)
			srd_die("ibv_post_send", rc);
	}
	if (memcg)
		printf("charged %lld for %u sends\n", memcg_current() - mem0, count);
	printf("posted %u\n", count);

	/* Held: nothing may complete, rnr_retry 7 retries forever. */
	t0 = srd_now_ms();
	for (;;) {
		n = ibv_poll_cq(scq, 32, wc);
		if (n) {
			printf("FAIL: a send to the QP with no receive completed (%s, vendor_err %u) after %lld ms\n",
			       n > 0 ? ibv_wc_status_str(wc[0].status) : "poll error",
			       n > 0 ? wc[0].vendor_err : 0, srd_now_ms() - t0);
			return KSFT_FAIL;
		}
		if (srd_fd_readable(0, 100)) {
			if (!fgets(line, sizeof(line), stdin))
				line[0] = 0;
			break;
		}
	}
	printf("held %lld s, 0 completed\n", (srd_now_ms() - t0) / 1000);

	for (i = 0; i < count; i++)
		if (srd_post_recv(qb, i, B.buf + (size_t)i * STUCK_MSG_BYTES,
				  STUCK_MSG_BYTES, B.mr->lkey))
			srd_die("ibv_post_recv", EINVAL);
	t0 = last = srd_now_ms();
	while (completed < count || delivered + dups < count) {
		n = ibv_poll_cq(scq, 32, wc);
		for (k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				printf("FAIL: send %llu completed %s (vendor_err %u)\n",
				       (unsigned long long)wc[k].wr_id,
				       ibv_wc_status_str(wc[k].status), wc[k].vendor_err);
				return KSFT_FAIL;
			}
			completed++;
			last = srd_now_ms();
		}
		n = ibv_poll_cq(rcq, 32, wc);
		for (k = 0; k < n; k++) {
			uint8_t *p = B.buf + (size_t)wc[k].wr_id * STUCK_MSG_BYTES;

			seq = ntohl(wc[k].imm_data);
			if (wc[k].status != IBV_WC_SUCCESS || seq >= count) {
				printf("FAIL: a receive completed %s, sequence %u\n",
				       ibv_wc_status_str(wc[k].status), seq);
				return KSFT_FAIL;
			}
			if (seen[seq]++) {
				dups++;
				continue;
			}
			delivered++;
			/* Receives are taken in posting order, not sequence. */
			if (wc[k].byte_len == STUCK_MSG_BYTES &&
			    srd_check_fill(p, STUCK_MSG_BYTES, seq) < 0)
				intact++;
			last = srd_now_ms();
		}
		if (srd_now_ms() - last > stall_s * 1000ll) {
			printf("FAIL: no progress for %u s: %u of %u sends completed, %u delivered\n",
			       stall_s, completed, count, delivered);
			break;
		}
	}
	printf("delivered %u intact %u dup %u secs %.1f\n", delivered, intact, dups,
	       (srd_now_ms() - t0) / 1000.0);
	return completed == count && delivered == count && intact == count && !dups ?
	       KSFT_PASS : KSFT_FAIL;
}
