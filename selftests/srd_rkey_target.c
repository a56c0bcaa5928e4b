// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_rkey_target: a memory region open to RDMA, for the wire-level tests
 * of srd_rdma_wire.sh, and a requester of legitimate RDMA traffic.
 *
 *   srd_rkey_target [-s BYTES] DEV IP                              target
 *   srd_rkey_target [-s BYTES] -t "TARGET LINE" -p PEER_IP [-n ROUNDS]
 *                   [-o OPS] [-z SIZES] DEV IP                     requester
 *
 * Target: on DEV (its GID of IP), one SRD QP (IBV_QPT_DRIVER, Q_Key
 * 0x11111111, in RTS) and an MR of BYTES (default 65536) with
 * LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ holding a known pattern (byte i
 * is srd_rkey_pattern(i) below; srd_forge.py computes the same).  It posts
 * receives (in a second, local-only MR) for sends and RDMA writes with
 * immediate data, and prints one line
 *
 *   qpn=N qkey=0x11111111 addr=0xA rkey=0xR lkey=0xL len=BYTES
 *
 * then answers commands on stdin, a line each:
 *
 *   check                  "intact", or "changed at OFFSET" (the first byte
 *                          that is not the pattern)
 *   expect HEXBYTE OFF LEN "intact" if [OFF, OFF+LEN) holds HEXBYTE and
 *                          every other byte the pattern, else "changed at
 *                          OFFSET"
 *   stats                  "recv=N recv_imm=N rdma_imm=N errors=N": the
 *                          receive completions so far, by kind
 *   quit                   exit 0
 *
 * Requester: -t takes the target's line; with its own QP on DEV, it runs
 * ROUNDS (default 20) rounds of the operations OPS (default "siwmr": s
 * SEND, i SEND_WITH_IMM, w RDMA_WRITE, m RDMA_WRITE_WITH_IMM, r RDMA_READ)
 * against the target at PEER_IP, sizes (-z: a comma-separated list to use
 * instead of the built-in one) and offsets varying by round.  The
 * writes carry the pattern of the bytes they overwrite, so the target stays
 * "intact"; the reads must return the pattern.  Every work request must
 * complete successfully.  Prints "traffic ok ops=N bytes=N" and exits 0, or
 * a "FAIL:" line and exits 1.
 *
 * Exit 4 (skip) when there is no RDMA device at all.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srd_test.h"

#define RT_DEFAULT_BYTES	65536u
#define RT_RECVS		64	/* receives kept posted by the target */
#define RT_SEND_MAX		4096u	/* the largest send (a receive slot) */
#define RT_WC_MS		5000

struct rt {
	struct srd_ep ep;	/* context, PD, CQs, GID; ep.qp unused */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint8_t *mem;		/* the pattern, open to RDMA */
	struct ibv_mr *mr;
	uint8_t *aux;		/* receives, read destinations: local only */
	struct ibv_mr *amr;
	uint32_t bytes;
	long long recv, recv_imm, rdma_imm, errors;
	bool rdma;		/* the QP has the RDMA send ops */
};

/* Byte @i of the target's region; srd_forge.py's pattern() is the same. */
static inline uint8_t srd_rkey_pattern(uint32_t i)
{
	return (uint8_t)(i * 7 + (i >> 8) * 13 + 0x21);
}

static void fail(const char *fmt, const char *a, int err)
{
	printf("FAIL: ");
	printf(fmt, a);
	if (err)
		printf(": %s (%d)", strerror(err), err);
	printf("\n");
	exit(KSFT_FAIL);
}

