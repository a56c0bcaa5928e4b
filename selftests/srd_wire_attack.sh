#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The attacks of docs/protocol.md's threat model, as an attacker would make
# them (srd_forge.py's blind modes), while a and b carry SRD traffic:
#  1. an unprivileged user on a's host sends b 200 HELLOs from a's address
#     over 8 s (restart claims, and random tags): no peer restarts on
#     either side, every message of the traffic delivered once and intact,
#     no error completion; b counted the HELLOs;
#  2. a third host m learns b's tag for m's own address (a HELLO), then the
#     unprivileged user on a sends 4 DATA from a's address with that tag and
#     msg_base 2^30 ahead: b refuses them (srd_rx_drop_stale_tag), and
#     the traffic that follows is delivered in full, nothing reported
#     successful that b did not receive;
#  3. m sends a HELLO and a DATA from each of 1100 IPv6 addresses of its
#     own: b keeps no state (srd_peers does not move, srd_stateless_replies
#     does), and a new peer's traffic works afterwards;
#  4. an IPv4 HELLO with UDP checksum 0 is dropped (rx_drop_bad_hdr) and not
#     answered, where the same HELLO checksummed is;
#  5. one lucky guess (issue 46, M1): the unprivileged user on a sends b one
#     HELLO from a's address naming b's tag for a (read from debugfs here,
#     about 2^31 tries for an attacker) with a random src_tag: b believes no
#     restart, challenges the claim at a's address (srd_restart_challenges),
#     and traffic flows both ways.  Before the challenge, b took it as a's
#     restart and the two devices were cut off until one was re-created.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv
require_forge
srd_tool srd_perf >/dev/null
unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
port=$(cat /sys/module/rdma_srd/parameters/udp_port) ||
	fail "rdma_srd has no udp_port parameter"

two_hosts swa
third_host swa

# forge NS [setpriv...] ARGS...: srd_forge.py in NS; its RESULT line in
# FORGE_OUT (fails unless ok=1).
forge() {
	local ns=$1
	shift
	echo "+ ip netns exec $ns srd_forge.py $*"
	FORGE_OUT=$(ip netns exec "$ns" "$@" 2>&1)
	echo "$FORGE_OUT"
	[[ "$FORGE_OUT" == *"RESULT "*" ok=1"* ]] || fail "srd_forge $*: no ok=1"
}
# traffic WHAT SRD_PERF_ARGS...: SRD sends a to b, checked by perf_clean
# (no error completion, nothing corrupt, duplicate or missing).
traffic() {
	local what=$1
	shift
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 "$@" "$IP4_B"
	perf_clean "$what" "$PAIR_CLIENT_OUT" 1 "" 0
}

dmesg_mark
traffic "first contact" -s 4096 -n 200

# 1. Forged HELLOs from a's address, by an unprivileged user, under load.
r_a=$(hw_counter "$DEV_A" srd_peer_restarts) r_b=$(hw_counter "$DEV_B" srd_peer_restarts)
h_b=$(hw_counter "$DEV_B" srd_hellos_received) s_b=$(hw_counter "$DEV_B" srd_rx_drop_stale_tag)
echo "+ (unprivileged, in $NS_A) srd_forge.py --src $IP4_A $IP4_B hello-flood 200 8 &"
bg_start ip netns exec "$NS_A" "${unpriv[@]}" "$PY" "$forge" --src "$IP4_A" \
	"$IP4_B" hello-flood 200 8
flood=$!
traffic "traffic under 200 forged HELLOs" -s 65536 -q 2 -T 5
wait "$flood" || fail "the HELLO flood failed"
expect_eq "b's peer restarts" "$r_b" "$(hw_counter "$DEV_B" srd_peer_restarts)"
expect_eq "a's peer restarts" "$r_a" "$(hw_counter "$DEV_A" srd_peer_restarts)"
hellos=$(($(hw_counter "$DEV_B" srd_hellos_received) - h_b))
stale=$(($(hw_counter "$DEV_B" srd_rx_drop_stale_tag) - s_b))
[ "$hellos" -ge 100 ] && [ "$stale" -ge 100 ] ||
	fail "b counted $hellos HELLOs and $stale stale packets, expected >= 100 of each"
echo "ok: b took 100 forged restart claims ($hellos HELLOs) and refused 100 wrong tags ($stale), no restart"
# softsrd 0.1's name of the counter reads the same, on the device only.
expect_eq "srd_rx_drop_stale_epoch (0.1's name)" "$(hw_counter "$DEV_B" srd_rx_drop_stale_tag)" \
	"$(hw_counter "$DEV_B" srd_rx_drop_stale_epoch)"
[ ! -e "/sys/class/infiniband/$DEV_B/ports/1/hw_counters/srd_rx_drop_stale_epoch" ] ||
	fail "the old name is shown for the port too"

