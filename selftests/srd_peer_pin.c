// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One SEND from an SRD QP on DEV (its GID of IP) to each of COUNT
 * addresses from FIRST_IPV4 on, none of which answers: each makes a peer
 * that never leaves PROBING, as a user who posts to dead destinations
 * would (issue 46, M3).  Waits for every send to complete and prints
 * "pinned COUNT: F failed unresp, O other", F counting the
 * IBV_WC_RESP_TIMEOUT_ERR completions with vendor_err 18 (UNRESP_REMOTE).
 * Exits 0 when every send completed so; 1 otherwise (or after TIMEOUT_S,
 * default 120, with sends outstanding).  srd_peer_pin.sh checks that
 * these peers, once idle, give way to other users' destinations at once.
 *
 *   srd_peer_pin [-t TIMEOUT_S] DEV IP FIRST_IPV4 COUNT
 */
#include <stdlib.h>

#include "srd_test.h"

#define PIN_MAX_COUNT	2048
#define PIN_MSG_BYTES	64
#define PIN_UNRESP	18	/* vendor_err: SRD_VERR_UNRESP_REMOTE */

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-t TIMEOUT_S] DEV IP FIRST_IPV4 COUNT\n", argv0);
	exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	struct ibv_qp_cap cap = { .max_send_sge = 1, .max_recv_sge = 1, .max_recv_wr = 1 };
	uint32_t count, i, done = 0, unresp = 0, other = 0, timeout_s = 120;
	struct ibv_ah **ahs;
	struct in_addr first;
	struct ibv_wc wc[32];
	struct ibv_cq *scq;
	struct ibv_qp *qp;
	struct srd_ep A;
	long long t0;
	int opt, n, k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "t:")) != -1) {
		switch (opt) {
		case 't': timeout_s = strtoul(optarg, NULL, 0); break;
		default: usage(argv[0]);
		}
	}
	if (argc - optind != 4)
		usage(argv[0]);
	argv += optind;
	count = strtoul(argv[3], NULL, 0);
	if (!count || count > PIN_MAX_COUNT || !timeout_s ||
	    inet_pton(AF_INET, argv[2], &first) != 1)
		usage(argv[0]);
	srd_ep_open(&A, argv[0], argv[1]);
	ahs = calloc(count, sizeof(*ahs));
	scq = ibv_create_cq(A.ctx, count, NULL, NULL, 0);
	if (!ahs || !scq)
		srd_die("ibv_create_cq", errno ? errno : ENOMEM);
	cap.max_send_wr = count;
	qp = srd_qp_new(A.pd, scq, A.rcq, SRD_QP_SRD, 0, &cap);
	if (!qp)
		srd_die("ibv_create_qp_ex(IBV_QPT_DRIVER)", errno);
	if (srd_qp_to_rts(qp, SRD_QKEY))
		srd_die("SRD QP to RTS", EINVAL);
	for (i = 0; i < count; i++) {
		struct in_addr a = { htonl(ntohl(first.s_addr) + i) };
		char ip[INET_ADDRSTRLEN];
		union ibv_gid g;

		inet_ntop(AF_INET, &a, ip, sizeof(ip));
		if (srd_gid_of_ip(ip, &g))
			srd_die("srd_gid_of_ip", EINVAL);
		ahs[i] = srd_ah_to_gid(&A, &g);
		if (!ahs[i]) {
			printf("FAIL: ibv_create_ah to %s: errno %d\n", ip, errno);
			return KSFT_FAIL;
		}
	}
	for (i = 0; i < count; i++) {
		struct srd_dest d = { ahs[i], 2, SRD_QKEY };
		int rc = srd_post_send(qp, i, d, A.buf, PIN_MSG_BYTES, A.mr->lkey,
				       IBV_SEND_SIGNALED);

		if (rc)
			srd_die("ibv_post_send", rc);
	}
	printf("posted %u\n", count);

	t0 = srd_now_ms();
	while (done < count) {
		n = ibv_poll_cq(scq, 32, wc);
		if (n < 0)
			srd_die("ibv_poll_cq", EIO);
		for (k = 0; k < n; k++, done++) {
			if (wc[k].status == IBV_WC_RESP_TIMEOUT_ERR &&
			    wc[k].vendor_err == PIN_UNRESP)
				unresp++;
			else
				other++;
		}
		if (!n) {
			if (srd_now_ms() - t0 > timeout_s * 1000LL) {
				printf("FAIL: %u of %u sends still outstanding after %u s\n",
				       count - done, count, timeout_s);
				return KSFT_FAIL;
			}
			srd_sleep_ms(10);
		}
	}
	printf("pinned %u: %u failed unresp, %u other, in %lld ms\n", count,
	       unresp, other, srd_now_ms() - t0);
	ibv_destroy_qp(qp);
	for (i = 0; i < count; i++)
		ibv_destroy_ah(ahs[i]);
	ibv_destroy_cq(scq);
	free(ahs);
	srd_ep_close(&A);
	return unresp == count ? KSFT_PASS : KSFT_FAIL;
}
