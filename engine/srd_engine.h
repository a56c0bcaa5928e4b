/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine: the portable SRD transport core.
 *
 * The engine implements the SRD wire protocol of docs/protocol.md
 * ("SRD transport"): per-peer reliability (PSNs, SACK, RTO, early
 * retransmit), spraying over N paths with path health, delay-based
 * congestion control with pacing, segmentation and reassembly of
 * messages, RNR, error NAKs, and per-peer tags that no off-path sender
 * can learn (association and restart, stateless until a remote proves it
 * receives at its address).
 *
 * It is a library, not a driver.  The OS layer (the kernel module, or the
 * host-side tests and simulator) gives it one struct srd_ops and calls one
 * function per event:
 *
 *   srd_send_msg()          a send work request was posted
 *   srd_peer_on_packet()    a datagram arrived from this peer
 *   srd_engine_on_stray()   a datagram arrived from a remote with no peer
 *   srd_peer_on_timer()     the peer's deadline passed
 *
 * After every call the engine reports the peer's next deadline through
 * ops->timer_set(); the OS arms one timer per peer.
 *
 * Locking and lifetime: the engine takes no locks.  The OS serialises all
 * calls for one peer (a per-peer lock, held across the call), and all
 * calls that create or destroy peers of one engine.  Calls for different
 * peers may run concurrently: each peer counts into counters of its own,
 * and the engine's own (its strays, and what destroyed peers counted)
 * change only under the serialisation of peer creation; an OS reads them
 * as srd_engine_own_counters() says.  Upcalls
 * are made with that serialisation held and must not call back into the
 * engine for the same peer.
 */
#ifndef SRD_ENGINE_H
#define SRD_ENGINE_H

#include "srd_os.h"

/* --- the wire (docs/protocol.md, "SRD transport") -------------------- */

/*
 * Version 2: per-peer tags (docs/protocol.md, "Tags and peer restart").
 * Version 3: ACKs ride on DATA, and a receiver in an exchange of replies
 * waits for the reply to carry them ("Receiver").
 * Version 4: a HELLO carries a challenge and an echo, and a new remote tag
 * is believed only from a HELLO that echoes our challenge ("Tags and peer
 * restart").
 */
#define SRD_WIRE_VERSION		4

/*
 * Lists that make an enum and what is keyed by it together: LIST(X, SEP)
 * is X(NAME, ...) for each value, in order, with SEP() between, so that
 * one list gives the enum, its names and, in the kernel, its trace
 * symbols (__print_symbolic takes no trailing comma).  A map from such an
 * enum to anything else is a switch with no default, which -Wswitch
 * checks.
 */
#define SRD_LIST_COMMA()	,
#define SRD_LIST_SEMI()		;
#define SRD_LIST_NONE()

enum srd_engine_wire_flags {
	SRD_WF_DATA_SOLICITED = 1 << 0,	/* same bit as UD's SOLICITED */
	SRD_WF_DATA_HAS_IMM = 1 << 1,
	SRD_WF_DATA_RETRANSMIT = 1 << 2,	/* informational */
	SRD_WF_DATA_ACK_NOW = 1 << 3,	/* receiver: ACK without delay */
	SRD_WF_DATA_HAS_ACK = 1 << 4,	/* an ACK block follows the header */
	SRD_WF_ACK_DUP = 1 << 0,	/* ACK: dup_psn carried data already placed */
	SRD_WF_ACK_DRAIN = 1 << 1,	/* ACK: hold the window at its floor */
	/* What a sender may set, per opcode (SRD_WIRE_OPS). */
	SRD_WF_DATA_ALL = SRD_WF_DATA_SOLICITED | SRD_WF_DATA_HAS_IMM |
			  SRD_WF_DATA_RETRANSMIT | SRD_WF_DATA_ACK_NOW |
			  SRD_WF_DATA_HAS_ACK,
	SRD_WF_DATA_NO_IMM = SRD_WF_DATA_ALL & ~SRD_WF_DATA_HAS_IMM,
	SRD_WF_ACK_ALL = SRD_WF_ACK_DUP | SRD_WF_ACK_DRAIN,
};

/*
 * The SRD transport's opcodes (docs/protocol.md, "Headers"), one
 * X(NAME, value, hdr_bytes, flags, kind) each:
 *   NAME       SRD_WOP_<NAME>; the name the forger and the dissector print
 *   value      the opcode byte: from SRD_WOP_FIRST up, without a gap
 *   hdr_bytes  its header's length, without an ACK block
 *   flags      the flags a sender may set (enum srd_engine_wire_flags)
 *   kind       the message kind whose packets it carries (SRD_MSG_KINDS),
 *              or NONE: one with a kind has the DATA fields first and may
 *              carry an ACK block (SRD_WF_DATA_HAS_ACK)
 * The forger (selftests/srd_forge.py) and the dissector
 * (tools/wireshark/softsrd.lua) are checked against this list by a host
 * test; docs/architecture.md, "Adding an opcode", says what else a new
 * opcode needs.
 */
