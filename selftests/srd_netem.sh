#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRD delivers every message exactly once and intact over a fabric that
# loses, reorders, duplicates, delays and corrupts packets: netem on the
# four equal-cost links between a and b (a - r1 =4= r2 - b), in the data
# direction (r1's p links) and then in both (r2's q links carry the ACKs).
# Each case is an srd_perf run of several sizes over two QP pairs (the
# loss-on-all-links ones with srd_perf -E, sleeping on completion events)
# that must see no error completion and no corrupt, duplicate or missing
# message; the device counters show that the transport did the work
# (retransmissions under loss, duplicates and reordering detected).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tc
srd_tool srd_perf >/dev/null

SIZES=64,4096,32768
NSIZES=3
MSGS=16
QPS=2

ecmp_hosts nem
P="${ECMP_P[*]}"
Q="${ECMP_Q[*]}"

# traffic WHAT [-n MSGS] [-E] [SRD_PERF_ARGS...]: an srd_perf run from a
# to b that must deliver every message exactly once, intact, without
# error completions.  -E: both sides sleep on their completion channels
# instead of spinning.
traffic() {
	local what=$1 n=$MSGS ev=()
	shift
	[ "${1:-}" = -n ] && { n=$2; shift 2; }
	[ "${1:-}" = -E ] && { ev=(-E); shift; }
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" "${ev[@]}" -- \
		"${ev[@]}" \
		-d "$DEV_A" -s $SIZES -n "$n" -q $QPS -W 30 "$@" "$MGMT_B"
	perf_clean "$what" "$PAIR_CLIENT_OUT" $NSIZES $((NSIZES * n * QPS)) 0
}

dmesg_mark

# First on one link each: every flow the fabric hashes sees its kind of
# trouble, and the spraying mixes them within each message.
retx=$(hw_counter "$DEV_A" srd_retransmits)
dups=$(hw_counter "$DEV_B" srd_duplicates)
netem "$NS_R1" p0 loss 5%
netem "$NS_R1" p1 delay 1ms reorder 25% 50%
netem "$NS_R1" p2 duplicate 5%
netem "$NS_R1" p3 corrupt 2%
traffic "one impairment per link"
expect_grew "one impairment per link" "$DEV_A" srd_retransmits "$retx"
expect_grew "one impairment per link" "$DEV_B" srd_duplicates "$dups"

# Then each on all four links (netem replaces the qdiscs).
for loss in 1% 10%; do
	retx=$(hw_counter "$DEV_A" srd_retransmits)
	netem "$NS_R1" "$P" loss $loss
	# Sleeping on completion events, as make bench's bandwidth rows do.
	traffic "loss $loss on all links, completion events" -E
	expect_grew "loss $loss on all links, completion events" "$DEV_A" srd_retransmits "$retx"
done

# Jitter reorders: netem sends each packet at its own time.
ooo=$(hw_counter "$DEV_B" srd_out_of_order)
netem "$NS_R1" "$P" delay 2ms 1ms
traffic "delay 2ms, jitter 1ms on all links" -I
expect_grew "delay 2ms, jitter 1ms on all links" "$DEV_B" srd_out_of_order "$ooo"

# Duplication and corruption together (a corrupt packet fails its UDP
# checksum and is dropped: a loss).
dups=$(hw_counter "$DEV_B" srd_duplicates)
retx=$(hw_counter "$DEV_A" srd_retransmits)
netem "$NS_R1" "$P" duplicate 5% corrupt 2%
traffic "duplication 5%, corruption 2% on all links" -x
expect_grew "duplication 5%, corruption 2% on all links" "$DEV_B" srd_duplicates "$dups"
expect_grew "duplication 5%, corruption 2% on all links" "$DEV_A" srd_retransmits "$retx"

# Both directions: ACKs are lost, reordered and duplicated too.
retx=$(hw_counter "$DEV_A" srd_retransmits)
netem "$NS_R1" "$P" delay 1ms reorder 25% 50% loss 5% duplicate 2%
netem "$NS_R2" "$Q" delay 1ms reorder 25% 50% loss 5% duplicate 2%
traffic "loss 5%, reordering and duplication both ways" -n 6
expect_grew "loss 5%, reordering and duplication both ways" "$DEV_A" srd_retransmits "$retx"
netem "$NS_R1" "$P" none
netem "$NS_R2" "$Q" none
srd_counters "$DEV_A" "$DEV_B"

dmesg_clean "srd_netem"
exit $KSFT_PASS
