#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# softsrd's UDP port belongs to softsrd in every namespace, from the
# module's load or the namespace's creation, device or not (issue 46):
#  1. an unprivileged squatter (uid 65534) in a namespace with no srd
#     device yet (made after the module's load) tries every bind of the
#     port (wildcard, the host's addresses, IPv6 with and without
#     IPV6_V6ONLY, SO_REUSEADDR, SO_REUSEPORT): all are refused;
#  2. while it waits, the devices are made there and in its peer's
#     namespace, traffic flows both families, and the squatter receives
#     nothing;
#  3. the same in init_net, in a namespace that never has a device, and
#     between "rdma link del" and "rdma link add" while the peer still
#     sends;
#  4. a re-made device renews its tags: b's tag for a, which anyone at a's
#     address can learn, changes, and a packet naming the old one is
#     dropped as stale, not taken for a restart.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_forge
require_cmd setpriv
bin=$(srd_bin srd_traffic)
srd_tool srd_perf >/dev/null
squat=$SRD_TOP/selftests/srd_squat.py
port=$(cat /sys/module/rdma_srd/parameters/udp_port) ||
	fail "rdma_srd has no udp_port parameter"
tmp=$(mktemp -d /tmp/srd_port_squat.XXXXXX)
defer rm -rf "$tmp"

# squat_start NS TAG SECONDS IP4 IP6: the unprivileged squatter in NS (""
# for init_net), in the background, once it holds what it could bind;
# fails if it bound anything.  Its output is $tmp/TAG.
squat_start() {
	local ns=$1 tag=$2 t0=$SECONDS
	local -a in_ns=()
	[ -z "$ns" ] || in_ns=(ip netns exec "$ns")
	echo "+ ${in_ns[*]} setpriv --reuid=65534 srd_squat.py squat $port $3 $4 $5 &"
	bg_start "${in_ns[@]}" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PY" "$squat" squat "$port" "$3" "$4" "$5" >"$tmp/$tag" 2>&1
	SQUATTER=$!
	until grep -q "^holding" "$tmp/$tag"; do
		kill -0 "$SQUATTER" 2>/dev/null || { cat "$tmp/$tag"; fail "the squatter died"; }
		[ $((SECONDS - t0)) -lt 60 ] || fail "the squatter did not start"
		sleep 0.1
	done
	sed 's/^/# /' "$tmp/$tag"
	grep -q "^bound" "$tmp/$tag" &&
		fail "$tag: uid 65534 bound UDP port $port: $(grep -c '^bound' "$tmp/$tag") ways"
	expect_eq "$tag: binds refused" 20 "$(grep -c '^refused .*Address already in use' "$tmp/$tag")"
}

# squat_end TAG: the squatter has ended and received nothing.
squat_end() {
	wait "$SQUATTER"
	grep -q "^received" "$tmp/$1" || { cat "$tmp/$1"; fail "$1: the squatter did not finish"; }
	expect_eq "$1: datagrams the squatter received" "received 0" "$(grep '^received' "$tmp/$1")"
}

# traffic [ba]: UD datagrams both families, a to b and b to a, and 100 SRD
# sends each way, a to b first (b to a first with "ba": a device just made
# again must speak first, or the other's first send to it ends
# PEER_RESTARTED); the receivers count them (they did receive what the
# squatter could have).
traffic() {
	local ra rb sa sb
	ra=$(hw_counter "$DEV_A" rx_packets) rb=$(hw_counter "$DEV_B" rx_packets)
	sa=$(hw_counter "$DEV_A" srd_rx_data_pkts) sb=$(hw_counter "$DEV_B" srd_rx_data_pkts)
	try "$bin" -c 30 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "IPv4 UD traffic a to b"
	try "$bin" -c 30 "$DEV_B" "$IP6_B" "$DEV_A" "$IP6_A" || fail "IPv6 UD traffic b to a"
	[ "${1:-}" = ba ] && srd_ba
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 4096 -n 100 "$IP4_B"
	perf_clean "SRD a to b" "$PAIR_CLIENT_OUT" 1 100 0
	[ "${1:-}" = ba ] || srd_ba
	expect_grew "UD traffic" "$DEV_A" rx_packets "$ra"
	expect_grew "UD traffic" "$DEV_B" rx_packets "$rb"
	expect_grew "SRD traffic" "$DEV_A" srd_rx_data_pkts "$sa"
	expect_grew "SRD traffic" "$DEV_B" srd_rx_data_pkts "$sb"
}
srd_ba() {
	perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -W 30 -- -d "$DEV_B" -W 30 -s 4096 -n 100 "$IP4_A"
	perf_clean "SRD b to a" "$PAIR_CLIENT_OUT" 1 100 0
}

