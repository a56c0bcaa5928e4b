#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Host-side test of `make install` and of the DKMS build, printing TAP:
#
#  - `make install DESTDIR=<tmp> PREFIX=/usr NODEPS=1` installs exactly the
#    module for every target kernel, the provider library libsrd.so.1 with
#    its -lsrd link and its libibverbs plugin link, srd.driver, the uapi
#    header, srddv.h, softsrd.pc and libsrd.pc, softsrd's libefa.so.1 in
#    LIBDIR/softsrd and srd-efa-run, srd_perf (no RUNPATH; its --help runs),
#    srd-vm-run with its harness in PREFIX/share/softsrd/scripts,
#    with the right modes and contents;
#    srd-efa-run puts the installed libefa.so.1 in front of the system's;
#    softsrd.pc's Cflags find the installed uapi header, and a
#    program using srddv.h builds with libsrd.pc against the installed
#    library;
#  - again with PREFIX=/usr/local, which moves the library, the plugin, the
#    headers and the .pc files under usr/local and names the plugin by path
#    in srd.driver;
#  - scripts/install.sh refuses, installing nothing, when the build is
#    missing;
#  - the source tree as DKMS gets it (git ls-files, no build/) builds
#    rdma_srd.ko where dkms.conf says, running dkms.conf's CLEAN and MAKE
#    the way dkms does, and never reaches for apt.
#
#   scripts/test-install.sh          # SRD_TEST_KVER=<kernel> picks the
#                                    # kernel for the DKMS build
#
# Uses the kernels the Makefile builds for: every /lib/modules/*/build.

set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^VERSION := *//p' "$TOP/Makefile")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
plugin=libsrd-rdmav34.so
lib=libsrd.so.1
kvers=()
for d in /lib/modules/*/build; do
	[ -d "$d" ] || continue
	d=${d%/build}
	# check-debug's kernel is not one the Makefile builds for by default.
	[ "${d%-srd-debug}" = "$d" ] || continue
	kvers+=("${d##*/}")
done
dkms_kver=${SRD_TEST_KVER:-${kvers[0]:-}}

# 32 tests, and one more for the module of each kernel.
planned=$((32 + ${#kvers[@]}))
echo "TAP version 13"
echo "1..$planned"

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	local l
	for l in "$@"; do
		echo "# $l"
	done
}
# check DESC CMD...: one test, passing when CMD succeeds.  CMD's output
# becomes diagnostics when it fails.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		local lines=()
		mapfile -t lines <<<"$out"
		not_ok "$desc" "${lines[@]}"
	fi
}
# tail_of LOG: the end of a log, as diagnostics for a failed test.
tail_of() {
	tail -n 20 "$1" | sed 's/^/# /'
}

# file_is FILE MODE [SOURCE]: FILE exists with MODE and, if given, the
# same content as SOURCE.
file_is() {
	[ -f "$1" ] || { echo "$1: missing"; return 1; }
	local m
	m=$(stat -c %a "$1")
	[ "$m" = "$2" ] || { echo "$1: mode $m, want $2"; return 1; }
	[ $# -lt 3 ] || cmp "$3" "$1"
}

# content_is FILE TEXT: FILE holds exactly the line TEXT.
content_is() {
	file_is "$1" 644 || return 1
	if [ "$(cat "$1")" != "$2" ] || [ "$(wc -l <"$1")" -ne 1 ]; then
		echo "$1 holds '$(cat "$1")', want '$2'"
		return 1
	fi
}

# manifest_is ROOT PATH...: ROOT holds exactly these files and links, and
# `make install` printed one INSTALL or LINK line for each (into ROOT.log).
manifest_is() {
	local root=$1 got want
	shift
	got=$(cd "$root" && find . ! -type d | sed 's/^\.//' | sort)
	want=$(printf '%s\n' "$@" | sort)
	diff -u <(echo "$want") <(echo "$got") || return 1
	got=$(sed -n -e "s|^  INSTALL $root||p" \
		-e "s|^  LINK    $root\(.*\) -> .*|\1|p" "$root.log" | sort)
	diff -u <(echo "$want") <(echo "$got")
}

# links_to LINK TARGET: LINK is a symbolic link whose target is TARGET
# (relative), and it resolves.
links_to() {
	[ -L "$1" ] || { echo "$1: not a symbolic link"; return 1; }
	[ "$(readlink "$1")" = "$2" ] || { echo "$1 -> $(readlink "$1"), want $2"; return 1; }
	[ -e "$1" ] || { echo "$1 -> $2 dangles"; return 1; }
}

# libs_link ROOT PREFIX: with the installed libsrd.pc, a program using
# <infiniband/srddv.h> compiles, links against the installed libsrd.so.1
# and binds srddv_query_ah@SRD_1.0.
libs_link() {
	local root=$1 prefix=$2 flags v
	export PKG_CONFIG_PATH=$root$prefix/lib/$multiarch/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
	pkg-config --validate libsrd || return 1
	v=$(pkg-config --modversion libsrd)
	[ "$v" = "$version" ] || { echo "version $v, want $version"; return 1; }
	flags=$(pkg-config --cflags --libs libsrd) || return 1
	case " $flags " in
	*" -L$root$prefix/lib/$multiarch -lsrd "*) ;;
	*) echo "libsrd.pc gives '$flags', want -L$root$prefix/lib/$multiarch -lsrd"; return 1 ;;
	esac
	printf '#include <infiniband/srddv.h>\nint main(void) { static struct srddv_ah_attr a; return srddv_query_ah(0, &a, sizeof(a)); }\n' >"$tmp/dv.c"
	# shellcheck disable=SC2086 # word splitting wanted
	cc -o "$tmp/dv" "$tmp/dv.c" $flags || return 1
	# (Not a pipe into grep -q: under pipefail, objdump's SIGPIPE fails it.)
	grep -Eq '\(SRD_1\.0\) +srddv_query_ah$' <<<"$(objdump -T "$tmp/dv")" || {
		echo "the program does not bind srddv_query_ah@SRD_1.0"
		return 1
	}
}

