#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run softsrd's selftests and print kselftest TAP: one "ok"/"not ok" line a
# test, its output as "# " diagnostics, "# SKIP" for exit status 4.
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
	start=$(date +%s%N)
	timeout -k 5 "$timeout_s" "$path" 2>&1 | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
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
