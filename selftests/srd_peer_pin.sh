#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A user cannot pin b's peer table with dead destinations (issue 46, M3):
# uid 65534 posts one SRD send from b to each of 1023 addresses that never
# answer (a dummy interface's subnet), which with b's peer for a fills the
# table (1024); every such send fails UNRESP_REMOTE (vendor_err 18).  With
# peer_idle_s at an hour, b's next send to a new destination (a's IPv6
# GID) must still work at once: a peer whose remote never answered
# delivered nothing, and is evicted as soon as it is idle
# (srd_peers_evicted), without waiting for peer_idle_s.  Then the table,
# full of peers that cannot go, is scanned in vain at most ten times a
# second however many new remotes knock (srd_peer_evict_misses; issue 46,
# M4).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_forge
require_cmd setpriv
pin=$(srd_bin srd_peer_pin)
srd_tool srd_perf >/dev/null

two_hosts spn
third_host spn
idle_param=/sys/module/rdma_srd/parameters/peer_idle_s
[ -r "$idle_param" ] || fail "rdma_srd has no peer_idle_s parameter"
set_param "$idle_param" 3600
# The honest remotes below are all of one /64: let that prefix fill the
# table (srd_peer_prefix.sh tests its share).
set_param /sys/module/rdma_srd/parameters/peers_per_prefix 1024
ulimit -l unlimited
# b's peers in the table: created (srd_peers) less evicted.
live() {
	echo $(($(hw_counter "$DEV_B" srd_peers) - $(hw_counter "$DEV_B" srd_peers_evicted)))
}

dmesg_mark
# b knows a (IPv4) before the table fills.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 4096 -n 100 "$IP4_B"
perf_clean "a to b before" "$PAIR_CLIENT_OUT" 1 100 0
expect_eq "b's peers before" 1 "$(live)"

# 198.18.0.0/21 on a dummy interface of b's namespace: routed, silent.
pp ip -n "$NS_B" link add spnd0 type dummy
pp ip -n "$NS_B" link set spnd0 up
pp ip -n "$NS_B" addr add 198.18.0.1/21 dev spnd0
echo "+ setpriv --reuid=65534 ... srd_peer_pin $DEV_B $IP4_B 198.18.0.2 1023"
out=$(timeout -k 5 300 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$pin" "$DEV_B" "$IP4_B" 198.18.0.2 1023 2>&1)
echo "$out"
expect_match "uid 65534's sends to dead destinations" \
	"pinned 1023: 1023 failed unresp, 0 other" "$out"
expect_eq "b's peers: the table is full" 1024 "$(live)"
expect_eq "peers evicted so far" 0 "$(hw_counter "$DEV_B" srd_peers_evicted)"

# b to a new destination, at once: an unanswered peer gives way.
perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -g "$GIDX6_A" -W 30 -- -d "$DEV_B" \
	-g "$GIDX6_B" -W 30 -s 4096 -n 200 "$IP4_A"
perf_clean "b to a new destination, peer_idle_s at an hour" "$PAIR_CLIENT_OUT" 1 200 0
ev=$(hw_counter "$DEV_B" srd_peers_evicted)
[ "$ev" -ge 1 ] || fail "no unanswered peer was evicted"
echo "ok: $ev unanswered peers evicted to make room"
# Old peers carry on.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 4096 -n 100 "$IP4_B"
perf_clean "a to b with the table full" "$PAIR_CLIENT_OUT" 1 100 0

# Fill what the dead destinations left with honest remotes, idle less
# than an hour: nothing can go.  Then more remotes knock.
m_addresses 1100
s0=$(hw_counter "$DEV_B" srd_peer_evict_misses) np0=$(hw_counter "$DEV_B" srd_rx_drop_no_peer)
t0=$(date +%s%N)
echo "+ ip netns exec $NS_M srd_forge.py --src $IP6_M $IP6_B peers 1100 fd00:203::"
out=$(ip netns exec "$NS_M" "$PY" "$forge" --src "$IP6_M" "$IP6_B" peers 1100 fd00:203:: 2>&1)
echo "$out"
ms=$((($(date +%s%N) - t0) / 1000000))
expect_eq "b's peers: the table is full of answered peers" 1024 "$(live)"
refused=$(($(hw_counter "$DEV_B" srd_rx_drop_no_peer) - np0))
scans=$(($(hw_counter "$DEV_B" srd_peer_evict_misses) - s0))
echo "# $refused remotes refused, $scans scans of the table in vain, in $ms ms"
[ "$refused" -ge 50 ] || fail "only $refused remotes were refused for want of room"
[ "$scans" -ge 1 ] || fail "the full table was never scanned in vain"
[ "$scans" -le $((ms / 100 + 2)) ] ||
	fail "$scans scans in $ms ms: more than one per 100 ms"
echo "ok: $scans scans in vain for $refused refused remotes in $ms ms (at most one per 100 ms)"

srd_counters "$DEV_B"
dmesg_clean "peer table pinned"
exit $KSFT_PASS
