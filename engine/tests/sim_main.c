// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: simulator scenarios, TAP output.
 *
 *   sim                              every scenario, default seeds
 *   sim --scenario NAME --seed N     one run (replays a failure exactly)
 *
 * Every scenario runs twice: as it is, and as NAME_answered, where every
 * delivered message is answered at once (sim_params.answer), so that
 * ACKs ride on the answers and wait for them (docs/protocol.md,
 * "Receiver") under the scenario's losses.  Only what completes a
 * receive is answered: SENDs and WRITEs with imm, not plain WRITEs or READs.
 *   sim --seeds K --scale S          K seeds per scenario (default: 1, or the
 *                                    scenario's own count), S x the messages
 *   sim --nodes N                    N nodes instead of the scenario's (scale_*)
 *   sim --list
 *
 * Most scenarios mix RDMA into the workload (sim_params.rdma_pct): each of
 * them must see WRITEs, WRITEs with imm and READs go through, and their
 * engines count them (check_rdma).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "srd_engine.h"

struct scenario {
	const char *name;
	const char *what;
	void (*setup)(struct sim_params *p);
	bool (*extra_check)(const struct sim_params *p, const struct sim_result *r,
			    char *why, size_t n);
	int seeds;		/* runs by default (seeds 1000 + 7919 k + i); 0: 1 */
};

static void sc_basic(struct sim_params *p)
{
	p->nodes = 4;
	p->qps = 4;
	p->rdma_pct = 30;
}

static void sc_lossy(struct sim_params *p)
{
	p->nodes = 6;
	p->qps = 3;
	p->loss_permille = 20;
	p->dup_permille = 10;
	p->jitter_us = 40;
	p->blackhole_paths = 1;
	p->bad_dst_permille = 10;
	p->bad_qkey_permille = 10;
	p->rnr_qp = 2;
	p->rnr_refill_us = 300;
	p->rdma_pct = 30;
	p->bad_rkey_permille = 30;
}

static void sc_blackhole(struct sim_params *p)
{
	p->nodes = 3;
	p->n_paths = 8;
	p->blackhole_paths = 3;		/* 3 of 8 paths lost for good */
	p->msgs_per_node = 300;
	p->rdma_pct = 30;
}

static void sc_restart(struct sim_params *p)
{
	p->nodes = 5;
	p->loss_permille = 10;
	p->restart_node = 2;
	p->restart_at_us = 8000;
	p->rdma_pct = 30;
}

static void sc_outage_within_budget(struct sim_params *p)
{
	p->nodes = 3;
	p->outage_a = 0;
	p->outage_b = 1;
	p->outage_from_us = 5000;
	p->outage_len_us = 100000;	/* 0.1 s: inside the ~1.3 s budget */
	p->rdma_pct = 30;
}

/* Longer than peer_timeout_us (10 s), and than 13 RTOs of 250 ms. */
static void sc_outage_beyond_budget(struct sim_params *p)
{
	p->nodes = 3;
	p->outage_a = 0;
	p->outage_b = 1;
	p->outage_from_us = 5000;
	p->outage_len_us = 12000000;	/* 12 s */
	p->post_window_us = 15000000;	/* posts before, during and after */
	p->msgs_per_node = 100;
	p->rdma_pct = 30;
}

static void sc_incast(struct sim_params *p)
{
	p->nodes = 9;
	p->qps = 2;
	p->incast_to = 0;
	p->msgs_per_node = 24;
	p->max_msg_bytes = 256 * 1024;
	p->big_pct = 100;
	p->post_window_us = 100;
	p->buffer_bytes = 256 * 1024;
	p->jitter_us = 2;
}

static void sc_big_64_paths(struct sim_params *p)
{
	p->nodes = 3;
	p->n_paths = 64;
	p->seg_bytes = 1024;
	p->max_msg_bytes = 1u << 20;
	p->big_pct = 30;
	p->msgs_per_node = 40;
	p->loss_permille = 5;
	p->jitter_us = 60;
}

static bool check_incast(const struct sim_params *p, const struct sim_result *r,
			 char *why, size_t n)
{
	/* Without collapse: goodput at the receiver at least half the
	 * downlink, and queue drops a small share of what was sent. */
	uint64_t ideal_us = r->bytes_delivered / p->link_bytes_per_us;
	uint64_t took = r->last_ok_completion_us;

	if (r->ok_sends != r->msgs) {
		snprintf(why, n, "incast: %llu of %llu OK", (unsigned long long)r->ok_sends,
			 (unsigned long long)r->msgs);
		return false;
	}
	if (took > 2 * ideal_us + 2000) {
		snprintf(why, n, "incast collapsed: %llu us for %llu bytes (ideal %llu us)",
			 (unsigned long long)took, (unsigned long long)r->bytes_delivered,
			 (unsigned long long)ideal_us);
		return false;
	}
	if (r->pkts_dropped_queue * 20 > r->pkts_sent) {
		snprintf(why, n, "incast: %llu of %llu packets dropped at the queue",
			 (unsigned long long)r->pkts_dropped_queue,
			 (unsigned long long)r->pkts_sent);
		return false;
	}
	return true;
}

static bool check_outage_beyond(const struct sim_params *p, const struct sim_result *r,
				char *why, size_t n)
{
	(void)p;
	if (!r->failed_sends || !r->ok_sends) {
		snprintf(why, n, "expected both failures (UNRESP_REMOTE) and successes, got %llu/%llu",
			 (unsigned long long)r->failed_sends, (unsigned long long)r->ok_sends);
		return false;
	}
	return true;
}

static void sc_forger(struct sim_params *p)
{
	p->nodes = 4;
	p->qps = 3;
	p->loss_permille = 10;
	p->forge_permille = 500;	/* one forged packet per two real ones */
	p->rdma_pct = 30;
}

/*
 * RDMA requests longer than one message, cut into chunks, under loss: a
 * WRITE with imm (its last chunk held back until the first is placed)
 * and a READ, of 16 to 17 MiB, among a workload half RDMA.  Two chunks
 * each keeps the regions, sized to what is asked of them, near 34 MiB.
 */
static void sc_rdma_chunked(struct sim_params *p)
{
	p->nodes = 3;
	p->qps = 2;
	p->msgs_per_node = 100;
	p->rdma_pct = 50;
	p->rdma_big_ops = 2;
	p->loss_permille = 10;
	p->dup_permille = 5;
	p->jitter_us = 20;
}

static bool check_forger(const struct sim_params *p, const struct sim_result *r,
			 char *why, size_t n)
{
	(void)p;
	if (r->forged < 1000 || !r->stale_drops) {
		snprintf(why, n, "the forger sent %llu packets, %llu refused for their tag",
			 (unsigned long long)r->forged, (unsigned long long)r->stale_drops);
		return false;
	}
	if (r->peer_restarts || r->failed_sends) {
		snprintf(why, n, "forged packets caused %llu restarts, %llu failed sends",
			 (unsigned long long)r->peer_restarts,
			 (unsigned long long)r->failed_sends);
		return false;
	}
	return true;
}

/*
 * RDMA went through, of every kind, and the engines counted it (each
 * chunk is a message of its own there); bad rkeys were refused; the
 * chunked requests all completed OK.
 */
static bool check_rdma(const struct sim_params *p, const struct sim_result *r,
		       char *why, size_t n)
{
	if (!r->rdma_writes_ok || !r->rdma_writes_imm_ok || !r->rdma_reads_ok ||
	    r->rdma_writes_in < r->rdma_writes_ok + r->rdma_writes_imm_ok ||
	    r->rdma_reads_in < r->rdma_reads_ok) {
		snprintf(why, n, "RDMA OK: %llu writes, %llu with imm, %llu reads; "
			 "the engines placed %llu writes, answered %llu reads",
			 (unsigned long long)r->rdma_writes_ok,
			 (unsigned long long)r->rdma_writes_imm_ok,
			 (unsigned long long)r->rdma_reads_ok,
			 (unsigned long long)r->rdma_writes_in,
			 (unsigned long long)r->rdma_reads_in);
		return false;
	}
	if (r->rdma_bad_access && !r->rdma_access_naks) {
		snprintf(why, n, "none of %llu bad rkeys or ranges was refused",
			 (unsigned long long)r->rdma_bad_access);
		return false;
	}
	if (r->rdma_chunked_ok != (uint64_t)p->rdma_big_ops) {
		snprintf(why, n, "%llu of %d chunked RDMA requests completed OK",
			 (unsigned long long)r->rdma_chunked_ok, p->rdma_big_ops);
		return false;
	}
	return true;
}

static bool check_restart(const struct sim_params *p, const struct sim_result *r,
			  char *why, size_t n)
{
	(void)p;
	if (!r->peer_restarts) {
		snprintf(why, n, "no peer saw the restart");
		return false;
	}
	return true;
}

static bool check_paths(const struct sim_params *p, const struct sim_result *r,
			char *why, size_t n)
{
	(void)p;
	if (!r->path_switches) {
		snprintf(why, n, "black-holed paths were never avoided");
		return false;
	}
	return true;
}

/*
 * Four senders into one receiver's 400 Mb/s downlink, each starting 20 ms
 * after the one before into the queue the others hold, all with more to
 * send than the run: the latecomer problem of a delay target built on
 * each flow's own minimum RTT (cc.c).  Fairness is measured from 1.1 s to
 * 2.1 s, after the receiver's drain at 1 s.
 */
static void sc_latecomers(struct sim_params *p)
{
	p->nodes = 5;
	p->qps = 1;
	p->incast_to = 0;
	p->msgs_per_node = 1600;		/* 64 KiB each: 100 MiB */
	p->max_msg_bytes = 64 * 1024;
	p->big_pct = 100;
	p->post_window_us = 100;
	p->start_stagger_us = 20000;
	p->link_bytes_per_us = 50;		/* 400 Mb/s */
	p->buffer_bytes = 4u << 20;
	p->fair_from_us = 1100000;
	p->fair_to_us = 2100000;
}

/*
 * make bench's incast (scripts/bench-incast.sh): 4 senders into one
 * receiver through 80 Mb/s with 500 KB of queue, 16 KiB messages in
 * 8960 B segments, 16 in flight each, for about 10 s.
 */
static void sc_incast_depth(struct sim_params *p)
{
	p->nodes = 5;
	p->qps = 1;
	p->incast_to = 0;
	p->msgs_per_node = 1500;
	p->max_msg_bytes = 16 * 1024;
	p->big_pct = 100;
	p->seg_bytes = 8960;
	p->post_window_us = 100;
	p->depth = 16;
	p->link_bytes_per_us = 10;		/* 80 Mb/s */
	p->buffer_bytes = 500000;
	p->delay_min_us = 50;
	p->delay_max_us = 150;
	p->jitter_us = 100;
	p->fair_from_us = 2000000;
	p->fair_to_us = 8000000;
}

/*
 * Two hosts whose CPUs stop now and then, as make bench's TCG guests do:
 * every 4 ms or so, for up to 3 ms.  One sender, short messages one at a
 * time: in its _answered form a ping-pong (ib_send_lat), else an RDMA
 * write latency loop.  A round trip that meets a stall takes up to
 * several times the usual: every message must complete all the same,
 * and the run's probes and RTOs, each a packet sent for nothing, are
 * what a change to the timers is judged by.
 */
/*
 * Two of make bench's TCG guests: a one-way delay of 100-150 us with up to
 * 50 us of jitter (a round trip of about 290 us, as sockperf measures it
 * there), and CPUs that stop for up to 3 ms every 4 ms or so.
 */
static void tcg_hosts(struct sim_params *p)
{
	p->delay_min_us = 100;
	p->delay_max_us = 150;
	p->jitter_us = 50;
	p->stall_gap_us = 4000;
	p->stall_max_us = 3000;
}

static void sc_stalls(struct sim_params *p)
{
	p->nodes = 2;
	p->qps = 1;
	p->incast_to = 0;
	p->msgs_per_node = 2000;
	p->max_msg_bytes = 64;			/* 57 to 64 bytes */
	p->big_pct = 100;
	p->post_window_us = 100;
	p->depth = 1;
	tcg_hosts(p);
	p->link_bytes_per_us = 50;		/* 400 Mb/s */
}

/*
 * stalls' hosts and messages, 16 in flight, as srd_perf -s 64 -D 16
 * between two TCG guests: the window must not hold 64-byte sends to a
 * few in flight (check_pipelined()).
 */
static void sc_stalls_deep(struct sim_params *p)
{
	sc_stalls(p);
	p->depth = 16;
}

/*
 * A receiver that stops for 4 s in the middle of traffic, as a guest of
 * an overloaded host does (make bench's MPI rows under load): longer than
 * 13 expiries of the largest RTO, 3.25 s, shorter than peer_timeout_us.
 * Nothing may fail: the peer is live.  Both directions carry messages,
 * 16 in flight, so the sender sees the RTO's at their largest.
 */
static void sc_frozen_receiver(struct sim_params *p)
{
	p->nodes = 2;
	p->qps = 2;
	p->msgs_per_node = 600;
	p->post_window_us = 200000;
	p->depth = 16;
	p->rdma_pct = 30;
	tcg_hosts(p);
	p->freeze_node = 1;
	p->freeze_from_us = 20000;
	p->freeze_len_us = 4000000;
}

static bool check_frozen(const struct sim_params *p, const struct sim_result *r,
			 char *why, size_t n)
{
	(void)p;
	/* The count alone (rto_retries_max 12) would have given up. */
	if (r->rto_expired <= 13) {
		snprintf(why, n, "%llu RTOs: the freeze was not felt",
			 (unsigned long long)r->rto_expired);
		return false;
	}
	return true;
}

/*
 * Issue 49's fabric, the VM's srd_multipath_mix.sh in the simulator: one
 * QP pair between two hosts whose four equal-cost links the ECMP hash
 * spreads the 16 paths over, 2000 messages of 1 B to 64 KiB, 16 in
 * flight, in 1500-byte-MTU segments; on the links, as its netem has it:
 *   link 1, data direction: loss 5%;
 *   link 2, ACK direction:  loss 5%, delay 1 ms, 25% of it skipped (50%
 *                           correlated): reordering;
 *   link 3, data direction: duplication 5%, corruption 1%.
 * The hosts' RTT and rate are the TCG guests' (about 290 us, 250 Mb/s).
 * Every message must complete, and soon: check_goodput().
 */
static void sc_multipath_mix(struct sim_params *p)
{
	p->nodes = 2;
	p->qps = 1;
	p->incast_to = 1;			/* node 0 sends: the "up" direction */
	p->msgs_per_node = 2000;
	p->max_msg_bytes = 64 * 1024;
	p->uniform_len = true;
	p->seg_bytes = srd_wire_seg_bytes(1500);
	p->post_window_us = 100;
	p->depth = 16;
	tcg_hosts(p);
	p->link_bytes_per_us = 32;		/* 256 Mb/s */
	p->buffer_bytes = 1 << 20;
	p->links = 4;
	p->up[1].loss_permille = 50;
	p->down[2].loss_permille = 50;
	p->down[2].delay_us = 1000;
	p->down[2].reorder_pct = 25;
	p->down[2].reorder_corr_pct = 50;
	p->up[3].dup_permille = 50;
	p->up[3].corrupt_permille = 10;
}

/*
 * No QP can stall another (engine/rnr.c): 8 QPs a node, 2000 messages
 * from node 0 to node 1 over QPs 1..7, 1% loss; and first, before any
 * of them, 1000 sends from QP 0 to node 1's QP 0, which never posts a
 * receive (rnr_retry 7).  check_rnr_stuck() holds the rest to the pace
 * of the same run without the stuck sends.
 */
static void sc_rnr_stuck(struct sim_params *p)
{
	p->nodes = 2;
	p->qps = 8;
	p->incast_to = 1;
	p->msgs_per_node = 2000;
	p->loss_permille = 10;
	p->stuck_qp = 0;
	p->stuck_msgs = 1000;
}

/* The other QPs keep 80 % of their goodput; the stuck ones cost probes. */
#define STUCK_SLOWDOWN_X100	125

static bool check_rnr_stuck(const struct sim_params *p, const struct sim_result *r,
			    char *why, size_t n)
{
	struct sim_params twin = *p;
	struct sim_result tr;

	twin.stuck_msgs = 0;
	twin.quiet = true;
	sim_run(&twin, &tr);
	if (!tr.ok) {
		snprintf(why, n, "the twin without stuck sends failed: %s", tr.why);
		return false;
	}
	printf("#   goodput: %llu us against %llu us without the stuck sends (%.2fx; "
	       "at most %.2fx); %llu RNR probes, %llu RNR NAKs\n",
	       (unsigned long long)r->last_ok_completion_us,
	       (unsigned long long)tr.last_ok_completion_us,
	       tr.last_ok_completion_us ?
	       (double)r->last_ok_completion_us / tr.last_ok_completion_us : 0.0,
	       STUCK_SLOWDOWN_X100 / 100.0, (unsigned long long)r->rnr_probes,
	       (unsigned long long)r->rnr_naks);
	if (r->last_ok_completion_us * 100 >
	    STUCK_SLOWDOWN_X100 * tr.last_ok_completion_us) {
		snprintf(why, n, "the other QPs done by %llu us, by %llu us without the stuck sends",
			 (unsigned long long)r->last_ok_completion_us,
			 (unsigned long long)tr.last_ok_completion_us);
		return false;
	}
	/*
	 * Exercised: the stuck sends met RNR and waited in their gate, each
	 * probe drawing a NAK, not each send.
	 */
	if (!r->rnr_probes || r->rnr_naks >= (uint64_t)p->stuck_msgs / 4) {
		snprintf(why, n, "%llu RNR NAKs, %llu probes: no gate, or one NAK a send",
			 (unsigned long long)r->rnr_naks, (unsigned long long)r->rnr_probes);
		return false;
	}
	return true;
}

/*
 * A slow receiver (srd_mix -d): one QP pair, 16 messages of up to 64 KiB
 * in flight, into a QP that has one receive and gets another every
 * millisecond once it used it; 1% loss.  check_slow_receiver() holds the
 * sender to the receiver's pace: a sender whose RNR backoff grows with
 * each message's own NAKs, drawn while it waited behind the others,
 * sleeps up to rnr_backoff_max_us for a receive posted long before.
 */
static void sc_slow_receiver(struct sim_params *p)
{
	p->nodes = 2;
	p->qps = 1;
	p->incast_to = 1;
	p->msgs_per_node = 300;
	p->depth = 16;
	p->max_msg_bytes = 64 * 1024;
	p->uniform_len = true;
	p->loss_permille = 10;
	p->slow_rx_us = 1000;
}

/* At most this many times the receiver's pace (one message per slow_rx_us). */
#define SLOW_RX_SLACK_X100	150
/*
 * RNR NAKs per message at most.  A NAK answers each packet of a refused
 * attempt, and a probe goes as one packet until taken: about 3 a message
 * here.  Probes sent whole drew ~15 (up to 16 packets of 64 KiB in flight
 * each), and a gate that opened at the first probe taken, sending every
 * message behind it to the receiver's one used receive, ~56.
 */
#define SLOW_RX_NAKS_PER_MSG	8

static bool check_slow_receiver(const struct sim_params *p, const struct sim_result *r,
				char *why, size_t n)
{
	uint64_t pace = (uint64_t)p->msgs_per_node * p->slow_rx_us;

	printf("#   %llu us for %d messages, the receiver's pace %llu us (%.2fx; at most %.2fx); "
	       "%llu RNR probes, %llu RNR NAKs\n",
	       (unsigned long long)r->last_ok_completion_us, p->msgs_per_node,
	       (unsigned long long)pace, (double)r->last_ok_completion_us / pace,
	       SLOW_RX_SLACK_X100 / 100.0, (unsigned long long)r->rnr_probes,
	       (unsigned long long)r->rnr_naks);
	/* Exercised: the sender met RNR and probed. */
	if (!r->rnr_probes) {
		snprintf(why, n, "no RNR probe: the receiver was never short");
		return false;
	}
	if (r->rnr_naks > (uint64_t)SLOW_RX_NAKS_PER_MSG * p->msgs_per_node) {
		snprintf(why, n, "%llu RNR NAKs for %d messages: more than %d each",
			 (unsigned long long)r->rnr_naks, p->msgs_per_node,
			 SLOW_RX_NAKS_PER_MSG);
		return false;
	}
	if (r->last_ok_completion_us * 100 > SLOW_RX_SLACK_X100 * pace) {
		snprintf(why, n, "done by %llu us, the receiver's pace is %llu us",
			 (unsigned long long)r->last_ok_completion_us,
			 (unsigned long long)pace);
		return false;
	}
	return true;
}

/*
 * Goodput under loss, the property: a run with its links' trouble taken
 * away sets the pace, and the troubled run must keep at least a third of
 * its goodput (finish within 3x its time): a transport that only stays
 * exactly-once, crawling from timeout to timeout, fails here.
 */
#define GOODPUT_MIN_FRACTION	3	/* at least 1/3 of the clean run's */

/*
 * Messages @p->depth in flight finish at least 3/4 of depth times sooner
 * than one at a time (the same run at depth 1): 2000 sends of 64 B,
 * 16 deep, between stalls' hosts took 119-203 ms against about 1 s one
 * at a time (5.3-9.2x over 8 runs) while the window counted each as a
 * full packet, and 58-75 ms (13.3-17.7x) once it counted bytes (issue 48).
 */
static bool check_pipelined(const struct sim_params *p,
			    const struct sim_result *r, char *why, size_t n)
{
	struct sim_params one = *p;
	struct sim_result or;
	uint64_t x100;

	one.depth = 1;
	one.quiet = true;
	sim_run(&one, &or);
	if (!or.ok) {
		snprintf(why, n, "the twin one at a time failed: %s", or.why);
		return false;
	}
	x100 = r->last_ok_completion_us ?
	       or.last_ok_completion_us * 100 / r->last_ok_completion_us : 0;
	printf("#   pipelined: %llu us, one at a time %llu us: %llu.%02llux (at least %d.%02dx)\n",
	       (unsigned long long)r->last_ok_completion_us,
	       (unsigned long long)or.last_ok_completion_us,
	       (unsigned long long)(x100 / 100), (unsigned long long)(x100 % 100),
	       p->depth * 3 / 4, p->depth * 300 / 4 % 100);
	if (x100 * 4 < (uint64_t)p->depth * 300) {
		snprintf(why, n, "%d deep only %llu.%02llux as fast as one at a time",
			 p->depth, (unsigned long long)(x100 / 100),
			 (unsigned long long)(x100 % 100));
		return false;
	}
	return true;
}

static bool check_goodput(const struct sim_params *p, const struct sim_result *r,
			  char *why, size_t n)
{
	struct sim_params clean = *p;
	struct sim_result cr;
	int l;

	for (l = 0; l < SIM_MAX_LINKS; l++) {
		clean.up[l] = (struct sim_link_dir){ 0 };
		clean.down[l] = (struct sim_link_dir){ 0 };
	}
	clean.loss_permille = 0;
	clean.dup_permille = 0;
	clean.quiet = true;
	sim_run(&clean, &cr);
	if (!cr.ok) {
		snprintf(why, n, "the clean twin failed: %s", cr.why);
		return false;
	}
	printf("#   goodput: %llu us against %llu us clean (%.2fx; at most %dx)\n",
	       (unsigned long long)r->last_ok_completion_us,
	       (unsigned long long)cr.last_ok_completion_us,
	       cr.last_ok_completion_us ?
	       (double)r->last_ok_completion_us / cr.last_ok_completion_us : 0.0,
	       GOODPUT_MIN_FRACTION);
	if (r->ok_sends != r->msgs - r->expected_fail ||
	    r->last_ok_completion_us >
	    GOODPUT_MIN_FRACTION * cr.last_ok_completion_us) {
		snprintf(why, n, "goodput: %llu of %llu OK by %llu us, the clean run by %llu us "
			 "(at most %dx wanted)", (unsigned long long)r->ok_sends,
			 (unsigned long long)r->msgs,
			 (unsigned long long)r->last_ok_completion_us,
			 (unsigned long long)cr.last_ok_completion_us, GOODPUT_MIN_FRACTION);
		return false;
	}
	return true;
}

/*
 * The property over loss patterns: four links, each direction of each
 * drawn from the seed with loss, corruption and duplication below 10 %
 * in all, and at times reordering behind a delay of up to 2 ms; the
 * workload of multipath_mix.  check_goodput() judges it.
 */
static void sc_loss_patterns(struct sim_params *p)
{
	uint64_t x = p->seed * 0x9e3779b97f4a7c15ull + 0x1234567;
	int l, d;

	sc_multipath_mix(p);
	for (l = 0; l < p->links; l++) {
		for (d = 0; d < 2; d++) {
			struct sim_link_dir *ld = d ? &p->down[l] : &p->up[l];
			uint32_t r;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			r = (uint32_t)(x >> 33);
			ld->loss_permille = r % 60;
			ld->corrupt_permille = (r >> 8) % 20;
			ld->dup_permille = (r >> 13) % 20;
			if ((r >> 18) % 3 == 0) {
				ld->delay_us = 100 + (r >> 20) % 1900;
				ld->reorder_pct = 25;
				ld->reorder_corr_pct = 50;
			}
		}
	}
}

static void sc_latecomers_no_drain(struct sim_params *p)
{
	sc_latecomers(p);
	p->no_drain = true;
}

/* The drains made the senders fair. */
static bool check_fair(const struct sim_params *p, const struct sim_result *r,
		       char *why, size_t n)
{
	(void)p;
	if (!r->cc_drains || r->jain_permille < 950) {
		snprintf(why, n, "Jain's index %.3f (at least 0.95 wanted), %llu drains",
			 r->jain_permille / 1000.0, (unsigned long long)r->cc_drains);
		return false;
	}
	return true;
}

/*
 * Without drains the same run is unfair: what check_fair() passes on is
 * the drains' doing, not the scenario's.
 */
static bool check_unfair(const struct sim_params *p, const struct sim_result *r,
			 char *why, size_t n)
{
	(void)p;
	if (r->cc_drains || r->jain_permille >= 900) {
		snprintf(why, n,
			 "Jain's index %.3f without drains (%llu made): no latecomer problem",
			 r->jain_permille / 1000.0, (unsigned long long)r->cc_drains);
		return false;
	}
	return true;
}

/*
 * Peers at scale (issue 48, item 4): every node holds a peer for every
 * other, as a host of a cluster of --nodes does, and sends to every other
 * (scale_all_to_all) or to 9 drawn from the seed (scale_fanout, the same
 * work per peer at any size, for instructions per packet: make -C engine
 * bench-scale); msgs_per_node is per destination here (run_one()).  1 %
 * of the packets lost, 0.5 % duplicated, by the seed; messages of up to
 * 3 KiB in 1 KiB segments, all posted at once, as MPI_Alltoall's.  The engines' windows are
 * smaller than the default (32 packets, 8 messages, 8 paths), so that a
 * million peers fit in this host's memory: at the default, each peer
 * takes 32.6 kB created (512 packets of window), 33 GB at 1,000 nodes.
 */
static void sc_scale(struct sim_params *p)
{
	p->nodes = 10;
	p->qps = 2;
	p->n_paths = 8;
	p->seg_bytes = 1024;
	p->tx_window_pkts = 32;
	p->msg_window = 8;
	p->fanout = -1;
	p->msgs_per_node = 1;
	p->big_pct = 0;			/* 0 to 3 KiB: 1 to 3 packets */
	p->post_window_us = 100;	/* all at once, as MPI_Alltoall */
	p->loss_permille = 10;
	p->dup_permille = 5;
	p->jitter_us = 20;
}

static void sc_scale_fanout(struct sim_params *p)
{
	sc_scale(p);
	p->fanout = 9;
	p->msgs_per_node = 4;
}

/* The destinations each sender has under sim_params.fanout. */
static int fanout_dests(const struct sim_params *p)
{
	return p->fanout < 0 || p->fanout > p->nodes - 1 ? p->nodes - 1 : p->fanout;
}

/*
 * Every message went through (sim_run's oracle), under loss (there were
 * retransmits); an engine's memory stayed within its peers' bound
 * (sim_run).  Message times and Jain's index of the senders' goodput are
 * reported: a figure of the bench (bench-scale.sh wants 0.95 at 1,000
 * nodes), not of a test, which runs 10 nodes of 9 messages each, where
 * one RTO makes a sender's goodput a tenth of the others'.
 */
static bool check_scale(const struct sim_params *p, const struct sim_result *r,
			char *why, size_t n)
{
	printf("#   scale: %d nodes, %d peers each, %d destinations each: message p50 %llu us, "
	       "p99 %llu us, max %llu us; goodput Jain %.3f (%llu..%llu B/s); "
	       "%zu B a peer created, %zu B/node at most (bound %zu)\n",
	       p->nodes, p->nodes - 1, fanout_dests(p),
	       (unsigned long long)r->msg_p50_us, (unsigned long long)r->msg_p99_us,
	       (unsigned long long)r->msg_max_us, r->goodput_jain_permille / 1000.0,
	       (unsigned long long)r->goodput_min_bps,
	       (unsigned long long)r->goodput_max_bps, r->idle_bytes_per_peer,
	       r->peak_bytes_per_node, r->bound_bytes_per_node);
	if (!r->retransmits || !r->pkts_dropped_net) {
		snprintf(why, n, "%llu packets lost, %llu retransmits: no loss met",
			 (unsigned long long)r->pkts_dropped_net,
			 (unsigned long long)r->retransmits);
		return false;
	}
	if (r->ok_sends != r->msgs - r->expected_fail) {
		snprintf(why, n, "%llu of %llu messages OK", (unsigned long long)r->ok_sends,
			 (unsigned long long)r->msgs);
		return false;
	}
	return true;
}

static const struct scenario scenarios[] = {
	{ "basic", "4 nodes x 4 QPs, 16 paths, clean network, 30% RDMA", sc_basic, NULL },
	{ "lossy", "6 nodes, 2%/1% loss/dup, jitter, a dead path, bad QPN/qkey/rkey, RNR, 30% RDMA",
	  sc_lossy, check_paths },
	{ "blackhole", "3 of 8 paths black-holed for good, 30% RDMA", sc_blackhole,
	  check_paths },
	{ "restart", "node 2 restarts mid-run, 1% loss, 30% RDMA", sc_restart,
	  check_restart },
	{ "outage_within_budget", "all paths 0<->1 down for 0.1 s, 30% RDMA",
	  sc_outage_within_budget, NULL },
	{ "outage_beyond_budget", "all paths 0<->1 down for 12 s, 30% RDMA",
	  sc_outage_beyond_budget, check_outage_beyond },
	{ "incast_8_to_1", "8 senders x 24 x ~240 KB into one 10 Gb/s downlink", sc_incast,
	  check_incast },
	{ "latecomers", "4 senders starting 20 ms apart into one 400 Mb/s downlink: fair",
	  sc_latecomers, check_fair },
	{ "latecomers_no_drain", "the same without drains: unfair (the control)",
	  sc_latecomers_no_drain, check_unfair },
	{ "incast_depth", "4 senders, 16 KiB messages 16 deep, into 80 Mb/s: message times",
	  sc_incast_depth, check_fair },
	{ "stalls", "2 hosts that stop for up to 3 ms every ~4 ms: messages one at a time",
	  sc_stalls, NULL },
	{ "stalls_deep", "stalls' hosts and 64-byte sends, 16 in flight: pipelined",
	  sc_stalls_deep, check_pipelined },
	{ "frozen_receiver", "stalls' hosts, one of them stopped for 4 s mid-traffic: "
	  "nothing fails", sc_frozen_receiver, check_frozen },
	{ "multipath_mix", "4 links: 5% data loss on one, 5% ACK loss + 1 ms reordering on one, "
	  "5% dup + 1% corrupt on one; 2000 msgs to 64 KiB, 16 deep", sc_multipath_mix,
	  check_goodput },
	{ "loss_patterns", "multipath_mix's workload over 4 links, each direction's loss, "
	  "corruption, duplication (< 10%) and reordering drawn from the seed (12 seeds)",
	  sc_loss_patterns, check_goodput, 12 },
	{ "rnr_stuck", "8 QPs, 1% loss; 1000 sends to a QP that posts no receive, then 2000 "
	  "others: their goodput as without the stuck ones", sc_rnr_stuck, check_rnr_stuck },
	{ "slow_receiver", "one QP pair, 16 deep, to 64 KiB, 1% loss, into one receive "
	  "posted again every 1 ms: the receiver's pace", sc_slow_receiver,
	  check_slow_receiver },
	{ "big_msgs_64_paths", "messages up to 1 MiB, 1 KiB segments, 64 paths",
	  sc_big_64_paths, NULL },
	{ "forger", "4 nodes, 1% loss, 30% RDMA, an off-path forger: 1 forged per 2 real",
	  sc_forger, check_forger },
	{ "rdma_chunked", "WRITE with imm and READ of 16-17 MiB (2 chunks), 50% RDMA, 1% loss",
	  sc_rdma_chunked, NULL },
	{ "scale_all_to_all", "every node sends to every other (--nodes, 10 by default), "
	  "1% loss, 0.5% dup: message times, goodput fairness, memory a peer",
	  sc_scale, check_scale },
	{ "scale_fanout", "every node holds a peer for every other, sends 4 messages to each "
	  "of 9 drawn from the seed: the same work a peer at any --nodes", sc_scale_fanout,
	  check_scale },
};

#define NSC (sizeof(scenarios) / sizeof(scenarios[0]))

/* An answered run: the ACK logic of answers was exercised. */
static bool check_answered(const struct sim_result *r, char *why, size_t n)
{
	if (!r->answers || !r->acks_piggybacked) {
		snprintf(why, n, "%llu answers, %llu ACKs on them",
			 (unsigned long long)r->answers,
			 (unsigned long long)r->acks_piggybacked);
		return false;
	}
	return true;
}

static int run_one(int tapno, const struct scenario *sc, bool answer,
		   uint64_t seed, int scale, int nodes)
{
	struct sim_params p;
	struct sim_result r;
	char why[512] = "", name[64];
	clock_t t0 = clock();
	double secs;
	bool ok;

	snprintf(name, sizeof(name), "%s%s", sc->name, answer ? "_answered" : "");
	sim_default_params(&p);
	p.name = name;
	p.seed = seed;		/* before setup: sc_loss_patterns() draws from it */
	sc->setup(&p);
	if (nodes)
		p.nodes = nodes;
	if (p.fanout)
		p.msgs_per_node *= fanout_dests(&p);
	p.msgs_per_node *= scale;
	p.answer = answer;
	p.answer_us = 2;
	sim_run(&p, &r);
	secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	ok = r.ok && (!sc->extra_check || sc->extra_check(&p, &r, why, sizeof(why))) &&
	     (!answer || check_answered(&r, why, sizeof(why))) &&
	     (!r.rdma_msgs || check_rdma(&p, &r, why, sizeof(why)));
	printf("# %s seed %llu: %llu msgs, %llu delivered, %llu ok, %llu failed "
	       "(%llu expected), sim %llu us, %llu events, %.2f s\n",
	       name, (unsigned long long)seed, (unsigned long long)r.msgs,
	       (unsigned long long)r.delivered, (unsigned long long)r.ok_sends,
	       (unsigned long long)r.failed_sends, (unsigned long long)r.expected_fail,
	       (unsigned long long)r.sim_time_us, (unsigned long long)r.events, secs);
	printf("#   last OK completion at %llu us\n",
	       (unsigned long long)r.last_ok_completion_us);
	printf("#   pkts %llu, net drops %llu, queue drops %llu (max queue %llu B), dups %llu; "
	       "retx %llu (fast %llu, rto %llu, spurious %llu, probes %llu), dup rx %llu, rnr naks %llu, "
	       "path switches %llu / recoveries %llu, restarts %llu, stale drops %llu, "
	       "forged %llu; peak %zu B/node (bound %zu)\n",
	       (unsigned long long)r.pkts_sent, (unsigned long long)r.pkts_dropped_net,
	       (unsigned long long)r.pkts_dropped_queue,
	       (unsigned long long)r.max_queue_bytes, (unsigned long long)r.pkts_duped,
	       (unsigned long long)r.retransmits, (unsigned long long)r.fast_retransmits,
	       (unsigned long long)r.rto_expired,
	       (unsigned long long)r.spurious_retransmits,
	       (unsigned long long)r.tail_probes,
	       (unsigned long long)r.duplicates,
	       (unsigned long long)r.rnr_naks, (unsigned long long)r.path_switches,
	       (unsigned long long)r.path_recoveries, (unsigned long long)r.peer_restarts,
	       (unsigned long long)r.stale_drops, (unsigned long long)r.forged,
	       r.peak_bytes_per_node, r.bound_bytes_per_node);
	if (p.links)
		printf("#   %d links: %llu packets corrupted (dropped), %llu reordered\n",
		       p.links, (unsigned long long)r.pkts_corrupted,
		       (unsigned long long)r.pkts_reordered);
	if (r.rdma_msgs) {
		printf("#   rdma %llu (%llu bad access): OK %llu writes, %llu with imm, ",
		       (unsigned long long)r.rdma_msgs,
		       (unsigned long long)r.rdma_bad_access,
		       (unsigned long long)r.rdma_writes_ok,
		       (unsigned long long)r.rdma_writes_imm_ok);
		printf("%llu reads, %llu chunked, %llu bytes; ",
		       (unsigned long long)r.rdma_reads_ok,
		       (unsigned long long)r.rdma_chunked_ok,
		       (unsigned long long)r.rdma_bytes);
		printf("engines: %llu writes in, %llu reads in, %llu access NAKs\n",
		       (unsigned long long)r.rdma_writes_in,
		       (unsigned long long)r.rdma_reads_in,
		       (unsigned long long)r.rdma_access_naks);
	}
	if (p.fair_to_us)
		printf("#   fairness %.1f-%.1f s: Jain %.3f, senders %llu..%llu B, drains %llu\n",
		       p.fair_from_us / 1e6, p.fair_to_us / 1e6, r.jain_permille / 1000.0,
		       (unsigned long long)r.fair_min_bytes,
		       (unsigned long long)r.fair_max_bytes,
		       (unsigned long long)r.cc_drains);
	if (p.depth)
		printf("#   depth %d: worst sender's p50 %llu us, p99 %llu us, max %llu us\n",
		       p.depth, (unsigned long long)r.lat_p50_us,
		       (unsigned long long)r.lat_p99_us, (unsigned long long)r.lat_max_us);
	if (answer)
		printf("#   answers %llu, ACKs on them %llu, waits in vain %llu\n",
		       (unsigned long long)r.answers,
		       (unsigned long long)r.acks_piggybacked,
		       (unsigned long long)r.ack_reply_timeouts);
	if (!ok) {
		printf("#   FAILED: %s\n", r.ok ? why : r.why);
		printf("#   replay: sim --scenario %s --seed %llu --scale %d%s%.0d\n", name,
		       (unsigned long long)seed, scale, nodes ? " --nodes " : "", nodes);
	}
	printf("%sok %d - engine_sim_%s_seed_%llu\n", ok ? "" : "not ", tapno, name,
	       (unsigned long long)seed);
	fflush(stdout);
	return ok ? 0 : 1;
}

/* Is variant @answered of @sc the one --scenario names (or any)? */
static bool wanted(const char *only, const struct scenario *sc, int answered)
{
	size_t len;

	if (!only)
		return true;
	len = strlen(sc->name);
	if (strncmp(only, sc->name, len))
		return false;
	return answered ? !strcmp(only + len, "_answered") : !only[len];
}

/* --seeds K (@seeds > 0), else the scenario's own count. */
static int nseeds(const struct scenario *sc, int seeds)
{
	return seeds ? seeds : sc->seeds ? sc->seeds : 1;
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	uint64_t seed = 0;
	int seeds = 0, scale = 1, nodes = 0, i, v, failed = 0, n = 0;
	unsigned int k;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--scenario") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seeds") && i + 1 < argc &&
			 atoi(argv[i + 1]) > 0)
			seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
			scale = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--nodes") && i + 1 < argc &&
			 atoi(argv[i + 1]) >= 2)
			nodes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--list")) {
			for (k = 0; k < NSC; k++)
				printf("%-24s %s (and %s_answered)\n", scenarios[k].name,
				       scenarios[k].what, scenarios[k].name);
			return 0;
		} else {
			fprintf(stderr, "usage: %s [--scenario NAME] [--seed N] [--seeds K] "
				"[--scale S] [--nodes N] [--list]\n", argv[0]);
			return 2;
		}
	}
	if (seeds < 0 || scale < 1)
		return 2;
	for (k = 0; k < NSC; k++)
		for (v = 0; v < 2; v++)
			if (wanted(only, &scenarios[k], v))
				n += nseeds(&scenarios[k], seeds);
	if (!n) {
		fprintf(stderr, "no scenario %s (--list)\n", only);
		return 2;
	}
	printf("TAP version 13\n1..%d\n", n);
	n = 0;
	for (k = 0; k < NSC; k++) {
		for (v = 0; v < 2; v++) {
			if (!wanted(only, &scenarios[k], v))
				continue;
			for (i = 0; i < nseeds(&scenarios[k], seeds); i++)
				failed += run_one(++n, &scenarios[k], v,
						  seed ? seed + i : 1000 + 7919 * k + i,
						  scale, nodes);
		}
	}
	return failed ? 1 : 0;
}