static void rt_open(struct rt *t, const char *dev, const char *ip, bool requester)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_DRIVER,
		.cap = { .max_send_wr = 16, .max_recv_wr = RT_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ,
	};
	uint32_t aux_bytes = t->bytes < RT_RECVS * RT_SEND_MAX ?
			     RT_RECVS * RT_SEND_MAX : t->bytes;
	struct srd_ep *ep = &t->ep;
	uint32_t i;
	int rc;

	/* srd_ep_open's pieces, without its UD QP and its 1 MiB buffer. */
	memset(ep, 0, sizeof(*ep));
	ep->name = dev;
	ep->ctx = srd_open(dev);
	ep->gid_index = srd_find_gid(ep->ctx, ip, &ep->gid);
	if (ep->gid_index < 0)
		fail("%s has no GID for the given address", dev, 0);
	ep->pd = ibv_alloc_pd(ep->ctx);
	if (!ep->pd)
		fail("ibv_alloc_pd on %s", dev, errno);
	ep->scq = ibv_create_cq(ep->ctx, 64, NULL, NULL, 0);
	ep->rcq = ibv_create_cq(ep->ctx, 2 * RT_RECVS, NULL, NULL, 0);
	if (!ep->scq || !ep->rcq)
		fail("ibv_create_cq on %s", dev, errno);

	t->mem = aligned_alloc(4096, (t->bytes + 4095) & ~4095u);
	t->aux = aligned_alloc(4096, aux_bytes);
	if (!t->mem || !t->aux)
		fail("%s", "aligned_alloc", ENOMEM);
	for (i = 0; i < t->bytes; i++)
		t->mem[i] = srd_rkey_pattern(i);
	memset(t->aux, 0, aux_bytes);
	t->mr = ibv_reg_mr(ep->pd, t->mem, t->bytes, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!t->mr)
		fail("ibv_reg_mr (REMOTE_WRITE | REMOTE_READ) on %s", dev, errno);
	t->amr = ibv_reg_mr(ep->pd, t->aux, aux_bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!t->amr)
		fail("ibv_reg_mr (LOCAL_WRITE) on %s", dev, errno);

	ia.send_cq = ep->scq;
	ia.recv_cq = ep->rcq;
	ia.pd = ep->pd;
	if (!requester)
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
	t->qp = ibv_create_qp_ex(ep->ctx, &ia);
	if (!t->qp && requester && errno == EOPNOTSUPP) {
		/* A kernel without RDMA: sends only; RDMA ops fail below. */
		fprintf(stderr, "# %s refuses RDMA send ops: sends only\n", dev);
		ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
		t->qp = ibv_create_qp_ex(ep->ctx, &ia);
	} else {
		t->rdma = requester;
	}
	if (!t->qp)
		fail("ibv_create_qp_ex(IBV_QPT_DRIVER) on %s", dev, errno);
	t->qpx = ibv_qp_to_qp_ex(t->qp);
	if (!t->qpx)
		fail("ibv_qp_to_qp_ex on %s", dev, EINVAL);
	rc = srd_qp_to_rts(t->qp, SRD_QKEY);
	if (rc)
		fail("SRD QP on %s to RTS", dev, rc);
}

static void rt_post_recv(struct rt *t, uint32_t slot)
{
	int rc = srd_post_recv(t->qp, slot, t->aux + slot * RT_SEND_MAX,
			       RT_SEND_MAX, t->amr->lkey);

	if (rc)
		fail("ibv_post_recv on %s", t->ep.name, rc);
}

/* Count the target's receive completions and post their slots again. */
static void rt_drain_recvs(struct rt *t)
{
	struct ibv_wc wc[RT_RECVS];
	int n, i;

	while ((n = ibv_poll_cq(t->ep.rcq, RT_RECVS, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				t->errors++;
			else if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM)
				t->rdma_imm++;
			else if (wc[i].wc_flags & IBV_WC_WITH_IMM)
				t->recv_imm++;
			else
				t->recv++;
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				rt_post_recv(t, (uint32_t)wc[i].wr_id);
		}
	}
}

/* -1 if the region is the pattern except [off, off+len) = byte, else the
 * first offset that is not. */
static long rt_verify(const struct rt *t, int byte, uint32_t off, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < t->bytes; i++) {
		bool in = byte >= 0 && i >= off && i - off < len;
		uint8_t want = in ? (uint8_t)byte : srd_rkey_pattern(i);

		if (t->mem[i] != want)
			return i;
	}
	return -1;
}

static void rt_report(long at)
{
	if (at < 0)
		printf("intact\n");
	else
		printf("changed at %ld\n", at);
}

/* One command line of the target; false on quit. */
static bool rt_command(struct rt *t, char *line)
{
	unsigned int byte, off, len;
	char extra;

	if (!strcmp(line, "quit"))
		return false;
	if (!strcmp(line, "check")) {
		rt_report(rt_verify(t, -1, 0, 0));
	} else if (sscanf(line, "expect %x %u %u %c", &byte, &off, &len, &extra) == 3) {
		if (byte > 0xff || off > t->bytes || len > t->bytes - off)
			printf("bad command: %s\n", line);
		else
			rt_report(rt_verify(t, (int)byte, off, len));
	} else if (!strcmp(line, "stats")) {
		rt_drain_recvs(t);
		printf("recv=%lld recv_imm=%lld rdma_imm=%lld errors=%lld\n",
		       t->recv, t->recv_imm, t->rdma_imm, t->errors);
	} else {
		printf("bad command: %s\n", line);
	}
	return true;
}

