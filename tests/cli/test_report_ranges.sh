#!/usr/bin/env bash
# report --by range --ranges any-thread on the committed PyTorch recording
# (tests/data/torch_small.kpt: five training steps in the NVTX range
# kpt_step on the main thread; backward kernels launched by autograd's own
# thread): NVTX's rule leaves those kernels in "(no range)"; with any-thread
# they count for "kpt_step (other thread)", and every kernel is counted once;
# diff and view follow the same rule when asked.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_python
F=$KPT_DATA/torch_small.kpt
[ -r "$F" ] || skip "tests/data/torch_small.kpt is missing"
for rule in thread any-thread; do
	"$KPTPROF" report "$F" --by range --ranges $rule --format json >"$T/$rule.json" || fail "report --ranges $rule"
done
python3 - "$T/thread.json" "$T/any-thread.json" <<'PY' || fail "ranges across threads"
import json, sys
t = {r["path"]: r["instances"] for r in json.load(open(sys.argv[1]))["ranges"]}
a = {r["path"]: r["instances"] for r in json.load(open(sys.argv[2]))["ranges"]}
assert sum(t.values()) == sum(a.values()), (t, a)          # each kernel once
assert t.get("kpt_step", 0) == a.get("kpt_step", 0), (t, a)  # the thread's own ranges unchanged
moved = a.get("kpt_step (other thread)", 0)
assert moved > 100, a                                       # the backward kernels
assert t.get("", 0) - a.get("", 0) == moved, (t, a)          # out of "(no range)"
PY
run "$KPTPROF" report "$F" --by range --ranges all-threads
expect_rc 2 "report --ranges with a bad value"
# diff and view take the same rule: the backward kernels become keys of
# their own under "kpt_step (other thread)"; by default they are not
"$KPTPROF" diff "$F" "$F" --ranges any-thread --json "$T/d.json" -q || fail "diff --ranges any-thread"
"$KPTPROF" diff "$F" "$F" --json "$T/d0.json" -q || fail "diff"
python3 - "$T/d.json" "$T/d0.json" <<'PY' || fail "diff keys across threads"
import json, sys
a = [k["path"] for k in json.load(open(sys.argv[1]))["keys"]]
t = [k["path"] for k in json.load(open(sys.argv[2]))["keys"]]
assert any(p == "kpt_step (other thread)" for p in a), sorted(set(a))
assert not any("other thread" in p for p in t), sorted(set(t))
PY
run "$KPTPROF" diff "$F" "$F" --ranges sideways
expect_rc 2 "diff --ranges with a bad value"
"$KPTPROF" view "$F" --ranges any-thread -o "$T/view" >/dev/null 2>&1 || fail "view --ranges any-thread"
grep -q "kpt_step (other thread)" "$T/view/index.html" || fail "view: no (other thread) range row"
echo ok
