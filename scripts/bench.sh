#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softsrd's benchmark: raw UDP, rxe and softsrd over one link between two
# qemu guests, in one boot of the pair, and a markdown table of the results.
#
#   scripts/bench.sh [--kernel VER] [--quick] [--mtu BYTES] [--out DIR]
#                    [--only 'PATTERN...'] [--param NAME=VALUE]...
#                    [--profile] [--trace] [--lat-iters N] [--pin CPU]
#
# Two guests of the same kernel (scripts/vm-run.sh, default 6.1) are joined
# by a virtio-net link over qemu UDP socket networking: A (10.77.0.1) serves,
# B (10.77.0.2) drives, telling A over a TCP control channel on the same
# link what to start (scripts/bench-guest.sh, scripts/bench-serve.py).
# rxe works only in init_net on these kernels, and two addresses in one
# guest would short-circuit through loopback: hence two guests.  Each guest
# has rxe0 and srd0 on the one NIC, so every row crosses the same path.
#
# The raw output of every command, index.tsv (a line per measurement),
# results.json (a record per measurement) and table.md stay in DIR
# (default build/bench/DATE-KVER[-quick]/).  The figures come from a TCG
# guest on a shared machine: compare rows of one run, not runs.
#
# --quick runs one size for a second each, and fails (exit 1) when a row
# that should have a number has none: a smoke test for `make check`, so
# that the harness cannot rot.  No mode judges the figures themselves.
# iperf3 and sockperf come from scripts/install-deps.sh.
#
# --only takes the measurements whose id or group matches one of the
# shell patterns (ids are the first column of index.tsv: 'srd-lat-*',
# '*-lat-64', 'srd-write-lat-64'; groups: limit, perftest, srd, srd-rdma,
# spin, scale, efa, loss, multipath, incast, fi, fallback), for work on a
# few rows: the others are not measured, and the table says so.  The
# fallback group (issue 48: libfabric's tcp provider beside the fi rows'
# efa on softsrd, which it brings along, and Open MPI over TCP beside
# Open MPI over efa) is make bench-fallback; its MPI rows run only when
# asked for by --only, since they take minutes.
#
# --param sets rdma_srd's module parameter NAME (a tunable of
# man/rdma_srd.7) to VALUE in both guests before srd0 is made, for an A/B
# run of one setting: `--param ack_reply_wait_us=0`.  The table names it.
#
# --profile counts the guests' instructions (a qemu plugin,
# tools/insn_profile) and snapshots both guests' counts before and after
# each row's client runs, into DIR/profile/, with srd0's counters and
# peers beside them; `scripts/bench-profile.py DIR ROW [BASE_ROW]` then
# prints the kernel instructions per message of each guest, the functions
# they went to, and the counters that moved per message.  Every row but the multipath and
# incast ones (their own scripts) is profiled; about 7 MB of snapshots a
# row: use it with --only.
#
# --trace records, in both guests while each row's client runs, the
# kernel's events for every packet sent and received on the NIC, the
# programs' write()s (libsrd's doorbell), rdma_srd's receive completions
# and UDP sends, the clock event device's programming and the
# interrupts (ftrace and kprobes, into DIR/trace/; bench-guest.sh's
# TRACE_EVENTS); `scripts/bench-trace.py DIR ROW [BASE_ROW]` then splits
# a latency row's round trip into each guest's turnaround, its parts,
# and the time between the guests.  Use it with --only.
#
# --lat-iters sets the round trips of the 64 B latency rows (default
# 1000; not with --quick).  Two profiled runs of one row at two counts give its cost per
# message without the programs' setup: bench-profile.py --minus.
#
# --pin runs every program of both guests (servers, clients, this
# harness) on their CPU number CPU (taskset), where otherwise the
# scheduler places each as it will.  A busy-polling program on the CPU
# that takes the NIC's interrupts runs the receive's softirq itself; on
# the other CPU it waits for that CPU's vCPU to be run too.  Unpinned,
# eight runs of the 64 B SRD/UD latency ratio spread over 1.20-1.67;
# pinned to CPU 0, ten over 1.51-1.65 (docs/performance.md): an A/B of
# a few percent needs that.  The table's rows are taken unpinned, as
# the tools run by default.
#
# --mtu sets the link's MTU (default 9000, so that rxe's and srd's active
# MTU is 4096 and 4 KiB UD messages fit).

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# try, die, resolve_kernel, usage (this header)
# shellcheck source=scripts/common.sh
. "$TOP/scripts/common.sh"
BUILD=${SRD_BUILD:-$TOP/build}
kernel=6.1
quick=0
mtu=9000
out=
only=
params=
profile=0
trace=0
lat_iters=
pin=

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--mtu) mtu=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--profile) profile=1; shift ;;
	--trace) trace=1; shift ;;
	--lat-iters)
		[[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--lat-iters takes a count, not '$2'"
		lat_iters=$2
		shift 2
		;;
	--pin)
		[[ "${2-}" =~ ^[0-9]+$ ]] || die "--pin takes a CPU number, not '${2-}'"
		pin=$2
		shift 2
		;;
	--param)
		[[ "$2" =~ ^[a-z0-9_]+=[^[:space:]\']+$ ]] ||
			die "--param takes NAME=VALUE, not '$2'"
		params+="${params:+ }$2"
		shift 2
		;;
	-h|--help) usage ;;
	*) echo "bench: unknown option $1" >&2; usage ;;
	esac
done

# scripts/install-deps.sh installs them (make bench runs it first).
need_tools() {
	local -a missing=()
	command -v iperf3 >/dev/null || missing+=(iperf3)
	command -v sockperf >/dev/null || missing+=(sockperf)
	command -v ib_send_bw >/dev/null || missing+=(perftest)
	[ ${#missing[@]} -eq 0 ] ||
		die "missing ${missing[*]}: run scripts/install-deps.sh"
}

# A free UDP port on the host for one end of the guests' link.
free_port() {
	local p
	while :; do
		p=$((30000 + RANDOM % 20000))
		ss -Hlun "sport = :$p" | grep -q . || { echo $p; return; }
	done
}

# The settings both guests read (scripts/bench-guest.sh).
write_params() {
	local sizes dur losses loss_size scale_qps scale_msgs incast_secs
	if [ $quick -eq 1 ]; then
		# The 0 % loss row is the bandwidth row of the same size.
		sizes=4096 dur=1 losses=1 loss_size=4096 scale_qps="1 16"
		scale_msgs=200 incast_secs=2
	else
		sizes="64 4096 65536 1048576" dur=3 losses="0 0.1 1 5" loss_size=65536
		scale_qps="1 16 256 1024" scale_msgs=2000 incast_secs=10
	fi
	cat >"$out/params" <<-EOF
		QUICK=$quick
		MTU=$mtu
		SIZES="$sizes"
		DUR=$dur
		DEPTH=16
		LOSSES="$losses"
		LOSS_SIZE=$loss_size
		SCALE_QPS="$scale_qps"
		SCALE_SIZE=16384
		SCALE_INFLIGHT=64
		SCALE_MSGS=$scale_msgs
		INCAST_SIZE=16384
		INCAST_MBIT=80
		INCAST_SECS=$incast_secs
		ONLY='$only'
		SRD_PARAMS='$params'
		PROFILE=$profile
		TRACE=$trace
		LAT_ITERS=$lat_iters
		PIN=$pin
	EOF
}

# What the table says about the machine and the run.
write_machine() {
	{
		echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "kernel=$kver"
		echo "nproc=$(nproc)"
		echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
		echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
		echo "qemu=$(qemu-system-x86_64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')"
		echo "commit=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)"
		echo "quick=$quick"
		echo "mtu=$mtu"
		echo "only=$only"
		echo "params=$params"
		echo "profile=$profile"
		echo "trace=$trace"
		echo "lat_iters=$lat_iters"
		echo "pin=$pin"
	} >"$out/machine"
}

# The same kernel as vm-run.sh's, for the directory name and the table.
kver=$(resolve_kernel "$kernel") || exit 1
need_tools
# Never the module: it is built by `make` (the bench target depends on it).
try make -s -C "$TOP" NODEPS=1 provider selftests || die "building libsrd and srd_perf failed"
[ -f "$BUILD/kernel/$kver/rdma_srd.ko" ] ||
	die "$BUILD/kernel/$kver/rdma_srd.ko is missing: run 'make KVER=$kver' first"
for p in $params; do
	modinfo -F parm "$BUILD/kernel/$kver/rdma_srd.ko" | grep -q "^${p%%=*}:" ||
		die "--param ${p%%=*}: rdma_srd has no such parameter (modinfo -F parm)"
done

suffix=
[ $quick -eq 0 ] || suffix=-quick
[ -n "$out" ] || out=$BUILD/bench/$(date +%Y%m%d-%H%M%S)-$kver$suffix
mkdir -p "$out/raw"
[ $trace -eq 0 ] || mkdir -p "$out/trace"
out=$(cd "$out" && pwd)
rm -f "$out/index.tsv" "$out/server-gids"
write_params
write_machine
echo "bench: results in $out"

# The guests' link: a UDP port on the host for each end.
timeout_s=$([ $quick -eq 1 ] && echo 420 || echo 2400)
pa=$(free_port)
pb=$(free_port)
[ "$pa" != "$pb" ] || pb=$((pa + 1))
start=$(date +%s)
vm=("$TOP/scripts/vm-run.sh" --kernel "$kver" --timeout "$timeout_s" --share "$out")
plugin_a=() plugin_b=()
if [ $profile -eq 1 ]; then
	try make -s -C "$TOP/tools/insn_profile" O="$BUILD/tools" ||
		die "building the instruction-count plugin failed"
	mkdir -p "$out/profile"
	so=$BUILD/tools/insn_profile.so
	plugin_a=(--plugin "file=$so,dir=$out/profile,name=server")
	plugin_b=(--plugin "file=$so,dir=$out/profile,name=client")
fi
echo "+ ${vm[*]} --nic udp:$pa:$pb ... -- bench-guest.sh server &"
# In a process group of its own (setsid), so that it can be stopped
# with its qemu: below, and if this script ends early.
setsid "${vm[@]}" "${plugin_a[@]}" --nic "udp:$pa:$pb" --mac 52:54:00:77:00:01 -- \
	"$TOP/scripts/bench-guest.sh" server "$out" >"$out/guest-a.log" 2>&1 &
apid=$!
trap 'kill -- -$apid 2>/dev/null' EXIT
crc=0
echo "+ ${vm[*]} --nic udp:$pb:$pa ... -- bench-guest.sh client"
"${vm[@]}" "${plugin_b[@]}" --nic "udp:$pb:$pa" --mac 52:54:00:77:00:02 -- \
	"$TOP/scripts/bench-guest.sh" client "$out" 2>&1 | tee "$out/guest-b.log" || crc=$?
# The server guest ends when the client says quit, a few seconds later.
# One that never came up (a TCG guest once hung in early boot, and the
# client gave up on it after 3 minutes) would run to the timeout, 40
# minutes: with the client gone it has nothing left to do, so it gets
# SERVER_GRACE_S seconds and is then stopped.
SERVER_GRACE_S=60
arc=0
for ((i = 0; i < SERVER_GRACE_S; i++)); do
	kill -0 $apid 2>/dev/null || break
	sleep 1
done
if kill -0 $apid 2>/dev/null; then
	echo "bench: the server guest still runs ${SERVER_GRACE_S}s after the client ended: stopping it"
	kill -- -$apid 2>/dev/null
fi
wait $apid || arc=$?
trap - EXIT
echo "duration_s=$(($(date +%s) - start))" >>"$out/machine"
echo "bench: guests done in $(($(date +%s) - start))s (client exit $crc, server exit $arc)"
[ $arc -eq 0 ] || { echo "--- server guest log:"; tail -40 "$out/guest-a.log"; }

# The engine alone, on the host, after the guests: nothing else runs.
try make -s -C "$TOP/engine" "$BUILD/engine/bench" O="$BUILD/engine" ||
	die "building the engine benchmark failed"
n=$([ $quick -eq 1 ] && echo 2000 || echo 20000)
# Sends without and with the copies, in turn, three times: the table
# takes each one's best, which a busy host disturbs least.
for a in "-k send -c" "-k send" "-k send -c" "-k send" "-k send -c" "-k send" \
	"-k write" "-k read"; do
	# shellcheck disable=SC2086 # the options are words
	"$BUILD/engine/bench" -n "$n" $a
done | tee "$out/engine.txt"

trc=0
check=()
[ $quick -eq 0 ] || check=(--check)
python3 "$TOP/scripts/bench-table.py" "${check[@]}" "$out" || trc=$?
echo "bench: raw outputs and results in $out"
[ $crc -eq 0 ] && [ $arc -eq 0 ] && [ $trc -eq 0 ]
