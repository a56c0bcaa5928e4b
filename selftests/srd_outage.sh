#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRD rides out link outages in a fabric of four equal-cost links
# (a - r1 =4= r2 - b; srd_perf's TCP takes a separate link):
#  - one link black-holed in the middle of traffic: the paths hashed onto
#    it are avoided (srd_path_switches), nothing is lost;
#  - all links black-holed both ways for 300 ms, and for 4 s, in the
#    middle of traffic, within the retry budget (peer_timeout_us, 10 s):
#    everything is delivered, without error (4 s is more than 13 RTOs of
#    250 ms, the count that alone gave a live peer up before);
#  - all links down for longer than the retry budget: the sends complete
#    with IBV_WC_RESP_TIMEOUT_ERR (vendor_err 18) after the budget, which
#    is measured (10 to 20 s), nothing is delivered twice or lost
#    silently, and the devices work again once the links are back;
#  - all links down for longer than the budget and than a receiver waits,
#    in the middle of 1 MiB messages: the sender gives them up, the
#    receiver aborts the part it holds (srd_rx_msg_timeouts), its receive
#    completes REM_ABORT, and the sends after the outage go through.
# The outages are timed in the background while srd_perf runs, and each
# is checked to have fallen within the traffic.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tc mkfifo
srd_tool srd_perf >/dev/null
tmp=$(mktemp -d /tmp/srd_outage.XXXXXX)
defer rm -rf "$tmp"

ecmp_hosts out
P="${ECMP_P[*]}"
Q="${ECMP_Q[*]}"

# traffic SRD_PERF_ARGS...: an srd_perf run from a to b; TRAFFIC_END is
# when it ended, in µs.
traffic() {
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- -d "$DEV_A" -W 30 "$@" "$MGMT_B"
	TRAFFIC_END=${EPOCHREALTIME/./}
}

# The fabric's controls.  A loaded TCG guest takes up to seconds to start
# a process, so what happens during traffic starts none: a tc process in
# each router reads its commands from a FIFO (fd 7 for r1's p links, 8 for
# r2's q links), waits are reads that time out (fd 9), counters are read
# by the shell, and the routers' link counters come from the tc process's
# /proc/PID/net/dev.
mkfifo "$tmp/r1" "$tmp/r2" "$tmp/never" || fail "mkfifo"
bg_start ip netns exec "$NS_R1" tc -force -batch "$tmp/r1"
TC1=$!
bg_start ip netns exec "$NS_R2" tc -force -batch "$tmp/r2"
exec 7>"$tmp/r1" 8>"$tmp/r2" 9<>"$tmp/never"
for d in $P; do echo "qdisc replace dev $d root netem loss 0%" >&7; done
for d in $Q; do echo "qdisc replace dev $d root netem loss 0%" >&8; done
# shellcheck disable=SC2317 # netem_on is wait_for's command
netem_on() {
	ip netns exec "$NS_R1" tc qdisc show dev "${ECMP_P[-1]}" | grep -q netem &&
		ip netns exec "$NS_R2" tc qdisc show dev "${ECMP_Q[-1]}" | grep -q netem
}
wait_for "netem (loss 0%) on every link" 20 netem_on

# loss PCT LINKS...: change the netem loss of r1's p and r2's q links.
loss() {
	local pct=$1 d
	shift
	for d; do
		case $d in
		p*) echo "qdisc change dev $d root netem loss $pct" >&7 ;;
		q*) echo "qdisc change dev $d root netem loss $pct" >&8 ;;
		esac
	done
}

pause() {
	read -r -t "$1" -u 9 || true
}

# link_tx: LTX[p0]... = the tx packets of r1's links.
declare -A LTX
link_tx() {
	local -a f
	while read -r -a f; do
		[[ "${f[0]}" == p[0-9]: ]] && LTX[${f[0]%:}]=${f[10]}
	done </proc/$TC1/net/dev
}

