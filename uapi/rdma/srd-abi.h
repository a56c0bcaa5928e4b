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
	SRD_LIMITS_EFA_GEN1 = 1, /* EFA's, RDMA read ("efa-gen1", "efa") */
	SRD_LIMITS_EFA_GEN2 = 2, /* EFA's, RDMA read and write ("efa-gen2") */
	/* efa-gen2's, with unsolicited write recv ("efa-gen3") */
	SRD_LIMITS_EFA_GEN3 = 3,
};

/* srd_alloc_ucontext_resp.comp_mask */
enum srd_alloc_ucontext_resp_mask {
	/* device_caps and max_rdma_size are valid */
	SRD_UCONTEXT_RESP_RDMA = 1 << 0,
};

/* srd_alloc_ucontext_resp.device_caps (the efadv bits, same meaning) */
enum srd_device_caps {
	SRD_DEVICE_CAP_RDMA_READ = 1 << 0,	/* RDMA read on SRD QPs */
	SRD_DEVICE_CAP_RNR_RETRY = 1 << 1,	/* rnr_retry is honoured */
	SRD_DEVICE_CAP_CQ_WITH_SGID = 1 << 2,	/* srddv_wc_read_sgid() */
	SRD_DEVICE_CAP_RDMA_WRITE = 1 << 3,	/* RDMA write (with imm) */
	/* SRD_QP_FLAG_UNSOLICITED_WRITE_RECV is taken */
	SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV = 1 << 4,
};

/* alloc_ucontext: kernel -> provider */
struct srd_alloc_ucontext_resp {
	__u32 comp_mask;	/* enum srd_alloc_ucontext_resp_mask */
	__u32 abi_version;	/* SRD_UVERBS_ABI_VERSION of the kernel */
	__u32 limits_profile;	/* enum srd_limits_profile */
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_rdma_sge;
	__u32 max_inline_data;	/* bytes */
	__u32 max_msg_sz;	/* bytes, SRD QPs */
	/* with SRD_UCONTEXT_RESP_RDMA: */
	__u32 device_caps;	/* enum srd_device_caps */
	__u32 max_rdma_size;	/* bytes one RDMA read or write may move */
};

/* alloc_pd: kernel -> provider */
struct srd_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;		/* 0 */
};

/*
 * Shared rings.
 *
 * Every SQ, RQ and CQ is one ring in kernel memory that the provider maps
 * with mmap(2) at the offset (mmap_key) the create response gives.  A ring
 * is a struct srd_ring_ctl at offset 0, then num_entries slots of `stride`
 * bytes from SRD_RING_SLOTS_OFFSET.  num_entries is a power of two.
 *
 * prod and cons are free-running 32-bit counters; slot i is at index
 * (i & (num_entries - 1)).  The ring is empty when prod == cons and full
 * when prod - cons == num_entries.  Each counter has exactly one writer:
 *
 *   ring  producer (writes prod)    consumer (writes cons)
 *   SQ    provider (post_send)      kernel (doorbell)
 *   RQ    provider (post_recv)      kernel (packet receive)
 *   CQ    kernel (completions)      provider (poll_cq)
 *
 * A producer fills the slot, then publishes it with a release store to
 * prod; a consumer reads prod with an acquire load, reads the slot, then
 * frees it with a release store to cons.  The kernel never trusts what it
 * reads from a ring: it copies a slot before it checks it, and treats
 * prod - cons > num_entries as an empty, broken ring.
 *
 * The ctl.state of an SQ or RQ is the QP state.  The provider refuses
 * sends before RTS and receives in RESET by it.  Posting a receive while
 * the QP goes to ERR is a handshake: the provider publishes prod, issues a
 * full barrier, then reads state, and rings the doorbell if it reads ERR;
 * the kernel writes state, issues a full barrier, then flushes up to prod.
 * Either way the receive is flushed.
 *
 * Slot layouts: an SQ slot is struct srd_send_wqe, then its SGEs or inline
 * bytes from offset sizeof(struct srd_send_wqe) (48); an RQ slot is struct
 * srd_recv_wqe, then its SGEs.  The stride holds the header plus
 * max(SGEs x 16, inline bytes) that the QP was granted, and is a multiple
 * of 16.
 */
