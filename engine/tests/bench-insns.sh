#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softsrd engine: its own cost, as callgrind counts it (issue 48, item 5).
#
#   engine/tests/bench-insns.sh BENCH [KIND]     (make -C engine bench-insns)
#
# Runs BENCH -k KIND (send by default) -c, 64 KiB messages, under callgrind
# with 2000 and with 4000 messages: the second less the first (the
# engines' setup and teardown drop out) over the packets (DATA and ACK,
# both directions) and over the messages between them.  Instructions are
# the whole program's: the bench's OS layer does little beside the engine
# (no copies with -c).  docs/performance.md keeps the history of the
# send figure; a change that raises it more than 2 % says why in its
# commit.  Prints one line:
#   engine_insns: kind=K copy=0 insns_per_pkt=P insns_per_msg=M (4000 less 2000 messages)
set -eu

bench=${1:?usage: bench-insns.sh BENCH [KIND]}
kind=${2:-send}
if ! command -v valgrind >/dev/null; then
	echo "engine_insns: kind=$kind valgrind (callgrind) is not installed: not measured"
	exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# "INSTRUCTIONS PACKETS" of one run of $1 messages.
run() {
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" \
		"$bench" -n "$1" -k "$kind" -c >"$out/out.$1" 2>"$out/err.$1"
	ir=$(sed -n 's/.* I *refs: *\([0-9,]*\).*/\1/p' "$out/err.$1" | tr -d ,)
	pkts=$(sed -n 's/.* pkts=\([0-9]*\) .*/\1/p' "$out/out.$1")
	echo "$ir $pkts"
}

a=$(run 2000)
b=$(run 4000)
echo "$a $b" | awk -v k="$kind" '{
	printf "engine_insns: kind=%s copy=0 insns_per_pkt=%.1f insns_per_msg=%.0f ",
		k, ($3 - $1) / ($4 - $2), ($3 - $1) / 2000
	printf "(4000 less 2000 messages)\n" }'