static int rt_target(struct rt *t)
{
	char line[256];
	size_t have = 0;
	uint32_t i;

	for (i = 0; i < RT_RECVS; i++)
		rt_post_recv(t, i);
	printf("qpn=%u qkey=0x%08x addr=0x%" PRIx64 " rkey=0x%08x lkey=0x%08x len=%u\n",
	       t->qp->qp_num, SRD_QKEY, (uint64_t)(uintptr_t)t->mem, t->mr->rkey,
	       t->mr->lkey, t->bytes);
	for (;;) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		char *nl;
		ssize_t n;

		rt_drain_recvs(t);
		if (poll(&p, 1, 20) <= 0)
			continue;
		n = read(0, line + have, sizeof(line) - 1 - have);
		if (n <= 0)
			return KSFT_PASS;	/* stdin closed: as quit */
		have += n;
		line[have] = 0;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (nl > line && nl[-1] == '\r')
				nl[-1] = 0;
			if (!rt_command(t, line))
				return KSFT_PASS;
			have -= nl + 1 - line;
			memmove(line, nl + 1, have + 1);
		}
		if (have == sizeof(line) - 1) {
			printf("bad command: line too long\n");
			have = 0;
		}
	}
}

/* --- requester ------------------------------------------------------------ */

struct rt_remote {
	uint32_t qpn, qkey, rkey, len;
	uint64_t addr;
};

static bool rt_parse_line(const char *s, struct rt_remote *r)
{
	const char *q = strstr(s, "qpn="), *k = strstr(s, "qkey="),
		   *a = strstr(s, "addr="), *rk = strstr(s, "rkey="),
		   *l = strstr(s, " len=");

	if (!q || !k || !a || !rk || !l)
		return false;
	r->qpn = strtoul(q + 4, NULL, 0);
	r->qkey = strtoul(k + 5, NULL, 0);
	r->addr = strtoull(a + 5, NULL, 0);
	r->rkey = strtoul(rk + 5, NULL, 0);
	r->len = strtoul(l + 5, NULL, 0);
	return r->len > 0;
}

static void rt_wait_send(struct rt *t, uint64_t wr_id, const char *what,
			 uint32_t len, uint32_t off)
{
	struct ibv_wc wc;
	int rc = srd_poll(t->ep.scq, &wc, RT_WC_MS);

	if (rc != 1) {
		printf("FAIL: %s of %u bytes at offset %u: no completion within %d ms\n",
		       what, len, off, RT_WC_MS);
		exit(KSFT_FAIL);
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id) {
		printf("FAIL: %s of %u bytes at offset %u: expected SUCCESS wr_id %" PRIu64
		       ", saw %s wr_id %" PRIu64 " vendor_err %u\n", what, len, off, wr_id,
		       ibv_wc_status_str(wc.status), (uint64_t)wc.wr_id, wc.vendor_err);
		exit(KSFT_FAIL);
	}
}

static uint32_t sizes_opt[32];
static unsigned int nsizes;

