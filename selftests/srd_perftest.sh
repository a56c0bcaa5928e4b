#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest's ib_send_bw and ib_send_lat in UD mode complete between two
# srd devices in two namespaces and report their figures.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd ib_send_bw ib_send_lat
two_hosts spf

# perf TOOL ARGS...: run TOOL as server and client; print its figures.
perf() {
	local tool=$1 figures
	shift
	run_pair 18515 "$NS_A" "$NS_B" \
		"$tool" -d "$DEV_A" -i 1 -x "$GIDX4_A" -c UD -F "$@" -- \
		"$tool" -d "$DEV_B" -i 1 -x "$GIDX4_B" -c UD -F "$@" "$IP4_A"
	# The results: the line after the "#bytes" header, all numbers.
	figures=$(awk '/^ *#bytes/ { getline; print; exit }' <<<"$PAIR_CLIENT_OUT")
	echo "$tool $*: $(awk '/^ *#bytes/ { print; exit }' <<<"$PAIR_CLIENT_OUT" | tr -s ' ')"
	echo "$tool $*: $(tr -s " \t" " " <<<"$figures")"
	expect_match "$tool $* reports figures" '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+([[:space:]]+[0-9.]+)+[[:space:]]*$' "$figures"
}

perf ib_send_bw -s 1024 -n 1000
perf ib_send_lat -s 2 -n 1000
exit $KSFT_PASS
