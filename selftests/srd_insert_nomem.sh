#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# reg_mr and create_qp insert into the device's IRQ-flavoured xarrays (MRs
# by lkey and rkey, QPs by number), and still do when memory is short: an
# insert whose atomic node allocation fails drops the lock the xarray's
# way, allocates with GFP_KERNEL and retakes it (lib/xarray.c,
# __xas_nomem()).  Taken as xa_insert_bh() on those xarrays, that was a
# GFP_KERNEL allocation with bottom halves off ("sleeping function called
# from invalid context") and a return with IRQs off (a WARNING in
# __local_bh_enable_ip), from any unprivileged process.
#
# failslab makes the shortage: for one unprivileged process
# (srd_insert_nomem.py, task-filtered through make-it-fail, only around
# its reg_mr and create_qp calls), every allocation from radix_tree_node,
# the xarrays' node cache, that may not sleep fails.  The calls must all
# succeed, the failures must have been injected (failslab's times
# counts them down), and the kernel must log nothing bad.  Needs
# CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS, which the debug
# kernel has (scripts/debug-kernel/debug.config); skipped elsewhere.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv
/usr/bin/python3 -c 'import pyverbs' 2>/dev/null || skip "needs python3-pyverbs"

NMR=64
NQP=8
F=/sys/kernel/debug/failslab
CACHE=/sys/kernel/slab/radix_tree_node/failslab
# failslab's settings, put back at exit: probability first, so that
# nothing fails while the others change.
FS_KNOBS="probability interval times space verbose task-filter ignore-gfp-wait cache-filter"
declare -A fs_orig
# shellcheck disable=SC2317 # restore_failslab runs through defer
restore_failslab() {
	local k
	echo 0 >"$F/probability"
	for k in $FS_KNOBS; do
		echo "${fs_orig[$k]}" >"$F/$k"
	done
	echo "$cache_orig" >"$CACHE"
}
debugfs_mount
[ -d "$F" ] || skip "no $F (needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS: the debug kernel)"
[ -e "$CACHE" ] || skip "no $CACHE (needs SLUB's sysfs)"
for k in $FS_KNOBS; do
	fs_orig[$k]=$(cat "$F/$k") || fail "cannot read $F/$k"
done
cache_orig=$(cat "$CACHE") || fail "cannot read $CACHE"
defer restore_failslab

# fs_set KNOB VALUE
fs_set() {
	echo "+ echo $2 > $F/$1"
	echo "$2" >"$F/$1" || fail "cannot set $F/$1 to $2"
}

veth_pair srdnm0 srdnm1
add_srd srdnm_a srdnm0
counters() {
	local o
	for o in qps mrs; do printf '%s=%s ' "$o" "$(hw_counter srdnm_a "$o")"; done
}
base=$(counters)

dmesg_mark
fs_set probability 0
fs_set interval 1
fs_set times 100000
fs_set space 0
fs_set verbose 0
fs_set task-filter Y
fs_set ignore-gfp-wait Y
fs_set cache-filter Y
echo "+ echo 1 > $CACHE"
echo 1 >"$CACHE" || fail "cannot filter failslab to radix_tree_node"
fs_set probability 100
before=$(cat "$F/times")

# The helper waits, once set up, for a line on a FIFO: its make-it-fail
# is set in between, so that only its reg_mr and create_qp calls (and what
# follows) meet failing allocations.
fifo=$(mktemp -u /tmp/srd_nomem_fifo.XXXXXX)
log=$(mktemp /tmp/srd_nomem.XXXXXX)
mkfifo "$fifo" || fail "cannot make $fifo"
# Read and write, so that opening it waits for no reader.
exec 3<>"$fifo"
echo "+ setpriv --reuid=65534 --regid=65534 --clear-groups srd_insert_nomem.py srdnm_a $NMR $NQP &"
# Not through bg_start: "$@" & in a function reads /dev/null, not the
# FIFO given to the function.
setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 \
	"$SRD_TOP/selftests/srd_insert_nomem.py" srdnm_a "$NMR" "$NQP" <"$fifo" >"$log" 2>&1 &
pid=$!
defer kill_wait "$pid"
wait_for "srd_insert_nomem.py set up" 60 grep -q '^ready' "$log"
echo "+ echo 1 > /proc/$pid/make-it-fail"
echo 1 >"/proc/$pid/make-it-fail" || fail "cannot set make-it-fail of $pid"
echo go >&3
wait "$pid"
rc=$?
exec 3>&-
after=$(cat "$F/times")
fs_set probability 0
out=$(grep -v '^ready$' "$log")
rm -f "$fifo" "$log"
echo "$out" | sed 's/^/  /'
expect_eq "srd_insert_nomem.py's exit status" 0 "$rc"
expect_eq "what srd_insert_nomem.py made" "registered $NMR MRs, created $NQP QPs" "$out"

# Each MR's two random keys need new nodes in sparse xarrays: one failed
# allocation at least for each.
injected=$((before - after))
[ "$injected" -ge $((2 * NMR)) ] ||
	fail "expected at least $((2 * NMR)) radix_tree_node allocations failed (two keys for each of $NMR MRs), saw $injected"
echo "ok: $injected radix_tree_node allocations failed on demand"

counters_back "after srd_insert_nomem.py" "$base" 10
echo "ok: srdnm_a's QPs and MRs are back to '$base'"
dmesg_clean "inserts while node allocations fail"
exit $KSFT_PASS
