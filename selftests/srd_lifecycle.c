// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Object lifecycle: creating and destroying 1,000 PDs, CQs, QPs, MRs and
 * AHs leaks nothing, by the module's own live-object counters
 * (hw_counters/pds, cqs, qps, mrs, ahs) and by the process's mappings and
 * file descriptors.
 *
 *   srd_lifecycle [-n N] DEV_A IP_A DEV_B IP_B
 *   srd_lifecycle --traffic DEV_A IP_A DEV_B IP_B
 *
 * --traffic keeps A sending to B (with extra CQs, QPs, MRs and AHs alive)
 * until it is killed; it prints "traffic running" once messages flow.
 * srd_kill.sh kills it with SIGKILL and checks that the counters return to
 * their baseline.
 */
#include <dirent.h>

#include "srd_test.h"

static const char *const objs[] = { "pds", "cqs", "qps", "mrs", "ahs" };
#define NOBJS (sizeof(objs) / sizeof(objs[0]))

static void read_counters(const char *dev, long long *v)
{
	unsigned int i;

	for (i = 0; i < NOBJS; i++)
		v[i] = srd_counter(dev, objs[i]);
}

static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int c, n = 0;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* One round of everything; returns false (after a failed check) on error. */
static bool one_round(struct srd_ep *a, struct srd_ep *b, uint8_t *page, int i,
		      long long *base, bool check_live)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = ibv_alloc_pd(a->ctx);
	struct ibv_cq *cq = ibv_create_cq(a->ctx, 16, NULL, NULL, 0);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, page, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = b->gid, .sgid_index = a->gid_index, .hop_limit = 64 },
	};
	bool ok;

	if (pd) {
		ah = ibv_create_ah(pd, &aa);
		ia.send_cq = ia.recv_cq = cq;
		qp = cq ? ibv_create_qp(pd, &ia) : NULL;
	}
	ok = pd && cq && mr && ah && qp;
	if (!ok)
		ksft_check(0, "round %d: create pd %p cq %p mr %p ah %p qp %p (errno %d)",
			   i, (void *)pd, (void *)cq, (void *)mr, (void *)ah, (void *)qp,
			   errno);
	/* Every 10th QP goes through RTS and posts a receive before it dies. */
	if (ok && i % 10 == 0) {
		ok = !srd_qp_to_rts(qp, SRD_QKEY) &&
		     !srd_post_recv(qp, 1, page, 4096, mr->lkey);
		if (!ok)
			ksft_check(0, "round %d: QP to RTS and post_recv", i);
	}
	if (check_live) {
		long long now[NOBJS];
		unsigned int k;

		read_counters(a->name, now);
		for (k = 0; k < NOBJS; k++) {
			char what[64];

			snprintf(what, sizeof(what), "hw_counters/%s with one more alive",
				 objs[k]);
			ksft_check_eq(what, base[k] + 1, now[k]);
		}
	}
	if (qp && ibv_destroy_qp(qp))
		ok = false;
	if (ah && ibv_destroy_ah(ah))
		ok = false;
	if (mr && ibv_dereg_mr(mr))
		ok = false;
	if (cq && ibv_destroy_cq(cq))
		ok = false;
	if (pd && ibv_dealloc_pd(pd))
		ok = false;
	return ok;
}