# when_traffic PKTS CMD...: in the background, once b has received PKTS
# data packets of the run about to start, run CMD (a function that starts
# no process); "event_ok WHAT" then checks it.
when_traffic() {
	local pkts=$1 ctr=/sys/class/infiniband/$DEV_B/hw_counters/srd_rx_data_pkts
	local base v
	shift
	read -r base <"$ctr"
	rm -f "$tmp/event"
	(
		deadline=$((SECONDS + 30))
		while read -r v <"$ctr" && [ "$v" -le $((base + pkts)) ]; do
			[ $SECONDS -lt $deadline ] || exit 1
			pause 0.02
		done
		"$@"
	) &
	EVENT_PID=$!
	defer kill_wait "$EVENT_PID"
}

# event_ok WHAT MIN_AFTER_MS: the background event ran, and ended at
# least MIN_AFTER_MS before the traffic did.
event_ok() {
	local start end
	wait "$EVENT_PID" || fail "$1: no traffic reached $DEV_B"
	read -r start end _ <"$tmp/event" || fail "$1: did not happen"
	echo "$1: from $(((start - TRAFFIC_START) / 1000)) ms to $(((end - TRAFFIC_START) / 1000)) ms, the traffic ended at $(((TRAFFIC_END - TRAFFIC_START) / 1000)) ms"
	[ $((end + $2 * 1000)) -le "$TRAFFIC_END" ] ||
		fail "$1: not within the traffic (a slower guest than planned?)"
	echo "ok: $1 happened during the traffic"
}

# The events.
# shellcheck disable=SC2317 # black_hole_busiest is when_traffic's command
black_hole_busiest() {
	local t0 l busy=p0 most=-1
	link_tx
	for l in $P; do
		[ $((LTX[$l] - TX0[$l])) -gt "$most" ] && busy=$l most=$((LTX[$l] - TX0[$l]))
	done
	t0=${EPOCHREALTIME/./}
	loss 100% "$busy"
	echo "$t0 $t0 $busy" >"$tmp/event"
}
# shellcheck disable=SC2317 # fabric_down is when_traffic's command
fabric_down() {
	local t0 t1
	t0=${EPOCHREALTIME/./}
	# shellcheck disable=SC2086 # $P and $Q: lists of links
	loss 100% $P $Q
	pause "$1"
	# shellcheck disable=SC2086 # $P and $Q: lists of links
	loss 0% $P $Q
	t1=${EPOCHREALTIME/./}
	echo "$t0 $t1" >"$tmp/event"
}

dmesg_mark

# One link black-holed during traffic: its paths time out and are
# avoided, their packets sent again on others.  The busiest link is sure
# to carry some of the paths.
sw=$(hw_counter "$DEV_A" srd_path_switches)
declare -A TX0
link_tx
for l in $P; do TX0[$l]=${LTX[$l]}; done
when_traffic 200 black_hole_busiest
TRAFFIC_START=${EPOCHREALTIME/./}
traffic -s 16384 -T 4 -q 2
event_ok "black-holing the busiest link" 1000
read -r _ _ busy <"$tmp/event"
link_tx
echo "black-holed: $busy; packets on the links since the start:$(for l in $P; do printf ' %s %s' "$l" $((LTX[$l] - TX0[$l])); done)"
perf_clean "$busy black-holed" "$PAIR_CLIENT_OUT" 1 "" 0
expect_grew "$busy black-holed" "$DEV_A" srd_path_switches "$sw"
srd_counters "$DEV_A"
loss 0% "$busy"

# All links down both ways for 300 ms during traffic: within the budget.
retx=$(hw_counter "$DEV_A" srd_retransmits)
when_traffic 20 fabric_down 0.3
TRAFFIC_START=${EPOCHREALTIME/./}
traffic -s 16384 -T 3 -q 2
event_ok "a 300 ms outage of all links" 500
perf_clean "300 ms outage" "$PAIR_CLIENT_OUT" 1 "" 0
expect_grew "300 ms outage" "$DEV_A" srd_retransmits "$retx"

