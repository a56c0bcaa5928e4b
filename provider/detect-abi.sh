#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Detect the rdma-core provider ABI libsrd would be built against.
#
# Prints the ABI number and the rdma-core release (its major number), as
# "59 61", and exits 0 when the installed libibverbs is one
# ibverbs_private.h describes; otherwise prints one sentence saying what
# was found and exits 1.
#
# rdma-core's private ABI (IBVERBS_PRIVATE_<n>, plugins lib<name>-rdmav<n>.so)
# is 34 for rdma-core 34..56, then 57 (57..58), 59 (59..63), 64 and 65.
# The number does not say the layout: v36.0 and v62.0 added ops to
# verbs_context_ops without changing it, so the release decides, and
# rdma-core 34..35 (a shorter verbs_context_ops) is refused.
#
# The ABI is read from the version node libibverbs.so defines
# (objdump -p); the rdma-core release from pkg-config, whose libibverbs
# version is 1.<n>.<rdma-core version>, e.g. 1.14.44.0 for rdma-core 44.0.

PKG_CONFIG=${PKG_CONFIG:-pkg-config}
OBJDUMP=${OBJDUMP:-objdump}
fail() {
	echo "softsrd's provider supports rdma-core 36 to 65 (provider ABI 34" \
	     "as in 36..56, 57, 59, 64 and 65); found $1"
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
	64) abi=64 ;;
	65) abi=65 ;;
	*) abi=unknown ;;
	esac
fi

case $rc_major in
'' | *[!0-9]*) fail "libibverbs $modver, an unrecognised version" ;;
esac

# The (ABI, release) pairs ibverbs_private.h lays out.
case "$abi:$rc_major" in
34:3[6-9] | 34:4[0-9] | 34:5[0-6] | 57:5[78] | 59:59 | 59:6[0-3] | 64:64 | 65:65) ;;
*) fail "libibverbs $modver (rdma-core $rc) with provider ABI $abi" ;;
esac

echo "$abi $rc_major"
