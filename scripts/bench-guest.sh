#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The guest side of `make bench` (scripts/bench.sh starts two guests joined
# by one virtio-net link and runs this in each):
#
#   bench-guest.sh server DIR   10.77.0.1: sets up, then serves the control
#                               channel (scripts/bench-serve.py)
#   bench-guest.sh client DIR   10.77.0.2: sets up, then drives every
#                               measurement
#   bench-guest.sh efa-profile DIR  (in both, from the client) srd0 anew
#                               in the efa profile, and no rxe0
#
# Both guests put rxe0 and srd0 on the one link, so every row crosses the
# same path.  The verbs programs of the bandwidth rows sleep on a
# completion channel when they have nothing to do (perftest -e, srd_perf
# -E), as iperf3 sleeps in recvmsg: two guests of two vCPUs share the
# host's two cores, and a vCPU that busy-polls takes a core from the
# kernel work it waits for.  The busy-polling rows (spin_rows) measure
# that cost at the large sizes; the latency rows busy-poll.
# DIR is the host directory both guests share: DIR/params
# holds the settings (bench.sh writes it), DIR/raw/ receives each command's
# output, and DIR/index.tsv a line per measurement, which
# scripts/bench-table.py turns into the table.  Nothing here judges the
# figures: a measurement that fails is recorded as failed.

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# pp, die, wait_for (a failed step or wait stops this guest's side,
# named), busy_ticks, gid_of_ipv4, gid_index, active_mtu, port_active,
# bench_record
# shellcheck source=scripts/common.sh
. "$TOP/scripts/common.sh"
role=$1
dir=$2
# shellcheck source=/dev/null
. "$dir/params"
raw=$dir/raw
IP_SERVER=10.77.0.1
IP_CLIENT=10.77.0.2
CTL_PORT=7077
SRD_PERF=$TOP/build/tools/srd_perf
# EFA software runs on softsrd's libefa.so.1 through this.
EFA_RUN=$TOP/build/efa-compat/srd-efa-run

# The NIC is the only netdev besides lo (vm-run.sh --nic adds it).
nic_name() {
	local d n
	for d in /sys/class/net/*; do
		n=${d##*/}
		[ "$n" = lo ] && continue
		echo "$n"
		return 0
	done
	return 1
}

# setup IP: the link up with IP, rxe0 and srd0 on it.
setup() {
	local ip=$1 d
	nic_name >/dev/null || pp modprobe virtio_net
	wait_for "the NIC" 20 nic_name
	IF=$(nic_name)
	pp ip link set "$IF" mtu "$MTU"
	pp ip addr add "$ip/24" dev "$IF"
	pp ip link set "$IF" up
	pp ip link set lo up
	# Two names, for Open MPI's two nodes (mpi_rows).
	pp hostname "bench-$role"
	# bench.sh --param: module parameters, before srd0 takes them.
	for p in ${SRD_PARAMS:-}; do
		pp sh -c "echo '${p#*=}' >/sys/module/rdma_srd/parameters/${p%%=*}"
	done
	# srd0 first: its MTU is read before rxe0 exists (see rxe_blocks_srd).
	pp rdma link add srd0 type srd netdev "$IF"
	wait_for "srd0 ACTIVE" 20 port_active srd0
	# shellcheck disable=SC2046 # verbs_env's words split on purpose
	SRD_MTU=$(active_mtu srd0 $(verbs_env srd0))
	pp modprobe rdma_rxe
	pp rdma link add rxe0 type rxe netdev "$IF"
	for d in rxe0 srd0; do
		wait_for "$d ACTIVE" 20 port_active "$d"
		wait_for "$d's GID of $ip" 20 gid_index "$d" "$(gid_of_ipv4 "$ip")"
	done
	GIDX_RXE=$(gid_index rxe0 "$(gid_of_ipv4 "$ip")")
	GIDX_SRD=$(gid_index srd0 "$(gid_of_ipv4 "$ip")")
	echo "bench-guest: $role on $IF ($ip, MTU $MTU): rxe0 GID $GIDX_RXE, srd0 GID $GIDX_SRD"
	pp rdma link show
	# bench.sh --profile: the symbols its instruction counts are read with,
	# rdma_srd's included (its addresses stay while it is loaded).
	[ "${PROFILE:-0}" = 0 ] || pp cp /proc/kallsyms "$dir/profile/kallsyms-$role"
}

run_server() {
	setup "$IP_SERVER"
	# The client builds the server's command lines.
	echo "SGIDX_RXE=$GIDX_RXE SGIDX_SRD=$GIDX_SRD" >"$dir/server-gids"
	pp exec python3 "$TOP/scripts/bench-serve.py" "$IP_SERVER" "$CTL_PORT" "$raw"
}

# ---- the client ------------------------------------------------------

# ctl REQUEST...: one request to the server guest; the reply in REPLY.
ctl() {
	echo "  [${SECONDS}s] ctl> $*"
	printf '%s\n' "$*" >&"$CTL"
	IFS= read -r -t 600 REPLY <&"$CTL" || die "the control channel closed"
	echo "  [${SECONDS}s] ctl< $REPLY"
}

