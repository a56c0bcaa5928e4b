#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run a command as root in a fresh qemu (TCG) guest of a Debian kernel, with
# rdma_srd loaded and libsrd usable uninstalled.
#
#   scripts/vm-run.sh [--kernel VER] [--timeout S] [--no-module]
#                     [--module FILE] [--provider PATH]
#                     [--nic udp:LOCAL_PORT:PEER_PORT] [--mac MAC]
#                     [--share DIR] [--plugin SPEC] -- CMD...
#   scripts/vm-run.sh [--kernel VER] --interactive
#
# VER is a version from /lib/modules or its major.minor ("6.1", "6.12");
# the default is 6.1.  The guest's root is this machine's / mounted
# read-only over 9p, so CMD sees the same paths (cached in the guest: a
# file changed on the host while the guest runs may be seen as it was;
# nothing is written there meanwhile); /tmp, /run and /var/tmp are
# tmpfs, and $SRD_VM_OUT is a writable directory shared with the host
# (it is kept in build/vm/runs/ when the run fails, deleted when it passes).
#
# CMD's output is streamed.  The exit status is CMD's, except that the run
# fails when the guest kernel logged an Oops, BUG, WARNING, general
# protection fault, soft lockup, hung task, panic or a netdev that cannot
# unregister for references left on it (the log is printed), when
# kmemleak (on a kernel that has it) reports a leak after CMD,
# when it never reported a status (crash), or when --timeout (default 600)
# seconds pass.  A guest that crashes before CMD starts, or whose kernel
# logs one of those problems while booting, before anything of softsrd
# runs, is booted once more (an emulator fault, logged as such; CMD does
# not run on the first); a crash after CMD starts fails the run, as does a
# second faulty boot.
#
# The guest loads the build's rdma_srd.ko for VER, or FILE (--module),
# and its libibverbs loads the build's libsrd through RDMAV_DRIVERS, or
# PATH's (--provider PATH, as RDMAV_DRIVERS takes it: the plugin's path
# without -rdmavNN.so), or, with --provider '', the one installed on
# this machine's root.  The initramfs and the runs' directories are kept
# under $SRD_BUILD (default build/): srd-vm-run, the installed command,
# runs this script with its own.
#
# --nic gives the guest a virtio-net NIC joined to another guest's by qemu
# UDP socket networking: frames leave from 127.0.0.1:LOCAL_PORT to
# 127.0.0.1:PEER_PORT, and the other guest swaps the two.  (Not qemu's TCP
# socket mode: Nagle on that stream held the second of two back-to-back
# frames for tens of ms, a latency floor for every reliable transport.)
# --mac sets its MAC.  --share
# mounts the host directory DIR, writable, at the same path in the guest;
# unlike $SRD_VM_OUT it is kept, and several guests can write into one DIR.
# --plugin loads a qemu TCG plugin: SPEC is qemu's -plugin argument,
# file=LIB.so[,NAME=VALUE...] (scripts/bench.sh --profile).

set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# resolve_kernel, SRD_BAD_KLOG, usage (this header)
# shellcheck source=scripts/common.sh
. "$TOP/scripts/common.sh"
BUILD=${SRD_BUILD:-$TOP/build}
kernel=6.1
timeout_s=600
interactive=0
load_module=1
nic=
mac=
share=
plugin=
module=
provider=$BUILD/provider/libsrd

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--no-module) load_module=0; shift ;;
	--module) module=$2; shift 2 ;;
	--provider) provider=$2; shift 2 ;;
	--nic) nic=$2; shift 2 ;;
	--mac) mac=$2; shift 2 ;;
	--share) share=$2; shift 2 ;;
	--plugin) plugin=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) echo "vm-run: unknown option $1" >&2; usage ;;
	esac
