#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An EFA program (srd_efadv: the system's efadv.h, -lefa) runs on srd
# devices under srd-efa-run, in the softsrd, efa-gen1 and efa-gen2 limits
# profiles: every efadv entry point with its inlen edges and bad
# arguments, and SRD traffic between two namespaces whose AH numbers,
# SGIDs, opcodes and vendor_err are EFA's.
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
efadv efa-gen1 efe
efadv efa-gen2 eg2

# Another RDMA device (rxe, in this namespace: rxe has no others): each
# call goes to the system's libefa, which says it is no EFA device in its
# log; with no system libefa to ask, or for a function it lacks, the same
# errors.
require_cmd unshare
try modprobe rdma_rxe || skip "no rdma_rxe module"
# An rxe AH needs a neighbour: the veth's other end, in a namespace.
new_netns efx_b
pp ip link add efx0 type veth peer name efx1 netns efx_b
defer del_netdev efx0
pp ip addr add 10.202.0.1/24 dev efx0
pp ip -n efx_b addr add 10.202.0.2/24 dev efx1
pp ip link set efx0 up
pp ip -n efx_b link set efx1 up
# A permanent entry: the resolution does not wait for ARP.
mac=$(ip -n efx_b -o link show efx1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
pp ip neigh replace 10.202.0.2 lladdr "$mac" dev efx0 nud permanent
try rdma link add rxe_efx type rxe netdev efx0 || fail "cannot add an rxe device"
defer del_link rxe_efx
log=$(mktemp /tmp/srd_efadv_log.XXXXXX)
wait_for "rxe_efx has the GID of 10.202.0.1" 10 has_gid rxe_efx "$(gid_of_ipv4 10.202.0.1)"
foreign=(--foreign rxe_efx 10.202.0.1 10.202.0.2)
echo "+ VERBS_LOG_LEVEL=1 $run $bin ${foreign[*]} real"
VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=$log "$run" "$bin" "${foreign[@]}" real ||
	fail "srd_efadv on rxe_efx, forwarded to the system's libefa"
expect_match "the system's libefa answered for rxe_efx" "Not an EFA device" "$(cat "$log")"
real_efa=$(readlink -f /usr/lib/x86_64-linux-gnu/libibverbs/libefa-rdmav34.so)
# What rdma-core 64 added (srd_efadv64): the system's libefa answers if
# it has it (EFA_1.6), else softsrd's answers as libefa would.
bin64=$(srd_bin srd_efadv64)
mode64=absent
objdump -T "$real_efa" | grep -q 'EFA_1\.6' && mode64=real
echo "+ $run $bin64 --foreign rxe_efx $mode64"
"$run" "$bin64" --foreign rxe_efx "$mode64" ||
	fail "srd_efadv64 on rxe_efx ($mode64)"
: >"$log"
# shellcheck disable=SC2016 # expanded by sh -c
hide_real_efa='mount --bind /dev/null "$1" && shift && exec "$@"'
echo "+ unshare -m: $real_efa hidden; VERBS_LOG_LEVEL=1 $run $bin ${foreign[*]} absent"
VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=$log unshare -m sh -c "$hide_real_efa" sh "$real_efa" \
	"$run" "$bin" "${foreign[@]}" absent ||
	fail "srd_efadv on rxe_efx without the system's libefa"
echo "+ unshare -m: $real_efa hidden; VERBS_LOG_LEVEL=1 $run $bin64 --foreign rxe_efx absent"
VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=$log unshare -m sh -c "$hide_real_efa" sh "$real_efa" \
	"$run" "$bin64" --foreign rxe_efx absent ||
	fail "srd_efadv64 on rxe_efx without the system's libefa"
[[ "$(cat "$log")" != *"Not an EFA device"* ]] || fail "the hidden libefa answered"
echo "ok: without the system's libefa, the same errors"
rm -f "$log"
exit $KSFT_PASS
