#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An EFA program built on rdma-core 64's efadv.h, as libfabric 2.x is
# (srd_efadv64: efadv_*@EFA_1.3..1.6, the grown structs), runs on srd
# devices under srd-efa-run, in the softsrd, efa-gen1 and efa-gen2 limits
# profiles: every entry point rdma-core 64 added and every field it grew,
# with their inlen edges and bad arguments, then SRD traffic with
# libfabric 2.x's QP and CQ attributes (a service level, processing
# hints, inline RDMA write; a write with immediate where the profile has
# RDMA write, completed as libefa completes it).
# Without srd-efa-run, a system libefa older than rdma-core 64 cannot
# even load it, which is what softsrd's libefa.so.1 exports EFA_1.6 for.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_efadv64)
run=$(srd_efa_run)
sys_efa=/usr/lib/x86_64-linux-gnu/libefa.so.1
[ -e "$sys_efa" ] || skip "the system has no libefa.so.1 (ibverbs-providers)"

# efadv64 PROFILE: the program on the two devices, made in that profile.
efadv64() {
	local profile=$1 out rc
	expect_eq "$DEV_A's limits_profile" "$profile" "$(cat "/sys/class/infiniband/$DEV_A/limits_profile")"
	echo "+ $run $bin $DEV_A $IP4_A $DEV_B $IP4_B $profile"
	out=$("$run" "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" "$profile" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || fail "$profile: srd_efadv64 failed (exit $rc)"
	expect_match "$profile: efadv comes from softsrd's libefa.so.1" \
		"efadv_qp_from_ibv_qp_ex is from [^ ]*/efa-compat/libefa\.so\.1" "$out"
}

set_limits softsrd
two_hosts e64

# The issue: the system's libefa, if older than rdma-core 64, lacks the
# symbol versions the program binds.
if objdump -T "$sys_efa" | grep -q 'EFA_1\.6'; then
	echo "ok: the system's libefa has EFA_1.6: it loads the program too"
else
	expect_fail_with "the system's libefa (no EFA_1.6) cannot load srd_efadv64" \
		"version \`EFA_1." "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" softsrd
fi

efadv64 softsrd
set_limits efa-gen1
two_hosts_renew_devices
efadv64 efa-gen1
# efa-gen2: RDMA write and write with immediate, in EFA's conventions.
set_limits efa-gen2
two_hosts_renew_devices
w0=$(hw_counter "$DEV_B" srd_rdma_writes_in)
efadv64 efa-gen2
w1=$(hw_counter "$DEV_B" srd_rdma_writes_in)
[ $((w1 - w0)) -ge 2 ] ||
	fail "efa-gen2: expected 2 RDMA writes placed at $DEV_B, srd_rdma_writes_in $w0 -> $w1"
echo "ok: efa-gen2: RDMA writes placed at $DEV_B: srd_rdma_writes_in $w0 -> $w1"
srd_counters "$DEV_A" "$DEV_B"
exit $KSFT_PASS