ctl_connect() {
	local deadline=$((SECONDS + 180))
	# The server guest may still be booting.
	until { exec {CTL}<>"/dev/tcp/$IP_SERVER/$CTL_PORT"; } 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || die "no control server at $IP_SERVER:$CTL_PORT"
		sleep 1
	done
	echo "bench-guest: control channel to $IP_SERVER:$CTL_PORT up"
	# The server wrote its GID indices before it started listening.
	# shellcheck source=/dev/null
	. "$dir/server-gids"
}

ms_to_s() {
	printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

# write_header: index.tsv's first line, the names of its columns.
write_header() {
	bench_record "$dir" id group transport tool mode size loss client_rc \
		server_rc wall_s client_busy_ticks server_busy_ticks hz note
}

# A TCP/UDP port per measurement, so that no run waits on the last one's
# TIME_WAIT.
next_port=20000
NPORT=
new_port() {
	NPORT=$next_port
	next_port=$((next_port + 1))
}

# wanted ID GROUP: is the measurement ID of GROUP in this run (bench.sh
# --only, $ONLY: shell patterns of ids or groups; empty: every one)?
# The fallback group's libfabric rows are read against the fi group's,
# in the same run: asking for fallback measures fi too.
wanted() {
	local pat
	[ -n "${ONLY:-}" ] || return 0
	for pat in $ONLY; do
		# shellcheck disable=SC2053 # a pattern, on purpose
		[[ $1 == $pat || $2 == $pat ]] && return 0
		# shellcheck disable=SC2053 # a pattern, on purpose
		[[ $2 == "fi" && fallback == $pat ]] && return 0
	done
	return 1
}

# counters_cmd FILE: the command that writes this guest's srd0 hw_counters
# to FILE, "srd_NAME:VALUE" a line, and its peers and paths (debugfs:
# smoothed RTT, RTO, window) to FILE.paths.
counters_cmd() {
	echo "{ mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; } &&" \
		"cat /sys/kernel/debug/rdma_srd/srd0/paths >$1.paths &&" \
		"cd /sys/class/infiniband/srd0/hw_counters && grep . srd_* >$1"
}

# profile_mark LABEL: with bench.sh --profile, a snapshot of both guests'
# instruction counts as DIR/profile/{server,client}-LABEL.txt, and of
# their srd0 counters as DIR/profile/{server,client}-LABEL.ctr: the
# packets, ACKs and timeouts behind the instructions.  The counters are
# read outside the instruction snapshots (before the first, after the
# second), so that reading them is not counted.
profile_mark() {
	[ "${PROFILE:-0}" != 0 ] || return 0
	if [ "${1##*.}" = 1 ]; then
		insn_snapshot "$dir/profile" "$1" server client
	fi
	ctl run "$(counters_cmd "$dir/profile/server-$1.ctr")"
	[ "${REPLY}" = "done 0" ] || die "cannot read the server's srd0 counters: $REPLY"
	(eval "$(counters_cmd "$dir/profile/client-$1.ctr")")
	if [ "${1##*.}" = 0 ]; then
		insn_snapshot "$dir/profile" "$1" server client
	fi
}

# The kernel events bench.sh --trace records in both guests while a row's
# client runs: each packet sent and received on the NIC, the programs'
# write()s (libsrd's doorbell is one), and kprobes where rdma_srd writes
# a receive's completion (srd_complete_recv) and hands a packet to UDP
# (srd_xmit), for UD and SRD alike, where the NIC's driver notifies the
# device (virtqueue_notify), and where the clock event device, the
# guests' local APIC timer in one-shot mode, is programmed
# (lapic_next_event, in and out); the end of each softirq, the NIC's
# interrupts and the local timer's, and each hrtimer started.  Read by
# scripts/bench-trace.py.
TRACE_EVENTS="net:net_dev_xmit net:napi_gro_receive_entry syscalls:sys_enter_write kprobes:srd_recv_cqe kprobes:srd_xmit_udp kprobes:vq_notify kprobes:clockev_set kprobes:clockev_set_ret irq:softirq_exit irq:irq_handler_entry irq_vectors:local_timer_entry timer:hrtimer_start"
TRACE_KPROBES="p:srd_recv_cqe srd_complete_recv|p:srd_xmit_udp srd_xmit|p:vq_notify virtqueue_notify|p:clockev_set lapic_next_event|r:clockev_set_ret lapic_next_event"

# trace_cmd start | stop FILE: the command that starts this guest's
# recording of TRACE_EVENTS afresh, or stops it and writes it to FILE.
# The kprobes are made and the events enabled once, at the first start,
# and stay so (a stopped recording drops their events): each enabling
# patches the kernel's text, and one run in five that enabled them at
# every row hung in that step in the client guest, cause unknown.
trace_cmd() {
	local t=/sys/kernel/tracing
	case $1 in
	start)
		# shellcheck disable=SC2028 # the command's text: tr gets the \n
		echo "{ [ -e $t/trace ] || mount -t tracefs nodev $t; } &&" \
			"echo 0 >$t/tracing_on && echo >$t/trace &&" \
			"{ grep -q . $t/set_event || { echo 4096 >$t/buffer_size_kb &&" \
			"echo '$TRACE_KPROBES' | tr '|' '\\n' >>$t/kprobe_events &&" \
			"for e in $TRACE_EVENTS; do echo \$e >>$t/set_event; done; }; } &&" \
			"echo 1 >$t/tracing_on"
		;;
	stop)
		echo "echo 0 >$t/tracing_on && cat $t/trace >$2" ;;
	esac
}

