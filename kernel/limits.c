// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: limits profiles.  A device takes the profile of the module
 * parameter "limits" when it is created: "softsrd" (its own, larger
 * limits) or one per EFA generation, which reproduces that generation's
 * limits and conventions as libefa presents an EFA device, so that code
 * that would break on EFA breaks here too, and software written for EFA
 * finds what it expects: EFA's max_msg_sz whatever the MTU, 16-bit QP
 * numbers, EFA's vendor_err numbers and completion opcodes
 * (srd_profile_cqe()).  "efa-gen1" has RDMA read only, "efa-gen2" RDMA
 * write (with immediate) too, "efa-gen3" unsolicited write recv besides
 * (a write with immediate to a QP that asks for it consumes no receive);
 * "efa" names efa-gen1, the EFA that Debian 12's rdma-core 44 knows.
 * The generations differ only in their caps: no figure of EFA's limits is
 * published per generation (docs/protocol.md, "Limits profiles").
 * Here too, the limit the netdev sets: the port's MTU.
 */

#include <linux/moduleparam.h>
#include <linux/string.h>

#include "srd.h"

static const char * const srd_limits_names[] = {
	[SRD_LIMITS_SOFTSRD] = "softsrd",
	[SRD_LIMITS_EFA_GEN1] = "efa-gen1",
	[SRD_LIMITS_EFA_GEN2] = "efa-gen2",
	[SRD_LIMITS_EFA_GEN3] = "efa-gen3",
};

static const struct srd_limits srd_limits_profiles[] = {
	[SRD_LIMITS_SOFTSRD] = {
		.profile = SRD_LIMITS_SOFTSRD,
		.max_send_sge = SRD_MAX_SEND_SGE,
		.max_recv_sge = SRD_MAX_RECV_SGE,
		.max_rdma_sge = SRD_MAX_RDMA_SGE,
		.max_inline_bytes = SRD_MAX_INLINE_BYTES,
		.max_srd_msg_bytes = SRD_DEV_MAX_MSG_BYTES,
		.max_qpn = 0xffffff,
		.device_caps = SRD_DEVICE_CAP_RDMA_READ |
			       SRD_DEVICE_CAP_RNR_RETRY |
			       SRD_DEVICE_CAP_CQ_WITH_SGID |
			       SRD_DEVICE_CAP_RDMA_WRITE,
	},
	[SRD_LIMITS_EFA_GEN1] = {
		.profile = SRD_LIMITS_EFA_GEN1,
		.max_send_sge = 2,
		.max_recv_sge = 3,
		.max_rdma_sge = 1,
		.max_inline_bytes = 32,
		.max_srd_msg_bytes = SRD_EFA_MAX_MSG_BYTES,
		/* libfabric keeps QP numbers in 16 bits. */
		.max_qpn = 0xffff,
		/* No RDMA write: rdma-core 44's libefa has none either. */
		.device_caps = SRD_DEVICE_CAP_RDMA_READ |
			       SRD_DEVICE_CAP_RNR_RETRY |
			       SRD_DEVICE_CAP_CQ_WITH_SGID,
		.efa_completions = true,
	},
	/* efa-gen1's, with RDMA write (and write with immediate). */
	[SRD_LIMITS_EFA_GEN2] = {
		.profile = SRD_LIMITS_EFA_GEN2,
		.max_send_sge = 2,
		.max_recv_sge = 3,
		.max_rdma_sge = 1,
		.max_inline_bytes = 32,
		.max_srd_msg_bytes = SRD_EFA_MAX_MSG_BYTES,
		.max_qpn = 0xffff,
		.device_caps = SRD_DEVICE_CAP_RDMA_READ |
			       SRD_DEVICE_CAP_RNR_RETRY |
			       SRD_DEVICE_CAP_CQ_WITH_SGID |
			       SRD_DEVICE_CAP_RDMA_WRITE,
		.efa_completions = true,
	},
	/* efa-gen2's, with unsolicited write recv. */
	[SRD_LIMITS_EFA_GEN3] = {
		.profile = SRD_LIMITS_EFA_GEN3,
		.max_send_sge = 2,
		.max_recv_sge = 3,
		.max_rdma_sge = 1,
		.max_inline_bytes = 32,
		.max_srd_msg_bytes = SRD_EFA_MAX_MSG_BYTES,
		.max_qpn = 0xffff,
		.device_caps = SRD_DEVICE_CAP_RDMA_READ |
			       SRD_DEVICE_CAP_RNR_RETRY |
			       SRD_DEVICE_CAP_CQ_WITH_SGID |
			       SRD_DEVICE_CAP_RDMA_WRITE |
			       SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV,
		.efa_completions = true,
	},
};

static unsigned int srd_limits_param = SRD_LIMITS_SOFTSRD;

static int srd_limits_param_set(const char *val, const struct kernel_param *kp)
{
	int profile = sysfs_match_string(srd_limits_names, val);

	/* "efa", the one EFA profile before there were generations. */
	if (profile < 0 && sysfs_streq(val, "efa"))
		profile = SRD_LIMITS_EFA_GEN1;
	if (profile < 0)
		return -EINVAL;
	WRITE_ONCE(srd_limits_param, profile);
	return 0;
}

static int srd_limits_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  srd_limits_names[READ_ONCE(srd_limits_param)]);
}

static const struct kernel_param_ops srd_limits_param_ops = {
	.set = srd_limits_param_set,
	.get = srd_limits_param_get,
};

module_param_cb(limits, &srd_limits_param_ops, NULL, 0644);
MODULE_PARM_DESC(limits, "Limits profile of devices created from now on: softsrd (default), efa-gen1 (or efa), efa-gen2 or efa-gen3");

