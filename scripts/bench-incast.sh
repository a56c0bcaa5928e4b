#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The incast rows of `make bench`, inside one guest:
#
#   bench-incast.sh DIR SECS SIZE DEPTH RATE_MBIT
#
# Four senders into one receiver through one bottleneck: namespaces s1..s4
# and r, each on a veth into a bridge in namespace sw, whose port towards
# r is a token bucket (tc tbf, RATE_MBIT Mbit/s, 50 ms of queue).
#
# SRD: an srd device in every namespace; four srd_perf servers in r, and
# the four clients at once, each streaming SIZE-byte messages, DEPTH in
# flight, for SECS seconds; their p99 is of post-to-completion times (a
# message's time in the transport, its ACK included).
# TCP: four sockperf servers in r and four `sockperf under-load --tcp
# --mps=max` clients at once, SIZE-byte messages as fast as the socket
# takes them; the server answers every 5th, and sockperf's percentiles
# are of those round trips (the answer crosses the idle direction).
#
# Each sender's output goes to DIR/raw/incast-<proto>-<i>.client.txt and a
# line per sender to DIR/index.tsv (bench_record, scripts/common.sh), and
# each SRD sender's view of the receiver halfway (debugfs) to
# DIR/raw/incast-srd-paths.txt;
# bench-table.py sums the senders and takes Jain's index over them.
# Nothing here judges the figures.

set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
dir=$1 secs=$2 size=$3 depth=$4 rate=$5
raw=$dir/raw
# new_netns, srd_cleanup, ip_batch, srd_tool, has_gid, port_active;
# busy_ticks, bench_record (scripts/common.sh).
# shellcheck source=selftests/lib.sh
. "$TOP/selftests/lib.sh"
OUTPUT=$TOP/build/selftests

clk=$(getconf CLK_TCK)
N=4
NS_R=ic_r NS_SW=ic_sw
IP_R=10.210.0.100
PORT0=18700

# record ID PROTO TOOL RC WALL_S BUSY NOTE
record() {
	bench_record "$dir" "$1" incast "$2" "$3" bw "$size" 0 "$4" "$4" "$5" \
		"$6" - "$clk" "$7"
}

topology() {
	local i
	for ns in "$NS_SW" "$NS_R" $(for ((i = 1; i <= N; i++)); do echo "ic_s$i"; done); do
		try ip netns add "$ns" || fail "ip netns add $ns"
		defer del_netns "$ns"
	done
	ip_batch "$NS_SW" <<-EOF
		link set lo up
		link add br0 type bridge
		link set br0 mtu 9000
		link set br0 up
		link add pr mtu 9000 type veth peer name vr mtu 9000 netns $NS_R
		link set pr master br0
		link set pr up
		$(for ((i = 1; i <= N; i++)); do
			echo "link add p$i mtu 9000 type veth peer name v$i mtu 9000 netns ic_s$i"
			echo "link set p$i master br0"
			echo "link set p$i up"
		done)
	EOF
	ip_batch "$NS_R" <<-EOF
		link set lo up
		addr add $IP_R/24 dev vr
		link set vr up
	EOF
	for ((i = 1; i <= N; i++)); do
		ip_batch "ic_s$i" <<-EOF
			link set lo up
			addr add 10.210.0.$i/24 dev v$i
			link set v$i up
		EOF
	done
	# The bottleneck: the bridge's port towards r.
	pp ip netns exec "$NS_SW" tc qdisc add dev pr root tbf rate "${rate}mbit" \
		burst 64k latency 50ms
	pp ip netns exec "$NS_R" rdma link add srd_icr type srd netdev vr
	defer del_link srd_icr
	for ((i = 1; i <= N; i++)); do
		pp ip netns exec "ic_s$i" rdma link add "srd_ic$i" type srd netdev "v$i"
		defer del_link "srd_ic$i"
	done
	wait_for "srd_icr has the GID of $IP_R" 30 has_gid srd_icr "$(gid_of_ipv4 $IP_R)"
	for ((i = 1; i <= N; i++)); do
		wait_for "srd_ic$i ACTIVE" 30 port_active "srd_ic$i"
	done
}

