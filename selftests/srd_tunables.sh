#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The transport's tunables (kernel/tunables.c) are checked when written:
#  - at insmod, a value out of range or one that makes the engine's
#    configuration inconsistent fails the load, saying why in the kernel
#    log; after a plain load every tunable has its documented default and
#    mode 0644; a good value given to insmod is taken;
#  - through sysfs, a good write is taken, and a write out of range,
#    inconsistent (rto_min_us above the engine's rto_max_us, 250 ms; no
#    two tunables constrain each other yet) or not a number fails at once
#    with EINVAL (ERANGE past the type), leaves the old value and (but for
#    a number that does not parse) says why in the kernel log;
#  - devices made after a write take the value written, those made before
#    keep theirs (debugfs: as many paths per peer as n_paths; an RTO of
#    250 ms, rto_max_us, with rto_min_us at 250000, and below it with the
#    default 200 us on a veth).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
[ -n "${SRD_MODULE:-}" ] && [ -f "$SRD_MODULE" ] || skip "SRD_MODULE (the .ko to reload) is not set"
srd_tool srd_perf >/dev/null
P=/sys/module/rdma_srd/parameters
defer module_reinsert
debugfs_mount
dmesg_mark

# klog_says WHAT TEXT: the kernel's last lines say TEXT.
klog_says() {
	dmesg | tail -n 20 | grep -qF -- "$2" || fail "$1: the kernel log does not say '$2'"
	echo "ok: $1: the kernel log says '$2'"
}

# peer_field DEV IP NAME: NAME's value on DEV's debugfs line for the peer
# at IPv4 address IP.
peer_field() {
	srd_paths "$1" | awk -v g="$(gid_of_ipv4 "$2")" -v f="$3" '
		$1 == "peer" && $2 == g && $3 == "local" {
			for (i = 3; i < NF; i++) if ($i == f) print $(i + 1)
		}'
}

# peer_paths DEV IP: how many paths DEV's peer at IP has.
peer_paths() {
	srd_paths "$1" | awk -v g="$(gid_of_ipv4 "$2")" '
		$1 == "peer" && $2 == g && $3 == "path" { n++ } END { print n + 0 }'
}

# traffic WHAT: 100 SRD sends from a to b, all delivered.
traffic() {
	perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -W 30 -- -d "$DEV_A" -W 30 \
		-s 4096 -n 100 "$IP4_B"
	perf_clean "$1" "$PAIR_CLIENT_OUT" 1 100 0
}

# expect_devices WHAT N_PATHS RTO_US: after traffic, a's peer b has N_PATHS
# paths and an RTO of RTO_US ("<X": below X).
expect_devices() {
	local what=$1 rto
	traffic "$what"
	expect_eq "$what: paths of $DEV_A's peer $IP4_B" "$2" "$(peer_paths "$DEV_A" "$IP4_B")"
	rto=$(peer_field "$DEV_A" "$IP4_B" rto_us)
	case $3 in
	"<"*) [ -n "$rto" ] && [ "$rto" -lt "${3#<}" ] ||
		fail "$what: $DEV_A's RTO to $IP4_B is '$rto' us, expected below ${3#<}"
	      echo "ok: $what: $DEV_A's RTO to $IP4_B is $rto us, below ${3#<}" ;;
	*) expect_eq "$what: $DEV_A's RTO to $IP4_B (us)" "$3" "$rto" ;;
	esac
}

# --- at insmod -----------------------------------------------------------
# refused_load PARAM=VALUE WHY: insmod with it fails and says why.
refused_load() {
	[ ! -d /sys/module/rdma_srd ] || try rmmod rdma_srd || fail "rmmod rdma_srd failed"
	expect_fail_with "insmod $1" "Invalid parameters" insmod "$SRD_MODULE" "$1"
	[ ! -d /sys/module/rdma_srd ] || fail "rdma_srd was loaded with $1"
	klog_says "insmod $1" "$2"
}

refused_load n_paths=0 "rdma_srd: n_paths=0 is outside 1..128"
refused_load n_paths=129 "rdma_srd: n_paths=129 is outside 1..128"
refused_load peer_idle_s=4 "rdma_srd: peer_idle_s=4 is outside 5..86400"
refused_load peer_timeout_us=600000001 "rdma_srd: peer_timeout_us=600000001 is outside 0..600000000"
refused_load rto_min_us=300000 \
	"rdma_srd: rto_min_us=300000 would make the SRD tunables inconsistent (rto_min_us: not 0; rto_min_us and rto_floor_max_us at most rto_max_us)"

# --- the defaults ----------------------------------------------------------
reload_module
declare -A DEFAULT=([n_paths]=16 [rto_min_us]=0 [ack_delay_us]=0
		    [cc_target_queue_us]=0 [cc_target_us]=0 [peer_idle_s]=30
		    [peer_timeout_us]=0
		    [pacing_gain_pct]=-1 [cc_fs_range_us]=-1
		    [cc_drain_interval_us]=-1)
