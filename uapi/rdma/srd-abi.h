/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softsrd: the contract between the rdma_srd kernel module and the libsrd
 * verbs provider.  Nothing else is shared between the two.
 *
 * Versioning:
 *  - SRD_UVERBS_ABI_VERSION is the ib_device's uverbs ABI version.  The
 *    kernel publishes it in /sys/class/infiniband_verbs/uverbsN/abi_version
 *    and libsrd binds only to a device whose version it was built for.
 *    Bump it on any incompatible change to a struct below.
 *  - Compatible growth uses comp_mask bits and trailing fields; both sides
 *    check the length they were given.
 *  - SRD_HCA_TYPE is the content of the device's sysfs hca_type file, which
 *    the provider uses to recognise an srd device whatever its name.
 */
#ifndef SRD_ABI_USER_H
#define SRD_ABI_USER_H

#include <linux/types.h>

#define SRD_UVERBS_ABI_VERSION	1
#define SRD_HCA_TYPE		"softsrd"

/* alloc_ucontext: provider -> kernel */
struct srd_alloc_ucontext_cmd {
	__u32 comp_mask;	/* no bits defined yet: must be 0 */
	__u32 abi_version;	/* SRD_UVERBS_ABI_VERSION the provider was built with */
};

/* Limits profiles (see docs/architecture.md). */
enum srd_limits_profile {
	SRD_LIMITS_SOFTSRD = 0,	/* softsrd's own, larger limits */
	SRD_LIMITS_EFA = 1,	/* reproduce EFA's limits */
};

/* alloc_ucontext: kernel -> provider */
struct srd_alloc_ucontext_resp {
	__u32 comp_mask;	/* no bits defined yet */
	__u32 abi_version;	/* SRD_UVERBS_ABI_VERSION of the kernel */
	__u32 limits_profile;	/* enum srd_limits_profile */
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_rdma_sge;
	__u32 max_inline_data;	/* bytes */
	__u32 max_msg_sz;	/* bytes, SRD QPs */
};

/* alloc_pd: kernel -> provider */
struct srd_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;		/* 0 */
};

#endif /* SRD_ABI_USER_H */
