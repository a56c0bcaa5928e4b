#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The hardware counters under the EFA driver's names and meanings
# (docs/architecture.md, "Counters"), read where a program in a device's
# network namespace can read them:
# - shared RDMA namespace mode (the default): over netlink, `rdma
#   statistic show link DEV/1` run inside the namespace; sysfs there has
#   no hw_counters (ib_core shows a device of another namespace without
#   them), which the test reports;
# - exclusive mode with each device moved into its namespace (rdma dev set
#   DEV netns NS, as a container gets its NIC): in that namespace's sysfs,
#   /sys/class/infiniband/DEV/ports/1/hw_counters, where libfabric's
#   fabtests and EFA exporters read them.
# srd_perf's sends, RDMA reads and RDMA writes between two namespaces must
# move send_wrs, recv_wrs, rdma_{read,write}_{wrs,bytes},
# rdma_read_resp_bytes, rdma_write_recv_bytes by exactly the ops and bytes
# srd_perf reports, tx_pkts/tx_bytes on one side match rx_pkts/rx_bytes on
# the other; datagrams of garbage count in rx_pkts, rx_bytes and rx_drops;
# with loss on the link the retransmissions show in
# retrans_pkts/retrans_bytes; with the peer unreachable, failed work
# requests, timeouts and unresponsive_remote_events.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma

EFA_PORT_COUNTERS=(tx_bytes tx_pkts rx_bytes rx_pkts rx_drops send_bytes
	send_wrs recv_bytes recv_wrs rdma_read_wrs rdma_read_bytes
	rdma_read_wr_err rdma_read_resp_bytes rdma_write_wrs rdma_write_bytes
	rdma_write_wr_err rdma_write_recv_bytes retrans_bytes retrans_pkts
	retrans_timeout_events unresponsive_remote_events)
# EFA's device counters softsrd has: its verbs' failures.
EFA_DEVICE_COUNTERS=(alloc_pd_err create_qp_err create_cq_err reg_mr_err
	alloc_ucontext_err create_ah_err mmap_err)

# The devices give an unreachable peer up after 1 s of silence, not the
# default 10 s: the counters are what is tested here (srd_outage tests
# the budget).
timeout_param=/sys/module/rdma_srd/parameters/peer_timeout_us
[ -r "$timeout_param" ] || fail "rdma_srd has no peer_timeout_us parameter"
set_param "$timeout_param" 1000000
defer netns_mode shared

# How counters are read: READ=netlink or READ=sysfs, from inside NS.
READ=netlink
# snap NS DEV: every counter of DEV's port 1, "name value" a line, as a
# process in NS reads them.
snap() {
	local ns=$1 dev=$2 d
	if [ "$READ" = netlink ]; then
		ip netns exec "$ns" rdma statistic show link "$dev/1" |
			awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
	else
		d=/sys/class/infiniband/$dev/ports/1/hw_counters
		ip netns exec "$ns" sh -c "cd $d && grep -H . *" | tr : ' '
	fi
}
# val SNAP NAME: the counter NAME in a snapshot.
val() {
	awk -v n="$2" '$1 == n { print $2; found = 1 } END { exit !found }' <<<"$1" ||
		fail "no counter $2 where $READ reads them"
}
# delta OLD NEW NAME
delta() { echo $(($(val "$2" "$3") - $(val "$1" "$3"))); }

# expect_delta WHAT OLD NEW NAME WANT
expect_delta() {
	local d
	d=$(delta "$2" "$3" "$4")
	[ "$d" -eq "$5" ] || fail "$1: $4 moved by $d, expected $5"
	echo "ok: $1: $4 +$d"
}

# quiet WHAT SA0 SB0 [LOSSY]: both devices' packet counters stop moving
# (the last ACKs are out); the final snapshots in SA1, SB1.  Then A's
# tx_pkts/tx_bytes since SA0 equal B's rx_pkts/rx_bytes since SB0 and the
# other way round; with LOSSY (netem drops A's packets after IP took
# them) A's tx_pkts exceed B's rx_pkts instead.
quiet() {
	local what=$1 sa0=$2 sb0=$3 lossy=${4:-} prev='' cur i c
	for ((i = 0; i < 50; i++)); do
		SA1=$(snap "$NS_A" "$DEV_A") SB1=$(snap "$NS_B" "$DEV_B")
		cur="$(val "$SA1" tx_pkts) $(val "$SA1" rx_pkts) $(val "$SB1" tx_pkts) $(val "$SB1" rx_pkts)"
		[ "$cur" = "$prev" ] && break
		prev=$cur
		sleep 0.3
	done
	for c in pkts bytes; do
		if [ -n "$lossy" ]; then
			[ "$(delta "$sa0" "$SA1" tx_$c)" -gt "$(delta "$sb0" "$SB1" rx_$c)" ] ||
				fail "$what: $DEV_A's tx_$c +$(delta "$sa0" "$SA1" tx_$c) not above $DEV_B's rx_$c +$(delta "$sb0" "$SB1" rx_$c)"
		else
			expect_eq "$what: $DEV_A's tx_$c = $DEV_B's rx_$c" \
				"$(delta "$sa0" "$SA1" tx_$c)" "$(delta "$sb0" "$SB1" rx_$c)"
		fi
		expect_eq "$what: $DEV_B's tx_$c = $DEV_A's rx_$c" \
			"$(delta "$sb0" "$SB1" tx_$c)" "$(delta "$sa0" "$SA1" rx_$c)"
	done
	echo "ok: $what: $DEV_A sent $(delta "$sa0" "$SA1" tx_pkts) packets," \
		"$(delta "$sa0" "$SA1" tx_bytes) bytes; $DEV_B received $(delta "$sb0" "$SB1" rx_pkts)," \
		"$(delta "$sb0" "$SB1" rx_bytes); $DEV_B sent $(delta "$sb0" "$SB1" tx_pkts)," \
		"$(delta "$sb0" "$SB1" tx_bytes)"
}

