#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# One party's address prefix cannot hold b's peer table (issue 46, M3):
# with peers_per_prefix at 16, a host making the honest handshake from 40
# addresses of one IPv6 /64 (each proving it receives there) gets 16
# peers, the rest refused (srd_rx_drop_no_peer) with the table far from
# full; the same host from another /64 still gets one, and so does a's
# IPv6 address, whose traffic to b is clean.  Once the prefix's peers
# have been idle for peer_idle_s (5, under which the retry budget's floor,
# 11 s, holds), a 41st address of the full prefix gets a peer by evicting
# one of the prefix's own (srd_peers_evicted), none of the others'.  And
# peers_per_prefix refuses values outside 1..1024.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_forge
srd_tool srd_perf >/dev/null

two_hosts spq
third_host spq
idle_param=/sys/module/rdma_srd/parameters/peer_idle_s
quota_param=/sys/module/rdma_srd/parameters/peers_per_prefix
[ -r "$quota_param" ] || fail "rdma_srd has no peers_per_prefix parameter"
expect_eq "peers_per_prefix by default" 512 "$(cat "$quota_param")"
for bad in 0 1025 -1 x; do
	expect_fail_with "peers_per_prefix = $bad refused" "Invalid argument" \
		bash -c "echo $bad > $quota_param"
done
expect_eq "peers_per_prefix after the refused writes" 512 "$(cat "$quota_param")"
set_param "$idle_param" 3600
set_param "$quota_param" 16

# made: b's peers created since the start; live: those still in the table.
made() { echo $(($(hw_counter "$DEV_B" srd_peers) - p0)); }
live() { echo $(($(hw_counter "$DEV_B" srd_peers) - $(hw_counter "$DEV_B" srd_peers_evicted))); }
refused() { echo $(($(hw_counter "$DEV_B" srd_rx_drop_no_peer) - np0)); }
# handshakes N PREFIX: the honest handshake from PREFIX + 1 .. PREFIX + N.
handshakes() {
	local out
	echo "+ ip netns exec $NS_M srd_forge.py --src $IP6_M $IP6_B peers $1 $2"
	out=$(ip netns exec "$NS_M" "$PY" "$forge" --src "$IP6_M" "$IP6_B" peers "$1" "$2" 2>&1)
	echo "$out"
	[[ "$out" == *"RESULT mode=peers ok=1"* ]] || fail "b did not answer every handshake"
	sleep 1
}

dmesg_mark
p0=$(hw_counter "$DEV_B" srd_peers) np0=$(hw_counter "$DEV_B" srd_rx_drop_no_peer)
m_addresses 41
handshakes 40 fd00:203::
expect_eq "peers made by fd00:203::/64's 40 addresses" 16 "$(made)"
[ "$(refused)" -ge 24 ] || fail "b refused $(refused) of the prefix's remotes, expected >= 24"
echo "ok: the prefix's share is full with $(live) peers in the table: b refused $(refused) remotes"

# Another /64: m's own address, fd00:202::1.
handshakes 1 fd00:202::
expect_eq "peers made, with fd00:202::1's" 17 "$(made)"
# a, by its IPv6 address: a third prefix, and real traffic.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -g "$GIDX6_B" -W 30 -- -d "$DEV_A" \
	-g "$GIDX6_A" -W 30 -s 4096 -n 200 "$IP4_B"
perf_clean "a to b by IPv6 with fd00:203::/64 at its quota" "$PAIR_CLIENT_OUT" 1 200 0
expect_eq "peers made, with a's" 18 "$(made)"

# The prefix makes room among its own once they are idle.
expect_eq "peers evicted with peer_idle_s at an hour" 0 "$(hw_counter "$DEV_B" srd_peers_evicted)"
r0=$(refused)
handshakes 1 fd00:203::28
expect_eq "peers made by fd00:203::29 with peer_idle_s at an hour" 18 "$(made)"
[ "$(refused)" -gt "$r0" ] || fail "fd00:203::29 was neither given a peer nor refused"
echo "+ echo 5 > $idle_param; sleep 12"
echo 5 >"$idle_param"
sleep 12
handshakes 1 fd00:203::28
expect_eq "peers made by fd00:203::29 once the prefix's are idle" 19 "$(made)"
expect_eq "peers evicted to make room in the prefix" 1 "$(hw_counter "$DEV_B" srd_peers_evicted)"
expect_eq "peers in the table" "$((p0 + 18))" "$(live)"
# a's peers were not the ones to go: its traffic is clean, with no new peer.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -g "$GIDX6_B" -W 30 -- -d "$DEV_A" \
	-g "$GIDX6_A" -W 30 -s 4096 -n 100 "$IP4_B"
perf_clean "a to b by IPv6 after the eviction" "$PAIR_CLIENT_OUT" 1 100 0
expect_eq "peers made after a's second run" 19 "$(made)"

srd_counters "$DEV_A" "$DEV_B"
dmesg_clean "a prefix at its quota"
exit $KSFT_PASS
