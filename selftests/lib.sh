# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers for softsrd's shell selftests.  Commands that build a topology go
# through pp so that a failure log reads like the script that produced it.
# Tests exit 0 on pass, 1 on failure and 4 (kselftest's skip) when something
# they need is missing.
#
# pp, try, wait_for and the other helpers the scripts use too are in
# scripts/common.sh, found from this file's own directory (the tree is at
# the same path in the guest); here, a failed pp or wait_for fails the
# test (srd_fail is fail).

# shellcheck disable=SC2034 # for the tests that source this file
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SRD_TOP=${SRD_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/common.sh"

fail() {
	echo "FAIL: $*"
	exit $KSFT_FAIL
}

srd_fail() {
	fail "$@"
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

# gid_list DEV: the non-zero GIDs, one per line, as "INDEX GID".
gid_list() {
	local f i g
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		i=${f##*/}
		read -r g 2>/dev/null <"$f" || continue
		[ "$g" = "0000:0000:0000:0000:0000:0000:0000:0000" ] && continue
		echo "$i $g"
	done | sort -n
}

has_gid() {
	gid_list "$1" | grep -q " $2\$"
}

lacks_gid() {
	! has_gid "$@"
}

# gid_of_ipv6 ADDR: the GID of an IPv6 address as sysfs prints it.
gid_of_ipv6() {
	local a=$1 head tail g i n
	local -a h t all=()
	head=${a%%::*}
	if [[ "$a" == *::* ]]; then tail=${a#*::}; else tail=; head=$a; fi
	IFS=: read -ra h <<<"$head"
	IFS=: read -ra t <<<"$tail"
	n=$((8 - ${#h[@]} - ${#t[@]}))
	all=("${h[@]}")
	for ((i = 0; i < n; i++)); do all+=(0); done
	all+=("${t[@]}")
	g=
	for i in "${all[@]}"; do g+=$(printf '%04x:' "0x${i:-0}"); done
	echo "${g%:}"
}

# hw_counter DEV NAME: one of the device's counters.
hw_counter() {
	cat "/sys/class/infiniband/$1/hw_counters/$2"
}

# counter_above DEV NAME N: the device's counter NAME is above N.
counter_above() {
	[ "$(hw_counter "$1" "$2")" -gt "$3" ]
}

# expect_grew WHAT DEV NAME BEFORE: the device's counter NAME grows above
# BEFORE within 5 s (ib_core caches hw_counters for a few ms).
expect_grew() {
	wait_for "$1: $2's $3 grew from $4" 5 counter_above "$2" "$3" "$4"
	echo "$2's $3: $4 -> $(hw_counter "$2" "$3")"
}

# counters_back WHAT BASE SECS: the caller's counters() prints BASE again
# within SECS seconds (objects released after a kill, say).
counters_back() {
	local deadline=$((SECONDS + $3))
	until [ "$(counters)" = "$2" ]; do
		[ $SECONDS -lt $deadline ] ||
			fail "$1: $3 s on: expected '$2', saw '$(counters)'"
		sleep 0.1
	done
}

# require_forge: PY, a python3, and forge, selftests/srd_forge.py (the
# wire format spoken by hand), for the tests that forge or decode packets.
require_forge() {
	PY=/usr/bin/python3
	[ -x "$PY" ] || PY=$(command -v python3) || skip "needs python3"
	forge=$SRD_TOP/selftests/srd_forge.py
	[ -r "$forge" ] || fail "$forge is missing"
}

# srd_bin NAME: a built C test program.
srd_bin() {
	local b=${OUTPUT:-$SRD_TOP/build/selftests}/$1
	[ -x "$b" ] || fail "$b is not built (make -C selftests)"
	echo "$b"
}

# srd_tool NAME: the path of softsrd's tool NAME (tools/NAME), as built.
srd_tool() {
	local b=$SRD_TOP/build/tools/$1
	[ -x "$b" ] || fail "$b is not built (make tools)"
	echo "$b"
}

# dmesg_mark, dmesg_clean: the kernel log lines of SRD_BAD_KLOG
# (scripts/common.sh), which vm-run.sh fails a whole run for, between two
# points of a test.
dmesg_mark() {
	SRD_DMESG_LINES=$(dmesg | wc -l)
}
# dmesg_clean WHAT: nothing bad was logged since dmesg_mark.
dmesg_clean() {
	local new
	new=$(dmesg | tail -n +"$((SRD_DMESG_LINES + 1))")
	if grep -Eq "$SRD_BAD_KLOG" <<<"$new"; then
		echo "$new" | grep -E -A 20 "$SRD_BAD_KLOG" | head -60
		fail "$1: the kernel logged a problem"
	fi
	echo "ok: $1: nothing bad in the kernel log"
}

# Cleanup is a stack, as in the kernel's net selftests (their lib.sh's
# defer): "defer CMD [ARG...]" right after a step that needs undoing
# pushes its undoing; at exit, however the test exits, the stack runs
# last-in first-out, so a process dies before the device it uses, a
# device before its namespace.  A test never replaces the EXIT trap.
# defer_scope_push / defer_scope_pop bracket a phase whose cleanup runs
# when the phase ends (a test of several topologies in turn); on_fail
# CMD runs CMD at cleanup only if the test failed (exit neither 0 nor 4).
SRD_DEFER=()
SRD_DEFER_SCOPES=()
SRD_EXIT_RC=0
defer() {
	SRD_DEFER+=("$(printf '%q ' "$@")")
}

# defer_run_to N: run and drop the stack's entries above the N-th.
defer_run_to() {
	local i
	for ((i = ${#SRD_DEFER[@]} - 1; i >= $1; i--)); do
		eval "${SRD_DEFER[i]}" || true
		unset "SRD_DEFER[i]"
	done
}

defer_scope_push() {
	SRD_DEFER_SCOPES+=("${#SRD_DEFER[@]}")
}

defer_scope_pop() {
	local n=${#SRD_DEFER_SCOPES[@]}
	[ "$n" -gt 0 ] || fail "defer_scope_pop without defer_scope_push"
	defer_run_to "${SRD_DEFER_SCOPES[n - 1]}"
	unset "SRD_DEFER_SCOPES[n - 1]"
}

on_fail() {
	defer srd_if_failed "$@"
}

srd_if_failed() {
	[ "$SRD_EXIT_RC" -eq 0 ] || [ "$SRD_EXIT_RC" -eq "$KSFT_SKIP" ] || "$@"
}

srd_cleanup() {
	defer_run_to 0
	SRD_DEFER_SCOPES=()
	true
}
trap 'SRD_EXIT_RC=$?; srd_cleanup' EXIT

# kill_wait PID: PID killed (SIGKILL) and reaped, if it still runs.
kill_wait() {
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	true
}

# bg_start CMD...: CMD in the background, killed at cleanup.
bg_start() {
	"$@" &
	defer kill_wait $!
}

# set_param FILE VALUE: write VALUE to FILE (a module parameter, a sysctl
# file), its old value written back at cleanup.
set_param() {
	local old
	old=$(cat "$1") || fail "cannot read $1"
	echo "+ echo $2 > $1"
	echo "$2" >"$1" || fail "cannot write $2 to $1"
	defer srd_write "$1" "$old"
}

srd_write() {
	echo "$2" >"$1"
}

# hold_unprivileged DEV [SHAPE]: an unprivileged process (uid 65534) that
# holds DEV as srd_holder.py's SHAPE says, in the background; returns once
# it says it does, or fails with its output and its kernel stack.  Sets
# HOLDER (its pid) and HOLDER_LOG (its output, a file the caller removes).
hold_unprivileged() {
	local t0=$SECONDS
	HOLDER_LOG=$(mktemp /tmp/srd_holder.XXXXXX)
	echo "+ setpriv --reuid=65534 --regid=65534 --clear-groups srd_holder.py $* &"
	bg_start setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 "$SRD_TOP/selftests/srd_holder.py" "$@" >"$HOLDER_LOG" 2>&1
	HOLDER=$!
	until grep -q "^holding $1" "$HOLDER_LOG"; do
		if [ $((SECONDS - t0)) -ge 60 ] || ! kill -0 "$HOLDER" 2>/dev/null; then
			echo "# the holder's output, then its kernel stack:"
			sed 's/^/#   /' "$HOLDER_LOG" "/proc/$HOLDER/stack" 2>/dev/null
			fail "uid 65534 does not hold $1 after $((SECONDS - t0)) s"
		fi
		sleep 0.1
	done
	echo "ok: uid 65534 holds $1 (after $((SECONDS - t0)) s)"
}

# set_limits PROFILE: srd devices created from now on take the limits
# profile PROFILE (softsrd, efa-gen1, efa-gen2 or efa-gen3; efa names
# efa-gen1);
# cleanup puts the old one back.
SRD_LIMITS_PARAM=/sys/module/rdma_srd/parameters/limits
set_limits() {
	set_param "$SRD_LIMITS_PARAM" "$1"
}

# srd_efa_run: the build tree's srd-efa-run, which runs a command on
# softsrd's libefa.so.1.
srd_efa_run() {
	local r=${SRD_BUILD:-$SRD_TOP/build}/efa-compat/srd-efa-run
	[ -x "$r" ] || fail "$r is not built (make)"
	echo "$r"
}

# The undoing of the steps below, for defer: each quiet, and a no-op if
# the thing is gone already (a test may remove it itself).
del_link() {
	! srd_link_exists "$1" || rdma link del "$1" 2>/dev/null
	true
}

del_netdev() {
	ip link del "$1" 2>/dev/null
	true
}

del_netns() {
	ip netns del "$1" 2>/dev/null
	true
}

# veth_pair A B: a veth pair, both ends up, in the current namespace.
veth_pair() {
	pp ip link add "$1" type veth peer name "$2"
	defer del_netdev "$1"
	pp ip link set "$1" up
	pp ip link set "$2" up
}

new_netns() {
	pp ip netns add "$1"
	defer del_netns "$1"
	pp ip -n "$1" link set lo up
}

# netns_mode shared|exclusive: rdma's network namespace mode.  Exclusive
# can be set only while no other namespace exists, and the namespaces of
# earlier tests may still be on their way out: tried for up to 60 s.
netns_mode() {
	local deadline=$((SECONDS + 60))
	until rdma system set netns "$1" 2>/dev/null; do
		[ $SECONDS -lt $deadline ] || fail "rdma system set netns $1: still refused after 60s"
		sleep 0.2
	done
	echo "ok: rdma system set netns $1"
}

add_srd() {
	pp rdma link add "$1" type srd netdev "$2"
	defer del_link "$1"
}

# two_hosts TAG [MTU]: two namespaces joined by a veth pair, each end with
# an IPv4 and an IPv6 address and an srd device made from inside its
# namespace:
#   ${TAG}_a: veth ${TAG}a 10.201.0.1/24 fd00:201::1/64, device srd_${TAG}a
#   ${TAG}_b: veth ${TAG}b 10.201.0.2/24 fd00:201::2/64, device srd_${TAG}b
# Sets NS_A NS_B IF_A IF_B DEV_A DEV_B IP4_A IP4_B IP6_A IP6_B and the GID
# indices GIDX4_A GIDX4_B GIDX6_A GIDX6_B.  With TWO_HOSTS_NO_DEVICES set,
# the devices are left to the caller's two_hosts_add_devices.
two_hosts() {
	local tag=$1 mtu=${2:-}
	NS_A=${tag}_a NS_B=${tag}_b IF_A=${tag}a IF_B=${tag}b
	DEV_A=srd_${tag}a DEV_B=srd_${tag}b
	IP4_A=10.201.0.1 IP4_B=10.201.0.2 IP6_A=fd00:201::1 IP6_B=fd00:201::2
	new_netns "$NS_A"
	new_netns "$NS_B"
	pp ip -n "$NS_A" link add "$IF_A" type veth peer name "$IF_B" netns "$NS_B"
	if [ -n "$mtu" ]; then
		pp ip -n "$NS_A" link set "$IF_A" mtu "$mtu"
		pp ip -n "$NS_B" link set "$IF_B" mtu "$mtu"
	fi
	pp ip -n "$NS_A" addr add "$IP4_A/24" dev "$IF_A"
	pp ip -n "$NS_B" addr add "$IP4_B/24" dev "$IF_B"
	pp ip -n "$NS_A" addr add "$IP6_A/64" dev "$IF_A" nodad
	pp ip -n "$NS_B" addr add "$IP6_B/64" dev "$IF_B" nodad
	pp ip -n "$NS_A" link set "$IF_A" up
	pp ip -n "$NS_B" link set "$IF_B" up
	defer del_link "$DEV_A"
	defer del_link "$DEV_B"
	[ -n "${TWO_HOSTS_NO_DEVICES:-}" ] || two_hosts_add_devices
}

# two_hosts_add_devices: two_hosts' srd devices, made on its veth ends
# from inside their namespaces, waited for (their four GIDs, ACTIVE),
# and their GID indices set.
two_hosts_add_devices() {
	pp ip netns exec "$NS_A" rdma link add "$DEV_A" type srd netdev "$IF_A"
	pp ip netns exec "$NS_B" rdma link add "$DEV_B" type srd netdev "$IF_B"
	wait_for "$DEV_A has the GID of $IP4_A" 10 has_gid "$DEV_A" "$(gid_of_ipv4 "$IP4_A")"
	wait_for "$DEV_B has the GID of $IP4_B" 10 has_gid "$DEV_B" "$(gid_of_ipv4 "$IP4_B")"
	wait_for "$DEV_A has the GID of $IP6_A" 10 has_gid "$DEV_A" "$(gid_of_ipv6 "$IP6_A")"
	wait_for "$DEV_B has the GID of $IP6_B" 10 has_gid "$DEV_B" "$(gid_of_ipv6 "$IP6_B")"
	wait_for "$DEV_A ACTIVE" 10 port_active "$DEV_A"
	wait_for "$DEV_B ACTIVE" 10 port_active "$DEV_B"
	GIDX4_A=$(gid_index "$DEV_A" "$(gid_of_ipv4 "$IP4_A")")
	GIDX4_B=$(gid_index "$DEV_B" "$(gid_of_ipv4 "$IP4_B")")
	GIDX6_A=$(gid_index "$DEV_A" "$(gid_of_ipv6 "$IP6_A")")
	GIDX6_B=$(gid_index "$DEV_B" "$(gid_of_ipv6 "$IP6_B")")
	echo "GID indices: $DEV_A v4 $GIDX4_A v6 $GIDX6_A; $DEV_B v4 $GIDX4_B v6 $GIDX6_B"
}

# two_hosts_renew_devices [MTU]: two_hosts' srd devices deleted and made
# again (first setting both veth ends' MTU, if given), so that they take
# what is fixed at creation: the limits profile, the tunables, the MTU's
# segment size.
# shellcheck disable=SC2120 # the MTU is optional
two_hosts_renew_devices() {
	pp rdma link del "$DEV_A"
	pp rdma link del "$DEV_B"
	if [ -n "${1:-}" ]; then
		pp ip -n "$NS_A" link set "$IF_A" mtu "$1"
		pp ip -n "$NS_B" link set "$IF_B" mtu "$1"
	fi
	two_hosts_add_devices
}

# third_host TAG: after two_hosts, a third namespace ${TAG}_m with no srd
# device (an attacker's host, or many of them), on the fabric: a link of
# its own to a, which routes between m and b, so that m's packets reach b
# on b's srd netdev (a device takes packets only from its own netdev):
#   ${TAG}_m: veth ${TAG}m 10.202.0.1/24 fd00:202::1/64, routes to a and b's
#   10.201.0.0/24 and fd00:201::/64 through a; b routes 10.202.0.0/24,
#   fd00:202::/64 and fd00:203::/64 (for more addresses of m's own)
#   through a, and a routes fd00:203::/64 to m.
third_host() {
	NS_M=${1}_m IF_M=${1}m IP4_M=10.202.0.1 IP6_M=fd00:202::1
	new_netns "$NS_M"
	pp ip -n "$NS_M" link add "$IF_M" type veth peer name "${IF_M}a" netns "$NS_A"
	pp ip -n "$NS_M" addr add $IP4_M/24 dev "$IF_M"
	pp ip -n "$NS_M" addr add $IP6_M/64 dev "$IF_M" nodad
	pp ip -n "$NS_A" addr add 10.202.0.2/24 dev "${IF_M}a"
	pp ip -n "$NS_A" addr add fd00:202::2/64 dev "${IF_M}a" nodad
	pp ip -n "$NS_M" link set "$IF_M" up
	pp ip -n "$NS_A" link set "${IF_M}a" up
	pp ip netns exec "$NS_A" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1
	pp ip -n "$NS_M" route add 10.201.0.0/24 via 10.202.0.2
	pp ip -n "$NS_M" -6 route add fd00:201::/64 via fd00:202::2
	pp ip -n "$NS_A" -6 route add fd00:203::/64 via $IP6_M
	pp ip -n "$NS_B" route add 10.202.0.0/24 via "$IP4_A"
	pp ip -n "$NS_B" -6 route add fd00:202::/64 via "$IP6_A"
	pp ip -n "$NS_B" -6 route add fd00:203::/64 via "$IP6_A"
}

# m_addresses N: fd00:203::1 .. fd00:203::N (hex) on m's veth.
m_addresses() {
	local f
	f=$(mktemp /tmp/srd_m_addrs.XXXXXX)
	printf "addr add fd00:203::%x/64 dev $IF_M nodad\n" $(seq 1 "$1") >"$f"
	pp ip -n "$NS_M" -b "$f"
	rm -f "$f"
}

# reload_module [PARAM=VALUE...]: rmmod rdma_srd and insmod it again.
reload_module() {
	[ -n "${SRD_MODULE:-}" ] && [ -f "$SRD_MODULE" ] ||
		skip "SRD_MODULE (the .ko to reload) is not set"
	if [ -d /sys/module/rdma_srd ]; then
		try rmmod rdma_srd || fail "rmmod rdma_srd failed"
	fi
	try insmod "$SRD_MODULE" "$@" || fail "insmod $SRD_MODULE $* failed"
}

# For defer, by the tests that unload rdma_srd or load it with other
# parameters: module_insert loads it again if it is not loaded;
# module_reinsert loads it afresh, with the defaults.
module_insert() {
	[ -d /sys/module/rdma_srd ] || insmod "$SRD_MODULE"
	true
}

module_reinsert() {
	rmmod rdma_srd 2>/dev/null
	insmod "$SRD_MODULE"
	true
}

# run_pair PORT SERVER_NS CLIENT_NS SERVER_CMD... -- CLIENT_CMD...: start
# the server in SERVER_NS, wait until it listens on TCP PORT, run the
# client in CLIENT_NS (60 s at most each); fail unless both succeed.
# Their outputs are left in PAIR_SERVER_OUT and PAIR_CLIENT_OUT.
run_pair() {
	local port=$1 sns=$2 cns=$3 spid src crc deadline
	local -a srv=() cli=()
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local sout cout
	sout=$(mktemp /tmp/srd_pair_srv.XXXXXX)
	cout=$(mktemp /tmp/srd_pair_cli.XXXXXX)
	echo "+ ip netns exec $sns ${srv[*]} &"
	bg_start ip netns exec "$sns" timeout -k 5 60 "${srv[@]}" >"$sout" 2>&1
	spid=$!
	deadline=$((SECONDS + 20))
	until listening "$sns" "$port"; do
		if ! kill -0 "$spid" 2>/dev/null; then
			cat "$sout"
			fail "server exited before listening: ${srv[*]}"
		fi
		[ $SECONDS -lt $deadline ] || { cat "$sout"; fail "server not listening on $port after 20s"; }
		sleep 0.05
	done
	echo "+ ip netns exec $cns ${cli[*]}"
	ip netns exec "$cns" timeout -k 5 60 "${cli[@]}" >"$cout" 2>&1
	crc=$?
	[ $crc -eq 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	PAIR_SERVER_OUT=$(cat "$sout")
	PAIR_CLIENT_OUT=$(cat "$cout")
	rm -f "$sout" "$cout"
	echo "server (exit $src):"
	sed 's/^/  /' <<<"$PAIR_SERVER_OUT"
	echo "client (exit $crc):"
	sed 's/^/  /' <<<"$PAIR_CLIENT_OUT"
	[ $crc -eq 0 ] && [ $src -eq 0 ] ||
		fail "expected server and client to exit 0, saw server $src client $crc"
}

# ecmp_hosts TAG: hosts a and b joined through two routers by four
# equal-cost links with L4 multipath hashing, the switches of a fabric
# that spreads flows by UDP source port, plus a direct management link for
# out-of-band channels (TCP), which a black-holed fabric link must not cut:
#
#   a --va--r1a-- r1 ==p0..p3====q0..q3== r2 --r2b--vb-- b
#   a --mga-------------- management -------------mgb-- b
#
#   ${TAG}_a:  va 10.1.0.1/24 (device srd_${TAG}a), mga 10.9.0.1/24,
#              default route via r1
#   ${TAG}_r1: r1a 10.1.0.254/24, p$i 10.2.$i.1/24, b's subnet over all p$i
#   ${TAG}_r2: r2b 10.3.0.254/24, q$i 10.2.$i.2/24, a's subnet over all q$i
#   ${TAG}_b:  vb 10.3.0.2/24 (device srd_${TAG}b), mgb 10.9.0.2/24,
#              default route via r2
#
# netem on r1's p$i shapes the data direction (a to b), on r2's q$i the
# other.  Sets NS_A NS_B NS_R1 NS_R2 DEV_A DEV_B IP_A IP_B MGMT_A MGMT_B,
# ECMP_N (the number of links) and ECMP_P / ECMP_Q (their names).
ecmp_hosts() {
	local tag=$1 i ns
	local -a nh1=() nh2=()
	NS_A=${tag}_a NS_R1=${tag}_r1 NS_R2=${tag}_r2 NS_B=${tag}_b
	DEV_A=srd_${tag}a DEV_B=srd_${tag}b
	IP_A=10.1.0.1 IP_B=10.3.0.2 MGMT_A=10.9.0.1 MGMT_B=10.9.0.2
	ECMP_N=4 ECMP_P=() ECMP_Q=()
	for ((i = 0; i < ECMP_N; i++)); do
		ECMP_P+=("p$i")
		ECMP_Q+=("q$i")
		nh1+=(nexthop via "10.2.$i.2")
		nh2+=(nexthop via "10.2.$i.1")
	done
	for ns in "$NS_A" "$NS_R1" "$NS_R2" "$NS_B"; do
		try ip netns add "$ns" || fail "ip netns add $ns"
		defer del_netns "$ns"
	done
	# One ip process per namespace: under TCG each process costs.
	ip_batch "$NS_A" <<-EOF
		link set lo up
		link add va type veth peer name r1a netns $NS_R1
		link add mga type veth peer name mgb netns $NS_B
		addr add $IP_A/24 dev va
		addr add $MGMT_A/24 dev mga
		link set va up
		link set mga up
		route add default via 10.1.0.254
	EOF
	ip_batch "$NS_B" <<-EOF
		link set lo up
		link add vb type veth peer name r2b netns $NS_R2
		addr add $IP_B/24 dev vb
		addr add $MGMT_B/24 dev mgb
		link set vb up
		link set mgb up
		route add default via 10.3.0.254
	EOF
	ip_batch "$NS_R1" <<-EOF
		link set lo up
		$(for ((i = 0; i < ECMP_N; i++)); do
			echo "link add p$i type veth peer name q$i netns $NS_R2"
			echo "addr add 10.2.$i.1/24 dev p$i"
			echo "link set p$i up"
		done)
		addr add 10.1.0.254/24 dev r1a
		link set r1a up
	EOF
	ip_batch "$NS_R2" <<-EOF
		link set lo up
		$(for ((i = 0; i < ECMP_N; i++)); do
			echo "addr add 10.2.$i.2/24 dev q$i"
			echo "link set q$i up"
		done)
		addr add 10.3.0.254/24 dev r2b
		link set r2b up
		route add 10.1.0.0/24 ${nh2[*]}
	EOF
	ip_batch "$NS_R1" <<-EOF
		route add 10.3.0.0/24 ${nh1[*]}
	EOF
	for ns in "$NS_R1" "$NS_R2"; do
		try ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv4.fib_multipath_hash_policy=1 || fail "sysctl in $ns"
	done
	ecmp_add_srd
	on_fail ecmp_diag
}

# ip_batch NS: the ip commands on stdin, in NS, in one process.
ip_batch() {
	local cmds
	cmds=$(sed 's/^[[:space:]]*//; /^$/d')
	sed "s/^/+ ip -n $1 /" <<<"$cmds"
	ip -n "$1" -batch - <<<"$cmds" || fail "ip -n $1 -batch failed"
}

# ecmp_add_srd: (re)create the srd devices of ecmp_hosts on va and vb, e.g.
# after a change of a module parameter that new devices take.
ecmp_add_srd() {
	pp ip netns exec "$NS_A" rdma link add "$DEV_A" type srd netdev va
	defer del_link "$DEV_A"
	pp ip netns exec "$NS_B" rdma link add "$DEV_B" type srd netdev vb
	defer del_link "$DEV_B"
	wait_for "$DEV_A has the GID of $IP_A" 30 has_gid "$DEV_A" "$(gid_of_ipv4 "$IP_A")"
	wait_for "$DEV_B has the GID of $IP_B" 30 has_gid "$DEV_B" "$(gid_of_ipv4 "$IP_B")"
	wait_for "$DEV_A ACTIVE" 10 port_active "$DEV_A"
	wait_for "$DEV_B ACTIVE" 10 port_active "$DEV_B"
}

# ecmp_del_srd: remove both srd devices of ecmp_hosts.
ecmp_del_srd() {
	try rdma link del "$DEV_A" || fail "rdma link del $DEV_A"
	try rdma link del "$DEV_B" || fail "rdma link del $DEV_B"
}

# netem NS DEVS NETEM_ARGS...: the same netem qdisc on each of the netdevs
# DEVS (a space-separated list) in NS, in one tc process so that the links
# change together; NETEM_ARGS "none" removes the qdiscs.
netem() {
	local ns=$1 devs=$2 d
	shift 2
	echo "+ netem $ns [$devs] $*"
	if [ "$1" = none ]; then
		for d in $devs; do echo "qdisc del dev $d root"; done |
			ip netns exec "$ns" tc -force -batch - 2>/dev/null
		return 0
	fi
	for d in $devs; do echo "qdisc replace dev $d root netem $*"; done |
		ip netns exec "$ns" tc -batch - || fail "tc in $ns: netem $* on $devs"
}

# debugfs_mount: mount debugfs unless it is; unmounted at cleanup if this
# test mounted it.
debugfs_mount() {
	mountpoint -q /sys/kernel/debug && return
	try mount -t debugfs none /sys/kernel/debug || fail "cannot mount debugfs"
	defer umount /sys/kernel/debug
}

# tracefs_open: tracefs at $T (mounted unless it is), with the recording
# of task names (option record-cmd) off until cleanup.  With it on,
# as it is by default, enabling a first event also registers tracing's
# probes on sched_switch and sched_wakeup (tracing_start_cmdline_record()),
# which patches those tracepoints' code while every CPU runs through it;
# under qemu's TCG that once crashed a guest mid-test, an int3 Oops at
# trace_sched_wakeup+0x5 (scripts/vm-run.sh).  Off, enabling an event
# patches only its own tracepoint.  The tests read no task names.
T=/sys/kernel/tracing
# At cleanup, record-cmd is put back and tracefs unmounted if this test
# mounted it (after the events the test enabled are disabled: their
# defers come later, so run first).
tracefs_open() {
	if ! [ -d "$T/events" ]; then
		mount -t tracefs nodev "$T" 2>/dev/null || skip "no tracefs"
		defer umount "$T"
	fi
	[ -r "$T/options/record-cmd" ] || fail "no $T/options/record-cmd"
	set_param "$T/options/record-cmd" 0
}

# srd_paths DEV: the device's per-path statistics (debugfs_mount first):
# a line per peer, then one per path of it.
srd_paths() {
	local f=/sys/kernel/debug/rdma_srd/$1/paths
	[ -r "$f" ] || fail "$f is missing"
	cat "$f"
}

# srd_perf --json prints a JSON object per size on a line of its own, flat,
# with no comma or colon inside a value: PERF_AWK_ROW makes the array s of
# one such line's fields (as numbers where they are), for awk programs.
PERF_AWK_ROW='function row(line, kv, f, i, k) {
	delete s; gsub(/[{}" \t]/, "", line); k = split(line, kv, ",")
	for (i = 1; i <= k; i++) { split(kv[i], f, ":"); s[f[1]] = f[2] }
}'

# perf_sum FIELD OUTPUT: FIELD of srd_perf's results (--json), summed over
# sizes.
perf_sum() {
	awk -v f="$1" "$PERF_AWK_ROW"'
		/^[ \t]*\{"mode"/ { row($0); t += s[f] }
		END { print t + 0 }' <<<"$2"
}

# perf_clean WHAT OUTPUT NSIZES [MSGS [ERRORS]]: srd_perf --json printed a
# result for each of NSIZES sizes, none reports corrupt, duplicate or missing
# messages, MSGS messages were sent successfully in all and ERRORS error
# completions reported ("+": some).  Sets PERF_MSGS and PERF_ERRORS.
perf_clean() {
	local what=$1 out=$2 n=$3 lines corrupt dup missing
	# (No process substitution: the guest has no /dev/fd.)
	read -r lines PERF_MSGS PERF_ERRORS corrupt dup missing <<<"$(awk "$PERF_AWK_ROW"'
		/^[ \t]*\{"mode"/ {
			n++; row($0)
			for (k in s) t[k] += s[k]
		} END { print n + 0, t["msgs"] + 0, t["errors"] + 0, t["corrupt"] + 0,
			     t["dup"] + 0, t["missing"] + 0 }' <<<"$out")"
	[ "$lines" -eq "$n" ] ||
		fail "$what: expected $n result lines from srd_perf, saw $lines"
	[ "$corrupt" -eq 0 ] && [ "$dup" -eq 0 ] && [ "$missing" -eq 0 ] ||
		fail "$what: corrupt $corrupt, duplicate $dup, missing $missing messages"
	echo "ok: $what: no corrupt, duplicate or missing message"
	if [ -n "${4:-}" ]; then
		[ "$PERF_MSGS" -eq "$4" ] || fail "$what: expected $4 messages sent, saw $PERF_MSGS"
		echo "ok: $what: $PERF_MSGS messages sent and delivered"
	fi
	case ${5:-} in
	"") ;;
	+) [ "$PERF_ERRORS" -gt 0 ] || fail "$what: expected error completions, saw none"
	   echo "ok: $what: $PERF_ERRORS error completions" ;;
	*) [ "$PERF_ERRORS" -eq "$5" ] || fail "$what: expected $5 error completions, saw $PERF_ERRORS"
	   echo "ok: $what: $PERF_ERRORS error completions" ;;
	esac
}

# error_vendors OUTPUT: the vendor_err values of the error completions
# srd_perf reported in OUTPUT, sorted, unique, space-separated.
error_vendors() {
	sed -n 's/.*error completion: .*(vendor_err \([0-9]*\)).*/\1/p' <<<"$1" |
		sort -nu | tr '\n' ' ' | sed 's/ $//'
}

# perf_pair SERVER_NS CLIENT_NS SERVER_ARGS... -- CLIENT_ARGS...: run_pair
# for srd_perf (-S, the binary and the client's output format are added:
# $PERF_FORMAT, --json unless set; empty for the table): the server is
# ready once it says that it listens, which the shell reads without
# starting a process (each costs under TCG).  The outputs are left in PAIR_SERVER_OUT and
# PAIR_CLIENT_OUT; fails unless both exit 0.
perf_pair() {
	local sns=$1 cns=$2 perf spid src crc deadline sout cout l up=
	local -a srv=() cli=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	[ -z "${PERF_FORMAT---json}" ] || cli=("${PERF_FORMAT---json}" "${cli[@]}")
	perf=$(srd_tool srd_perf)
	sout=$(mktemp /tmp/srd_perf_srv.XXXXXX)
	cout=$(mktemp /tmp/srd_perf_cli.XXXXXX)
	echo "+ ip netns exec $sns srd_perf -S ${srv[*]} &"
	bg_start ip netns exec "$sns" timeout -k 5 60 "$perf" -S "${srv[@]}" >"$sout" 2>&1
	spid=$!
	deadline=$((SECONDS + 20))
	until [ -n "$up" ]; do
		while IFS= read -r l; do
			[[ "$l" == *"listening on TCP port"* ]] && up=1
		done <"$sout"
		[ -n "$up" ] && break
		if ! kill -0 "$spid" 2>/dev/null; then
			cat "$sout"
			fail "srd_perf server exited before listening"
		fi
		[ $SECONDS -lt $deadline ] || { cat "$sout"; fail "srd_perf server not listening after 20s"; }
		sleep 0.05
	done
	echo "+ ip netns exec $cns srd_perf ${cli[*]}"
	ip netns exec "$cns" timeout -k 5 60 "$perf" "${cli[@]}" >"$cout" 2>&1
	crc=$?
	[ $crc -eq 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	PAIR_SERVER_OUT=$(<"$sout")
	PAIR_CLIENT_OUT=$(<"$cout")
	rm -f "$sout" "$cout"
	echo "server (exit $src):"
	while IFS= read -r l; do echo "  $l"; done <<<"$PAIR_SERVER_OUT"
	echo "client (exit $crc):"
	while IFS= read -r l; do echo "  $l"; done <<<"$PAIR_CLIENT_OUT"
	[ $crc -eq 0 ] && [ $src -eq 0 ] ||
		fail "expected srd_perf server and client to exit 0, saw server $src client $crc"
}

# srd_counters DEV...: the devices' SRD counters that are not zero, one
# line each (for the log).
srd_counters() {
	local d
	for d; do
		echo "$d: $(cd "/sys/class/infiniband/$d/hw_counters" &&
			grep -v '^0$' srd_* /dev/null | sed 's/^srd_//; s/:/=/' | tr '\n' ' ')"
	done
}

# ecmp_diag: on a failure, what the transport knew: both devices' SRD
# counters and a's per-path state (debugfs, mounted for the moment).
ecmp_diag() {
	local m=
	echo "--- diagnostics"
	srd_counters "$DEV_A" "$DEV_B"
	if ! mountpoint -q /sys/kernel/debug; then
		mount -t debugfs none /sys/kernel/debug 2>/dev/null && m=1
	fi
	cat "/sys/kernel/debug/rdma_srd/$DEV_A/paths" 2>/dev/null
	[ -z "$m" ] || umount /sys/kernel/debug
	echo "---"
}
