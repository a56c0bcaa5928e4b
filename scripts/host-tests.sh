#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Host-side tests: the build's own promises (uapi header, provider ABI
# check, module metadata, sparse, install) and the VM harness's (exit
# status, skip, kernel problems, crashes, timeouts).  TAP output.

set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SRD_BUILD:-$TOP/build}
KVERS=${KVERS:-$(find /lib/modules -mindepth 2 -maxdepth 2 -name build -printf '%h\n' 2>/dev/null |
	sed 's|.*/||' | grep -v -- '-srd-debug$' | sort)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tests=()
t() { tests+=("$1"); }

# module_params: the name of every parameter of rdma_srd.ko as built for
# each kernel (modinfo, so whatever macro declared it), and of every
# module_param() or module_param_named() in kernel/; fails with none.
module_params() {
	local k ko names
	names=$(for k in $KVERS; do
			ko=$BUILD/kernel/$k/rdma_srd.ko
			[ -f "$ko" ] && modinfo -F parm "$ko" | sed 's/:.*//'
		done)
	[ -n "$names" ] || { echo "# no rdma_srd.ko built: no parameters to check" >&2; return 1; }
	{ echo "$names"; grep -ho 'module_param\(_named\)\?([a-z0-9_]*' "$TOP"/kernel/*.c | sed 's/.*(//'; } |
		sort -u
}

# --- the uapi contract -------------------------------------------------
t test_uapi_header_standalone_c
test_uapi_header_standalone_c() {
	printf '#include <rdma/srd-abi.h>\nint main(void) { return sizeof(struct srd_alloc_ucontext_resp) != 40; }\n' >"$tmp/u.c"
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

# --- man pages ---------------------------------------------------------
t test_man_pages_render_without_warnings
test_man_pages_render_without_warnings() {
	local m err rc=0
	# From the tree's root, where a link's ".so man3/..." resolves.
	for m in "$BUILD"/man/man[1-9]/*; do
		err=$(cd "$BUILD/man" && MANWIDTH=80 man --warnings -l "${m#"$BUILD"/man/}" 2>&1 >/dev/null)
		if [ -n "$err" ] || ! (cd "$BUILD/man" && MANWIDTH=80 man -l "${m#"$BUILD"/man/}" >/dev/null 2>&1); then
			echo "# ${m##*/}: $err"
			rc=1
		fi
	done
	[ -e "$BUILD/man/man7/rdma_srd.7" ] || { echo "# no man pages built"; rc=1; }
	return $rc
}

t test_man_pages_cover_the_api_and_parameters
test_man_pages_cover_the_api_and_parameters() {
	local f p params rc=0
	# Every srddv_ function of srddv.h has a page (or a link to one).
	for f in $(grep -o '\bsrddv_[a-z_]*(' "$TOP/provider/srddv.h" | tr -d '(' | sort -u); do
		[ -e "$BUILD/man/man3/$f.3" ] || { echo "# no page for $f"; rc=1; }
	done
	# Every module parameter is in rdma_srd(7).
	params=$(module_params) || return 1
	for p in $params; do
		grep -q "\*$p\*" "$TOP/man/rdma_srd.7.md" || { echo "# rdma_srd(7) lacks $p"; rc=1; }
	done
	return $rc
}

t test_srd_perf_page_documents_every_option
test_srd_perf_page_documents_every_option() {
	local help o rc=0
	help=$("$BUILD/tools/srd_perf" --help) || { echo "# srd_perf --help failed"; return 1; }
	# Each option --help lists ("  -X ..." or "  -X, --long ...") is an
	# entry of srd_perf(1)'s OPTIONS, as **-X** (or **-X**, **\-\-long**).
	while read -r o; do
		grep -q "^\*\*$o\*\*" "$TOP/man/srd_perf.1.md" || { echo "# srd_perf(1) lacks $o"; rc=1; }
	done < <(sed -n 's/^  \(-[A-Za-z]\)[ ,].*/\1/p' <<<"$help")
	while read -r o; do
		grep -q "^\*\*-[A-Za-z]\*\*, \*\*\\\\-\\\\-${o#--}\*\*" "$TOP/man/srd_perf.1.md" ||
			{ echo "# srd_perf(1) lacks $o"; rc=1; }
	done < <(grep -o -- '--[a-z]*' <<<"$help" | sort -u)
	[ "$(sed -n 's/^  \(-[A-Za-z]\)[ ,].*/\1/p' <<<"$help" | wc -l)" -ge 18 ] ||
		{ echo "# --help lists fewer options than srd_perf has"; rc=1; }
	return $rc
}

# srd_perf's check of every message it receives finds any byte changed
# (tools/srd_perf/msg_test.c).
t test_srd_perf_message_check
test_srd_perf_message_check() {
	"$BUILD/tools/srd_perf_msg_test"
}

# Everything a user reads a name of is in docs/ (or README.md): every
# counter (the device's and the engine's struct srd_counters), module
# parameter, and symbol libsrd and softsrd's libefa export.  A name added
# without its documentation fails here.
t test_docs_name_every_counter_parameter_and_symbol
# The names are words without glob characters: split on whitespace.
# shellcheck disable=SC2206,SC2207
test_docs_name_every_counter_parameter_and_symbol() {
	local n params rc=0 docs=("$TOP"/docs/*.md "$TOP/README.md") names=()
	params=$(module_params) || return 1
	names+=($(sed -n '/^#define SRD_COUNTERS(/,/^$/p' "$TOP/engine/srd_engine.h" |
		grep -o 'X([a-z0-9_]*)' | sed 's/^X(//; s/)$//'))
	[ ${#names[@]} -ge 40 ] || { echo "# found only ${#names[@]} engine counters: the pattern broke"; return 1; }
	names+=($(sed -n 's/^SRD_COUNTER(\([A-Z0-9_]*\))$/\1/p' "$TOP/kernel/counters.h" |
		tr '[:upper:]' '[:lower:]'))
	names+=($params)
	names+=($(grep -ho '\b\(srddv\|efadv\)_[a-z0-9_]*;' "$TOP/provider/libsrd.map" \
		"$TOP/efa-compat/libefa.map" | tr -d ';'))
	[ ${#names[@]} -ge 60 ] || { echo "# found only ${#names[@]} names: the patterns broke"; return 1; }
	for n in "${names[@]}"; do
		grep -qw -- "$n" "${docs[@]}" || { echo "# docs/ never name $n"; rc=1; }
	done
	return $rc
}

# --- provider ----------------------------------------------------------
t test_provider_refuses_other_rdma_core
test_provider_refuses_other_rdma_core() {
	local out v
	# 66: a release after the newest it knows; 35: ABI 34, but a shorter
	# verbs_context_ops than 36's.
	for v in 1.16.66.0 1.14.35.0; do
		# shellcheck disable=SC2016 # the stub's own $1
		printf '#!/bin/sh\ncase "$1" in --modversion) echo %s;; --variable=libdir) echo /nonexistent;; esac\n' \
			"$v" >"$tmp/pkg-config"
		chmod +x "$tmp/pkg-config"
		if out=$(make -s -C "$TOP/provider" O="$tmp/prov" PKG_CONFIG="$tmp/pkg-config" 2>&1); then
			echo "# built against a fake libibverbs $v"
			return 1
		fi
		echo "# $v: $out"
		[[ "$out" == *"provider ABI"*"${v#1.1?.}"* ]] && [ "$(wc -l <<<"$out")" -le 2 ] ||
			return 1
	done
}

# Every release libsrd supports, without those releases: verbs_context_ops
# laid out as each has it (provider/abi/verbs_context_ops.txt), and libsrd
# built for each ABI linking against a stub libibverbs of that ABI's
# symbols (scripts/provider-abi-check.sh).
t test_provider_ops_layout_per_release
test_provider_ops_layout_per_release() {
	"$TOP/scripts/provider-abi-check.sh" layout
}

t test_provider_links_per_abi
test_provider_links_per_abi() {
	"$TOP/scripts/provider-abi-check.sh" link
}

t test_provider_binds_private_abi_34
test_provider_binds_private_abi_34() {
	local lib=$BUILD/provider/libsrd.so.1 got want
	# Never "objdump | grep -q" here: under pipefail, grep's early exit
	# fails objdump with SIGPIPE once the output outgrows the pipe.
	grep -q 'IBVERBS_PRIVATE_34.*verbs_register_driver_34' <<<"$(objdump -T "$lib")" || {
		echo "# libsrd.so.1 does not import verbs_register_driver_34@IBVERBS_PRIVATE_34"
		return 1
	}
	grep -Eq 'SONAME +libsrd\.so\.1$' <<<"$(objdump -p "$lib")" || {
		echo "# SONAME: $(objdump -p "$lib" | grep SONAME)"
		return 1
	}
	# The plugin and the -lsrd link are links to the library itself.
	[ "$(readlink "$BUILD/provider/libsrd-rdmav34.so")" = libsrd.so.1 ] &&
		[ "$(readlink "$BUILD/provider/libsrd.so")" = libsrd.so.1 ] || {
		# shellcheck disable=SC2012 # a listing for the log, not parsed
		ls -l "$BUILD/provider" | sed 's/^/# /'
		return 1
	}
	# It exports the direct verbs of srddv.h, versioned SRD_1.0 to
	# SRD_1.3, and nothing else (the plugin registers itself from a
	# constructor).
	got=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort)
	want=$(printf '%s\n' SRD_1.0 srddv_is_srd_device@@SRD_1.0 \
		srddv_query_ah@@SRD_1.0 srddv_wc_read_sgid@@SRD_1.0 \
		SRD_1.1 srddv_create_qp_ex@@SRD_1.1 \
		SRD_1.2 srddv_query_device@@SRD_1.2 \
		SRD_1.3 srddv_create_cq@@SRD_1.3 \
		srddv_cq_from_ibv_cq_ex@@SRD_1.3 | sort)
	[ "$got" = "$want" ] || {
		diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
		return 1
	}
}

t test_provider_abi_layout_matches_rdma_core
test_provider_abi_layout_matches_rdma_core() {
	# A configured rdma-core v44.0 tree (cmake has generated
	# build/include/config.h and build/include/kernel-abi/).
	local rc=${SRD_RDMA_CORE:-} src=$TOP/provider/tests/abi_layout.c
	if [ -z "$rc" ] || [ ! -f "$rc/build/include/config.h" ]; then
		echo "# SKIP needs SRD_RDMA_CORE=<an rdma-core v44.0 tree configured with cmake>"
		return 4
	fi
	gcc -DSRD_LAYOUT_REAL -I"$rc/build/include" -I"$rc" -I"$TOP/uapi" \
		-o "$tmp/layout-real" "$src" || return 1
	# shellcheck disable=SC2046 # pkg-config's flags are words
	gcc -std=gnu11 -Wall -Wextra -Werror -DSRD_PABI=34 -DSRD_RC=44 -I"$TOP/provider" \
		-I"$TOP/uapi" $(pkg-config --cflags libibverbs) \
		-o "$tmp/layout-ours" "$src" || return 1
	"$tmp/layout-real" >"$tmp/layout-real.txt" &&
		"$tmp/layout-ours" >"$tmp/layout-ours.txt" || return 1
	echo "# $(wc -l <"$tmp/layout-real.txt") offsets and sizes compared"
	diff -u "$tmp/layout-real.txt" "$tmp/layout-ours.txt" | sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}

t test_srddv_header_and_library_link
test_srddv_header_and_library_link() {
	# srddv.h compiles on its own as C and C++, and a program using it
	# links with -lsrd against the build and binds SRD_1.0.
	cat >"$tmp/dv.c" <<'C'
#include <infiniband/srddv.h>
int main(int argc, char **argv)
{
	static struct srddv_ah_attr attr;
	(void)argv;
	if (argc > 1)	/* never run: only the binding matters */
		return srddv_query_ah(0, &attr, sizeof(attr)) +
		       srddv_wc_read_sgid(0, 0) + srddv_is_srd_device(0);
	return sizeof(attr) != 16;
}
C
	mkdir -p "$tmp/inc/infiniband"
	cp "$TOP/provider/srddv.h" "$tmp/inc/infiniband/"
	gcc -std=c99 -Wall -Wextra -Werror -pedantic -I"$tmp/inc" -o "$tmp/dv" "$tmp/dv.c" \
		-L"$BUILD/provider" -lsrd -libverbs || return 1
	g++ -Wall -Wextra -Werror -I"$tmp/inc" -x c++ -fsyntax-only "$tmp/dv.c" || return 1
	grep -Eq '\(SRD_1\.0\) +srddv_query_ah$' <<<"$(objdump -T "$tmp/dv")" || return 1
	LD_LIBRARY_PATH=$BUILD/provider "$tmp/dv"
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

# --- softsrd's libefa.so.1 (efa-compat/) ---------------------------------
t test_efa_compat_exports_what_libefa_64_exports
test_efa_compat_exports_what_libefa_64_exports() {
	# The symbols and versions efa-compat/libefa.map names, which are
	# rdma-core 64's (EFA_1.0 to EFA_1.6), and nothing more; every one of
	# the system's libefa (rdma-core 44's on Debian 12), so its programs
	# still bind; libefa's SONAME; libsrd underneath.  SRD_LIBEFA_64 may
	# name rdma-core 64's own libefa.so.1 (its build/lib/): then exactly
	# its exports.
	local ours=$BUILD/efa-compat/libefa.so.1 map=$TOP/efa-compat/libefa.map
	local nodes node got want lib missing
	nodes=$(sed -n 's/^\(EFA_[0-9.]*\) {$/\1/p' "$map" | tr '\n' ' ')
	[ "$nodes" = "EFA_1.0 EFA_1.1 EFA_1.2 EFA_1.3 EFA_1.4 EFA_1.5 EFA_1.6 " ] || {
		echo "# libefa.map's nodes are '$nodes', not rdma-core 64's EFA_1.0 to EFA_1.6"
		return 1
	}
	# Each node's name, and NAME@@NODE for each "NAME;" of its global list.
	want=$(awk '/^EFA_[0-9.]* \{$/ { node = $1; print node; next }
		    node && /^\t\t[a-z0-9_]+;$/ { sub(/;$/, "", $1); print $1 "@@" node }' "$map" |
		sort)
	got=$(nm -D --defined-only "$ours" | awk '{print $NF}' | sort)
	echo "# $(wc -l <<<"$want") symbols and versions in libefa.map"
	for node in $nodes; do
		grep -q "@@$node\$" <<<"$want" || { echo "# read no symbol of $node in libefa.map"; return 1; }
	done
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got") | sed 's/^/# /'; return 1; }
	lib=$(readlink -f "$(pkg-config --variable=libdir libibverbs)/libefa.so.1")
	[ -f "$lib" ] || { echo "# the system has no libefa.so.1 (ibverbs-providers)"; return 1; }
	missing=$(comm -23 <(nm -D --defined-only "$lib" | awk '{print $NF}' | sort) <(echo "$got"))
	[ -z "$missing" ] || { echo "# $lib exports what ours does not: $missing"; return 1; }
	if [ -n "${SRD_LIBEFA_64:-}" ]; then
		lib=$(nm -D --defined-only "$SRD_LIBEFA_64" | awk '{print $NF}' | sort) || return 1
		echo "# compared with $SRD_LIBEFA_64"
		[ "$got" = "$lib" ] || { diff <(echo "$lib") <(echo "$got") | sed 's/^/# /'; return 1; }
	fi
	grep -Eq 'SONAME +libefa\.so\.1$' <<<"$(objdump -p "$ours")" &&
		grep -Eq 'NEEDED +libsrd\.so\.1$' <<<"$(objdump -p "$ours")" || {
		objdump -p "$ours" | grep -E 'SONAME|NEEDED' | sed 's/^/# /'
		return 1
	}
}

t test_srd_efa_run_puts_softsrd_libefa_first
test_srd_efa_run_puts_softsrd_libefa_first() {
	# Debian's libfabric and perftest, as they are, load softsrd's
	# libefa.so.1 under srd-efa-run and the system's without it.
	local run=$BUILD/efa-compat/srd-efa-run bin rc
	grep -q '^usage: srd-efa-run' <<<"$("$run" --help)" || return 1
	"$run" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || { echo "# srd-efa-run without a command: exit $rc, want 2"; return 1; }
	for bin in "$(pkg-config --variable=libdir libibverbs)/libfabric.so.1" \
		   "$(command -v ib_send_bw)"; do
		grep -q "libefa\.so\.1 => $BUILD/efa-compat/libefa\.so\.1 " <<<"$("$run" ldd "$bin")" || {
			echo "# under srd-efa-run, $bin loads: $("$run" ldd "$bin" | grep libefa)"
			return 1
		}
		grep -Eq "libefa\.so\.1 => (/usr)?/lib/" <<<"$(env -u LD_LIBRARY_PATH ldd "$bin")" || return 1
	done
}

# --- kernel module -----------------------------------------------------
t test_module_metadata
test_module_metadata() {
	local k ko
	for k in $KVERS; do
		ko=$BUILD/kernel/$k/rdma_srd.ko
		[ -f "$ko" ] || { echo "# $ko missing"; return 1; }
		grep -qx 'rdma-link-srd' <<<"$(modinfo -F alias "$ko")" || return 1
		grep -q "^$k " <<<"$(modinfo -F vermagic "$ko")" || return 1
		grep -qx '0.1.0' <<<"$(modinfo -F version "$ko")" || return 1
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

# Each probe found what kernel/probes/expected.txt says the kernel has: a
# probe that broke for another reason would pick the old API unnoticed.
t test_compat_h_matches_expected
test_compat_h_matches_expected() {
	local k rc=0 r
	for k in $KVERS; do
		[[ $k =~ ^([0-9]+\.[0-9]+) ]] || { echo "# $k: no MAJOR.MINOR"; rc=1; continue; }
		"$TOP/scripts/compat-check.sh" "$BUILD/kernel/$k/compat.h" "${BASH_REMATCH[1]}"
		r=$?
		[ $r -eq 0 ] || [ $r -eq 4 ] || rc=1
	done
	return $rc
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

# --- the SRD engine (engine/), natively --------------------------------
# engine_make TARGET...: build in the host-tests' own output directory.
engine_make() { make -s -C "$TOP/engine" O="$BUILD/engine" "$@"; }

# Print a sub-TAP log as comments; fail if it has a failure or no result.
engine_tap() {
	local log=$1 rc=$2
	sed 's/^/# /' "$log"
	grep -q '^not ok' "$log" && return 1
	grep -q '^ok' "$log" || return 1
	return "$rc"
}

t test_engine_compiles_freestanding
test_engine_compiles_freestanding() {
	# The kernel compiles the same files: no libc, no FPU.
	engine_make freestanding
}

t test_engine_unit
test_engine_unit() {
	engine_make "$BUILD/engine/unit" || return 1
	"$BUILD/engine/unit" >"$tmp/unit.tap" 2>&1
	engine_tap "$tmp/unit.tap" $?
}

t test_engine_simulator
test_engine_simulator() {
	engine_make "$BUILD/engine/sim" || return 1
	"$BUILD/engine/sim" --seeds 3 >"$tmp/sim.tap" 2>&1
	engine_tap "$tmp/sim.tap" $?
}

t test_opcode_tables_match_the_engine
test_opcode_tables_match_the_engine() {
	local out
	# The engine's opcode lists are the one definition; the forger's,
	# the dissector's and the spec's tables are copies, held to them
	# (docs/architecture.md, "Adding an opcode").
	engine_make "$BUILD/engine/wire_vectors" || return 1
	out=$("$BUILD/engine/wire_vectors" --table | python3 "$TOP/scripts/check-opcode-tables.py") ||
		{ echo "$out" | sed 's/^/# /'; return 1; }
	echo "# $out"
}

t test_forger_matches_the_engine_encoder
test_forger_matches_the_engine_encoder() {
	local out n
	# The VM tests attack with srd_forge.py's own encoding: it must be
	# the engine's, byte for byte, for a header of every opcode.
	engine_make "$BUILD/engine/wire_vectors" || return 1
	n=$("$BUILD/engine/wire_vectors" --table | wc -l)
	out=$("$BUILD/engine/wire_vectors" | python3 "$TOP/selftests/srd_forge.py" check-vectors) ||
		{ echo "$out" | sed 's/^/# /'; return 1; }
	[[ "$out" == *"RESULT mode=check-vectors ok=1 opcodes=$n "* ]] || { echo "# $out (expected opcodes=$n)"; return 1; }
}

t test_engine_asan_ubsan
test_engine_asan_ubsan() {
	engine_make "$BUILD/engine/unit-asan" "$BUILD/engine/sim-asan" || return 1
	{ "$BUILD/engine/unit-asan" && "$BUILD/engine/sim-asan"; } >"$tmp/asan.tap" 2>&1
	engine_tap "$tmp/asan.tap" $?
}

t test_engine_fuzz_rx_15s
test_engine_fuzz_rx_15s() {
	command -v clang >/dev/null || { echo "# SKIP clang is not installed"; return 4; }
	engine_make fuzz-build || return 1
	mkdir -p "$BUILD/engine/fuzz-corpus"
	"$BUILD/engine/fuzz-rx" -max_total_time=15 -max_len=2048 -print_final_stats=1 \
		"$BUILD/engine/fuzz-corpus" >"$tmp/fuzz.log" 2>&1
	local rc=$?
	grep -E '^(stat::number_of_executed_units|stat::new_units_added)|ERROR|SUMMARY' \
		"$tmp/fuzz.log" | sed 's/^/# /'
	[ $rc -eq 0 ] || { tail -40 "$tmp/fuzz.log" | sed 's/^/# /'; return 1; }
}

# --- the selftests' library (selftests/lib.sh) ---------------------------
# defer's stack: last pushed runs first, at exit however the test ends;
# arguments come back as given; a scope's entries run at its pop; on_fail
# only when the test failed (not on pass or skip); a bg_start process is
# killed.
t test_lib_defer_stack_runs_lifo_at_exit
test_lib_defer_stack_runs_lifo_at_exit() {
	local rc out want
	cat >"$tmp/defer.sh" <<-'EOF'
		. "$1"
		defer echo "first pushed"
		defer printf '%s|' "two words" '$x' "it's"
		on_fail echo "diagnostics"
		defer_scope_push
		defer echo "in the scope"
		defer_scope_pop
		echo "after the scope"
		bg_start sleep 300
		echo "$!" >"$2"
		defer echo "last pushed"
		[ "$3" = fail ] && fail "asked to"
		[ "$3" = skip ] && skip "asked to"
		exit 0
	EOF
	local how got
	for how in pass fail skip; do
		out=$(bash "$tmp/defer.sh" "$TOP/selftests/lib.sh" "$tmp/pid" "$how")
		got=$?
		want="in the scope|after the scope|"
		case $how in
		pass) rc=0 want+="last pushed|" ;;
		fail) rc=1 want+="FAIL: asked to|last pushed|diagnostics|" ;;
		skip) rc=4 want+="SKIP: asked to|last pushed|" ;;
		esac
		want+="two words|\$x|it's|first pushed|"
		[ $got -eq $rc ] || { echo "# $how: exit $got, not $rc"; return 1; }
		out=$(tr '\n' '|' <<<"$out")
		[ "$out" = "$want" ] || { echo "# $how: printed '$out', want '$want'"; return 1; }
		! kill -0 "$(cat "$tmp/pid")" 2>/dev/null ||
			{ echo "# $how: bg_start's process still runs"; return 1; }
	done
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

t test_vm_boots_again_after_a_crash_before_the_command
test_vm_boots_again_after_a_crash_before_the_command() {
	local rc out
	# The guest crashes before its command on the first boot only, as the
	# emulator's fault does: the run passes on the second, and says why.
	out=$(SRD_VM_CRASH_BEFORE_START=1 vm -- bash -c 'echo ran-on-the-second-boot' 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [[ "$out" == *"stopped before its command started"*"booting again once"* ]] &&
		[[ "$out" == *ran-on-the-second-boot* ]] || { echo "# rc=$rc: $out" | head -20; return 1; }
}

t test_vm_boots_again_after_a_kernel_problem_at_boot
test_vm_boots_again_after_a_kernel_problem_at_boot() {
	local rc out
	# The kernel logs a WARNING while booting, on the first boot only: the
	# command does not run on that boot, runs on the second, and the run
	# passes, saying why it booted twice.
	out=$(SRD_VM_BOOT_FAULT=1 vm -- bash -c 'echo ran-once' 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [[ "$out" == *"logged a problem while booting"*"booting again once"* ]] &&
		[[ "$out" == *"a fault while booting, simulated"* ]] &&
		[ "$(grep -c '^ran-once' <<<"$out")" -eq 1 ] ||
		{ echo "# rc=$rc: $out" | head -20; return 1; }
}

t test_vm_fails_when_every_boot_has_a_kernel_problem
test_vm_fails_when_every_boot_has_a_kernel_problem() {
	local rc out
	out=$(SRD_VM_BOOT_FAULT=always vm -- bash -c 'echo ran' 2>&1)
	rc=$?
	[ $rc -ne 0 ] && [[ "$out" == *"booting again once"* ]] &&
		[[ "$out" == *"FAIL: the guest kernel"*"logged a problem"* ]] &&
		! grep -q '^ran' <<<"$out" || { echo "# rc=$rc: $out" | head -20; return 1; }
}

# srd-vm-run, the installed command (issue 44), installed by make install
# into a scratch DESTDIR and used as a user would: in a mount namespace of
# its own, read-only overlays put the DESTDIR's files where make install
# puts them (PREFIX/bin, PREFIX/share, LIBDIR, /etc/libibverbs.d,
# /lib/modules/KVER/updates), so that srd-vm-run runs by name and finds
# the module, and libibverbs in the guest the provider, as installed;
# qemu's 9p export of / sees the same.  (Where no such namespace can be
# made, the DESTDIR's srd-vm-run runs with --module and --provider.)  It
# must make srd1 and srd2 in host1 and host2, tell CMD their names and
# addresses, carry a UD ping-pong between them, and pass CMD's exit
# status (3) through.  And it says in one sentence what is missing: a
# module for the kernel, a kernel.
t test_srd_vm_run_installed
test_srd_vm_run_installed() {
	local root=$tmp/vm-run-root ma kver run out rc start ms
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
	# shellcheck source=scripts/common.sh
	kver=$(. "$TOP/scripts/common.sh" && resolve_kernel "${VM_KERNEL:-6.1}") || return 1
	mkdir -p "$root"
	make -s -C "$TOP" -o all install NODEPS=1 DESTDIR="$root" PREFIX=/usr KVER="$kver" \
		>"$tmp/vm-run-install.log" 2>&1 || { sed 's/^/# /' "$tmp/vm-run-install.log"; return 1; }
	run=$root/usr/bin/srd-vm-run
	# What the guest runs: the devices' environment, the provider
	# libibverbs is told to load (none: the installed one), ibv_devices,
	# 20 round trips of ibv_ud_pingpong from host1 to host2, srd1's
	# packet counter, then exit 3.
	cat >"$root/cmd.sh" <<'CMD'
set -u
echo "devices=$SRD_VM_DEVICES netns=$SRD_VM_NETNS ips=$SRD_VM_IPS"
echo "provider=${RDMAV_DRIVERS-}"
ibv_devices
ip netns exec host2 ibv_ud_pingpong -d srd2 -g 0 -s 512 -n 20 >/dev/null &
server=$!
for _ in $(seq 200); do
	ip netns exec host2 ss -Hltn 'sport = :18515' | grep -q . && break
	sleep 0.1
done
ip netns exec host1 ibv_ud_pingpong -d srd1 -g 0 -s 512 -n 20 10.0.0.2 || exit 1
wait "$server" || exit 1
echo "srd1 tx_pkts=$(cat /sys/class/infiniband/srd1/hw_counters/tx_pkts)"
exit 3
CMD
	cat >"$tmp/in-place.sh" <<'NS'
# in-place.sh ROOT DIR... -- CMD...: CMD with ROOT's copy of each DIR
# laid over it (read-only, in this mount namespace only).
root=$1
shift
while [ "$1" != -- ]; do
	mount -t overlay -o "ro,lowerdir=$root$1:$1" softsrd "$1" || exit 1
	shift
done
shift
exec "$@"
NS
	local how want_provider vm_run=()
	if unshare -m true 2>/dev/null && grep -qw overlay /proc/filesystems; then
		how="installed in place"
		want_provider=
		vm_run=(unshare -m bash "$tmp/in-place.sh" "$root" /usr/bin /usr/share
			"/usr/lib/$ma" /etc/libibverbs.d "/lib/modules/$kver" -- srd-vm-run)
	else
		how="from the DESTDIR, with --module and --provider"
		want_provider=$root/usr/lib/$ma/libibverbs/libsrd
		vm_run=("$run" --module "$root/lib/modules/$kver/updates/rdma_srd.ko"
			--provider "$want_provider")
	fi
	start=$(date +%s%N)
	out=$(XDG_CACHE_HOME=$tmp/vm-run-cache "${vm_run[@]}" --kernel "$kver" --share "$root" \
		-- bash "$root/cmd.sh" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	echo "# srd-vm-run $how: boot, devices, command and power-off took $ms ms"
	sed 's/^/# /' <<<"$out"
	[ $rc -eq 3 ] || { echo "# exit $rc, want CMD's 3"; return 1; }
	grep -qx 'devices=srd1 srd2 netns=host1 host2 ips=10.0.0.1 10.0.0.2' <<<"$out" ||
		{ echo "# CMD was not told the devices"; return 1; }
	grep -qx "provider=$want_provider" <<<"$out" ||
		{ echo "# RDMAV_DRIVERS in the guest is not '$want_provider'"; return 1; }
	grep -Eq '^ +srd1 ' <<<"$out" && grep -Eq '^ +srd2 ' <<<"$out" ||
		{ echo "# ibv_devices did not list srd1 and srd2"; return 1; }
	grep -Eq '^srd1 tx_pkts=([2-9][0-9]|[0-9]{3,})$' <<<"$out" ||
		{ echo "# srd1 sent fewer than 20 packets"; return 1; }
	[ -f "$tmp/vm-run-cache/softsrd-vm/vm/initramfs-$kver.cpio" ] ||
		{ echo "# no initramfs in the cache directory"; return 1; }
	# Without --module, on a machine where nothing is installed for
	# $kver (neither make install nor DKMS has put rdma_srd there).
	if ! modinfo -k "$kver" -F filename rdma_srd >/dev/null 2>&1 &&
		! ls "/lib/modules/$kver"/updates/rdma_srd.ko* \
			"/lib/modules/$kver"/updates/dkms/rdma_srd.ko* >/dev/null 2>&1; then
		out=$(XDG_CACHE_HOME=$tmp/vm-run-cache "$run" --kernel "$kver" -- true 2>&1)
		rc=$?
		[ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] &&
			[[ "$out" == "srd-vm-run: no rdma_srd is installed for $kver:"*"--module FILE" ]] ||
			{ echo "# rc=$rc (want 2), no module: $out"; return 1; }
	fi
	out=$("$run" --kernel 0.0 -- true 2>&1)
	rc=$?
	[ $rc -eq 2 ] && [[ "$out" == "srd-vm-run: no installed kernel matches '0.0'"* ]] ||
		{ echo "# rc=$rc (want 2), no kernel: $out"; return 1; }
}

# bench-table.py --targets: issue 17's ratios of each run, from its
# results.json and engine.txt, and in how many runs each target was met.
t test_bench_targets_table
test_bench_targets_table() {
	local out r
	for r in 1 2; do
		mkdir -p "$tmp/run$r"
		python3 - "$tmp/run$r" "$r" <<-'PY' || return 1
		import json, sys
		d, r = sys.argv[1], int(sys.argv[2])
		def rec(i, **m):
		    return {"id": i, "status": "ok", "metrics": m}
		recs = [rec("srd-efa-lat-64", p50_us=200.0 if r == 1 else 500.0, p99_us=900.0),
		        rec("rxe-rc-lat-64", p50_us=400.0, p99_us=1000.0),
		        rec("srd-ud-lat-64", p50_us=160.0, p99_us=800.0),
		        rec("udp_bw", MBps=40.0), rec("srd-bw-1048576", MBps=38.0)]
		# Only the second run has many QPs: a target the first lacks.
		params = {"SCALE_QPS": "1 256"} if r == 2 else {}
		if r == 2:
		    recs += [rec("srd-scale-1", MBps=20.0), rec("srd-scale-256", MBps=18.0)]
		json.dump({"machine": {"date": "run%d" % r, "commit": "c%d" % r},
		           "params": params, "records": recs}, open(d + "/results.json", "w"))
		with open(d + "/engine.txt", "w") as f:
		    f.write("engine_bench: kind=send copy=0 pkts_per_s=20000000\n")
		    f.write("engine_bench: kind=send copy=1 pkts_per_s=10000000\n")
		    f.write("engine_bench: kind=send copy=0 pkts_per_s=10000000\n")
		PY
	done
	out=$(python3 "$TOP/scripts/bench-table.py" --targets "$tmp/run1" "$tmp/run2") || return 1
	awk '{ print "# " $0 }' <<<"$out"
	# shellcheck disable=SC2016 # the backquotes are the table's own
	grep -qF '| `ib_send_lat -c SRD` p50 ≤ 1.0× `-c RC` on rxe | 0.50 (200 / 400 µs) | 1.25 (500 / 400 µs) | 1 of 2 |' <<<"$out" &&
		grep -qF '| the same ≤ 1.3× softsrd UD'"'"'s p50 | 1.25 (200 / 160 µs) | 3.12 (500 / 160 µs) | 1 of 2 |' <<<"$out" &&
		grep -qF '| SRD send ≥ 0.9× raw UDP at 1 MiB | 0.95 (38.0 / 40.0 MB/s) | 0.95 (38.0 / 40.0 MB/s) | 2 of 2 |' <<<"$out" &&
		grep -qF '| RDMA read ≥ send at 64 KiB | — | — | no figure |' <<<"$out" &&
		grep -qF '| engine ≤ 0.5× the two copies | 1.00 (50.0 / 50.0 ns) | 1.00 (50.0 / 50.0 ns) | 0 of 2 |' <<<"$out" &&
		grep -qF '| 256 QPs ≥ 0.9× 1 QP | — | 0.90 (18.0 / 20.0 MB/s) | 1 of 1 |' <<<"$out" &&
		grep -qF '| Target | run1 (c1) | run2 (c2) | met |' <<<"$out" || return 1
	# No run, or a directory without results.json: a message, not a traceback.
	out=$(python3 "$TOP/scripts/bench-table.py" --targets 2>&1) && return 1
	[[ "$out" == "usage: "* ]] || { echo "# $out"; return 1; }
	out=$(python3 "$TOP/scripts/bench-table.py" --targets "$tmp/run1" "$tmp" 2>&1) && return 1
	[[ "$out" == *"no readable results.json"* && "$out" != *Traceback* ]] ||
		{ echo "# $out"; return 1; }
}

# bench.sh --profile's instruction counts (tools/insn_profile, read by
# bench-profile.py) name the functions that ran and count their calls:
# N one-byte reads of /dev/zero are N calls of read_zero and of write_null.
# perftest prints t_stdev -nan on a loaded host: the row keeps its other
# figures, with the oddity said, instead of "no figure in the output".
t test_bench_table_keeps_a_perftest_row_with_nan
test_bench_table_keeps_a_perftest_row_with_nan() {
	python3 - "$TOP/scripts/bench-table.py" <<-'EOF'
	import importlib.util, sys
	spec = importlib.util.spec_from_file_location("bt", sys.argv[1])
	bt = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(bt)
	head = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
	        "    t_avg[usec]    t_stdev[usec]   99% percentile[usec]"
	        "   99.9% percentile[usec]\n")
	m = bt.parse_ib_send_lat(head + " 64  1000  120.50  900.10  143.20  150.33"
	                         "  -nan  400.20  800.30\n")
	print("# parsed: %s" % m)
	assert m.get("p50_us") == 143.2 and m.get("p99_us") == 400.2, m
	assert "stdev_us" not in m and "stdev_us" in m.get("odd", ""), m
	assert "nan" in bt.lat_cell(m), bt.lat_cell(m)
	EOF
}

# docs/performance.md is for its reader (issue 47, item 6): under 300
# lines, and its "Current run" is what bench-table.py --doc makes of a
# run: table.md a heading down, without the title or the ratios section.
t test_performance_doc_short_and_regenerable
test_performance_doc_short_and_regenerable() {
	local n
	n=$(wc -l <"$TOP/docs/performance.md")
	echo "# docs/performance.md: $n lines"
	[ "$n" -lt 300 ] || { echo "# over 300 lines: the history belongs in git"; return 1; }
	python3 - "$TOP/scripts/bench-table.py" <<-'EOF'
	import importlib.util, sys
	spec = importlib.util.spec_from_file_location("bt", sys.argv[1])
	bt = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(bt)
	t = "\n".join(["# softsrd benchmark", "", "- Date: x", "", "## Bandwidth, MB/s",
	               "", "| a |", "", "## Ratios (this run)", "", "| r |", "",
	               "## Incast", "", "| i |"])
	d = bt.for_doc(t).split("\n")
	print("# --doc: %s" % d)
	assert d[:3] == ["## Current run", "", "- Date: x"], d
	assert "### Bandwidth, MB/s" in d and "### Incast" in d, d
	assert not [l for l in d if "Ratios" in l or l == "| r |"], d
	EOF
}

# The fallback rows (issue 48): srd_mpi_bench's lines become figures, a
# row with a wrong result has none, and --targets takes efa / tcp from
# fi_pingpong's two providers and the worst MPI size.
t test_bench_table_fallback_rows
test_bench_table_fallback_rows() {
	python3 - "$TOP/scripts/bench-table.py" "$tmp/fb" <<-'EOF'
	import importlib.util, json, os, sys
	spec = importlib.util.spec_from_file_location("bt", sys.argv[1])
	bt = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(bt)
	def out(us):
	    return "".join("srd_mpi_bench: %s %d 10 %.2f\n" % (op, s, us * s)
	                   for s in (8, 32) for op in bt.MPI_OPS)
	good = bt.parse_mpi_bench(out(2.0) + "srd_mpi_bench: 2 ranks, results checked\n")
	print("# parsed: %s" % good)
	assert good["us alltoall 32"] == 64.0 and good["iters pingpong 8"] == 10, good
	rec = {"tool": "srd_mpi_bench", "metrics": good, "mode": "mpi"}
	assert bt.primary(rec) == 6, bt.primary(rec)
	bad = bt.parse_mpi_bench(out(2.0).replace("\n", " WRONG RESULT\n", 1) +
	                         "srd_mpi_bench: 2 ranks, wrong results\n")
	assert bt.primary({"tool": "srd_mpi_bench", "metrics": bad}) is None, bad
	def rec(i, **m):
	    return {"id": i, "status": "ok", "tool": "fi_pingpong", "metrics": m}
	tcp = bt.parse_mpi_bench(out(1.0) + "srd_mpi_bench: 2 ranks, results checked\n")
	efa = dict(good, **{"us pingpong 8": 32.0})
	recs = [rec("fi-rdm-64", avg_us=300.0), rec("fi-tcp-64", avg_us=600.0),
	        rec("fi-rdm-65536", MBps=20.0), rec("fi-tcp-65536", MBps=10.0),
	        dict(rec("mpi-efa-np2"), tool="srd_mpi_bench", metrics=efa),
	        dict(rec("mpi-tcp-np2"), tool="srd_mpi_bench", metrics=tcp)]
	os.makedirs(sys.argv[2])
	json.dump({"machine": {}, "params": {}, "records": recs},
	          open(os.path.join(sys.argv[2], "results.json"), "w"))
	rows = {r[0]: r for r in bt.target_rows(sys.argv[2])[1]}
	for name, want in (("fi_pingpong rdm 64 B: efa on softsrd ≤ 1.0× tcp", (0.5, True)),
	                   ("fi_pingpong rdm MB/s at 64 KiB: efa ≥ 1.0× tcp", (2.0, True)),
	                   ("fi_pingpong rdm MB/s at 1 MiB: efa ≥ 1.0× tcp", (None, None)),
	                   ("MPI 2 ranks: efa time ≤ 1.0× tcp at every size (the worst)", (4.0, False)),
	                   ("MPI 4 ranks: efa time ≤ 1.0× tcp at every size (the worst)", (None, None))):
	    print("# %s: %s" % (name, rows[name][1:]))
	    assert (rows[name][1], rows[name][3]) == want, rows[name]
	assert rows["MPI 2 ranks: efa time ≤ 1.0× tcp at every size (the worst)"][2] == \
	    "pingpong 8 B: 32.0 / 8.0 µs; 6 of 6 over", rows
	EOF
}

# bench-mpi-agent.py, both ends on this host: mpirun's side sends the
# command, skipping ssh-style options, and prints its output; the other
# side runs it once and exits with its status.
t test_bench_mpi_agent_runs_a_command_at_the_other_end
test_bench_mpi_agent_runs_a_command_at_the_other_end() {
	local agent=$TOP/scripts/bench-mpi-agent.py port pid out rc
	port=$((30000 + RANDOM % 20000))
	timeout 20 "$agent" serve 127.0.0.1 $port >"$tmp/agent-serve" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		# shellcheck disable=SC2016 # expanded at the other end
		out=$(BENCH_MPI_PORT=$port "$agent" -x -T 127.0.0.1 'echo "on $((6 * 7))"; exit 3' 2>&1) &&
			break
		sleep 0.1
	done
	wait $pid
	rc=$?
	sed 's/^/# serve: /' "$tmp/agent-serve"
	[ "$out" = "on 42" ] && [ $rc -eq 3 ] || { echo "# out '$out', serve rc $rc"; return 1; }
	out=$("$agent" 127.0.0.1 true 2>&1) && return 1
	[[ "$out" == *"BENCH_MPI_PORT is not set"* ]] || { echo "# $out"; return 1; }
}

t test_insn_profile_counts_a_guest_workload
test_insn_profile_counts_a_guest_workload() {
	local d=$tmp/profile-run n=20000 out calls
	make -s -C "$TOP/tools/insn_profile" O="$tmp" || return 1
	mkdir -p "$d/profile"
	# shellcheck disable=SC2016 # expanded in the guest
	vm --share "$d" --plugin "file=$tmp/insn_profile.so,dir=$d/profile,name=guest" -- \
		bash -c '. "$1/scripts/common.sh"
			p=$2/profile
			cp /proc/kallsyms "$p/kallsyms-guest"
			insn_snapshot "$p" dd.0 guest
			dd if=/dev/zero of=/dev/null bs=1 count="$3" status=none
			insn_snapshot "$p" dd.1 guest' - "$TOP" "$d" "$n" >"$tmp/out" 2>&1 ||
		{ sed 's/^/# /' "$tmp/out"; return 1; }
	out=$(python3 "$TOP/scripts/bench-profile.py" --top 100000 --messages "$n" "$d" dd) ||
		return 1
	echo "$out" | grep -E '^\| (guest kernel|read_zero|write_null) ' | sed 's/^/# /'
	for f in read_zero write_null; do
		calls=$(echo "$out" | awk -F'|' -v f=" $f " '$2 == f { gsub(/ /, "", $4); print $4 }')
		if [ -z "$calls" ] || ! awk -v c="$calls" 'BEGIN { exit !(c >= 0.99 && c <= 1.01) }'; then
			echo "# $f: ${calls:-no} calls a read, not 1"
			return 1
		fi
	done
}

t test_bench_profile_one_guest
# bench-profile.py --guest: one guest's instructions alone, from two
# made-up guests whose kernels ran different functions; a guest that was
# not profiled is an error.
test_bench_profile_one_guest() {
	local d=$tmp/profile-guests out g
	mkdir -p "$d/profile" "$d/raw"
	echo "ib_send_bw -n 10" >"$d/raw/r.client.txt"
	for g in server client; do
		printf 'ffffffff81000000 T %s_work\nffffffff81001000 T %s_end\n' "$g" "$g" \
			>"$d/profile/kallsyms-$g"
		printf 'ffffffff81000000 100 10\nuser 50 0\nlost 0 0\n' >"$d/profile/$g-r.0.txt"
	done
	printf 'ffffffff81000000 600 20\nuser 250 0\nlost 0 0\n' >"$d/profile/server-r.1.txt"
	printf 'ffffffff81000000 300 30\nuser 70 0\nlost 0 0\n' >"$d/profile/client-r.1.txt"
	out=$(python3 "$TOP/scripts/bench-profile.py" --guest client "$d" r) || return 1
	echo "$out"
	echo "$out" | grep -q '^| client kernel | 20.0 |$' || { echo "# client kernel: not 200 / 10"; return 1; }
	echo "$out" | grep -q '^| client user | 2.0 |$' || { echo "# client user: not 20 / 10"; return 1; }
	echo "$out" | grep -q '^| client_work | 20.0 | 2.00 |$' || { echo "# client_work: not 20.0, 2 calls"; return 1; }
	echo "$out" | grep -q server && { echo "# the server counted"; return 1; }
	out=$(python3 "$TOP/scripts/bench-profile.py" "$d" r) || return 1
	echo "$out" | grep -q '^| all kernels | 70.0 |$' || { echo "# both guests: not 700 / 10"; return 1; }
	out=$(python3 "$TOP/scripts/bench-profile.py" --guest nosuch "$d" r 2>&1) && return 1
	echo "# $out"
	echo "$out" | grep -q 'no guest nosuch' || return 1
}

# bench.sh --trace's recordings (read by bench-trace.py): a ping-pong's
# round trips, each guest's turnaround and its parts, paired across the
# guests; the program's setup, lo, ACKs alone and a probe kept apart.
t test_bench_trace_round_trips
test_bench_trace_round_trips() {
	local d=$tmp/trace-run out
	mkdir -p "$d/trace"
	python3 - "$d/trace" <<-'PY' || return 1
	import sys
	def ev(f, us, task, text, base):
	    f.write("%16s-%-5d [000] ..s1. %12.6f: %s\n" % (task, 7 if task != "<idle>" else 0,
	                                                  base + us / 1e6, text))
	tx = "net_dev_xmit: dev=eth0 skbaddr=0000000012345678 len=%d rc=0"
	rx = ("napi_gro_receive_entry: dev=eth0 napi_id=0x2001 queue_mapping=1 protocol=0x0800 "
	      "ip_summed=0 len=%d data_len=0")
	irq = "irq_handler_entry: irq=24 name=virtio4-input.0"
	cqe = "srd_recv_cqe: (srd_complete_recv+0x0/0x110 [rdma_srd])"
	db = "sys_write(fd: 6, buf: 7ffc, count: 4)"
	sx = "srd_xmit_udp: (srd_xmit+0x0/0x200 [rdma_srd])"
	vq = "vq_notify: (virtqueue_notify+0x0/0x40)"
	end = "softirq_exit: vec=3 [action=NET_RX]"
	with open(sys.argv[1] + "/client-r.txt", "w") as f:
	    f.write("# tracer: nop\n#\n")
	    b = 10.0
	    ev(f, -500, "ib_send_lat", tx % 120, b)         # setup, before the first doorbell
	    ev(f, 0, "ib_send_lat", db, b)
	    ev(f, 100, "ib_send_lat", tx % 150, b)
	    ev(f, 150, "<idle>", tx % 150, b)                 # a tail probe: sent again
	    for t0 in (400, 800):
	        ev(f, t0, "<idle>", irq, b)
	        ev(f, t0 + 10, "<idle>", rx % 150, b)
	        ev(f, t0 + 20, "<idle>", "local_timer_entry: vector=236", b)
	        ev(f, t0 + 30, "<idle>", cqe, b)
	        ev(f, t0 + 40, "<idle>", end, b)
	        ev(f, t0 + 50, "ib_send_lat", db, b)
	        ev(f, t0 + 55, "<idle>", sx, b)              # not the program's
	        ev(f, t0 + 60, "ib_send_lat", sx, b)
	        ev(f, t0 + 70, "ib_send_lat", sx, b)         # not the first
	        ev(f, t0 + 80, "ib_send_lat", vq, b)
	        ev(f, t0 + 100, "ib_send_lat", tx % 118, b)  # no ACK block: a message still
	    ev(f, 600, "<idle>", tx % 90, b)                  # an ACK alone
	    ev(f, 650, "<idle>", "local_timer_entry: vector=236", b)
	    ev(f, 700, "bash", "net_dev_xmit: dev=lo skbaddr=0 len=150 rc=0", b)
	    ev(f, 1200, "<idle>", irq, b)
	    ev(f, 1210, "<idle>", rx % 150, b)
	    ev(f, 1220, "ib_send_lat", db, b)
	    ev(f, 1300, "<idle>", tx % 150, b)               # teardown: TCP, after the last doorbell
	    ev(f, 1400, "<idle>", tx % 150, b)
	with open(sys.argv[1] + "/server-r.txt", "w") as f:
	    b = 50.0
	    ev(f, 0, "ib_send_lat", db, b)
	    for t0 in (200, 600, 1000):
	        if t0 == 1000:
	            ev(f, t0 - 20, "<idle>", vq, b)          # before the doorbell: not its
	        ev(f, t0 - 10, "<idle>", irq, b)
	        ev(f, t0, "<idle>", rx % 150, b)
	        ev(f, t0 + 20, "<idle>", cqe, b)
	        ev(f, t0 + 22, "<idle>", "clockev_set: (lapic_next_event+0x0/0x30)", b)
	        ev(f, t0 + 24, "<idle>", ("clockev_set_ret: (clockevents_program_event+0x96/0x100 "
	                                   "<- lapic_next_event)"), b)
	        ev(f, t0 + 25, "<idle>", "softirq_exit: vec=1 [action=TIMER]", b)
	        ev(f, t0 + 45, "<idle>", end, b)
	        if t0 == 200:
	            ev(f, t0 + 50, "ib_send_lat", db, b)
	        elif t0 == 1000:                           # written on the other CPU
	            f.write("%16s-%-5d [001] ...1. %12.6f: %s\n" % ("ib_send_lat", 7,
	                                                         b + (t0 + 50) / 1e6, db))
	        # t0 600: an answer with no doorbell
	        ev(f, t0 + 75, "ib_send_lat", sx, b)
	        if t0 != 1000:
	            ev(f, t0 + 95, "ib_send_lat", vq, b)
	        ev(f, t0 + 100, "ib_send_lat", tx % 150, b)
	    ev(f, 450, "<idle>", "clockev_set: (lapic_next_event+0x0/0x30)", b)
	    ev(f, 460, "<idle>", "clockev_set_ret: (clockevents_program_event+0x96/0x100)", b)
	    # A return without its entry on that CPU, and an entry on another.
	    ev(f, 470, "<idle>", "clockev_set_ret: (clockevents_program_event+0x96/0x100)", b)
	    f.write("%16s-%-5d [001] d.h1. %12.6f: %s\n" % ("<idle>", 0, b + 480e-6,
	                                                 "clockev_set: (lapic_next_event+0x0/0x30)"))
	    ev(f, 490, "<idle>", "clockev_set_ret: (clockevents_program_event+0x96/0x100)", b)
	PY
	out=$(python3 "$TOP/scripts/bench-trace.py" --json "$d" r) || return 1
	python3 - "$out" <<-'PY' || { echo "$out" | sed 's/^/# /'; return 1; }
	import json, sys
	r = json.loads(sys.argv[1])["r"]
	want = {"client round trip": 310, "server turnaround": 100, "between the guests": 210,
	        "server: receive to doorbell": 50, "server: receive to its completion": 20,
	        "server: completion to doorbell": 30, "server: doorbell to send": 50,
	        "server: interrupt to receive": 10, "client turnaround": 90,
	        "client: receive to its completion": 20, "client: completion to doorbell": 20,
	        "client: doorbell to send": 50, "client: completion to the receive's end": 10,
	        "client: receive's end to doorbell": 10, "server: completion to the receive's end": 25,
	        "server: receive's end to doorbell": 5, "server: doorbell to rdma_srd's UDP send": 25,
	        "server: UDP send to the NIC's send": 25, "server: the NIC's notify to its send": 5,
	        "client: doorbell to rdma_srd's UDP send": 10,
	        "client: the NIC's notify to its send": 20}
	bad = ["%s: %s, not %s" % (k, r[k], v) for k, v in want.items()
	       if r[k] is None or abs(r[k]["median"] - v) > 0.01]
	ce = r["server: clock event programming"]
	if ce["n"] != 4 or abs(ce["median"] - 2) > 0.01 or abs(ce["mean"] - 4) > 0.01:
	    bad.append("server clock event programmings: %s, not 2, 2, 2 and 10 us" % ce)
	if r["clockev_in_turn a round trip"] != [1, 0] or r["clockev a round trip"][0] != 4 / 3:
	    bad.append("clock event programmings a round trip: %s and %s" %
	               (r["clockev a round trip"], r["clockev_in_turn a round trip"]))
	if r["server: the NIC's notify to its send"]["n"] != 1:
	    bad.append("a notify before the doorbell taken for its")
	if r["server: receive to doorbell"]["n"] != 2:
	    bad.append("a doorbell before the receive taken for its answer's")
	if r["doorbells on the completion's CPU"] != [0.5, 1]:
	    bad.append("doorbells on the completion's CPU: %s, not 1 of 2 and 2 of 2" %
	               r["doorbells on the completion's CPU"])
	if r["client round trip"]["n"] != 3 or not r["paired"] or r["round trips"] != 3:
	    bad.append("3 round trips, paired: %s" % r)
	for k, v in (("dup_tx a round trip", [0, 1 / 3]), ("short_tx a round trip", [0, 1 / 3]),
	             ("timers_in_turn a round trip", [0, 2 / 3]), ("timers a round trip", [0, 1])):
	    if any(abs(a - b) > 1e-9 for a, b in zip(r[k], v)):
	        bad.append("%s: %s, not %s" % (k, r[k], v))
	print("\n".join("# " + b for b in bad))
	sys.exit(1 if bad else 0)
	PY
	out=$(python3 "$TOP/scripts/bench-trace.py" "$d" nosuch 2>&1) && return 1
	echo "# $out"
	echo "$out" | grep -q 'was the run made with --trace' || return 1
}

# bench-ab.sh: runs the two sides in turn, passes its options on to
# each side's bench.sh, and averages what each run's results.json says;
# a run without a figure fails it.  Two fake trees stand in for softsrd's.
t test_bench_ab_interleaves_and_averages
test_bench_ab_interleaves_and_averages() {
	local side out
	for side in a b; do
		mkdir -p "$tmp/ab-$side/scripts"
		cat >"$tmp/ab-$side/scripts/bench.sh" <<-EOF
		#!/bin/bash
		# A stand-in: the SRD p50 grows by 10 us a run; UD's is 100 us in
		# A, 100 us a run in B (so the mean of ratios is not their ratio).
		echo "$side \$*" >>"$tmp/ab-calls"
		while [ \$# -gt 0 ]; do
		    [ "\$1" = --out ] && out=\$2
		    shift
		done
		n=\$(grep -c "^$side " "$tmp/ab-calls")
		srd=\$(( $([ $side = a ] && echo 300 || echo 200) + 10 * n ))
		ud=\$(( $([ $side = a ] && echo 100 || echo "100 * n") ))
		mkdir -p "\$out"
		[ "$side\$n" = b3 ] && exit 1    # no figure
		printf '{"records": [{"id": "srd-efa-lat-64", "metrics": {"p50_us": %d}},
		  {"id": "srd-ud-lat-64", "metrics": {"p50_us": %d}}]}' "\$srd" "\$ud" >"\$out/results.json"
		EOF
		chmod +x "$tmp/ab-$side/scripts/bench.sh"
	done
	out=$("$TOP/scripts/bench-ab.sh" --pin 0 --runs 3 --lat-iters 50 --out "$tmp/ab-out" \
		"$tmp/ab-a" "$tmp/ab-b" 2>&1) && { echo "# a run without a figure passed"; return 1; }
	echo "$out" | sed 's/^/# /'
	# A, B, A, B, A, B, each with the options given.
	[ "$(cut -d' ' -f1 "$tmp/ab-calls" | tr -d '\n')" = ababab ] &&
		[ "$(grep -c -- '--pin 0 .*--lat-iters 50\|--lat-iters 50 .*--pin 0' "$tmp/ab-calls")" -eq 6 ] &&
		[ "$(grep -c -- "--out $tmp/ab-out/[AB]-[123]" "$tmp/ab-calls")" -eq 6 ] &&
		grep -qF 'A-2: -c SRD p50 320.0 us, UD 100.0, ratio 3.20' <<<"$out" &&
		grep -qF 'B-3: no figure' <<<"$out" &&
		grep -qF "A ($tmp/ab-a), 3 runs: mean -c SRD p50 320.0 us, UD 100.0, ratio 3.20" <<<"$out" &&
		grep -qF 'B-2: -c SRD p50 220.0 us, UD 200.0, ratio 1.10' <<<"$out" &&
		grep -qF "B ($tmp/ab-b), 2 runs: mean -c SRD p50 215.0 us, UD 150.0, ratio 1.60" <<<"$out" &&
		grep -qF 'B / A: -c SRD p50 0.672, UD p50 1.500, ratio 0.500' <<<"$out" || return 1
	out=$("$TOP/scripts/bench-ab.sh" "$tmp/ab-a" 2>&1) && return 1
	[[ "$out" == *"give A and B"* ]] || { echo "# $out"; return 1; }
	out=$("$TOP/scripts/bench-ab.sh" "$tmp/nosuch" param:x=1 2>&1) && return 1
	[[ "$out" == *"neither param:NAME=VALUE nor a softsrd tree"* ]] || { echo "# $out"; return 1; }
	# Bad options are refused before any run.
	rm -f "$tmp/ab-calls"
	out=$("$TOP/scripts/bench-ab.sh" --pin x "$tmp/ab-a" "$tmp/ab-b" 2>&1) && return 1
	[[ "$out" == *"--pin takes a CPU number, not 'x'"* ]] || { echo "# $out"; return 1; }
	out=$("$TOP/scripts/bench-ab.sh" --lat-iters 0 "$tmp/ab-a" "$tmp/ab-b" 2>&1) && return 1
	[[ "$out" == *"--lat-iters takes a count, not '0'"* ]] || { echo "# $out"; return 1; }
	[ ! -e "$tmp/ab-calls" ] || { echo "# a side ran despite a bad option"; return 1; }
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
	start=$(date +%s%N)
	"$name" >"$tmp/log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	sed 's/^\([^#]\)/# \1/' "$tmp/log"
	case $rc in
	0) echo "ok $n $name # $((ms / 1000)).$((ms % 1000 / 100))s" ;;
	4) echo "ok $n $name # SKIP" ;;
	*) echo "not ok $n $name"; failed=$((failed + 1)) ;;
	esac
done
[ $failed -eq 0 ]
