#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install every Debian package softsrd needs to build, test and demo, and
# nothing else.  Idempotent: when everything is present it prints nothing
# and exits 0.  Needs root (or sudo) only when something is missing.
#
#   scripts/install-deps.sh          # everything
#   scripts/install-deps.sh --list   # print the package list and exit

set -euo pipefail

PACKAGES=(
	# Build: compiler and make, the provider's pkg-config lookup.
	build-essential pkg-config
	# Target kernels and their kbuild trees: 6.1 (bookworm) and 6.12
	# (bookworm-security).
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	# rdma-core 44 userspace, headers and tools used by the tests.
	rdma-core ibverbs-utils libibverbs-dev ibverbs-providers perftest
	# EFA software run unmodified on softsrd (the srd_efa_* selftests,
	# make demo, make bench): libfabric's fi_info and fi_pingpong, Open
	# MPI and its mpicc.  libefa.so.1 itself comes with ibverbs-providers.
	libfabric-bin openmpi-bin libopenmpi-dev
	# rdma-core's Python bindings: selftests/srd_pyverbs.py checks what
	# rdma-core's own tests check of a device.
	python3-pyverbs
	# strace: selftests/srd_cq_syscalls.sh counts the datapath's system
	# calls with it.
	strace
	# tshark: selftests/srd_dissector.sh captures real traffic and decodes
	# it with tools/wireshark/softsrd.lua.
	tshark
	# The man pages (man/*.md), rendered to roff by pandoc; man-db renders
	# them back in the host test that checks them.
	pandoc man-db
	# The VM harness: qemu (TCG), a static busybox for the initramfs,
	# cpio to pack it, xz for 6.12's compressed modules, kmod and
	# iproute2 used inside the guest.
	qemu-system-x86 busybox-static cpio kmod iproute2 xz-utils
	# Static checking: make C=1; make lint's shellcheck (its checkpatch.pl
	# comes from linux-source-6.12, below).
	sparse shellcheck
	# The benchmark's limit rows (make bench): raw UDP throughput and
	# round trip.
	iperf3 sockperf
	# make check-debug's kernel (scripts/debug-kernel.sh): Debian's 6.12
	# source and what building a kernel takes.
	linux-source-6.12 flex bison bc libssl-dev libelf-dev
	# The SRD engine's fuzz target: clang, and libFuzzer's runtime
	# (libclang_rt.fuzzer), which bookworm ships in libclang-rt-14-dev
	# through the libclang-rt-dev metapackage.  gcc's ASan/UBSan
	# runtimes come with build-essential.
	clang libclang-rt-dev
)

if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "${PACKAGES[@]}"
	exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[ "${st:0:2}" = "ii" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done" >&2