/* The limits a new device takes. */
void srd_limits_init(struct srd_limits *limits)
{
	*limits = srd_limits_profiles[READ_ONCE(srd_limits_param)];
}

const char *srd_limits_name(const struct srd_limits *limits)
{
	return srd_limits_names[limits->profile];
}

/*
 * EFA's number for each softsrd vendor_err (docs/protocol.md, "The efa
 * profile"), and the status libefa reports with it.
 */
static const struct {
	u8 efa;				/* enum srd_efa_vendor_err */
	u8 status;			/* enum ib_wc_status */
} srd_efa_verr[] = {
	[SRD_VERR_NONE] = { SRD_EFA_VERR_OK, IB_WC_SUCCESS },
	[SRD_VERR_BAD_LKEY] = { SRD_EFA_VERR_INVALID_LKEY, IB_WC_LOC_PROT_ERR },
	[SRD_VERR_LKEY_PD] = { SRD_EFA_VERR_INVALID_LKEY, IB_WC_LOC_PROT_ERR },
	[SRD_VERR_LKEY_RANGE] = { SRD_EFA_VERR_INVALID_LKEY, IB_WC_LOC_PROT_ERR },
	[SRD_VERR_LKEY_ACCESS] = { SRD_EFA_VERR_INVALID_LKEY, IB_WC_LOC_PROT_ERR },
	[SRD_VERR_BAD_AH] = { SRD_EFA_VERR_INVALID_AH, IB_WC_LOC_QP_OP_ERR },
	[SRD_VERR_MSG_TOO_LONG] = { SRD_EFA_VERR_LOCAL_BAD_LENGTH, IB_WC_LOC_LEN_ERR },
	[SRD_VERR_BAD_WQE] = { SRD_EFA_VERR_LOCAL_BAD_LENGTH, IB_WC_LOC_LEN_ERR },
	[SRD_VERR_BAD_OPCODE] = { SRD_EFA_VERR_INVALID_OP_TYPE, IB_WC_LOC_QP_OP_ERR },
	[SRD_VERR_RECV_TOO_SHORT] = { SRD_EFA_VERR_LOCAL_BAD_LENGTH, IB_WC_LOC_LEN_ERR },
	[SRD_VERR_NO_ROUTE] = { SRD_EFA_VERR_REMOTE_BAD_ADDRESS, IB_WC_GENERAL_ERR },
	[SRD_VERR_NOMEM] = { SRD_EFA_VERR_QP_INTERNAL_ERROR, IB_WC_LOC_QP_OP_ERR },
	[SRD_VERR_FLUSH] = { SRD_EFA_VERR_FLUSHED, IB_WC_WR_FLUSH_ERR },
	[SRD_VERR_RNR_RETRY_EXC] = { SRD_EFA_VERR_REMOTE_RNR, IB_WC_RNR_RETRY_EXC_ERR },
	[SRD_VERR_REMOTE_BAD_QPN] = { SRD_EFA_VERR_REMOTE_BAD_DEST_QPN, IB_WC_REM_INV_RD_REQ_ERR },
	[SRD_VERR_REMOTE_BAD_QKEY] = { SRD_EFA_VERR_REMOTE_BAD_DEST_QPN, IB_WC_REM_INV_RD_REQ_ERR },
	[SRD_VERR_REMOTE_BAD_LENGTH] = { SRD_EFA_VERR_REMOTE_BAD_LENGTH, IB_WC_REM_INV_REQ_ERR },
	[SRD_VERR_REMOTE_ABORT] = { SRD_EFA_VERR_REMOTE_ABORT, IB_WC_REM_ABORT_ERR },
	[SRD_VERR_UNRESP_REMOTE] = { SRD_EFA_VERR_UNRESP_REMOTE, IB_WC_RESP_TIMEOUT_ERR },
	[SRD_VERR_PEER_RESTARTED] = { SRD_EFA_VERR_REMOTE_ABORT, IB_WC_REM_ABORT_ERR },
	[SRD_VERR_REMOTE_ACCESS] = { SRD_EFA_VERR_REMOTE_BAD_ADDRESS, IB_WC_GENERAL_ERR },
};

/*
 * Rewrite @cqe, about to be posted, in the conventions of @limits' profile.
 * softsrd's own profile reports what happened as softsrd names it; the efa
 * profiles as libefa does: the opcode as SRD_CQE_OPCODES says (an RDMA
 * read's is SEND), and vendor_err and status from EFA's table.
 */
void srd_profile_cqe(const struct srd_limits *limits, struct srd_cqe *cqe)
{
	u32 verr = cqe->vendor_err;

	if (!limits->efa_completions)
		return;
	cqe->opcode = srd_cqe_efa_opcode(cqe->opcode);
	if (verr < ARRAY_SIZE(srd_efa_verr) &&
	    (verr || cqe->status == IB_WC_SUCCESS)) {
		cqe->vendor_err = srd_efa_verr[verr].efa;
		cqe->status = srd_efa_verr[verr].status;
	} else {
		/* An error softsrd gave no code to: EFA's "bad status". */
		cqe->vendor_err = SRD_EFA_VERR_REMOTE_BAD_STATUS;
		cqe->status = IB_WC_BAD_RESP_ERR;
	}
}

/* The port's active MTU, or 0 if the netdev's MTU is too small for any. */
enum ib_mtu srd_port_active_mtu(struct srd_dev *sdev)
{
	u32 payload = srd_wire_ud_payload_max(READ_ONCE(sdev->ndev->mtu));

	return payload >= 256 ? ib_mtu_int_to_enum(payload) : 0;
}

u32 srd_port_mtu_bytes(struct srd_dev *sdev)
{
	enum ib_mtu mtu = srd_port_active_mtu(sdev);

	return mtu ? ib_mtu_enum_to_int(mtu) : 0;
}
