#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# No QP can stall another (issue 46; docs/protocol.md, "Receiver not
# ready"): uid 65534 posts 1000 sends from an SRD QP on a to one on b that
# never posts a receive (rnr_retry 7: retry forever); meanwhile uid 65533
# sends 2000 messages of up to 64 KiB between the same two devices, 16 in
# flight (srd_mix).  The second user's must all arrive, once and intact,
# while the first's stay unanswered and keep being tried (rnr_probes grows
# before and after, none completes); then the first user posts its 1000
# receives, and its 1000 messages arrive, once and intact.  The second
# user's time alone and beside the stuck sends is reported, not judged.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv mkfifo
stuck=$(srd_bin srd_rnr_stuck)
mix=$(srd_bin srd_mix)
STUCK_DIR=$(mktemp -d /tmp/srd_rnr_stuck.XXXXXX)
chmod 755 "$STUCK_DIR"
defer rm -rf "$STUCK_DIR"

STUCK=1000
MSGS=2000

two_hosts rnr
# Pinned pages: two users' buffers, a few MiB each.
ulimit -l unlimited

probes() { hw_counter "$DEV_A" srd_rnr_probes; }

# mix WHAT: uid 65533's 2000 messages; sets SECS.
mix() {
	local out
	echo "+ setpriv --reuid=65533 ... srd_mix -n $MSGS -m 65536 -w 16 -r 16 $DEV_A $IP4_A $DEV_B $IP4_B"
	out=$(timeout -k 5 300 setpriv --reuid=65533 --regid=65533 --clear-groups \
		"$mix" -n $MSGS -m 65536 -w 16 -r 16 -t 60 \
		"$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" 2>&1)
	echo "$out"
	expect_match "uid 65533's messages arrive once and intact $1" \
		"sent $MSGS delivered $MSGS intact $MSGS dup 0 " "$out"
	SECS=$(sed -n 's/.* secs \([0-9.]*\)$/\1/p' <<<"$out")
}

dmesg_mark
# The pace alone, reported: the run beside the stuck sends is judged by
# its delivery, the pace by the simulator's rnr_stuck (engine/tests).
mix alone
alone=$SECS
mkfifo "$STUCK_DIR/in"
chmod 666 "$STUCK_DIR/in"
# Opened read-write here first (no wait for a reader), and held, so that
# the program reads no end of file before we say.
exec 3<>"$STUCK_DIR/in"
echo "+ setpriv --reuid=65534 ... srd_rnr_stuck -n $STUCK $DEV_A $IP4_A $DEV_B $IP4_B &"
# Not bg_start: "$@" & in a function reads /dev/null, not the FIFO.
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$stuck" -n $STUCK "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" \
	<"$STUCK_DIR/in" >"$STUCK_DIR/log" 2>&1 &
STUCK_PID=$!
defer kill_wait "$STUCK_PID"
wait_for "uid 65534 posted its $STUCK sends" 60 grep -q "^posted $STUCK" "$STUCK_DIR/log"
naks0=$(hw_counter "$DEV_A" srd_rnr_naks_received)
expect_grew "the stuck sends met RNR" "$DEV_A" srd_rnr_naks_received 0
p0=$(probes)
expect_grew "the stuck sends are tried again" "$DEV_A" srd_rnr_probes "$p0"

p0=$(probes)
mix "beside the stuck ones"
echo "uid 65533: $MSGS messages in $SECS s beside $STUCK stuck sends, $alone s alone"
echo "$DEV_A's rnr_probes during it: $p0 -> $(probes)"

# rnr_retry 7: still trying, and nothing completed.
p0=$(probes)
expect_grew "the stuck sends are still tried after" "$DEV_A" srd_rnr_probes "$p0"
kill -0 "$STUCK_PID" 2>/dev/null || { cat "$STUCK_DIR/log"; fail "srd_rnr_stuck exited early"; }
if grep -q FAIL "$STUCK_DIR/log"; then
	cat "$STUCK_DIR/log"
	fail "a stuck send completed"
fi
naks=$(hw_counter "$DEV_A" srd_rnr_naks_received)
echo "ok: $STUCK sends stuck: none completed; $DEV_A's rnr_naks_received $naks0 -> $naks"

echo "+ echo go > srd_rnr_stuck: post the receives"
echo go >&3
exec 3>&-
rc=0
timeout 180 tail --pid="$STUCK_PID" -f /dev/null || rc=$?
wait "$STUCK_PID" || rc=$?
cat "$STUCK_DIR/log"
[ "$rc" -eq 0 ] || fail "srd_rnr_stuck: exit $rc"
expect_match "the stuck messages arrive once the receives are posted" \
	"delivered $STUCK intact $STUCK dup 0 " "$(cat "$STUCK_DIR/log")"
dmesg_clean "no QP stalls another"
