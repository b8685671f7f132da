#!/bin/bash
# Sessions of two builds combine key by key: nvcc names an anonymous
# namespace after its translation unit and build, so the committed H200
# sessions of 2026-11-26 and of 2026-11-28 give their anonymous-namespace
# kernels different raw names (_GLOBAL__N__e0222684_6_moe_cu_... and
# _GLOBAL__N__3ae86796_6_moe_cu_...) under one demangled name. A baseline of
# both is still 49 keys, each once, as one session of either gives (it
# was 78: 29 keys split in two, each half with part of the sessions).
. "$KPT_SRC/tests/cli/cli_lib.sh"
H200="$KPT_SRC/baselines/nvidia-h200/default"
OLD="$H200/20261126T142209Z-3f2faf7c.kpt"
NEW1="$H200/20261128T163134Z-ca46320f.kpt"
CAND="$H200/20261128T164350Z-bf558af5.kpt"
for f in "$OLD" "$NEW1" "$CAND"; do [ -f "$f" ] || fail "missing committed session $f"; done
# the premise: the two builds' raw names differ
for f in "$OLD" "$NEW1"; do
	run "$KPTPROF" diff "$f" "$CAND" --json "$T/$(basename "$f").json" --quiet
	expect_rc 0 "diff $f"
done
need_python
python3 - "$T/$(basename "$OLD").json" "$T/$(basename "$NEW1").json" <<'PY' || fail "the two builds' raw names do not differ: the test no longer covers the case"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
ra = {r["mangled"] for r in a["keys"] if "moe_scan" in r["name"]}
rb = {r["mangled"] for r in b["keys"] if "moe_scan" in r["name"]}
assert ra and rb and not ra & rb, (ra, rb)
PY
run "$KPTPROF" diff "$OLD" "$NEW1" "$CAND" --json "$T/both.json"
expect_rc 0 "diff of a baseline of both builds"
expect_out "(49 keys;"
python3 - "$T/both.json" <<'PY' || fail "a key of the two-build baseline is not one row with both sessions"
import collections, json, sys
j = json.load(open(sys.argv[1]))
keys = [(r["name"], r["path"], str(r["grid"]), str(r["block"]), r["ordinal"]) for r in j["keys"]]
dup = [k for k, n in collections.Counter(keys).items() if n > 1]
assert len(keys) == 49 and not dup, (len(keys), dup[:2])
assert j["model"]["base_sessions"] == 2, j["model"]
assert all(len(r["base_run_ns"]) == 10 for r in j["keys"]), [(r["name"], len(r["base_run_ns"])) for r in j["keys"] if len(r["base_run_ns"]) != 10][:3]
PY
echo "ok: sessions of two builds combine key by key"
exit 0