#define SRD_WIRE_OPS(X, SEP)						\
	X(DATA, 16, SRD_HDR_DATA_BYTES, SRD_WF_DATA_ALL, SEND) SEP()	\
	X(ACK, 17, SRD_HDR_ACK_BYTES, SRD_WF_ACK_ALL, NONE) SEP()	\
	X(NAK, 18, SRD_HDR_NAK_BYTES, 0, NONE) SEP()			\
	X(HELLO, 19, SRD_HDR_HELLO_BYTES, 0, NONE) SEP()		\
	X(WRITE, 20, SRD_HDR_RDMA_BYTES, SRD_WF_DATA_ALL, WRITE) SEP()	\
	X(READ_REQ, 21, SRD_HDR_RDMA_BYTES, SRD_WF_DATA_NO_IMM, READ) SEP() \
	X(READ_RESP, 22, SRD_HDR_RESP_BYTES, SRD_WF_DATA_NO_IMM, READ_RESP)

#define SRD_WOP_ENUM(n, v, hdr, fl, k)	SRD_WOP_##n = (v)
enum srd_engine_wire_op {
	SRD_WIRE_OPS(SRD_WOP_ENUM, SRD_LIST_COMMA)
};

/*
 * The range the OS hands to the engine: every opcode of the list (the
 * engine's wire.c asserts that each lies in it, and its parser's switch
 * that none is there twice).
 */
#define SRD_WOP_ONE(n, v, hdr, fl, k)	+ 1
enum {
	SRD_WOP_FIRST = 16,
	SRD_WOP_NR = 0 SRD_WIRE_OPS(SRD_WOP_ONE, SRD_LIST_NONE),
	SRD_WOP_LAST = SRD_WOP_FIRST + SRD_WOP_NR - 1,
};

/*
 * The ACK block a DATA, WRITE, READ_REQ or READ_RESP may carry (flag
 * HAS_ACK), right after its opcode's header: an ACK's fields behind a
 * flags byte of its own (docs/protocol.md, "Headers").
 */
#define SRD_ACK_BLOCK_BYTES		32

#define SRD_HDR_DATA_BYTES		52
#define SRD_HDR_ACK_BYTES		40
#define SRD_HDR_NAK_BYTES		24
#define SRD_HDR_HELLO_BYTES		20
#define SRD_HDR_RDMA_BYTES		76
#define SRD_HDR_RESP_BYTES		60
/* The longest: an RDMA header with its ACK block. */
#define SRD_HDR_MAX_BYTES		(SRD_HDR_RDMA_BYTES + SRD_ACK_BLOCK_BYTES)

/* What a parser says of a header. */
enum srd_parse_err {
	SRD_PARSE_OK = 0,
	SRD_PARSE_SHORT = -1,
	SRD_PARSE_VERSION = -2,
	SRD_PARSE_HDR_LEN = -3,
	SRD_PARSE_OPCODE = -4,
	SRD_PARSE_FIELD = -5,
};

/*
 * UD datagrams (docs/protocol.md, "Header" and "UD send"): opcodes below
 * SRD_WOP_FIRST, one header, the payload after hdr_len bytes.  The OS
 * delivers them itself; the engine only encodes and parses the header.
 */
#define SRD_WF_UD_SOLICITED		(1 << 0)
#define SRD_HDR_UD_BYTES		24

/* UD's opcodes, SRD_OP_<NAME>: the columns of SRD_WIRE_OPS. */
#define SRD_UD_OPS(X, SEP)						\
	X(UD_SEND, 1, SRD_HDR_UD_BYTES, SRD_WF_UD_SOLICITED, NONE) SEP() \
	X(UD_SEND_WITH_IMM, 2, SRD_HDR_UD_BYTES, SRD_WF_UD_SOLICITED, NONE)

#define SRD_UD_OP_ENUM(n, v, hdr, fl, k)	SRD_OP_##n = (v)
enum srd_ud_op {
	SRD_UD_OPS(SRD_UD_OP_ENUM, SRD_LIST_COMMA)
};

struct srd_ud_hdr {
	uint8_t opcode;			/* enum srd_ud_op */
	uint8_t flags;			/* SRD_WF_UD_SOLICITED */
	uint32_t hdr_len;		/* bytes to the payload (parsed) */
	uint32_t dst_qpn, src_qpn;	/* 24 bits */
	uint32_t qkey;
	uint32_t imm_data;		/* with SRD_OP_UD_SEND_WITH_IMM */
};

/* Writes the header (SRD_HDR_UD_BYTES) into @buf; returns its length. */
uint32_t srd_wire_put_ud(uint8_t *buf, const struct srd_ud_hdr *h);
/*
 * Parses the UD header of a datagram of @len bytes at @buf, reading no
 * more than its first SRD_HDR_UD_BYTES: 0 (the payload is the bytes
 * after h->hdr_len), or a negative enum srd_parse_err.
 */
int srd_wire_parse_ud(const uint8_t *buf, size_t len, struct srd_ud_hdr *h);

/*
 * The UDP port every datagram goes to by default (docs/protocol.md,
 * "Transport"): not 4791, which belongs to RoCEv2 and rxe.
 */
#define SRD_DEFAULT_UDP_PORT		4792

/*
 * Every header, UD or SRD, starts with version, opcode, flags and
 * hdr_len_words: the bytes an OS reads to tell the two apart.
 */
#define SRD_HDR_COMMON_BYTES		4

/* Is the datagram whose first SRD_HDR_COMMON_BYTES are @b the engine's? */
bool srd_wire_is_transport(const uint8_t *b);

