#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Host-side tests: the build's own promises (uapi header, provider ABI
# check, module metadata, sparse, install) and the VM harness's (exit
# status, skip, kernel problems, crashes, timeouts).  TAP output.

set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SRD_BUILD:-$TOP/build}
KVERS=${KVERS:-$(cd /lib/modules && ls -d */build 2>/dev/null | sed 's|/build||')}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tests=()
t() { tests+=("$1"); }

# --- the uapi contract -------------------------------------------------
t test_uapi_header_standalone_c
test_uapi_header_standalone_c() {
	printf '#include <rdma/srd-abi.h>\nint main(void) { return sizeof(struct srd_alloc_ucontext_resp) != 32; }\n' >"$tmp/u.c"
	gcc -std=c99 -Wall -Wextra -Werror -pedantic -I"$TOP/uapi" -o "$tmp/u" "$tmp/u.c" && "$tmp/u"
}

t test_uapi_header_standalone_cxx
test_uapi_header_standalone_cxx() {
	printf '#include <rdma/srd-abi.h>\nint main() { return 0; }\n' >"$tmp/u.cc"
	g++ -Wall -Wextra -Werror -I"$TOP/uapi" -o "$tmp/ucc" "$tmp/u.cc"
}

# --- packages ----------------------------------------------------------
t test_install_deps_quiet_when_satisfied
test_install_deps_quiet_when_satisfied() {
	local out
	out=$("$TOP/scripts/install-deps.sh" 2>&1) || return 1
	[ -z "$out" ] || { echo "# printed: $out"; return 1; }
}

# --- provider ----------------------------------------------------------
t test_provider_refuses_other_rdma_core
test_provider_refuses_other_rdma_core() {
	local out
	printf '#!/bin/sh\ncase "$1" in --modversion) echo 1.15.57.0;; --variable=libdir) echo /nonexistent;; esac\n' >"$tmp/pkg-config"
	chmod +x "$tmp/pkg-config"
	if out=$(make -s -C "$TOP/provider" O="$tmp/prov" PKG_CONFIG="$tmp/pkg-config" 2>&1); then
		echo "# built against a fake rdma-core 57"
		return 1
	fi
	echo "# $out"
	[[ "$out" == *"provider ABI"*"57"* ]] && [ "$(wc -l <<<"$out")" -le 2 ]
}

t test_provider_binds_private_abi_34
test_provider_binds_private_abi_34() {
	local so=$BUILD/provider/libsrd-rdmav34.so
	objdump -T "$so" | grep -q 'IBVERBS_PRIVATE_34.*verbs_register_driver_34' || return 1
	# A plugin exports nothing: it registers itself from a constructor.
	[ "$(nm -D --defined-only "$so" | grep -vc ' [AW] ')" -eq 0 ]
}

t test_provider_loads_with_libibverbs
test_provider_loads_with_libibverbs() {
	cat >"$tmp/dl.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <infiniband/verbs.h>
int main(int argc, char **argv)
{
	void *h;
	ibv_fork_init();	/* pulls libibverbs in first, as at runtime */
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) { printf("# %s\n", dlerror()); return 1; }
	return 0;
}
C
	gcc -o "$tmp/dl" "$tmp/dl.c" -libverbs -ldl && "$tmp/dl" "$BUILD/provider/libsrd-rdmav34.so"
}

# --- kernel module -----------------------------------------------------
t test_module_metadata
test_module_metadata() {
	local k ko
	for k in $KVERS; do
		ko=$BUILD/kernel/$k/rdma_srd.ko
		[ -f "$ko" ] || { echo "# $ko missing"; return 1; }
		modinfo -F alias "$ko" | grep -qx 'rdma-link-srd' || return 1
		modinfo -F vermagic "$ko" | grep -q "^$k " || return 1
		modinfo -F version "$ko" | grep -qx '0.1.0' || return 1
	done
}

t test_module_builds_without_warnings_w1
test_module_builds_without_warnings_w1() {
	local k
	for k in $KVERS; do
		[ -f "$BUILD/kernel/$k/build.log" ] || return 1
		! grep -n 'warning:' "$BUILD/kernel/$k/build.log" || return 1
	done
}

t test_module_sparse_clean
test_module_sparse_clean() {
	local k out
	command -v sparse >/dev/null || { echo "# SKIP sparse is not installed"; return 4; }
	for k in $KVERS; do
		out=$(make -s -C "/lib/modules/$k/build" M="$BUILD/kernel/$k" C=2 modules 2>&1 |
		      grep -v 'Skipping BTF')
		if [ -n "$out" ]; then
			echo "$out" | sed 's/^/# /'
			return 1
		fi
	done
}

t test_install_layout
test_install_layout() {
	[ -x "$TOP/scripts/test-install.sh" ] || { echo "# scripts/test-install.sh missing"; return 1; }
	"$TOP/scripts/test-install.sh" | sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}

# --- the VM harness ----------------------------------------------------
vm() { "$TOP/scripts/vm-run.sh" --kernel "${VM_KERNEL:-6.1}" "$@"; }

t test_vm_passes_exit_status
test_vm_passes_exit_status() {
	local rc start
	start=$(date +%s%N)
	vm -- bash -c 'lsmod | grep -q "^rdma_srd " && exit 3' >"$tmp/out" 2>&1
	rc=$?
	echo "# boot, command and power-off took $((($(date +%s%N) - start) / 1000000)) ms"
	[ $rc -eq 3 ] || { sed 's/^/# /' "$tmp/out"; return 1; }
}

t test_vm_streams_output_and_skip_status
test_vm_streams_output_and_skip_status() {
	local rc out
	out=$(vm -- bash -c 'echo hello-from-guest; exit 4' 2>&1)
	rc=$?
	[ $rc -eq 4 ] && [[ "$out" == *hello-from-guest* ]]
}

t test_vm_fails_on_kernel_warning
test_vm_fails_on_kernel_warning() {
	local rc out
	# What a WARN_ON prints, injected through the kernel's own log.
	out=$(vm -- bash -c 'echo "WARNING: CPU: 0 PID: 1 at injected by host-tests" >/dev/kmsg' 2>&1)
	rc=$?
	[ $rc -ne 0 ] && [[ "$out" == *"logged a problem"* ]] || { echo "# rc=$rc: $out"; return 1; }
}

t test_vm_fails_on_guest_crash
test_vm_fails_on_guest_crash() {
	local rc
	vm -- bash -c 'echo c >/proc/sysrq-trigger' >"$tmp/out" 2>&1
	rc=$?
	[ $rc -ne 0 ] || { sed 's/^/# /' "$tmp/out"; return 1; }
}

t test_vm_fails_on_timeout
test_vm_fails_on_timeout() {
	local rc
	vm --timeout 20 -- sleep 600 >"$tmp/out" 2>&1
	rc=$?
	[ $rc -eq 124 ] || { echo "# rc=$rc"; sed 's/^/# /' "$tmp/out"; return 1; }
}

echo "TAP version 13"
echo "1..${#tests[@]}"
n=0
failed=0
for name in "${tests[@]}"; do
	n=$((n + 1))
	"$name" >"$tmp/log" 2>&1
	rc=$?
	sed 's/^\([^#]\)/# \1/' "$tmp/log"
	case $rc in
	0) echo "ok $n $name" ;;
	4) echo "ok $n $name # SKIP" ;;
	*) echo "not ok $n $name"; failed=$((failed + 1)) ;;
	esac
done
[ $failed -eq 0 ]