# All links down both ways for 4 s during traffic: within the budget too.
# Messages wait on the network for the whole 4 s, through 13 RTOs and
# more (srd_rto_expired), and none fails.
unr=$(hw_counter "$DEV_A" srd_peer_unreachable)
rto=$(hw_counter "$DEV_A" srd_rto_expired)
when_traffic 20 fabric_down 4
TRAFFIC_START=${EPOCHREALTIME/./}
traffic -s 16384 -T 7 -q 2
event_ok "a 4 s outage of all links" 500
perf_clean "4 s outage" "$PAIR_CLIENT_OUT" 1 "" 0
rto1=$(hw_counter "$DEV_A" srd_rto_expired)
[ $((rto1 - rto)) -gt 13 ] ||
	fail "4 s outage: $((rto1 - rto)) RTOs expired, the outage was not felt"
echo "ok: 4 s outage: $((rto1 - rto)) RTOs expired, no send failed"
expect_eq "4 s outage: srd_peer_unreachable" "$unr" \
	"$(hw_counter "$DEV_A" srd_peer_unreachable)"

# All links down for good: the sends fail after the retry budget, which
# the run's duration measures (from the first post to the last completion).
unr=$(hw_counter "$DEV_A" srd_peer_unreachable)
# shellcheck disable=SC2086 # $P and $Q: lists of links
loss 100% $P $Q
traffic -s 4096 -n 4 -D 4 -q 1 -e
perf_clean "all links down" "$PAIR_CLIENT_OUT" 1 0 4
expect_eq "all links down: vendor_err of the error completions" 18 \
	"$(error_vendors "$PAIR_CLIENT_OUT")"
secs=$(perf_sum secs "$PAIR_CLIENT_OUT")
echo "the retry budget: the sends failed after $secs s"
awk -v s="$secs" 'BEGIN { exit !(s >= 10 && s <= 20) }' ||
	fail "all links down: the sends failed after $secs s, expected 10 to 20 s"
echo "ok: all links down: the sends failed after $secs s"
expect_grew "all links down" "$DEV_A" srd_peer_unreachable "$unr"
# shellcheck disable=SC2086 # $P and $Q: lists of links
loss 0% $P $Q

# Cut off for 12 s in the middle of 1 MiB messages, longer than the retry
# budget and than a receiver waits: a gives the sends in flight up
# (vendor_err 18, srd_peer_unreachable); b, holding part of a message,
# aborts the receive once no segment came for peer_timeout_us (10 s;
# srd_rx_msg_timeouts) and completes it IBV_WC_REM_ABORT_ERR (vendor_err
# 17) instead of keeping it, and the memory it pins, for good.  The sends
# after the outage go through.
unr=$(hw_counter "$DEV_A" srd_peer_unreachable)
tmo=$(hw_counter "$DEV_B" srd_rx_msg_timeouts)
when_traffic 50 fabric_down 12
TRAFFIC_START=${EPOCHREALTIME/./}
traffic -s 1048576 -T 15 -D 2 -q 4 -e
event_ok "a 12 s outage in the middle of 1 MiB messages" 500
perf_clean "a 12 s outage mid-message" "$PAIR_CLIENT_OUT" 1 "" +
[ "$PERF_MSGS" -gt 0 ] || fail "12 s outage mid-message: no send succeeded after it"
expect_grew "12 s outage mid-message" "$DEV_A" srd_peer_unreachable "$unr"
expect_grew "12 s outage mid-message" "$DEV_B" srd_rx_msg_timeouts "$tmo"
grep -q 'error completion: .*(vendor_err 17) .*(receive)' <<<"$PAIR_SERVER_OUT" ||
	fail "12 s outage mid-message: b's receive did not complete REM_ABORT"
echo "ok: b aborted the receive its sender never finished (vendor_err 17)"

# And the devices work as before.
traffic -s 64,65536 -n 20 -q 2
perf_clean "links back" "$PAIR_CLIENT_OUT" 2 80 0
srd_counters "$DEV_A" "$DEV_B"

dmesg_clean "srd_outage"
exit $KSFT_PASS
