#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Debian's perftest, unmodified, in SRD mode (-c SRD: efadv_create_qp_ex
# and efadv_query_device from libefa.so.1) between two namespaces, under
# srd-efa-run, in both limits profiles: ib_send_bw and ib_send_lat report
# figures, and the SRD counters show the messages went through softsrd.
# The link has a 1500-byte MTU, as on a hosted CI runner: the efa profile
# still reports EFA's max_msg_sz, 8928, and carries 4 KiB sends in
# several packets each; the softsrd profile carries messages larger than
# EFA's.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd ib_send_bw ib_send_lat
run=$(srd_efa_run)

# perf TOOL ARGS...: TOOL -c SRD as server in NS_A and client in NS_B.
perf() {
	local tool=$1 sent0 sent1 figures
	shift
	sent0=$(hw_counter "$DEV_B" srd_msgs_sent)
	run_pair 18515 "$NS_A" "$NS_B" \
		"$run" "$tool" -d "$DEV_A" -x "$GIDX4_A" -c SRD -F "$@" -- \
		"$run" "$tool" -d "$DEV_B" -x "$GIDX4_B" -c SRD -F "$@" "$IP4_A"
	figures=$(awk '/^ *#bytes/ { getline; print; exit }' <<<"$PAIR_CLIENT_OUT")
	echo "$tool -c SRD $*: $(tr -s " \t" " " <<<"$figures")"
	expect_match "$tool -c SRD $* reports figures" \
		'^[[:space:]]*[0-9]+[[:space:]]+[0-9]+([[:space:]]+[0-9.]+)+[[:space:]]*$' "$figures"
	sent1=$(hw_counter "$DEV_B" srd_msgs_sent)
	[ "$sent1" -gt "$sent0" ] ||
		fail "$tool: expected $DEV_B's srd_msgs_sent to grow, saw $sent0 -> $sent1"
	echo "ok: $tool went over softsrd SRD: $DEV_B srd_msgs_sent $sent0 -> $sent1"
}

# The efa profile: EFA's max_msg_sz whatever the MTU, segmented below it.
set_limits efa
two_hosts spe 1500
expect_match "efa profile: $DEV_A's max_msg_sz is EFA's 8928 at MTU 1500" \
	"max_msg_sz:[[:space:]]*0x22e0\b" "$(ibv_devinfo -v -d "$DEV_A")"
m0=$(hw_counter "$DEV_B" srd_msgs_sent)
p0=$(hw_counter "$DEV_B" srd_tx_data_pkts)
perf ib_send_bw -s 4096 -n 1000
m1=$(hw_counter "$DEV_B" srd_msgs_sent)
p1=$(hw_counter "$DEV_B" srd_tx_data_pkts)
# 4 KiB does not fit one 1500-byte packet: each send took several.
[ $((p1 - p0)) -ge $((2 * (m1 - m0))) ] ||
	fail "efa profile at MTU 1500: expected 4 KiB sends segmented, $((m1 - m0)) messages in $((p1 - p0)) DATA packets"
echo "ok: 4 KiB sends segmented below the MTU: $((m1 - m0)) messages in $((p1 - p0)) DATA packets"
perf ib_send_bw -s 8928 -n 300
perf ib_send_lat -s 2 -n 1000

# The softsrd profile: the same tools, with messages EFA could not carry.
set_limits softsrd
two_hosts_renew_devices
expect_match "softsrd profile: $DEV_A's max_msg_sz is 1 MiB" "max_msg_sz:[[:space:]]*0x100000\b" \
	"$(ibv_devinfo -v -d "$DEV_A")"
perf ib_send_bw -s 65536 -n 300
perf ib_send_lat -s 2 -n 1000
exit $KSFT_PASS