#define SRD_RING_SLOTS_OFFSET	256

struct srd_ring_ctl {
	__u32 prod;
	__u32 pad0[15];			/* prod and cons: separate cache lines */
	__u32 cons;
	__u32 pad1[15];
	/*
	 * Written by the kernel only.  For an SQ or RQ: the QP's state as an
	 * enum ibv_qp_state value.  For a CQ: SRD_CQ_FLAG_* bits.
	 */
	__u32 state;
	/*
	 * Written by the kernel only, SQ rings only: the largest message a
	 * work request may carry now.  It follows the port MTU for UD, so it
	 * can change under a live QP; srd_create_qp_resp.max_msg_sz is its
	 * value at creation.
	 */
	__u32 max_msg_sz;
	__u32 pad2[14];
};

/* srd_ring_ctl.state of a CQ */
enum srd_cq_flags {
	SRD_CQ_FLAG_OVERFLOW = 1 << 0,	/* a completion was lost: CQ error */
};

/* Where a ring is and what it holds: part of a create response. */
struct srd_ring_info {
	__aligned_u64 mmap_key;		/* mmap(2) offset */
	__u32 mmap_size;		/* bytes to map, a page multiple */
	__u32 num_entries;		/* slots, a power of two */
	__u32 stride;			/* bytes per slot */
	__u32 reserved;			/* 0 */
};

/* A scatter/gather element, as in struct ibv_sge. */
struct srd_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * SQ slot opcodes, each with its rules, in one list that makes the enum
 * and srd_wqe_rule() below: the kernel and the provider both read the
 * rules there, so that neither takes a work request the other refuses.
 * X(NAME, value, qps, cap, cqe, rules, wr):
 *   NAME   SRD_WQE_<NAME>; in the verbs, IBV_WR_<NAME> and
 *          IBV_QP_EX_WITH_<NAME>
 *   value  struct srd_send_wqe's opcode
 *   qps    the QP types that take it (enum srd_wqe_qps)
 *   cap    the device cap it needs besides, or 0 (the efa limits profile
 *          has no SRD_DEVICE_CAP_RDMA_WRITE)
 *   cqe    its completion's opcode, SRD_CQE_<cqe>
 *   rules  enum srd_wqe_rules
 *   wr     its builder in struct ibv_qp_ex, which libsrd's srd_<wr>()
 *          implements
 * A new opcode also needs its handling where docs/architecture.md's
 * checklist "Adding an opcode" says.
 */
#define SRD_WQE_OPCODES(X)						\
	X(SEND, 0, SRD_WQE_ON_UD | SRD_WQE_ON_SRD, 0, SEND, 0, wr_send)	\
	X(SEND_WITH_IMM, 1, SRD_WQE_ON_UD | SRD_WQE_ON_SRD, 0, SEND,	\
	  SRD_WQE_RULE_IMM, wr_send_imm)				\
	X(RDMA_WRITE, 2, SRD_WQE_ON_SRD, SRD_DEVICE_CAP_RDMA_WRITE,	\
	  RDMA_WRITE, SRD_WQE_RULE_RDMA | SRD_WQE_RULE_REMOTE_WRITE,	\
	  wr_rdma_write)						\
	X(RDMA_WRITE_WITH_IMM, 3, SRD_WQE_ON_SRD,			\
	  SRD_DEVICE_CAP_RDMA_WRITE, RDMA_WRITE,			\
	  SRD_WQE_RULE_RDMA | SRD_WQE_RULE_REMOTE_WRITE | SRD_WQE_RULE_IMM, \
	  wr_rdma_write_imm)						\
	X(RDMA_READ, 4, SRD_WQE_ON_SRD, SRD_DEVICE_CAP_RDMA_READ,	\
	  RDMA_READ, SRD_WQE_RULE_RDMA | SRD_WQE_RULE_REMOTE_READ,	\
	  wr_rdma_read)

#define SRD_WQE_OPCODE_ENUM(n, v, qps, cap, cqe, rules, wr)	SRD_WQE_##n = v,
enum srd_wqe_opcode {
	SRD_WQE_OPCODES(SRD_WQE_OPCODE_ENUM)
};

