#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# In a guest of scripts/vm-run.sh (srd-vm-run's): N hosts, each a network
# namespace with one srd device, on one Ethernet segment; then CMD.
#
#   scripts/vm-devices.sh N -- CMD...
#
# Host I (1 <= I <= N) is the namespace hostI; its veth eth0 has
# 10.0.0.I/24, and the srd device srdI is made on it from inside the
# namespace.  The other ends of the veths (vhostI) are ports of the bridge
# srdbr in init_net, so every host reaches every other.  ib_core is in
# shared namespace mode: every process sees every device, and a process
# in init_net can use srdI, but the out-of-band TCP exchange of a tool
# such as ib_send_bw needs the hosts' addresses, so run each side in its
# namespace (ip netns exec hostI).  CMD runs in init_net with
#
#   SRD_VM_DEVICES="srd1 srd2 ..."          the devices, in host order
#   SRD_VM_NETNS="host1 host2 ..."          their namespaces
#   SRD_VM_IPS="10.0.0.1 10.0.0.2 ..."      their IPv4 addresses (GID 0)
#
# and its exit status is this script's.  Each device is waited for until
# its port is ACTIVE with its IPv4 GID; a step that fails stops with the
# step named, before CMD (exit 125, as vm-run.sh's own failures).  N = 0
# makes nothing.

set -euo pipefail
SRD_PROG=srd-vm-run
# pp, wait_for, port_active, gid_of_ipv4, gid_index, log, usage
# shellcheck source=scripts/common.sh
. "$(dirname "$0")/common.sh"
srd_fail() {
	log "$@"
	exit 125
}
# The steps go to stderr, as a harness's own lines do (the guest's
# console carries both to srd-vm-run's standard output).
srd_show() {
	echo "+ $*" >&2
}

[ $# -ge 2 ] && [ "$2" = -- ] || usage
n=$1
shift 2
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -le 200 ] || srd_fail "--devices takes 0 to 200, not '$n'"

# batch [-n NS] LINE...: ip's commands LINE in one run of ip (in NS): a
# program starts slowly in the guest, each start a trip to the host's
# root; shown one line each.
batch() {
	local ns=() l
	if [ "$1" = -n ]; then
		ns=(-n "$2")
		shift 2
	fi
	for l in "$@"; do
		srd_show ip "${ns[@]}" "$l"
	done
	printf '%s\n' "$@" | ip "${ns[@]}" -batch - ||
		srd_fail "a step failed (exit $?): ip ${ns[*]} -batch of the lines above"
}

devices=() netns=() ips=() lines=()
[ "$n" -eq 0 ] || lines+=("link add srdbr type bridge" "link set srdbr up")
for ((i = 1; i <= n; i++)); do
	lines+=("netns add host$i" "link add vhost$i type veth peer name eth0 netns host$i"
		"link set vhost$i master srdbr up")
done
[ "$n" -eq 0 ] || batch "${lines[@]}"
for ((i = 1; i <= n; i++)); do
	batch -n "host$i" "link set lo up" "addr add 10.0.0.$i/24 dev eth0" "link set eth0 up"
	pp ip netns exec "host$i" rdma link add "srd$i" type srd netdev eth0
	devices+=("srd$i") netns+=("host$i") ips+=("10.0.0.$i")
done
for ((i = 1; i <= n; i++)); do
	wait_for "srd$i ACTIVE" 30 port_active "srd$i" >&2
	wait_for "srd$i has the GID of 10.0.0.$i" 30 gid_index "srd$i" "$(gid_of_ipv4 "10.0.0.$i")" >&2
	log "srd$i: netns host$i, eth0 10.0.0.$i/24"
done

export SRD_VM_DEVICES="${devices[*]}" SRD_VM_NETNS="${netns[*]}" SRD_VM_IPS="${ips[*]}"
exec "$@"