# trace_mark ID.0 | ID.1: with bench.sh --trace, start both guests'
# recordings just before the row's client runs (the server's first), and
# stop them just after (the client's first) into DIR/trace/{server,
# client}-ID.txt.  A recording that cannot start stops the run: a traced
# run without its traces would look like one.
trace_mark() {
	local id=${1%.*}
	[ "${TRACE:-0}" != 0 ] || return 0
	if [ "${1##*.}" = 0 ]; then
		ctl run "$(trace_cmd start)"
		[ "${REPLY}" = "done 0" ] || die "cannot trace in the server: $REPLY"
		(eval "$(trace_cmd start)") || die "cannot trace in the client"
	else
		(eval "$(trace_cmd stop "$dir/trace/client-$id.txt")") ||
			die "cannot read the client's trace"
		ctl run "$(trace_cmd stop "$dir/trace/server-$id.txt")"
		[ "${REPLY}" = "done 0" ] || die "cannot read the server's trace: $REPLY"
	fi
}

# measure ID GROUP TRANSPORT TOOL MODE SIZE LOSS TIMEOUT PROTO PORT SERVER_CMD -- CLIENT_CMD...
# Starts SERVER_CMD in the server guest, runs CLIENT_CMD here (TIMEOUT
# seconds at most each), and records both statuses and the CPU used.
measure() {
	local id=$1 group=$2 transport=$3 tool=$4 mode=$5 size=$6 loss=$7
	local tmo=$8 proto=$9 port=${10} scmd=${11} crc src=-1 sbusy=- b0 b1 t0 t1
	shift 12
	wanted "$id" "$group" || return 0
	echo "=== [${SECONDS}s] $id: $transport $tool $mode size $size loss $loss%"
	ctl start "$id" "$proto" "$port" "$tmo" "$scmd"
	if [ "${REPLY%% *}" != ok ]; then
		bench_record "$dir" "$id" "$group" "$transport" "$tool" "$mode" \
			"$size" "$loss" - - - - - "$CLK" "server: ${REPLY#err }"
		return 0
	fi
	echo "+ $*" | tee "$raw/$id.client.txt"
	[ -z "${SAMPLE_MEM:-}" ] || mem_sampler_start "$raw/$id.mem.txt"
	profile_mark "$id.0"
	trace_mark "$id.0"
	b0=$(busy_ticks)
	t0=$(date +%s%N)
	crc=0
	timeout -k 5 "$tmo" "$@" >>"$raw/$id.client.txt" 2>&1 || crc=$?
	t1=$(date +%s%N)
	b1=$(busy_ticks)
	trace_mark "$id.1"
	profile_mark "$id.1"
	[ -z "${SAMPLE_MEM:-}" ] || mem_sampler_stop
	tail -n 5 "$raw/$id.client.txt" | sed 's/^/  | /'
	# A server whose client failed may wait for it forever, and
	# sockperf's server never ends by itself.
	ctl wait "$id" "$([ $crc -eq 0 ] && [ "$tool" != sockperf ] && echo 30 || echo 1)"
	if [ "${REPLY%% *}" = "done" ]; then
		read -r _ src sbusy <<<"$REPLY"
	fi
	bench_record "$dir" "$id" "$group" "$transport" "$tool" "$mode" "$size" \
		"$loss" "$crc" "$src" "$(ms_to_s $(((t1 - t0) / 1000000)))" "$((b1 - b0))" "$sbusy" "$CLK" ""
}

# kernel_mem_kb: this guest's kernel memory of the kinds QPs take, in kB:
# Slab (kmalloc'd objects), VmallocUsed, and the pages of every vmalloc'd
# or vmap'd area (/proc/vmallocinfo, less each area's guard page; not
# the lazily freed ones), which holds rxe's queues (vmalloc_user) and
# srd's rings (pages vmap'd) alike.
kernel_mem_kb() {
	local k v _ slab=0 vm=0
	while read -r k v _; do
		case $k in
		Slab:) slab=$v ;;
		VmallocUsed:) vm=$v ;;
		esac
	done </proc/meminfo
	echo "$slab $vm $(awk '/ (vmalloc|vmap)( |$)/ && !/unpurged/ { s += $2 - 4096 }
		END { print int(s / 1024) }' /proc/vmallocinfo)"
}

# mem_sampler_start FILE: kernel_mem_kb now (the baseline, the first
# line), then every half second into FILE until mem_sampler_stop;
# bench-table.py takes the largest rise of each column over the baseline.
MEM_PID=
mem_sampler_start() {
	kernel_mem_kb >"$1"
	( while :; do sleep 0.5; kernel_mem_kb; done ) >>"$1" &
	MEM_PID=$!
}

mem_sampler_stop() {
	kill "$MEM_PID" 2>/dev/null
	wait "$MEM_PID" 2>/dev/null || true
	MEM_PID=
}

# skip_row ID GROUP TRANSPORT TOOL MODE SIZE WHY: a row not measured.
skip_row() {
	wanted "$1" "$2" || return 0
	echo "=== $1: skipped: $7"
	bench_record "$dir" "$1" "$2" "$3" "$4" "$5" "$6" 0 - - - - - "$CLK" "skip: $7"
}

