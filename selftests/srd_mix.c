// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One SRD QP pair, A to B, COUNT messages of sizes drawn from SEED in
 * 1..MAX bytes, WINDOW in flight; B keeps RECVS receives posted, checks
 * each message (its size, every byte, and that it came once) and posts the
 * receive again.  With -a, B also answers each message it takes with an
 * empty SEND back to A (at most 256 unanswered at once), as an RPC server
 * would, so that B's ACKs wait for the answers (docs/protocol.md,
 * "Receiver").  With -d USEC, B is a slow receiver in a thread of its own:
 * it spends USEC on each message before it posts the receive again, so A
 * keeps finding B without a receive (RNR).  srd_multipath_mix.sh runs it
 * over a lossy multipath fabric.
 *
 *   srd_mix [-n COUNT] [-m MAX] [-w WINDOW] [-r RECVS] [-s SEED]
 *           [-t STALL_S] [-a | -d USEC] DEV_A IP_A DEV_B IP_B
 *
 * Prints "sent N delivered D intact I dup U answers A secs S" and exits 0
 * when every message was delivered once and intact and every send
 * completed OK.  It gives up (exit 1) on an error completion or when no
 * message completes for STALL_S seconds (default 60), and then says how
 * far it got.
 */
#include <pthread.h>
#include <stdlib.h>

#include "srd_test.h"

#define MIX_MAX_COUNT	100000
#define MIX_MAX_SIZE	(1u << 20)

/* B, the receiving side: what it has taken so far. */
struct mix_rx {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint8_t *seen;		/* one byte per sequence number */
	uint64_t seed;
	uint32_t count, max;
	uint32_t delay_us;	/* -d: spent on each message */
	uint32_t delivered, intact, dups;	/* atomic when B has a thread */
	long long last;		/* when B last took a message, ms */
	bool failed;		/* B took a bad message */
	bool stop;		/* A gave up: B's thread ends */
};

/* The size of message @seq: splitmix64 of (seed, seq), in 1..max. */
static uint32_t mix_size(uint64_t seed, uint32_t seq, uint32_t max)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + seq;

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return 1 + (uint32_t)(x % max);
}

#define MIX_LOAD(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define MIX_STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/*
 * B takes one receive completion: checks the message (its size, every byte,
 * that it came once), spends rx->delay_us on it and posts the receive again.
 * Returns its sequence number, or -1 (and sets rx->failed) on a bad one.
 */
static long mix_take(struct mix_rx *rx, const struct ibv_wc *wc)
{
	uint8_t *p = rx->buf + (size_t)wc->wr_id * rx->max;
	uint32_t seq, len;

	if (wc->status != IBV_WC_SUCCESS) {
		printf("FAIL: receive completed %s\n", ibv_wc_status_str(wc->status));
		goto fail;
	}
	seq = ntohl(wc->imm_data);
	if (!(wc->wc_flags & IBV_WC_WITH_IMM) || seq >= rx->count) {
		printf("FAIL: a receive without a valid sequence (%u)\n", seq);
		goto fail;
	}
	if (rx->seen[seq]) {
		MIX_STORE(rx->dups, rx->dups + 1);
	} else {
		rx->seen[seq] = 1;
		len = mix_size(rx->seed, seq, rx->max);
		if (wc->byte_len == len && srd_check_fill(p, len, seq) < 0)
			MIX_STORE(rx->intact, rx->intact + 1);
		else
			printf("# message %u: %u bytes received, %u sent, or its bytes differ\n",
			       seq, wc->byte_len, len);
		MIX_STORE(rx->delivered, rx->delivered + 1);
	}
	if (rx->delay_us)
		usleep(rx->delay_us);
	if (srd_post_recv(rx->qp, wc->wr_id, p, rx->max, rx->mr->lkey))
		srd_die("ibv_post_recv", EINVAL);
	MIX_STORE(rx->last, srd_now_ms());
	return seq;
fail:
	MIX_STORE(rx->failed, true);
	return -1;
}