# perf OP SIZE ITERS [LOSSY]: srd_perf's client in NS_A, server in NS_B,
# one QP; sets MSGS (the ops it completed successfully) and SA0 SB0 SA1
# SB1.
perf() {
	local op=$1 size=$2 n=$3 lossy=${4:-}
	SA0=$(snap "$NS_A" "$DEV_A") SB0=$(snap "$NS_B" "$DEV_B")
	PERF_FORMAT=--json perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- \
		-d "$DEV_A" -o "$op" -s "$size" -n "$n" -q 1 -D 8 "$IP4_B"
	MSGS=$(sed -n 's/.*"msgs": *\([0-9]*\).*/\1/p' <<<"$PAIR_CLIENT_OUT" | head -1)
	[ -n "$MSGS" ] && [ "$MSGS" -gt 0 ] || fail "$op: no msgs in srd_perf's output"
	quiet "$op $size B x $MSGS" "$SA0" "$SB0" "$lossy"
}

# sent_at_least WHAT SNAP0 SNAP1 DEV BYTES: DEV's tx_bytes moved by BYTES
# and their headers at least.
sent_at_least() {
	local d
	d=$(delta "$2" "$3" tx_bytes)
	[ "$d" -gt "$5" ] || fail "$1: $4's tx_bytes moved by $d, less than the $5 bytes of data"
}

# traffic: sends, RDMA reads and writes, each counter moved by what
# srd_perf did, and nothing else by anything.
traffic() {
	local sz=4096
	perf send $sz 64
	expect_delta "send" "$SA0" "$SA1" send_wrs "$MSGS"
	expect_delta "send" "$SA0" "$SA1" send_bytes $((MSGS * sz))
	expect_delta "send" "$SB0" "$SB1" recv_wrs "$MSGS"
	expect_delta "send" "$SB0" "$SB1" recv_bytes $((MSGS * sz))
	expect_delta "send" "$SA0" "$SA1" rdma_read_wrs 0
	expect_delta "send" "$SA0" "$SA1" rdma_write_wrs 0
	sent_at_least send "$SA0" "$SA1" "$DEV_A" $((MSGS * sz))

	sz=65536
	perf read $sz 32
	expect_delta "read" "$SA0" "$SA1" rdma_read_wrs "$MSGS"
	expect_delta "read" "$SA0" "$SA1" rdma_read_bytes $((MSGS * sz))
	expect_delta "read" "$SA0" "$SA1" rdma_read_wr_err 0
	expect_delta "read" "$SB0" "$SB1" rdma_read_resp_bytes $((MSGS * sz))
	expect_delta "read" "$SA0" "$SA1" send_wrs 0
	sent_at_least read "$SB0" "$SB1" "$DEV_B" $((MSGS * sz))

	perf write $sz 32
	expect_delta "write" "$SA0" "$SA1" rdma_write_wrs "$MSGS"
	expect_delta "write" "$SA0" "$SA1" rdma_write_bytes $((MSGS * sz))
	expect_delta "write" "$SA0" "$SA1" rdma_write_wr_err 0
	expect_delta "write" "$SB0" "$SB1" rdma_write_recv_bytes $((MSGS * sz))
	expect_delta "write" "$SB0" "$SB1" recv_wrs 0
	sent_at_least write "$SA0" "$SA1" "$DEV_A" $((MSGS * sz))
}

