#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Everything `make check` runs, after the build: make lint, the host-side
# tests, the VM selftests on every target kernel, each in one guest boot, and a quick
# smoke run of `make bench` on the first kernel.  Prints
# each result as TAP and ends with "N passed, N failed, N skipped"; exits
# non-zero on any failure.
#
#   scripts/run-checks.sh KVER...
#   scripts/run-checks.sh --debug [--teardown] KVER
#                     make check-debug: the VM selftests only (with
#                     --teardown, those of teardown, races and the wire:
#                     selftests/Makefile's TEST_PROGS_TEARDOWN), on the
#                     debug kernel KVER (scripts/debug-kernel.sh), with
#                     longer time limits

set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SRD_BUILD:-$TOP/build}
mkdir -p "$BUILD/check"

pass=0
fail=0
skipped=0
failed_names=()

# count LOG PHASE: add up a TAP log's top-level results.
count() {
	local log=$1 phase=$2 p f s
	p=$(grep -Ec '^ok [0-9]+' "$log" | tr -d ' ')
	s=$(grep -Ec '^ok [0-9]+ .*# SKIP' "$log" | tr -d ' ')
	f=$(grep -Ec '^not ok [0-9]+' "$log" | tr -d ' ')
	pass=$((pass + p - s))
	skipped=$((skipped + s))
	fail=$((fail + f))
	while IFS= read -r l; do
		failed_names+=("$phase: $l")
	done < <(grep -E '^not ok [0-9]+' "$log")
}

# phase NAME CMD...: run a TAP-producing command; a command that fails
# without reporting a failed test counts as one failure of its own.
phase() {
	local name=$1 log=$BUILD/check/$1.tap rc before=$fail
	shift
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	count "$log" "$name"
	if [ "$rc" -ne 0 ] && [ "$fail" -eq "$before" ]; then
		fail=$((fail + 1))
		failed_names+=("$name: exited $rc without a failed test")
	fi
	echo "=== $name: exit $rc"
}

# lint_report: make lint's report, run beside the host tests, and its status.
lint_report() {
	cat "$lint_log"
	return "$lint_rc"
}

# bench_smoke KVER: the benchmark's quick mode, as one TAP result.  It
# checks that every row still produces a figure, never what the figure is.
bench_smoke() {
	echo "TAP version 13"
	echo "1..1"
	if "$TOP/scripts/bench.sh" --quick --kernel "$1"; then
		echo "ok 1 make bench (quick) on $1: every row measured"
	else
		echo "not ok 1 make bench (quick) on $1: a row has no figure, or the harness failed"
	fi
}

start=$(date +%s)
what="make check"
if [ "${1:-}" = --debug ]; then
	# KASAN, lockdep and the rest make everything several times slower.
	what="make check-debug"
	target=run_tests
	shift
	if [ "${1:-}" = --teardown ]; then
		target=run_tests_teardown
		what+=" (teardown, races and the wire)"
		shift
	fi
	for k in "$@"; do
		phase "vm-$k" "$TOP/scripts/vm-run.sh" --kernel "$k" --timeout 5400 -- \
			make -s -C "$TOP/selftests" "$target" TEST_TIMEOUT=900
	done
else
	# make lint is single-threaded, and the host tests leave a core idle
	# half the time: lint runs beside them, its report after theirs.
	lint_log=$BUILD/check/lint.out
	"$TOP/scripts/lint.sh" >"$lint_log" 2>&1 &
	lint_pid=$!
	phase host "$TOP/scripts/host-tests.sh"
	wait "$lint_pid"
	lint_rc=$?
	phase lint lint_report
	# A kernel's whole set takes about 13 minutes on an idle two-core
	# machine; each test has its own limit (TEST_TIMEOUT).  1500 s ran
	# out on a machine loaded by other guests (2026-12-07, load 4-11).
	# User-space software over the device runs on the newest kernel only
	# (selftests/Makefile, TEST_PROGS_USERSPACE).
	newest=$(printf '%s\n' "$@" | sort -V | tail -n 1)
	for k in "$@"; do
		no_user=1
		[ "$k" != "$newest" ] || no_user=0
		phase "vm-$k" "$TOP/scripts/vm-run.sh" --kernel "$k" --timeout 2400 -- \
			make -s -C "$TOP/selftests" run_tests NO_USERSPACE=$no_user
	done
	[ $# -eq 0 ] || phase bench-smoke bench_smoke "$1"
fi

echo
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo "$what took $(($(date +%s) - start))s on kernels: $*"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
