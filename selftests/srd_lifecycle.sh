#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Creating and destroying 1,000 PDs, CQs, QPs, MRs and AHs leaks nothing:
# the module's live-object counters and the process's mappings and fds
# return to where they were (srd_lifecycle.c); so do the kernel's slabs
# of softsrd's own caches, if it has any.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_lifecycle)
two_hosts slc

# srd_slab_objs: active objects in slab caches named after softsrd.
srd_slab_objs() {
	awk '$1 ~ /srd/ { n += $2 } END { print n + 0 }' /proc/slabinfo
}
slabs=$(awk '$1 ~ /srd/ { print $1 }' /proc/slabinfo | tr '\n' ' ')
echo "softsrd slab caches: ${slabs:-none}"
slab0=$(srd_slab_objs)
dmesg_mark
try "$bin" -n 1000 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_lifecycle reported failures"
if [ -n "$slabs" ]; then
	# Freed objects may sit in per-CPU caches for a moment.
	wait_for "active objects of softsrd slabs back to $slab0" 10 \
		bash -c "[ \$(awk '\$1 ~ /srd/ { n += \$2 } END { print n + 0 }' /proc/slabinfo) -le $slab0 ]"
fi
dmesg_clean "1000 create/destroy rounds"
