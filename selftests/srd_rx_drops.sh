#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Datagrams to softsrd's UDP port that are not SRD packets (empty, short,
# garbage) are dropped and counted in rx_drop_bad_hdr, over IPv4 and IPv6;
# the counters are also what `rdma statistic show` reports, and the device
# keeps working.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma
bin=$(srd_bin srd_traffic)
two_hosts sbh
port=$(cat /sys/module/rdma_srd/parameters/udp_port 2>/dev/null) ||
	fail "rdma_srd has no udp_port parameter"

dmesg_mark
# bash's /dev/udp redirection: one datagram per write, from A's namespace.
# Payloads: 1 byte and 16 bytes (shorter than UDP + SRD header); 200 zero
# bytes (version 0); text; a version 2 header (the old wire, refused);
# then version 4 headers (docs/protocol.md) with hdr_len_words 1 (below
# the header size) and 0xff (past the datagram's end), and an unknown
# opcode; then SRD transport packets (opcodes 16-19) shorter than their
# headers, which must not create a peer either.  Each one is checked on
# its own, in rx_drop_bad_hdr (the kernel's first look) plus
# srd_rx_drop_bad_hdr (the engine's, for SRD opcodes).
As=$(printf 'A%.0s' {1..40})
payloads=('x' '0123456789abcdef' "$(printf '%0200d' 0)"
	"$(head -c 300 /dev/urandom | base64 -w0)"
	$'\x02\x01\x01\x06'"$As"
	$'\x04\x01\x01\x01'"$As" $'\x04\x01\x01\xff'"$As" $'\x04\x7f\x01\x06'"$As"
	$'\x04\x10\x01\x0d'"${As:0:16}" $'\x04\x11\x01\x0a'"${As:0:32}"
	$'\x04\x13\x01\x03\x01\x01\x01\x01')
names=("1-byte datagram" "16-byte datagram" "200 zero bytes" "400 bytes of text"
	"a version 2 UD header"
	"version 4, hdr_len_words 1" "version 4, hdr_len_words 255" "version 4, opcode 0x7f"
	"SRD DATA of 20 bytes" "SRD ACK of 36 bytes" "SRD HELLO of 8 bytes")
missed=()
bad() { echo $(($(hw_counter "$DEV_B" rx_drop_bad_hdr) + $(hw_counter "$DEV_B" srd_rx_drop_bad_hdr))); }
bad_is() { [ "$(bad)" -ge "$1" ]; }
for ip in "$IP4_B" "$IP6_B"; do
	for i in "${!payloads[@]}"; do
		before=$(bad)
		# shellcheck disable=SC2016 # the inner shell's arguments
		ip netns exec "$NS_A" bash -c 'printf "%s" "$1" >"/dev/udp/$2/$3"' _ \
			"${payloads[$i]}" "$ip" "$port" || fail "sending a datagram to $ip:$port"
		deadline=$((SECONDS + 3))
		until bad_is $((before + 1)) || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
		if bad_is $((before + 1)); then
			echo "ok: ${names[$i]} to $ip:$port counted in rx_drop_bad_hdr"
		else
			echo "not ok: ${names[$i]} to $ip:$port: rx_drop_bad_hdr stayed at $before"
			missed+=("${names[$i]} to $ip not counted in rx_drop_bad_hdr")
		fi
	done
done

peers=$(hw_counter "$DEV_B" srd_peers)
[ "$peers" = 0 ] || missed+=("malformed SRD packets created $peers peers")

# rdma statistic reads port counters: the same values must be there.
echo "+ rdma statistic show link $DEV_B/1"
stats=$(rdma statistic show link "$DEV_B/1" 2>&1)
echo "$stats"
for c in rx_drop_bad_hdr rx_packets tx_packets rx_drop_qkey cq_overflows; do
	[[ "$stats" =~ (^|[[:space:]])$c\ $(hw_counter "$DEV_B" $c)([[:space:]]|$) ]] ||
		missed+=("'rdma statistic show link $DEV_B/1' lacks $c $(hw_counter "$DEV_B" $c)")
done

try "$bin" -c 20 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "traffic after the garbage"
dmesg_clean "non-SRD datagrams"
[ ${#missed[@]} -eq 0 ] ||
	fail "$(printf '%s; ' "${missed[@]}")"
exit $KSFT_PASS
