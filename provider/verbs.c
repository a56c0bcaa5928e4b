// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: libsrd verbs backed by the rdma_srd kernel module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "srd.h"
#include "verbs.h"

int srd_query_device_ex(struct ibv_context *ibvctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw_ver;
	int err;

	/*
	 * Also serves ibv_query_device(), which libibverbs routes here with
	 * attr_size == sizeof(attr->orig_attr); ibv_cmd_query_device_any()
	 * then issues the legacy QUERY_DEVICE command.
	 */
	err = ibv_cmd_query_device_any(ibvctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err) {
		srd_err(verbs_get_ctx(ibvctx),
			"ibv_cmd_query_device_any failed: %d\n", err);
		return err;
	}

	/* The kernel reports fw_ver as major << 32 | minor << 16 | sub. */
	fw_ver = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw_ver >> 32) & 0xffff,
		 (unsigned int)(fw_ver >> 16) & 0xffff,
		 (unsigned int)fw_ver & 0xffff);

	return 0;
}

int srd_query_port(struct ibv_context *ibvctx, uint8_t port,
		   struct ibv_port_attr *port_attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibvctx, port, port_attr, &cmd, sizeof(cmd));
}

struct ibv_pd *srd_alloc_pd(struct ibv_context *ibvctx)
{
	struct srd_alloc_pd_cmd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct srd_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_alloc_pd(ibvctx, &pd->ibvpd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		srd_err(verbs_get_ctx(ibvctx), "ibv_cmd_alloc_pd failed: %d\n",
			err);
		free(pd);
		errno = err;
		return NULL;
	}

	pd->pdn = resp.drv.pdn;

	return &pd->ibvpd;
}

int srd_dealloc_pd(struct ibv_pd *ibvpd)
{
	struct srd_pd *pd = to_srd_pd(ibvpd);
	int err;

	err = ibv_cmd_dealloc_pd(ibvpd);
	if (err) {
		srd_err(verbs_get_ctx(ibvpd->context),
			"ibv_cmd_dealloc_pd failed: %d\n", err);
		return err;
	}

	free(pd);

	return 0;
}

struct ibv_mr *srd_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	/* The kernel pins the pages and answers with the keys. */
	err = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		srd_err(verbs_get_ctx(ibpd->context),
			"ibv_cmd_reg_mr failed: %d\n", err);
		free(vmr);
		errno = err;
		return NULL;
	}

	return &vmr->ibv_mr;
}

int srd_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err) {
		srd_err(verbs_get_ctx(vmr->ibv_mr.context),
			"ibv_cmd_dereg_mr failed: %d\n", err);
		return err;
	}

	free(vmr);

	return 0;
}

/*
 * The kernel resolves the destination in the netdev's namespace: EINVAL
 * without a GRH, ENETUNREACH or EHOSTUNREACH without a route.  Work
 * requests then name the AH by its number.
 */
struct ibv_ah *srd_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct srd_create_ah_uresp uresp = {};
	struct srd_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_create_ah(ibpd, &ah->ibvah, attr, &uresp.ibv_resp,
				sizeof(uresp));
	if (err) {
		srd_err(verbs_get_ctx(ibpd->context),
			"ibv_cmd_create_ah failed: %d\n", err);
		free(ah);
		errno = err;
		return NULL;
	}

	ah->ahn = uresp.drv.ahn;

	return &ah->ibvah;
}

int srd_destroy_ah(struct ibv_ah *ibah)
{
	struct srd_ah *ah = to_srd_ah(ibah);
	int err;

	err = ibv_cmd_destroy_ah(ibah);
	if (err) {
		srd_err(verbs_get_ctx(ibah->context),
			"ibv_cmd_destroy_ah failed: %d\n", err);
		return err;
	}

	free(ah);

	return 0;
}
