#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The rdma_srd trace events (kernel/trace.h), enabled through tracefs
# while a sends b SRD traffic under 5 % loss, then error completions
# (srd_srd_qp's case 5), then traffic to b restarted: every event kind
# appears, each line's fields are sane (a path below n_paths, a known
# reason), and the counts equal the counters that moved meanwhile (DATA
# sent, retransmissions, ACKs, RTOs, NAKs each way, failed messages, peer
# restarts).  Before and after, with the events off, nothing is traced.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tc
modprobe sch_netem 2>/dev/null
srdqp=$(srd_bin srd_srd_qp)
srd_tool srd_perf >/dev/null

tracefs_open
[ -d "$T/events/rdma_srd" ] || fail "no rdma_srd trace events in $T/events"
n_paths=$(cat /sys/module/rdma_srd/parameters/n_paths)

two_hosts str
CTRS="srd_tx_data_pkts srd_retransmits srd_acks_received srd_rto_expired
	srd_naks_sent srd_naks_received srd_msgs_failed srd_peer_restarts srd_path_switches"
# total NAME: NAME summed over a and b.
total() { echo $(($(hw_counter "$DEV_A" "$1") + $(hw_counter "$DEV_B" "$1"))); }

dmesg_mark
buf0=$(cat "$T/buffer_size_kb")
echo 16384 >"$T/buffer_size_kb"
echo >"$T/trace"
# Off: nothing, whatever the traffic.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 4096 -n 50 "$IP4_B"
n=$(grep -c 'srd_' "$T/trace")
expect_eq "events traced while off" 0 "$n"

declare -A before
for c in $CTRS; do before[$c]=$(total "$c"); done
set_param "$T/events/rdma_srd/enable" 1
try ip netns exec "$NS_A" tc qdisc add dev "$IF_A" root netem loss 5% || skip "no netem"
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 16384 -n 100 "$IP4_B"
perf_clean "traffic under 5 % loss, traced" "$PAIR_CLIENT_OUT" 1 100 0
pp ip netns exec "$NS_A" tc qdisc del dev "$IF_A" root
try "$srdqp" -c 5 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_srd_qp case 5"
sleep 1		# the last ACKs
echo 0 >"$T/events/rdma_srd/enable"
trc=$(mktemp /tmp/srd_trace.XXXXXX)
cp "$T/trace" "$trc"
if grep -q "overrun: [1-9]" "$T"/per_cpu/cpu*/stats; then
	rm -f "$trc"
	fail "the trace buffer overran: counts cannot be compared"
fi
declare -A delta
for c in $CTRS; do delta[$c]=$(($(total "$c") - before[$c])); done
echo "counters moved: $(for c in $CTRS; do printf '%s=%s ' "$c" "${delta[$c]}"; done)"
echo "first events:"
grep ' srd_' "$trc" | head -5
ev() { grep -c " $1: " "$trc"; }
for e in srd_data_tx srd_ack_rx srd_nak_rx srd_nak_tx srd_rto srd_path srd_msg_error; do
	echo "  $e: $(ev $e)"
done
for e in srd_data_tx srd_ack_rx srd_nak_rx srd_nak_tx srd_msg_error; do
	[ "$(ev $e)" -gt 0 ] || fail "no $e event"
done
echo "ok: every event kind the run made is there"
retx=$(awk -v np="$n_paths" '
	/ srd_data_tx: / {
		for (i = 1; i <= NF; i++) { if ($i == "path") p = $(i + 1); if ($i == "why") w = $(i + 1) }
		if (p + 0 >= np || w !~ /^(new|rto|sack|tlp)$/) { print "bad: " $0 > "/dev/stderr"; bad++ }
		if (w != "new") retx++
	}
	/ srd_nak_(rx|tx): / && !/reason (RNR|BAD_QPN|BAD_QKEY|BAD_LENGTH|REMOTE_ABORT|REMOTE_ACCESS)$/ {
		print "bad: " $0 > "/dev/stderr"; bad++
	}
	# A status by its name (SRD_COMP_STATUSES in the engine), never a number.
	/ srd_msg_error: / && !/ status [A-Z][A-Z_]*$/ {
		print "bad: " $0 > "/dev/stderr"; bad++
	}
	END { print retx + 0; exit bad > 0 }' "$trc") || fail "events with fields out of range"
echo "ok: every field in range"
expect_eq "srd_data_tx events, DATA packets sent" "${delta[srd_tx_data_pkts]}" "$(ev srd_data_tx)"
expect_eq "retransmissions traced, counted" "${delta[srd_retransmits]}" "$retx"
[ "$retx" -gt 0 ] || fail "no retransmission under 5 % loss"
expect_eq "srd_ack_rx events, ACKs received" "${delta[srd_acks_received]}" "$(ev srd_ack_rx)"
expect_eq "srd_rto events, RTOs" "${delta[srd_rto_expired]}" "$(ev srd_rto)"
expect_eq "srd_nak_tx events, NAKs sent" "${delta[srd_naks_sent]}" "$(ev srd_nak_tx)"
expect_eq "srd_nak_rx events, NAKs received" "${delta[srd_naks_received]}" "$(ev srd_nak_rx)"
expect_eq "srd_msg_error events, failed messages" "${delta[srd_msgs_failed]}" "$(ev srd_msg_error)"
avoided=$(grep -c ' srd_path: .* state avoided' "$trc")
[ "$avoided" -ge "${delta[srd_path_switches]}" ] ||
	fail "$avoided paths traced avoided, ${delta[srd_path_switches]} switches counted"
rm -f "$trc"

# b restarts: a's next sends meet the new incarnation, and a traces it.
r0=$(hw_counter "$DEV_A" srd_peer_restarts)
echo >"$T/trace"
set_param "$T/events/rdma_srd/srd_peer_restart/enable" 1
pp rdma link del "$DEV_B"
pp ip netns exec "$NS_B" rdma link add "$DEV_B" type srd netdev "$IF_B"
wait_for "$DEV_B has the GID of $IP4_B" 30 has_gid "$DEV_B" "$(gid_of_ipv4 $IP4_B)"
wait_for "$DEV_B ACTIVE" 10 port_active "$DEV_B"
# (-e: the sends in flight when a learns of the restart fail PEER_RESTARTED)
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -e -s 4096 -n 20 "$IP4_B"
echo 0 >"$T/events/rdma_srd/srd_peer_restart/enable"
grep ' srd_peer_restart: ' "$T/trace"
expect_eq "srd_peer_restart events, a's restarts" \
	"$(($(hw_counter "$DEV_A" srd_peer_restarts) - r0))" "$(grep -c ' srd_peer_restart: ' "$T/trace")"
[ "$(($(hw_counter "$DEV_A" srd_peer_restarts) - r0))" -ge 1 ] || fail "a saw no restart"
echo >"$T/trace"
echo "${buf0%% *}" >"$T/buffer_size_kb"
dmesg_clean "trace events"
exit $KSFT_PASS
