#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A process that holds an srd device open, with objects, stalls nothing:
# deleting the device's network namespace, "rdma link del" and the
# netdev's deletion each remove the device while an unprivileged holder
# still has it open (ib_core disassociates the holder's context), also
# after the netdev moved to another namespace.  Before
# disassociate_ucontext, each waited for the holder to exit.  And a
# process killed while its sends wait on RNR forever exits at once,
# whichever of its MR and QP is older (srd_srd_qp's case 10 calls
# ibv_dereg_mr itself under such sends, which used to block for good).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv timeout
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "needs python3-pyverbs"
holder=$SRD_TOP/selftests/srd_holder.py

# hold DEV: an unprivileged process holding DEV; waits until it does, or
# fails with the holder's output and its kernel stack.
hold() {
	local log t0=$SECONDS
	log=$(mktemp /tmp/srd_holder.XXXXXX)
	echo "+ setpriv --reuid=65534 --regid=65534 --clear-groups srd_holder.py $1 &"
	bg_start setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 "$holder" "$1" >"$log" 2>&1
	HOLDER=$!
	until grep -q "holding $1" "$log"; do
		if [ $((SECONDS - t0)) -ge 60 ] || ! kill -0 "$HOLDER" 2>/dev/null; then
			echo "# the holder's output, then its kernel stack:"
			sed 's/^/#   /' "$log" "/proc/$HOLDER/stack" 2>/dev/null
			fail "uid 65534 does not hold $1 after $((SECONDS - t0)) s"
		fi
		sleep 0.1
	done
	echo "ok: uid 65534 holds $1 (after $((SECONDS - t0)) s)"
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

# 4. The netdev moves to another namespace, then its first one is
# deleted: the device, which holds that first namespace's sockets, goes
# with it (it was matched by its netdev's new namespace, and its sockets
# were used after their namespace was freed).
new_netns std_m1
new_netns std_m2
pp ip -n std_m1 link add std4 type veth peer name std5
pp ip -n std_m1 link set std4 up
pp ip netns exec std_m1 rdma link add srdtd3 type srd netdev std4
hold srdtd3
pp ip -n std_m1 link set std4 netns std_m2
pp ip netns del std_m1
SRD_NETNS=(std_m2)
gone_within "netdev moved, its first namespace deleted" 30 srdtd3
pp ip netns del std_m2
SRD_NETNS=()

# 5. SIGKILL of an unprivileged process whose sends wait on RNR forever.
two_hosts stdk
ssq=$(srd_bin srd_srd_qp)
objs="qps mrs"
counters() {
	local o
	for o in $objs; do printf '%s=%s ' "$o" "$(hw_counter "$DEV_A" "$o")"; done
}
base=$(counters)
log=$(mktemp /tmp/srd_hold.XXXXXX)
for order in mr-first qp-first; do
	echo "+ setpriv --reuid=65534 --regid=65534 --clear-groups srd_srd_qp --hold $order $DEV_A $IP4_A $DEV_B $IP4_B &"
	bg_start setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$ssq" --hold "$order" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" >"$log" 2>&1
	pid=$!
	wait_for "$order: uid 65534's sends wait on RNR" 60 grep -q '^holding' "$log"
	cat "$log"
	[ "$(counters)" != "$base" ] || fail "$order: the holder's QP and MR are not counted on $DEV_A"
	pp kill -9 "$pid"
	deadline=$((SECONDS + 15))
	while [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
		if [ $SECONDS -ge $deadline ]; then
			echo "# the killed process, still there 15 s later:"
			sed 's/^/#   /' "/proc/$pid/stack" 2>/dev/null
			fail "$order: a process killed while its sends wait on RNR did not exit within 15 s"
		fi
		sleep 0.2
	done
	wait "$pid" 2>/dev/null
	expect_eq "$order: exit status of the killed holder" 137 "$?"
	counters_back "$order: after the kill" "$base" 10
	echo "ok: $order: the killed holder exited at once; $DEV_A's QPs and MRs are back to '$base'"
done
rm -f "$log"

dmesg_clean "held devices removed"
exit $KSFT_PASS
