#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run softsrd's selftests and print kselftest TAP: one "ok"/"not ok" line a
# test, its output as "# " diagnostics, "# SKIP" for exit status 4.  A
# test that leaves a network namespace, a netdev or an RDMA device behind
# (lib.sh's cleanup missed it) fails, with what it left.
#
#   run_tests.sh [-t TIMEOUT_S] [-o OUTPUT_DIR] TEST...

set -u
timeout_s=180
output=.
while getopts "t:o:" opt; do
	case $opt in
	t) timeout_s=$OPTARG ;;
	o) output=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
here=$(cd "$(dirname "$0")" && pwd)

# guest_state: what a test must leave as it found it, a line a thing.
guest_state() {
	ip netns list | awk '{ print "netns " $1 }'
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print "netdev " $2 }'
	find /sys/class/infiniband -mindepth 1 -maxdepth 1 -printf 'rdma device %f\n' 2>/dev/null
}

# left_behind BEFORE: what is there now and was not in BEFORE, after up
# to 15 s (devices of a deleted namespace go asynchronously).
left_behind() {
	local deadline=$((SECONDS + 15)) extra
	while :; do
		extra=$(guest_state | awk -v before="$1" 'BEGIN {
			n = split(before, b, "\n")
			for (i = 1; i <= n; i++)
				seen[b[i]] = 1
		} !($0 in seen)')
		[ -n "$extra" ] && [ $SECONDS -lt $deadline ] || break
		sleep 0.5
	done
	echo "$extra"
}

echo "TAP version 13"
echo "1..$#"
n=0
pass=0
fail=0
skipped=0
for t in "$@"; do
	n=$((n + 1))
	path=$here/$t
	[ -x "$path" ] || path=$output/$t
	echo "# selftests: srd: $t"
	before=$(guest_state)
	start=$(date +%s%N)
	timeout -k 5 "$timeout_s" "$path" 2>&1 | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	left=$(left_behind "$before")
	if [ -n "$left" ]; then
		sed 's/^/# left behind: /' <<<"$left"
		[ "$rc" -eq 124 ] || rc=1
	fi
	ms=$((($(date +%s%N) - start) / 1000000))
	secs=$((ms / 1000)).$((ms % 1000 / 100))
	case $rc in
	0) echo "ok $n selftests: srd: $t # ${secs}s"; pass=$((pass + 1)) ;;
	4) echo "ok $n selftests: srd: $t # SKIP"; skipped=$((skipped + 1)) ;;
	124) echo "not ok $n selftests: srd: $t # TIMEOUT ${timeout_s}s"; fail=$((fail + 1)) ;;
	*) echo "not ok $n selftests: srd: $t # exit=$rc"; fail=$((fail + 1)) ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skipped error:0"
[ $fail -eq 0 ]