dmesg_mark

# 1-2. The two hosts, their devices made while the squatter waits in a.
TWO_HOSTS_NO_DEVICES=1 two_hosts psq
squat_start "$NS_A" "before the device" 30 "$IP4_A" "$IP6_A"
two_hosts_add_devices
traffic
squat_end "before the device"

# 3. init_net (older than the module? then its port was bound at load)
# and a namespace that never has a device.
squat_start "" "init_net" 1 127.0.0.1 ::1
squat_end "init_net"
new_netns psq_c
pp ip -n psq_c addr add 10.209.0.1/24 dev lo
squat_start psq_c "no device" 1 10.209.0.1 ::1
squat_end "no device"

# ... and between "rdma link del" and "rdma link add", while b still
# sends to a's port: HELLOs from a's address (sent from another port)
# make b answer there; the squatter gets none of the answers.
try rdma link del "$DEV_A" || fail "rdma link del $DEV_A"
srd_link_gone "$DEV_A" || fail "$DEV_A still there after rdma link del"
squat_start "$NS_A" "between del and add" 6 "$IP4_A" "$IP6_A"
hs=$(hw_counter "$DEV_B" srd_hellos_sent)
echo "+ ip netns exec $NS_A srd_forge.py --src $IP4_A $IP4_B hello-flood 20 1"
out=$(ip netns exec "$NS_A" "$PY" "$forge" --src "$IP4_A" --port "$port" "$IP4_B" \
	hello-flood 20 1 2>&1)
echo "$out"
[[ "$out" == *"RESULT mode=hello-flood ok=1"* ]] || fail "srd_forge hello-flood failed"
expect_grew "b answers a's address" "$DEV_B" srd_hellos_sent "$hs"
squat_end "between del and add"
pp ip netns exec "$NS_A" rdma link add "$DEV_A" type srd netdev "$IF_A"
wait_for "$DEV_A has the GID of $IP4_A" 10 has_gid "$DEV_A" "$(gid_of_ipv4 "$IP4_A")"
wait_for "$DEV_A has the GID of $IP6_A" 10 has_gid "$DEV_A" "$(gid_of_ipv6 "$IP6_A")"
traffic

# 4. b's tag for a, as anyone at a's address learns it (a HELLO's answer,
# read by srd_forge.py), before and after b is re-made.
tag_of() {
	local out
	echo "+ ip netns exec $NS_A srd_forge.py --src $IP4_A $IP4_B hello"
	out=$(ip netns exec "$NS_A" "$PY" "$forge" --src "$IP4_A" --port "$port" "$IP4_B" hello 2>&1)
	echo "$out"
	[[ "$out" =~ RESULT\ mode=hello\ ok=1\ .*remote_tag=(0x[0-9a-f]+) ]] ||
		fail "srd_forge hello: no tag from b"
	TAG=${BASH_REMATCH[1]}
}
tag_of
old=$TAG
echo "b's tag for a: $old"
try rdma link del "$DEV_B" || fail "rdma link del $DEV_B"
srd_link_gone "$DEV_B" || fail "$DEV_B still there after rdma link del"
pp ip netns exec "$NS_B" rdma link add "$DEV_B" type srd netdev "$IF_B"
wait_for "$DEV_B has the GID of $IP4_B" 10 has_gid "$DEV_B" "$(gid_of_ipv4 "$IP4_B")"
wait_for "$DEV_B has the GID of $IP6_B" 10 has_gid "$DEV_B" "$(gid_of_ipv6 "$IP6_B")"
tag_of
new=$TAG
echo "b's tag for a after b was re-made: $new"
[ "$new" != "$old" ] || fail "b's re-made device kept its tag for a ($old)"
echo "ok: the re-made device renewed its tag ($old -> $new)"
# A packet from a's address naming the old tag, with a fresh src_tag.
st=$(hw_counter "$DEV_B" srd_rx_drop_stale_tag) rs=$(hw_counter "$DEV_B" srd_peer_restarts)
echo "+ ip netns exec $NS_A srd_forge.py --src $IP4_A $IP4_B slide 20 $old"
out=$(ip netns exec "$NS_A" "$PY" "$forge" --src "$IP4_A" --port "$port" "$IP4_B" slide 20 "$old" 2>&1)
echo "$out"
[[ "$out" == *"RESULT mode=slide ok=1"* ]] || fail "srd_forge slide failed"
expect_grew "packets naming the old tag" "$DEV_B" srd_rx_drop_stale_tag "$st"
expect_eq "b's peer restarts after them" "$rs" "$(hw_counter "$DEV_B" srd_peer_restarts)"
traffic ba

dmesg_clean srd_port_squat
exit $KSFT_PASS
