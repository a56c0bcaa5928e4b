#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# softsrd's UDP port is the module parameter udp_port, default 4792: every
# namespace, with a device or not, has a UDP socket on it, and with the
# module loaded as udp_port=5792 traffic flows on that port instead (and
# the sockets of every namespace move to it).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd ss
[ -n "${SRD_MODULE:-}" ] && [ -f "$SRD_MODULE" ] || skip "SRD_MODULE (the .ko to reload) is not set"
bin=$(srd_bin srd_traffic)
param=/sys/module/rdma_srd/parameters/udp_port
defer module_reinsert

[ -r $param ] || fail "rdma_srd has no udp_port parameter ($param)"
default=$(cat $param)
expect_eq "default udp_port" 4792 "$default"
expect_match "modinfo documents udp_port" 'udp_port' "$(modinfo -p "$SRD_MODULE")"

# udp_bound NS PORT: a UDP socket in NS is bound to PORT.
udp_bound() {
	ip netns exec "$1" ss -Huan | awk '{ print $4 }' | grep -Eq "[:.]$2\$"
}

check_port() {
	local port=$1 other=$2 ns
	try "$bin" -c 30 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "IPv4 traffic on port $port"
	try "$bin" -c 30 "$DEV_A" "$IP6_A" "$DEV_B" "$IP6_B" || fail "IPv6 traffic on port $port"
	new_netns spt_c
	for ns in "$NS_A" "$NS_B" spt_c; do
		ip netns exec "$ns" ss -Huan
		udp_bound "$ns" "$port" || fail "no UDP socket on port $port in $ns"
		echo "ok: $ns has a UDP socket on port $port"
		udp_bound "$ns" "$other" && fail "a UDP socket on port $other in $ns"
	done
	pp ip netns del spt_c
	true
}

defer_scope_push
two_hosts spt
check_port 4792 5792

# Reload with another port: devices go with the module, so rebuild them.
defer_scope_pop
reload_module udp_port=5792
expect_eq "udp_port after reload" 5792 "$(cat $param)"
two_hosts spt
check_port 5792 4792
exit $KSFT_PASS
