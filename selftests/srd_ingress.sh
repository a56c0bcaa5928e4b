#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A device takes packets only from the fabric (issue 46, M10 and L2 of the
# security review): b has a second interface, to a host x off the fabric.
# The same UD datagram (to a QP number nobody has) is sent to b's device
# addresses, IPv4 and IPv6:
#  1. from x, in on b's other interface: dropped before any QP lookup,
#     counted in rx_drop_ingress, not in rx_drop_no_qp;
#  2. from a, in on the device's netdev: taken, so it reaches the QP
#     lookup (rx_drop_no_qp) - the datagram itself is well formed;
#  3. from a, as IPv6 with an IPv4-mapped source (a's IPv4 address)
#     written on a's veth: dropped, counted in rx_drop_ingress.
# And traffic between a and b still flows (srd_traffic).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_forge
bin=$(srd_bin srd_traffic)
port=$(cat /sys/module/rdma_srd/parameters/udp_port) ||
	fail "rdma_srd has no udp_port parameter"

two_hosts sig
NS_X=sig_x
new_netns "$NS_X"
pp ip -n "$NS_X" link add sigx type veth peer name sigxb netns "$NS_B"
pp ip -n "$NS_X" addr add 10.203.0.1/24 dev sigx
pp ip -n "$NS_X" addr add fd00:204::1/64 dev sigx nodad
pp ip -n "$NS_B" addr add 10.203.0.2/24 dev sigxb
pp ip -n "$NS_B" addr add fd00:204::2/64 dev sigxb nodad
pp ip -n "$NS_X" link set sigx up
pp ip -n "$NS_B" link set sigxb up
pp ip -n "$NS_X" route add 10.201.0.0/24 via 10.203.0.2
pp ip -n "$NS_X" -6 route add fd00:201::/64 via fd00:204::2
# The weak host model at its weakest: no reverse-path filter on b.
pp ip netns exec "$NS_B" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
	net.ipv4.conf.sigxb.rp_filter=0

[ -r "/sys/class/infiniband/$DEV_B/hw_counters/rx_drop_ingress" ] ||
	fail "$DEV_B has no hw_counters/rx_drop_ingress"
ingress() { hw_counter "$DEV_B" rx_drop_ingress; }
no_qp() { hw_counter "$DEV_B" rx_drop_no_qp; }
# send NS ARGS...: one datagram by srd_ingress.py in NS.
send() {
	local ns=$1
	shift
	echo "+ ip netns exec $ns srd_ingress.py $*"
	ip netns exec "$ns" "$PY" "$SRD_TOP/selftests/srd_ingress.py" "$@" ||
		fail "srd_ingress.py $* failed"
}

dmesg_mark
for ip in "$IP4_B" "$IP6_B"; do
	i0=$(ingress) q0=$(no_qp)
	send "$NS_X" udp "$ip" "$port"
	expect_grew "from x to $ip on b's other interface" "$DEV_B" rx_drop_ingress "$i0"
	expect_eq "from x to $ip: never reached the QP lookup" "$q0" "$(no_qp)"

	i0=$(ingress) q0=$(no_qp)
	send "$NS_A" udp "$ip" "$port"
	expect_grew "from a to $ip on the device's netdev" "$DEV_B" rx_drop_no_qp "$q0"
	expect_eq "from a to $ip: not an ingress drop" "$i0" "$(ingress)"
done

mac_b=$(ip -n "$NS_B" -j link show "$IF_B" | "$PY" -c \
	'import json, sys; print(json.load(sys.stdin)[0]["address"])')
i0=$(ingress) q0=$(no_qp)
send "$NS_A" mapped "$IF_A" "$mac_b" "$IP4_A" "$IP6_B" "$port"
expect_grew "IPv6 from ::ffff:$IP4_A" "$DEV_B" rx_drop_ingress "$i0"
expect_eq "IPv6 from ::ffff:$IP4_A: never reached the QP lookup" "$q0" "$(no_qp)"

try "$bin" -c 20 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" ||
	fail "SRD traffic between a and b"
dmesg_clean "srd_ingress"
echo "srd_ingress: ok"
