// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A device's limits follow its limits profile (module parameter "limits"
 * when it was created): what ibv_query_device and ibv_query_port report,
 * and what create_qp accepts, at the limit and one past it.
 *
 *   srd_limits DEV softsrd|efa-gen1|efa-gen2|efa-gen3
 *
 * The EFA generations differ in their RDMA and unsolicited write recv
 * (srd_efadv, srd_efadv64, srd_efadv_gen3), not in these limits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "ksft.h"

struct profile {
	const char *name;
	uint32_t send_sge, recv_sge, rdma_sge, inline_bytes;
	uint32_t msg_bytes;	/* SRD messages, whatever the MTU */
};

static const struct profile profiles[] = {
	{ "softsrd", 16, 16, 16, 256, 1u << 20 },
	{ "efa-gen1", 2, 3, 1, 32, 8928 },
	{ "efa-gen2", 2, 3, 1, 32, 8928 },
	{ "efa-gen3", 2, 3, 1, 32, 8928 },
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

/* 0, or the errno of creating a UD QP with @cap. */
static int try_qp(struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = cap,
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(pd, &attr);
	if (!qp)
		return errno ? errno : -1;
	ibv_destroy_qp(qp);
	return 0;
}

/*
 * A UD QP with *@field (a member of *@cap) at @limit is created; one past
 * it is refused with EINVAL.
 */
static void check_cap_limit(const char *name, struct ibv_qp_cap *cap,
			    uint32_t *field, uint32_t limit)
{
	int rc;

	*field = limit;
	printf("# UD QP with %s at the limit (%u)\n", name, limit);
	ksft_check_eq("UD QP at the limit", 0, try_qp(*cap));
	(*field)++;
	rc = try_qp(*cap);
	ksft_check(rc == EINVAL, "UD QP with %s %u: expected EINVAL, saw %d",
		   name, *field, rc);
}

int main(int argc, char **argv)
{
	const struct ibv_qp_cap base = { 4, 4, 1, 1, 0 };
	const struct profile *p = NULL;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_device **list;
	struct ibv_qp_cap cap;
	size_t i;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV softsrd|efa-gen1|efa-gen2|efa-gen3\n", argv[0]);
		return KSFT_FAIL;
	}
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(profiles[i].name, argv[2]))
			p = &profiles[i];
	if (!p) {
		fprintf(stderr, "unknown profile %s\n", argv[2]);
		return KSFT_FAIL;
	}

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < (size_t)n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		printf("not ok 1 open %s\n", argv[1]);
		return KSFT_FAIL;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		printf("not ok 1 PD and CQ on %s\n", argv[1]);
		return KSFT_FAIL;
	}

	ksft_check_eq("ibv_query_device", 0, ibv_query_device(ctx, &dattr));
	ksft_check_eq("max_sge (the smaller of send and receive)",
		      p->send_sge < p->recv_sge ? p->send_sge : p->recv_sge,
		      dattr.max_sge);
	ksft_check_eq("max_sge_rd", p->rdma_sge, dattr.max_sge_rd);
	ksft_check_eq("ibv_query_port", 0, ibv_query_port(ctx, 1, &pattr));
	ksft_check_eq("port max_msg_sz", p->msg_bytes, pattr.max_msg_sz);

	cap = base;
	check_cap_limit("max_send_sge", &cap, &cap.max_send_sge, p->send_sge);
	cap = base;
	check_cap_limit("max_recv_sge", &cap, &cap.max_recv_sge, p->recv_sge);
	cap = base;
	check_cap_limit("max_inline_data", &cap, &cap.max_inline_data,
			p->inline_bytes);

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ksft_exit();
}
