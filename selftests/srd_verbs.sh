#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs srd_verbs (the C verbs test) against a fresh device.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=${OUTPUT:-$SRD_TOP/build/selftests}/srd_verbs
[ -x "$bin" ] || fail "$bin is not built (make -C selftests)"

veth_pair sv0 sv1
pp ip addr add 10.7.0.1/24 dev sv0
add_srd srdv0 sv0
wait_for "GID of 10.7.0.1" 10 has_gid srdv0 "$(gid_of_ipv4 10.7.0.1)"
pp "$bin" srdv0 10.7.0.1
