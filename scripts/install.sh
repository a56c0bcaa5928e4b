#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install softsrd's build outputs where a distribution would.  Run by
# `make install` after the build; see the top-level Makefile.
#
#   scripts/install.sh DESTDIR PREFIX LIBDIR SYSCONFDIR BUILD KVERS VERSION
#
#   DESTDIR     staging root for packaging; empty installs to the live system
#   PREFIX      /usr by default
#   LIBDIR      $PREFIX/lib/<multiarch> by default
#   SYSCONFDIR  /etc by default, for every PREFIX (see below)
#   BUILD       the build directory (build/)
#   KVERS       space-separated kernel releases whose module is installed
#   VERSION     softsrd's version, for the pkg-config file
#
# What goes where (each path under DESTDIR):
#
#   /lib/modules/KVER/updates/rdma_srd.ko   for every KVER, as out-of-tree
#                                           modules go; then `depmod -a KVER`,
#                                           but only when DESTDIR is empty
#   LIBDIR/libsrd.so.1                      the provider library (SONAME
#                                           libsrd.so.1), with the direct verbs
#   LIBDIR/libsrd.so -> libsrd.so.1         for linking with -lsrd
#   LIBDIR/libibverbs/libsrd-rdmav34.so     the verbs provider plugin, a link
#     -> ../libsrd.so.1                     to the library, as rdma-core
#                                           installs libefa
#   SYSCONFDIR/libibverbs.d/srd.driver      tells libibverbs to load it
#   LIBDIR/softsrd/libefa.so.1              softsrd's libefa (efa-compat/), in
#                                           a directory of its own that ld.so
#                                           never searches by itself: never
#                                           over the system's libefa.so.1
#   PREFIX/bin/srd-efa-run                  runs a command with it in front
#   PREFIX/bin/srd_perf                     the SRD benchmark (tools/srd_perf),
#                                           the build's copy without a RUNPATH
#   PREFIX/bin/srd-vm-run                   runs a command in a qemu guest with
#                                           the installed module and provider
#   PREFIX/share/softsrd/scripts/           its harness: vm-run.sh, vm-guest.sh,
#     vm-run.sh vm-guest.sh vm-devices.sh   vm-devices.sh, common.sh, as in
#     common.sh                             scripts/ (srd-vm-run finds them
#                                           from its own path)
#   PREFIX/share/softsrd/wireshark/softsrd.lua  the Wireshark dissector
#                                           (tshark -X lua_script:...)
#   PREFIX/share/man/manN/*.N               the man pages built from man/
#                                           (rdma_srd.7, srddv.7, srddv_*.3,
#                                           srd-efa-run.1, srd_perf.1, and
#                                           .so links)
#   PREFIX/include/rdma/*.h                 every uapi header (srd-abi.h)
#   PREFIX/include/infiniband/*dv.h         direct-verbs headers, provider/*dv.h
#                                           (srddv.h)
#   LIBDIR/pkgconfig/softsrd.pc             from provider/softsrd.pc.in
#   LIBDIR/pkgconfig/libsrd.pc              from provider/libsrd.pc.in
#
# SYSCONFDIR is /etc whatever PREFIX is: libibverbs reads driver files only
# from the directory compiled into it, /etc/libibverbs.d for Debian's
# rdma-core, so a srd.driver under /usr/local/etc would never be read.
# The driver file says "driver srd" when the plugin goes to the directory
# libibverbs loads plugins from (LIBDIR/libibverbs with PREFIX=/usr);
# anywhere else (PREFIX=/usr/local) it names the plugin by absolute path,
# "driver /usr/local/lib/<multiarch>/libibverbs/libsrd", which libibverbs
# completes with -rdmav34.so.
#
# Every input is checked before anything is installed: a missing build
# output stops the install with "run make first" and installs nothing.

set -euo pipefail