for t in "${!DEFAULT[@]}"; do
	[ -w "$P/$t" ] || fail "$P/$t is missing or not writable"
	expect_eq "$t after a plain load" "${DEFAULT[$t]}" "$(cat "$P/$t")"
	expect_eq "$t's mode" 644 "$(stat -c %a "$P/$t")"
done

# A good value at insmod, taken by the first devices (below).
reload_module n_paths=3
expect_eq "n_paths after insmod n_paths=3" 3 "$(cat $P/n_paths)"
expect_eq "rto_min_us after insmod n_paths=3" 0 "$(cat $P/rto_min_us)"
two_hosts stn

# --- through sysfs -----------------------------------------------------------
# taken NAME VALUE: the write succeeds and reads back.
taken() {
	try bash -c "echo $2 >$P/$1" || fail "writing $1=$2 failed"
	expect_eq "$1 after writing $2" "$2" "$(cat "$P/$1")"
}

# refused NAME VALUE ERROR [WHY]: the write fails with ERROR, the value
# stays, and the kernel log says WHY.
refused() {
	local before
	before=$(cat "$P/$1")
	expect_fail_with "writing $1=$2" "$3" bash -c "echo $2 >$P/$1"
	expect_eq "$1 after the refused write of $2" "$before" "$(cat "$P/$1")"
	[ -z "${4:-}" ] || klog_says "writing $1=$2" "$4"
}

EINVAL="Invalid argument"
taken n_paths 1
taken n_paths 128
taken n_paths 5
refused n_paths 0 "$EINVAL" "rdma_srd: n_paths=0 is outside 1..128"
refused n_paths 129 "$EINVAL" "rdma_srd: n_paths=129 is outside 1..128"
refused n_paths -1 "$EINVAL"
refused n_paths five "$EINVAL"
refused n_paths 4294967296 "Numerical result out of range"

# rto_min_us against the engine's rto_max_us (250000).
taken rto_min_us 300
taken rto_min_us 250000
refused rto_min_us 250001 "$EINVAL" \
	"rdma_srd: rto_min_us=250001 would make the SRD tunables inconsistent (rto_min_us: not 0; rto_min_us and rto_floor_max_us at most rto_max_us)"
refused rto_min_us 300000 "$EINVAL" \
	"rdma_srd: rto_min_us=300000 would make the SRD tunables inconsistent (rto_min_us: not 0; rto_min_us and rto_floor_max_us at most rto_max_us)"

taken peer_timeout_us 1
taken peer_timeout_us 600000000
taken peer_timeout_us 0
refused peer_timeout_us 600000001 "$EINVAL" "rdma_srd: peer_timeout_us=600000001 is outside 0..600000000"
refused peer_timeout_us -1 "$EINVAL"

taken ack_delay_us 100
refused ack_delay_us -1 "$EINVAL"
taken ack_delay_us 0
taken cc_target_queue_us 800
refused cc_target_queue_us 4294967296 "Numerical result out of range"
taken cc_target_queue_us 0
taken cc_target_us 3000
refused cc_target_us 1000001 "$EINVAL" "rdma_srd: cc_target_us=1000001 is outside 0..1000000"
taken cc_target_us 0
taken cc_fs_range_us 0
refused cc_fs_range_us 1000001 "$EINVAL" "rdma_srd: cc_fs_range_us=1000001 is outside -1..1000000"
taken cc_fs_range_us -1
taken cc_drain_interval_us 0
taken cc_drain_interval_us 250000
refused cc_drain_interval_us 60000001 "$EINVAL" \
	"rdma_srd: cc_drain_interval_us=60000001 is outside -1..60000000"
taken cc_drain_interval_us -1

taken pacing_gain_pct 0
taken pacing_gain_pct 150
refused pacing_gain_pct -2 "$EINVAL" "rdma_srd: pacing_gain_pct=-2 is outside -1..2147483647"
taken pacing_gain_pct -1

taken peer_idle_s 5
taken peer_idle_s 86400
refused peer_idle_s 4 "$EINVAL" "rdma_srd: peer_idle_s=4 is outside 5..86400"
refused peer_idle_s 86401 "$EINVAL" "rdma_srd: peer_idle_s=86401 is outside 5..86400"
taken peer_idle_s 30

# The devices made before the writes keep what they were made with: the
# n_paths insmod gave, the default rto_min_us (200 us: an RTO of a few ms
# at most on a veth).
expect_devices "devices made before the writes" 3 "<250000"

# Devices made now take n_paths 5 and rto_min_us 250000, the values the
# refused writes left.
two_hosts_renew_devices
expect_devices "devices made after the writes" 5 250000

dmesg_clean "srd_tunables"
exit $KSFT_PASS
