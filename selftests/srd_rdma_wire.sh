#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA read and write on the wire (docs/protocol.md, "RDMA read and
# write"), from both sides of the rkey check:
#
#  1. Legitimate traffic a -> b (sends, sends with immediate, RDMA writes,
#     writes with immediate, reads, of 0 to 65536 bytes, over IPv4 and
#     IPv6; and UD sends) under a sniffer on b's veth (srd_forge.py sniff,
#     both directions): every header is exactly its opcode's length and
#     every reserved or unused field is 0, so no kernel memory reaches a
#     packet; every opcode of that traffic is seen.
#  2. a's srd device is removed and an attacker takes its address with a
#     plain UDP socket (srd_forge.py), speaking SRD by hand to b's target
#     QP and MR (srd_rkey_target):
#     - control: an SRD_WRITE with the real rkey is ACKed and lands (the
#       forged format is right, and the memory check sees a change);
#     - guess: 10000 writes with wrong rkeys are each NAKed REMOTE_ACCESS,
#       counted in rdma_rkey_invalid, and change nothing;
#     - read-control / read-guess: a read with the real rkey returns the
#       MR's bytes; 1000 with wrong rkeys return nothing but NAKs;
#     - bad-headers: malformed RDMA packets (short headers, lying lengths,
#       forbidden ranges), over IPv4 and IPv6, are counted in
#       rx_drop_bad_hdr, answered by nothing, and change nothing.
#     Every packet b sends the attacker is checked as the sniffer checks.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma
require_forge
tgt_bin=$(srd_bin srd_rkey_target)
port=$(cat /sys/module/rdma_srd/parameters/udp_port 2>/dev/null) ||
	fail "rdma_srd has no udp_port parameter"
tmp=$(mktemp -d /tmp/srd_rdma_wire.XXXXXX)
defer rm -rf "$tmp"

two_hosts rw
dmesg_mark
echo "# topology up after ${SECONDS}s"

# The responder's counters: the device's, or the engine's (srd_ prefix).
RKEY_CTRS="rdma_rkey_invalid rdma_rkey_pd rdma_rkey_access rdma_rkey_range"
declare -A CTR_FILE=()
for c in $RKEY_CTRS rx_drop_bad_hdr srd_rx_drop_bad_hdr srd_naks_sent; do
	d=/sys/class/infiniband/$DEV_B/hw_counters
	if [ -r "$d/$c" ]; then CTR_FILE[$c]=$d/$c
	elif [ -r "$d/srd_$c" ]; then CTR_FILE[$c]=$d/srd_$c
	else fail "$DEV_B has no counter $c (nor srd_$c)"
	fi
