#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# An interleaved A/B of the 64 B latency pair of issue 17's target:
# `ib_send_lat -c SRD` on softsrd's libefa against softsrd UD.
#
#   scripts/bench-ab.sh [--kernel VER] [--pin CPU] [--runs N]
#                       [--lat-iters N] [--out DIR] A B
#
# A and B are each a softsrd tree built in place (`make`; its own
# scripts/bench.sh runs, with its module and libraries), or
# 'param:NAME=VALUE[ NAME=VALUE...]': this tree with those rdma_srd
# module parameters (bench.sh --param).  Runs go A, B, A, B, ... N times
# each (default 3), each one boot of the guest pair measuring the two
# rows (bench.sh --only 'srd-ud-lat-64 srd-efa-lat-64'), into
# DIR/A-1, DIR/B-1, ... (default build/ab/DATE/).  Prints each run's two
# p50s and their ratio, then each side's means and B's over A's.
# Interleaving spreads the host's drift over both sides; --pin (bench.sh
# --pin, e.g. 0) removes the scheduler's placement of the programs, which
# unpinned moved the ratio by more than most changes do
# (docs/performance.md).  Exit 1 when a run gave no figure.

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/common.sh
. "$TOP/scripts/common.sh"
kernel=6.1
pin=
runs=3
iters=3000
out=

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--pin)
		[[ "${2-}" =~ ^[0-9]+$ ]] || die "--pin takes a CPU number, not '${2-}'"
		pin=$2
		shift 2
		;;
	--runs)
		[[ "${2-}" =~ ^[1-9][0-9]*$ ]] || die "--runs takes a count, not '${2-}'"
		runs=$2
		shift 2
		;;
	--lat-iters)
		[[ "${2-}" =~ ^[1-9][0-9]*$ ]] || die "--lat-iters takes a count, not '${2-}'"
		iters=$2
		shift 2
		;;
	--out) out=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "bench-ab: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || die "give A and B (see --help)"
for side in "$1" "$2"; do
	case $side in
	param:*) ;;
	*) [ -x "$side/scripts/bench.sh" ] ||
		die "$side is neither param:NAME=VALUE nor a softsrd tree" ;;
	esac
done
[ -n "$out" ] || out=$TOP/build/ab/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)

# one SIDE TAG: a boot of the pair for SIDE, into $out/TAG.
one() {
	local side=$1 dir=$out/$2 tree=$TOP p
	local -a args=(--kernel "$kernel" --lat-iters "$iters" --out "$dir"
		       --only 'srd-ud-lat-64 srd-efa-lat-64')
	[ -z "$pin" ] || args+=(--pin "$pin")
	case $side in
	param:*)
		for p in ${side#param:}; do
			args+=(--param "$p")
		done
		;;
	*) tree=$side ;;
	esac
	"$tree/scripts/bench.sh" "${args[@]}" >"$dir.log" 2>&1 ||
		echo "bench-ab: $2: bench.sh failed, see $dir.log" >&2
}

for i in $(seq 1 "$runs"); do
	one "$1" "A-$i"
	one "$2" "B-$i"
done

python3 - "$out" "$runs" "$1" "$2" <<'PY'
import json, statistics, sys

out, runs, sides = sys.argv[1], int(sys.argv[2]), {"A": sys.argv[3], "B": sys.argv[4]}
p50s, failed = {"A": [], "B": []}, 0
for i in range(1, runs + 1):
    for s in "AB":
        tag = "%s-%d" % (s, i)
        try:
            with open("%s/%s/results.json" % (out, tag)) as f:
                recs = json.load(f)["records"]
            m = {r["id"]: r.get("metrics") or {} for r in recs}
            srd, ud = m["srd-efa-lat-64"]["p50_us"], m["srd-ud-lat-64"]["p50_us"]
        except (OSError, ValueError, KeyError, TypeError):
            print("%s: no figure (%s/%s)" % (tag, out, tag))
            failed += 1
            continue
        p50s[s].append((srd, ud))
        print("%s: -c SRD p50 %.1f us, UD %.1f, ratio %.2f" % (tag, srd, ud, srd / ud))
mean = {}
for s in "AB":
    v = p50s[s]
    if not v:
        continue
    mean[s] = [statistics.fmean(x[0] for x in v), statistics.fmean(x[1] for x in v),
               statistics.fmean(x[0] / x[1] for x in v)]
    print("%s (%s), %d runs: mean -c SRD p50 %.1f us, UD %.1f, ratio %.2f" %
          ((s, sides[s], len(v)) + tuple(mean[s])))
if len(mean) == 2:
    print("B / A: -c SRD p50 %.3f, UD p50 %.3f, ratio %.3f" %
          tuple(b / a for a, b in zip(mean["A"], mean["B"])))
sys.exit(1 if failed else 0)
PY
