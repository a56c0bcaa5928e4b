#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRD keeps moving on a lossy, reordering multipath fabric (issue 49): one
# SRD QP pair sends 2000 messages of random sizes up to 64 KiB, 16 in
# flight, across the four equal-cost links of a - r1 =4= r2 - b, first
# clean and then with a different trouble on three links:
#   r1 p1 (data):  loss 5%
#   r2 q2 (ACKs):  loss 5%, delay 1ms, reorder 25% 50%
#   r1 p3 (data):  duplicate 5%, corrupt 1%
# Each run must deliver every message once and intact with no error
# completion (srd_mix checks each), and the counters must show that the
# transport did the work (retransmissions, duplicates).  Both times and
# their ratio are reported, not judged: the simulator's multipath_mix and
# loss_patterns judge goodput under loss (engine/tests/sim_main.c), and
# make bench reports it (the multipath_mix rows).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tc
mix=$(srd_bin srd_mix)
# shellcheck disable=SC2154 # rc is the trap's, set first
trap 'rc=$?; [ $rc -eq 0 ] || [ $rc -eq 4 ] || ecmp_diag; srd_cleanup' EXIT

MSGS=2000

ecmp_hosts mmx

# run WHAT: srd_mix from a to b; sets SECS.
run() {
	local what=$1 out
	echo "+ srd_mix -n $MSGS -m 65536 -w 16 -r 16 $DEV_A $IP_A $DEV_B $IP_B"
	out=$(timeout -k 5 330 "$mix" -n $MSGS -m 65536 -w 16 -r 16 -t 120 \
		"$DEV_A" "$IP_A" "$DEV_B" "$IP_B" 2>&1)
	echo "$out"
	expect_match "$what: every message delivered once and intact" \
		"sent $MSGS delivered $MSGS intact $MSGS dup 0 " "$out"
	SECS=$(sed -n 's/.* secs \([0-9.]*\)$/\1/p' <<<"$out")
	echo "$what: $MSGS messages in $SECS s"
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
netem "$NS_R1" "p1 p3" none
netem "$NS_R2" q2 none
srd_counters "$DEV_A" "$DEV_B"
echo "# multipath mix: clean $clean s, troubled $lossy s," \
	"ratio $(awk -v a="$lossy" -v b="$clean" 'BEGIN { printf("%.2f", (b > 0) ? a / b : 0) }')"

dmesg_clean "srd_multipath_mix"
exit "$KSFT_PASS"
