#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Debian's libfabric 1.17, unmodified, with its efa provider on srd devices
# of the efa limits profile, under srd-efa-run: fi_info lists their -rdm
# and -dgrm domains, and fi_pingpong's dgram and rdm endpoints pass every
# default size with data checks between two namespaces.  The rdm runs use
# the device's RDMA read off and on, and once with a receive pool so small
# that the receiver answers RNR, which libfabric must ride out (EFA's
# vendor_err 10).  shm is off, so traffic crosses softsrd; the counters
# show each run did what it claims.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd fi_info fi_pingpong
run=$(srd_efa_run)

set_limits efa
two_hosts sfa 9000

# domains NS: the efa domains fi_info lists in NS.
domains() {
	ip netns exec "$1" "$run" fi_info -p efa | awk '$1 == "domain:" { print $2 }' | sort | tr '\n' ' '
}
expect_eq "fi_info -p efa in $NS_A lists both devices' domains" \
	"$DEV_A-dgrm $DEV_A-rdm $DEV_B-dgrm $DEV_B-rdm " "$(domains "$NS_A")"
info=$(ip netns exec "$NS_A" "$run" fi_info -p efa -d "$DEV_A-rdm" -v)
expect_match "$DEV_A-rdm: FI_EP_RDM over FI_PROTO_EFA" "type: FI_EP_RDM" "$info"
expect_match "$DEV_A-rdm: the NIC's driver is rdma_srd" "driver: rdma_srd" "$info"
expect_match "$DEV_A-rdm: a PCI-style bus address" "domain_id: 65534" "$info"
ip netns exec "$NS_A" fi_info -p efa >/dev/null 2>&1 &&
	fail "without srd-efa-run, fi_info -p efa found srd devices"
echo "ok: without srd-efa-run the system's libefa leaves them out"

# counter DEV NAME: a counter, 0 if unreadable.
counter() { hw_counter "$1" "$2" 2>/dev/null || echo 0; }

# pingpong EP WHAT [VAR=VALUE...]: fi_pingpong -e EP, server in NS_A and
# client in NS_B, default sizes, 10 iterations, data checked.
pingpong() {
	local ep=$1 what=$2 dom sizes
	shift 2
	dom=rdm
	[ "$ep" = dgram ] && dom=dgrm
	echo "--- fi_pingpong -e $ep: $what ($*)"
	run_pair 47592 "$NS_A" "$NS_B" \
		env FI_EFA_ENABLE_SHM_TRANSFER=0 "$@" "$run" fi_pingpong -p efa -e "$ep" -d "$DEV_A-$dom" -I 10 -c -- \
		env FI_EFA_ENABLE_SHM_TRANSFER=0 "$@" "$run" fi_pingpong -p efa -e "$ep" -d "$DEV_B-$dom" -I 10 -c "$IP4_A"
	sizes=$(awk '$2 == 10 && $3 == "=10" { n++ } END { print n + 0 }' <<<"$PAIR_CLIENT_OUT")
	[ "$sizes" -ge 4 ] || fail "fi_pingpong -e $ep ($what): expected a result line per size, saw $sizes"
	echo "ok: fi_pingpong -e $ep ($what): $sizes sizes, data checked"
}

# UD under the efa provider's dgram endpoints: sizes up to the MTU.
tx0=$(counter "$DEV_B" tx_packets)
pingpong dgram "UD datagrams"
tx1=$(counter "$DEV_B" tx_packets)
[ $((tx1 - tx0)) -ge 40 ] || fail "dgram: expected $DEV_B to send UD packets, tx_packets $tx0 -> $tx1"
echo "ok: dgram went over $DEV_B: tx_packets $tx0 -> $tx1"

# rdm: libfabric's protocol over SRD QPs.  With device RDMA off, no reads.
r0=$(counter "$DEV_A" srd_rdma_reads_in)
m0=$(counter "$DEV_B" srd_msgs_sent)
pingpong rdm "sends only" FI_EFA_USE_DEVICE_RDMA=0
r1=$(counter "$DEV_A" srd_rdma_reads_in)
m1=$(counter "$DEV_B" srd_msgs_sent)
[ "$m1" -gt "$m0" ] || fail "rdm: expected SRD messages from $DEV_B, srd_msgs_sent $m0 -> $m1"
expect_eq "rdm without device RDMA: RDMA reads served by $DEV_A" 0 $((r1 - r0))

# With device RDMA on and a small read threshold, long messages are read.
r0=$(counter "$DEV_A" srd_rdma_reads_in)
r0b=$(counter "$DEV_B" srd_rdma_reads_in)
pingpong rdm "RDMA read" FI_EFA_USE_DEVICE_RDMA=1 FI_EFA_INTER_MIN_READ_MESSAGE_SIZE=16384
r1=$(counter "$DEV_A" srd_rdma_reads_in)
r1b=$(counter "$DEV_B" srd_rdma_reads_in)
[ $((r1 - r0)) -gt 0 ] && [ $((r1b - r0b)) -gt 0 ] ||
	fail "rdm with device RDMA: expected RDMA reads served both ways, saw $((r1 - r0)) and $((r1b - r0b))"
echo "ok: rdm with device RDMA: $((r1 - r0)) and $((r1b - r0b)) RDMA reads served"

# One receive buffer: the receiver answers RNR, the sender's SRD sends fail
# with EFA's RNR status once rnr_retry (3) is spent, and libfabric resends.
n0=$(counter "$DEV_A" srd_rnr_naks_sent)
f0=$(counter "$DEV_B" srd_msgs_failed)
pingpong rdm "RNR" FI_EFA_RX_SIZE=1 FI_EFA_USE_DEVICE_RDMA=0
n1=$(counter "$DEV_A" srd_rnr_naks_sent)
f1=$(counter "$DEV_B" srd_msgs_failed)
[ $((n1 - n0)) -gt 0 ] || fail "RNR run: expected $DEV_A to send RNR NAKs, srd_rnr_naks_sent $n0 -> $n1"
echo "ok: RNR run: $DEV_A sent $((n1 - n0)) RNR NAKs, $DEV_B saw $((f1 - f0)) sends fail RNR and libfabric completed the run"
srd_counters "$DEV_A" "$DEV_B"
exit $KSFT_PASS
