#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Wireshark dissector (tools/wireshark/softsrd.lua) on real traffic:
# tshark captures b's veth while a sends b UD datagrams, SRD sends with
# their error NAKs (srd_srd_qp's case 5: unknown QPN, Q_Key, short
# receive, RNR), SRD sends under 5 % loss (srd_perf: retransmissions),
# and RDMA write, write-with-imm and read, refused and then accepted
# (srd_rdma's case 3: REMOTE_ACCESS NAKs, and its positive controls).
# The capture must have lost nothing (dumpcap says so); then:
#  - every field of every softsrd packet, as tshark decodes it with the
#    dissector, equals what srd_forge.py finds at docs/protocol.md's
#    offsets (srd_forge.py dissect);
#  - every opcode, the NAK reasons, a retransmission and a write with
#    immediate appear (an ACK block on DATA may or may not: whether an
#    ACK rides on DATA depends on timing and on the room the payload
#    leaves, docs/protocol.md "Receiver" rules 5-6);
#  - b's counters match the capture: the packets b sent by kind (DATA and
#    RDMA, ACK, NAK, RNR NAK, HELLO), and those it received; ACKs as the
#    engine counts them: acks_sent the ACK packets, acks_received those
#    and the ACK blocks on DATA and RDMA packets, acks_piggybacked the
#    ACK blocks b sent; the 20 UD datagrams srd_traffic sent.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd tshark
require_cmd tc
modprobe sch_netem 2>/dev/null
require_forge
lua=$SRD_TOP/tools/wireshark/softsrd.lua
[ -r "$lua" ] || fail "$lua is missing"
traffic=$(srd_bin srd_traffic)
srdqp=$(srd_bin srd_srd_qp)
rdma=$(srd_bin srd_rdma)
srd_tool srd_perf >/dev/null
port=$(cat /sys/module/rdma_srd/parameters/udp_port) ||
	fail "rdma_srd has no udp_port parameter"
tmp=$(mktemp -d /tmp/srd_dissector.XXXXXX)
defer rm -rf "$tmp"

two_hosts sdi
CTRS="srd_tx_pkts srd_rx_pkts srd_tx_data_pkts srd_rx_data_pkts srd_acks_sent
	srd_acks_received srd_acks_piggybacked srd_naks_sent srd_naks_received
	srd_rnr_naks_sent srd_hellos_sent"
declare -A before
for c in $CTRS; do before[$c]=$(hw_counter "$DEV_B" "$c"); done
retx_a=$(hw_counter "$DEV_A" srd_retransmits)

dmesg_mark
echo "+ ip netns exec $NS_B tshark -i $IF_B -B 64 -f 'udp port $port' -F pcap -w $tmp/cap.pcap &"
bg_start ip netns exec "$NS_B" tshark -n -i "$IF_B" -B 64 -f "udp port $port" -F pcap \
	-w "$tmp/cap.pcap" -q >"$tmp/tshark.out" 2>&1
cap=$!
# dumpcap names its file once it captures; give it a moment more, for
# the first packets must not be missed.  On the debug kernel tshark's
# start took close to a minute, and once more than one.
wait_for "tshark captures" 180 grep -q "File: " "$tmp/tshark.out"
sleep 3

try "$traffic" -c 20 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "UD traffic"
try "$srdqp" -c 5 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_srd_qp case 5"
try ip netns exec "$NS_A" tc qdisc add dev "$IF_A" root netem loss 5% || skip "no netem"
perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 -s 16384 -n 50 "$IP4_B"
pp ip netns exec "$NS_A" tc qdisc del dev "$IF_A" root
try "$rdma" -c 3 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_rdma case 3"
# Everything sent has been answered: the ACK of a last segment may still
# be on its way for a moment.
sleep 1
kill -INT "$cap"
wait "$cap"
cat "$tmp/tshark.out"
! grep -Eq "packets? dropped" "$tmp/tshark.out" ||
	fail "the capture dropped packets: its counts cannot match the counters"

