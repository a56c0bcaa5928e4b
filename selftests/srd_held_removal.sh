#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Whatever an unprivileged process holds of an srd device, the device goes
# within 5 s of its removal: of its network namespace, by "rdma link del",
# or of its netdev.  Each holder shape of srd_holder.py (a bare context;
# objects with their rings mapped; blocked in ibv_get_cq_event; blocked in
# ibv_get_async_event) meets each removal, and is checked to hold the
# device when the removal begins: its uverbs file open, and its objects
# counted, its rings mapped or its read in progress.  ib_core disassociates
# the holder's context (srd_disassociate_ucontext) instead of waiting for
# the holder: a context holds nothing of the driver's, and a blocked read
# returns (EIO, or IBV_EVENT_DEVICE_FATAL on the async fd).
#
# The holder runs in the initial namespace.  A process that lives in the
# device's namespace keeps that namespace, its netdevs and so the device,
# whether or not it opened the device: "ip netns del" only removes the
# name, and the namespace is deleted when its last process leaves.  A
# failure of the namespace case lists the processes still in it.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv timeout stat
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "needs python3-pyverbs"

LIMIT_S=5
NS=srdhr_n
DEV=srdhr0

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# uverbs_node DEV: DEV's uverbs character device, /dev/infiniband/uverbsN.
uverbs_node() {
	local f
	for f in /sys/class/infiniband_verbs/uverbs*/ibdev; do
		[ "$(cat "$f" 2>/dev/null)" = "$1" ] || continue
		f=${f%/ibdev}
		echo "/dev/infiniband/${f##*/}"
		return 0
	done
	return 1
}

# has_open PID FILE: PID has FILE open.
has_open() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = "$2" ] && return 0
	done
	return 1
}

# in_event_read PID: PID sleeps in a read of a uverbs event file.
# shellcheck disable=SC2317 # in_event_read is wait_for's command
in_event_read() {
	[[ "$(cat "/proc/$1/wchan" 2>/dev/null)" == ib_uverbs_event_read* ]]
}

# prove_held SHAPE: the holder holds $DEV as SHAPE says, now.
prove_held() {
	local node c n
	node=$(uverbs_node "$DEV") || fail "$DEV has no uverbs node"
	has_open "$HOLDER" "$node" ||
		fail "$1: expected the holder to have $node ($DEV) open, saw: $(ls -l /proc/"$HOLDER"/fd 2>&1)"
	has_open "$HOLDER" "anon_inode:[infinibandevent]" ||
		fail "$1: expected the holder to have its context's async event file open, saw: $(ls -l /proc/"$HOLDER"/fd 2>&1)"
	echo "ok: $1: the holder has $node ($DEV) open, and a context on it (its async event file)"
	case $1 in
	objects)
		for c in pds cqs qps mrs; do
			n=$(hw_counter "$DEV" "$c")
			[ "$n" -ge 1 ] || fail "$1: expected the holder's $c counted on $DEV, saw $c=$n"
		done
		n=$(grep -c " $node\$" "/proc/$HOLDER/maps")
		[ "$n" -ge 2 ] ||
			fail "$1: expected the holder to map its CQ's and QP's rings from $node, saw $n mappings"
		echo "ok: $1: its PD, CQ, QP and MR are counted on $DEV, $n rings mapped"
		;;
	cq-event|async-event)
		wait_for "$1: the holder sleeps in a read of its event file" 30 \
			in_event_read "$HOLDER"
		;;
	esac
}

# remove WAY: start the removal of $DEV that WAY names.
remove() {
	case $1 in
	netns)
		pp ip netns del "$NS"
		;;
	link)
		echo "+ timeout 30 rdma link del $DEV"
		timeout 30 rdma link del "$DEV" ||
			fail "rdma link del $DEV did not complete (exit $?) while held"
		;;
	netdev)
		echo "+ timeout 30 ip -n $NS link del srdhr0v"
		timeout 30 ip -n "$NS" link del srdhr0v ||
			fail "ip link del srdhr0v did not complete (exit $?) while $DEV was held"
		;;
	esac
}

# netns_procs INODE: the processes whose network namespace is INODE.
netns_procs() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$1" ] &&
			echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline")"
	done
}

# held_removal SHAPE WAY
held_removal() {
	local shape=$1 way=$2 what="$1, $2" ino t0 ms
	echo "# $what"
	new_netns "$NS"
	pp ip -n "$NS" link add srdhr0v type veth peer name srdhr1v
	pp ip -n "$NS" link set srdhr0v up
	pp ip netns exec "$NS" rdma link add "$DEV" type srd netdev srdhr0v
	ino=$(stat -L -c %i "/run/netns/$NS")
	hold_unprivileged "$DEV" "$shape"
	prove_held "$shape"
	kill -0 "$HOLDER" 2>/dev/null || fail "$what: the holder exited before the removal"

	t0=$(now_ms)
	remove "$way"
	until srd_link_gone "$DEV"; do
		ms=$(($(now_ms) - t0))
		if [ "$ms" -gt $((LIMIT_S * 1000)) ]; then
			echo "# the holder's output, then its kernel stack:"
			sed 's/^/#   /' "$HOLDER_LOG" "/proc/$HOLDER/stack" 2>/dev/null
			if [ "$way" = netns ]; then
				echo "# processes still in the namespace (inode $ino):"
				netns_procs "$ino" | sed 's/^/#   /'
			fi
			fail "$what: expected $DEV gone within $LIMIT_S s, still registered after $ms ms"
		fi
		sleep 0.05
	done
	ms=$(($(now_ms) - t0))
	echo "ok: $what: $DEV gone $ms ms after the removal began"

	case $shape in
	context|objects)
		kill -0 "$HOLDER" 2>/dev/null ||
			fail "$what: expected the holder still running (its context disassociated), saw it exit: $(cat "$HOLDER_LOG")"
		echo "ok: $what: the holder still runs, its context disassociated"
		;;
	cq-event)
		wait_for "$what: the holder's ibv_get_cq_event returns" $LIMIT_S \
			grep -q "^ibv_get_cq_event " "$HOLDER_LOG"
		expect_match "$what: ibv_get_cq_event's result" "failed: .*Errno: 5," \
			"$(grep "^ibv_get_cq_event " "$HOLDER_LOG")"
		;;
	async-event)
		wait_for "$what: the holder's ibv_get_async_event returns" $LIMIT_S \
			grep -Eq "^ibv_get_async_event (failed|returned IBV_EVENT_DEVICE_FATAL)" "$HOLDER_LOG"
		expect_eq "$what: the holder's last async event" \
			"ibv_get_async_event returned IBV_EVENT_DEVICE_FATAL" "$(tail -n 1 "$HOLDER_LOG")"
		;;
	esac
	kill -9 "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
	rm -f "$HOLDER_LOG"
	if [ "$way" != netns ]; then
		pp ip netns del "$NS"
	fi
}

dmesg_mark
for shape in context objects cq-event async-event; do
	for way in netns link netdev; do
		held_removal "$shape" "$way"
	done
done
dmesg_clean "held devices removed"
exit $KSFT_PASS