# retrans: 10% loss from A to B; A's retransmissions show under EFA's
# names as under softsrd's own.
retrans() {
	local r b
	pp ip netns exec "$NS_A" tc qdisc add dev "$IF_A" root netem loss 10%
	perf send 4096 64 lossy
	pp ip netns exec "$NS_A" tc qdisc del dev "$IF_A" root
	r=$(delta "$SA0" "$SA1" retrans_pkts)
	[ "$r" -gt 0 ] || fail "10% loss: no retrans_pkts on $DEV_A"
	expect_delta "10% loss" "$SA0" "$SA1" retrans_pkts "$(delta "$SA0" "$SA1" srd_retransmits)"
	expect_delta "10% loss" "$SA0" "$SA1" retrans_timeout_events \
		"$(delta "$SA0" "$SA1" srd_rto_expired)"
	expect_delta "10% loss" "$SA0" "$SA1" retrans_bytes "$(delta "$SA0" "$SA1" srd_retrans_bytes)"
	# Each a DATA packet: its 52-byte header and at most a 1500-byte MTU.
	b=$(delta "$SA0" "$SA1" retrans_bytes)
	[ "$b" -gt $((r * 52)) ] && [ "$b" -le $((r * 1472)) ] ||
		fail "10% loss: retrans_bytes +$b for $r packets"
	echo "ok: 10% loss: retrans_pkts +$r, retrans_bytes +$(delta "$SA0" "$SA1" retrans_bytes)"
}

# blackhole on|off: every UDP packet A sends (softsrd's) is lost, after IP
# took it; srd_perf's TCP still passes.
blackhole() {
	if [ "$1" = on ]; then
		pp ip netns exec "$NS_A" tc qdisc add dev "$IF_A" root handle 1: prio
		pp ip netns exec "$NS_A" tc qdisc add dev "$IF_A" parent 1:3 handle 30: netem loss 100%
		pp ip netns exec "$NS_A" tc filter add dev "$IF_A" parent 1: protocol ip \
			u32 match ip protocol 17 0xff flowid 1:3
	else
		pp ip netns exec "$NS_A" tc qdisc del dev "$IF_A" root
	fi
}

# failing OP N: N ops of OP from A to a B it cannot reach; they complete
# in error after the retry budget.  Sets SA0 SA1.
failing() {
	SA0=$(snap "$NS_A" "$DEV_A")
	PERF_FORMAT=--json perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- \
		-d "$DEV_A" -o "$1" -s 4096 -n "$2" -D "$2" -q 1 -e "$IP4_B"
	SA1=$(snap "$NS_A" "$DEV_A")
}

# unresponsive: sends and reads to an unreachable B count as work
# requests, with no bytes; reads as rdma_read_wr_err; the timeouts and
# the unresponsive remote under EFA's names as under softsrd's.
unresponsive() {
	local u secs
	# The debug kernel (scripts/debug-kernel/guest.config) has neither.
	if ! modprobe -q sch_prio || ! modprobe -q cls_u32; then
		echo "# SKIP B unreachable: this kernel has no sch_prio or cls_u32 to black-hole UDP alone"
		return 0
	fi
	blackhole on
	failing send 4
	# Given up after peer_timeout_us (1 s here) and 13 RTOs (at most
	# 3.25 s), not the default's 10 s: the devices took the tunable.
	secs=$(perf_sum secs "$PAIR_CLIENT_OUT")
	awk -v s="$secs" 'BEGIN { exit !(s < 8) }' ||
		fail "B unreachable: the sends failed after $secs s, expected below 8 s with peer_timeout_us 1 s"
	echo "ok: B unreachable: the sends failed after $secs s (peer_timeout_us 1 s)"
	expect_delta "B unreachable" "$SA0" "$SA1" send_wrs 4
	expect_delta "B unreachable" "$SA0" "$SA1" send_bytes 0
	u=$(delta "$SA0" "$SA1" unresponsive_remote_events)
	[ "$u" -gt 0 ] || fail "B unreachable: no unresponsive_remote_events"
	expect_delta "B unreachable" "$SA0" "$SA1" unresponsive_remote_events \
		"$(delta "$SA0" "$SA1" srd_peer_unreachable)"
	[ "$(delta "$SA0" "$SA1" retrans_timeout_events)" -gt 0 ] ||
		fail "B unreachable: no retrans_timeout_events"
	expect_delta "B unreachable" "$SA0" "$SA1" retrans_timeout_events \
		"$(delta "$SA0" "$SA1" srd_rto_expired)"
	failing read 2
	expect_delta "B unreachable" "$SA0" "$SA1" rdma_read_wrs 2
	expect_delta "B unreachable" "$SA0" "$SA1" rdma_read_wr_err 2
	expect_delta "B unreachable" "$SA0" "$SA1" rdma_read_bytes 0
	blackhole off
}