# by_size SIZE QUICK SMALL MEDIUM LARGE: a count for a row of SIZE: QUICK
# in quick mode, else SMALL up to 4 KiB, MEDIUM up to 64 KiB, LARGE above.
by_size() {
	if [ "$QUICK" = 1 ]; then echo "$2"; return; fi
	if [ "$1" -le 4096 ]; then echo "$3"
	elif [ "$1" -le 65536 ]; then echo "$4"
	else echo "$5"; fi
}

# bw_iters SIZE: perftest's message count in the bandwidth rows (with -e
# it cannot run for a time): about DUR seconds of rxe RC here.  At most
# 4000: with -e perftest sizes a UD receive queue by the count, and
# srd0's max_qp_wr is 4096.
bw_iters() { by_size "$1" 500 4000 400 30; }

# lat_iters SIZE: round trips of a latency row.  rxe RC took 30 ms one way
# at 4 KiB in TCG: few round trips, so that each run stays within seconds
# (and p99.9 is near the maximum); 1000 at 64 B (about a second), where
# the targets are.  bench.sh --lat-iters N: N at 64 B.
lat_iters() {
	if [ "$QUICK" != 1 ] && [ "$1" -le 64 ] && [ -n "${LAT_ITERS:-}" ]; then
		echo "$LAT_ITERS"
		return
	fi
	if [ "$QUICK" != 1 ] && [ "$1" -le 64 ]; then echo 1000; return; fi
	by_size "$1" 50 200 50 20
}

limit_rows() {
	local len=$((MTU - 28))
	[ $len -le 8000 ] || len=8000
	new_port
	measure udp_bw limit udp iperf3 bw "$len" 0 $((DUR + 60)) tcp $NPORT \
		"iperf3 -s -1 -p $NPORT" -- \
		iperf3 -c "$IP_SERVER" -p $NPORT -u -b 0 -l "$len" -t "$DUR"
	new_port
	measure udp_lat limit udp sockperf lat 64 0 $((DUR + 60)) udp $NPORT \
		"sockperf server -i $IP_SERVER -p $NPORT" -- \
		sockperf ping-pong -i "$IP_SERVER" -p $NPORT -t "$DUR" -m 64
}

# bw_timeout RC|UD: seconds for a perftest bandwidth row.  A UD server
# that lost a message waits for it until killed, and its client for the
# server's results: a minute per UD row went that way.  A UD row takes a
# few seconds when nothing is lost.
bw_timeout() {
	if [ "$1" = UD ]; then echo $((DUR + 15)); else echo $((DUR + 60)); fi
}

# The perftest arguments ($a) and verbs_env's words split on purpose.
# shellcheck disable=SC2086,SC2046
# perftest_rows DEV CLIENT_GIDX SERVER_GIDX TRANSPORT CONN: ib_send_bw and
# ib_send_lat at each size, the same arguments on both sides but the GID.
perftest_rows() {
	local dev=$1 cg=$2 sg=$3 transport=$4 conn=$5 s a
	for s in $SIZES; do
		if [ "$conn" = UD ] && [ "$s" -gt "$UD_MAX" ]; then
			skip_row "$transport-bw-$s" peer "$transport" ib_send_bw bw "$s" \
				"UD messages end at the MTU ($UD_MAX B)"
			skip_row "$transport-lat-$s" peer "$transport" ib_send_lat lat "$s" \
				"UD messages end at the MTU ($UD_MAX B)"
			continue
		fi
		new_port
		a="-d $dev -c $conn -F -p $NPORT -s $s -t $DEPTH -n $(bw_iters "$s") -e"
		measure "$transport-bw-$s" peer "$transport" ib_send_bw bw "$s" 0 \
			"$(bw_timeout "$conn")" tcp $NPORT "$(verbs_env "$dev") ib_send_bw $a -x $sg" -- \
			$(verbs_env "$dev") ib_send_bw $a -x "$cg" "$IP_SERVER"
		new_port
		a="-d $dev -c $conn -F -p $NPORT -s $s -n $(lat_iters "$s")"
		measure "$transport-lat-$s" peer "$transport" ib_send_lat lat "$s" 0 \
			150 tcp $NPORT "$(verbs_env "$dev") ib_send_lat $a -x $sg" -- \
			$(verbs_env "$dev") ib_send_lat $a -x "$cg" "$IP_SERVER"
	done
}

# SPIN_SIZES: the sizes of the busy-polling rows.
spin_sizes() {
	local s
	for s in $SIZES; do
		[ "$QUICK" = 1 ] || [ "$s" -ge 65536 ] && echo "$s"
	done
}

# shellcheck disable=SC2086,SC2046,SC2153 # as perftest_rows
# spin_rows rxe|srd: rxe RC and SRD bandwidth as the other rows measure
# them, but busy-polling the CQs (perftest's and srd_perf's default).
spin_rows() {
	local s a
	for s in $(spin_sizes); do
		new_port
		if [ "$1" = rxe ]; then
			a="-d rxe0 -c RC -F -p $NPORT -s $s -t $DEPTH -D $DUR"
			measure "rxe-rc-spin-bw-$s" spin rxe-rc ib_send_bw bw "$s" 0 \
				$((DUR + 60)) tcp $NPORT "$(verbs_env rxe0) ib_send_bw $a -x $SGIDX_RXE" -- \
				$(verbs_env rxe0) ib_send_bw $a -x "$GIDX_RXE" "$IP_SERVER"
		else
			measure "srd-spin-bw-$s" spin srd srd_perf bw "$s" 0 $((DUR + 60)) tcp $NPORT \
				"$SRD_PERF -S -d srd0 -p $NPORT -W 30" -- \
				"$SRD_PERF" --json -d srd0 -p $NPORT -W 30 -t bw -s "$s" -D "$DEPTH" -T "$DUR" "$IP_SERVER"
		fi
	done
}

