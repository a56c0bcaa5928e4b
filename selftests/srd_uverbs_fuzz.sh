#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The uverbs fuzzer (srd_uverbs_fuzz), as an unprivileged user, on two srd
# devices that reach each other: random sequences of every write()
# command and ioctl() method the devices take, hostile core fields and
# driver data, hostile counters and work requests in the mapped rings,
# three threads, forks, closes and exits at random points, each iteration a
# process killed when its time is up.  On a kernel with fault injection
# (the debug kernel's failslab and fail_page_alloc), the fuzzer fails the
# Nth allocation of random calls through its own
# /proc/thread-self/fail-nth.  This script lets GFP_KERNEL allocations fail
# so (ignore-gfp-wait off), and turns the probability up to 100 with the
# task filter on: since 6.11 the allocators consult fault injection only
# while a probability is set (a static key), and the task filter keeps the
# probability to tasks with make-it-fail set, of which there is none; so
# only the fuzzer's fail-nth injects, and nothing else in the guest fails.
#
# Passes when the fuzzer ran to its end (no iteration died of a signal it
# did not send), made its calls (contexts, PDs, MRs, CQs, QPs, AHs, rings
# mapped and written, doorbells: each kind succeeded at least once), and
# injected faults where it can; when every object of every iteration was
# released (the devices' live-object counters back to where they were);
# when both devices still go away with rdma link del within 5 s; and when
# the kernel logged nothing bad (vm-run.sh and the debug kernel add KASAN,
# lockdep, UBSAN and kmemleak).
#
#   SRD_FUZZ_SECONDS  how long to fuzz (default 60)
#   SRD_FUZZ_SEED     the seed (default: new each run; printed)
#   SRD_FUZZ_THREADS  threads per iteration (default 3)
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd setpriv

secs=${SRD_FUZZ_SECONDS:-60}
threads=${SRD_FUZZ_THREADS:-3}
fuzz=$(srd_bin srd_uverbs_fuzz)

FI_DIRS=()
debugfs_mount
# fi_set DIR KNOB VALUE: each knob put back at exit, the last set first:
# probability, so that nothing fails while the others change.
fi_set() {
	[ -e "$1/$2" ] || return 0
	set_param "$1/$2" "$3"
}
for d in /sys/kernel/debug/failslab /sys/kernel/debug/fail_page_alloc; do
	[ -d "$d" ] || continue
	[ "$(cat "$d/probability")" = 0 ] || fail "$d/probability is not 0: something else injects faults"
	FI_DIRS+=("$d")
	fi_set "$d" verbose 0
	fi_set "$d" ignore-gfp-wait N
	fi_set "$d" ignore-gfp-highmem N
	fi_set "$d" min-order 0
	fi_set "$d" cache-filter N
	fi_set "$d" task-filter Y
	fi_set "$d" probability 100
done
if [ ${#FI_DIRS[@]} -gt 0 ]; then
	echo "fault injection: ${FI_DIRS[*]} (through the fuzzer's fail-nth)"
else
	echo "fault injection: none (this kernel has no failslab or fail_page_alloc)"
fi

two_hosts fz
counters() {
	local d o
	for d in "$DEV_A" "$DEV_B"; do
		for o in pds cqs qps mrs ahs; do printf '%s=%s ' "$o" "$(hw_counter "$d" "$o")"; done
	done
}
base=$(counters)
# both NAME: the counter NAME of both devices, added.
both() { echo $(($(hw_counter "$DEV_A" "$1") + $(hw_counter "$DEV_B" "$1"))); }
# shellcheck disable=SC2317 # both_above is wait_for's command
both_above() { [ "$(both "$1")" -gt "$2" ]; }
tx0=$(both tx_pkts)
rx0=$(both rx_pkts)
dmesg_mark

args=(--seconds "$secs" --threads "$threads")
[ -z "${SRD_FUZZ_SEED:-}" ] || args+=(--seed "$SRD_FUZZ_SEED")
log=$(mktemp /tmp/srd_uverbs_fuzz.XXXXXX)
echo "+ setpriv --reuid=65534 --regid=65534 --clear-groups env GLIBC_TUNABLES=glibc.pthread.rseq=0 srd_uverbs_fuzz ${args[*]} $DEV_A $DEV_B"
t0=$SECONDS
# Without restartable sequences: glibc registers each thread's, and the
# kernel writes it on every return to user space, after the call whose
# Nth allocation was to fail.  An allocation the call did not make is
# then failed there (a copy-on-write fault of that page after a fork),
# and the kernel kills the thread with SIGSEGV at the instruction after
# the system call: an injected fault in the kernel's own path, not in
# softsrd's, which failed one iteration in six of the debug kernel's
# replays (2026-12-07) and none of 25 without rseq.
setpriv --reuid=65534 --regid=65534 --clear-groups env GLIBC_TUNABLES=glibc.pthread.rseq=0 \
	"$fuzz" "${args[@]}" "$DEV_A" "$DEV_B" >"$log" 2>&1
rc=$?
sed 's/^/  /' "$log"
seed=$(awk '$1 == "seed" { print $2; exit }' "$log")
echo "fuzzed $((SECONDS - t0)) s, seed $seed (SRD_FUZZ_SEED=$seed replays it)"
[ "$rc" -eq 0 ] || { rm -f "$log"; fail "srd_uverbs_fuzz exited $rc (seed $seed)"; }

# ok_count OP: how many calls of kind OP succeeded.
ok_count() {
	awk -v op="$1" '$1 == "op" && $2 == op { print $6 }' "$log"
}
for op in get_context alloc_pd reg_mr create_ah create_cq create_qp \
	modify_qp mmap_ring sq_write rq_write cq_write ioctl_cq_create \
	ioctl_qp_create; do
	n=$(ok_count "$op")
	[ "${n:-0}" -gt 0 ] || { rm -f "$log"; fail "no $op call succeeded in the run (seed $seed)"; }
done
echo "ok: every kind of object was made, its rings mapped and written"
if [ ${#FI_DIRS[@]} -gt 0 ]; then
	injected=$(awk '$1 == "calls" { print $7 }' "$log")
	[ "${injected:-0}" -gt 0 ] ||
		{ rm -f "$log"; fail "fault injection is on, but no fault was injected (seed $seed)"; }
	echo "ok: $injected allocations failed on demand"
fi
rm -f "$log"
wait_for "the fuzzer's packets left" 5 both_above tx_pkts "$tx0"
wait_for "the fuzzer's packets arrived" 5 both_above rx_pkts "$rx0"
echo "ok: the devices sent $(($(both tx_pkts) - tx0)) packets and received $(($(both rx_pkts) - rx0))"

counters_back "after the fuzzer" "$base" 30
echo "ok: every object the fuzzer made was released: $base"
for d in "$DEV_A" "$DEV_B"; do
	pp timeout 10 rdma link del "$d"
	wait_for "$d gone" 5 srd_link_gone "$d"
done
echo "ok: both devices went away with rdma link del"
dmesg_clean "the uverbs fuzzer"
exit $KSFT_PASS