/* The QP types an opcode is valid on. */
enum srd_wqe_qps {
	SRD_WQE_ON_UD = 1 << 0,
	SRD_WQE_ON_SRD = 1 << 1,	/* SRD_QP_TYPE_SRD */
};

/* What an opcode does, which the checks of its slot follow. */
enum srd_wqe_rules {
	/*
	 * Carries imm_data: to the receive's completion, or (UD) in the
	 * header.
	 */
	SRD_WQE_RULE_IMM = 1 << 0,
	/*
	 * An RDMA operation on remote_addr and rkey: at most max_rdma_sge
	 * SGEs and max_rdma_size bytes, which the kernel cuts into messages.
	 */
	SRD_WQE_RULE_RDMA = 1 << 1,
	/* The responder writes its memory: the rkey needs REMOTE_WRITE. */
	SRD_WQE_RULE_REMOTE_WRITE = 1 << 2,
	/*
	 * The responder's memory is read into the local buffers: the rkey
	 * needs REMOTE_READ, the lkeys LOCAL_WRITE, and no inline data.
	 */
	SRD_WQE_RULE_REMOTE_READ = 1 << 3,
};

/* SQ slot flags */
enum srd_wqe_flags {
	SRD_WQE_SIGNALED = 1 << 0,	/* generate a completion */
	SRD_WQE_SOLICITED = 1 << 1,	/* ask for a solicited event */
	SRD_WQE_INLINE = 1 << 2,	/* data follows the header */
};

/*
 * An SQ slot: this header, then num_sge struct srd_sge, or inline_len bytes
 * of data when SRD_WQE_INLINE is set.  The destination is an AH number
 * (srd_create_ah_resp.ahn), a QP number and a Q_Key, as in a UD work
 * request.
 */
struct srd_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;			/* enum srd_wqe_opcode */
	__u8 flags;			/* enum srd_wqe_flags */
	__u16 num_sge;
	__u32 inline_len;		/* bytes */
	__be32 imm_data;		/* as in ibv_send_wr: network order */
	__u32 ahn;
	__u32 remote_qpn;
	__u32 remote_qkey;
	__aligned_u64 remote_addr;	/* RDMA opcodes */
	__u32 rkey;			/* RDMA opcodes */
	__u32 reserved;			/* 0 */
};

/* An RQ slot: this header, then num_sge struct srd_sge. */
struct srd_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;			/* 0 */
};

/*
 * CQE opcodes, X(NAME, value, efa): SRD_CQE_<NAME>, the value of
 * IBV_WC_<NAME> (the provider checks it), and the opcode a completion
 * has instead in the efa limits profiles, as libefa reports it: an RDMA
 * write's as such, any other send's as SEND, and a receive's as RECV but
 * for a write with immediate's.
 */
#define SRD_CQE_OPCODES(X)						\
	X(SEND, 0, SEND)						\
	X(RDMA_WRITE, 1, RDMA_WRITE)					\
	X(RDMA_READ, 2, SEND)						\
	X(RECV, 128, RECV)						\
	X(RECV_RDMA_WITH_IMM, 129, RECV_RDMA_WITH_IMM)

#define SRD_CQE_OPCODE_ENUM(n, v, efa)	SRD_CQE_##n = v,
enum srd_cqe_opcode {
	SRD_CQE_OPCODES(SRD_CQE_OPCODE_ENUM)
};

/* The opcode of a completion of opcode @opcode in the efa profiles. */
#define SRD_CQE_EFA_CASE(n, v, efa)					\
	case SRD_CQE_##n:						\
		return SRD_CQE_##efa;
static inline __u8 srd_cqe_efa_opcode(__u8 opcode)
{
	switch (opcode) {
	SRD_CQE_OPCODES(SRD_CQE_EFA_CASE)
	default:
		return opcode;
	}
}

/*
 * The rules of SQ slot opcode @opcode (SRD_WQE_OPCODES): an opcode
 * outside the list is valid on no QP type (qps 0).
 */
struct srd_wqe_rule {
	__u32 qps;			/* enum srd_wqe_qps */
	__u32 cap;			/* enum srd_device_caps */
	__u32 rules;			/* enum srd_wqe_rules */
	__u8 cqe;			/* enum srd_cqe_opcode */
};

