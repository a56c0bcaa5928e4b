/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine: a deterministic, seeded network simulator.  Nodes are
 * engines (one per simulated device) joined in a full mesh of peers;
 * every (source, destination, path) has its own delay, jitter (hence
 * reordering), loss and duplication, and may be black-holed for a time;
 * every destination has a downlink of finite rate with a drop-tail
 * buffer, so congestion and incast are real.  Time, randomness and
 * allocation go through struct srd_ops; the same seed gives the same run.
 *
 * The workload mixes sends with RDMA (rdma_pct): WRITE, WRITE with
 * immediate data and READ, into and out of a region every node registers
 * (sim.c, "RDMA"), some of them longer than one message (rdma_big_ops).
 */
#ifndef SRD_SIM_H
#define SRD_SIM_H

#include <stdint.h>
#include <stdbool.h>

/*
 * One direction of one link of a fabric (sim_params.links), as tc netem
 * shapes it: loss, duplication and corruption (a corrupt packet fails its
 * UDP checksum and is dropped: a loss, counted apart), and a delay that
 * reorder_pct of the packets skip (netem's "delay D reorder P% C%": those
 * go at once, ahead of the delayed ones), each draw correlated with the
 * one before by reorder_corr_pct, as netem's are.
 */
struct sim_link_dir {
	int loss_permille, dup_permille, corrupt_permille;
	uint32_t delay_us;
	int reorder_pct, reorder_corr_pct;
};

#define SIM_MAX_LINKS 8

struct sim_params {
	const char *name;
	uint64_t seed;
	int nodes;
	int qps;			/* per node */
	int n_paths;
	int seg_bytes;
	int msgs_per_node;		/* posted by each sending node */
	uint32_t max_msg_bytes;		/* sizes: mostly small, some up to this */
	int big_pct;			/* % of messages near max_msg_bytes */
	uint32_t post_window_us;	/* posts spread over this */
	int loss_permille, dup_permille;
	uint32_t delay_min_us, delay_max_us, jitter_us;
	int blackhole_paths;		/* paths 0..k-1 of every pair: lost for good */
	int outage_a, outage_b;		/* all paths a<->b down ... */
	uint32_t outage_from_us, outage_len_us;
	int restart_node;		/* -1: none */
	uint32_t restart_at_us;
	int bad_dst_permille;		/* sends to a QPN that does not exist */
	int bad_qkey_permille;
	/*
	 * RDMA: this % of the messages are WRITE, WRITE with imm or READ (a
	 * third each) of the same sizes as sends (1 in 50 of none); of those,
	 * bad_rkey_permille name a bad rkey or range.  rdma_big_ops more
	 * requests, alternately WRITE with imm and READ, of 16 to 17 MiB:
	 * two chunks each (SRD_MAX_RDMA_MSG_BYTES), unscaled by --scale.
	 */
	int rdma_pct;
	int bad_rkey_permille;
	int rdma_big_ops;
	int rnr_qp;			/* this QP index has few receives; -1 none */
	uint32_t rnr_refill_us;
	/*
	 * > 0: a slow receiver (srd_mix -d): every QP of node incast_to has
	 * one receive, and gets it again every slow_rx_us once it used it;
	 * its senders meet RNR on most messages, and their pace should be
	 * the receiver's.
	 */
	uint32_t slow_rx_us;
	/*
	 * >= 0: this QP index of the receiving node never posts a receive,
	 * and its peer QP on the first sender posts stuck_msgs sends to it
	 * at the start (rnr_retry 7): they must never complete nor arrive,
	 * and the workload, which then avoids both QPs, must go on.  The
	 * run ends when every other message is done.
	 */
	int stuck_qp;
	int stuck_msgs;
	int incast_to;			/* >= 0: every other node sends only to it */
	/*
	 * The k-th sending node posts from k * start_stagger_us on; the
	 * bytes each delivers between fair_from_us and fair_to_us give
	 * Jain's fairness index (0: not measured).  no_drain: the engines
	 * neither ask for drains nor make them (cc_drain_interval_us 0).
	 */
	uint32_t start_stagger_us;
	uint64_t fair_from_us, fair_to_us;
	bool no_drain;
	/*
	 * > 0: a closed loop, as a benchmark client at a depth: each sender
	 * posts its first `depth` messages at its start and the next one
	 * whenever one of its own completes; the result has the post-to-
	 * completion time of its OK messages (sim_result.lat_*).
	 */
	int depth;
	int forge_permille;		/* an off-path forger: this many forged
					 * packets per 1000 real ones */
	/*
	 * > 0: every node's CPU is descheduled now and then, as a virtual
	 * CPU of a busy host is (make bench's TCG guests): for 1 to
	 * stall_max_us (uniform) after gaps of 0 to 2 x stall_gap_us.
	 * What reaches a node then, packets and its timers, waits for the
	 * end, and the node's clock reads the end when it runs them.
	 */
	uint32_t stall_gap_us, stall_max_us;
	/*
	 * > 0: node freeze_node stops once, from freeze_from_us for
	 * freeze_len_us, as a virtual machine of an overloaded host does;
	 * as in a stall, what reaches it meanwhile waits for the end.
	 */
	int freeze_node;
	uint32_t freeze_from_us, freeze_len_us;
	/*
	 * > 0: a fabric of this many links between every two nodes, as
	 * switches with an L4 ECMP hash make one (BRIEF's multipath
	 * recipe): each (source, destination, path) hashes to one link,
	 * whose direction shapes it on top of the rest.  up[] is the
	 * direction from the lower node to the higher, down[] the other.
	 */
	int links;
	struct sim_link_dir up[SIM_MAX_LINKS], down[SIM_MAX_LINKS];
	bool uniform_len;		/* sizes uniform in 1..max_msg_bytes */
	uint32_t link_bytes_per_us;	/* each destination's downlink */
	uint32_t buffer_bytes;		/* its drop-tail buffer */
	uint32_t rto_retries_max;	/* 0: engine default */
	uint64_t time_limit_us;
	/*
	 * Every delivered message that completes a receive (a SEND, a WRITE
	 * with imm) is answered: its receiver posts a short message back
	 * (the same QPs), answer_us after the delivery, as an RPC server
	 * does.  The answers are checked as the others are.
	 */
	bool answer;
	uint32_t answer_us;
	/*
	 * Peers at scale (sim_main.c, "scale_*"): > 0, each sending node
	 * sends msgs_per_node messages round-robin to this many
	 * destinations of its own, distinct, drawn from the seed; -1, to
	 * every other node in turn (all-to-all); 0, each message to a node
	 * drawn for it.  Every node holds a peer for every other either way.
	 */
	int fanout;
	uint32_t tx_window_pkts, msg_window;	/* the engines'; 0: default */
	bool quiet;
};