srd_rows() {
	local s
	for s in $SIZES; do
		srd_bw "srd-bw-$s" srd "$s" 0
		new_port
		measure "srd-lat-$s" srd srd srd_perf lat "$s" 0 150 tcp $NPORT \
			"$SRD_PERF -S -d srd0 -p $NPORT -W 30" -- \
			"$SRD_PERF" --json -d srd0 -p $NPORT -W 30 -t lat -s "$s" -n "$(lat_iters "$s")" "$IP_SERVER"
	done
}

# shellcheck disable=SC2086,SC2046 # as perftest_rows
# scale_rows rxe|srd: N QP pairs between the two guests, all to the one peer, for
# N in SCALE_QPS: SCALE_SIZE-byte sends, SCALE_INFLIGHT in flight in all
# (SCALE_INFLIGHT / N per QP, at least one), on SRD (srd_perf -q N) and on
# rxe RC (ib_send_bw -q N, which connects N QP pairs; perftest wants 5
# messages per QP at least).  srd_perf sleeps on its completion channel
# (-E), as in every SRD bandwidth row; ib_send_bw busy-polls: with -e it
# hung on rxe at 16 and 1024 QPs in every try (at 1024 the server had
# all the messages, the client spun).  So SRD/rxe RC here is not like for
# like; SRD's own ratios across N are.  The client
# guest's kernel memory is sampled during each run (mem_sampler_start):
# SRD keeps its reliability state per peer, rxe per QP pair.
scale_rows() {
	local n d it a
	wanted - scale || return 0
	SAMPLE_MEM=1
	for n in $SCALE_QPS; do
		d=$((SCALE_INFLIGHT / n))
		[ $d -ge 1 ] || d=1
		new_port
		if [ "$1" = rxe ]; then
			# Messages per QP: about DUR seconds of rxe RC in all.
			it=$((SCALE_MSGS / n))
			[ $it -ge $d ] || it=$d
			[ $it -ge 5 ] || it=5
			a="-d rxe0 -c RC -F -p $NPORT -s $SCALE_SIZE -q $n -t $d -n $it"
			measure "rxe-rc-scale-$n" scale rxe-rc ib_send_bw bw "$SCALE_SIZE" 0 \
				$((DUR + 60)) tcp $NPORT "$(verbs_env rxe0) ib_send_bw $a -x $SGIDX_RXE" -- \
				$(verbs_env rxe0) ib_send_bw $a -x "$GIDX_RXE" "$IP_SERVER"
		else
			measure "srd-scale-$n" scale srd srd_perf bw "$SCALE_SIZE" 0 $((DUR + 60)) \
				tcp $NPORT "$SRD_PERF -S -d srd0 -p $NPORT -W 60 -E" -- \
				"$SRD_PERF" --json -d srd0 -p $NPORT -W 60 -E -t bw -s "$SCALE_SIZE" \
				-q "$n" -D "$d" -T "$DUR" "$IP_SERVER"
		fi
	done
	SAMPLE_MEM=
}

# RDMA_LAT_SIZE: the one size of the RDMA latency rows (in quick mode too).
RDMA_LAT_SIZE=64

# srd_rdma_rows: the client's RDMA writes into and reads from the server's
# memory (srd_perf -o), bandwidth at the sizes and depth of the send rows,
# and the latency of one op at a time (post to completion: a round trip,
# which srd_perf does not halve).
srd_rdma_rows() {
	local op s
	for op in write read; do
		for s in $SIZES; do
			new_port
			measure "srd-$op-bw-$s" srd-rdma srd srd_perf bw "$s" 0 $((DUR + 60)) tcp $NPORT \
				"$SRD_PERF -S -d srd0 -p $NPORT -W 30 -E" -- \
				"$SRD_PERF" --json -d srd0 -p $NPORT -W 30 -E -o $op -t bw -s "$s" -D "$DEPTH" -T "$DUR" "$IP_SERVER"
		done
		s=$RDMA_LAT_SIZE
		new_port
		measure "srd-$op-lat-$s" srd-rdma srd srd_perf lat "$s" 0 150 tcp $NPORT \
			"$SRD_PERF -S -d srd0 -p $NPORT -W 30" -- \
			"$SRD_PERF" --json -d srd0 -p $NPORT -W 30 -o $op -t lat -s "$s" -n "$(lat_iters "$s")" "$IP_SERVER"
	done
}

