// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: ibv_reg_mr pins through ib_umem and honours
 * RLIMIT_MEMLOCK for a process without CAP_IPC_LOCK; every MR has its own
 * lkey and rkey, not guessable from one another; a bad lkey, a range
 * outside the MR or an MR of another PD completes with
 * IBV_WC_LOC_PROT_ERR on the send and on the receive side; deregistering an
 * MR that a posted receive references is safe.
 *
 *   srd_mr DEV_A IP_A DEV_B IP_B
 */
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "srd_test.h"

#define NUM_KEYS 1000

static struct srd_ep A, B;
static struct ibv_ah *ah_ab;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool all_distinct(const uint32_t *v, int n)
{
	uint32_t *s = malloc(n * sizeof(*s));
	bool ok = true;
	int i;

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u32);
	for (i = 1; i < n && ok; i++)
		ok = s[i] != s[i - 1];
	free(s);
	return ok;
}

/*
 * How many consecutive differences v[i+1] - v[i] equal the previous one:
 * n - 2 for an arithmetic progression (sequential keys, or index << 8),
 * near 0 for unpredictable keys.
 */
static int repeated_steps(const uint32_t *v, int n)
{
	int i, same = 0;

	for (i = 2; i < n; i++)
		same += (uint32_t)(v[i] - v[i - 1]) == (uint32_t)(v[i - 1] - v[i - 2]);
	return same;
}

/* How many MRs share the most common value of f(lkey, rkey). */
static int most_common_relation(const uint32_t *l, const uint32_t *r, int n, int xor)
{
	uint32_t *d = malloc(n * sizeof(*d));
	int i, run = 1, best = 1;

	for (i = 0; i < n; i++)
		d[i] = xor ? l[i] ^ r[i] : r[i] - l[i];
	qsort(d, n, sizeof(*d), cmp_u32);
	for (i = 1; i < n; i++) {
		run = d[i] == d[i - 1] ? run + 1 : 1;
		if (run > best)
			best = run;
	}
	free(d);
	return best;
}

