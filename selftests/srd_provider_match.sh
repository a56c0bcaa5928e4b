#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# libsrd recognises an srd device by what the module exposes in sysfs, not
# by its name: a device with any name, or renamed, is still opened.  And
# with another provider's device (rxe) present, verbs tools still work:
# libibverbs walks every provider's match table for such a device.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma ibv_devinfo

veth_pair sq0 sq1
add_srd fabric7 sq0
out=$(ibv_devinfo -d fabric7 2>&1)
echo "$out"
expect_match "ibv_devinfo opens 'fabric7'" 'PORT_ACTIVE' "$out"
[[ "$out" != *"couldn't"* && "$out" != *Warning* ]] || fail "libibverbs warned: $out"

pp rdma dev set fabric7 name renamed7
defer del_link renamed7
out=$(ibv_devinfo -d renamed7 2>&1)
expect_match "ibv_devinfo opens it after a rename" 'PORT_ACTIVE' "$out"

rxe_loaded=$([ -d /sys/module/rdma_rxe ] && echo 1 || echo 0)
try modprobe rdma_rxe || fail "modprobe rdma_rxe (Debian's kernels ship it)"
try rdma link add rxe_pm0 type rxe netdev sq1 || fail "rdma link add rxe_pm0"
defer del_link rxe_pm0
out=$(ibv_devices 2>&1) || fail "ibv_devices with an rxe device present failed ($?): $out"
echo "$out"
expect_match "ibv_devices lists the srd device next to rxe" 'renamed7' "$out"
expect_match "ibv_devices lists the rxe device" 'rxe_pm0' "$out"
out=$(ibv_devinfo -d renamed7 2>&1) || fail "ibv_devinfo -d renamed7 with rxe present failed: $out"
expect_match "ibv_devinfo opens the srd device with rxe present" 'PORT_ACTIVE' "$out"
pp rdma link del rxe_pm0
[ "$rxe_loaded" = 1 ] || pp modprobe -r rdma_rxe
exit $KSFT_PASS
