#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# softsrd sends by the routing table of its netdev's namespace, as a UDP
# tunnel does, not straight out of the bound netdev: UD traffic between two
# hosts crosses two routers joined by four equal-cost links
# (a - r1 =4= r2 - b, L4 multipath hashing), and flows with different
# source ports take different links.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_traffic)

NLINKS=4
FLOWS=8
MSGS=50

new_netns rt_a
new_netns rt_r1
new_netns rt_r2
new_netns rt_b
pp ip -n rt_a link add va type veth peer name r1a netns rt_r1
pp ip -n rt_b link add vb type veth peer name r2b netns rt_r2
pp ip -n rt_a addr add 10.1.0.1/24 dev va
pp ip -n rt_r1 addr add 10.1.0.254/24 dev r1a
pp ip -n rt_b addr add 10.3.0.2/24 dev vb
pp ip -n rt_r2 addr add 10.3.0.254/24 dev r2b
nh1=() nh2=()
for i in $(seq 0 $((NLINKS - 1))); do
	pp ip -n rt_r1 link add "p$i" type veth peer name "q$i" netns rt_r2
	pp ip -n rt_r1 addr add "10.2.$i.1/24" dev "p$i"
	pp ip -n rt_r2 addr add "10.2.$i.2/24" dev "q$i"
	pp ip -n rt_r1 link set "p$i" up
	pp ip -n rt_r2 link set "q$i" up
	nh1+=(nexthop via "10.2.$i.2")
	nh2+=(nexthop via "10.2.$i.1")
done
for ns in rt_a rt_r1 rt_r2 rt_b; do
	for l in $(ip -n $ns -o link show | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
		pp ip -n $ns link set "$l" up
	done
done
for r in rt_r1 rt_r2; do
	pp ip netns exec $r sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1
done
pp ip -n rt_r1 route add 10.3.0.0/24 "${nh1[@]}"
pp ip -n rt_r2 route add 10.1.0.0/24 "${nh2[@]}"
pp ip -n rt_a route add default via 10.1.0.254
pp ip -n rt_b route add default via 10.3.0.254

pp ip netns exec rt_a rdma link add srd_rta type srd netdev va
defer del_link srd_rta
pp ip netns exec rt_b rdma link add srd_rtb type srd netdev vb
defer del_link srd_rtb
wait_for "srd_rta has the GID of 10.1.0.1" 10 has_gid srd_rta "$(gid_of_ipv4 10.1.0.1)"
wait_for "srd_rtb has the GID of 10.3.0.2" 10 has_gid srd_rtb "$(gid_of_ipv4 10.3.0.2)"

tx_packets() {
	ip netns exec rt_r1 cat "/sys/class/net/p$1/statistics/tx_packets"
}

declare -a before
for i in $(seq 0 $((NLINKS - 1))); do before[i]=$(tx_packets "$i"); done

dmesg_mark
# Each run makes new QPs, so a new (source QPN, destination QPN) pair and
# with it a new UDP source port.
for f in $(seq 1 $FLOWS); do
	out=$(try "$bin" -c $MSGS -s 512 srd_rta 10.1.0.1 srd_rtb 10.3.0.2) ||
		{ echo "$out"; fail "flow $f: srd_traffic across the routers failed"; }
	expect_match "flow $f: all $MSGS messages arrived intact across the routers" \
		"sent $MSGS received $MSGS intact $MSGS" "$out"
done

used=0 total=0
for i in $(seq 0 $((NLINKS - 1))); do
	delta=$(($(tx_packets "$i") - before[i]))
	echo "link p$i carried $delta packets"
	total=$((total + delta))
	# A flow is MSGS packets; a few more are neighbour discovery.
	[ "$delta" -ge $MSGS ] && used=$((used + 1))
done
[ "$total" -ge $((FLOWS * MSGS)) ] ||
	fail "expected at least $((FLOWS * MSGS)) packets over r1's links, saw $total"
[ "$used" -ge 2 ] ||
	fail "expected $FLOWS flows to use at least 2 of $NLINKS links, saw $used"
echo "ok: $FLOWS flows used $used of $NLINKS equal-cost links"
dmesg_clean "srd_routed"
exit $KSFT_PASS
