#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Fault injection (/sys/kernel/debug/rdma_srd/DEV/faults, man rdma_srd,
# "FAULT INJECTION"): each fault a test sets ends in the completions a real
# occurrence gives, and is undone by the command that undoes it.  a sends
# to b (srd_perf):
#  - rnr: with b's receives refused for good, a's sends with rnr_retry 2
#    complete IBV_WC_RNR_RETRY_EXC_ERR (vendor_err 13) after 3 RNR NAKs
#    each; refused 3 times only, with rnr_retry 7, every send is delivered;
#    set for b's one QP by its number (which srd_perf's client prints) in
#    the middle of traffic, it takes exactly its count, and other QP
#    numbers none;
#  - remote_access: b refuses 2 RDMA writes and then 2 reads as a bad
#    rkey would (IBV_WC_REM_ACCESS_ERR, vendor_err 20); the others pass;
#  - unresponsive: a hears nothing from b nor sends it anything: its sends
#    complete IBV_WC_RESP_TIMEOUT_ERR (vendor_err 18) after the retry
#    budget (peer_timeout_us at 1 s here); once b is responsive again,
#    traffic is clean;
#  - loss: 10 % of a's SRD packets each way, drawn from a seed: every
#    message delivered once, by retransmissions (srd_retransmits), and the
#    file counts the drops;
#  - bad commands fail with EINVAL, a ninth QP with ENOSPC, and "clear"
#    leaves nothing set.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
srd_tool srd_perf >/dev/null
debugfs_mount
timeout_param=/sys/module/rdma_srd/parameters/peer_timeout_us
[ -r "$timeout_param" ] || fail "rdma_srd has no peer_timeout_us parameter"
set_param "$timeout_param" 1000000

two_hosts flt
FA=/sys/kernel/debug/rdma_srd/$DEV_A/faults
FB=/sys/kernel/debug/rdma_srd/$DEV_B/faults
[ -f "$FA" ] && [ -f "$FB" ] || fail "no faults file in debugfs for $DEV_A and $DEV_B"
expect_eq "$FB's mode" 600 "$(stat -c %a "$FB")"

# fault FILE COMMAND...: write the command, as a user would.
fault() {
	local f=$1
	shift
	echo "+ echo $* > $f"
	echo "$*" >"$f" || fail "writing '$*' to $f failed"
}

# faults_say FILE TEXT: the file lists TEXT.
faults_say() {
	local out
	out=$(cat "$1")
	grep -qxF -- "$2" <<<"$out" || { echo "$out"; fail "$1 does not say '$2'"; }
	echo "ok: $1 says '$2'"
}

# traffic SRD_PERF_ARGS...: srd_perf from a to b.
traffic() {
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- -d "$DEV_A" -W 30 "$@" "$IP4_B"
}

dmesg_mark
traffic -s 4096 -n 50
perf_clean "before any fault" "$PAIR_CLIENT_OUT" 1 50 0

# rnr_done QPN: how many messages b has refused for QPN (rnr).
rnr_done() {
	sed -n "s/^rnr qpn $1 left [0-9]* done \([0-9]*\)\$/\1/p" "$FB"
}

# --- rnr -------------------------------------------------------------------
# 1 KiB messages: one packet each, so each refusal is one RNR NAK.
fault "$FB" rnr any 1000
rnr0=$(hw_counter "$DEV_A" srd_rnr_naks_received)
traffic -s 1024 -n 4 -D 4 -r 2 -e
perf_clean "b's receives refused, rnr_retry 2" "$PAIR_CLIENT_OUT" 1 "" 4
expect_eq "rnr: vendor_err of the error completions" 13 "$(error_vendors "$PAIR_CLIENT_OUT")"
grep -q 'RNR retry' <<<"$PAIR_CLIENT_OUT" ||
	fail "rnr: the error completions are not IBV_WC_RNR_RETRY_EXC_ERR"
# A refused message's later packets (a retransmission, a probe) are NAKed
# RNR as well: a's NAKs are at least b's refusals.
naks=$(($(hw_counter "$DEV_A" srd_rnr_naks_received) - rnr0))
done_=$(rnr_done any)
[ "$done_" -ge 12 ] && [ "$naks" -ge "$done_" ] ||
	fail "rnr: b refused $done_ messages, a got $naks RNR NAKs; expected 3 refusals per send and a NAK each"
echo "ok: rnr: b refused $done_ messages, a got $naks RNR NAKs"
faults_say "$FB" "rnr qpn any left $((1000 - done_)) done $done_"
fault "$FB" rnr any 3
traffic -s 1024 -n 20 -D 4
perf_clean "b's receives refused 3 times, rnr_retry 7" "$PAIR_CLIENT_OUT" 1 20 0
faults_say "$FB" "rnr qpn any left 0 done 3"
fault "$FB" rnr any 0
expect_eq "$FB after 'rnr any 0'" "" "$(cat "$FB")"