/*
 * What the wire spends of a netdev's MTU (docs/protocol.md, "Header"):
 * the larger IP header (IPv6, 40) and UDP (8), then softsrd's header.
 * A UD datagram's payload is at most srd_wire_ud_payload_max(mtu) (the
 * header with an allowance of 64 bytes: 112 in all), from which the
 * port's active MTU is derived; 0 if the MTU leaves none.  An SRD
 * segment is srd_wire_seg_bytes(mtu), what a DATA header leaves, within
 * SRD_MIN_SEG_BYTES..SRD_MAX_SEG_BYTES.
 */
#define SRD_IP_UDP_HDR_MAX_BYTES	48
#define SRD_UD_HDR_ALLOWANCE_BYTES	64
uint32_t srd_wire_ud_payload_max(uint32_t mtu);
uint32_t srd_wire_seg_bytes(uint32_t mtu);

/*
 * The UDP source port of a datagram whose flow or path is @entropy
 * (docs/protocol.md, "Transport and entropy"): 49152 + entropy mod 16384.
 */
uint16_t srd_wire_src_port(uint32_t entropy);

/* An ACK's selective-ack bitmap covers this many PSNs below ack_psn. */
#define SRD_SACK_WINDOW_PKTS		128

/* NAK reasons on the wire. */
enum srd_nak_reason {
	SRD_NAK_RNR = 1,		/* no receive posted */
	SRD_NAK_BAD_QPN = 2,		/* no SRD QP with dst_qpn */
	SRD_NAK_BAD_QKEY = 3,		/* qkey differs from the QP's */
	SRD_NAK_BAD_LENGTH = 4,		/* receive buffers too small, or
					 * msg_len above the receiver's max
					 */
	SRD_NAK_REMOTE_ABORT = 5,	/* the receiving QP failed mid-message */
	SRD_NAK_REMOTE_ACCESS = 6,	/* RDMA: the rkey check failed */
};

/* --- limits ---------------------------------------------------------- */

#define SRD_MAX_PATHS			128
#define SRD_MAX_TX_WINDOW_PKTS		4096
#define SRD_MAX_MSG_WINDOW		1024
#define SRD_MIN_SEG_BYTES		64
#define SRD_MAX_SEG_BYTES		65000
#define SRD_MAX_MSG_BYTES		(64u << 20)
/* One RDMA operation, and one of its messages (chunks) on the wire. */
#define SRD_MAX_RDMA_BYTES		(1u << 30)
#define SRD_MAX_RDMA_MSG_BYTES		(16u << 20)
#define SRD_RNR_RETRY_INFINITE		7
#define SRD_NO_DEADLINE			(~(uint64_t)0)

/* --- completions ----------------------------------------------------- */

/*
 * A send's outcome, SRD_COMP_<NAME>; srd_comp_status_name() says NAME.
 * The OS maps each to an ibv_wc_status and vendor_err (docs/protocol.md
 * has the table; modelled on EFA's).
 *   OK                 delivered
 *   RNR_RETRY_EXC      RNR NAKs beyond rnr_retry
 *   BAD_DEST_QPN       NAK BAD_QPN
 *   BAD_QKEY           NAK BAD_QKEY
 *   REMOTE_BAD_LENGTH  NAK BAD_LENGTH
 *   REMOTE_ABORT       NAK REMOTE_ABORT
 *   UNRESP_REMOTE      retry budget exhausted
 *   PEER_RESTARTED     the remote restarted (its tag changed)
 *   FLUSHED            the local peer or QP went away
 *   REMOTE_ACCESS      NAK REMOTE_ACCESS (RDMA rkey check)
 */
#define SRD_COMP_STATUSES(X, SEP)					\
	X(OK) SEP() X(RNR_RETRY_EXC) SEP() X(BAD_DEST_QPN) SEP()	\
	X(BAD_QKEY) SEP() X(REMOTE_BAD_LENGTH) SEP() X(REMOTE_ABORT) SEP() \
	X(UNRESP_REMOTE) SEP() X(PEER_RESTARTED) SEP() X(FLUSHED) SEP()	\
	X(REMOTE_ACCESS)

#define SRD_COMP_ENUM(n)	SRD_COMP_##n
enum srd_comp_status {
	SRD_COMP_STATUSES(SRD_COMP_ENUM, SRD_LIST_COMMA),
	SRD_COMP_NR
};

/* What the OS says about the first packet of an incoming message. */
enum srd_rx_verdict {
	SRD_RX_ACCEPT = 0,
	SRD_RX_RNR,
	SRD_RX_BAD_QPN,
	SRD_RX_BAD_QKEY,
	SRD_RX_BAD_LENGTH,
	SRD_RX_QP_ERROR,
	SRD_RX_BAD_ACCESS,		/* RDMA: rkey, PD, access or range */
};

/*
 * What a message is (docs/protocol.md, "RDMA read and write"),
 * X(NAME, name): SRD_MSG_<NAME>, which traces call name.
 *   SEND       a send, into a receive
 *   WRITE      RDMA write (with imm: has_imm)
 *   READ       RDMA read request; done by its response
 *   READ_RESP  the responder's answer to a READ
 * Each has its wire opcode in SRD_WIRE_OPS (its kind column).
 */
#define SRD_MSG_KINDS(X, SEP)						\
	X(SEND, send) SEP() X(WRITE, write) SEP() X(READ, read) SEP()	\
	X(READ_RESP, read_resp)

#define SRD_MSG_ENUM(n, name)	SRD_MSG_##n
enum srd_msg_kind {
	SRD_MSG_KINDS(SRD_MSG_ENUM, SRD_LIST_COMMA)
};

