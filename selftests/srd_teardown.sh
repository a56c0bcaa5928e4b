#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A process that holds an srd device open, with objects, stalls nothing:
# deleting the device's network namespace, "rdma link del" and the
# netdev's deletion each remove the device while an unprivileged holder
# still has it open (ib_core disassociates the holder's context).  Before
# disassociate_ucontext, each waited for the holder to exit.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv timeout
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "needs python3-pyverbs"
holder=$SRD_TOP/selftests/srd_holder.py

# hold DEV: an unprivileged process holding DEV; waits until it does.
hold() {
	local log
	log=$(mktemp /tmp/srd_holder.XXXXXX)
	echo "+ setpriv --reuid=65534 --regid=65534 --clear-groups srd_holder.py $1 &"
	bg_start setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 "$holder" "$1" >"$log" 2>&1
	HOLDER=$!
	wait_for "uid 65534 holds $1" 30 grep -q "holding $1" "$log"
}

# gone_within WHAT SECS DEV: DEV is unregistered within SECS seconds.
gone_within() {
	wait_for "$1: $3 unregistered while held" "$2" srd_link_gone "$3"
	kill -0 "$HOLDER" 2>/dev/null && echo "ok: the holder is still running, its context disassociated"
	kill -9 "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
	true
}

dmesg_mark

# 1. The namespace goes (nobody deletes the device: the netdev's removal).
new_netns std_n
pp ip -n std_n link add std0 type veth peer name std1
pp ip -n std_n link set std0 up
pp ip netns exec std_n rdma link add srdtd0 type srd netdev std0
hold srdtd0
pp ip netns del std_n
SRD_NETNS=()
gone_within "namespace deleted" 30 srdtd0

# 2. rdma link del, which must return.
veth_pair std2 std3
add_srd srdtd1 std2
hold srdtd1
echo "+ timeout 30 rdma link del srdtd1"
timeout 30 rdma link del srdtd1 || fail "rdma link del srdtd1 did not complete while held"
gone_within "rdma link del" 5 srdtd1

# 3. ip link del of the netdev.
add_srd srdtd2 std3
hold srdtd2
echo "+ timeout 30 ip link del std3"
timeout 30 ip link del std3 || fail "ip link del std3 did not complete while srdtd2 was held"
gone_within "netdev deleted" 30 srdtd2

dmesg_clean "held devices removed"
exit $KSFT_PASS