# shellcheck disable=SC2086,SC2153 # as perftest_rows; SGIDX_* from server-gids
# efa_perftest_rows: perftest -c SRD, as Debian ships it, on softsrd's
# libefa (srd-efa-run), at each size.  perftest's SRD mode refuses
# completion events, so both rows busy-poll: the bandwidth compares with
# the busy-polling rxe RC rows (spin_rows), the latency with rxe RC's.
# The bandwidth rows count messages (-n, as the other perftest rows): its
# timed mode (-D) ended with the client failing to exchange its results.
efa_perftest_rows() {
	local s a
	for s in $SIZES; do
		new_port
		a="-d srd0 -c SRD -F -p $NPORT -s $s -t $DEPTH -n $(bw_iters "$s")"
		measure "srd-efa-bw-$s" efa srd-efa ib_send_bw bw "$s" 0 $((DUR + 60)) tcp $NPORT \
			"$EFA_RUN ib_send_bw $a -x $SGIDX_SRD" -- \
			"$EFA_RUN" ib_send_bw $a -x "$GIDX_SRD" "$IP_SERVER"
		new_port
		a="-d srd0 -c SRD -F -p $NPORT -s $s -n $(lat_iters "$s")"
		measure "srd-efa-lat-$s" efa srd-efa ib_send_lat lat "$s" 0 150 tcp $NPORT \
			"$EFA_RUN ib_send_lat $a -x $SGIDX_SRD" -- \
			"$EFA_RUN" ib_send_lat $a -x "$GIDX_SRD" "$IP_SERVER"
	done
}

# efa_profile: srd0 again, in the efa limits profile and as the only RDMA
# device, as libfabric's efa provider needs (it refuses a machine with any
# other RDMA device, and relies on EFA's completion conventions).  Run in
# both guests (bench-guest.sh efa-profile DIR).
efa_profile() {
	local d ip4
	IF=$(nic_name)
	for d in rxe0 srd0; do
		[ ! -d "/sys/class/infiniband/$d" ] || pp rdma link del "$d"
	done
	pp sh -c "echo efa >/sys/module/rdma_srd/parameters/limits"
	pp rdma link add srd0 type srd netdev "$IF"
	wait_for "srd0 ACTIVE" 20 port_active srd0
	ip4=$(ip -4 -o addr show dev "$IF" | awk '{ sub("/.*", "", $4); print $4; exit }')
	wait_for "srd0's GID of $ip4" 20 gid_index srd0 "$(gid_of_ipv4 "$ip4")"
}

# efa_profile_once: both guests in the efa profile (efa_profile), once.
EFA_PROFILE=0
efa_profile_once() {
	[ $EFA_PROFILE = 1 ] && return 0
	both "$TOP/scripts/bench-guest.sh efa-profile $dir"
	EFA_PROFILE=1
}

# fi_iters SIZE: fi_pingpong's iterations, about 2 s of round trips here.
# Its clock includes the endpoints' first exchange (about 0.2 s under TCG,
# a handshake of libfabric's), which this many round trips make small.
fi_iters() { by_size "$1" 50 2000 200 20; }

# fi_rows: libfabric's fi_pingpong -e rdm over softsrd (efa profile), one
# size at a time, shared memory off; its figures are an average one-way
# latency (usec/xfer: half a round trip) and the MB/s that implies.
# Beside each, the fallback users run where there is no EFA (issue 48):
# the same fi_pingpong with libfabric's tcp provider on the same link
# (-p tcp -e rdm: libfabric stacks ofi_rxm on tcp for FI_EP_RDM; what
# fi_info says of it is kept as raw/fi-tcp.fi_info.txt).  The two
# alternate size by size, so that both meet the same load.
fi_rows() {
	local s e=(env FI_EFA_ENABLE_SHM_TRANSFER=0) any=0
	for s in $SIZES; do
		{ wanted "fi-rdm-$s" "fi" || wanted "fi-tcp-$s" fallback; } && any=1
	done
	[ $any = 1 ] || return 0
	efa_profile_once
	fi_info -p tcp -t FI_EP_RDM -d "$IF" >"$raw/fi-tcp.fi_info.txt" 2>&1 || true
	for s in $SIZES; do
		new_port
		efa_counters "fi-rdm-$s" before
		measure "fi-rdm-$s" "fi" srd-fi fi_pingpong lat "$s" 0 150 tcp $NPORT \
			"${e[*]} $EFA_RUN fi_pingpong -p efa -e rdm -d srd0-rdm -B $NPORT -S $s -I $(fi_iters "$s")" -- \
			"${e[@]}" "$EFA_RUN" fi_pingpong -p efa -e rdm -d srd0-rdm -P $NPORT -S "$s" \
			-I "$(fi_iters "$s")" "$IP_SERVER"
		efa_counters "fi-rdm-$s" after
		new_port
		measure "fi-tcp-$s" fallback tcp-rxm fi_pingpong lat "$s" 0 150 tcp $NPORT \
			"fi_pingpong -p tcp -e rdm -d $IF -B $NPORT -S $s -I $(fi_iters "$s")" -- \
			fi_pingpong -p tcp -e rdm -d "$IF" -P $NPORT -S "$s" -I "$(fi_iters "$s")" "$IP_SERVER"
	done
}

# MPI_BENCH: the MPI program of mpi_rows; MPI_MAX, its largest size.
MPI_BENCH=$TOP/build/selftests/srd_mpi_bench
MPI_MAX=1048576