/* Kind NONE in SRD_WIRE_OPS: an opcode that carries no message. */
#define SRD_MSG_NONE	((enum srd_msg_kind)-1)

/* The remote side of an RDMA message (WRITE and READ). */
struct srd_rdma_info {
	uint64_t remote_addr;		/* the operation's first byte */
	uint32_t rkey;
	uint32_t rdma_len;		/* the whole operation */
	uint32_t rdma_offset;		/* this message's start in it */
	uint32_t length;		/* this message's bytes */
};

/* --- configuration --------------------------------------------------- */

/* The largest fixed congestion target (cc_target_us): one second. */
#define SRD_CC_TARGET_MAX_US	1000000u
/* The longest interval between a receiver's drains: one minute. */
#define SRD_CC_DRAIN_INTERVAL_MAX_US	60000000u
/* The longest wait for a silent peer (peer_timeout_us): ten minutes. */
#define SRD_PEER_TIMEOUT_MAX_US		600000000u

/*
 * The engine's configuration, X(name, default): each a uint32_t of
 * struct srd_config in this order, set to its default by
 * srd_config_default(), so one line adds a field; a rule it must keep
 * goes into srd_config_check() (engine/peer.c), which names the field in
 * its message.  The kernel's module parameters (kernel/tunables.c) set
 * some of them, and docs/protocol.md gives each its meaning.
 *
 * Why some defaults are what they are:
 * - ack_every_pkts 4: every ACK is a packet through both hosts' stacks;
 *   between two guests an ACK of every second packet took a third of the
 *   receiver's packets, and every fourth brought bulk sends of 1 MiB 10 %
 *   more (docs/performance.md).
 * - cwnd_min_256ths 192, three quarters of a packet: more senders than
 *   packets in flight at a bottleneck (incast of large packets) need
 *   windows below one, or their floors alone keep a queue that no drain
 *   can empty (the simulator's incast_depth); at a half, eight flows that
 *   share a short path finished 2 % later than with a floor of one
 *   (incast_8_to_1, 2 of 10 seeds past its limit), at an eighth 25 %.
 * - cc_target_queue_us 2000: above the noise of software paths (virtual
 *   machines, TCG, busy hosts: hundreds of microseconds of jitter), or
 *   the window reads that noise as a queue and sits at its floor.
 * - peer_timeout_us 10 s: a peer is given up only when it has been silent
 *   this long, whatever the RTO.  A virtual machine of a busy host stops
 *   for seconds: with a budget of rto_retries_max expiries alone (0.9 to
 *   3.25 s) a live peer behind such a stall was given up, and its
 *   messages failed UNRESP_REMOTE (docs/performance.md, MPI under load;
 *   the simulator's frozen_receiver).  TCP waits minutes, an RC QP at
 *   MPI's usual timeout and retry count about 30 s.
 */
#define SRD_CONFIG_FIELDS(X)						\
	X(n_paths, 16)		/* entropy values per peer, 1..SRD_MAX_PATHS */ \
	X(seg_bytes, 4096)	/* payload bytes per DATA packet */	\
	X(max_msg_bytes, 1u << 20) /* largest message sent or accepted */ \
	X(tx_window_pkts, 512)	/* in-flight packet table, power of 2 */ \
	/* messages in progress per direction, power of 2 */		\
	X(msg_window, 64)						\
	X(max_pending_msgs, 1024) /* posted, not yet started, per peer */ \
									\
	X(rto_init_us, 2000)	/* before the first RTT sample */	\
	X(rto_min_us, 200)						\
	X(rto_max_us, 250000)						\
	/* RTO expiries in a row, no progress -> unreachable, */	\
	/* once peer_timeout_us past the first */			\
	X(rto_retries_max, 12)						\
	X(rto_floor_max_us, 5000) /* the adaptive floor grows up to this */ \
	X(reorder_pkts, 64)	/* packet-threshold loss detection */	\
	X(reorder_slack_us, 20)	/* added to the time threshold */	\
									\
	/* ACK at least every this many in-order packets */		\
	X(ack_every_pkts, 4)						\
	X(ack_delay_us, 20)	/* ... or this long after the first unacked one */ \
	/* A reply's least wait for it (3 RTTs, up to 4x); 0: ACK at once. */ \
	X(ack_reply_wait_us, 500)					\
									\
	X(cwnd_init_pkts, 16)						\
	/* in 1/256 packets; below 256, pacing spaces the packets */	\
	X(cwnd_min_256ths, 192)						\
	X(cwnd_max_pkts, 512)						\
	X(cc_target_queue_us, 2000) /* target delay = min RTT + this, */ \
	X(cc_target_rtt_mult, 2) /* or + this many min RTTs if more */	\
	X(cc_target_us, 0)	/* else this, for every peer; 0: off */	\
	X(cc_fs_range_us, 2000)	/* + up to this for a small window */	\
	/* senders drain this often; 0: never */			\
	X(cc_drain_interval_us, 1000000)				\
	X(cc_ai_pkts, 1)	/* additive increase per RTT */		\
	X(cc_beta_pct, 80)	/* MD gain on delay above target */	\
	X(cc_max_mdf_pct, 50)	/* largest multiplicative decrease */	\
	X(pacing_gain_pct, 125)	/* pace at cwnd/srtt * gain; 0: no pacing */ \
	X(pacing_burst_pkts, 8)	/* back to back at most, after a pause */ \
									\
	X(path_fail_losses, 3)	/* losses in a row that avoid a path */	\
	X(path_avoid_us, 5000)	/* first avoidance, doubled each time */ \
	X(path_avoid_max_us, 1000000)					\
	/* paths with srtt above this % of min RTT skipped, others fine */ \
	X(path_slow_pct, 300)						\
									\
	X(rnr_backoff_min_us, 100)					\
	X(rnr_backoff_max_us, 100000)					\
	X(hello_interval_us, 1000) /* least gap between unsolicited HELLOs */ \
	/* a silent peer is waited for this long (RTO, HELLO, READ, rx) */ \
	X(peer_timeout_us, 10000000)

