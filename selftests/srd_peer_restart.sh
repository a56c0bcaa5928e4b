#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A peer that restarts (its srd device deleted and made again, so with a
# new tag) in the middle of SRD traffic: the sender's process carries
# on, each of its sends completes once, successfully or with a remote
# error (no such QP, remote abort, peer restarted, peer unreachable), and
# nothing arrives corrupt or twice; the sender sees the restart
# (srd_peer_restarts), and afterwards traffic works both ways with the new
# incarnation.  Then the same with the restart while the peers are idle.
# (The topology is ecmp_hosts', whose management link carries srd_perf's
# TCP channel.)
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
srd_tool srd_perf >/dev/null
perf=$(srd_tool srd_perf)
tmp=$(mktemp -d /tmp/srd_peer_restart.XXXXXX)
defer rm -rf "$tmp"

ecmp_hosts prs

# traffic_ab / traffic_ba SRD_PERF_ARGS...: an srd_perf run a to b, b to a.
traffic_ab() {
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- -d "$DEV_A" -W 30 "$@" "$MGMT_B"
}
traffic_ba() {
	perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -- -d "$DEV_B" -W 30 "$@" "$MGMT_A"
}

# says FILE TEXT: a line of FILE contains TEXT (no process started).
# shellcheck disable=SC2317 # says is wait_for's command
says() {
	local l
	while IFS= read -r l; do
		[[ "$l" == *"$2"* ]] && return 0
	done <"$1"
	return 1
}

# restart_b: b's srd device deleted and made again on the same netdev.
restart_b() {
	local t0=$SECONDS
	try rdma link del "$DEV_B" || fail "rdma link del $DEV_B"
	srd_link_gone "$DEV_B" || fail "$DEV_B still there after rdma link del"
	try ip netns exec "$NS_B" rdma link add "$DEV_B" type srd netdev vb ||
		fail "rdma link add $DEV_B again"
	wait_for "$DEV_B again has the GID of $IP_B" 30 has_gid "$DEV_B" "$(gid_of_ipv4 $IP_B)"
	echo "$DEV_B restarted in $((SECONDS - t0)) s"
}

dmesg_mark

# The restart in the middle of traffic.  The receiving process must go
# first: a device with users cannot be deleted.  The sender runs for a
# fixed time and then fails on the TCP channel, its server being dead;
# what it printed about its sends until then is what counts.  Its 30 s
# must cover the start of traffic and the restart: 4 s on a quiet host on
# the debug kernel, and more than the 12 s it once had on a loaded one.
restarts=$(hw_counter "$DEV_A" srd_peer_restarts)
rx0=$(hw_counter "$DEV_B" srd_rx_data_pkts)
echo "+ ip netns exec $NS_B $perf -S -d $DEV_B -W 30 &"
bg_start ip netns exec "$NS_B" "$perf" -S -d "$DEV_B" -W 30 >"$tmp/server" 2>&1
spid=$!
wait_for "the server listens" 20 says "$tmp/server" "listening on TCP port"
echo "+ ip netns exec $NS_A $perf -d $DEV_A -W 30 -s 16384 -T 30 -q 2 -e $MGMT_B &"
bg_start ip netns exec "$NS_A" timeout -k 5 90 "$perf" -d "$DEV_A" -W 30 \
	-s 16384 -T 30 -q 2 -e "$MGMT_B" >"$tmp/client" 2>&1
cpid=$!
t_client=$SECONDS
wait_for "traffic reaches $DEV_B" 20 counter_above "$DEV_B" srd_rx_data_pkts $((rx0 + 50))
pp kill -9 "$spid"
wait "$spid"
restart_b
# The sender must still be sending to meet the new incarnation.
kill -0 "$cpid" 2>/dev/null ||
	fail "the sender stopped before $DEV_B was back, $((SECONDS - t_client)) s after it started: a slower guest than planned"
echo "the sender had run $((SECONDS - t_client)) s of its 30 when $DEV_B was back"
wait_for "$DEV_A saw the restart (srd_peer_restarts above $restarts)" 10 \
	counter_above "$DEV_A" srd_peer_restarts "$restarts"
wait "$cpid"
crc=$?
out=$(cat "$tmp/client")
echo "server (killed):"
sed 's/^/  /' "$tmp/server"
echo "client (exit $crc):"
sed 's/^/  /' <<<"$out"
[ $crc -ne 124 ] && [ $crc -ne 137 ] || fail "the sender did not finish"
# (Its '#' lines: the heading of a table would say "corrupt" too.)
if grep '^#' <<<"$out" | grep -Eq 'corrupt|duplicate|unexpected receive|never posted|no progress|no completion'; then
	fail "the sender reported a corrupt, duplicate or lost message"
fi
echo "ok: no send lost, no message corrupt or delivered twice"
grep -Eq '^# FAIL: (the peer closed the TCP connection|TCP (send|recv): )' <<<"$out" ||
	fail "the sender failed otherwise than by losing its TCP channel"
echo "ok: the sender stopped on its TCP channel only"
vendors=$(error_vendors "$out")
[ -n "$vendors" ] || fail "the sender saw no error completion"
[[ " $vendors " =~ ^(\ (14|17|18|19))+\ $ ]] ||
	fail "error completions with vendor_err $vendors, expected 14, 17, 18 or 19"
echo "ok: the sender's error completions had vendor_err $vendors"

traffic_ab -s 64,65536 -n 20 -q 2
perf_clean "a to the restarted b" "$PAIR_CLIENT_OUT" 2 80 0

# The restart while idle: a's first packets name b's old tag; the new b
# drops them and introduces itself, and a fails the messages it had in
# flight to the old incarnation (vendor_err 19), at most a window of them
# (2 QPs, 16 deep); the rest go through.
restarts=$(hw_counter "$DEV_A" srd_peer_restarts)
restart_b
traffic_ab -s 4096 -n 40 -q 2 -e
perf_clean "a to b restarted while idle" "$PAIR_CLIENT_OUT" 1
vendors=$(error_vendors "$PAIR_CLIENT_OUT")
[ -z "$vendors" ] || [ "$vendors" = 19 ] ||
	fail "error completions with vendor_err $vendors, expected none or 19"
[ "$PERF_ERRORS" -le 32 ] && [ $((PERF_MSGS + PERF_ERRORS)) -eq 80 ] ||
	fail "expected at most 32 of 80 sends to fail, saw $PERF_ERRORS failed, $PERF_MSGS delivered"
echo "ok: $PERF_ERRORS error completions${vendors:+ with vendor_err $vendors}, $PERF_MSGS delivered"
wait_for "$DEV_A saw the idle restart (srd_peer_restarts above $restarts)" 10 \
	counter_above "$DEV_A" srd_peer_restarts "$restarts"
traffic_ba -s 64,65536 -n 20 -q 2
perf_clean "the restarted b to a" "$PAIR_CLIENT_OUT" 2 80 0
srd_counters "$DEV_A" "$DEV_B"

dmesg_clean "srd_peer_restart"
exit $KSFT_PASS
