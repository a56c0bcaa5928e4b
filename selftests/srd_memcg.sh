#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The kernel memory behind a process's objects is charged to its memory
# cgroup: an unprivileged process in a cgroup of its own creates eight
# 65536-entry CQs, and the cgroup's memory.current grows by at least
# their rings (8 x 65536 x 32 bytes); and that the device's max_cq CQs of
# one entry take a page of ring each, not a ring of the largest depth
# (issue 45, item 3).  Before the rings were allocated
# with GFP_KERNEL_ACCOUNT it grew by a few pages only, so one user could
# take gigabytes of kernel memory past any container's limit.
# Then the same process posts 700 SRD sends to a QP with no receive
# posted, so they are all held (srd_rnr_stuck -m), and the cgroup must
# have grown by at least the engine's message (192 bytes) per send
# (issue 46: before, the kernel's and the engine's per-message memory
# was charged to no one, about 0.65 GiB a user could hold per device).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "needs python3-pyverbs"
grep -qw memory /proc/cgroups 2>/dev/null &&
	awk '$1 == "memory" { exit !$4 }' /proc/cgroups ||
	skip "this kernel has no memory cgroup controller"

cg=/sys/fs/cgroup
if ! [ -f "$cg/cgroup.controllers" ]; then
	pp mount -t cgroup2 none "$cg"
	defer umount "$cg"
fi
defer rmdir "$cg/srd_memcg" "$cg/srd_memcg_cq"
grep -qw memory "$cg/cgroup.controllers" || skip "cgroup v2 offers no memory controller"
pp sh -c "echo +memory >$cg/cgroup.subtree_control"
pp mkdir -p "$cg/srd_memcg"

veth_pair smc0 smc1
add_srd srd_smc0 smc0
n=8 cqe=65536
cqs0=$(hw_counter srd_smc0 cqs)
echo "+ (in $cg/srd_memcg) setpriv --reuid=65534 --regid=65534 --clear-groups srd_memcg.py srd_smc0 $n $cqe"
out=$(sh -c "echo \$\$ >$cg/srd_memcg/cgroup.procs && exec setpriv --reuid=65534 --regid=65534 \
	--clear-groups /usr/bin/python3 $SRD_TOP/selftests/srd_memcg.py srd_smc0 $n $cqe" 2>&1) ||
	fail "srd_memcg.py failed: $out"
echo "$out"
charged=$(echo "$out" | awk '$1 == "charged" { print $2 }')
[ -n "$charged" ] || fail "srd_memcg.py printed no figure"
[ "$(hw_counter srd_smc0 cqs)" = "$cqs0" ] || fail "the CQs outlived their process"
want=$((n * cqe * 32))
[ "$charged" -ge "$want" ] ||
	fail "$n CQs of $cqe entries: the cgroup was charged $charged bytes, expected at least $want (their rings)"
echo "ok: $n CQs of $cqe entries charged $charged bytes to the creator's cgroup (rings: at least $want)"

stuck=$(srd_bin srd_rnr_stuck)
add_srd srd_smc1 smc1
pp ip addr add 10.209.0.1/24 dev smc0
pp ip addr add 10.209.0.2/24 dev smc1
wait_for "srd_smc0 has the GID of 10.209.0.1" 10 has_gid srd_smc0 "$(gid_of_ipv4 10.209.0.1)"
wait_for "srd_smc1 has the GID of 10.209.0.2" 10 has_gid srd_smc1 "$(gid_of_ipv4 10.209.0.2)"
wait_for "srd_smc0 ACTIVE" 10 port_active srd_smc0
wait_for "srd_smc1 ACTIVE" 10 port_active srd_smc1
sends=700
echo "+ (in $cg/srd_memcg) setpriv --reuid=65534 ... srd_rnr_stuck -m -n $sends srd_smc0 10.209.0.1 srd_smc1 10.209.0.2"
out=$( (sleep 3; echo) | sh -c "echo \$\$ >$cg/srd_memcg/cgroup.procs && exec setpriv --reuid=65534 \
	--regid=65534 --clear-groups $stuck -m -n $sends -t 60 srd_smc0 10.209.0.1 srd_smc1 10.209.0.2" 2>&1) ||
	fail "srd_rnr_stuck failed: $out"
echo "$out"
charged=$(echo "$out" | awk '$1 == "charged" { print $2 }')
[ -n "$charged" ] || fail "srd_rnr_stuck printed no figure"
want=$((sends * 192))
[ "$charged" -ge "$want" ] ||
	fail "$sends held sends: the cgroup was charged $charged bytes, expected at least $want"
echo "ok: $sends held sends charged $charged bytes to the poster's cgroup (at least $want)"

# A CQ's memory follows its depth: the device's max_cq CQs of one entry
# each (the warm-up CQ and these) take a page of ring each, and the whole
# CQ, uverbs' objects and the mapping included, less than 16 KiB.  A ring
# of the largest depth would be 2 MiB.  In a cgroup of its own, last:
# the charges a cgroup keeps in stock per CPU (up to 64 pages) after
# these CQs are freed would otherwise pay for the held sends above.
pp mkdir -p "$cg/srd_memcg_cq"
max_cq=$(ibv_devinfo -v -d srd_smc0 | awk '$1 == "max_cq:" { print $2 }')
[ "${max_cq:-0}" -gt 1 ] || fail "no max_cq in ibv_devinfo -v"
n=$((max_cq - 1))
out=$(sh -c "echo \$\$ >$cg/srd_memcg_cq/cgroup.procs && exec setpriv --reuid=65534 --regid=65534 \
	--clear-groups /usr/bin/python3 $SRD_TOP/selftests/srd_memcg.py srd_smc0 $n 1" 2>&1) ||
	fail "srd_memcg.py could not make $max_cq CQs of one entry: $out"
echo "$out"
charged=$(echo "$out" | awk '$1 == "charged" { print $2 }')
[ -n "$charged" ] || fail "srd_memcg.py printed no figure"
[ "$charged" -ge $((n * 4096)) ] && [ "$charged" -le $((n * 16384)) ] ||
	fail "$n CQs of one entry charged $charged bytes: expected a page to 16 KiB each"
echo "ok: the device's max_cq ($max_cq) CQs of one entry, $((charged / n)) bytes each"
exit $KSFT_PASS