done
# snap VAR: the rkey counters, malformed-header drops and NAKs sent, as
# "name=value ..." in VAR.  (Builtins only: under TCG every process costs.)
snap() {
	local c v dev eng s=
	for c in $RKEY_CTRS; do
		read -r v <"${CTR_FILE[$c]}"
		s+="$c=$v "
	done
	# Malformed SRD packets: rx_drop_bad_hdr when the kernel's first look
	# refuses them (before any peer is found), srd_rx_drop_bad_hdr when
	# the engine does; either way each counts once.
	read -r dev <"${CTR_FILE[rx_drop_bad_hdr]}"
	read -r eng <"${CTR_FILE[srd_rx_drop_bad_hdr]}"
	read -r v <"${CTR_FILE[srd_naks_sent]}"
	s+="bad_hdr=$((dev + eng)) naks_sent=$v"
	printf -v "$1" '%s' "$s"
	echo "counters: $s (bad_hdr: device $dev, engine $eng)"
}
# expect_deltas WHAT BEFORE AFTER NAME=N...: counters grew by exactly N
# (the rkey counters not named by 0).
expect_deltas() {
	local what=$1 before=$2 after=$3 kv c
	shift 3
	local -A exp=() b=() a=()
	for c in $RKEY_CTRS; do exp[$c]=0; done
	for kv; do exp[${kv%%=*}]=${kv#*=}; done
	for kv in $before; do b[${kv%%=*}]=${kv#*=}; done
	for kv in $after; do a[${kv%%=*}]=${kv#*=}; done
	for c in "${!exp[@]}"; do
		expect_eq "$what: $c grew by" "${exp[$c]}" "$((${a[$c]:-0} - ${b[$c]:-0}))"
	done
}
# field KEY TEXT: KEY=value from a RESULT line in TEXT.
field() {
	local l w v=
	while IFS= read -r l; do
		[[ "$l" == RESULT* ]] || continue
		for w in $l; do [[ "$w" == "$1="* ]] && v=${w#*=}; done
	done <<<"$2"
	echo "$v"
}

# Three helpers start at once (each start costs seconds under TCG): the
# sniffer, the target and the attacker, which idles until it is told to
# act, once a's device is gone.
echo "+ ip netns exec $NS_B srd_forge.py sniff $IF_B 150 --port $port" \
	"--expect-ops 1,16,17,19,20,21,22 &"
ip netns exec "$NS_B" "$PY" "$forge" sniff "$IF_B" 150 --port "$port" \
	--expect-ops 1,16,17,19,20,21,22 >"$tmp/sniff" 2>&1 &
SNIFF_PID=$!
defer kill_wait "$SNIFF_PID"

# The target: srd_rkey_target on b, a coprocess fed commands on stdin.
echo "+ ip netns exec $NS_B srd_rkey_target $DEV_B $IP4_B (coprocess)"
coproc TGT { exec ip netns exec "$NS_B" "$tgt_bin" "$DEV_B" "$IP4_B" 2>&1; }
defer kill_wait "$TGT_PID"
TGT_OUT=${TGT[0]} TGT_IN=${TGT[1]}

# The attacker: srd_forge.py in a's namespace, on a's addresses, fed
# commands through a fifo.
mkfifo "$tmp/fin" "$tmp/fout" || fail "mkfifo"
echo "+ ip netns exec $NS_A srd_forge.py --src $IP4_A --src6 $IP6_A --dst6 $IP6_B" \
	"$IP4_B serve &"
ip netns exec "$NS_A" "$PY" "$forge" --src "$IP4_A" --src6 "$IP6_A" --dst6 "$IP6_B" \
	--port "$port" "$IP4_B" serve <"$tmp/fin" >"$tmp/fout" 2>&1 &
defer kill_wait "$!"
exec {FIN}>"$tmp/fin" {FOUT}<"$tmp/fout"

read -r -t 60 -u "$TGT_OUT" tline || fail "srd_rkey_target printed nothing"
echo "target: $tline"
[[ "$tline" == qpn=* ]] || fail "srd_rkey_target: $tline"
# tgt COMMAND: the target's one-line answer.
tgt() {
	local r
	echo "$1" >&"$TGT_IN" || fail "srd_rkey_target is gone"
	read -r -t 30 -u "$TGT_OUT" r || fail "srd_rkey_target did not answer '$1'"
	echo "$r"
}
expect_eq "target memory before anything" intact "$(tgt check)"

# forge_result WHAT: the attacker's lines up to its next RESULT line, into
# FORGE_OUT; its verdict must be ok=1.
forge_result() {
	local l
	FORGE_OUT=
	while read -r -t 120 -u "$FOUT" l; do
		echo "  $l"
		FORGE_OUT+="$l"$'\n'
		[[ "$l" == RESULT* ]] && break
	done
	expect_eq "srd_forge $1: verdict" 1 "$(field ok "$FORGE_OUT")"
}
# forge [-6] MODE ARGS...: one command to the attacker.
forge() {
	echo "+ srd_forge: $*"
	echo "$*" >&"$FIN" || fail "srd_forge is gone"
	forge_result "$*"
}
forge_result serve
echo "target $tline" >&"$FIN"
forge_result target

# --- 1. legitimate traffic under the sniffer -------------------------------

deadline=$((SECONDS + 60))
up=
until [ -n "$up" ]; do
	while IFS= read -r l; do [[ "$l" == "sniff: listening"* ]] && up=1; done <"$tmp/sniff"
	[ -n "$up" ] && break
	kill -0 "$SNIFF_PID" 2>/dev/null || { cat "$tmp/sniff"; fail "the sniffer exited"; }
	[ $SECONDS -lt $deadline ] || fail "the sniffer did not start"
	sleep 0.1
done
echo "ok: the sniffer listens on $IF_B (${SECONDS}s)"
for fam in 4 6; do
	if [ $fam = 4 ]; then la=$IP4_A lb=$IP4_B n=8; else la=$IP6_A lb=$IP6_B n=4; fi
	echo "+ ip netns exec $NS_A srd_rkey_target -t '<target>' -p $lb -n $n $DEV_A $la"
	out=$(ip netns exec "$NS_A" timeout -k 5 60 "$tgt_bin" -t "$tline" -p "$lb" -n "$n" \
		"$DEV_A" "$la" 2>&1)
	rc=$?
	echo "  ${out//$'\n'/$'\n'  }"
	[ $rc -eq 0 ] || fail "legitimate RDMA traffic over IPv$fam failed (exit $rc)"
done
# UD datagrams too (their header has reserved bytes).
echo "+ srd_traffic -c 10 $DEV_A $IP4_A $DEV_B $IP4_B"
out=$(ip netns exec "$NS_A" timeout -k 5 60 "$(srd_bin srd_traffic)" -c 10 \
	"$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" 2>&1)
echo "  ${out//$'\n'/$'\n'  }"
[[ "$out" == *"sent 10 received 10 intact 10"* ]] || fail "UD traffic a -> b failed"
kill -TERM "$SNIFF_PID"
wait "$SNIFF_PID"
rc=$?
out=$(<"$tmp/sniff")
echo "  ${out//$'\n'/$'\n'  }"
expect_eq "legitimate traffic: sniffer verdict (exit $rc)" 1 "$(field ok "$out")"
srd_counters "$DEV_A" "$DEV_B"
# Each round of "siwmr" is one send, one send with immediate and one write
# with immediate at the target.
expect_eq "the target's receive completions" "recv=12 recv_imm=12 rdma_imm=12 errors=0" \
	"$(tgt stats)"
expect_eq "target memory after writes of its own pattern" intact "$(tgt check)"

# --- 2. the attacker, on a's address ----------------------------------------

echo "# legitimate traffic checked after ${SECONDS}s"
try rdma link del "$DEV_A" || fail "rdma link del $DEV_A"
forge hello

# The positive control: the forged format is right, and check would see it.
# The snapshots, each set by snap (printf -v).
s0='' s1='' s2='' s3='' s4='' s5='' s6=''
snap s0
forge control 4096 2500
snap s1
expect_deltas "control" "$s0" "$s1" naks_sent=0 bad_hdr=0
expect_eq "target memory: the control's 2500 bytes of 0x5a at 4096" intact \
	"$(tgt "expect 5a 4096 2500")"
expect_eq "target memory check sees the control's change" "changed at 4096" "$(tgt check)"

forge guess 10000
snap s2
expect_eq "guess: NAKs REMOTE_ACCESS received" 10000 "$(field nak6 "$FORGE_OUT")"
# Each was answered (the count above, the forger waits for every NAK):
# how long they took is the machine's, reported and not judged (60.2 s
# once on the debug kernel under TCG, about 6 ms a round trip).
echo "10000 forged writes in $(field secs "$FORGE_OUT")s"
expect_deltas "guess" "$s1" "$s2" rdma_rkey_invalid=10000 naks_sent=10000 bad_hdr=0
expect_eq "target memory after the guesses" intact "$(tgt "expect 5a 4096 2500")"

# Reads.  (srd_forge checks each packet b sends it as the sniffer does.)
forge read-control 0 4096
snap s3
expect_deltas "read-control" "$s2" "$s3" naks_sent=0 bad_hdr=0
forge read-guess 1000
snap s4
expect_eq "read-guess: NAKs REMOTE_ACCESS received" 1000 "$(field nak6 "$FORGE_OUT")"
expect_eq "read-guess: READ_RESP packets received" 0 "$(field read_resp "$FORGE_OUT")"
expect_deltas "read-guess" "$s3" "$s4" rdma_rkey_invalid=1000 naks_sent=1000 bad_hdr=0

for fam in 4 6; do
	snap s5
	if [ $fam = 4 ]; then forge bad-headers; else forge -6 bad-headers; fi
	snap s6
	sent=$(field sent "$FORGE_OUT")
	[ "${sent:-0}" -gt 20 ] || fail "bad-headers sent only '${sent}' packets"
	expect_deltas "bad-headers over IPv$fam" "$s5" "$s6" bad_hdr="$sent" naks_sent=0
	expect_eq "target memory after malformed packets over IPv$fam" intact \
		"$(tgt "expect 5a 4096 2500")"
done

echo quit >&"$FIN"
echo quit >&"$TGT_IN"
echo "# attacks done after ${SECONDS}s"
dmesg_clean "forged RDMA packets"
exit $KSFT_PASS