# garbage: three datagrams to B's port that are not SRD packets (1, 16 and
# 200 bytes of UDP payload) reach B and are dropped: rx_pkts +3,
# rx_bytes +217, rx_drops +3.
garbage() {
	local port p sb0 sb1 i
	port=$(cat /sys/module/rdma_srd/parameters/udp_port)
	sb0=$(snap "$NS_B" "$DEV_B")
	for p in x 0123456789abcdef "$(printf '%0200d' 0)"; do
		# shellcheck disable=SC2016 # the inner shell's arguments
		ip netns exec "$NS_A" bash -c 'printf "%s" "$1" >"/dev/udp/$2/$3"' _ \
			"$p" "$IP4_B" "$port" || fail "sending a datagram to $IP4_B:$port"
	done
	for ((i = 0; i < 30; i++)); do
		sb1=$(snap "$NS_B" "$DEV_B")
		[ "$(delta "$sb0" "$sb1" rx_drops)" -ge 3 ] && break
		sleep 0.1
	done
	expect_delta "3 datagrams of garbage" "$sb0" "$sb1" rx_pkts 3
	expect_delta "3 datagrams of garbage" "$sb0" "$sb1" rx_bytes 217
	expect_delta "3 datagrams of garbage" "$sb0" "$sb1" rx_drops 3
}

# devsnap DEV: the device's own counters (EFA's device counters are not
# a port's), "name value" a line, from the device's namespace's sysfs.
devsnap() {
	(cd "/sys/class/infiniband/$1/hw_counters" && grep -H . -- *_err) | tr : ' '
}

# verb_errors: a CQ, a QP and an MR the kernel refuses, made by a program
# in NS_A, each count once in EFA's device counter for it.
verb_errors() {
	local sa0 sa1 c
	if ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
		echo "# no python3-pyverbs: the verbs' *_err counters are not exercised"
		return
	fi
	sa0=$(devsnap "$DEV_A")
	try ip netns exec "$NS_A" /usr/bin/python3 "$SRD_TOP/selftests/srd_verb_errors.py" "$DEV_A" ||
		fail "srd_verb_errors.py: a verb was not refused"
	sa1=$(devsnap "$DEV_A")
	for c in create_cq_err create_qp_err reg_mr_err; do
		expect_delta "refused verbs" "$sa0" "$sa1" "$c" 1
	done
	for c in alloc_pd_err alloc_ucontext_err create_ah_err mmap_err; do
		expect_delta "refused verbs" "$sa0" "$sa1" "$c" 0
	done
}

# 1. Shared mode: EFA's names in init_net's sysfs, both places; inside the
# namespace, over netlink.  Its topology goes before the next one's.
dmesg_mark
defer_scope_push
two_hosts ectr
for c in "${EFA_PORT_COUNTERS[@]}"; do
	[ -e "/sys/class/infiniband/$DEV_A/ports/1/hw_counters/$c" ] ||
		fail "no ports/1/hw_counters/$c for $DEV_A"
	[ -e "/sys/class/infiniband/$DEV_A/hw_counters/$c" ] ||
		fail "no hw_counters/$c for $DEV_A"
done
for c in "${EFA_DEVICE_COUNTERS[@]}"; do
	[ -e "/sys/class/infiniband/$DEV_A/hw_counters/$c" ] ||
		fail "no hw_counters/$c for $DEV_A"
	# As on EFA, a device counter, not a port's.
	[ ! -e "/sys/class/infiniband/$DEV_A/ports/1/hw_counters/$c" ] ||
		fail "$DEV_A's ports/1/hw_counters has $c"
done
echo "ok: the ${#EFA_PORT_COUNTERS[@]} EFA port counters and ${#EFA_DEVICE_COUNTERS[@]} device counters are in $DEV_A's hw_counters"
if ip netns exec "$NS_A" test -e "/sys/class/infiniband/$DEV_A/ports/1/hw_counters"; then
	echo "# shared mode: $NS_A's sysfs has $DEV_A's ports/1/hw_counters"
else
	echo "# shared mode: $NS_A's sysfs has no ports/1/hw_counters for $DEV_A (ib_core's view of another namespace's device)"
fi
READ=netlink
traffic
garbage
verb_errors
retrans
unresponsive

# 2. Exclusive mode, each device in its namespace: sysfs there.
defer_scope_pop
netns_mode exclusive
two_hosts ectr
try rdma dev set "$DEV_A" netns "$NS_A" || fail "cannot move $DEV_A into $NS_A"
try rdma dev set "$DEV_B" netns "$NS_B" || fail "cannot move $DEV_B into $NS_B"
for c in "${EFA_PORT_COUNTERS[@]}"; do
	ip netns exec "$NS_A" test -r "/sys/class/infiniband/$DEV_A/ports/1/hw_counters/$c" ||
		fail "exclusive mode: $NS_A's sysfs has no ports/1/hw_counters/$c for $DEV_A"
done
echo "ok: exclusive mode: $NS_A's sysfs has $DEV_A's ports/1/hw_counters"
READ=sysfs
traffic
dmesg_clean "EFA counters"
exit $KSFT_PASS