# 2. m learns b's tag for m; a's unprivileged user slides with it.
forge "$NS_M" "$PY" "$forge" --src $IP4_M "$IP4_B" hello
tag=$(sed -n 's/.*RESULT.* remote_tag=\(0x[0-9a-f]*\).*/\1/p' <<<"$FORGE_OUT")
[ -n "$tag" ] || fail "no tag learned from b"
s_b=$(hw_counter "$DEV_B" srd_rx_drop_stale_tag) d_b=$(hw_counter "$DEV_B" srd_msgs_delivered)
forge "$NS_A" "${unpriv[@]}" "$PY" "$forge" --src "$IP4_A" "$IP4_B" slide 4 "$tag"
wait_for "b refused the 4 forged DATA" 10 bash -c \
	"[ \$(cat /sys/class/infiniband/$DEV_B/hw_counters/srd_rx_drop_stale_tag) -ge $((s_b + 4)) ]"
traffic "traffic after the forged slide" -s 4096 -n 500
[ "$PERF_MSGS" -eq 500 ] || fail "expected 500 messages, saw $PERF_MSGS"
got=$(($(hw_counter "$DEV_B" srd_msgs_delivered) - d_b))
[ "$got" -ge 500 ] || fail "a's sends completed OK, but b delivered $got of 500"
echo "ok: 500 sent, $got delivered by b"

# 3. 1100 sources of m's own: no state on b.
p_b=$(hw_counter "$DEV_B" srd_peers) st_b=$(hw_counter "$DEV_B" srd_stateless_replies)
m_addresses 1100
forge "$NS_M" "$PY" "$forge" --src "$IP6_M" "$IP6_B" sources 1100 fd00:203::
sleep 1
expect_eq "b's peers after 1100 sources" "$p_b" "$(hw_counter "$DEV_B" srd_peers)"
got=$(($(hw_counter "$DEV_B" srd_stateless_replies) - st_b))
[ "$got" -gt 0 ] || fail "b answered none of the 1100 sources statelessly"
echo "ok: b answered $got of 2200 packets without keeping state"
# A new peer: a's IPv6 address.
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -g "$GIDX6_B" -W 30 -- -d "$DEV_A" \
	-g "$GIDX6_A" -W 30 -s 4096 -n 200 "$IP4_B"
perf_clean "a new peer after the 1100 sources" "$PAIR_CLIENT_OUT" 1 200 0
expect_eq "b's peers: one more" "$((p_b + 1))" "$(hw_counter "$DEV_B" srd_peers)"

# 4. UDP checksum 0 over IPv4: the control first, checksummed.
h_b=$(hw_counter "$DEV_B" srd_hellos_received) bad=$(hw_counter "$DEV_B" rx_drop_bad_hdr)
forge "$NS_A" "$PY" "$forge" --src "$IP4_A" "$IP4_B" hello-flood 1 0
wait_for "b counted the checksummed HELLO" 10 bash -c \
	"[ \$(cat /sys/class/infiniband/$DEV_B/hw_counters/srd_hellos_received) -gt $h_b ]"
h_b=$(hw_counter "$DEV_B" srd_hellos_received)
forge "$NS_A" "$PY" "$forge" --src "$IP4_A" "$IP4_B" zero-csum
wait_for "b dropped the zero-checksum HELLO" 10 bash -c \
	"[ \$(cat /sys/class/infiniband/$DEV_B/hw_counters/rx_drop_bad_hdr) -gt $bad ]"
expect_eq "HELLOs b took after the zero-checksum one" "$h_b" \
	"$(hw_counter "$DEV_B" srd_hellos_received)"

# 5. One lucky guess of b's tag for a.
debugfs_mount
hex=$(printf '%02x%02x:%02x%02x' ${IP4_A//./ })
tag=$(srd_paths "$DEV_B" | awk -v a="ffff:$hex\$" \
	'$1 == "peer" && $2 ~ a && $5 == "tag" { print "0x" $6; exit }')
[ -n "$tag" ] || fail "no peer of b for $IP4_A in debugfs"
r_a=$(hw_counter "$DEV_A" srd_peer_restarts) r_b=$(hw_counter "$DEV_B" srd_peer_restarts)
c_b=$(hw_counter "$DEV_B" srd_restart_challenges)
forge "$NS_A" "${unpriv[@]}" "$PY" "$forge" --src "$IP4_A" "$IP4_B" claim 1 "$tag"
sleep 1
expect_eq "b's peer restarts after the guessed claim" "$r_b" \
	"$(hw_counter "$DEV_B" srd_peer_restarts)"
traffic "a to b after one guessed claim" -s 4096 -n 200
perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -W 30 -- -d "$DEV_B" -W 30 -s 4096 -n 200 "$IP4_A"
perf_clean "b to a after one guessed claim" "$PAIR_CLIENT_OUT" 1 200 0
expect_eq "b's peer restarts after the traffic" "$r_b" "$(hw_counter "$DEV_B" srd_peer_restarts)"
expect_eq "a's peer restarts after the traffic" "$r_a" "$(hw_counter "$DEV_A" srd_peer_restarts)"
got=$(($(hw_counter "$DEV_B" srd_restart_challenges) - c_b))
[ "$got" -ge 1 ] || fail "b did not challenge the claim"
echo "ok: b challenged the guessed claim ($got challenges), no restart, traffic both ways"

srd_counters "$DEV_A" "$DEV_B"
dmesg_clean "wire attacks"
exit $KSFT_PASS
