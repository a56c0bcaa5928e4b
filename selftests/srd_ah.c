// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles: created from a GID (IPv4-mapped and IPv6), resolved in
 * the namespace of the device's netdev, numbered (srddv_query_ah), usable
 * for traffic; an unreachable destination fails with ENETUNREACH or
 * EHOSTUNREACH, a missing GRH with EINVAL.
 *
 *   srd_ah DEV_A IP4_A DEV_B IP4_B IP6_A IP6_B ONLY_INIT_NET ONLY_NETNS
 *
 * ONLY_INIT_NET: an address the initial namespace routes but A's namespace
 * does not; ONLY_NETNS: one A's namespace routes but the initial namespace
 * does not (srd_ah.sh sets both up).
 */
#include "srd_test.h"

static struct srd_ep A, B;

static void expect_traffic(struct ibv_ah *ah, const char *what, uint32_t seq)
{
	struct ibv_wc wc;

	srd_post_recv(B.qp, seq, B.buf, 2048, B.mr->lkey);
	srd_fill(A.buf, 256, seq);
	ksft_check_eq("post_send", 0,
		      srd_post_send(A.qp, seq, srd_dest(ah, B.qp), A.buf, 256,
				    A.mr->lkey, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, seq, what);
	if (srd_expect_wc(B.rcq, &wc, what))
		ksft_check(wc.status == IBV_WC_SUCCESS && wc.byte_len == 256 + SRD_GRH &&
			   srd_check_fill(B.buf + SRD_GRH, 256, seq) < 0,
			   "%s: message arrives (%s, byte_len %u)", what,
			   ibv_wc_status_str(wc.status), wc.byte_len);
}

static void expect_unreachable(struct srd_ep *ep, const char *ip, const char *why)
{
	union ibv_gid g;
	struct ibv_ah *ah;

	srd_gid_of_ip(ip, &g);
	errno = 0;
	ah = srd_ah_to_gid(ep, &g);
	ksft_check(!ah && (errno == ENETUNREACH || errno == EHOSTUNREACH),
		   "AH to %s (%s): expected NULL with ENETUNREACH or EHOSTUNREACH, "
		   "saw %s errno %d (%s)", ip, why, ah ? "an AH" : "NULL", errno,
		   strerror(errno));
	if (ah)
		ibv_destroy_ah(ah);
}

int main(int argc, char **argv)
{
	struct ibv_ah *ah4, *ah6, *ah4b, *ah;
	struct ibv_ah_attr attr = { .port_num = 1 };
	union ibv_gid g6_b, g;
	long long ahs0;
	int gidx6_a, n4, n6, n4b;
	struct srd_ep A6;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 9) {
		fprintf(stderr, "usage: %s DEV_A IP4_A DEV_B IP4_B IP6_A IP6_B "
			"ONLY_INIT_NET ONLY_NETNS\n", argv[0]);
		return KSFT_FAIL;
	}
	srd_ep_open(&A, argv[1], argv[2]);
	srd_ep_open(&B, argv[3], argv[4]);
	ahs0 = srd_counter(A.name, "ahs");

	/* IPv4-mapped GID. */
	errno = 0;
	ah4 = srd_ah_to_gid(&A, &B.gid);
	ksft_check(ah4 != NULL, "ibv_create_ah to ::ffff:%s (errno %d)", argv[4],
		   ah4 ? 0 : errno);
	ksft_check_eq("hw_counters/ahs with one AH", ahs0 + 1, srd_counter(A.name, "ahs"));
	n4 = ah4 ? srd_ahn(ah4) : -1;
	printf("# AH number of ::ffff:%s: %d\n", argv[4], n4);
	ksft_check(n4 >= 0 && n4 != SRD_NO_AH_SLID,
		   "the IPv4 AH has a number other than 0xffff (%d)", n4);
	if (ah4)
		expect_traffic(ah4, "traffic through the IPv4-mapped AH", 1);

	/* IPv6 GID: A sends from its IPv6 GID to B's. */
	gidx6_a = srd_find_gid(A.ctx, argv[5], NULL);
	ksft_check(gidx6_a >= 0 && srd_find_gid(B.ctx, argv[6], &g6_b) >= 0,
		   "both devices have their IPv6 GID (%s, %s)", argv[5], argv[6]);
	A6 = A;
	A6.gid_index = gidx6_a;
	errno = 0;
	ah6 = gidx6_a >= 0 ? srd_ah_to_gid(&A6, &g6_b) : NULL;
	ksft_check(ah6 != NULL, "ibv_create_ah to %s (errno %d)", argv[6], ah6 ? 0 : errno);
	n6 = ah6 ? srd_ahn(ah6) : -1;
	printf("# AH number of %s: %d\n", argv[6], n6);
	ksft_check(n6 >= 0 && n6 != SRD_NO_AH_SLID && n6 != n4,
		   "the IPv6 AH has its own number (%d; IPv4's is %d)", n6, n4);
	if (ah6)
		expect_traffic(ah6, "traffic through the IPv6 AH", 2);

	/* A second AH to the same GID works too. */
	ah4b = srd_ah_to_gid(&A, &B.gid);
	ksft_check(ah4b != NULL, "a second AH to the same GID (errno %d)", ah4b ? 0 : errno);
	n4b = ah4b ? srd_ahn(ah4b) : -1;
	printf("# second AH number of ::ffff:%s: %d\n", argv[4], n4b);
	if (ah4b)
		expect_traffic(ah4b, "traffic through the second AH", 3);

	/* No GRH. */
	errno = 0;
	ah = ibv_create_ah(A.pd, &attr);
	ksft_check(!ah && errno == EINVAL,
		   "ibv_create_ah without a GRH: expected EINVAL, saw %s errno %d",
		   ah ? "an AH" : "NULL", errno);
	if (ah)
		ibv_destroy_ah(ah);
	/* A source GID index with no GID. */
	{
		struct srd_ep bad = A;

		bad.gid_index = 15;
		if (ibv_query_gid(A.ctx, 1, 15, &g) == 0 &&
		    !memcmp(&g, &(union ibv_gid){}, sizeof(g))) {
			errno = 0;
			ah = srd_ah_to_gid(&bad, &B.gid);
			/* ib_core reports an empty GID entry as ENODATA. */
			ksft_check(!ah && (errno == EINVAL || errno == ENODATA),
				   "ibv_create_ah from an empty sgid_index: expected "
				   "EINVAL or ENODATA, saw errno %d", errno);
			if (ah)
				ibv_destroy_ah(ah);
		}
	}

	/* Unreachable, and resolved in the netdev's namespace. */
	expect_unreachable(&A, argv[7], "routed only in the initial namespace");
	expect_unreachable(&A6, "2001:db8:ffff::1", "no IPv6 route");
	errno = 0;
	srd_gid_of_ip(argv[8], &g);
	ah = srd_ah_to_gid(&A, &g);
	ksft_check(ah != NULL, "AH to %s, routed only in A's namespace (errno %d)",
		   argv[8], ah ? 0 : errno);
	if (ah)
		ksft_check_eq("destroy it", 0, ibv_destroy_ah(ah));

	ksft_check_eq("hw_counters/ahs with three AHs", ahs0 + 3, srd_counter(A.name, "ahs"));
	if (ah4)
		ksft_check_eq("ibv_destroy_ah (IPv4)", 0, ibv_destroy_ah(ah4));
	if (ah6)
		ksft_check_eq("ibv_destroy_ah (IPv6)", 0, ibv_destroy_ah(ah6));
	if (ah4b)
		ksft_check_eq("ibv_destroy_ah (second)", 0, ibv_destroy_ah(ah4b));
	ksft_check_eq("hw_counters/ahs after destroying them", ahs0,
		      srd_counter(A.name, "ahs"));
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
