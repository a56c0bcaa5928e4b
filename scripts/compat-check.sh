#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Compare the compat.h that scripts/kernel-probes.sh made for a kernel with
# what kernel/probes/expected.txt says that kernel must have; print it.
#
#   scripts/compat-check.sh COMPAT_H MAJOR.MINOR
#
# Exit 0 when they agree, 1 when they differ (each difference on a line),
# 4 when the table has no row for MAJOR.MINOR (the kernel is new to it).

set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
compat=$1 ver=$2
table=$TOP/kernel/probes/expected.txt

[ -f "$compat" ] || { echo "compat-check: no $compat" >&2; exit 1; }
echo "$compat ($ver):"
sed -n 's/^#define HAVE_\([A-Z0-9_]*\) 1$/  HAVE_\1/p' "$compat"
row=$(sed -n "s/^${ver//./\\.}: //p" "$table")
if [ -z "$row" ]; then
	echo "compat-check: $table has no row for $ver" >&2
	exit 4
fi
[ "$row" = - ] && row=
want=$(tr ' ' '\n' <<<"$row" | sed '/^$/d' | sort)
have=$(sed -n 's/^#define HAVE_\([A-Z0-9_]*\) 1$/\1/p' "$compat" | sort)
probes=$(for f in "$TOP"/kernel/probes/*.c; do basename "$f" .c; done |
	tr '[:lower:]' '[:upper:]' | sort)
rc=0
for p in $probes; do
	w=0 h=0
	grep -qx "$p" <<<"$want" && w=1
	grep -qx "$p" <<<"$have" && h=1
	[ $w -eq $h ] && continue
	rc=1
	if [ $w -eq 1 ]; then
		echo "compat-check: $ver: HAVE_$p expected, but its probe did not compile"
	else
		echo "compat-check: $ver: HAVE_$p not expected, but its probe compiled"
	fi
done
for p in $want; do
	grep -qx "$p" <<<"$probes" ||
		{ echo "compat-check: $table names $p, which has no probe"; rc=1; }
done
exit $rc