# mpi_rows: Open MPI 4.1, as Debian ships it, running srd_mpi_bench
# (ping-pong, allreduce, alltoall from 8 B to MPI_MAX) with 2 and 4
# ranks, half in each guest: over libfabric's efa provider on softsrd
# (pml cm, mtl ofi; srd0 in the efa profile, as fi_rows leaves it,
# shared memory off) and over TCP (pml ob1, btl tcp,self), in turn.  The
# guests have no ssh: mpirun starts its daemon in the server guest through
# scripts/bench-mpi-agent.py, whose other end the server guest runs as the
# row's server.  After fi_rows, which made srd0 anew.  Only when asked
# for (bench.sh --only fallback, make bench-fallback): they take minutes,
# which make bench's 15 have no room for; not in quick mode, where each
# mpirun across the guests would take tens of seconds.  10 minutes a row
# at most: with 4 ranks over efa, one run of 2026-12-07 reached 512 KiB
# in 5.
mpi_rows() {
	local np t h a any=0
	[ -n "${ONLY:-}" ] || return 0
	for np in 2 4; do
		for t in efa tcp; do
			! wanted "mpi-$t-np$np" fallback || any=1
		done
	done
	[ $any = 1 ] || return 0
	[ "$QUICK" = 1 ] || efa_profile_once
	for np in 2 4; do
		h=$((np / 2))
		for t in efa tcp; do
			a=(-np "$np" --host "$IP_CLIENT:$h,$IP_SERVER:$h"
				--mca plm_rsh_agent "$TOP/scripts/bench-mpi-agent.py"
				--mca routed direct --mca oob_tcp_if_include 10.77.0.0/24)
			if [ "$t" = efa ]; then
				a+=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include efa
					--mca btl self -x LD_LIBRARY_PATH -x RDMAV_DRIVERS
					-x FI_EFA_ENABLE_SHM_TRANSFER)
			else
				a+=(--mca pml ob1 --mca btl "tcp,self"
					--mca btl_tcp_if_include 10.77.0.0/24)
			fi
			new_port
			if [ "$QUICK" = 1 ]; then
				skip_row "mpi-$t-np$np" fallback "mpi-$t" srd_mpi_bench mpi "$MPI_MAX" \
					"quick mode: an mpirun across the guests takes tens of seconds"
				continue
			fi
			[ "$t" != efa ] || efa_counters "mpi-$t-np$np" before
			measure "mpi-$t-np$np" fallback "mpi-$t" srd_mpi_bench mpi "$MPI_MAX" 0 600 tcp $NPORT \
				"python3 $TOP/scripts/bench-mpi-agent.py serve $IP_SERVER $NPORT" -- \
				env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
				FI_EFA_ENABLE_SHM_TRANSFER=0 BENCH_MPI_PORT=$NPORT \
				"$EFA_RUN" mpirun "${a[@]}" "$MPI_BENCH" "$MPI_MAX" 0.25
			[ "$t" != efa ] || efa_counters "mpi-$t-np$np" after
		done
	done
}

# srd_bw ID GROUP SIZE LOSS: srd_perf streaming at perftest's depth.
srd_bw() {
	new_port
	wanted "$1" "$2" && srd_counters srd0 >"$raw/$1.counters-before"
	measure "$1" "$2" srd srd_perf bw "$3" "$4" $((DUR + 60)) tcp $NPORT \
		"$SRD_PERF -S -d srd0 -p $NPORT -W 30 -E" -- \
		"$SRD_PERF" --json -d srd0 -p $NPORT -W 30 -E -t bw -s "$3" -D "$DEPTH" -T "$DUR" "$IP_SERVER"
	wanted "$1" "$2" && srd_counters srd0 >"$raw/$1.counters-after"
	return 0
}

# srd_counters DEV: every hw counter of DEV, one NAME VALUE a line (the
# client's: its DATA sent, the ACKs it got for them, the stalls).
srd_counters() {
	local f
	for f in "/sys/class/infiniband/$1/hw_counters/"*; do
		echo "${f##*/} $(cat "$f")"
	done
}

# efa_counters ID before|after: with the fallback rows, both guests' srd0
# counters around row ID's efa run, "NAME:VALUE" a line, as
# raw/ID.counters-WHEN (this guest's) and raw/ID.server-counters-WHEN,
# and after it both guests' peers and paths (debugfs: smoothed RTT, RTO,
# window) as raw/ID.paths and raw/ID.server-paths: the retransmissions
# and timeouts behind a time.  One grep a guest (a fork per counter took
# a minute under load); not in quick mode.
efa_counters() {
	local cmd
	[ "$QUICK" != 1 ] || return 0
	wanted "$1" "fi" || wanted "$1" fallback || return 0
	cmd="cd /sys/class/infiniband/srd0/hw_counters && grep . srd_*"
	[ "$2" = before ] ||
		cmd+=" && { mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; } && cat /sys/kernel/debug/rdma_srd/srd0/paths >$raw/PATHS"
	(eval "${cmd/PATHS/$1.paths}") >"$raw/$1.counters-$2" 2>&1 || true
	ctl run "{ ${cmd/PATHS/$1.server-paths}; } >$raw/$1.server-counters-$2 2>&1"
}

