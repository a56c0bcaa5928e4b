#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA read and write on SRD QPs (srd_rdma.c) between two devices in two
# namespaces: srddv_query_device's caps, data from 0 B to 40 MiB over
# several SGEs and many ops in flight, every responder check (rkey, PD,
# deregistered MR, access, range, zero length) with its counter, MRs
# deregistered mid-flight, and an unprivileged user (uid 65534,
# RLIMIT_MEMLOCK 64 KiB) next to root's QP and MRs.  All of it over
# IPv4-mapped GIDs, then the data and mid-flight cases over IPv6 GIDs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv
bin=$(srd_bin srd_rdma)
two_hosts srdma

# The unprivileged case needs the uverbs nodes open to all, as
# rdma-core's udev rules make them; their modes are put back at exit.
uverbs_modes=()
nodes=(/dev/infiniband/uverbs*)
[ -e "${nodes[0]}" ] || fail "no /dev/infiniband/uverbs* nodes"
for n in "${nodes[@]}"; do
	m=$(stat -c %a "$n") || fail "stat $n"
	uverbs_modes+=("$m $n")
	defer chmod "$m" "$n"
done
echo "uverbs nodes: ${uverbs_modes[*]}"
unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
# The mode is what lets uid 65534 in: 0600 keeps it out.
try chmod 0600 "${nodes[@]}" || fail "chmod 0600"
expect_fail_with "uid 65534 opens $DEV_A with its uverbs node 0600" \
	"cannot open" "${unpriv[@]}" "$bin" --probe "$DEV_A"
try chmod 0666 "${nodes[@]}" || fail "chmod 0666"
try "${unpriv[@]}" "$bin" --probe "$DEV_A" || fail "uid 65534 cannot open $DEV_A at 0666"

dmesg_mark
failed=()
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || failed+=(IPv4)
# The address family matters to the datapath only: data (an IPv6 header
# is 20 bytes longer: full packets must still fit the MTU), and the MRs
# going mid-flight.
try "$bin" -c 2,4 "$DEV_A" "$IP6_A" "$DEV_B" "$IP6_B" || failed+=(IPv6)
dmesg_clean "srd_rdma"
[ ${#failed[@]} -eq 0 ] || fail "srd_rdma reported failures over ${failed[*]}"
exit $KSFT_PASS