/* B in a thread of its own (-d): takes messages until all came or one failed. */
static void *mix_rx_thread(void *arg)
{
	struct mix_rx *rx = arg;
	struct ibv_wc wc;

	while (MIX_LOAD(rx->delivered) + MIX_LOAD(rx->dups) < rx->count &&
	       !MIX_LOAD(rx->failed) && !MIX_LOAD(rx->stop))
		if (ibv_poll_cq(rx->cq, 1, &wc) == 1 && mix_take(rx, &wc) < 0)
			break;
	return NULL;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-n COUNT] [-m MAX] [-w WINDOW] [-r RECVS] [-s SEED] "
		"[-t STALL_S] [-a | -d USEC] DEV_A IP_A DEV_B IP_B\n", argv0);
	exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	uint32_t count = 2000, max = 65536, window = 16, recvs = 16, stall_s = 60;
	uint32_t sent = 0, completed = 0;
	struct ibv_qp_cap cap = { .max_send_sge = 1, .max_recv_sge = 1 };
	struct mix_rx rx = { 0 };
	struct srd_ep A, B;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *amr, *bmr;
	struct ibv_ah *ah;
	struct ibv_wc wc[32];
	struct srd_dest d;
	uint8_t *abuf, *bbuf, *seen;
	uint32_t free_slots[256], nfree = 0;
	uint64_t seed = 1;
	bool answer = false;
	uint32_t answers = 0, ans_out = 0, delay_us = 0;
	struct ibv_ah *ah_ba = NULL;
	struct srd_dest dba;
	pthread_t rx_thread;
	long long t0, last;
	uint32_t i, len;
	long seq;
	int opt, n, k, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "n:m:w:r:s:t:ad:")) != -1) {
		switch (opt) {
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'm': max = strtoul(optarg, NULL, 0); break;
		case 'w': window = strtoul(optarg, NULL, 0); break;
		case 'r': recvs = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': stall_s = strtoul(optarg, NULL, 0); break;
		case 'a': answer = true; break;
		case 'd': delay_us = strtoul(optarg, NULL, 0); break;
		default: usage(argv[0]);
		}
	}
	if (argc - optind != 4 || !count || count > MIX_MAX_COUNT || max < 4 ||
	    max > MIX_MAX_SIZE || !window || window > 256 || !recvs || recvs > 256 ||
	    !stall_s || (answer && delay_us) || delay_us > 1000000)
		usage(argv[0]);
	argv += optind;
	srd_ep_open(&A, argv[0], argv[1]);
	srd_ep_open(&B, argv[2], argv[3]);
	if (max > A.dev.max_mr_size || max > B.dev.max_mr_size)
		srd_die("message size above the device's", EINVAL);

	cap.max_send_wr = window;
	cap.max_recv_wr = 256;
	qa = srd_qp_new(A.pd, A.scq, A.rcq, SRD_QP_SRD, 0, &cap);
	cap.max_send_wr = 256;
	cap.max_recv_wr = recvs;
	qb = srd_qp_new(B.pd, B.scq, B.rcq, SRD_QP_SRD, 0, &cap);
	if (!qa || !qb)
		srd_die("ibv_create_qp_ex(IBV_QPT_DRIVER)", errno);
	if (srd_qp_to_rts(qa, SRD_QKEY) || srd_qp_to_rts(qb, SRD_QKEY))
		srd_die("SRD QP to RTS", EINVAL);
	abuf = aligned_alloc(4096, (size_t)window * max);
	bbuf = aligned_alloc(4096, (size_t)recvs * max);
	seen = calloc(count, 1);
	if (!abuf || !bbuf || !seen)
		srd_die("allocating the buffers", ENOMEM);
	amr = ibv_reg_mr(A.pd, abuf, (size_t)window * max, IBV_ACCESS_LOCAL_WRITE);
	bmr = ibv_reg_mr(B.pd, bbuf, (size_t)recvs * max, IBV_ACCESS_LOCAL_WRITE);
	if (!amr || !bmr)
		srd_die("ibv_reg_mr", errno);
	ah = srd_ah(&A, &B);
	d = srd_dest(ah, qb);
	if (answer) {
		ah_ba = srd_ah(&B, &A);
		dba = srd_dest(ah_ba, qa);
		for (i = 0; i < 256; i++)
			if (srd_post_recv(qa, i, A.buf + i * 64, 64, A.mr->lkey))
				srd_die("ibv_post_recv", EINVAL);
	}
	for (nfree = 0; nfree < window; nfree++)
		free_slots[nfree] = nfree;
	for (i = 0; i < recvs; i++)
		if (srd_post_recv(qb, i, bbuf + (size_t)i * max, max, bmr->lkey))
			srd_die("ibv_post_recv", EINVAL);

	rx = (struct mix_rx){ .qp = qb, .cq = B.rcq, .mr = bmr, .buf = bbuf,
			      .seen = seen, .seed = seed, .count = count, .max = max,
			      .delay_us = delay_us };
	t0 = last = rx.last = srd_now_ms();
	if (delay_us) {
		rc = pthread_create(&rx_thread, NULL, mix_rx_thread, &rx);
		if (rc)
			srd_die("pthread_create", rc);
	}
	while (completed < count ||
	       MIX_LOAD(rx.delivered) + MIX_LOAD(rx.dups) < count) {
		/* A: keep the window full, each send in a free slot. */
		while (sent < count && nfree) {
			struct ibv_sge sg;
			uint32_t slot = free_slots[--nfree];
			uint8_t *p = abuf + (size_t)slot * max;

			len = mix_size(seed, sent, max);
			srd_fill(p, len, sent);
			sg = (struct ibv_sge){ (uintptr_t)p, len, amr->lkey };
			rc = srd_post_send_sge(qa, slot, d, &sg, 1, IBV_WR_SEND_WITH_IMM,
					       sent, IBV_SEND_SIGNALED);
			if (rc)
				srd_die("ibv_post_send", rc);
			sent++;
		}
		n = ibv_poll_cq(A.scq, 32, wc);
		for (k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				printf("FAIL: a send (slot %llu) completed %s (vendor_err %u)\n",
				       (unsigned long long)wc[k].wr_id,
				       ibv_wc_status_str(wc[k].status), wc[k].vendor_err);
				goto out;
			}
			free_slots[nfree++] = (uint32_t)wc[k].wr_id;
			completed++;
			last = srd_now_ms();
		}
		if (MIX_LOAD(rx.failed))
			goto out;
		n = delay_us ? 0 : ibv_poll_cq(B.rcq, 32, wc);
		for (k = 0; k < n; k++) {
			seq = mix_take(&rx, &wc[k]);
			if (seq < 0)
				goto out;
			if (answer && ans_out < 256) {
				rc = srd_post_send_sge(qb, seq, dba, NULL, 0,
						       IBV_WR_SEND_WITH_IMM, seq,
						       IBV_SEND_SIGNALED);
				if (rc)
					srd_die("ibv_post_send (answer)", rc);
				ans_out++;
			}
		}
		if (answer) {
			n = ibv_poll_cq(B.scq, 32, wc);
			for (k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS) {
					printf("FAIL: an answer completed %s\n",
					       ibv_wc_status_str(wc[k].status));
					goto out;
				}
				ans_out--;
			}
			n = ibv_poll_cq(A.rcq, 32, wc);
			for (k = 0; k < n; k++) {
				answers++;
				if (srd_post_recv(qa, wc[k].wr_id, A.buf + wc[k].wr_id * 64,
						  64, A.mr->lkey))
					srd_die("ibv_post_recv", EINVAL);
			}
		}
		if (MIX_LOAD(rx.last) > last)
			last = MIX_LOAD(rx.last);
		if (srd_now_ms() - last > (long long)stall_s * 1000) {
			printf("FAIL: nothing completed for %u s: %u sent, %u completed, %u delivered\n",
			       stall_s, sent, completed, MIX_LOAD(rx.delivered));
			goto out;
		}
	}
out:
	if (delay_us) {
		MIX_STORE(rx.stop, true);
		pthread_join(rx_thread, NULL);
	}
	printf("sent %u delivered %u intact %u dup %u answers %u secs %.1f\n", sent,
	       rx.delivered, rx.intact, rx.dups, answers, (srd_now_ms() - t0) / 1000.0);
	rc = completed == count && rx.delivered == count && rx.intact == count &&
	     !rx.dups && !rx.failed ? KSFT_PASS : KSFT_FAIL;
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_ah(ah);
	if (ah_ba)
		ibv_destroy_ah(ah_ba);
	ibv_dereg_mr(amr);
	ibv_dereg_mr(bmr);
	srd_ep_close(&A);
	srd_ep_close(&B);
	free(abuf);
	free(bbuf);
	free(seen);
	return rc;
}