declare -A delta
for c in $CTRS; do delta[$c]=$(($(hw_counter "$DEV_B" "$c") - before[$c])); done
echo "b's counters moved: $(for c in $CTRS; do printf '%s=%s ' "$c" "${delta[$c]}"; done)"

echo "+ srd_forge.py dissect $tmp/cap.pcap $lua --local $IP4_B"
out=$("$PY" "$forge" dissect "$tmp/cap.pcap" "$lua" --local "$IP4_B" 2>&1)
echo "$out"
[[ "$out" == *"RESULT mode=dissect ok=1"* ]] ||
	fail "the dissector decodes a field otherwise than docs/protocol.md"
n() { sed -n "s/.*RESULT.* $1=\([0-9]*\).*/\1/p" <<<"$out" | grep . || echo 0; }

for k in in_UD_SEND in_DATA in_HELLO in_ACK in_WRITE in_WRITE_with_imm in_READ_REQ \
	out_READ_RESP out_ACK out_HELLO out_NAK_RNR out_NAK_BAD_QPN \
	out_NAK_BAD_QKEY out_NAK_BAD_LENGTH out_NAK_REMOTE_ACCESS in_retransmit; do
	[ "$(n $k)" -gt 0 ] || fail "the capture has no $k"
done
echo "ok: every opcode, NAK reason, a retransmission and a write with immediate captured"
echo "ACK blocks on DATA and RDMA packets: $(n out_ack_block) from b, $(n in_ack_block) to b"

# b's sends, all seen on its own veth; what reached it, all seen too.
out_naks=0 in_naks=0
for r in RNR BAD_QPN BAD_QKEY BAD_LENGTH REMOTE_ABORT REMOTE_ACCESS; do
	out_naks=$((out_naks + $(n out_NAK_$r)))
	in_naks=$((in_naks + $(n in_NAK_$r)))
done
out_data=$(($(n out_DATA) + $(n out_WRITE) + $(n out_READ_REQ) + $(n out_READ_RESP)))
in_data=$(($(n in_DATA) + $(n in_WRITE) + $(n in_READ_REQ) + $(n in_READ_RESP)))
expect_eq "b's DATA and RDMA packets sent" "${delta[srd_tx_data_pkts]}" "$out_data"
expect_eq "b's DATA and RDMA packets received" "${delta[srd_rx_data_pkts]}" "$in_data"
# An ACK is an ACK packet or an ACK block on DATA (flag HAS_ACK): acks_sent
# counts the packets only, acks_piggybacked the blocks, acks_received both.
expect_eq "b's ACK packets sent" "${delta[srd_acks_sent]}" "$(n out_ACK)"
expect_eq "b's ACK blocks sent" "${delta[srd_acks_piggybacked]}" "$(n out_ack_block)"
expect_eq "b's ACKs received (packets and blocks)" "${delta[srd_acks_received]}" \
	$(($(n in_ACK) + $(n in_ack_block)))
expect_eq "b's NAKs sent" "${delta[srd_naks_sent]}" "$out_naks"
expect_eq "b's NAKs received" "${delta[srd_naks_received]}" "$in_naks"
expect_eq "b's RNR NAKs sent" "${delta[srd_rnr_naks_sent]}" "$(n out_NAK_RNR)"
expect_eq "b's HELLOs sent" "${delta[srd_hellos_sent]}" "$(n out_HELLO)"
expect_eq "b's SRD packets sent" "${delta[srd_tx_pkts]}" \
	$((out_data + $(n out_ACK) + out_naks + $(n out_HELLO)))
expect_eq "b's SRD packets received" "${delta[srd_rx_pkts]}" \
	$((in_data + $(n in_ACK) + in_naks + $(n in_HELLO)))
expect_eq "UD datagrams captured (srd_traffic -c 20)" 20 "$(n in_UD_SEND)"
retx=$(($(hw_counter "$DEV_A" srd_retransmits) - retx_a))
[ "$(n in_retransmit)" -le "$retx" ] ||
	fail "$(n in_retransmit) retransmissions captured, a counted $retx"
echo "ok: $(n in_retransmit) of a's $retx retransmissions reached b"

dmesg_clean "dissector"
exit $KSFT_PASS
