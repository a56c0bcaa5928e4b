#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Outgoing packets' buffers (kernel/txbuf.c).  On a 9000-byte veth, SRD
# sends of 64 KiB and UD sends of 4 KiB take every buffer from the page
# pools (tx_buf_fallbacks stays 0 while thousands of packets leave), and
# the pools recycle: a second identical run, traced through the
# page_pool_state_hold event, takes far fewer new pages from the page
# allocator than it sends packets.  On a 20000-byte veth a full DATA
# segment is too large for the pools: each one counts in tx_buf_fallbacks
# (three of every 64 KiB message's four), and the data still arrives
# intact.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd ibv_ud_pingpong
srd_tool srd_perf >/dev/null

HOLD=$T/events/page_pool/page_pool_state_hold
tracefs_open
[ -d "$HOLD" ] || skip "no page_pool_state_hold trace event"

# total NAME: counter NAME summed over a and b.
total() { echo $(($(hw_counter "$DEV_A" "$1") + $(hw_counter "$DEV_B" "$1"))); }

# traffic: b sends a 300 SRD messages of 64 KiB, then 500 UD round trips
# of 4 KiB; every byte checked.
traffic() {
	perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -- -d "$DEV_B" -s 65536 -n 300 "$IP4_A"
	perf_clean "300 SRD sends of 64 KiB" "$PAIR_CLIENT_OUT" 1 300 0
	run_pair 18515 "$NS_A" "$NS_B" \
		ibv_ud_pingpong -d "$DEV_A" -g "$GIDX4_A" -s 4096 -n 500 -c -- \
		ibv_ud_pingpong -d "$DEV_B" -g "$GIDX4_B" -s 4096 -n 500 -c "$IP4_A"
	expect_match "500 UD round trips of 4 KiB" '[0-9]+ iters in [0-9.]+ seconds' \
		"$PAIR_CLIENT_OUT"
}

two_hosts stb 9000
dmesg_mark
traffic		# the pools fill
fb0=$(total tx_buf_fallbacks) srd0=$(total srd_tx_pkts) ud0=$(total tx_packets)
echo >"$T/trace"
set_param "$HOLD/enable" 1
traffic
echo 0 >"$HOLD/enable"
new=$(grep -c 'page_pool_state_hold' "$T/trace")
if grep -q "overrun: [1-9]" "$T"/per_cpu/cpu*/stats; then
	fail "the trace buffer overran: new pages cannot be counted"
fi
echo >"$T/trace"
fb=$(($(total tx_buf_fallbacks) - fb0))
srd=$(($(total srd_tx_pkts) - srd0))
ud=$(($(total tx_packets) - ud0))
pkts=$((srd + ud))
echo "second run: $srd SRD and $ud UD packets sent, $fb fallbacks, $new new pool pages"
[ "$srd" -ge 2200 ] || fail "expected at least 2200 SRD packets (300 x 64 KiB), saw $srd"
[ "$ud" -ge 1000 ] || fail "expected at least 1000 UD packets (500 round trips), saw $ud"
expect_eq "tx_buf_fallbacks over $pkts packets at MTU 9000" 0 "$fb"
[ $((new * 10)) -lt "$pkts" ] ||
	fail "the pools took $new new pages for $pkts packets: they do not recycle"
echo "ok: the pools recycle: $new new pages for $pkts packets"
dmesg_clean "pooled buffers"

# A DATA segment of a 20000-byte link does not fit a 16 KiB pool page.
two_hosts_renew_devices 20000
fb0=$(hw_counter "$DEV_B" tx_buf_fallbacks) data0=$(hw_counter "$DEV_B" srd_tx_data_pkts)
perf_pair "$NS_A" "$NS_B" -d "$DEV_A" -- -d "$DEV_B" -s 65536 -n 50 "$IP4_A"
perf_clean "50 SRD sends of 64 KiB at MTU 20000" "$PAIR_CLIENT_OUT" 1 50 0
fb=$(($(hw_counter "$DEV_B" tx_buf_fallbacks) - fb0))
data=$(($(hw_counter "$DEV_B" srd_tx_data_pkts) - data0))
echo "MTU 20000: $DEV_B sent $data DATA packets, $fb fallbacks"
[ "$data" -ge 200 ] || fail "expected at least 200 DATA packets (50 x 4 segments), saw $data"
# Three full segments a message; the fourth (about 6 KiB) and the ACKs fit.
if [ "$fb" -lt 150 ] || [ "$fb" -gt "$data" ]; then
	fail "expected 150 to $data fallbacks (the full segments of 20000-byte DATA), saw $fb"
fi
echo "ok: the DATA packets too large for the pools counted in tx_buf_fallbacks: $fb"
dmesg_clean "buffers too large for the pools"
exit "$KSFT_PASS"