#define SRD_CONFIG_MEMBER(name, def)	uint32_t name;
struct srd_config {
	SRD_CONFIG_FIELDS(SRD_CONFIG_MEMBER)
};

void srd_config_default(struct srd_config *cfg);
/*
 * NULL, or the first rule @cfg breaks, naming its fields, for a message:
 * "rto_min_us: not 0; rto_min_us and rto_floor_max_us at most rto_max_us".
 */
const char *srd_config_check(const struct srd_config *cfg);
/* 0, or -1 when srd_config_check() finds a rule broken. */
int srd_config_validate(const struct srd_config *cfg);

/* --- counters -------------------------------------------------------- */

/*
 * The engine's counters, X(name): each a uint64_t of struct srd_counters
 * and an entry of srd_counter_descs under its name, in this order, so one
 * edit adds a counter; docs/protocol.md ("Counters") says what each
 * counts, and a host test fails until it does.  The kernel shows each as
 * hw_counter "srd_" name (kernel/counters.c).  Where the name says less:
 *   retransmits              DATA packets sent again
 *   rto_expired              RTO expiries
 *   fast_retransmits         losses found from SACK evidence
 *   spurious_retransmits     retransmissions the receiver did not need
 *                            (ACK DUP): window and path undone
 *   duplicates               DATA already received
 *   out_of_order             DATA with a PSN not largest + 1
 *   cwnd_stalls              sends held back by the window
 *   tx_window_stalls         ... by the in-flight packet table
 *   path_switches            a path left ACTIVE (avoided)
 *   path_recoveries          a probed path came back
 *   peer_restarts            remote tag changes believed
 *   peer_unreachable         retry budget exhausted
 *   rx_drop_bad_hdr          malformed header or fields
 *   rx_drop_stale_tag      not naming our tag: stale or forged
 *   rx_drop_out_of_window    message or PSN outside the windows
 *   rdma_writes_in           RDMA write messages placed here
 *   rdma_reads_in            RDMA read requests answered here
 *   rdma_access_naks         RDMA messages refused REMOTE_ACCESS
 *   resp_timeouts            RDMA reads whose response stalled
 *   tail_probes              tail loss probes sent
 *   rx_msg_timeouts          receives aborted: the sender stopped
 *   stateless_replies        HELLOs sent for a remote with no peer
 *   rx_drop_unsolicited      right tag, but no peer for it to act on
 *   acks_piggybacked         ACKs carried by a DATA packet
 *   ack_reply_timeouts       ACKs that waited for a reply in vain
 *   cc_drains                drains a receiver asked for, made
 *   cc_losses_without_queue  losses and first RTOs that left the window:
 *                            no queue stood (cc.c)
 *   rnr_probes               messages sent again to a receiver that was
 *                            not ready (rnr.c)
 *   restart_challenges       HELLOs challenging a claimed new remote tag
 *   retrans_bytes            bytes (header and payload) of the DATA
 *                            packets sent again (tx.c)
 *   rx_msg_overdue           receives aborted: held past their limit,
 *                            however slow their sender (msg.c)
 */
#define SRD_COUNTERS(X, SEP)						\
	X(tx_pkts) SEP() X(tx_bytes) SEP() X(rx_pkts) SEP() X(rx_bytes) SEP() \
	X(tx_data_pkts) SEP() X(rx_data_pkts) SEP() X(retransmits) SEP()	\
	X(rto_expired) SEP() X(fast_retransmits) SEP()			\
	X(spurious_retransmits) SEP() X(duplicates) SEP()		\
	X(out_of_order) SEP() X(acks_sent) SEP() X(acks_received) SEP()	\
	X(naks_sent) SEP() X(naks_received) SEP() X(rnr_naks_sent) SEP()	\
	X(rnr_naks_received) SEP() X(hellos_sent) SEP()			\
	X(hellos_received) SEP() X(cwnd_stalls) SEP()			\
	X(tx_window_stalls) SEP() X(path_switches) SEP()		\
	X(path_recoveries) SEP() X(peer_restarts) SEP()			\
	X(peer_unreachable) SEP() X(msgs_sent) SEP() X(msgs_failed) SEP()	\
	X(msgs_delivered) SEP() X(rx_drop_bad_hdr) SEP()		\
	X(rx_drop_stale_tag) SEP() X(rx_drop_out_of_window) SEP()	\
	X(alloc_failures) SEP() X(rdma_writes_in) SEP()			\
	X(rdma_reads_in) SEP() X(rdma_access_naks) SEP()		\
	X(resp_timeouts) SEP() X(tail_probes) SEP()			\
	X(rx_msg_timeouts) SEP() X(stateless_replies) SEP()		\
	X(rx_drop_unsolicited) SEP() X(acks_piggybacked) SEP()		\
	X(ack_reply_timeouts) SEP() X(cc_drains) SEP()			\
	X(cc_losses_without_queue) SEP() X(rnr_probes) SEP()		\
	X(restart_challenges) SEP() X(retrans_bytes) SEP()		\
	X(rx_msg_overdue)

