# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# The shell helpers that scripts/ and selftests/ share, each defined once.
# A script sources it as
#
#   . "$TOP/scripts/common.sh"
#
# and selftests/lib.sh sources it for the tests.  It sets no shell option
# and no trap, and runs nothing: what a caller does on failure is the
# caller's, through two hooks it may redefine after sourcing:
#
#   srd_fail MSG...  report MSG and stop.  Default: die (MSG on stderr,
#                    exit 1); selftests/lib.sh makes it the test's fail.
#   srd_show CMD...  how pp and try show a step.  Default: "+ CMD".
#
# Messages start with $SRD_PROG, the script's name without .sh unless the
# caller sets it first.

SRD_PROG=${SRD_PROG:-${0##*/}}
SRD_PROG=${SRD_PROG%.sh}

# log MSG...: "PROG: MSG" on stderr.
log() {
	echo "$SRD_PROG: $*" >&2
}

# die MSG...: log MSG and exit 1.
die() {
	log "$@"
	exit 1
}

srd_fail() {
	die "$@"
}

srd_show() {
	echo "+ $*"
}

# usage: the caller's header comment, from its fourth line (past "#!",
# the SPDX line and a bare "#") to its first line that is not a comment,
# without the "# ", on stderr; exits 2.
usage() {
	awk 'NR >= 4 { if (!/^#/) exit; sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
}

# pp CMD...: a step the caller cannot go on without: shown and run; if it
# fails, so does the caller (srd_fail), naming the step, instead of
# failing later for a reason that hides it.  try CMD...: shown and run,
# its status left to the caller (CMD || die "...", || fail "...").
pp() {
	srd_show "$@"
	"$@" && return 0
	srd_fail "a step failed (exit $?): $*"
}

try() {
	srd_show "$@"
	"$@"
}

# wait_for WHAT TIMEOUT_S CMD...: poll CMD until it succeeds, then print
# "ok: WHAT"; srd_fail after TIMEOUT_S seconds.
wait_for() {
	local what=$1 timeout_s=$2 deadline
	shift 2
	deadline=$(($(date +%s%N) + timeout_s * 1000000000))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$deadline" ] ||
			srd_fail "timed out after ${timeout_s}s waiting for: $what"
		sleep 0.05
	done
	echo "ok: $what"
}

# resolve_kernel VER: the installed kernel (a directory of /lib/modules)
# that VER names: VER itself, else the lowest version that is VER.*, VER-*
# or VER+* ("6.1", "6.12").  The debug kernel (scripts/debug-kernel.sh,
# *-srd-debug) answers only to its full name.  Prints the release; if
# none matches, says so and returns 1, the exit status left to the caller.
resolve_kernel() {
	local v=$1 k
	if [ -d "/lib/modules/$v" ]; then
		echo "$v"
		return 0
	fi
	# shellcheck disable=SC2010,SC2012 # kernel releases have no odd characters
	for k in $(ls /lib/modules | grep -v -- '-srd-debug$' | sort -V); do
		case "$k" in
		"$v".*|"$v"-*|"$v"+*) echo "$k"; return 0 ;;
		esac
	done
	# shellcheck disable=SC2012
	log "no installed kernel matches '$v' (have: $(ls /lib/modules | tr '\n' ' '))"
	return 1
}

# busy_ticks: the clock ticks (getconf CLK_TCK a second) all CPUs have
# spent busy since boot: user, nice, system, irq, softirq and steal.
busy_ticks() {
	local u n s q sq st
	# cpu user nice system idle iowait irq softirq steal ...
	read -r _ u n s _ _ q sq st _ </proc/stat
	echo $((u + n + s + q + sq + st))
}

# gid_of_ipv4 A.B.C.D: the IPv4-mapped GID as sysfs prints it.
gid_of_ipv4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# gid_index DEV GID: the index of GID (as sysfs prints it) in the GID
# table of DEV's port 1: its RoCE v2 entry if it has one (rxe lists each
# address twice, RoCE v1 and v2, and only v2 is UDP), else the lowest.
# Prints nothing and returns 1 if DEV lacks GID.
gid_index() {
	local p=/sys/class/infiniband/$1/ports/1 f i g t first=
	for f in "$p"/gids/*; do
		i=${f##*/}
		read -r g 2>/dev/null <"$f" || continue
		[ "$g" = "$2" ] || continue
		read -r t 2>/dev/null <"$p/gid_attrs/types/$i" || t=
		if [ "$t" = "RoCE v2" ]; then
			echo "$i"
			return 0
		fi
		if [ -z "$first" ] || [ "$i" -lt "$first" ]; then
			first=$i
		fi
	done
	[ -n "$first" ] && echo "$first"
}

# active_mtu DEV [CMD...]: the active MTU of DEV's port 1 in bytes, the
# largest UD message, as ibv_devinfo says; run under CMD if given, a
# command prefix such as "env -u RDMAV_DRIVERS".
active_mtu() {
	local dev=$1
	shift
	"$@" ibv_devinfo -d "$dev" | awk '$1 == "active_mtu:" { print $2; exit }'
}

# port_state DEV: the kernel's view of port 1, e.g. "4: ACTIVE".
port_state() {
	cat "/sys/class/infiniband/$1/ports/1/state"
}

# port_active DEV: port 1 is ACTIVE.
port_active() {
	[ "$(port_state "$1")" = "4: ACTIVE" ]
}

# SRD_BAD_KLOG: kernel log lines that mean a bug (grep -E), those that
# scripts/vm-run.sh fails a run for and selftests/lib.sh's dmesg_clean a
# test: an Oops, BUG, WARNING, general protection fault, soft lockup,
# hung task, panic, a sanitizer's or refcount_t's report, list corruption,
# or a netdev that cannot unregister for references left on it.
# shellcheck disable=SC2034 # for the caller
SRD_BAD_KLOG='Oops|BUG:|WARNING:|general protection fault|soft lockup|hung_task|blocked for more than|Kernel panic|UBSAN:|KASAN:|refcount_t:|list_(add|del) corruption|unregister_netdevice: waiting for'

# listening NS PORT: something in network namespace NS listens on TCP PORT.
listening() {
	ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .
}

# bench_record DIR FIELDS...: a line of DIR/index.tsv, `make bench`'s
# index of measurements: FIELDS, tab-separated (the columns are in
# scripts/bench-guest.sh's write_header; scripts/bench-table.py reads it).
bench_record() {
	local IFS=$'\t' dir=$1
	shift
	echo "$*" >>"$dir/index.tsv"
}

# insn_snapshot DIR LABEL NAME...: in a guest run with vm-run.sh --plugin
# tools/insn_profile (dir=DIR, name=NAME), ask the plugin of each NAME for
# a snapshot of its instruction counts, DIR/NAME-LABEL.txt, and return
# once all are written (srd_fail after 30 s).  Each request is renamed
# into place whole: the plugin may look between a create and a write.
insn_snapshot() {
	local dir=$1 label=$2 n deadline=$((SECONDS + 30))
	shift 2
	for n in "$@"; do
		if ! { echo "$label" >"$dir/$n.tmp" && mv "$dir/$n.tmp" "$dir/$n.req"; }; then
			srd_fail "cannot ask $n for instruction counts in $dir"
		fi
	done
	for n in "$@"; do
		while [ -e "$dir/$n.req" ]; do
			[ $SECONDS -lt $deadline ] ||
				srd_fail "no instruction-count snapshot $label of $n after 30 s"
			sleep 0.05
		done
	done
}