#define SRD_WQE_RULE_CASE(n, v, q, c, op, r, wr)			\
	case SRD_WQE_##n:						\
		rule.qps = (q);						\
		rule.cap = (c);						\
		rule.rules = (r);					\
		rule.cqe = SRD_CQE_##op;				\
		break;
static inline struct srd_wqe_rule srd_wqe_rule(__u8 opcode)
{
	struct srd_wqe_rule rule = { 0, 0, 0, 0 };

	switch (opcode) {
	SRD_WQE_OPCODES(SRD_WQE_RULE_CASE)
	default:
		break;
	}
	return rule;
}

/* CQE flags */
enum srd_cqe_flags {
	SRD_CQE_WITH_IMM = 1 << 0,	/* imm_data is valid */
	SRD_CQE_GRH = 1 << 1,		/* a GRH is in the first 40 bytes */
	SRD_CQE_SOLICITED = 1 << 2,	/* the sender asked for an event */
	/*
	 * A receive completion that consumed no receive work request (wr_id
	 * 0): a write with immediate to a QP created with
	 * SRD_QP_FLAG_UNSOLICITED_WRITE_RECV.
	 */
	SRD_CQE_UNSOLICITED = 1 << 3,
};

/*
 * Completion status: the values of enum ibv_wc_status.  vendor_err says
 * more, with the codes below (docs/protocol.md lists them).
 */
enum srd_vendor_err {
	SRD_VERR_NONE = 0,
	SRD_VERR_BAD_LKEY = 1,		/* no MR with this lkey */
	SRD_VERR_LKEY_PD = 2,		/* the MR is in another PD */
	SRD_VERR_LKEY_RANGE = 3,	/* the SGE is outside the MR */
	SRD_VERR_LKEY_ACCESS = 4,	/* the MR lacks the access needed */
	SRD_VERR_BAD_AH = 5,		/* no AH with this number */
	SRD_VERR_MSG_TOO_LONG = 6,	/* larger than the QP type allows */
	SRD_VERR_BAD_WQE = 7,		/* malformed slot */
	SRD_VERR_BAD_OPCODE = 8,	/* opcode not valid on this QP */
	SRD_VERR_RECV_TOO_SHORT = 9,	/* receive buffers too small */
	SRD_VERR_NO_ROUTE = 10,		/* no route to the destination */
	SRD_VERR_NOMEM = 11,		/* out of kernel memory */
	SRD_VERR_FLUSH = 12,		/* flushed: the QP is in error */
	/* SRD QPs: the remote side or the transport refused a send. */
	SRD_VERR_RNR_RETRY_EXC = 13,	/* no receive posted, rnr_retry spent */
	SRD_VERR_REMOTE_BAD_QPN = 14,	/* no SRD QP with that number */
	SRD_VERR_REMOTE_BAD_QKEY = 15,	/* the Q_Key differs from the QP's */
	SRD_VERR_REMOTE_BAD_LENGTH = 16, /* receive buffers too small, or
					  * beyond the receiver's max_msg_sz
					  */
	SRD_VERR_REMOTE_ABORT = 17,	/* the receiving QP failed or went */
	SRD_VERR_UNRESP_REMOTE = 18,	/* no answer within the retry budget */
	SRD_VERR_PEER_RESTARTED = 19,	/* the remote device was re-created */
	/*
	 * RDMA: the responder refused the rkey: unknown or deregistered,
	 * another PD, the access missing, or the range outside the MR.
	 */
	SRD_VERR_REMOTE_ACCESS = 20,
};

/*
 * vendor_err in the efa limits profile: EFA's own completion status
 * numbers (what rdma-core 44's libefa reports as vendor_err), so software
 * written for EFA reads them as it would there; the CQE's status is then
 * what libefa derives from them.  docs/protocol.md maps each
 * enum srd_vendor_err to one of these.
 */
