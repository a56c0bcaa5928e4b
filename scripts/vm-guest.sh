#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Stage 2 of the guest's init (see scripts/vm-run.sh): runs as PID 1 on the
# read-only root.  Loads rdma_srd, runs the command on ttyS0, reports its
# status in the shared directory, and powers off.

out=$1
# shellcheck source=/dev/null
. "$out/env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-dumb} SRD_VM_OUT=$out SRD_TOP SRD_KVER SRD_MODULE
# libibverbs loads the uninstalled provider from here (it appends
# -rdmavNN.so); without one, the provider installed on the root.
if [ -n "$SRD_PROVIDER" ]; then
	export RDMAV_DRIVERS=$SRD_PROVIDER
fi

# Power off, and wait for it without touching the root file system: the
# 9p share goes away first, and an exec of sleep or the next line of this
# script then fails, bash exits, and init's death panics the guest ("Call
# Trace" after "sysrq: Power Off", which vm-run rightly flags).  A loop of
# builtins needs nothing more from the share.
poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	while :; do :; done
}

# The kernel has booted and nothing of softsrd has run yet.  A problem in
# its log now (an Oops, a WARNING, a sanitizer's report) is the boot's:
# the emulator's (qemu 7.2's TCG has faults that can strike a 6.x kernel
# while it boots) or the kernel's own.  The command does not run on such a
# kernel; vm-run.sh boots once more and fails the run if the second boot
# logs one too.  For the harness's own tests, SRD_VM_BOOT_FAULT=1 makes
# the first boot log one, SRD_VM_BOOT_FAULT=always every boot.
# shellcheck source=scripts/common.sh
. "$SRD_TOP/scripts/common.sh"
if [ "${SRD_VM_BOOT_FAULT:-}" = always ] ||
   { [ -n "${SRD_VM_BOOT_FAULT:-}" ] && [ ! -e "$out/boot-faulted-once" ]; }; then
	: >"$out/boot-faulted-once"
	echo "WARNING: CPU: 0 PID: 1 at vm-guest.sh: a fault while booting, simulated" >/dev/kmsg
fi
if dmesg | grep -Eq "$SRD_BAD_KLOG"; then
	: >"$out/boot-fault"
	poweroff_now
fi

mount -t devpts devpts /dev/pts 2>/dev/null
# POSIX shared memory, as every system has it: libfabric's shm provider
# and Open MPI use it.
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ip link set lo up
hostname softsrd-vm
echo 1 >/proc/sys/kernel/sysrq

if [ -n "$SRD_MODULE" ]; then
	# insmod does not resolve dependencies: load what modinfo names first.
	deps=$(modinfo -F depends "$SRD_MODULE" | tr , ' ')
	# shellcheck disable=SC2086
	if ! modprobe -a ib_uverbs $deps || ! insmod "$SRD_MODULE"; then
		echo "vm: cannot load $SRD_MODULE" >/dev/ttyS0
		echo 125 >"$out/rc"
		poweroff_now
	fi
fi

if [ "$SRD_INTERACTIVE" = 1 ]; then
	cd "$SRD_TOP" || true
	setsid -c bash -i </dev/ttyS0 >/dev/ttyS0 2>&1
	poweroff_now
fi

stty -F /dev/ttyS0 raw -echo 2>/dev/null
# Tests of the harness: a crash before the command starts, on the first
# boot only (vm-run.sh boots such a guest once more).
if [ -n "${SRD_VM_CRASH_BEFORE_START:-}" ] && [ ! -e "$out/crashed-once" ]; then
	: >"$out/crashed-once"
	sync
	echo c >/proc/sysrq-trigger
fi
# Turn RPS's static key on now, while no packet path is hot: a test that
# sets rps_cpus later (srd_srd_qp.sh) would otherwise patch kernel text
# under traffic, and TCG once ran a stale int3 of that patch ("Oops:
# int3" in __skb_get_hash_net, 6.12).  lo's map keeps the key on; lo's
# packets are steered to CPU 0, which changes nothing the tests measure.
if [ -w /sys/class/net/lo/queues/rx-0/rps_cpus ]; then
	echo 1 >/sys/class/net/lo/queues/rx-0/rps_cpus
fi
# The same path patches text once more: the first packet RPS steers
# computes a flow hash, whose secret is set up once (net_get_random_once,
# a static key turned off by a work item after it).  That first hash
# crashed a 6.12 guest the same way with lo's map in place (make check,
# srd_srd_qp case 8).  One datagram through lo now, and a moment for the
# work item, makes that patch too before any test's traffic.
echo >/dev/udp/127.0.0.1/9 2>/dev/null || true
sleep 0.5
# kmemleak (the debug kernel): forget what boot left, so that what it
# reports after the command is the command's.
kmemleak=
if grep -qw kmemleak_alloc /proc/kallsyms 2>/dev/null; then
	kmemleak=/sys/kernel/debug/kmemleak
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	echo clear >"$kmemleak"
fi
# From here on a crash is the command's: vm-run.sh does not boot again.
: >"$out/started"
sync
bash "$out/cmd" </dev/null >/dev/ttyS0 2>&1
echo $? >"$out/rc"
if [ -n "$kmemleak" ]; then
	# The command may have unmounted debugfs.
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	# An object is reported once it has been unreferenced for 5 s: scan,
	# wait that out, scan again.
	echo scan >"$kmemleak"
	sleep 6
	echo scan >"$kmemleak"
	cat "$kmemleak" >"$out/kmemleak" 2>/dev/null
fi
dmesg >"$out/dmesg" 2>/dev/null
poweroff_now
