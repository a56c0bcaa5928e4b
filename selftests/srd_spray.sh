#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRD sprays a peer's packets over n_paths UDP source ports, so a fabric
# that hashes flows by L4 spreads even a single QP pair's traffic over its
# equal-cost links (a - r1 =4= r2 - b, srd_perf's TCP on a separate link):
#  - with the default n_paths every path carries data, and at least three
#    of the four links do;
#  - with n_paths=128 each of the four links carries at least 10% of it;
#  - with n_paths=1 all of it takes one link;
# each time checked against the links' packet counters in r1, the
# device's srd_tx_data_pkts and the per-path lines in debugfs.  (A bad
# n_paths is refused when written, srd_tunables; that a refused
# `rdma link add` leaves no hold on its netdev, srd_bad_input.)
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
srd_tool srd_perf >/dev/null
param=/sys/module/rdma_srd/parameters/n_paths
[ -w $param ] || fail "$param is missing"
n_paths0=$(cat $param)
defer srd_write "$param" "$n_paths0"
debugfs_mount

SIZE=65536
QPS=2

# A device's counter, fresh: ib_core caches hw_counters for a few ms.
# shellcheck disable=SC2317 # counter_at_least is wait_for's command
counter_at_least() {
	[ "$(hw_counter "$1" "$2")" -ge "$3" ]
}

# link_tx: LTX[i] = the tx packets of r1's link p$i, read by one process.
declare -a LTX
link_tx() {
	local l
	local -a f=()
	for l in "${ECMP_P[@]}"; do f+=("/sys/class/net/$l/statistics/tx_packets"); done
	mapfile -t LTX <<<"$(ip netns exec "$NS_R1" cat "${f[@]}")"
	[ ${#LTX[@]} -eq "$ECMP_N" ] || fail "cannot read r1's link counters"
}

# path_lines DEV PEER_GID: "PATH PORT TX" for each of the peer's paths.
path_lines() {
	srd_paths "$1" | awk -v g="$2" '$1 == "peer" && $2 == g && $3 == "path" {
		for (i = 3; i < NF; i += 2) v[$i] = $(i + 1)
		print v["path"], v["port"], v["tx"]
	}'
}

# spray N_PATHS MSGS: MSGS messages a QP from a to b with the devices made
# for N_PATHS; sets SHARE[i] (per mille of the data packets that link i carried),
# DATA (the data packets sent) and checks what does not depend on N_PATHS.
declare -a SHARE
spray() {
	local n=$1 msgs=$2 i d0 sum=0 min_pkts lines ports cur
	local -a tx0 delta
	read -r cur <$param
	if [ "$cur" != "$n" ]; then
		ecmp_del_srd
		pp sh -c "echo $n >$param"
		ecmp_add_srd
	fi
	d0=$(hw_counter "$DEV_A" srd_tx_data_pkts)
	link_tx
	tx0=("${LTX[@]}")
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- \
		-d "$DEV_A" -s $SIZE -n "$msgs" -q $QPS -W 30 "$MGMT_B"
	perf_clean "n_paths=$n: srd_perf" "$PAIR_CLIENT_OUT" 1 $((msgs * QPS)) 0
	# At most 1500 bytes a packet on these links.
	min_pkts=$((msgs * QPS * SIZE / 1500))
	wait_for "n_paths=$n: $DEV_A counted at least $min_pkts data packets" 5 \
		counter_at_least "$DEV_A" srd_tx_data_pkts $((d0 + min_pkts))
	DATA=$(($(hw_counter "$DEV_A" srd_tx_data_pkts) - d0))
	link_tx
	for ((i = 0; i < ECMP_N; i++)); do
		delta[i]=$((LTX[i] - tx0[i]))
		SHARE[i]=$((delta[i] * 1000 / DATA))
		sum=$((sum + delta[i]))
		echo "n_paths=$n: link p$i carried ${delta[i]} packets, $((SHARE[i] / 10)).$((SHARE[i] % 10))% of $DATA data packets"
	done
	# Everything a sent to b crossed r1's four links: the data packets,
	# and a few more (ARP, neighbour discovery, SRD control).
	[ $sum -ge "$DATA" ] && [ $sum -le $((DATA + DATA / 10 + 100)) ] ||
		fail "n_paths=$n: r1's links carried $sum packets for $DATA data packets"
	echo "ok: n_paths=$n: r1's links carried $sum packets for $DATA data packets"

	lines=$(path_lines "$DEV_A" "$(gid_of_ipv4 $IP_B)")
	echo "$DEV_A's paths to $IP_B (path port tx):"
	sed 's/^/  /' <<<"$lines"
	expect_eq "n_paths=$n: paths listed in debugfs" "$n" "$(grep -c . <<<"$lines")"
	expect_eq "n_paths=$n: paths that carried packets" "$n" \
		"$(awk '$3 > 0' <<<"$lines" | wc -l)"
	# Distinct ports in the dynamic range, one per path.
	ports=$(awk '$2 >= 49152 && $2 <= 65535 { print $2 }' <<<"$lines" | sort -u | wc -l)
	expect_eq "n_paths=$n: distinct UDP source ports from 49152 up" "$n" "$ports"
}

dmesg_mark
ecmp_hosts spr

# The default: 16 ports hashed onto 4 links may well leave a link with
# one port only, but three links without any is rare (about 1 in 10^4).
spray "$n_paths0" 40
used=0
for ((i = 0; i < ECMP_N; i++)); do
	[ "${SHARE[i]}" -ge 20 ] && used=$((used + 1))
done
[ $used -ge 3 ] || fail "n_paths=$n_paths0: expected at least 3 of $ECMP_N links to carry 2% of the data, saw $used"
echo "ok: n_paths=$n_paths0: $used of $ECMP_N links carried at least 2% of the data"

# 128 ports: each link gets 32 of them on average, 13 (10%) is 4 standard
# deviations below.
spray 128 40
for ((i = 0; i < ECMP_N; i++)); do
	[ "${SHARE[i]}" -ge 100 ] ||
		fail "n_paths=128: link p$i carried $((SHARE[i] / 10)).$((SHARE[i] % 10))% of the data, expected at least 10%"
done
echo "ok: n_paths=128: each of the $ECMP_N links carried at least 10% of the data"

# One port: one flow for the fabric, one link.
spray 1 10
busy=0
for ((i = 0; i < ECMP_N; i++)); do
	if [ "${SHARE[i]}" -ge 990 ]; then
		busy=$((busy + 1))
	elif [ "${SHARE[i]}" -gt 10 ]; then
		fail "n_paths=1: link p$i carried $((SHARE[i] / 10)).$((SHARE[i] % 10))% of the data, expected all or nothing"
	fi
done
expect_eq "n_paths=1: links that carried all of the data" 1 "$busy"

dmesg_clean "srd_spray"
exit $KSFT_PASS
