#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Detect the rdma-core provider ABI libsrd would be built against.
#
# Prints the ABI number (34) and exits 0 when the installed libibverbs is
# one ibverbs_private.h describes; otherwise prints one sentence saying what
# was found and exits 1.
#
# rdma-core's private ABI (IBVERBS_PRIVATE_<n>, plugins lib<name>-rdmav<n>.so)
# is 34 for rdma-core 34..56, then 57 (57..58), 59 (59..63) and 64.  Within
# ABI 34, v36.0 added ops to verbs_context_ops without changing the number,
# so only rdma-core 36..56 match ibverbs_private.h.
#
# The ABI is read from the version node libibverbs.so defines
# (objdump -p); the rdma-core release from pkg-config, whose libibverbs
# version is 1.<n>.<rdma-core version>, e.g. 1.14.44.0 for rdma-core 44.0.

PKG_CONFIG=${PKG_CONFIG:-pkg-config}
OBJDUMP=${OBJDUMP:-objdump}
want_abi=34
min_rc=36
max_rc=56

fail() {
	echo "softsrd's provider supports rdma-core's provider ABI $want_abi" \
	     "as in rdma-core $min_rc..$max_rc; found $1"
	exit 1
}

modver=$($PKG_CONFIG --modversion libibverbs 2>/dev/null) ||
	fail "no libibverbs known to $PKG_CONFIG (install libibverbs-dev)"
libdir=$($PKG_CONFIG --variable=libdir libibverbs 2>/dev/null)

# 1.14.44.0 -> 44.0 -> 44
rc=$(echo "$modver" | cut -d. -f3-)
rc_major=$(echo "$rc" | cut -d. -f1)

abi=$($OBJDUMP -p "$libdir/libibverbs.so" 2>/dev/null |
      sed -n 's/.*IBVERBS_PRIVATE_\([0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -z "$abi" ]; then
	# No objdump or no readable library: fall back to the release table.
	case $rc_major in
	3[4-9] | 4[0-9] | 5[0-6]) abi=34 ;;
	57 | 58) abi=57 ;;
	59 | 6[0-3]) abi=59 ;;
	*) abi=unknown ;;
	esac
fi

case $rc_major in
'' | *[!0-9]*) fail "libibverbs $modver, an unrecognised version" ;;
esac

if [ "$abi" != "$want_abi" ] || [ "$rc_major" -lt $min_rc ] ||
   [ "$rc_major" -gt $max_rc ]; then
	fail "libibverbs $modver (rdma-core $rc) with provider ABI $abi"
fi

echo "$abi"
