#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The rings are shared with userspace: ibv_post_recv and ibv_poll_cq make
# no system call, and ibv_post_send makes exactly one, a write() doorbell,
# per call (a list of WRs included).  srd_cq --syscalls marks each stretch
# with access("/srd-mark/NAME/begin"|"end"); strace counts what is between.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd strace
bin=$(srd_bin srd_cq)
two_hosts ssy
n=100
log=$(mktemp /tmp/srd_cq_syscalls.XXXXXX)
defer rm -f "$log"
try strace -f -qq -o "$log" "$bin" --syscalls $n "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" ||
	fail "srd_cq --syscalls reported failures"

# stretch NAME: "TOTAL name=count ..." for the calls between NAME's markers.
stretch() {
	awk -v name="$1" '
	index($0, "/srd-mark/" name "/begin") { on = 1; next }
	index($0, "/srd-mark/" name "/end") { on = 0; next }
	on && !/^[0-9 ]*(---|\+\+\+)/ {
		s = $0
		sub(/^[0-9]+ +/, "", s)
		sub(/\(.*/, "", s)
		total++; c[s]++
	}
	END {
		printf "%d", total + 0
		for (k in c) printf " %s=%d", k, c[k]
		print ""
	}' "$log"
}
grep -q '/srd-mark/poll_full/end' "$log" || fail "the markers are missing from the strace log"
for s in post_recv poll_empty poll_full; do
	out=$(stretch $s)
	echo "$s: $out"
	expect_eq "system calls during $n+ $s" 0 "${out%% *}"
done
out=$(stretch post_send)
echo "post_send: $out"
expect_eq "system calls during $n single-WR post_send" "$n write=$n" "$out"
out=$(stretch post_send_list8)
echo "post_send_list8: $out"
expect_eq "system calls of one post_send of 8 WRs" "1 write=1" "$out"
