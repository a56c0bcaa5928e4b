# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Helpers for softsrd's shell selftests.  Commands that build a topology go
# through pp so that a failure log reads like the script that produced it.
# Tests exit 0 on pass, 1 on failure and 4 (kselftest's skip) when something
# they need is missing.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SRD_TOP=${SRD_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

pp() {
	echo "+ $*"
	"$@"
}

fail() {
	echo "FAIL: $*"
	exit $KSFT_FAIL
}

skip() {
	echo "SKIP: $*"
	exit $KSFT_SKIP
}

# expect_eq WHAT EXPECTED SEEN
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', saw '$3'"
	echo "ok: $1 = '$3'"
}

# expect_match WHAT REGEX SEEN
expect_match() {
	[[ "$3" =~ $2 ]] || fail "$1: expected to match /$2/, saw '$3'"
	echo "ok: $1 matches /$2/"
}

# wait_for WHAT TIMEOUT_S CMD...: poll CMD until it succeeds.
wait_for() {
	local what=$1 timeout_s=$2 deadline
	shift 2
	deadline=$(($(date +%s%N) + timeout_s * 1000000000))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$deadline" ] ||
			fail "timed out after ${timeout_s}s waiting for: $what"
		sleep 0.05
	done
	echo "ok: $what"
}

# expect_fail_with WHAT ERRNO_TEXT CMD...: CMD must fail, saying ERRNO_TEXT.
expect_fail_with() {
	local what=$1 text=$2 out
	shift 2
	echo "+ $* (must fail: $text)"
	if out=$("$@" 2>&1); then
		fail "$what: succeeded, expected failure '$text'"
	fi
	[[ "$out" == *"$text"* ]] || fail "$what: expected '$text', saw '$out'"
	echo "ok: $what fails with '$text'"
}

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
}

require_srd_module() {
	[ -d /sys/module/rdma_srd ] || skip "rdma_srd is not loaded (run under scripts/vm-run.sh)"
}

require_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null || skip "needs $c"
	done
}

srd_link_exists() {
	[ -d "/sys/class/infiniband/$1" ]
}

srd_link_gone() {
	! srd_link_exists "$1"
}

# Number of RDMA links the kernel has.
rdma_link_count() {
	rdma link show | grep -c '^link ' || true
}

# port_state DEV: the kernel's view, e.g. "4: ACTIVE".
port_state() {
	cat "/sys/class/infiniband/$1/ports/1/state"
}

# gid_list DEV: the non-zero GIDs, one per line, as "INDEX GID".
gid_list() {
	local f i g
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		i=${f##*/}
		g=$(cat "$f" 2>/dev/null) || continue
		[ "$g" = "0000:0000:0000:0000:0000:0000:0000:0000" ] && continue
		echo "$i $g"
	done | sort -n
}

# gid_of_ipv4 A.B.C.D: the IPv4-mapped GID as sysfs prints it.
gid_of_ipv4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

has_gid() {
	gid_list "$1" | grep -q " $2\$"
}

lacks_gid() {
	! has_gid "$@"
}

# Every test leaves the guest as it found it.
SRD_NETNS=()
SRD_LINKS=()
SRD_NETDEVS=()
srd_cleanup() {
	local l n
	for l in "${SRD_LINKS[@]}"; do
		srd_link_exists "$l" && rdma link del "$l" 2>/dev/null
	done
	for n in "${SRD_NETDEVS[@]}"; do
		ip link del "$n" 2>/dev/null
	done
	for n in "${SRD_NETNS[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	true
}
trap srd_cleanup EXIT

# veth_pair A B: a veth pair, both ends up, in the current namespace.
veth_pair() {
	pp ip link add "$1" type veth peer name "$2"
	SRD_NETDEVS+=("$1")
	pp ip link set "$1" up
	pp ip link set "$2" up
}

new_netns() {
	pp ip netns add "$1"
	SRD_NETNS+=("$1")
	pp ip -n "$1" link set lo up
}

add_srd() {
	pp rdma link add "$1" type srd netdev "$2"
	SRD_LINKS+=("$1")
}