static void test_keys(void)
{
	static struct ibv_mr *mrs[NUM_KEYS];
	static uint32_t lk[NUM_KEYS], rk[NUM_KEYS];
	long long mrs0 = srd_counter(A.name, "mrs");
	int i, n = 0, lk_eq_rk = 0;
	uint8_t *page = aligned_alloc(4096, 4096);

	if (A.dev.max_mr < NUM_KEYS + 8)
		printf("# device max_mr %d is below %d\n", A.dev.max_mr, NUM_KEYS + 8);
	for (i = 0; i < NUM_KEYS; i++) {
		mrs[i] = ibv_reg_mr(A.pd, page, 4096,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		if (!mrs[i]) {
			printf("# ibv_reg_mr %d failed: %s\n", i, strerror(errno));
			break;
		}
		lk[i] = mrs[i]->lkey;
		rk[i] = mrs[i]->rkey;
		lk_eq_rk += lk[i] == rk[i];
		n++;
	}
	ksft_check_eq("MRs registered (one page each, same page)", NUM_KEYS, n);
	ksft_check_eq("hw_counters/mrs with them", mrs0 + n, srd_counter(A.name, "mrs"));
	printf("# keys of the first MRs: lkey/rkey 0x%08x/0x%08x 0x%08x/0x%08x "
	       "0x%08x/0x%08x 0x%08x/0x%08x\n", lk[0], rk[0], lk[1], rk[1],
	       lk[2], rk[2], lk[3], rk[3]);
	if (n == NUM_KEYS) {
		int steps_l = repeated_steps(lk, n), steps_r = repeated_steps(rk, n);
		int rel_sub = most_common_relation(lk, rk, n, 0);
		int rel_xor = most_common_relation(lk, rk, n, 1);

		ksft_check(all_distinct(lk, n), "%d lkeys are distinct", n);
		ksft_check(all_distinct(rk, n), "%d rkeys are distinct", n);
		ksft_check(lk_eq_rk == 0, "lkey != rkey for every MR (%d equal)", lk_eq_rk);
		ksft_check(steps_l < n / 20,
			   "lkeys are not an arithmetic progression: %d of %d steps "
			   "repeat the previous step (expected < %d)", steps_l, n - 2, n / 20);
		ksft_check(steps_r < n / 20,
			   "rkeys are not an arithmetic progression: %d of %d steps "
			   "repeat the previous step (expected < %d)", steps_r, n - 2, n / 20);
		ksft_check(rel_sub < n / 20 && rel_xor < n / 20,
			   "rkey is not lkey plus or xor a constant: the most common "
			   "rkey - lkey holds for %d MRs, rkey ^ lkey for %d "
			   "(expected < %d)", rel_sub, rel_xor, n / 20);
	}
	for (i = 0; i < n; i++)
		if (ibv_dereg_mr(mrs[i]))
			break;
	ksft_check_eq("all MRs deregistered", n, i);
	ksft_check_eq("hw_counters/mrs after", mrs0, srd_counter(A.name, "mrs"));
	free(page);
}

/* A child without CAP_IPC_LOCK and with a small RLIMIT_MEMLOCK. */
#define MEMLOCK_LIMIT	(64 * 1024)
enum { ML_SMALL_OK = 1, ML_BIG_ENOMEM = 2, ML_CAPS_DROPPED = 4, ML_AGAIN_OK = 8 };

static int memlock_child(const char *dev)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { MEMLOCK_LIMIT, MEMLOCK_LIMIT };
	struct ibv_context *ctx;
	struct ibv_mr *small, *big, *again;
	struct ibv_pd *pd;
	size_t big_len = 1 << 20;
	uint8_t *buf;
	int res = 0;

	if (syscall(SYS_capget, &h, d))
		return 0x80;
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].inheritable &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	if (syscall(SYS_capset, &h, d))
		return 0x80;
	memset(d, 0, sizeof(d));
	if (!syscall(SYS_capget, &h, d) &&
	    !(d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK)))
		res |= ML_CAPS_DROPPED;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 0x80;

	ctx = srd_open(dev);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, big_len);
	if (!pd || !buf)
		return 0x80;
	memset(buf, 0, big_len);
	small = ibv_reg_mr(pd, buf, 16 * 1024, IBV_ACCESS_LOCAL_WRITE);
	if (small)
		res |= ML_SMALL_OK;
	else
		printf("# 16 KiB MR under a 64 KiB RLIMIT_MEMLOCK: %s\n", strerror(errno));
	errno = 0;
	big = ibv_reg_mr(pd, buf, big_len, IBV_ACCESS_LOCAL_WRITE);
	if (!big && errno == ENOMEM)
		res |= ML_BIG_ENOMEM;
	else
		printf("# 1 MiB MR under a 64 KiB RLIMIT_MEMLOCK: %s (errno %d)\n",
		       big ? "registered" : strerror(errno), errno);
	if (big)
		ibv_dereg_mr(big);
	/* The failed attempt left nothing pinned: the limit is still usable. */
	again = ibv_reg_mr(pd, buf + 16 * 1024, 32 * 1024, IBV_ACCESS_LOCAL_WRITE);
	if (again) {
		res |= ML_AGAIN_OK;
		ibv_dereg_mr(again);
	} else {
		printf("# 32 KiB MR after the refusal: %s\n", strerror(errno));
	}
	if (small)
		ibv_dereg_mr(small);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return res;
}

static void test_memlock(void)
{
	int status = 0, res;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(memlock_child(A.name));
	waitpid(pid, &status, 0);
	ksft_check(WIFEXITED(status) && !(WEXITSTATUS(status) & 0x80),
		   "RLIMIT_MEMLOCK child ran (status 0x%x)", status);
	res = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	ksft_check(res & ML_CAPS_DROPPED, "child dropped CAP_IPC_LOCK with capset(2)");
	ksft_check(res & ML_SMALL_OK, "16 KiB MR fits a 64 KiB RLIMIT_MEMLOCK");
	ksft_check(res & ML_BIG_ENOMEM, "1 MiB MR over a 64 KiB RLIMIT_MEMLOCK fails with ENOMEM");
	ksft_check(res & ML_AGAIN_OK, "after the refusal, 32 KiB more still fits");
}

