#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRD keeps moving on a lossy, reordering multipath fabric (issue 49): one
# SRD QP pair sends 2000 messages of random sizes up to 64 KiB, 16 in
# flight, across the four equal-cost links of a - r1 =4= r2 - b, first
# clean and then with a different trouble on three links:
#   r1 p1 (data):  loss 5%
#   r2 q2 (ACKs):  loss 5%, delay 1ms, reorder 25% 50%
#   r1 p3 (data):  duplicate 5%, corrupt 1%
# Then, on the same troubled fabric, a slow receiver: 300 messages into
# one receive that B posts again 5 ms after it took a message (srd_mix -r 1
# -d 5000), so that A meets RNR on most of them, and the same receiver
# with 16 receives, whose time is the receiver's own pace (its thread's
# 5 ms and more under TCG): their ratio is what RNR costs.
# Each run must deliver every message once and intact with no error
# completion (srd_mix checks each), and the counters must show that the
# transport did the work (retransmissions, duplicates, RNR probes).  The
# times and ratios are reported, not judged: the simulator's
# multipath_mix, loss_patterns and slow_receiver judge goodput under loss
# and RNR (engine/tests/sim_main.c), and make bench reports it (the
# multipath_mix rows).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tc
mix=$(srd_bin srd_mix)

MSGS=2000

ecmp_hosts mmx

# run WHAT [N [SRD_MIX_OPTION...]]: srd_mix from a to b, N messages
# (default MSGS), 16 receives unless told; sets SECS.
run() {
	local what=$1 n=${2:-$MSGS} out
	shift 2 || shift
	[ $# -gt 0 ] || set -- -r 16
	echo "+ srd_mix -n $n -m 65536 -w 16 $* $DEV_A $IP_A $DEV_B $IP_B"
	out=$(timeout -k 5 330 "$mix" -n "$n" -m 65536 -w 16 "$@" -t 120 \
		"$DEV_A" "$IP_A" "$DEV_B" "$IP_B" 2>&1)
	echo "$out"
	expect_match "$what: every message delivered once and intact" \
		"sent $n delivered $n intact $n dup 0 " "$out"
	SECS=$(sed -n 's/.* secs \([0-9.]*\)$/\1/p' <<<"$out")
	echo "$what: $n messages in $SECS s"
}

# ratio A B: A / B to two places.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf("%.2f", (b > 0) ? a / b : 0) }'
}

dmesg_mark
run "clean fabric"
clean=$SECS

retx=$(hw_counter "$DEV_A" srd_retransmits)
dups=$(hw_counter "$DEV_B" srd_duplicates)
netem "$NS_R1" p1 loss 5%
netem "$NS_R2" q2 loss 5% delay 1ms reorder 25% 50%
netem "$NS_R1" p3 duplicate 5% corrupt 1%
run "loss, ACK loss and reordering, duplication and corruption"
lossy=$SECS
expect_grew "the troubled fabric" "$DEV_A" srd_retransmits "$retx"
expect_grew "the troubled fabric" "$DEV_B" srd_duplicates "$dups"

probes=$(hw_counter "$DEV_A" srd_rnr_probes)
run "a slow receiver on the troubled fabric" 300 -r 1 -d 5000
slow=$SECS
expect_grew "the slow receiver" "$DEV_A" srd_rnr_probes "$probes"
run "the slow receiver with 16 receives" 300 -r 16 -d 5000
pace=$SECS
netem "$NS_R1" "p1 p3" none
netem "$NS_R2" q2 none
srd_counters "$DEV_A" "$DEV_B"
echo "# multipath mix: clean $clean s, troubled $lossy s, ratio $(ratio "$lossy" "$clean")"
echo "# slow receiver: 300 messages in $slow s with one receive, $pace s with 16:" \
	"ratio $(ratio "$slow" "$pace")"

dmesg_clean "srd_multipath_mix"
exit "$KSFT_PASS"
