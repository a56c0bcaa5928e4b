// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device-level verbs through plain libibverbs: open and close,
 * query_device(_ex), query_port, query_gid, PDs backed by the kernel with
 * its limit enforced; and the verbs softsrd does not offer (SRQs, MWs, RC
 * QPs) failing cleanly.  The datapath verbs have their own tests
 * (srd_mr, srd_ah, srd_cq, srd_ud_qp, srd_lifecycle).
 *
 *   srd_verbs DEVICE IPV4   (IPV4: an address of the device's netdev)
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "ksft.h"

#define SRD_MAX_PD 4096

static struct ibv_device *find_device(struct ibv_device **list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static void test_queries(struct ibv_context *ctx, const char *ipv4)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_port_attr port = {};
	union ibv_gid gid, want = {};
	int i, found = 0;

	ksft_check_eq("ibv_query_device_ex", 0, ibv_query_device_ex(ctx, NULL, &ax));
	ksft_check(!strcmp(ax.orig_attr.fw_ver, "0.1.0"), "fw_ver is '%s'", ax.orig_attr.fw_ver);
	ksft_check_eq("phys_port_cnt", 1, ax.orig_attr.phys_port_cnt);
	ksft_check_eq("max_pd", SRD_MAX_PD, ax.orig_attr.max_pd);
	ksft_check(ax.orig_attr.max_qp > 0 && ax.orig_attr.max_cqe > 0 &&
		   ax.orig_attr.max_sge > 0 && ax.orig_attr.max_mr > 0,
		   "limits are positive (max_qp %d, max_cqe %d, max_sge %d, max_mr %d)",
		   ax.orig_attr.max_qp, ax.orig_attr.max_cqe,
		   ax.orig_attr.max_sge, ax.orig_attr.max_mr);
	ksft_check_eq("atomic_cap", IBV_ATOMIC_NONE, ax.orig_attr.atomic_cap);

	ksft_check_eq("ibv_query_port", 0, ibv_query_port(ctx, 1, &port));
	ksft_check_eq("port state", IBV_PORT_ACTIVE, port.state);
	ksft_check_eq("link_layer", IBV_LINK_LAYER_ETHERNET, port.link_layer);
	ksft_check_eq("gid_tbl_len", 16, port.gid_tbl_len);
	ksft_check_eq("active_mtu (veth, 1500)", IBV_MTU_1024, port.active_mtu);
	ksft_check(port.max_msg_sz >= 1U << 20, "max_msg_sz %u >= 1 MiB", port.max_msg_sz);
	ksft_check(ibv_query_port(ctx, 2, &port) != 0, "ibv_query_port(2) fails");

	want.raw[10] = 0xff;
	want.raw[11] = 0xff;
	inet_pton(AF_INET, ipv4, &want.raw[12]);
	for (i = 0; i < 16; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, &want, sizeof(gid)))
			found = 1;
	ksft_check(found, "ibv_query_gid finds ::ffff:%s", ipv4);
}

static void test_pds(struct ibv_context *ctx)
{
	static struct ibv_pd *pds[SRD_MAX_PD + 1];
	struct ibv_pd *pd;
	int i, n = 0, distinct = 1;

	for (i = 0; i < SRD_MAX_PD + 1; i++) {
		pds[i] = ibv_alloc_pd(ctx);
		if (!pds[i])
			break;
		n++;
	}
	ksft_check_eq("PDs allocated up to max_pd", SRD_MAX_PD, n);
	ksft_check(n == SRD_MAX_PD + 1 || errno == ENOMEM,
		   "PD max_pd+1 fails with ENOMEM (errno %d)", errno);
	for (i = 1; i < n && distinct; i++)
		distinct = pds[i]->handle != pds[i - 1]->handle;
	ksft_check(distinct, "PD handles are distinct");
	for (i = 0; i < n; i++)
		if (ibv_dealloc_pd(pds[i]))
			break;
	ksft_check_eq("all PDs deallocated", n, i);

	pd = ibv_alloc_pd(ctx);
	ksft_check(pd != NULL, "a PD can be allocated after freeing them");
	if (pd)
		ksft_check_eq("ibv_dealloc_pd", 0, ibv_dealloc_pd(pd));
}

/* What softsrd does not offer fails cleanly: no SRQs, no MWs, no RC QPs. */
static void test_not_offered(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_srq_init_attr srqa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_qp_init_attr qpa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq *cq;
	void *p;

	if (!pd) {
		ksft_check(0, "PD for the unsupported-verb checks");
		return;
	}
	errno = 0;
	p = ibv_create_srq(pd, &srqa);
	ksft_check(!p && errno == EOPNOTSUPP, "ibv_create_srq: EOPNOTSUPP (errno %d)", errno);
	if (p)
		ibv_destroy_srq(p);
	errno = 0;
	p = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	ksft_check(!p && errno == EOPNOTSUPP, "ibv_alloc_mw: EOPNOTSUPP (errno %d)", errno);
	if (p)
		ibv_dealloc_mw(p);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ksft_check(cq != NULL, "ibv_create_cq (errno %d)", cq ? 0 : errno);
	if (cq) {
		qpa.send_cq = qpa.recv_cq = cq;
		errno = 0;
		p = ibv_create_qp(pd, &qpa);
		ksft_check(!p && (errno == EOPNOTSUPP || errno == EINVAL),
			   "ibv_create_qp(RC): EOPNOTSUPP or EINVAL (errno %d)", errno);
		if (p)
			ibv_destroy_qp(p);
		ksft_check_eq("ibv_destroy_cq", 0, ibv_destroy_cq(cq));
	}
	ksft_check_eq("ibv_dealloc_pd", 0, ibv_dealloc_pd(pd));
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx, *ctx2;
	struct ibv_device *dev;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE IPV4\n", argv[0]);
		return KSFT_FAIL;
	}
	list = ibv_get_device_list(NULL);
	if (!list)
		ksft_skip("no RDMA devices: %s", strerror(errno));
	dev = find_device(list, argv[1]);
	ksft_check(dev != NULL, "libibverbs lists %s", argv[1]);
	if (!dev)
		return ksft_exit();

	ctx = ibv_open_device(dev);
	ksft_check(ctx != NULL, "ibv_open_device (errno %d)", ctx ? 0 : errno);
	if (!ctx)
		return ksft_exit();
	ctx2 = ibv_open_device(dev);
	ksft_check(ctx2 != NULL, "a second context on the same device");

	test_queries(ctx, argv[2]);
	test_pds(ctx);
	test_not_offered(ctx);

	if (ctx2)
		ksft_check_eq("ibv_close_device (second)", 0, ibv_close_device(ctx2));
	ksft_check_eq("ibv_close_device", 0, ibv_close_device(ctx));
	ibv_free_device_list(list);
	return ksft_exit();
}