enum srd_efa_vendor_err {
	SRD_EFA_VERR_OK = 0,
	SRD_EFA_VERR_FLUSHED = 1,
	SRD_EFA_VERR_QP_INTERNAL_ERROR = 2,
	SRD_EFA_VERR_INVALID_OP_TYPE = 3,
	SRD_EFA_VERR_INVALID_AH = 4,
	SRD_EFA_VERR_INVALID_LKEY = 5,
	SRD_EFA_VERR_LOCAL_BAD_LENGTH = 6,
	SRD_EFA_VERR_REMOTE_BAD_ADDRESS = 7,
	SRD_EFA_VERR_REMOTE_ABORT = 8,
	SRD_EFA_VERR_REMOTE_BAD_DEST_QPN = 9,
	SRD_EFA_VERR_REMOTE_RNR = 10,
	SRD_EFA_VERR_REMOTE_BAD_LENGTH = 11,
	SRD_EFA_VERR_REMOTE_BAD_STATUS = 12,
	SRD_EFA_VERR_UNRESP_REMOTE = 13,
};

/*
 * A CQ slot: 64 bytes.  In the efa limits profiles, a send-queue
 * completion has opcode SRD_CQE_RDMA_WRITE for an RDMA write and
 * SRD_CQE_SEND for any other (an RDMA read's too, as on EFA), a receive
 * SRD_CQE_RECV_RDMA_WITH_IMM for a write with immediate and SRD_CQE_RECV
 * for any other, and vendor_err is an enum srd_efa_vendor_err.
 */
struct srd_cqe {
	__aligned_u64 wr_id;
	__u8 status;			/* enum ibv_wc_status */
	__u8 opcode;			/* enum srd_cqe_opcode */
	__u16 flags;			/* enum srd_cqe_flags */
	__u32 vendor_err;		/* enum srd_vendor_err, or (efa
					 * profile) enum srd_efa_vendor_err
					 */
	__u32 byte_len;			/* receives: GRH included (UD) */
	__be32 imm_data;
	__u32 qp_num;			/* the local QP */
	__u32 src_qp;			/* receives: the sender's QP */
	__u16 slid;			/* receives: local AH number of the
					 * sender, or 0xffff if none
					 */
	__u16 reserved0;
	__u32 reserved1;
	__u8 sgid[16];			/* receives: the sender's GID */
	__u32 reserved2[2];
};

/* create_cq: provider -> kernel */
struct srd_create_cq_cmd {
	__u32 comp_mask;		/* 0 */
	__u32 reserved;			/* 0 */
};

/* create_cq: kernel -> provider */
struct srd_create_cq_resp {
	__u32 comp_mask;
	__u32 cqn;
	struct srd_ring_info ring;	/* stride is sizeof(struct srd_cqe) */
};

/* Driver QP types, for IBV_QPT_DRIVER. */
enum srd_qp_type {
	SRD_QP_TYPE_NONE = 0,		/* qp_type is a standard one (UD) */
	SRD_QP_TYPE_SRD = 1,
};

/* srd_create_qp_cmd.flags */
enum srd_create_qp_flags {
	/*
	 * SRD QPs, with SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV: an incoming
	 * RDMA write with immediate consumes no receive work request; its
	 * completion has SRD_CQE_UNSOLICITED and wr_id 0 (EFA's
	 * EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV).
	 */
	SRD_QP_FLAG_UNSOLICITED_WRITE_RECV = 1 << 0,
};

/*
 * create_qp: provider -> kernel.  flags and reserved came later: a
 * provider that sends only the first 8 bytes means no flags, and a
 * kernel that knows only those refuses a provider's nonzero flags.
 */
struct srd_create_qp_cmd {
	__u32 comp_mask;		/* 0 */
	__u32 driver_qp_type;		/* enum srd_qp_type */
	__u32 flags;			/* enum srd_create_qp_flags */
	__u32 reserved;			/* 0 */
};

/* create_qp: kernel -> provider */
struct srd_create_qp_resp {
	__u32 comp_mask;
	__u32 max_msg_sz;		/* bytes one work request may carry */
	struct srd_ring_info sq;	/* slots: struct srd_send_wqe + data */
	struct srd_ring_info rq;	/* slots: struct srd_recv_wqe + SGEs */
};

/* create_ah: kernel -> provider */
struct srd_create_ah_resp {
	__u32 comp_mask;
	__u16 ahn;			/* what srddv_query_ah reports */
	__u16 reserved;
};

/* The size of the GRH area at the head of a UD receive buffer. */
#define SRD_GRH_BYTES		40

#endif /* SRD_ABI_USER_H */
