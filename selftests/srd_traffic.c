// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A sends COUNT messages of SIZE bytes to B over UD; B checks each one.
 * The shell tests of the wire (UDP port, checksums, IPv4 and IPv6) use it.
 *
 *   srd_traffic [-c COUNT] [-s SIZE] [-l] DEV_A IP_A DEV_B IP_B
 *
 * Prints "sent N received M intact K".  Without -l every message must
 * arrive intact; with -l (lossy path) some may be lost, but every one
 * that arrives must be intact.
 */
#include "srd_test.h"

/* The payload of message seq: seq, then srd_pattern from byte 4 on. */
static bool payload_ok(const uint8_t *p, uint32_t size, uint32_t seq)
{
	uint32_t i;

	for (i = 4; i < size; i++)
		if (p[i] != srd_pattern(seq, i))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	struct srd_ep A, B;
	struct ibv_ah *ah;
	struct ibv_wc wc[16];
	uint32_t count = 100, size = 512, sent = 0, recvd = 0, intact = 0, acked = 0;
	uint32_t lost = 0;
	bool lossy = false;
	long long last, quiet_ms;
	int opt, n, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "c:s:l")) != -1) {
		switch (opt) {
		case 'c': count = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'l': lossy = true; break;
		default: return KSFT_FAIL;
		}
	}
	if (argc - optind != 4 || size < 4 || count > 4000) {
		fprintf(stderr, "usage: %s [-c COUNT<=4000] [-s SIZE>=4] [-l] DEV_A IP_A DEV_B IP_B\n",
			argv[0]);
		return KSFT_FAIL;
	}
	argv += optind;
	srd_ep_open(&A, argv[0], argv[1]);
	srd_ep_open(&B, argv[2], argv[3]);
	if (size > A.mtu)
		size = A.mtu;
	ah = srd_ah(&A, &B);

	/*
	 * B keeps 48 receives posted.  Without -l, A keeps up to 40 messages
	 * in flight; with -l it sends one at a time and waits up to 100 ms for
	 * it, since a lost message would otherwise hold a window slot forever.
	 */
	for (i = 0; i < 48; i++)
		srd_post_recv(B.qp, i, B.buf + i * 8192, 8192, B.mr->lkey);
	last = srd_now_ms();
	quiet_ms = lossy ? 100 : SRD_TIMEOUT_MS;
	for (;;) {
		uint32_t window = lossy ? 1 : 40;

		if (recvd == count)
			break;
		if (srd_now_ms() - last >= quiet_ms) {
			if (!lossy || sent == count)
				break;
			lost++;	/* give up on it: send the next one */
			last = srd_now_ms();
		}
		while (sent < count && sent - acked < 32 && sent - recvd - lost < window) {
			uint8_t *p = A.buf + (sent % 64) * 8192;

			srd_fill(p, size, sent);
			memcpy(p, &sent, 4);
			if (srd_post_send(A.qp, sent, srd_dest(ah, B.qp), p, size,
					  A.mr->lkey, IBV_SEND_SIGNALED))
				break;
			sent++;
			last = srd_now_ms();
		}
		n = ibv_poll_cq(A.scq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				printf("# send %llu: %s\n", (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
			acked++;
		}
		n = ibv_poll_cq(B.rcq, 16, wc);
		for (i = 0; i < n; i++) {
			uint8_t *p = B.buf + wc[i].wr_id * 8192 + SRD_GRH;
			uint32_t seq;

			memcpy(&seq, p, 4);
			recvd++;
			if (lossy && lost)
				lost--;	/* it came late after all */
			if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == size + SRD_GRH &&
			    seq < sent && payload_ok(p, size, seq))
				intact++;
			else
				printf("# receive %u: %s byte_len %u seq %u\n", recvd,
				       ibv_wc_status_str(wc[i].status), wc[i].byte_len, seq);
			srd_post_recv(B.qp, wc[i].wr_id, p - SRD_GRH, 8192, B.mr->lkey);
			last = srd_now_ms();
		}
	}
	printf("sent %u received %u intact %u (size %u)\n", sent, recvd, intact, size);
	ksft_check(intact == recvd, "every message received is intact (%u of %u)",
		   intact, recvd);
	if (!lossy)
		ksft_check(recvd == count && sent == count,
			   "all messages arrive: expected %u, saw %u", count, recvd);
	ibv_destroy_ah(ah);
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