static int rt_requester(struct rt *t, const char *line, const char *peer_ip,
			unsigned int rounds, const char *ops)
{
	static const uint32_t dflt[] = { 1, 100, 1399, 1400, 1401, 4096, 0, 2800, 65536 };
	const uint32_t *sizes = nsizes ? sizes_opt : dflt;
	unsigned int nsz = nsizes ? nsizes : sizeof(dflt) / sizeof(dflt[0]);
	struct rt_remote r;
	union ibv_gid dgid;
	struct ibv_ah *ah;
	unsigned long long nops = 0, bytes = 0;
	unsigned int round;
	const char *op;
	uint64_t id = 0;

	if (!rt_parse_line(line, &r))
		fail("cannot parse the target line '%s'", line, 0);
	if (srd_gid_of_ip(peer_ip, &dgid))
		fail("bad peer address %s", peer_ip, 0);
	ah = srd_ah_to_gid(&t->ep, &dgid);
	if (!ah)
		fail("ibv_create_ah to %s", peer_ip, errno);

	for (round = 0; round < rounds; round++) {
		for (op = ops; *op; op++) {
			uint32_t len = sizes[(round + (op - ops)) % nsz];
			uint32_t lim = r.len < t->bytes ? r.len : t->bytes;
			uint32_t off;
			const char *what;
			long bad;

			if (*op == 's' || *op == 'i') {
				if (len > RT_SEND_MAX)
					len = RT_SEND_MAX;
			}
			if (len > lim)
				len = lim;
			off = lim > len ? (round * 977u + (uint32_t)(op - ops) * 131u) % (lim - len + 1) : 0;
			if (strchr("wmr", *op) && !t->rdma) {
				printf("FAIL: '%c': the QP has no RDMA send ops (%s refused them)\n",
				       *op, t->ep.name);
				return KSFT_FAIL;
			}
			ibv_wr_start(t->qpx);
			t->qpx->wr_id = ++id;
			t->qpx->wr_flags = IBV_SEND_SIGNALED;
			switch (*op) {
			case 's':
				what = "SEND";
				ibv_wr_send(t->qpx);
				break;
			case 'i':
				what = "SEND_WITH_IMM";
				ibv_wr_send_imm(t->qpx, htonl(0x1000 + round));
				break;
			case 'w':
				what = "RDMA_WRITE";
				ibv_wr_rdma_write(t->qpx, r.rkey, r.addr + off);
				break;
			case 'm':
				what = "RDMA_WRITE_WITH_IMM";
				ibv_wr_rdma_write_imm(t->qpx, r.rkey, r.addr + off,
						      htonl(0x2000 + round));
				break;
			case 'r':
				what = "RDMA_READ";
				memset(t->aux, 0xee, len);
				ibv_wr_rdma_read(t->qpx, r.rkey, r.addr + off);
				break;
			default:
				ibv_wr_abort(t->qpx);
				fail("unknown operation letter in '%s'", ops, 0);
				return KSFT_FAIL;
			}
			ibv_wr_set_ud_addr(t->qpx, ah, r.qpn, r.qkey);
			/* Sources hold the pattern of the target's bytes they
			 * overwrite; reads land in aux. */
			if (*op == 'r')
				ibv_wr_set_sge(t->qpx, t->amr->lkey, (uintptr_t)t->aux, len);
			else
				ibv_wr_set_sge(t->qpx, t->mr->lkey, (uintptr_t)(t->mem + off), len);
			if (ibv_wr_complete(t->qpx)) {
				printf("FAIL: posting %s of %u bytes: %s\n", what, len,
				       strerror(errno));
				return KSFT_FAIL;
			}
			rt_wait_send(t, id, what, len, off);
			if (*op == 'r') {
				for (bad = 0; bad < (long)len; bad++)
					if (t->aux[bad] != srd_rkey_pattern(off + bad))
						break;
				if (bad < (long)len) {
					printf("FAIL: RDMA_READ of %u bytes at offset %u: byte %ld is "
					       "0x%02x, expected 0x%02x\n", len, off, bad,
					       t->aux[bad], srd_rkey_pattern(off + bad));
					return KSFT_FAIL;
				}
			}
			nops++;
			bytes += len;
		}
	}
	ibv_destroy_ah(ah);
	printf("traffic ok ops=%llu bytes=%llu\n", nops, bytes);
	return KSFT_PASS;
}

int main(int argc, char **argv)
{
	const char *target = NULL, *peer = NULL, *ops = "siwmr";
	unsigned int rounds = 20;
	struct rt t = { .bytes = RT_DEFAULT_BYTES };
	char *p;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "s:t:p:n:o:z:")) != -1) {
		switch (c) {
		case 'z':
			for (p = strtok(optarg, ","); p && nsizes < 32; p = strtok(NULL, ","))
				sizes_opt[nsizes++] = strtoul(p, NULL, 0);
			break;
		case 's': t.bytes = strtoul(optarg, NULL, 0); break;
		case 't': target = optarg; break;
		case 'p': peer = optarg; break;
		case 'n': rounds = strtoul(optarg, NULL, 0); break;
		case 'o': ops = optarg; break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || !t.bytes || t.bytes > (1u << 30) || !!target != !!peer)
		goto usage;
	rt_open(&t, argv[optind], argv[optind + 1], target != NULL);
	return target ? rt_requester(&t, target, peer, rounds, ops) : rt_target(&t);
usage:
	fprintf(stderr, "usage: %s [-s BYTES] DEV IP\n"
		"       %s [-s BYTES] -t \"TARGET LINE\" -p PEER_IP [-n ROUNDS] [-o OPS] "
		"[-z SIZES] DEV IP\n",
		argv[0], argv[0]);
	return 2;
}
