#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A process killed with SIGKILL in the middle of traffic (UD, then SRD
# with either end killed) leaves nothing behind: every live-object counter of both devices returns to its
# baseline, the kernel logs no problem, and rmmod rdma_srd then works.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
[ -n "${SRD_MODULE:-}" ] && [ -f "$SRD_MODULE" ] || skip "SRD_MODULE (the .ko to reload) is not set"
bin=$(srd_bin srd_lifecycle)
defer module_insert
out=$(mktemp /tmp/srd_kill.XXXXXX)
defer rm -f "$out"
two_hosts skl

objs="pds cqs qps mrs ahs"
counters() {
	local d o
	for d in "$DEV_A" "$DEV_B"; do
		for o in $objs; do printf '%s/%s=%s ' "$d" "$o" "$(hw_counter "$d" "$o")"; done
	done
}
base=$(counters)
echo "baseline: $base"
rx0=$(hw_counter "$DEV_B" rx_packets)

dmesg_mark
for round in 1 2; do
	echo "+ $bin --traffic $DEV_A $IP4_A $DEV_B $IP4_B >$out &"
	bg_start "$bin" --traffic "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" >"$out" 2>&1
	pid=$!
	wait_for "round $round: traffic running" 30 grep -q 'traffic running' "$out"
	cat "$out"
	during=$(counters)
	echo "during: $during"
	[ "$during" != "$base" ] || fail "round $round: counters did not move while objects were alive"
	[ "$(hw_counter "$DEV_B" rx_packets)" -gt "$rx0" ] ||
		fail "round $round: $DEV_B's rx_packets did not rise during traffic"
	pp kill -9 "$pid"
	wait "$pid" 2>/dev/null
	st=$?
	expect_eq "round $round: exit status of the killed process" 137 "$st"
	counters_back "round $round: after the kill" "$base" 10
	echo "ok: round $round: all counters back to the baseline"
done

# The same with SRD traffic: messages in flight at the transport hold
# references on the QP and its MRs; the kill must release them all.
perf=$(srd_tool srd_perf)
# shellcheck disable=SC2317 # delivered is wait_for's command
delivered() { [ "$(hw_counter "$DEV_B" srd_msgs_delivered)" -gt "$1" ]; }
for who in client server; do
	d0=$(hw_counter "$DEV_B" srd_msgs_delivered)
	echo "+ ip netns exec $NS_B $perf -S -d $DEV_B -W 0 &"
	bg_start ip netns exec "$NS_B" "$perf" -S -d "$DEV_B" -W 0 >"$out" 2>&1
	spid=$!
	wait_for "SRD: the server listens" 30 listening "$NS_B" 18600
	echo "+ ip netns exec $NS_A $perf -d $DEV_A -e -W 0 -T 60 -q 4 -s 65536 $IP4_B &"
	bg_start ip netns exec "$NS_A" "$perf" -d "$DEV_A" -e -W 0 -T 60 -q 4 \
		-s 65536 "$IP4_B" >/dev/null 2>&1
	cpid=$!
	wait_for "SRD: messages are being delivered" 30 delivered $((d0 + 20))
	[ "$(counters)" != "$base" ] || fail "SRD: counters did not move while objects were alive"
	if [ $who = client ]; then victim=$cpid; other=$spid; else victim=$spid; other=$cpid; fi
	pp kill -9 "$victim"
	# The survivor notices (broken TCP channel, or errors) or is killed too.
	deadline=$((SECONDS + 5))
	while kill -0 "$other" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
	kill -9 "$other" 2>/dev/null || true
	wait "$cpid" "$spid" 2>/dev/null || true
	counters_back "SRD, $who killed: after the kill" "$base" 10
	echo "ok: SRD traffic, $who killed: all counters back to the baseline"
done
dmesg_clean "SIGKILL mid-traffic"

# The devices are still usable after the kills.
try "$(srd_bin srd_traffic)" -c 20 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" ||
	fail "traffic after the kills"

try rmmod rdma_srd || fail "rmmod rdma_srd after the kills failed"
[ ! -d /sys/module/rdma_srd ] || fail "rdma_srd still loaded"
dmesg_clean "rmmod after the kills"
try insmod "$SRD_MODULE" || fail "insmod after rmmod failed"
exit $KSFT_PASS
