#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An EFA program (srd_efadv: the system's efadv.h, -lefa) runs on srd
# devices under srd-efa-run, in both limits profiles: every efadv entry
# point with its inlen edges and bad arguments, and SRD traffic between two
# namespaces whose AH numbers, SGIDs, opcodes and vendor_err are EFA's.
# Without srd-efa-run the system's libefa refuses the same devices.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_efadv)
run=$(srd_efa_run)
[ -e /usr/lib/x86_64-linux-gnu/libefa.so.1 ] || skip "the system has no libefa.so.1 (ibverbs-providers)"

# efadv PROFILE TAG: the program on two new devices of that profile.
efadv() {
	local profile=$1 tag=$2 out
	set_limits "$profile"
	two_hosts "$tag"
	expect_eq "$DEV_A's limits_profile" "$profile" "$(cat "/sys/class/infiniband/$DEV_A/limits_profile")"

	# The status quo: rdma-core's libefa does not take srd devices.
	expect_fail_with "$profile: the system's libefa refuses $DEV_A" \
		"efadv_query_device($DEV_A): Operation not supported" \
		"$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" "$profile"

	echo "+ $run $bin $DEV_A $IP4_A $DEV_B $IP4_B $profile"
	out=$("$run" "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" "$profile" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] || fail "$profile: srd_efadv failed (exit $rc)"
	expect_match "$profile: efadv comes from softsrd's libefa.so.1" \
		"efadv_query_device is from [^ ]*/efa-compat/libefa\.so\.1" "$out"
	srd_counters "$DEV_A" "$DEV_B"
}

efadv softsrd efs
efadv efa efe

# Another RDMA device (rxe, in this namespace: rxe has no others): each
# call goes to the system's libefa, which says it is no EFA device in its
# log; with no system libefa to ask, the same errors.
require_cmd unshare
pp modprobe rdma_rxe || skip "no rdma_rxe module"
veth_pair efx0 efx1
pp ip addr add 10.202.0.1/24 dev efx0
pp rdma link add rxe_efx type rxe netdev efx0 || fail "cannot add an rxe device"
SRD_LINKS+=(rxe_efx)
log=$(mktemp /tmp/srd_efadv_log.XXXXXX)
echo "+ VERBS_LOG_LEVEL=1 $run $bin --foreign rxe_efx real"
VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=$log "$run" "$bin" --foreign rxe_efx real ||
	fail "srd_efadv on rxe_efx, forwarded to the system's libefa"
expect_match "the system's libefa answered for rxe_efx" "Not an EFA device" "$(cat "$log")"
real_efa=$(readlink -f /usr/lib/x86_64-linux-gnu/libibverbs/libefa-rdmav34.so)
: >"$log"
echo "+ unshare -m: $real_efa hidden; VERBS_LOG_LEVEL=1 $run $bin --foreign rxe_efx absent"
VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=$log unshare -m sh -c \
	'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$real_efa" \
	"$run" "$bin" --foreign rxe_efx absent ||
	fail "srd_efadv on rxe_efx without the system's libefa"
[[ "$(cat "$log")" != *"Not an EFA device"* ]] || fail "the hidden libefa answered"
echo "ok: without the system's libefa, the same errors"
rm -f "$log"
exit $KSFT_PASS
