#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softsrd engine: peers at scale, in the simulator (issue 48, item 4).
#
#   engine/tests/bench-scale.sh SIM [NODES]      (make -C engine bench-scale)
#
# 1. An all-to-all among NODES engines (1000 by default), every one
#    holding a peer for every other, 1 % of the packets lost: the sim's
#    scale_all_to_all, which checks every message; its message times
#    (p50, p99, max), Jain's index of the senders' goodput (>= 0.95
#    wanted) and the memory an engine takes per peer.
# 2. The engine's instructions per packet at 10 and at NODES peers, under
#    callgrind: scale_fanout, where every node sends 4 messages to each of
#    9 others, at --scale 1 and 2; the second run less the first (setup,
#    a million peers made and freed, drops out), the engine's own sources'
#    instructions (engine/*.c and its headers, not the simulator's, not
#    libc's) over the packets sent.  10 nodes send few packets: their
#    figure is of 20 seeds' runs together (--seeds 20, one process).  At
#    most 1.2x at NODES what it is at 10.
#
# Prints "scale_*" lines; exits 1 if a run fails or a target is missed.
set -eu

sim=${1:?usage: bench-scale.sh SIM [NODES]}
nodes=${2:-1000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0

echo "# all-to-all among $nodes engines"
if ! "$sim" --scenario scale_all_to_all --nodes "$nodes" >"$out/all.txt"; then
	rc=1
fi
grep -E '^#   (scale|pkts|last)|^(not )?ok|FAILED' "$out/all.txt" || true
jain=$(sed -n 's/.*goodput Jain \([0-9.]*\).*/\1/p' "$out/all.txt")
echo "scale_all_to_all: nodes=$nodes jain=${jain:-none} (at least 0.95 wanted)"
if [ -z "$jain" ] || awk -v j="$jain" 'BEGIN { exit !(j < 0.95) }'; then
	rc=1
fi

if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
	echo "scale_insns: valgrind (callgrind) is not installed: not measured"
	exit "$rc"
fi

# The engine's instructions and the packets sent of NODES SCALE SEEDS: "IR PKTS".
measure() {
	f="$out/cg.$1.$2"
	if ! valgrind --tool=callgrind --callgrind-out-file="$f" "$sim" \
		--scenario scale_fanout --nodes "$1" --scale "$2" --seeds "$3" \
		>"$f.txt" 2>/dev/null; then
		grep -E 'FAILED|^not ok' "$f.txt" >&2 || true
		echo failed
		return
	fi
	pkts=$(sed -n 's/^#   pkts \([0-9]*\),.*/\1/p' "$f.txt" | awk '{ s += $1 } END { print s }')
	ir=$(cd / && callgrind_annotate --auto=no --inclusive=no --threshold=100 "$f" |
		awk '/\/engine\/[a-z_]+\.[ch]:/ {
			gsub(",", "", $1); s += $1 } END { printf "%.0f", s }')
	echo "$ir $pkts"
}

# The engine's instructions per packet at NODES, of SEEDS: a scale_insns line.
per_pkt() {
	r1=$(measure "$1" 1 "$2")
	r2=$(measure "$1" 2 "$2")
	case "$r1 $r2" in
	*failed*)
		echo "scale_insns: peers=$(($1 - 1)) insns_per_pkt=none (a run failed)"
		return
		;;
	esac
	echo "$r1 $r2" | awk -v peers=$(($1 - 1)) -v seeds="$2" '{
		printf "scale_insns: peers=%d insns_per_pkt=%.1f ", peers, ($3 - $1) / ($4 - $2)
		printf "(engine instructions %d over %d packets, --scale 2 less 1, %d seeds)\n",
			$3 - $1, $4 - $2, seeds }'
}

per_pkt 10 20 | tee "$out/small"
per_pkt "$nodes" 1 | tee "$out/big"
small=$(sed -n 's/.*insns_per_pkt=\([0-9.]*\).*/\1/p' "$out/small")
big=$(sed -n 's/.*insns_per_pkt=\([0-9.]*\).*/\1/p' "$out/big")
if [ -z "$small" ] || [ -z "$big" ]; then
	echo "scale_insns: ratio=none (at most 1.2 wanted)"
	exit 1
fi
ratio=$(awk -v a="$small" -v b="$big" 'BEGIN { printf "%.3f", b / a }')
echo "scale_insns: ratio=$ratio (at most 1.2 wanted)"
if awk -v r="$ratio" 'BEGIN { exit !(r > 1.2) }'; then
	rc=1
fi
exit "$rc"
