#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The tag-aware packet fuzzer (srd_packet_fuzz.py) as a misbehaving peer.
# Three hosts: a and b, honest, and m, routed through a, each with an srd
# device.  m and b hold a real SRD conversation (srd_mix with answers,
# over and over), and two fuzzers mutate it: one on m's interface (m's
# packets to b), one on a's link to m (b's packets to m).  Their mutants
# carry the real tags, so they reach the transport's state machines: a
# peer that knows its tags because it is the remote (docs/protocol.md,
# "Threat model").  Meanwhile a sends to b.  Four invariants:
#   - every send from a to b completes OK and arrives once and intact
#     (srd_mix), before the fuzzing and during it: a misbehaving peer can
#     fail or delay only its own traffic;
#   - no QP starves another: a's QP keeps making progress (srd_mix gives up
#     after 30 s without a completion) while m's is fuzzed; both times are
#     reported;
#   - every device's engine holds at most a few pages plus the documented
#     bound per peer (debugfs mem: engine_bytes, peers, peer_bound_bytes),
#     sampled every half second;
#   - no receive is held past its limit: with m's conversation stopped, b
#     starts receiving orphans (first segments of messages m will never
#     finish, sent by a watching fuzzer) and must let go of every one
#     (debugfs paths' rx_assembling back to 0, srd_rx_msg_timeouts grown)
#     within three times peer_timeout_us.
# And the kernel logs nothing bad (on the debug kernel: KASAN, lockdep,
# UBSAN, kmemleak).
#
#   SRD_FUZZ_SECONDS  how long to fuzz (default 60)
#   SRD_FUZZ_SEED     the first fuzzer's seed (default: new each run;
#                     printed; the second takes SEED + 1)
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
/usr/bin/python3 -c 'import socket; socket.AF_PACKET' 2>/dev/null || skip "needs python3"
secs=${SRD_FUZZ_SECONDS:-60}
seed=${SRD_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
mix=$(srd_bin srd_mix)
fuzz=$SRD_TOP/selftests/srd_packet_fuzz.py
work=$(mktemp -d /tmp/srd_packet_fuzz.XXXXXX)
defer rm -rf "$work"
debugfs_mount
ulimit -l unlimited

two_hosts pf
third_host pf
DEV_M=srd_pfm
pp ip netns exec "$NS_M" rdma link add "$DEV_M" type srd netdev "$IF_M"
defer del_link "$DEV_M"
wait_for "$DEV_M has the GID of $IP4_M" 10 has_gid "$DEV_M" "$(gid_of_ipv4 "$IP4_M")"
wait_for "$DEV_M ACTIVE" 10 port_active "$DEV_M"

# mem DEV FIELD: a field of the device's debugfs mem line.
mem() {
	awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' \
		"/sys/kernel/debug/rdma_srd/$1/mem"
}
declare -A base
for d in "$DEV_A" "$DEV_B" "$DEV_M"; do
	[ -r "/sys/kernel/debug/rdma_srd/$d/mem" ] || fail "no debugfs mem for $d"
	[ "$(mem "$d" peers)" = 0 ] || fail "$d has peers before any traffic"
	base[$d]=$(mem "$d" engine_bytes)
done
bound=$(mem "$DEV_B" peer_bound_bytes)
echo "engine bytes with no peer: a ${base[$DEV_A]} b ${base[$DEV_B]} m ${base[$DEV_M]}; bound per peer $bound"

counters() {
	local d o
	for d in "$DEV_A" "$DEV_B" "$DEV_M"; do
		for o in qps cqs mrs pds ahs; do printf '%s=%s ' "$o" "$(hw_counter "$d" "$o")"; done
	done
}
objs=$(counters)
dmesg_mark

# honest_run OUT: a's 500 messages to b, srd_mix's output into OUT.
honest_run() {
	echo "+ srd_mix -n 500 -m 16384 -w 16 -r 32 -t 30 $DEV_A $IP4_A $DEV_B $IP4_B"
	timeout -k 5 300 "$mix" -n 500 -m 16384 -w 16 -r 32 -t 30 \
		"$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" >"$1" 2>&1
}
# honest_check WHAT OUT: each message arrived once and intact; sets SECS.
honest_check() {
	cat "$2"
	expect_match "a's messages to b arrive once and intact $1" \
		"sent 500 delivered 500 intact 500 dup 0 " "$(cat "$2")"
	SECS=$(sed -n 's/.* secs \([0-9.]*\)$/\1/p' "$2")
}
honest_run "$work/honest0"
honest_check "with no fuzzing" "$work/honest0"
alone=$SECS

# m's conversation with b, over and over until the fuzzers end: its
# messages may fail or arrive spoilt (that is the fuzzing), so only how
# many runs ended and how is kept.
# The loop's srd_mix of the moment is killed at cleanup after the loop.
# shellcheck disable=SC2317 # kill_mix runs through defer
kill_mix() {
	[ ! -s "$work/mix.pid" ] || kill_wait "$(cat "$work/mix.pid")"
}
defer kill_mix
echo "+ (loop) srd_mix -a -n 300 -m 20000 -w 16 -r 32 -t 10 $DEV_M $IP4_M $DEV_B $IP4_B &"
(
	while [ ! -e "$work/stop" ]; do
		"$mix" -a -n 300 -m 20000 -w 16 -r 32 -t 10 -s "$RANDOM" \
			"$DEV_M" "$IP4_M" "$DEV_B" "$IP4_B" >"$work/mix.out" 2>&1 &
		echo $! >"$work/mix.pid"
		if wait $!; then
			echo ok >>"$work/runs"
		else
			echo failed >>"$work/runs"
		fi
	done
) &
loop=$!
defer kill_wait "$loop"
rx0=$(hw_counter "$DEV_B" srd_rx_data_pkts)
wait_for "m's conversation with b under way" 30 counter_above "$DEV_B" srd_rx_data_pkts "$((rx0 + 500))"

drops0=$(hw_counter "$DEV_B" srd_rx_drop_bad_hdr)
# The fuzzers run until told (SIGTERM), within a bound.
end=$((SECONDS + secs))
echo "+ ip netns exec $NS_M srd_packet_fuzz.py --iface $IF_M --seed $seed --seconds $((secs + 300)) &"
ip netns exec "$NS_M" /usr/bin/python3 "$fuzz" --iface "$IF_M" --seed "$seed" \
	--seconds "$((secs + 300))" >"$work/fz1" 2>&1 &
fz1=$!
defer kill_wait "$fz1"
echo "+ ip netns exec $NS_A srd_packet_fuzz.py --iface ${IF_M}a --seed $((seed + 1)) --seconds $((secs + 300)) &"
ip netns exec "$NS_A" /usr/bin/python3 "$fuzz" --iface "${IF_M}a" --seed "$((seed + 1))" \
	--seconds "$((secs + 300))" >"$work/fz2" 2>&1 &
fz2=$!
defer kill_wait "$fz2"
# a's sends meanwhile, run after run until the fuzzing ends: they must all
# arrive, every time.
(
	i=0
	while [ ! -e "$work/fuzzed" ]; do
		i=$((i + 1))
		honest_run "$work/honest.$i" >/dev/null
	done
) &
honest=$!
defer kill_wait "$honest"

# The engines' memory, every half second while the fuzzers run.
most=0
most_at=nothing
while [ $SECONDS -lt $end ]; do
	kill -0 "$fz1" 2>/dev/null && kill -0 "$fz2" 2>/dev/null ||
		fail "a fuzzer ended early (seed $seed): $(cat "$work/fz1" "$work/fz2")"
	for d in "$DEV_A" "$DEV_B" "$DEV_M"; do
		# One read: the bytes and the peers they belong to.
		read -r now peers <<<"$(awk '{ print $2, $4 }' "/sys/kernel/debug/rdma_srd/$d/mem")"
		# A few pages for the engine beside its peers, as the simulator
		# allows (engine/tests/sim.c).
		limit=$((base[$d] + peers * bound + 4096))
		[ "$now" -le "$limit" ] ||
			fail "$d's engine holds $now bytes with $peers peers, above $limit (${base[$d]} + $peers x $bound + 4096; seed $seed)"
		if [ $((now - base[$d])) -gt "$most" ]; then
			most=$((now - base[$d]))
			most_at="$d with $peers peers"
		fi
	done
	sleep 0.5
done
touch "$work/fuzzed"
wait "$honest"
hruns=0
total=0
for f in "$work"/honest.*; do
	[ -e "$f" ] || fail "a sent nothing to b while m's conversation was fuzzed"
	honest_check "while m's conversation is fuzzed (run ${f##*.})" "$f"
	hruns=$((hruns + 1))
	total=$(awk -v a="$total" -v b="$SECS" 'BEGIN { print a + b }')
done
during=$(awk -v t="$total" -v n="$hruns" 'BEGIN { printf "%.1f", t / n }')
kill "$fz1" "$fz2"
wait "$fz1"
rc1=$?
wait "$fz2"
rc2=$?
sed 's/^/  fuzzer m->b: /' "$work/fz1"
sed 's/^/  fuzzer b->m: /' "$work/fz2"
[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] || fail "a fuzzer failed (seed $seed): $rc1 $rc2"
for f in fz1 fz2; do
	sent=$(sed -n 's/^RESULT .* sent=\([0-9]*\) .*/\1/p' "$work/$f")
	[ "${sent:-0}" -gt 0 ] || fail "$f sent no mutant (seed $seed)"
done
echo "ok: every engine stayed within its bound at every sample (the most: $most bytes above its base, $most_at, bound $bound a peer)"
expect_grew "mutants reached b's transport and were refused" "$DEV_B" srd_rx_drop_bad_hdr "$drops0"

touch "$work/stop"
kill "$(cat "$work/mix.pid")" 2>/dev/null
wait "$loop" 2>/dev/null
runs=$(wc -l <"$work/runs" 2>/dev/null || echo 0)
okruns=$(grep -c '^ok' "$work/runs" 2>/dev/null || true)
echo "m's conversations with b under fuzzing: $runs runs, ${okruns:-0} with every message delivered"
[ "$runs" -gt 0 ] || fail "m's conversation never ended a run"

# No receive held past its limit, with m's device made anew (the fuzzing
# may have left b's view of m's messages anywhere, and the orphans spoil
# what comes after them): m's conversation with b (one long run of
# srd_mix, so that it is mid-way) is stopped where it is (SIGSTOP: its
# QPs and their receives stay), and a watching fuzzer sends orphans (first
# segments of messages m will never send: SIGUSR1), so b starts to receive
# messages nothing will finish.  Once what is in flight is done m is
# silent, and every message b is still receiving must be aborted within
# 3 x peer_timeout_us (10 s each).  A moment with nothing to orphan lets the
# conversation go on for a second, and the stop is tried again.
# peer_sum DEV FIELD...: FIELD summed over DEV's peers (debugfs paths).
peer_sum() {
	local dev=$1
	shift
	awk -v f="$*" 'BEGIN { n = split(f, w, " "); for (j = 1; j <= n; j++) want[w[j]] = 1 }
		$1 == "peer" && $5 == "tag" { for (i = 1; i < NF; i++) if ($i in want) s += $(i + 1) }
		END { print s + 0 }' "/sys/kernel/debug/rdma_srd/$dev/paths"
}
assembling() { peer_sum "$DEV_B" rx_assembling; }
# shellcheck disable=SC2317 # none_assembling is wait_for's command
none_assembling() { [ "$(assembling)" = 0 ]; }
# m_quiet: m has nothing of its own in flight, waiting or under way.
# shellcheck disable=SC2317 # m_quiet is wait_for's command
m_quiet() { [ "$(peer_sum "$DEV_M" inflight pending active)" = 0 ]; }
# what_holds: what b and m say of each other, printed if the test fails.
# shellcheck disable=SC2317 # on_fail runs it
what_holds() {
	local d c
	for d in "$DEV_B" "$DEV_M"; do
		echo "$d's peers:"
		grep '^peer [^ ]* local' "/sys/kernel/debug/rdma_srd/$d/paths"
		for c in srd_rx_data_pkts srd_rx_msg_timeouts srd_rx_msg_overdue srd_rx_drop_bad_hdr srd_duplicates srd_tx_data_pkts; do
			printf ' %s %s' "$c" "$(hw_counter "$d" "$c")"
		done
		echo
	done
}
on_fail what_holds
pp rdma link del "$DEV_M"
pp ip netns exec "$NS_M" rdma link add "$DEV_M" type srd netdev "$IF_M"
wait_for "$DEV_M has the GID of $IP4_M" 10 has_gid "$DEV_M" "$(gid_of_ipv4 "$IP4_M")"
wait_for "$DEV_M ACTIVE" 10 port_active "$DEV_M"
rx0=$(hw_counter "$DEV_B" srd_rx_data_pkts)
echo "+ srd_mix -n 100000 -m 20000 -w 16 -r 32 -t 60 $DEV_M $IP4_M $DEV_B $IP4_B &"
"$mix" -n 100000 -m 20000 -w 16 -r 32 -t 60 "$DEV_M" "$IP4_M" "$DEV_B" "$IP4_B" \
	>"$work/long.out" 2>&1 &
mixpid=$!
defer kill_wait "$mixpid"
wait_for "m's conversation with b under way" 30 counter_above "$DEV_B" srd_rx_data_pkts "$((rx0 + 500))"
timeouts0=$(hw_counter "$DEV_B" srd_rx_msg_timeouts)
held=0
for try in 1 2 3 4 5; do
	echo "+ ip netns exec $NS_M srd_packet_fuzz.py --iface $IF_M --prob 0 --seconds 60 & (try $try)"
	ip netns exec "$NS_M" /usr/bin/python3 "$fuzz" --iface "$IF_M" --prob 0 \
		--seconds 60 >"$work/watch" 2>&1 &
	watch=$!
	defer kill_wait "$watch"
	wait_for "the watcher watches" 20 grep -q '^fuzzing' "$work/watch"
	sleep 2
	pp kill -STOP "$mixpid"
	# What it had posted goes out meanwhile: the orphans' ids come after
	# (sent before m's last messages, they would take those messages'
	# ids and PSNs, and m's own new segments keep it from being silent).
	wait_for "m has sent all it had posted" 30 m_quiet
	pp kill -USR1 "$watch"
	wait_for "the watcher sent its orphans" 20 grep -q '^orphans' "$work/watch"
	kill "$watch"
	wait "$watch"
	orphans=$(awk '$1 == "orphans" { print $2 }' "$work/watch")
	t0=$SECONDS
	until [ "$(assembling)" -gt 0 ] || [ $((SECONDS - t0)) -ge 3 ]; do sleep 0.05; done
	held=$(assembling)
	echo "b receives $held messages after $orphans orphans"
	[ "$held" -eq 0 ] || break
	pp kill -CONT "$mixpid"
	sleep 1
done
[ "$held" -gt 0 ] || fail "5 tries: b never started to receive an orphan"
t0=$SECONDS
wait_for "no message of b's still being received" 30 none_assembling
timeouts=$(hw_counter "$DEV_B" srd_rx_msg_timeouts)
[ "$timeouts" -gt "$timeouts0" ] || fail "the held receives went, but srd_rx_msg_timeouts did not move"
echo "ok: no receive held: $held released within $((SECONDS - t0)) s (b's srd_rx_msg_timeouts: $timeouts0 -> $timeouts)"
kill -9 "$mixpid"
wait "$mixpid" 2>/dev/null

echo "a's 500 messages to b: ${alone} s alone, ${during} s on average over $hruns runs beside the fuzzing"
counters_back "after the conversations" "$objs" 30
dmesg_clean "the packet fuzzer"
exit $KSFT_PASS