#define SRD_COUNTER_FIELD(n)	uint64_t n
struct srd_counters {
	SRD_COUNTERS(SRD_COUNTER_FIELD, SRD_LIST_SEMI);
};

#define SRD_COUNTER_ENUM(n)	SRD_CTR_##n
enum {
	SRD_COUNTERS(SRD_COUNTER_ENUM, SRD_LIST_COMMA),
	SRD_ENGINE_NUM_COUNTERS		/* the counters by name, for the OS */
};

struct srd_counter_desc {
	const char *name;
	uint32_t offset;	/* of its uint64_t in struct srd_counters */
};

extern const struct srd_counter_desc srd_counter_descs[SRD_ENGINE_NUM_COUNTERS];

/* Per-path state and statistics, readable by the OS (debugfs/sysfs). */
/*
 * A path's state, X(NAME, name): SRD_PATH_<NAME>, which
 * srd_path_state_name(), debugfs and traces call name (SRD_COMP_STATUSES
 * says how such a list works).
 *   ACTIVE    in use
 *   AVOIDED   timed out or lost in a row; not used
 *   PROBING   avoidance over: one probe packet allowed
 */
#define SRD_PATH_STATES(X, SEP)						\
	X(ACTIVE, active) SEP() X(AVOIDED, avoided) SEP() X(PROBING, probing)

#define SRD_PATH_ENUM(n, name)	SRD_PATH_##n
enum srd_path_state {
	SRD_PATH_STATES(SRD_PATH_ENUM, SRD_LIST_COMMA),
	SRD_PATH_NR
};

struct srd_path_stats {
	enum srd_path_state state;
	uint32_t srtt_us;	/* 0 until sampled */
	uint64_t tx_pkts, acked_pkts, lost_pkts, timeouts;
	uint64_t avoided, recovered;
};

/* --- the OS interface ------------------------------------------------ */

/*
 * The OS's own objects, which the engine holds and hands back but never
 * looks into: each OS defines them (the kernel in kernel/message.h).
 *
 * struct srd_outbound: a send or RDMA request the OS posted
 *	(srd_send_req.out); its payload is read through transmit, a READ's
 *	response written through read_data, and it ends with send_done.
 * struct srd_inbound: an incoming message the OS accepted in rx_begin
 *	(a SEND's receive, a WRITE's or READ's target); bytes go in through
 *	rx_data, and it ends with rx_done or rx_abort, or for a READ, whose
 *	response reads its bytes from it, with resp_done.
 */
struct srd_outbound;
struct srd_inbound;

/* One packet for the OS to send to the peer: header, then payload. */
struct srd_tx_desc {
	uint32_t path;			/* entropy value, 0..n_paths-1 */
	const uint8_t *hdr;
	uint32_t hdr_len;
	enum srd_msg_kind kind;		/* of the message, with a payload */
	/* The payload's source, by kind; both NULL without one. */
	struct srd_outbound *out;	/* SEND, WRITE, READ */
	struct srd_inbound *resp_src;	/* READ_RESP: the READ's target */
	uint32_t payload_off;		/* within the message */
	uint32_t payload_len;
};

/* What the receiver knows of a message when its first packet arrives. */
struct srd_rx_msg_info {
	uint32_t src_qpn, dst_qpn, qkey;
	uint32_t imm_data;
	bool has_imm, solicited;
	uint32_t msg_len;
	enum srd_msg_kind kind;		/* SEND, WRITE or READ (a request) */
	struct srd_rdma_info rdma;	/* WRITE and READ */
};

/*
 * Tracing: the transport's decisions, as they happen, for the OS to
 * report (the kernel: the rdma_srd trace events).  ops->event is called
 * only while *ops->trace_on is true, so with tracing off an event costs a
 * load and a branch.
 */
enum srd_event_type {
	SRD_EV_DATA_TX = 0,	/* a DATA, WRITE, READ_REQ or READ_RESP sent:
				 * psn, msg_id, seg, path; why: enum srd_tx_why
				 */
	SRD_EV_ACK_RX,		/* psn: ack_psn; value: packets newly ACKed;
				 * value2: packets in flight after it
				 */
	SRD_EV_NAK_RX,		/* psn, msg_id; value: the reason */
	SRD_EV_NAK_TX,		/* psn, msg_id; value: the reason */
	SRD_EV_RTO,		/* the RTO fired: psn: snd_una; value: the
				 * backoff after it; value2: the RTO, us
				 */
	SRD_EV_PATH,		/* path changed state: value, enum srd_path_state */
	SRD_EV_RESTART,		/* the remote restarted: value: its new tag;
				 * value2: the old one
				 */
	SRD_EV_MSG_ERROR,	/* a message failed: msg_id; value: enum
				 * srd_comp_status
				 */
	SRD_EV_NR
};

enum srd_tx_why {
	SRD_TXW_NEW = 0,	/* a segment's first transmission */
	SRD_TXW_RTO,		/* again: lost to the retransmission timeout */
	SRD_TXW_SACK,		/* again: lost by SACK evidence (fast) */
	SRD_TXW_TLP,		/* again: a tail loss probe */
};