static int lifecycle(int rounds, struct srd_ep *a, struct srd_ep *b)
{
	long long before[NOBJS], after[NOBJS];
	int maps0, maps1, fds0, fds1, i, done = 0;
	uint8_t *page = aligned_alloc(4096, 4096);
	long long t0;
	unsigned int k;

	read_counters(a->name, before);
	for (k = 0; k < NOBJS; k++)
		ksft_check(before[k] >= 0, "hw_counters/%s is readable (%lld)", objs[k],
			   before[k]);
	/* Warm up once (libibverbs caches), then measure. */
	one_round(a, b, page, 1, before, true);
	maps0 = count_lines("/proc/self/maps");
	fds0 = count_fds();
	t0 = srd_now_ms();
	for (i = 0; i < rounds; i++) {
		if (!one_round(a, b, page, i, before, false))
			break;
		done++;
	}
	printf("# %d rounds of create/destroy PD, CQ, MR, AH, QP in %lld ms\n", done,
	       srd_now_ms() - t0);
	ksft_check_eq("rounds completed", rounds, done);
	maps1 = count_lines("/proc/self/maps");
	fds1 = count_fds();
	read_counters(a->name, after);
	for (k = 0; k < NOBJS; k++) {
		char what[64];

		snprintf(what, sizeof(what), "hw_counters/%s back to its baseline", objs[k]);
		ksft_check_eq(what, before[k], after[k]);
	}
	ksft_check_eq("mappings of the process (ring mmaps unmapped)", maps0, maps1);
	ksft_check_eq("file descriptors of the process", fds0, fds1);
	free(page);
	return 0;
}

static int traffic(struct srd_ep *a, struct srd_ep *b)
{
	struct ibv_ah *ah = srd_ah(a, b), *extra_ah[8];
	struct ibv_mr *extra_mr[8];
	struct ibv_cq *extra_cq[8];
	struct ibv_qp *extra_qp[8];
	struct ibv_ah *back = srd_ah(b, a);	/* B holds one too */
	struct ibv_wc wc[16];
	unsigned long long sent = 0, recvd = 0;
	int i, n, outstanding = 0, posted_recv = 0;
	bool announced = false;

	for (i = 0; i < 8; i++) {
		extra_ah[i] = srd_ah(a, b);
		extra_mr[i] = ibv_reg_mr(a->pd, a->buf + i * 65536, 65536, IBV_ACCESS_LOCAL_WRITE);
		extra_cq[i] = ibv_create_cq(a->ctx, 64, NULL, NULL, 0);
		extra_qp[i] = srd_ud_qp(a, NULL);
		if (!extra_ah[i] || !extra_mr[i] || !extra_cq[i] || !extra_qp[i])
			srd_die("extra objects", errno);
	}
	for (;;) {
		while (posted_recv < 48) {
			srd_post_recv(b->qp, posted_recv, b->buf + (posted_recv % 64) * 2048,
				      2048, b->mr->lkey);
			posted_recv++;
		}
		while (outstanding < 32) {
			/* Some left pending on purpose: unsignaled ones ride along. */
			if (srd_post_send(a->qp, sent, srd_dest(ah, b->qp), a->buf,
					  a->mtu, a->mr->lkey, IBV_SEND_SIGNALED))
				break;
			sent++;
			outstanding++;
		}
		n = ibv_poll_cq(a->scq, 16, wc);
		outstanding -= n > 0 ? n : 0;
		n = ibv_poll_cq(b->rcq, 16, wc);
		if (n > 0) {
			recvd += n;
			posted_recv -= n;
		}
		if (!announced && recvd >= 50) {
			printf("traffic running: %llu sent, %llu received; also alive: "
			       "8 QPs (first 0x%x), CQs, MRs, AHs, and B's AH %p\n",
			       sent, recvd, extra_qp[0]->qp_num, (void *)back);
			fflush(stdout);
			announced = true;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct srd_ep A, B;
	int rounds = 1000, traffic_mode = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--traffic")) {
		traffic_mode = 1;
		argv++;
		argc--;
	} else if (argc > 2 && !strcmp(argv[1], "-n")) {
		rounds = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: %s [-n N | --traffic] DEV_A IP_A DEV_B IP_B\n",
			argv[0]);
		return KSFT_FAIL;
	}
	srd_ep_open(&A, argv[1], argv[2]);
	srd_ep_open(&B, argv[3], argv[4]);
	if (traffic_mode)
		return traffic(&A, &B);
	lifecycle(rounds, &A, &B);
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