# pc_cflags ROOT PREFIX: the softsrd.pc installed in ROOT is valid, has
# the version and Requires, and its Cflags point at ROOT's headers.
pc_cflags() {
	local root=$1 prefix=$2 pcdir v r c
	pcdir=$root$prefix/lib/$multiarch/pkgconfig
	file_is "$pcdir/softsrd.pc" 644 || return 1
	export PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$root
	pkg-config --validate softsrd || return 1
	v=$(pkg-config --modversion softsrd)
	[ "$v" = "$version" ] || { echo "version $v, want $version"; return 1; }
	r=$(pkg-config --print-requires softsrd)
	[ "$r" = libibverbs ] || { echo "Requires '$r', want libibverbs"; return 1; }
	v=$(env -u PKG_CONFIG_SYSROOT_DIR pkg-config --variable=includedir softsrd)
	[ "$v" = "$prefix/include" ] || { echo "includedir $v, want $prefix/include"; return 1; }
	c=$(pkg-config --cflags softsrd)
	case " $c " in
	*" -I$root$prefix/include "*) ;;
	*) echo "Cflags '$c' lack -I$root$prefix/include"; return 1 ;;
	esac
}

# compiles ROOT PREFIX: the installed header compiles on its own, found
# through the installed softsrd.pc.
compiles() {
	local root=$1 prefix=$2 c
	c=$(PKG_CONFIG_PATH=$root$prefix/lib/$multiarch/pkgconfig \
	    PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags softsrd) || return 1
	# shellcheck disable=SC2086 # word splitting wanted
	printf '#include <rdma/srd-abi.h>\nint x = sizeof(struct srd_alloc_ucontext_cmd);\n' |
		cc $c -fsyntax-only -x c -
}

# efa_run_is ROOT PREFIX: the installed srd-efa-run (mode 755) runs its
# command with LIBDIR/softsrd first in LD_LIBRARY_PATH and nothing of the
# build tree, where ld.so then finds softsrd's libefa.so.1.
efa_run_is() {
	local root=$1 prefix=$2 run out
	run=$root$prefix/bin/srd-efa-run
	file_is "$run" 755 || return 1
	grep -q "^efa_dir='$prefix/lib/$multiarch/softsrd'$" "$run" ||
		{ echo "$run: efa_dir is not $prefix/lib/$multiarch/softsrd"; return 1; }
	grep -q "^provider_dir=''$" "$run" ||
		{ echo "$run: provider_dir is set"; return 1; }
	! grep -q "$TOP" "$run" || { echo "$run names the build tree"; return 1; }
	# shellcheck disable=SC2016 # the inner shell's variable
	out=$(LD_LIBRARY_PATH=/x "$run" sh -c 'echo "$LD_LIBRARY_PATH"') || return 1
	[ "$out" = "$prefix/lib/$multiarch/softsrd:/x" ] ||
		{ echo "LD_LIBRARY_PATH '$out'"; return 1; }
}