/* Pinning: the MR keeps the pages the process had when it registered. */
static void test_pinning(void)
{
	struct ibv_qp *qb = srd_ud_qp(&B, NULL);
	size_t len = 8192;
	uint8_t *p = aligned_alloc(4096, len);
	struct ibv_mr *mr;
	struct ibv_wc wc;

	memset(p, 0, len);
	mr = ibv_reg_mr(B.pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	ksft_check(mr != NULL, "ibv_reg_mr of a heap buffer (errno %d)", mr ? 0 : errno);
	if (!mr)
		return;
	ksft_check(mr->addr == p && mr->length == len,
		   "MR addr and length: expected %p/%zu, saw %p/%zu", (void *)p, len,
		   mr->addr, mr->length);
	srd_post_recv(qb, 1, p + 100, SRD_GRH + 3000, mr->lkey);
	srd_fill(A.buf, 3000, 7);
	srd_post_send(A.qp, 1, srd_dest(ah_ab, qb), A.buf, 3000 > A.mtu ? A.mtu : 3000,
		      A.mr->lkey, IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 1, "send into a heap MR");
	if (srd_expect_wc(B.rcq, &wc, "receive into a heap MR")) {
		uint32_t n = 3000 > A.mtu ? A.mtu : 3000;

		ksft_check(wc.status == IBV_WC_SUCCESS &&
			   srd_check_fill(p + 100 + SRD_GRH, n, 7) < 0,
			   "data lands in the registered pages (status %s)",
			   ibv_wc_status_str(wc.status));
	}
	ibv_dereg_mr(mr);
	ibv_destroy_qp(qb);
	free(p);
}

enum bad_sge { BAD_LKEY, BAD_RANGE, OTHER_PD, DEREGISTERED };
static const char *const bad_name[] = {
	"an unknown lkey", "a range past the end of the MR", "an MR of another PD",
	"a deregistered MR",
};

struct bad_mrs {
	struct ibv_pd *pd2;
	struct ibv_mr *small;		/* first 4 KiB of the test area, PD 1 */
	struct ibv_mr *other;		/* same area, PD 2 */
	uint8_t *area;
};

static void bad_mrs_get(struct srd_ep *ep, struct bad_mrs *m)
{
	m->area = aligned_alloc(4096, 16384);
	memset(m->area, 0xaa, 16384);
	m->pd2 = ibv_alloc_pd(ep->ctx);
	m->small = ibv_reg_mr(ep->pd, m->area, 4096, IBV_ACCESS_LOCAL_WRITE);
	m->other = m->pd2 ? ibv_reg_mr(m->pd2, m->area, 16384, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!m->pd2 || !m->small || !m->other)
		srd_die("MRs for the protection tests", errno);
}

static void bad_mrs_put(struct bad_mrs *m)
{
	ibv_dereg_mr(m->other);
	ibv_dereg_mr(m->small);
	ibv_dealloc_pd(m->pd2);
	free(m->area);
}

/* An SGE of kind in m, of len bytes. */
static struct ibv_sge bad_sge(struct bad_mrs *m, enum bad_sge kind, uint32_t len,
			      struct srd_ep *ep)
{
	struct ibv_mr *tmp;
	struct ibv_sge sg = { (uintptr_t)m->area, len, m->small->lkey };

	switch (kind) {
	case BAD_LKEY:
		/* Neither this lkey nor any near it belongs to an MR of ours. */
		sg.lkey = m->small->lkey ^ 0x5a5a5a00;
		if (sg.lkey == ep->mr->lkey || sg.lkey == m->other->lkey)
			sg.lkey ^= 0x00a00000;
		break;
	case BAD_RANGE:
		sg.addr = (uintptr_t)m->area + 4096 - 16;	/* 16 in, len - 16 out */
		break;
	case OTHER_PD:
		sg.lkey = m->other->lkey;
		break;
	case DEREGISTERED:
		tmp = ibv_reg_mr(ep->pd, m->area, 4096, IBV_ACCESS_LOCAL_WRITE);
		if (!tmp)
			srd_die("ibv_reg_mr", errno);
		sg.lkey = tmp->lkey;
		ibv_dereg_mr(tmp);
		break;
	}
	return sg;
}

static void test_send_side(enum bad_sge kind)
{
	struct bad_mrs m;
	struct ibv_qp *qa = srd_ud_qp(&A, NULL);
	struct ibv_qp *qb = srd_ud_qp(&B, NULL);
	struct ibv_sge sg;
	struct ibv_wc wc;
	int rc;

	bad_mrs_get(&A, &m);
	sg = bad_sge(&m, kind, 64, &A);
	srd_post_recv(qb, 1, B.buf, 2048, B.mr->lkey);
	rc = srd_post_send_sge(qa, 5, srd_dest(ah_ab, qb), &sg, 1, IBV_WR_SEND, 0,
			       IBV_SEND_SIGNALED);
	ksft_check_eq("post_send with a bad SGE is accepted (checked at execution)", 0, rc);
	if (!rc && srd_expect_wc(A.scq, &wc, "send completion of a bad SGE"))
		ksft_check(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 5,
			   "send SGE with %s: expected LOC_PROT_ERR wr_id 5, saw %s "
			   "wr_id %llu vendor_err %u", bad_name[kind],
			   ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
			   wc.vendor_err);
	ksft_check(srd_poll(B.rcq, &wc, SRD_QUIET_MS) == 0,
		   "send SGE with %s: nothing delivered", bad_name[kind]);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	srd_drain(A.scq);
	srd_drain(B.rcq);
	bad_mrs_put(&m);
}

static void test_recv_side(enum bad_sge kind)
{
	struct bad_mrs m;
	struct ibv_qp *qb = srd_ud_qp(&B, NULL);
	struct ibv_sge sg;
	struct ibv_wc wc;
	int rc, i;
	bool untouched = true;

	bad_mrs_get(&B, &m);
	sg = bad_sge(&m, kind, 200, &B);
	rc = srd_post_recv_sge(qb, 6, &sg, 1);
	ksft_check_eq("post_recv with a bad SGE is accepted (checked at execution)", 0, rc);
	srd_fill(A.buf, 100, 6);
	srd_post_send(A.qp, 6, srd_dest(ah_ab, qb), A.buf, 100, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 6, "send to a bad receive SGE (UD: completes at the sender)");
	if (!rc && srd_expect_wc(B.rcq, &wc, "receive completion of a bad SGE"))
		ksft_check(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 6,
			   "receive SGE with %s: expected LOC_PROT_ERR wr_id 6, saw %s "
			   "wr_id %llu vendor_err %u", bad_name[kind],
			   ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
			   wc.vendor_err);
	/* The kernel wrote nothing outside what the receive may use. */
	for (i = 4096; i < 16384; i++)
		untouched &= m.area[i] == 0xaa;
	if (kind != BAD_RANGE)
		for (i = 0; i < 4096; i++)
			untouched &= m.area[i] == 0xaa;
	ksft_check(untouched, "receive SGE with %s: no byte written where it may not be",
		   bad_name[kind]);
	ibv_destroy_qp(qb);
	srd_drain(B.rcq);
	bad_mrs_put(&m);
}

/* dereg_mr while a posted receive references the MR. */
static void test_dereg_in_use(void)
{
	struct ibv_qp *qb = srd_ud_qp(&B, NULL);
	uint8_t *p = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int i, rc;
	bool untouched = true;

	memset(p, 0xaa, 4096);
	mr = ibv_reg_mr(B.pd, p, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		srd_die("ibv_reg_mr", errno);
	srd_post_recv(qb, 7, p, 2048, mr->lkey);
	rc = ibv_dereg_mr(mr);
	ksft_check_eq("ibv_dereg_mr with a posted receive referencing it", 0, rc);
	srd_fill(A.buf, 100, 7);
	srd_post_send(A.qp, 7, srd_dest(ah_ab, qb), A.buf, 100, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 7, "send to the receive whose MR is gone");
	if (srd_expect_wc(B.rcq, &wc, "receive into a deregistered MR"))
		ksft_check(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 7,
			   "receive into a deregistered MR: expected LOC_PROT_ERR, "
			   "saw %s wr_id %llu", ibv_wc_status_str(wc.status),
			   (unsigned long long)wc.wr_id);
	for (i = 0; i < 4096; i++)
		untouched &= p[i] == 0xaa;
	ksft_check(untouched, "nothing written to the memory of the deregistered MR");
	ibv_destroy_qp(qb);
	free(p);

	/* The device still works. */
	qb = srd_ud_qp(&B, NULL);
	srd_post_recv(qb, 8, B.buf, 2048, B.mr->lkey);
	srd_fill(A.buf, 100, 8);
	srd_post_send(A.qp, 8, srd_dest(ah_ab, qb), A.buf, 100, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 8, "send after the dereg test");
	if (srd_expect_wc(B.rcq, &wc, "receive after the dereg test"))
		ksft_check(wc.status == IBV_WC_SUCCESS &&
			   srd_check_fill(B.buf + SRD_GRH, 100, 8) < 0,
			   "traffic still flows after the dereg test (%s)",
			   ibv_wc_status_str(wc.status));
	ibv_destroy_qp(qb);
}

static void test_bad_reg(void)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(A.pd, (void *)0x1000, 4096, IBV_ACCESS_LOCAL_WRITE);
	ksft_check(!mr && (errno == EFAULT || errno == EINVAL || errno == ENOMEM),
		   "ibv_reg_mr of unmapped memory fails (errno %d)", errno);
	if (mr)
		ibv_dereg_mr(mr);
}

int main(int argc, char **argv)
{
	int k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A IP_A DEV_B IP_B\n", argv[0]);
		return KSFT_FAIL;
	}
	srd_ep_open(&A, argv[1], argv[2]);
	srd_ep_open(&B, argv[3], argv[4]);
	test_memlock();
	test_keys();
	test_bad_reg();

	ah_ab = srd_ah_checked(&A, &B);
	if (!ah_ab)
		return ksft_exit();
	test_pinning();
	for (k = BAD_LKEY; k <= DEREGISTERED; k++)
		test_send_side(k);
	for (k = BAD_LKEY; k <= DEREGISTERED; k++)
		test_recv_side(k);
	test_dereg_in_use();

	ibv_destroy_ah(ah_ab);
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