struct srd_event {
	enum srd_event_type type;
	uint32_t psn, msg_id, seg, path;
	uint32_t why;		/* DATA_TX */
	uint32_t value, value2;
};

/*
 * transmit's return: the message's source is gone (an RDMA read's MR was
 * deregistered mid-response): fail the message, do not retry.
 */
#define SRD_TX_ABORT			1

/*
 * A received packet's payload, for rx_data and read_data to copy: @len
 * bytes at @off of the packet the OS handed to srd_peer_on_packet_head()
 * as @pkt.  The engine never reads them itself.
 */
struct srd_rx_payload {
	const void *pkt;
	uint32_t off;
	uint32_t len;
};

struct srd_ops {
	uint64_t (*now_us)(void *os);
	uint32_t (*random_u32)(void *os);
	/* Zeroed memory or NULL.  Called in atomic context in the kernel. */
	void *(*alloc)(void *os, size_t bytes);
	void (*free)(void *os, void *ptr, size_t bytes);
	/*
	 * The peer's next deadline changed; SRD_NO_DEADLINE cancels.  A
	 * timer may fire earlier than asked (one left queued for an older
	 * deadline, or for none): srd_peer_on_timer() then changes nothing
	 * but names the deadline again.
	 */
	void (*timer_set)(void *os, void *peer_os, uint64_t deadline_us);
	/*
	 * 0, or negative: the packet was not sent (counted as lost), or
	 * SRD_TX_ABORT (READ_RESP only).  For a READ_RESP the payload is
	 * read from the READ's target, d->resp_src.
	 */
	int (*transmit)(void *os, void *peer_os, const struct srd_tx_desc *d);
	/*
	 * A new incoming message: claim a receive (SEND, WRITE with imm),
	 * check the rkey (WRITE, READ), or say why not.  On SRD_RX_ACCEPT
	 * *in is set.  For a READ it becomes the source of the READ_RESP
	 * the engine sends back, and is given back through resp_done().
	 */
	enum srd_rx_verdict (*rx_begin)(void *os, void *peer_os,
					const struct srd_rx_msg_info *info,
					struct srd_inbound **in);
	/*
	 * 0, or negative: the target is gone (an MR deregistered mid-message);
	 * the message is then aborted and NAKed REMOTE_ACCESS.
	 */
	int (*rx_data)(void *os, struct srd_inbound *in, uint32_t offset,
		       const struct srd_rx_payload *pl);
	void (*rx_done)(void *os, struct srd_inbound *in);	/* all placed */
	void (*rx_abort)(void *os, struct srd_inbound *in);	/* never will be */
	void (*send_done)(void *os, struct srd_outbound *out,
			  enum srd_comp_status st);
	/* Requester: response bytes of the READ @out. */
	void (*read_data)(void *os, struct srd_outbound *out, uint32_t offset,
			  const struct srd_rx_payload *pl);
	/* Responder: the READ_RESP read from @in is over. */
	void (*resp_done)(void *os, struct srd_inbound *in,
			  enum srd_comp_status st);
	/* Optional (both NULL: no tracing); see enum srd_event_type. */
	const bool *trace_on;
	void (*event)(void *os, void *peer_os, const struct srd_event *ev);
};

/* --- the API --------------------------------------------------------- */

struct srd_engine;
struct srd_peer;

/*
 * A send work request.  An RDMA WRITE or READ may be as long as
 * SRD_MAX_RDMA_BYTES: the engine cuts one longer than
 * SRD_MAX_RDMA_MSG_BYTES into chunks, holds a WRITE_WITH_IMM's last
 * chunk back until the others are done, and completes the request once.
 * Offsets in transmit and read_data are within the request's bytes.
 */
struct srd_send_req {
	/* Given back in transmit, read_data and send_done. */
	struct srd_outbound *out;
	uint32_t src_qpn, dst_qpn, qkey;
	uint32_t imm_data;
	bool has_imm, solicited;
	uint32_t len;			/* SEND, WRITE: bytes; READ: 0 */
	uint8_t rnr_retry;		/* 0..7, 7 = infinite */
	enum srd_msg_kind kind;		/* SEND, WRITE or READ */
	struct srd_rdma_info rdma;	/* WRITE (length = len) and READ */
};

enum srd_send_err {
	SRD_SEND_OK = 0,
	SRD_SEND_TOO_LONG = -1,		/* len > max_msg_bytes (RDMA:
					 * rdma_len > SRD_MAX_RDMA_BYTES)
					 */
	SRD_SEND_BUSY = -2,		/* max_pending_msgs reached (a request
					 * of n chunks needs room for n)
					 */
	SRD_SEND_NOMEM = -3,
	SRD_SEND_INVAL = -4,
};

/* A new engine (one per local device) with a fresh random tag secret. */
struct srd_engine *srd_engine_create(const struct srd_config *cfg,
				     const struct srd_ops *ops, void *os);
/* Destroys every peer first (srd_peer_destroy). */
void srd_engine_destroy(struct srd_engine *eng);
/*
 * The tag this engine uses with the remote at @addr: opaque bytes that
 * name the pair of endpoints (the kernel: local GID, then remote GID),
 * the same for every call.  Non-zero.
 */
