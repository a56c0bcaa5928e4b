#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A device held by an unprivileged process goes with the namespace it
# was made in, after its netdev moved to another namespace (it holds that
# first namespace's sockets).  And a process killed while its sends wait
# on RNR forever exits at once, whichever of its MR and QP is older
# (srd_srd_qp's case 10 calls ibv_dereg_mr itself under such sends, which
# used to block for good).  srd_held_removal.sh has the removals of a
# device held in each way.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "needs python3-pyverbs"

# gone_within WHAT SECS DEV: DEV is unregistered within SECS seconds.
gone_within() {
	wait_for "$1: $3 unregistered while held" "$2" srd_link_gone "$3"
	kill -0 "$HOLDER" 2>/dev/null && echo "ok: the holder is still running, its context disassociated"
	kill -9 "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
	rm -f "$HOLDER_LOG"
}

dmesg_mark

# 1. The netdev moves to another namespace, then its first one is
# deleted: the device, which holds that first namespace's sockets, goes
# with it (it was matched by its netdev's new namespace, and its sockets
# were used after their namespace was freed).
new_netns std_m1
new_netns std_m2
pp ip -n std_m1 link add std4 type veth peer name std5
pp ip -n std_m1 link set std4 up
pp ip netns exec std_m1 rdma link add srdtd3 type srd netdev std4
hold_unprivileged srdtd3
pp ip -n std_m1 link set std4 netns std_m2
pp ip netns del std_m1
gone_within "netdev moved, its first namespace deleted" 30 srdtd3
pp ip netns del std_m2

# 2. SIGKILL of an unprivileged process whose sends wait on RNR forever.
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
