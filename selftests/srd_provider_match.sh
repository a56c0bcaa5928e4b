#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# libsrd recognises an srd device by what the module exposes in sysfs, not
# by its name: a device with any name, or renamed, is still opened.
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
SRD_LINKS+=(renamed7)
out=$(ibv_devinfo -d renamed7 2>&1)
expect_match "ibv_devinfo opens it after a rename" 'PORT_ACTIVE' "$out"
exit $KSFT_PASS