if [ $# -ne 7 ]; then
	echo "usage: $0 DESTDIR PREFIX LIBDIR SYSCONFDIR BUILD KVERS VERSION" >&2
	exit 2
fi
destdir=$1
prefix=$2
libdir=$3
sysconfdir=$4
build=$5
kvers=$6
version=$7
TOP=$(cd "$(dirname "$0")/.." && pwd)
# die ("install: ..." on stderr)
# shellcheck source=scripts/common.sh
. "$TOP/scripts/common.sh"

for v in prefix libdir sysconfdir; do
	case ${!v} in
	/*) ;;
	*) die "${v^^} must be an absolute path, not '${!v}'" ;;
	esac
done
[ -n "$version" ] || die "no VERSION given"

# The plugin's name, lib<PROVIDER>-rdmav<PABI>.so, and the library's,
# lib<PROVIDER>.so.1 (its SONAME), as provider/Makefile builds them: the
# ABI is the installed libibverbs' (provider/detect-abi.sh).
provider=$(sed -n 's/^PROVIDER := *//p' "$TOP/provider/Makefile")
pabi=$(sh "$TOP/provider/detect-abi.sh" | awk 'NF == 2 { print $1 }')
if [ -z "$provider" ] || [ -z "$pabi" ]; then
	die "cannot read PROVIDER from provider/Makefile or the ABI from provider/detect-abi.sh"
fi
plugin=lib$provider-rdmav$pabi.so
lib=lib$provider.so.1
devlink=lib$provider.so

# Where the installed libibverbs loads plugins from.
ibv_libdir=$(pkg-config --variable=libdir libibverbs 2>/dev/null) ||
	die "pkg-config cannot find libibverbs: install libibverbs-dev"
if [ "$libdir" = "$ibv_libdir" ] || [ "$libdir" -ef "$ibv_libdir" ]; then
	driver_line="driver $provider"
else
	driver_line="driver $libdir/libibverbs/lib$provider"
fi

# The files to install: SOURCE MODE DEST, DEST without DESTDIR.
srcs=()
modes=()
dests=()
add() {
	srcs+=("$1")
	modes+=("$2")
	dests+=("$3")
}

# The symbolic links to make: DEST TARGET, TARGET relative to DEST's
# directory so that the tree stays relocatable.
links=()
targets=()
add_link() {
	links+=("$1")
	targets+=("$2")
}

missing=()
need() {
	[ -f "$1" ] || missing+=("$1")
}

for k in $kvers; do
	need "$build/kernel/$k/rdma_srd.ko"
	add "$build/kernel/$k/rdma_srd.ko" 0644 "/lib/modules/$k/updates/rdma_srd.ko"
done
need "$build/provider/$lib"
add "$build/provider/$lib" 0644 "$libdir/$lib"
add_link "$libdir/$devlink" "$lib"
add_link "$libdir/libibverbs/$plugin" "../$lib"

shopt -s nullglob
uapi=("$TOP"/uapi/rdma/*.h)
dv=("$TOP"/provider/*dv.h)
shopt -u nullglob
[ ${#uapi[@]} -gt 0 ] || missing+=("$TOP/uapi/rdma/*.h")
for h in "${uapi[@]}"; do
	add "$h" 0644 "$prefix/include/rdma/${h##*/}"
done
for h in "${dv[@]}"; do
	add "$h" 0644 "$prefix/include/infiniband/${h##*/}"
done
need "$TOP/provider/softsrd.pc.in"
need "$TOP/provider/libsrd.pc.in"
efadir=$libdir/softsrd
need "$build/efa-compat/libefa.so.1"
add "$build/efa-compat/libefa.so.1" 0644 "$efadir/libefa.so.1"
need "$TOP/efa-compat/srd-efa-run.in"
need "$build/tools/install/srd_perf"
add "$build/tools/install/srd_perf" 0755 "$prefix/bin/srd_perf"
add "$TOP/tools/wireshark/softsrd.lua" 0644 "$prefix/share/softsrd/wireshark/softsrd.lua"
add "$TOP/scripts/srd-vm-run" 0755 "$prefix/bin/srd-vm-run"
for f in vm-run.sh vm-guest.sh vm-devices.sh; do
	add "$TOP/scripts/$f" 0755 "$prefix/share/softsrd/scripts/$f"
done
add "$TOP/scripts/common.sh" 0644 "$prefix/share/softsrd/scripts/common.sh"
need "$build/man/man7/rdma_srd.7"
for m in "$build"/man/man[1-9]/*; do
	[ -e "$m" ] || continue
	add "$m" 0644 "$prefix/share/man/${m#"$build"/man/}"
done

if [ ${#missing[@]} -gt 0 ]; then
	for f in "${missing[@]}"; do
		echo "install: missing ${f#"$TOP"/}" >&2
	done
	die "build outputs are missing: run make first"
fi
[ -n "$kvers" ] || echo "install: no kernel given: installing no module" >&2

inst() {
	install -D -m "$2" "$1" "$destdir$3"
	echo "  INSTALL $destdir$3"
}

for i in "${!srcs[@]}"; do
	inst "${srcs[$i]}" "${modes[$i]}" "${dests[$i]}"
done

for i in "${!links[@]}"; do
	mkdir -p "$(dirname "$destdir${links[$i]}")"
	ln -sfn "${targets[$i]}" "$destdir${links[$i]}"
	echo "  LINK    $destdir${links[$i]} -> ${targets[$i]}"
done

# Generated files, staged in a temporary directory.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "$driver_line" >"$tmp/$provider.driver"
inst "$tmp/$provider.driver" 0644 "$sysconfdir/libibverbs.d/$provider.driver"

# srd-efa-run for the installed library; libsrd is installed, so it needs
# no plugin path of its own.
sed -e "s|@EFA_DIR@|$efadir|" -e "s|@PROVIDER_DIR@||" \
	"$TOP/efa-compat/srd-efa-run.in" >"$tmp/srd-efa-run"
inst "$tmp/srd-efa-run" 0755 "$prefix/bin/srd-efa-run"

# libdir relative to prefix when it is under it, so the .pc file stays
# relocatable.
pc_libdir=$libdir
case $libdir in
"$prefix"/*) pc_libdir="\${prefix}/${libdir#"$prefix"/}" ;;
esac
for pc_name in softsrd libsrd; do
	pc=$(<"$TOP/provider/$pc_name.pc.in")
	pc=${pc//@PREFIX@/"$prefix"}
	pc=${pc//@LIBDIR@/"$pc_libdir"}
	pc=${pc//@VERSION@/"$version"}
	printf '%s\n' "$pc" >"$tmp/$pc_name.pc"
	inst "$tmp/$pc_name.pc" 0644 "$libdir/pkgconfig/$pc_name.pc"
done

# Programs linked with -lsrd find libsrd.so.1 through ld.so's cache when
# LIBDIR is not one of its built-in directories (/usr/local/lib/...).
if [ -z "$destdir" ] && command -v ldconfig >/dev/null; then
	echo "  LDCONFIG"
	ldconfig
fi

if [ -z "$destdir" ]; then
	for k in $kvers; do
		if [ -e "/lib/modules/$k/updates/dkms/rdma_srd.ko" ]; then
			echo "install: warning: DKMS also installed rdma_srd for $k" \
			     "(updates/dkms): run 'dkms remove softsrd/$version -k $k'" >&2
		fi
		echo "  DEPMOD  $k"
		depmod -a "$k"
	done
fi