# both CMD: run the shell command CMD here and in the server guest at
# once (tc and rdma take seconds each under TCG).
both() {
	local pid rc=0
	echo "+ $1 (both guests)"
	bash -c "$1" &
	pid=$!
	ctl run "$1"
	wait $pid || rc=$?
	if [ $rc -ne 0 ] || [ "$REPLY" != "done 0" ]; then
		die "'$1' failed (here $rc, there '$REPLY')"
	fi
}

# egress_loss LOSS: random loss on both guests' egress (0: none).
NETEM=0
egress_loss() {
	[ "$1" = "$NETEM" ] && return 0
	if [ "$1" = 0 ]; then
		both "tc qdisc del dev $IF root"
	else
		both "tc qdisc replace dev $IF root netem loss $1%"
	fi
	NETEM=$1
}

# shellcheck disable=SC2086,SC2046,SC2153 # as perftest_rows; SGIDX_* from server-gids
# rxe may stall or give up under loss: a shorter leash, and the outcome is
# what the row reports.
loss_rows_rxe() {
	local l a
	wanted - loss || return 0
	for l in $LOSSES; do
		egress_loss "$l"
		new_port
		a="-d rxe0 -c RC -F -p $NPORT -s $LOSS_SIZE -t $DEPTH -n $(bw_iters "$LOSS_SIZE") -e"
		measure "loss-rxe-rc-$l" loss rxe-rc ib_send_bw bw "$LOSS_SIZE" "$l" \
			$((DUR + 40)) tcp $NPORT "$(verbs_env rxe0) ib_send_bw $a -x $SGIDX_RXE" -- \
			$(verbs_env rxe0) ib_send_bw $a -x "$GIDX_RXE" "$IP_SERVER"
	done
	egress_loss 0
}

loss_rows_srd() {
	local l
	wanted - loss || return 0
	for l in $LOSSES; do
		egress_loss "$l"
		srd_bw "loss-srd-$l" loss "$LOSS_SIZE" "$l"
	done
	egress_loss 0
}

# verbs_env DEV: how to run a verbs program on DEV.  rxe's need no libsrd,
# and are kept from loading it: see rxe_blocks_srd.
verbs_env() {
	case "$1" in
	rxe*) echo "env -u RDMAV_DRIVERS" ;;
	*) echo "env" ;;
	esac
}

# rxe_blocks_srd: whether verbs programs that load libsrd crash while an
# rxe device exists (libsrd 0.1.0 has no match_table, and libibverbs
# dereferences it for every device whose driver it knows, such as rxe).
# Then rxe0 goes before the softsrd rows, and the table says so.
rxe_blocks_srd() {
	local rc=0
	ibv_devices >/dev/null 2>&1 || rc=$?
	[ $rc -ne 0 ] && echo "bench-guest: ibv_devices with libsrd and rxe0 exits $rc"
	[ $rc -ne 0 ]
}

drop_rxe() {
	both "rdma link del rxe0"
	echo "rxe0 was removed before the softsrd rows: with it, verbs programs loading libsrd crashed" >"$dir/rxe_removed"
}

# shellcheck disable=SC2153 # SGIDX_* come from server-gids
run_client() {
	setup "$IP_CLIENT"
	CLK=$(getconf CLK_TCK)
	# shellcheck disable=SC2046 # verbs_env's words split on purpose
	UD_MAX=$(active_mtu rxe0 $(verbs_env rxe0))
	[ "$SRD_MTU" -ge "$UD_MAX" ] || UD_MAX=$SRD_MTU
	echo "bench-guest: UD messages up to $UD_MAX B (rxe0 and srd0 active MTU)"
	echo "$UD_MAX" >"$dir/ud_max"
	ctl_connect
	write_header
	limit_rows
	# rxe first, then softsrd: rxe0 may have to go before softsrd's rows.
	perftest_rows rxe0 "$GIDX_RXE" "$SGIDX_RXE" rxe-rc RC
	perftest_rows rxe0 "$GIDX_RXE" "$SGIDX_RXE" rxe-ud UD
	loss_rows_rxe
	spin_rows rxe
	scale_rows rxe
	if rxe_blocks_srd; then drop_rxe; fi
	perftest_rows srd0 "$GIDX_SRD" "$SGIDX_SRD" srd-ud UD
	srd_rows
	spin_rows srd
	scale_rows srd
	srd_rdma_rows
	efa_perftest_rows
	loss_rows_srd
	# Four ECMP links between namespaces of this guest, one black-holed.
	if wanted - multipath; then
		"$TOP/scripts/bench-multipath.sh" "$dir" "$DUR" "$LOSS_SIZE" "$DEPTH"
	fi
	# Four senders into one receiver through a bottleneck, SRD and TCP.
	if wanted - incast; then
		"$TOP/scripts/bench-incast.sh" "$dir" "$INCAST_SECS" "$INCAST_SIZE" "$DEPTH" \
			"$INCAST_MBIT"
	fi
	# Last: they take rxe0 away and make srd0 anew.
	fi_rows
	mpi_rows
	ctl quit
	echo "bench-guest: all measurements done"
}

mkdir -p "$raw"
# bench.sh --pin: this script and every program it starts on one CPU.
if [ -n "${PIN:-}" ]; then
	pp taskset -pc "$PIN" $$
fi
case "$role" in
server) run_server ;;
client) run_client ;;
efa-profile) efa_profile ;;
*) die "unknown role $role" ;;
esac