struct sim_result {
	bool ok;
	char why[512];
	uint64_t msgs, delivered, ok_sends, failed_sends, expected_fail;
	uint64_t sim_time_us, events;
	uint64_t pkts_sent, pkts_dropped_net, pkts_dropped_queue, pkts_duped;
	uint64_t pkts_corrupted, pkts_reordered;	/* sim_params.links */
	uint64_t retransmits, rto_expired, fast_retransmits, duplicates;
	uint64_t spurious_retransmits, tail_probes;
	uint64_t rnr_naks, rnr_probes, peer_restarts, path_switches, path_recoveries;
	uint64_t stale_drops;
	uint64_t forged;		/* packets the forger sent */
	uint64_t answers;		/* answers posted (counted in msgs) */
	uint64_t acks_piggybacked, ack_reply_timeouts;
	uint64_t bytes_delivered;
	/*
	 * Jain's index x 1000 of the senders' bytes in the fair window,
	 * their least and most; the drains the senders made.
	 */
	uint32_t jain_permille;
	uint64_t fair_min_bytes, fair_max_bytes;
	uint64_t cc_drains;
	/* sim_params.depth: the worst sender's p50, p99 and max, in us. */
	uint64_t lat_p50_us, lat_p99_us, lat_max_us;
	uint64_t last_ok_completion_us;
	/*
	 * Every OK message's post-to-completion time, all senders together,
	 * in us; each sender's goodput (the bytes of its OK messages over
	 * its first post to its last completion): Jain's index x 1000 of
	 * those, the least and the most in bytes per second.
	 */
	uint64_t msg_p50_us, msg_p99_us, msg_max_us;
	uint32_t goodput_jain_permille;
	uint64_t goodput_min_bps, goodput_max_bps;
	/*
	 * What an engine allocates per peer, created and idle (node 0's,
	 * its engine's own allocation left out); the peak per node over the
	 * run, and its bound: srd_peer_mem_bound_bytes() per peer.
	 */
	size_t idle_bytes_per_peer;
	size_t peak_bytes_per_node, bound_bytes_per_node;
	uint64_t max_queue_bytes;
	/*
	 * RDMA requests posted (counted in msgs), those with a bad rkey or
	 * range, and what completed OK of each kind.
	 */
	uint64_t rdma_msgs, rdma_bad_access;
	uint64_t rdma_writes_ok, rdma_writes_imm_ok, rdma_reads_ok;
	uint64_t rdma_chunked_ok;	/* of more than SRD_MAX_RDMA_MSG_BYTES */
	uint64_t rdma_bytes;		/* written and read, by those */
	/* The engines' counters of the same. */
	uint64_t rdma_writes_in, rdma_reads_in, rdma_access_naks;
};

void sim_default_params(struct sim_params *p);
void sim_run(const struct sim_params *p, struct sim_result *r);

#endif /* SRD_SIM_H */
