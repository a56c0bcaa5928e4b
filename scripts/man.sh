#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/man.sh SRCDIR OUTDIR: the man pages, as a man tree.  Each
# SRCDIR/NAME.SECTION.md becomes OUTDIR/manSECTION/NAME.SECTION through
# pandoc; and for each further name on the page's NAME line ("a, b, c -
# ..."), OUTDIR/manSECTION/b.SECTION holds ".so manSECTION/NAME.SECTION",
# as rdma-core's man links do, so that man b finds the page of a.

set -euo pipefail
src=$1 out=$2
rm -rf "$out"
for md in "$src"/*.md; do
	page=$(basename "$md" .md)
	name=${page%.*} sec=${page##*.}
	mkdir -p "$out/man$sec"
	pandoc -s -t man "$md" -o "$out/man$sec/$page"
	# The line after "# NAME" (and its blank line): "a, b, c - what they do".
	names=$(awk '/^# NAME/ { getline; getline; print; exit }' "$md" | sed 's/ - .*//; s/\\//g')
	for n in ${names//,/ }; do
		[ "$n" = "$name" ] || echo ".so man$sec/$page" >"$out/man$sec/$n.$sec"
	done
done
