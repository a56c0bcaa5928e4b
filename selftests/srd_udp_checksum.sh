#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# softsrd's packets are UDP with checksums, over IPv4 and IPv6: clean
# traffic raises no checksum error, and with netem corrupting every packet
# on the sender's veth, no damaged message is delivered while the
# receiver's UDP InCsumErrors rises (a packet sent with no checksum would
# be delivered damaged instead).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tc
bin=$(srd_bin srd_traffic)
modprobe sch_netem 2>/dev/null
two_hosts sck

# csum_errors NS 4|6: the namespace's UDP checksum error count.
# shellcheck disable=SC2016 # awk's fields
csum_errors() {
	if [ "$2" = 4 ]; then
		ip netns exec "$1" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["InCsumErrors"] }' /proc/net/snmp
	else
		ip netns exec "$1" awk '$1 == "Udp6InCsumErrors" { print $2 }' /proc/net/snmp6
	fi
}

for v in 4 6; do
	if [ $v = 4 ]; then ipa=$IP4_A ipb=$IP4_B; else ipa=$IP6_A ipb=$IP6_B; fi
	e0=$(csum_errors "$NS_B" $v)
	try "$bin" -c 50 -s 1000 "$DEV_A" "$ipa" "$DEV_B" "$ipb" || fail "IPv$v: clean traffic"
	expect_eq "IPv$v: checksum errors after clean traffic" "$e0" "$(csum_errors "$NS_B" $v)"

	try ip netns exec "$NS_A" tc qdisc add dev "$IF_A" root netem corrupt 100% ||
		skip "netem is not available"
	out=$(try "$bin" -l -c 30 -s 1000 "$DEV_A" "$ipa" "$DEV_B" "$ipb") ||
		{ echo "$out"; fail "IPv$v: a corrupted message was delivered"; }
	echo "$out"
	pp ip netns exec "$NS_A" tc qdisc del dev "$IF_A" root
	# (No process substitution: the guest has no /dev/fd.)
	read -r sent recvd <<<"$(sed -n 's/^sent \([0-9]*\) received \([0-9]*\).*/\1 \2/p' <<<"$out")"
	[ "${sent:-0}" -eq 30 ] || fail "IPv$v: expected 30 messages sent through netem, saw '$sent'"
	# A flipped bit in the Ethernet source MAC goes unnoticed (veth has no
	# FCS): a few messages may arrive, intact.
	[ "$recvd" -le 5 ] || fail "IPv$v: with every packet corrupted, expected at most 5 of 30 delivered, saw $recvd"
	e1=$(csum_errors "$NS_B" $v)
	echo "IPv$v: UDP checksum errors in $NS_B: $e0 -> $e1"
	[ "$e1" -gt "$e0" ] || fail "IPv$v: expected UDP checksum errors to rise, stayed at $e1"
	echo "ok: IPv$v: corrupted packets are dropped by the UDP checksum"
done
exit $KSFT_PASS
