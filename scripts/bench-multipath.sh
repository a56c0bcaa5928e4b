#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The multipath rows of `make bench`, inside one guest:
#
#   bench-multipath.sh DIR SECS SIZE DEPTH
#
# SRD between two namespaces joined by two routers and four equal-cost
# links (selftests/lib.sh's ecmp_hosts, an L4 hash on both routers: the
# spraying happens in the "switches", as in a fabric).  srd_perf -E streams
# SIZE-byte messages, DEPTH in flight, for SECS seconds: once with every
# link up, then with one link black-holed both ways (netem loss 100 %),
# then with issue 49's mix of trouble (selftests/srd_multipath_mix.sh):
# data loss on p1, ACK loss with 1 ms reordering on q2, duplication and
# corruption on p3.
# Each run's output goes to DIR/raw/multipath-*.txt and a line to
# DIR/index.tsv (bench_record, scripts/common.sh); srd_perf checks
# every message's bytes and reports corrupt, duplicate and missing ones.
# Nothing here judges the figures.

set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
dir=$1 secs=$2 size=$3 depth=$4
raw=$dir/raw
# ecmp_hosts, perf_pair and the rest; busy_ticks, bench_record
# (scripts/common.sh).
# shellcheck source=selftests/lib.sh
. "$TOP/selftests/lib.sh"
OUTPUT=$TOP/build/selftests

clk=$(getconf CLK_TCK)

# one ID LOSS_LINKS: one srd_perf run, LOSS_LINKS black-holed; "mix":
# none black-holed, issue 49's mix on three.
one() {
	local id=$1 dead=$2 b0 b1 t0 t1 rc=0 i what
	for ((i = 0; i < ECMP_N; i++)); do
		if [ "$dead" != mix ] && [ "$i" -lt "$dead" ]; then
			netem "$NS_R1" "${ECMP_P[i]}" loss 100% >/dev/null
			netem "$NS_R2" "${ECMP_Q[i]}" loss 100% >/dev/null
		else
			netem "$NS_R1" "${ECMP_P[i]}" none >/dev/null
			netem "$NS_R2" "${ECMP_Q[i]}" none >/dev/null
		fi
	done
	what="$dead of $ECMP_N links black-holed"
	if [ "$dead" = mix ]; then
		netem "$NS_R1" p1 loss 5% >/dev/null
		netem "$NS_R2" q2 loss 5% delay 1ms reorder 25% 50% >/dev/null
		netem "$NS_R1" p3 duplicate 5% corrupt 1% >/dev/null
		what="loss on p1, ACK loss and reordering on q2, duplication and corruption on p3"
	fi
	echo "=== $id: $what"
	b0=$(busy_ticks)
	t0=$(date +%s%N)
	# perf_pair indents srd_perf's lines; its result line is repeated
	# as printed, for bench-table.py.
	( perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -E -- -d "$DEV_A" -W 30 -E -t bw \
		-s "$size" -D "$depth" -T "$secs" "$MGMT_B" &&
		printf '%s\n' "$PAIR_CLIENT_OUT" ) >"$raw/$id.client.txt" 2>&1 || rc=$?
	t1=$(date +%s%N)
	b1=$(busy_ticks)
	srd_counters "$DEV_A" "$DEV_B" >>"$raw/$id.client.txt"
	tail -n 4 "$raw/$id.client.txt" | sed 's/^/  | /'
	bench_record "$dir" "$id" multipath srd srd_perf bw "$size" \
		"$dead/$ECMP_N" "$rc" "$rc" "$(((t1 - t0) / 1000000000))" \
		"$((b1 - b0))" - "$clk" "links $ECMP_N, ${what//$'\t'/ }"
}

modprobe sch_netem 2>/dev/null
ecmp_hosts mp >"$raw/multipath-setup.txt" 2>&1 ||
	{ bench_record "$dir" multipath-setup multipath srd srd_perf bw "$size" - \
		1 - - - - "$clk" "setup failed"; exit 0; }
one multipath-0 0
one multipath-1 1
one multipath-mix mix
srd_cleanup >/dev/null 2>&1
exit 0