done
[ $interactive -eq 1 ] || [ $# -gt 0 ] || usage
case "$nic" in
""|udp:[0-9]*:[0-9]*) ;;
*) echo "vm-run: --nic takes udp:LOCAL_PORT:PEER_PORT, not '$nic'" >&2; exit 2 ;;
esac
if [ -n "$share" ]; then
	[ -d "$share" ] || { echo "vm-run: --share $share is not a directory" >&2; exit 2; }
	share=$(cd "$share" && pwd)
fi

kver=$(resolve_kernel "$kernel") || exit 2
vmlinuz=/boot/vmlinuz-$kver
# A kernel of our own (the debug kernel) keeps its image with its modules.
[ -r "$vmlinuz" ] || [ ! -r "/lib/modules/$kver/vmlinuz" ] || vmlinuz=/lib/modules/$kver/vmlinuz
[ -r "$vmlinuz" ] || { echo "vm-run: $vmlinuz is missing (install linux-image-$kver)" >&2; exit 2; }

# libibverbs takes a relative RDMAV_DRIVERS for a provider's name.
case $provider in
"") ;;
*)
	[[ $provider == /* ]] || provider=$PWD/$provider
	compgen -G "$provider-rdmav*.so" >/dev/null ||
		{ echo "vm-run: no provider $provider-rdmavNN.so" >&2; exit 2; }
	;;
esac
if [ -n "$module" ]; then
	[ -f "$module" ] || { echo "vm-run: --module $module is missing" >&2; exit 2; }
	module=$(cd "$(dirname "$module")" && pwd)/${module##*/}
else
	module=$BUILD/kernel/$kver/rdma_srd.ko
	if [ $load_module -eq 1 ] && [ ! -f "$module" ]; then
		echo "vm-run: $module is missing: run 'make' first" >&2
		exit 2
	fi
fi

# The initramfs: busybox, the virtio and 9p modules (decompressed, since
# busybox insmod may not read .xz), and stage 1 of init.  Rebuilt when this
# script or the kernel changes.
initrd=$BUILD/vm/initramfs-$kver.cpio
if [ ! -f "$initrd" ] || [ "$initrd" -ot "$0" ] ||
   [ "$initrd" -ot "/lib/modules/$kver/modules.dep" ]; then
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage"/{bin,mods,proc,sys,dev,newroot}
	cp /bin/busybox "$stage/bin/busybox"
	: >"$stage/mods/order"
	for m in virtio_pci 9pnet_virtio 9p virtio_rng; do
		modprobe -S "$kver" --show-depends "$m"
	done |
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		name=$(basename "$path"); name=${name%%.ko*}
		grep -qx "$name" "$stage/mods/order" && continue
		case "$path" in
		*.ko.xz) xz -dc "$path" >"$stage/mods/$name.ko" ;;
		*.ko.zst) zstd -qdc "$path" >"$stage/mods/$name.ko" ;;
		*.ko.gz) gzip -dc "$path" >"$stage/mods/$name.ko" ;;
		*) cp "$path" "$stage/mods/$name.ko" ;;
		esac
		echo "$name" >>"$stage/mods/order"
	done
	cat >"$stage/init" <<'INIT'
#!/bin/busybox sh
# Stage 1: mount this machine's root read-only over 9p, then hand over.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do
	insmod /mods/$m.ko || echo "vm: insmod $m failed"
