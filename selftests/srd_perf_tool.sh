#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# srd_perf as a person and a script meet it (srd_perf(1)): --help, a wrong
# command line, the table it prints by default and the JSON of --json,
# each row's figures checked against the run (sizes, message counts, no
# errors) and the device counters that show the traffic went through
# the transport.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd python3
perf=$(srd_tool srd_perf)
tmp=$(mktemp -d /tmp/srd_perf_tool.XXXXXX)
defer rm -rf "$tmp"

# --help: the usage on stdout, exit 0; a wrong option: a hint on stderr,
# exit 2; no srd device in the namespace: exit 4 (skip).
out=$("$perf" --help) || fail "srd_perf --help exited $?"
[[ "$out" == "usage: srd_perf -S "*"-J, --json"*"Exit status:"* ]] ||
	fail "srd_perf --help printed: $out"
echo "ok: --help prints the usage and exits 0"
"$perf" --no-such-option >"$tmp/out" 2>"$tmp/err"
expect_eq "exit status of a wrong option" 2 "$?"
grep -q "Try 'srd_perf --help'" "$tmp/err" || fail "no hint on stderr: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "a wrong option printed on stdout: $(cat "$tmp/out")"
"$perf" -t sideways 10.0.0.1 2>"$tmp/err"
expect_eq "exit status of -t sideways" 2 "$?"
grep -q "srd_perf: -t is bw or lat, not 'sideways'" "$tmp/err" ||
	fail "-t sideways: $(cat "$tmp/err")"
echo "ok: a wrong command line exits 2 and says why"

two_hosts spt
d0=$(hw_counter "$DEV_B" srd_msgs_delivered)

# The table: a heading, then one row per size with a figure per column.
PERF_FORMAT='' perf_pair "$NS_B" "$NS_A" -d "$DEV_B" -- \
	-d "$DEV_A" -s 64,4096 -n 200 -q 2 -W 30 "$IP4_B"
python3 - "$PAIR_CLIENT_OUT" <<'PY' || fail "the table is not as srd_perf(1) says"
import sys
rows = [l.split() for l in sys.argv[1].splitlines() if l and not l.startswith("#")]
want = ["size", "qps", "depth", "msgs", "secs", "MB/s", "kmsg/s", "p50_us", "p99_us",
        "p99.9_us", "cpu_s/GB", "errors", "corrupt", "dup", "missing"]
assert rows and rows[0] == want, "heading %s" % rows[:1]
assert len(rows) == 3, "%d rows, want a heading and 2" % len(rows)
for r, size in zip(rows[1:], ("64", "4096")):
    c = dict(zip(want, r))
    assert len(r) == len(want), "row %s" % r
    assert c["size"] == size and c["qps"] == "2" and c["depth"] == "16", r
    assert c["msgs"] == "400", "msgs %s, want 400 (200 on each of 2 QPs)" % c["msgs"]
    assert float(c["MB/s"]) > 0 and float(c["p50_us"]) > 0, r
    assert [c[k] for k in ("errors", "corrupt", "dup", "missing")] == ["0"] * 4, r
print("ok: the table: heading and a row per size, 400 messages each, nothing lost")
PY
d1=$(hw_counter "$DEV_B" srd_msgs_delivered)
[ $((d1 - d0)) -ge 800 ] || fail "$DEV_B delivered $((d1 - d0)) messages, want at least 800"
echo "ok: $DEV_B delivered $((d1 - d0)) messages during the table's run"

# --json: stdout holds only results, an object per line; comments go to
# stderr.  A latency run of RDMA writes, two sizes.
w0=$(hw_counter "$DEV_B" srd_rdma_writes_in)
bg_start ip netns exec "$NS_B" timeout -k 5 60 "$perf" -S -d "$DEV_B" -W 30 \
	>"$tmp/server" 2>&1
spid=$!
wait_for "the server listens" 20 listening "$NS_B" 18600
ip netns exec "$NS_A" timeout -k 5 60 "$perf" --json -d "$DEV_A" -o write -t lat \
	-s 1,65536 -n 50 -W 30 "$IP4_B" >"$tmp/json" 2>"$tmp/json.err"
crc=$?
wait "$spid"
src=$?
echo "client stdout:"; sed 's/^/  /' "$tmp/json"
echo "client stderr:"; sed 's/^/  /' "$tmp/json.err"
[ $crc -eq 0 ] && [ $src -eq 0 ] || fail "--json run: client exit $crc, server $src"
grep -q '^# client: ' "$tmp/json.err" || fail "--json: no comment on stderr"
python3 - "$tmp/json" <<'PY' || fail "--json output is not as srd_perf(1) says"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, "%d objects, want 2" % len(rows)
keys = {"mode", "op", "size", "qps", "iters", "min_us", "avg_us", "p50_us", "p99_us",
        "p999_us", "errors", "corrupt", "dup", "missing"}
for r, size in zip(rows, (1, 65536)):
    assert set(r) == keys, "keys %s" % sorted(r)
    assert (r["mode"], r["op"], r["size"], r["qps"], r["iters"]) == ("lat", "write", size, 1, 50), r
    assert 0 < r["min_us"] <= r["p50_us"] <= r["p99_us"] <= r["p999_us"], r
    assert r["errors"] == r["corrupt"] == r["dup"] == r["missing"] == 0, r
print("ok: --json: stdout is two JSON objects, 50 writes of each size, no errors")
PY
w=$(($(hw_counter "$DEV_B" srd_rdma_writes_in) - w0))
[ "$w" -ge 100 ] || fail "$DEV_B took $w RDMA writes, want at least 100"
echo "ok: $DEV_B took $w RDMA writes during the JSON run"
exit $KSFT_PASS