uint32_t srd_engine_tag(const struct srd_engine *eng, const void *addr,
			size_t addr_len);

enum srd_stray_verdict {
	SRD_STRAY_DROP = 0,		/* counted; nothing to do */
	SRD_STRAY_REPLY,		/* send the reply (reply_len bytes) back
					 * to the packet's source; create nothing
					 */
	SRD_STRAY_ACCEPT,		/* a remote that receives at @addr, with
					 * work: create its peer (same @addr), then
					 * give it the packet
					 */
};

/*
 * A datagram of @len bytes from the remote at @addr, for which the OS has
 * no peer; @buf holds at least its first min(@len, SRD_HDR_MAX_BYTES),
 * all the engine reads.  Serialised like peer creation.  @reply has room
 * for SRD_HDR_MAX_BYTES.
 */
enum srd_stray_verdict srd_engine_on_stray(struct srd_engine *eng,
					   const void *addr, size_t addr_len,
					   const uint8_t *pkt, size_t len,
					   uint8_t *reply, uint32_t *reply_len);
/*
 * Counters.  srd_engine_own_counters(): the engine's own (its strays,
 * and what destroyed peers counted), under the serialisation of peer
 * creation.  srd_peer_counters_add(): adds one live peer's to @sum, under
 * that peer's serialisation.  An engine's total is the first plus the
 * second for every live peer, read while no peer is created or destroyed
 * (the kernel glue holds its peers_lock, and each peer's lock in turn).
 * srd_engine_counters(): that total at once, for an OS whose calls into
 * the engine are all serialised (one thread, as the tests').
 */
void srd_engine_own_counters(const struct srd_engine *eng, struct srd_counters *out);
void srd_peer_counters_add(const struct srd_peer *peer, struct srd_counters *sum);
void srd_engine_counters(const struct srd_engine *eng, struct srd_counters *out);

/* The peer for the remote at @addr (as for srd_engine_tag()). */
struct srd_peer *srd_peer_create(struct srd_engine *eng, void *peer_os,
				 const void *addr, size_t addr_len);
/*
 * Sends still queued or in flight complete FLUSHED; receives in
 * progress are aborted.
 */
void srd_peer_destroy(struct srd_peer *peer);

int srd_send_msg(struct srd_peer *peer, const struct srd_send_req *req);
/*
 * A packet of @len bytes arrived from @peer, of which the engine reads only
 * the header, at @head: @head_len bytes there, at least
 * min(@len, SRD_HDR_MAX_BYTES) (fewer: the packet is dropped as malformed).
 * The payload stays where the OS has it, in @pkt, for rx_data and
 * read_data to copy from: no OS need make a packet contiguous.
 */
void srd_peer_on_packet_head(struct srd_peer *peer, const uint8_t *head,
			     size_t head_len, size_t len, const void *pkt);

/* A contiguous packet: @pkt, its @len bytes, is also what rx_data gets. */
static inline void srd_peer_on_packet(struct srd_peer *peer,
				      const uint8_t *pkt, size_t len)
{
	srd_peer_on_packet_head(peer, pkt, len, len, pkt);
}

void srd_peer_on_timer(struct srd_peer *peer);
/*
 * A local QP is going away: its sends complete FLUSHED, its receives in
 * progress are aborted and later packets for them NAKed REMOTE_ABORT.
 */
void srd_peer_flush_qp(struct srd_peer *peer, uint32_t qpn);

/*
 * How long the peer has had nothing to do, in microseconds: nothing
 * posted, in flight, awaited or being received, no packet either way.
 * 0 while busy.  Constant time.  An OS may destroy a peer idle for
 * srd_peer_evict_min_idle_us() or longer to make room: nothing of it can
 * still arrive.
 */
uint64_t srd_peer_idle_us(const struct srd_peer *peer);
/*
 * The least idle time after which a peer may be destroyed: longer than
 * the retry budget of @eng's configuration (a sender that gets no ACK
 * retransmits until then), and than SRD_PEER_EVICT_MIN_IDLE_US, for a
 * remote that keeps the default budget.
 */
uint64_t srd_peer_evict_min_idle_us(const struct srd_engine *eng);
/*
 * Whether the remote never answered: the peer never learned its tag, so
 * no DATA was ever sent or accepted either way.  Such a peer, once idle
 * at all, may be destroyed at once: nothing of it can be delivered twice.
 */
bool srd_peer_unanswered(const struct srd_peer *peer);
#define SRD_PEER_EVICT_MIN_IDLE_US	(11ull * 1000000)
int srd_peer_path_stats(const struct srd_peer *peer, uint32_t path,
			struct srd_path_stats *out);

struct srd_peer_info {
	int state;			/* enum srd_peer_state */
	uint32_t local_tag, remote_tag;
	uint32_t cwnd_pkts_x256;
	uint32_t srtt_us, rto_us, min_rtt_us;
	uint32_t inflight_pkts;
	uint32_t pending_msgs, active_msgs;
	uint32_t rx_assembling;		/* messages being received */
};

void srd_peer_get_info(const struct srd_peer *peer, struct srd_peer_info *out);

/* Upper bound of what one peer allocates through ops->alloc. */
size_t srd_peer_mem_bound_bytes(const struct srd_config *cfg);

const char *srd_comp_status_name(enum srd_comp_status st);
const char *srd_path_state_name(enum srd_path_state st);

#endif /* SRD_ENGINE_H */