# listening PORT: a server in r listens on TCP PORT (srd_perf's control
# channel, sockperf's data socket).  sockperf prints nothing at that
# moment: its "Warmup stage" line comes from its setup, not its listen.
# shellcheck disable=SC2317 # listening is wait_for's command
listening() {
	ip netns exec "$NS_R" ss -Hltn "sport = :$1" | grep -q .
}

# incast PROTO: the four senders at once; a record each.
incast() {
	local proto=$1 i perf b0 b1 t0 t1 rc port=$PORT0
	local -a spids=() cpids=()
	perf=$(srd_tool srd_perf)
	# Sender i talks to port + i; TCP's ports apart from SRD's.
	[ "$proto" = srd ] || port=$((PORT0 + 10))
	echo "=== incast-$proto: $N senders, ${size} B messages, ${rate} Mbit/s bottleneck"
	for ((i = 1; i <= N; i++)); do
		if [ "$proto" = srd ]; then
			ip netns exec "$NS_R" timeout -k 5 $((secs + 60)) "$perf" -S -d srd_icr \
				-p $((port + i)) -W 30 -E >"$raw/incast-srd-$i.server.txt" 2>&1 &
		else
			ip netns exec "$NS_R" timeout -k 5 $((secs + 60)) sockperf server --tcp \
				-i $IP_R -p $((port + i)) >"$raw/incast-tcp-$i.server.txt" 2>&1 &
		fi
		spids+=($!)
	done
	for ((i = 1; i <= N; i++)); do
		wait_for "incast-$proto server $i" 30 listening \
			$((port + i))
	done
	b0=$(busy_ticks)
	t0=$(date +%s%N)
	for ((i = 1; i <= N; i++)); do
		if [ "$proto" = srd ]; then
			ip netns exec "ic_s$i" timeout -k 5 $((secs + 60)) "$perf" --json \
				-d "srd_ic$i" -p $((port + i)) -W 30 -E -t bw -s "$size" \
				-D "$depth" -T "$secs" $IP_R >"$raw/incast-srd-$i.client.txt" 2>&1 &
		else
			ip netns exec "ic_s$i" timeout -k 5 $((secs + 60)) sockperf under-load \
				--tcp -i $IP_R -p $((port + i)) -m "$size" -t "$secs" \
				--mps=max --reply-every 5 >"$raw/incast-tcp-$i.client.txt" 2>&1 &
		fi
		cpids+=($!)
	done
	# Each sender's view of the receiver, halfway: window, RTTs.
	if [ "$proto" = srd ]; then
		sleep $((secs / 2 + 1))
		for ((i = 1; i <= N; i++)); do
			echo "sender $i: $(grep '^peer' "/sys/kernel/debug/rdma_srd/srd_ic$i/paths")"
		done >"$raw/incast-srd-paths.txt" 2>&1
	fi
	for ((i = 1; i <= N; i++)); do
		rc=0
		wait "${cpids[i - 1]}" || rc=$?
		t1=$(date +%s%N)
		b1=$(busy_ticks)
		tail -n 3 "$raw/incast-$proto-$i.client.txt" | sed 's/^/  | /'
		record "incast-$proto-$i" "$proto" "$([ "$proto" = srd ] && echo srd_perf ||
			echo sockperf)" "$rc" "$(((t1 - t0) / 1000000000))" "$((b1 - b0))" \
			"sender $i of $N, bottleneck ${rate} Mbit/s"
	done
	# sockperf's server never ends by itself; srd_perf's does.
	[ "$proto" = srd ] || kill "${spids[@]}" 2>/dev/null
	for ((i = 1; i <= N; i++)); do
		wait "${spids[i - 1]}" 2>/dev/null
	done
	ip netns exec "$NS_SW" tc -s qdisc show dev pr >"$raw/incast-$proto-tbf.txt"
	srd_counters srd_icr >>"$raw/incast-$proto-tbf.txt"
}

modprobe sch_tbf 2>/dev/null
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
modprobe bridge 2>/dev/null
topology >"$raw/incast-setup.txt" 2>&1 ||
	{ record incast-setup srd srd_perf 1 - - "setup failed"; exit 0; }
incast srd
incast tcp
srd_cleanup >/dev/null 2>&1
exit 0