# perf_tool_is ROOT PREFIX: the installed srd_perf (mode 755) is the build's
# install copy, has no RUNPATH into the build tree, and runs with the
# installed libsrd.so.1: --help prints its usage and exits 0.
perf_tool_is() {
	local root=$1 prefix=$2 bin out
	bin=$root$prefix/bin/srd_perf
	file_is "$bin" 755 "$TOP/build/tools/install/srd_perf" || return 1
	! readelf -d "$bin" | grep -Eq 'R(UN)?PATH' ||
		{ echo "$bin has an RPATH or RUNPATH"; return 1; }
	out=$(LD_LIBRARY_PATH=$root$prefix/lib/$multiarch "$bin" --help) ||
		{ echo "$bin --help failed"; return 1; }
	[[ "$out" == "usage: srd_perf "*"--json"* ]] || { echo "--help printed: $out"; return 1; }
}

# vm_run_is ROOT PREFIX: the installed srd-vm-run (mode 755) and its
# harness, copies of scripts/, which it finds from its own path (--help
# runs and prints its usage) and which name nothing of the build tree.
vm_run_is() {
	local root=$1 prefix=$2 f out
	file_is "$root$prefix/bin/srd-vm-run" 755 "$TOP/scripts/srd-vm-run" || return 1
	for f in vm-run.sh vm-guest.sh vm-devices.sh; do
		file_is "$root$prefix/share/softsrd/scripts/$f" 755 "$TOP/scripts/$f" || return 1
	done
	file_is "$root$prefix/share/softsrd/scripts/common.sh" 644 "$TOP/scripts/common.sh" || return 1
	! grep -l "$TOP" "$root$prefix/bin/srd-vm-run" "$root$prefix"/share/softsrd/scripts/* ||
		{ echo "names the build tree"; return 1; }
	out=$("$root$prefix/bin/srd-vm-run" --help) || { echo "--help failed"; return 1; }
	[[ "$out" == "srd-vm-run [OPTIONS] [--] CMD"*"--devices N"* ]] || { echo "--help printed: $out"; return 1; }
}

# --- make install, PREFIX=/usr ---------------------------------------
d1=$tmp/usr-root
mkdir "$d1"
if make -s -C "$TOP" install NODEPS=1 DESTDIR="$d1" PREFIX=/usr >"$d1.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr"
else
	not_ok "make install DESTDIR=... PREFIX=/usr"
	tail_of "$d1.log"
fi

want1=()
for k in "${kvers[@]}"; do
	check "module for $k in lib/modules/$k/updates" \
		file_is "$d1/lib/modules/$k/updates/rdma_srd.ko" 644 "$TOP/build/kernel/$k/rdma_srd.ko"
	want1+=("/lib/modules/$k/updates/rdma_srd.ko")
done
check "provider library $lib in usr/lib/$multiarch" \
	file_is "$d1/usr/lib/$multiarch/$lib" 644 "$TOP/build/provider/$lib"
check "plugin usr/lib/$multiarch/libibverbs/$plugin links to ../$lib" \
	links_to "$d1/usr/lib/$multiarch/libibverbs/$plugin" "../$lib"
check "usr/lib/$multiarch/libsrd.so links to $lib" \
	links_to "$d1/usr/lib/$multiarch/libsrd.so" "$lib"
check "etc/libibverbs.d/srd.driver says 'driver srd'" \
	content_is "$d1/etc/libibverbs.d/srd.driver" "driver srd"
check "uapi header in usr/include/rdma" \
	file_is "$d1/usr/include/rdma/srd-abi.h" 644 "$TOP/uapi/rdma/srd-abi.h"
check "direct verbs header in usr/include/infiniband" \
	file_is "$d1/usr/include/infiniband/srddv.h" 644 "$TOP/provider/srddv.h"
check "softsrd.pc valid, Version $version, Requires libibverbs, Cflags -I\$DESTDIR/usr/include" \
	pc_cflags "$d1" /usr
check "installed header compiles with pkg-config --cflags softsrd" \
	compiles "$d1" /usr
check "libsrd.pc valid; a srddv.h program builds with it and binds SRD_1.0" \
	libs_link "$d1" /usr
check "softsrd's libefa.so.1 in usr/lib/$multiarch/softsrd" \
	file_is "$d1/usr/lib/$multiarch/softsrd/libefa.so.1" 644 "$TOP/build/efa-compat/libefa.so.1"
check "usr/bin/srd-efa-run puts usr/lib/$multiarch/softsrd in front" \
	efa_run_is "$d1" /usr
check "usr/bin/srd_perf runs with the installed libsrd, no RUNPATH" \
	perf_tool_is "$d1" /usr
check "the Wireshark dissector in usr/share/softsrd/wireshark" \
	file_is "$d1/usr/share/softsrd/wireshark/softsrd.lua" 644 "$TOP/tools/wireshark/softsrd.lua"
check "rdma_srd(7) in usr/share/man/man7" \
	file_is "$d1/usr/share/man/man7/rdma_srd.7" 644 "$TOP/build/man/man7/rdma_srd.7"
check "usr/bin/srd-vm-run and its harness in usr/share/softsrd/scripts" \
	vm_run_is "$d1" /usr
want1+=("/usr/lib/$multiarch/softsrd/libefa.so.1" /usr/bin/srd-efa-run /usr/bin/srd_perf
	/usr/share/softsrd/wireshark/softsrd.lua /usr/bin/srd-vm-run)
for f in vm-run.sh vm-guest.sh vm-devices.sh common.sh; do
	want1+=("/usr/share/softsrd/scripts/$f")
done
for m in "$TOP"/build/man/man[1-9]/*; do
	want1+=("/usr/share/man/${m#"$TOP"/build/man/}")
done
want1+=("/usr/lib/$multiarch/$lib" "/usr/lib/$multiarch/libsrd.so"
	"/usr/lib/$multiarch/libibverbs/$plugin" /etc/libibverbs.d/srd.driver
	/usr/include/rdma/srd-abi.h /usr/include/infiniband/srddv.h
	"/usr/lib/$multiarch/pkgconfig/softsrd.pc"
	"/usr/lib/$multiarch/pkgconfig/libsrd.pc")
check "nothing else installed (no depmod output), one INSTALL line per file" \
	manifest_is "$d1" "${want1[@]}"

# --- PREFIX=/usr/local -------------------------------------------------
# The build is the one just installed: -o all skips remaking it.
d2=$tmp/usr-local-root
mkdir "$d2"
if make -s -C "$TOP" -o all install NODEPS=1 DESTDIR="$d2" PREFIX=/usr/local >"$d2.log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=/usr/local"
else
	not_ok "make install DESTDIR=... PREFIX=/usr/local"
	tail_of "$d2.log"
fi
check "provider library in usr/local/lib/$multiarch, plugin link in its libibverbs" \
	file_is "$d2/usr/local/lib/$multiarch/$lib" 644 "$TOP/build/provider/$lib"
check "plugin usr/local/lib/$multiarch/libibverbs/$plugin links to ../$lib" \
	links_to "$d2/usr/local/lib/$multiarch/libibverbs/$plugin" "../$lib"
check "uapi header in usr/local/include/rdma" \
	file_is "$d2/usr/local/include/rdma/srd-abi.h" 644 "$TOP/uapi/rdma/srd-abi.h"
check "etc/libibverbs.d/srd.driver names the /usr/local plugin by path" \
	content_is "$d2/etc/libibverbs.d/srd.driver" "driver /usr/local/lib/$multiarch/libibverbs/libsrd"
check "softsrd.pc in usr/local, Cflags -I\$DESTDIR/usr/local/include" \
	pc_cflags "$d2" /usr/local
want2=()
for k in "${kvers[@]}"; do
	want2+=("/lib/modules/$k/updates/rdma_srd.ko")
done
check "libsrd.pc in usr/local; a srddv.h program builds with it" \
	libs_link "$d2" /usr/local
check "softsrd's libefa.so.1 in usr/local/lib/$multiarch/softsrd" \
	file_is "$d2/usr/local/lib/$multiarch/softsrd/libefa.so.1" 644 "$TOP/build/efa-compat/libefa.so.1"
check "usr/local/bin/srd-efa-run puts usr/local/lib/$multiarch/softsrd in front" \
	efa_run_is "$d2" /usr/local
want2+=("/usr/local/lib/$multiarch/softsrd/libefa.so.1" /usr/local/bin/srd-efa-run
	/usr/local/bin/srd_perf /usr/local/share/softsrd/wireshark/softsrd.lua
	/usr/local/bin/srd-vm-run)
for f in vm-run.sh vm-guest.sh vm-devices.sh common.sh; do
	want2+=("/usr/local/share/softsrd/scripts/$f")
done
for m in "$TOP"/build/man/man[1-9]/*; do
	want2+=("/usr/local/share/man/${m#"$TOP"/build/man/}")
done
want2+=("/usr/local/lib/$multiarch/$lib" "/usr/local/lib/$multiarch/libsrd.so"
	"/usr/local/lib/$multiarch/libibverbs/$plugin" /etc/libibverbs.d/srd.driver
	/usr/local/include/rdma/srd-abi.h /usr/local/include/infiniband/srddv.h
	"/usr/local/lib/$multiarch/pkgconfig/softsrd.pc"
	"/usr/local/lib/$multiarch/pkgconfig/libsrd.pc")
check "nothing installed outside usr/local, etc and lib/modules" \
	manifest_is "$d2" "${want2[@]}"

# --- a missing build ------------------------------------------------------
d3=$tmp/no-build-root
mkdir "$d3" "$tmp/empty-build"
refuses() {
	local out
	if out=$("$TOP/scripts/install.sh" "$d3" /usr "/usr/lib/$multiarch" /etc \
			"$tmp/empty-build" "${kvers[*]}" "$version" 2>&1); then
		echo "install.sh succeeded without a build"
		return 1
	fi
	[[ $out == *"run make first"* ]] || { echo "$out"; return 1; }
	[ -z "$(find "$d3" ! -type d)" ] || { echo "installed something:"; find "$d3" ! -type d; return 1; }
}
check "install.sh without a build says 'run make first' and installs nothing" refuses

# --- DKMS ---------------------------------------------------------------------
# dkms.conf's settings, read the way dkms reads them: sourced by bash
# with kernelver set.
dkms_conf() {
	(
		# shellcheck disable=SC2034 # used by dkms.conf
		kernelver=$dkms_kver
		# shellcheck source=/dev/null
		. "$TOP/dkms.conf"
		echo "$PACKAGE_NAME $PACKAGE_VERSION ${BUILT_MODULE_NAME[0]} ${AUTOINSTALL}"
		echo "${BUILT_MODULE_LOCATION[0]}"
		echo "${MAKE[0]}"
	)
}
conf_ok() {
	local conf
	conf=$(dkms_conf) || return 1
	if [ "$(sed -n 1p <<<"$conf")" != "softsrd $version rdma_srd yes" ] ||
	   [ "$(sed -n 2p <<<"$conf")" != "build/kernel/$dkms_kver/" ] ||
	   [[ $(sed -n 3p <<<"$conf") != *NODEPS=1* ]]; then
		echo "$conf"
		return 1
	fi
}
check "dkms.conf: softsrd $version, rdma_srd, AUTOINSTALL, NODEPS=1" conf_ok

# The tree DKMS would get: what git tracks or would track, without build/.
src=$tmp/dkms/softsrd/$version/build
mkdir -p "$src"
if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$TOP" && git ls-files -co --exclude-standard -z |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$src"
else
	tar -C "$TOP" --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$src"
fi

# Commands that installing dependencies would run: they must not be.
shim=$tmp/shim
mkdir "$shim"
for c in apt-get apt sudo dpkg-query; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$c" "$tmp/deps-called" >"$shim/$c"
	chmod +x "$shim/$c"
done

dkms_build() {
	# As dkms's actual_build: in the build directory, CLEAN, then MAKE[0]
	# with "make" turned into "make -jN KERNELRELEASE=<kernel>".
	cd "$src"
	# shellcheck disable=SC2034 # used by dkms.conf
	kernelver=$dkms_kver
	# shellcheck disable=SC2034
	kernel_source_dir=/lib/modules/$dkms_kver/build
	# shellcheck disable=SC2034
	dkms_tree=$tmp/dkms
	# shellcheck source=/dev/null
	. ./dkms.conf
	local make_command=${MAKE[0]}
	make_command=${make_command/#make/make -j$(nproc) KERNELRELEASE=$kernelver}
	echo "+ $CLEAN"
	eval "$CLEAN"
	echo "+ $make_command"
	export PATH=$shim:$PATH
	eval "$make_command"
}
if [ -z "$dkms_kver" ]; then
	not_ok "DKMS build: no kernel with a kbuild tree in /lib/modules"
elif (dkms_build) >"$tmp/dkms.log" 2>&1; then
	ok "DKMS build for $dkms_kver in a copy of the source tree"
else
	not_ok "DKMS build for $dkms_kver in a copy of the source tree"
	tail_of "$tmp/dkms.log"
fi
built_ok() {
	local loc vm
	loc=$(dkms_conf | sed -n 2p)
	file_is "$src/${loc}rdma_srd.ko" 644 || return 1
	vm=$(modinfo -F vermagic "$src/${loc}rdma_srd.ko")
	[ "${vm%% *}" = "$dkms_kver" ] || { echo "vermagic '$vm', want $dkms_kver"; return 1; }
}
check "DKMS: rdma_srd.ko for $dkms_kver at BUILT_MODULE_LOCATION" built_ok
no_deps() {
	[ ! -e "$tmp/deps-called" ] || { cat "$tmp/deps-called"; return 1; }
}
check "DKMS build ran no apt (NODEPS=1)" no_deps

if [ "$n" -ne "$planned" ]; then
	echo "# ran $n tests, planned $planned"
	exit 1
fi
[ "$failed" -eq 0 ]
