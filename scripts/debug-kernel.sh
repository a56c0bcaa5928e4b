#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The debug kernel of `make check-debug`: Debian's linux-source-6.12 built
# with a small configuration of ours: x86_64_defconfig, the kernel's
# kvm_guest.config, what our qemu guest and the selftests need
# (scripts/debug-kernel/guest.config), and KASAN, KFENCE, lockdep, UBSAN,
# DEBUG_OBJECTS, kmemleak and DEBUG_LIST (scripts/debug-kernel/
# debug.config).  Prints its release on stdout.
#
#   scripts/debug-kernel.sh
#
# The build is cached outside the clone, in $SRD_CACHE/debug-kernel/KEY
# (SRD_CACHE defaults to /var/cache/softsrd), KEY a hash of everything it
# is made from: this script, its two configuration fragments and the
# source package's version.  Only one build is kept.  The kernel is then
# installed where the harness finds kernels, as a kernel package would put
# it: /lib/modules/RELEASE (its modules, a build link to the cached tree,
# and the image as vmlinuz, which stays out of /boot so that no boot
# loader offers it).  Builds take the machine's cores (nproc).

set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
# log, die: "debug-kernel: MSG" on stderr (stdout is the release).
SRD_PROG=debug-kernel
# shellcheck source=scripts/common.sh
. "$TOP/scripts/common.sh"
inputs=$TOP/scripts/debug-kernel
cache=${SRD_CACHE:-/var/cache/softsrd}/debug-kernel
pkg=linux-source-6.12
tarball=/usr/src/$pkg.tar.xz

[ -r "$tarball" ] || die "$tarball is missing (scripts/install-deps.sh installs $pkg)"
srcver=$(dpkg-query -W -f='${Version}' "$pkg")
key=$( { cat "$0" "$inputs/guest.config" "$inputs/debug.config"; echo "$srcver"; } |
	sha256sum | cut -c1-16)
dir=$cache/$key

if [ ! -f "$dir/.softsrd-built" ]; then
	log "building a 6.12 debug kernel ($pkg $srcver) in $dir"
	start=$(date +%s)
	rm -rf "$cache"
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=1
	make -s -C "$dir" x86_64_defconfig >"$dir/.softsrd-config.log" 2>&1
	"$dir/scripts/kconfig/merge_config.sh" -m -O "$dir" "$dir/.config" \
		"$dir/kernel/configs/kvm_guest.config" "$inputs/guest.config" \
		"$inputs/debug.config" >>"$dir/.softsrd-config.log" 2>&1
	make -s -C "$dir" olddefconfig >>"$dir/.softsrd-config.log" 2>&1
	# Every option asked for must have survived the dependencies.
	missing=$(cat "$inputs/guest.config" "$inputs/debug.config" |
		grep -E '^CONFIG_[A-Z0-9_]+=' | while IFS= read -r l; do
		grep -qxF "$l" "$dir/.config" || echo "$l"
	done)
	[ -z "$missing" ] || die "the configuration lost: ${missing//$'\n'/ }"
	make -s -C "$dir" -j"$(nproc)" bzImage modules >"$dir/.softsrd-build.log" 2>&1 ||
		{ tail -30 "$dir/.softsrd-build.log" >&2; die "the kernel build failed (log: $dir/.softsrd-build.log)"; }
	touch "$dir/.softsrd-built"
	log "built in $(($(date +%s) - start)) s"
else
	log "cached: $dir"
fi

kver=$(make -s -C "$dir" kernelrelease)
mods=/lib/modules/$kver
if [ "$(cat "$mods/.softsrd-key" 2>/dev/null)" != "$key" ]; then
	log "installing $kver in $mods"
	rm -rf "$mods"
	make -s -C "$dir" INSTALL_MOD_STRIP=1 modules_install >/dev/null
	ln -sfn "$dir" "$mods/build"
	cp "$dir/arch/x86/boot/bzImage" "$mods/vmlinuz"
	depmod -a "$kver"
	echo "$key" >"$mods/.softsrd-key"
fi
echo "$kver"
