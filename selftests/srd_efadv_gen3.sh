#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The efa-gen3 limits profile, as an EFA program built on rdma-core 64's
# efadv.h sees it under srd-efa-run (srd_efadv_gen3): efa-gen2's figures
# with EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV, and what it means
# between two namespaces: a QP made with
# EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV takes a write with immediate
# without a receive (wr_id 0, efadv_wc_is_unsolicited), posted or not;
# one made without still consumes a receive, and waits (RNR) for one.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_efadv_gen3)
run=$(srd_efa_run)

set_limits efa-gen3
expect_eq "the limits parameter after writing efa-gen3" efa-gen3 "$(cat "$SRD_LIMITS_PARAM")"
two_hosts eg3
expect_eq "$DEV_A's limits_profile" efa-gen3 "$(cat "/sys/class/infiniband/$DEV_A/limits_profile")"
expect_eq "$DEV_B's limits_profile" efa-gen3 "$(cat "/sys/class/infiniband/$DEV_B/limits_profile")"

echo "+ $run $bin $DEV_A $IP4_A $DEV_B $IP4_B"
out=$("$run" "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "srd_efadv_gen3 failed (exit $rc)"
srd_counters "$DEV_A" "$DEV_B"
exit $KSFT_PASS