# By QP number, in the middle of traffic: b's QP is the one srd_perf's
# server made, whose number the client prints ("QPs from N") into the
# output perf_pair keeps (/tmp/srd_perf_cli.*) as it runs.
# shellcheck disable=SC2317 # rnr_on_qp runs in the background
rnr_on_qp() {
	local f qpn='' deadline=$((SECONDS + 30))
	until [ -n "$qpn" ]; do
		[ $SECONDS -lt $deadline ] || exit 1
		sleep 0.1
		for f in /tmp/srd_perf_cli.*; do
			[ "$f" -nt "$tmp" ] || continue
			qpn=$(sed -n 's/.* QPs from \([0-9]*\)$/\1/p' "$f")
		done
	done
	echo "$qpn" >"$tmp"
	echo "rnr $qpn 5" >"$FB"
	echo "rnr 16777214 5" >"$FB"
}
tmp=$(mktemp /tmp/srd_faults.XXXXXX)
defer rm -f "$tmp"
sleep 0.01
rnr0=$(hw_counter "$DEV_A" srd_rnr_naks_received)
rnr_on_qp &
qpw=$!
defer kill_wait "$qpw"
traffic -s 1024 -T 4 -D 4
wait "$qpw" || fail "rnr by QP: srd_perf's client never named b's QP"
qpn=$(cat "$tmp")
rm -f "$tmp"
perf_clean "5 RNRs on b's QP $qpn" "$PAIR_CLIENT_OUT" 1 "" 0
faults_say "$FB" "rnr qpn $qpn left 0 done 5"
faults_say "$FB" "rnr qpn 16777214 left 5 done 0"
naks=$(($(hw_counter "$DEV_A" srd_rnr_naks_received) - rnr0))
[ "$naks" -ge 5 ] || fail "rnr by QP: a got $naks RNR NAKs, expected 5 at least"
echo "ok: rnr by QP: a got $naks RNR NAKs for b's 5 refusals"
fault "$FB" clear

# --- remote_access -----------------------------------------------------------
for op in write read; do
	fault "$FB" remote_access any 2
	traffic -o "$op" -s 4096 -n 4 -D 1 -e
	perf_clean "$op: 2 refused" "$PAIR_CLIENT_OUT" 1 "" 2
	expect_eq "$op: vendor_err of the error completions" 20 "$(error_vendors "$PAIR_CLIENT_OUT")"
	faults_say "$FB" "remote_access qpn any left 0 done 2"
	fault "$FB" clear
done

# --- unresponsive ------------------------------------------------------------
fault "$FA" unresponsive "$IP4_B"
unr0=$(hw_counter "$DEV_A" srd_peer_unreachable)
traffic -s 4096 -n 4 -D 4 -e
perf_clean "b unresponsive" "$PAIR_CLIENT_OUT" 1 "" 4
expect_eq "unresponsive: vendor_err of the error completions" 18 "$(error_vendors "$PAIR_CLIENT_OUT")"
expect_grew "unresponsive" "$DEV_A" srd_peer_unreachable "$unr0"
dropped=$(sed -n 's/^unresponsive .* dropped \([0-9]*\)$/\1/p' "$FA")
[ "${dropped:-0}" -gt 0 ] || { cat "$FA"; fail "unresponsive: nothing dropped"; }
echo "ok: unresponsive: $dropped packets to and from $IP4_B dropped"
fault "$FA" responsive "$IP4_B"
expect_eq "$FA after 'responsive'" "" "$(cat "$FA")"
traffic -s 4096 -n 50
perf_clean "b responsive again" "$PAIR_CLIENT_OUT" 1 50 0

# --- loss --------------------------------------------------------------------
retx0=$(hw_counter "$DEV_A" srd_retransmits)
fault "$FA" loss 100 7
traffic -s 4096,65536 -n 100
perf_clean "10 % loss" "$PAIR_CLIENT_OUT" 2 200 0
expect_grew "10 % loss" "$DEV_A" srd_retransmits "$retx0"
read -r _ permille _ seed _ din _ dout <"$FA"
expect_eq "loss: permille" 100 "$permille"
expect_eq "loss: seed" 7 "$seed"
[ "$din" -gt 0 ] && [ "$dout" -gt 0 ] || fail "loss: dropped $din in, $dout out"
echo "ok: loss: $din packets dropped in, $dout out"
fault "$FA" loss 0
expect_eq "$FA after 'loss 0'" "" "$(cat "$FA")"

# --- bad commands --------------------------------------------------------------
EINVAL="Invalid argument"
for cmd in "" "rnr" "rnr 5" "rnr x 1" "rnr 5 -1" "rnr 4294967295 1" \
	   "loss 1001" "loss x" "unresponsive 10.201.0" "bogus 1 2" \
	   "clear now"; do
	expect_fail_with "writing '$cmd'" "$EINVAL" bash -c "echo '$cmd' >$FB"
done
for i in 1 2 3 4 5 6 7 8; do
	fault "$FB" remote_access "$i" 1
done
expect_fail_with "a ninth QP" "No space left on device" bash -c "echo 'remote_access 9 1' >$FB"
fault "$FB" clear
expect_eq "$FB after 'clear'" "" "$(cat "$FB")"
traffic -s 4096 -n 50
perf_clean "after clear" "$PAIR_CLIENT_OUT" 1 50 0

srd_counters "$DEV_A" "$DEV_B"
dmesg_clean "fault injection"
exit $KSFT_PASS
