#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# b's peer table (SRD_MAX_PEERS, 1024) filled by a host of 1100 addresses
# of its own, each making the honest handshake (so each gets a peer):
#  - the table stops at 1024 peers; later remotes are refused
#    (srd_rx_drop_no_peer), kept nothing for;
#  - b's peers that were there carry on: a's traffic to b is clean;
#  - a send from b to a new destination fails that work request
#    (IBV_WC_RESP_TIMEOUT_ERR, vendor_err 18 UNRESP_REMOTE), not the QP:
#    every one of them completes so, none flushed;
#  - once the filler's peers have been idle for peer_idle_s (kept at an
#    hour while the table fills, however slow the kernel, then lowered to
#    its least, 5 s, under which the retry budget's floor, 11 s at the
#    defaults, holds), the next new destination evicts one
#    (srd_peers_evicted) and works.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_forge
srd_tool srd_perf >/dev/null
port=$(cat /sys/module/rdma_srd/parameters/udp_port) ||
	fail "rdma_srd has no udp_port parameter"

two_hosts spt
third_host spt
idle_param=/sys/module/rdma_srd/parameters/peer_idle_s
[ -r "$idle_param" ] || fail "rdma_srd has no peer_idle_s parameter"
set_param "$idle_param" 3600
# The filler's addresses are all of one /64: let that prefix fill the
# table (srd_peer_prefix.sh tests its share).
set_param /sys/module/rdma_srd/parameters/peers_per_prefix 1024

dmesg_mark
# b knows a (IPv4) before the table fills.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 4096 -n 100 "$IP4_B"
perf_clean "a to b before" "$PAIR_CLIENT_OUT" 1 100 0
p0=$(hw_counter "$DEV_B" srd_peers) np0=$(hw_counter "$DEV_B" srd_rx_drop_no_peer)
expect_eq "b's peers before" 1 "$p0"

m_addresses 1100
echo "+ ip netns exec $NS_M srd_forge.py --src $IP6_M $IP6_B peers 1100 fd00:203::"
out=$(ip netns exec "$NS_M" "$PY" "$forge" --src "$IP6_M" "$IP6_B" peers 1100 fd00:203:: 2>&1)
echo "$out"
[[ "$out" == *"RESULT mode=peers ok=1"* ]] || fail "the filler's handshakes were not all answered"
sleep 1
expect_eq "b's peers: the table is full" 1024 "$(hw_counter "$DEV_B" srd_peers)"
refused=$(($(hw_counter "$DEV_B" srd_rx_drop_no_peer) - np0))
[ "$refused" -ge $((1100 - 1023)) ] ||
	fail "b refused $refused remotes for want of room, expected >= $((1100 - 1023))"
echo "ok: b refused $refused remotes for want of room"

# Old peers carry on.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 4096 -n 200 "$IP4_B"
perf_clean "a to b with the table full" "$PAIR_CLIENT_OUT" 1 200 0

# b to a new destination (a's IPv6 GID): each send fails, the QP does not.
perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -g "$GIDX6_A" -W 30 -- -d "$DEV_B" \
	-g "$GIDX6_B" -W 30 -e -s 4096 -n 20 -D 4 "$IP4_A"
verrs=$(sed -n 's/.*error completion: .*(vendor_err \([0-9]*\)).*/\1/p' <<<"$PAIR_CLIENT_OUT" |
	sort -nu | tr '\n' ' ')
expect_eq "vendor_err of b's sends to a new destination" "18 " "$verrs"
errs=$(perf_sum errors "$PAIR_CLIENT_OUT")
[ "$errs" -ge 20 ] || fail "expected >= 20 error completions, saw $errs"
echo "ok: $errs sends failed UNRESP_REMOTE, none flushed: the QP stayed usable"

# Eviction once the filler's peers are idle.
expect_eq "peers evicted with peer_idle_s at an hour" 0 "$(hw_counter "$DEV_B" srd_peers_evicted)"
echo "+ echo 5 > $idle_param; sleep 12"
echo 5 >"$idle_param"
sleep 12
e0=$(hw_counter "$DEV_B" srd_peers_evicted)
perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -g "$GIDX6_A" -W 30 -- -d "$DEV_B" \
	-g "$GIDX6_B" -W 30 -s 4096 -n 200 "$IP4_A"
perf_clean "b to a new destination after 12 s idle" "$PAIR_CLIENT_OUT" 1 200 0
ev=$(($(hw_counter "$DEV_B" srd_peers_evicted) - e0))
[ "$ev" -ge 1 ] || fail "no peer was evicted"
echo "ok: $ev idle peers evicted to make room"

srd_counters "$DEV_A" "$DEV_B"
dmesg_clean "peer table full"
exit $KSFT_PASS