done
arg() { sed -n "s/.*srd_vm\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
out=$(arg out)
stage2=$(arg stage2)
top=$(arg top)
share=$(arg share)
# cache=loose: without it every open, stat and page of a program is a trip
# to the host; python3 took 2.2 s to start on 6.1 and 12 s on the debug
# kernel (0.3 s and 1.7 s cached).  Only the read-only root is cached.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 root /newroot
# tmpfs on /run, /tmp and /var/tmp; where the tree (or the shared output
# directory) lives below one of them, bind its top directory back in.
for d in run tmp var/tmp; do
	mkdir -p "/keep/$d"
	mount --bind "/newroot/$d" "/keep/$d"
	mount -t tmpfs tmpfs "/newroot/$d"
	for p in "$top" "$out" $share; do
		case "$p" in
		"/$d/"*)
			first=${p#/$d/}
			first=${first%%/*}
			[ -d "/newroot/$d/$first" ] && continue
			mkdir -p "/newroot/$d/$first"
			mount --bind "/keep/$d/$first" "/newroot/$d/$first"
			;;
		esac
	done
done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out "/newroot$out"
[ -z "$share" ] || mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share "/newroot$share"
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot "$stage2" "$out"
INIT
	chmod +x "$stage/init"
	mkdir -p "$(dirname "$initrd")"
	# Several guests may start at once (make bench): each builds its own
	# copy and renames it into place, which is atomic.
	tmp=$(mktemp "$initrd.XXXXXX")
	(cd "$stage" && find . | cpio -o -H newc --quiet) >"$tmp"
	mv "$tmp" "$initrd"
	rm -rf "$stage"
	trap - EXIT
fi

mkdir -p "$BUILD/vm/runs"
out=$(mktemp -d "$BUILD/vm/runs/run.XXXXXX")
chmod 755 "$out"
{
	echo "SRD_TOP=$(printf '%q' "$TOP")"
	echo "SRD_KVER=$(printf '%q' "$kver")"
	echo "SRD_MODULE=$(printf '%q' "$([ $load_module -eq 1 ] && echo "$module")")"
	echo "SRD_PROVIDER=$(printf '%q' "$provider")"
	echo "SRD_INTERACTIVE=$interactive"
	echo "SRD_VM_CRASH_BEFORE_START=$(printf '%q' "${SRD_VM_CRASH_BEFORE_START:-}")"
	echo "SRD_VM_BOOT_FAULT=$(printf '%q' "${SRD_VM_BOOT_FAULT:-}")"
} >"$out/env"
if [ $interactive -eq 0 ]; then
	printf 'cd %q || exit 125\n' "$PWD" >"$out/cmd"
	printf '%q ' "$@" >>"$out/cmd"
	echo >>"$out/cmd"
fi

# tsc=reliable: under TCG the clocksource watchdog sometimes finds the TSC
# skewed against the HPET and marks it unstable.  That flips the
# sched_clock static key at run time, and TCG can miss the cross-CPU code
# patching: a guest died of "Oops: int3" in sched_clock_cpu that way.
append="console=ttyS1 loglevel=6 panic=-1 softlockup_panic=0 tsc=reliable srd_vm.out=$out srd_vm.top=$TOP srd_vm.stage2=$TOP/scripts/vm-guest.sh"
[ -z "$share" ] || append+=" srd_vm.share=$share"
qemu=(qemu-system-x86_64 -machine "q35,accel=tcg" -cpu max -smp 2 -m 2G
	-display none -no-reboot -nodefaults
	-kernel "$vmlinuz" -initrd "$initrd"
	-append "$append"
	-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap"
	-device virtio-rng-pci)
if [ -n "$share" ]; then
	qemu+=(-virtfs "local,path=$share,mount_tag=share,security_model=none,multidevs=remap")
fi
[ -z "$plugin" ] || qemu+=(-plugin "$plugin")
if [ -n "$nic" ]; then
	ports=${nic#udp:}
	qemu+=(-netdev "socket,id=n0,udp=127.0.0.1:${ports#*:},localaddr=127.0.0.1:${ports%%:*}")
	qemu+=(-device "virtio-net-pci,netdev=n0${mac:+,mac=$mac}")
fi
if [ $interactive -eq 1 ]; then
	qemu+=(-serial mon:stdio -serial "file:$out/kmsg.log")
	echo "vm-run: interactive guest of $kver; leave with 'poweroff' or Ctrl-A x" >&2
	"${qemu[@]}" || true
	exit 0
fi
qemu+=(-chardev "stdio,id=con,signal=off" -serial chardev:con
	-serial "file:$out/kmsg.log")

# A guest that dies before its command starts ($out/started) died of the
# emulator, not of the project: qemu 7.2's TCG has a known fault that can
# crash a 6.x kernel at boot (an int3 Oops in sched_clock_cpu while
# patching text).  So did one whose kernel logged a problem while booting,
# before anything of softsrd ran ($out/boot-fault: vm-guest.sh checks the
# log first and runs nothing on such a kernel).  Such a run is logged and
# booted once more; a crash once the command has started fails the run,
# as does a second early crash or boot fault.  The same fault can strike
# mid-run where a test toggles a trace event (the debug kernel, 2026-12-05,
# in srd_txbuf.sh: an int3 Oops at trace_sched_wakeup, whose jump label
# tracing's cmdline recording patches); such a run fails too, and its
# kernel log says so.  The tests that enable trace events turn that
# recording off first (tracefs_open in selftests/lib.sh), so that only the
# events' own tracepoints are patched.
status=0
for boot in 1 2; do
	status=0
	rm -f "$out/boot-fault"
	timeout --foreground -k 5 "$timeout_s" "${qemu[@]}" </dev/null || status=$?
	[ ! -f "$out/started" ] && [ ! -f "$out/rc" ] && [ "$status" -ne 124 ] &&
		[ "$status" -ne 137 ] && [ "$boot" -eq 1 ] || break
	mv "$out/kmsg.log" "$out/kmsg.boot1.log" 2>/dev/null || true
	if [ -f "$out/boot-fault" ]; then
		echo "vm-run: the guest kernel ($kver) logged a problem while booting, before" \
			"anything of softsrd ran: booting again once; first boot's kernel log:" \
			"$out/kmsg.boot1.log" >&2
		grep -E -A 12 "$SRD_BAD_KLOG" "$out/kmsg.boot1.log" 2>/dev/null |
			head -30 | sed 's/^/vm-run:   /' >&2 || true
		continue
	fi
	echo "vm-run: the guest ($kver) stopped before its command started (qemu exit $status):" \
		"an emulator fault, booting again once; first boot's kernel log: $out/kmsg.boot1.log" >&2
	grep -E -A 12 'Oops|BUG:|panic|general protection' "$out/kmsg.boot1.log" 2>/dev/null |
		head -30 | sed 's/^/vm-run:   /' >&2 || true
done
rc=
[ -f "$out/rc" ] && rc=$(cat "$out/rc")

if [ -f "$out/kmsg.log" ] && grep -Eq "$SRD_BAD_KLOG" "$out/kmsg.log"; then
	echo "vm-run: FAIL: the guest kernel ($kver) logged a problem:" >&2
	grep -E -A 30 "$SRD_BAD_KLOG" "$out/kmsg.log" | head -120 >&2
	echo "vm-run: full log: $out/kmsg.log" >&2
	exit 1
fi
# kmemleak's report (the debug kernel's guest writes it after CMD).
if [ -s "$out/kmemleak" ]; then
	echo "vm-run: FAIL: kmemleak found unreferenced objects in the guest ($kver):" >&2
	head -80 "$out/kmemleak" >&2
	echo "vm-run: full report: $out/kmemleak" >&2
	exit 1
fi
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
	echo "vm-run: FAIL: timed out after ${timeout_s}s; kernel log: $out/kmsg.log" >&2
	tail -20 "$out/kmsg.log" >&2 || true
	exit 124
fi
if [ -z "$rc" ]; then
	echo "vm-run: FAIL: the guest stopped without reporting a status (qemu exit $status); kernel log: $out/kmsg.log" >&2
	tail -30 "$out/kmsg.log" >&2 || true
	exit 125
fi
[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || { echo "vm-run: command exited $rc; kernel log: $out/kmsg.log" >&2; exit "$rc"; }
rm -rf "$out"
exit "$rc"
