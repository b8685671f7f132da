#!/usr/bin/env bash
# Ranks on two GPUs, on the committed recording of a 2-rank data-parallel
# step with NCCL (tests/data/ddp_2gpu_h200.kpt, 2 x H200): report --by rank
# gives rank 0 on GPU 0 and rank 1 on GPU 1 with their NCCL time (text,
# JSON, CSV); a diff keys each rank's kernels separately ("rank R/" leads
# the path) and says the ranks did the same work.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
F=$KPT_DATA/ddp_2gpu_h200.kpt
[ -r "$F" ] || skip "tests/data/ddp_2gpu_h200.kpt is missing"
run "$KPTPROF" report "$F" --by rank
expect_rc 0 "report --by rank"
grep -q "rank 0 GPU 0" "$T/out" && grep -q "rank 1 GPU 1" "$T/out" || fail "ranks missing: $(cat "$T/out")"
grep -Eq "rank 0 GPU 0 +[0-9.]+ ms in +[1-9][0-9]* kernels" "$T/out" || fail "no NCCL time for rank 0: $(cat "$T/out")"
# per training step: the script's NVTX range "step", 20 warm-up + 200 timed on each rank
run "$KPTPROF" report "$F" --by rank --step step
expect_rc 0 "report --by rank --step step"
[ "$(grep -c "per 'step' (220 of them)" "$T/out")" -eq 2 ] || fail "per-step NCCL time: $(tail -3 "$T/out")"
run "$KPTPROF" report "$F" --by rank --step nosuchrange
grep -q "no 'nosuchrange' range on this rank" "$T/out" || fail "a step range that is not there: $(tail -3 "$T/out")"
"$KPTPROF" report "$F" --by rank --format json >"$T/r.json" || fail "report --by rank --format json"
python3 - "$T/r.json" <<'PY' || fail "JSON ranks"
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["rank"]: x for x in d["ranks"]}
assert set(r) == {"rank 0 GPU 0", "rank 1 GPU 1"}, list(r)
for x in r.values():
    assert 0 < x["comm_ns"] < x["total_ns"] and x["comm_kernels"] > 0, x
assert sum(x["total_ns"] for x in r.values()) == d["gpu_time_ns"]
PY
"$KPTPROF" report "$F" --by rank --format csv | head -n 1 | grep -q ',rank$' || fail "CSV header"
"$KPTPROF" diff "$F" "$F" --all --json "$T/d.json" >/dev/null
expect_rc 0 "diff of the 2-rank recording with itself"
python3 - "$T/d.json" <<'PY' || fail "diff keys by rank"
import json, sys
d = json.load(open(sys.argv[1]))
paths = [k["path"] for k in d["keys"]]
assert any(p.startswith("rank 0") for p in paths) and any(p.startswith("rank 1") for p in paths), paths[:5]
assert all(p.startswith("rank ") for p in paths), [p for p in paths if not p.startswith("rank ")][:5]
assert any(n["what"] == "ranks" and "the same launches" in n["text"] for n in d["notes"]), d["notes"]
PY
echo ok
