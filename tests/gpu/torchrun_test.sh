#!/usr/bin/env bash
# torchrun_test.sh - `kptprof record -- torchrun --nproc-per-node 2 ...` on
# one GPU: one recording with both ranks' processes (kpt_process.rank from
# RANK), `report --by rank` shows rank 0 and rank 1 with kernels, and the
# ranks' kernels lie on one clock (CUPTI timestamps are one clock per
# machine): the all_reduce keeps the ranks in lock step, so their kernel
# time spans overlap and their first kernels start within 2 s of each other.
# Then `record --counters` on the same job: the two ranks share one GPU's
# counters (one process at a time), so they hand them over while waiting
# for each other in the all_reduce; both ranks' kernels get counters.
# Env: KPTPROF, SCRIPT. Exit 77 without a GPU, PyTorch or torchrun.
set -u
fail() { echo "FAIL: $*"; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
python3 -c 'import torch, torch.distributed; assert torch.cuda.is_available()' 2>/dev/null ||
	{ echo "no PyTorch with CUDA: skipped"; exit 77; }
TR=$(command -v torchrun) || { echo "no torchrun: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kpttorchrun.XXXXXX")
trap 'rm -rf "$T"' EXIT

KPTPROF_NO_CALIBRATE=1 "$KPTPROF" record -o "$T/ranks.kpt" -- "$TR" --standalone --nproc-per-node 2 "$SCRIPT" \
	>"$T/out" 2>"$T/err"; rc=$?
cat "$T/out" "$T/err"
[ $rc -eq 0 ] || fail "record -- torchrun exit $rc"
"$KPTPROF" report "$T/ranks.kpt" --by rank --format json >"$T/rank.json" || fail "report --by rank"
"$KPTPROF" report "$T/ranks.kpt" --by rank
"$KPTPROF" export "$T/ranks.kpt" --format csv -o "$T/k.csv" || fail "export"
"$KPTPROF" export "$T/ranks.kpt" --format json -o "$T/all.json" || fail "export json"
python3 - "$T/rank.json" "$T/k.csv" "$T/all.json" <<'PY'
import csv, json, sys
rep = json.load(open(sys.argv[1]))
# labels are "rank R GPU G" (one row per rank and device)
ranks = {}
for r in rep["ranks"]:
    w = r["rank"].split()
    if len(w) >= 2 and w[0] == "rank":
        ranks[w[1]] = ranks.get(w[1], 0) + r["instances"]
print("kernels by rank:", ranks)
assert ranks.get("0", 0) > 0 and ranks.get("1", 0) > 0, "both ranks need kernels: %s" % ranks
allj = json.load(open(sys.argv[3]))
procs = allj.get("processes", [])
rank_of = {p["index"]: p.get("rank") for p in procs}
print("processes:", [(p.get("pid"), p.get("rank")) for p in procs])
span = {}
for row in csv.DictReader(open(sys.argv[2])):
    if row["kind"] != "kernel":
        continue
    r = rank_of.get(int(row["process"]))
    s, e = int(row["start_ns"]), int(row["end_ns"])
    lo, hi = span.get(r, (s, e))
    span[r] = (min(lo, s), max(hi, e))
print("kernel spans by rank (ns):", span)
r0, r1 = span.get(0), span.get(1)
assert r0 and r1, "spans of rank 0 and 1: %s" % span
assert r0[0] < r1[1] and r1[0] < r0[1], "rank kernel spans do not overlap: one clock?"
assert abs(r0[0] - r1[0]) < 2e9, "first kernels %.3f s apart" % (abs(r0[0] - r1[0]) / 1e9)
PY
[ $? -eq 0 ] || fail "ranks"

KPTPROF_NO_CALIBRATE=1 timeout 240 "$KPTPROF" record -o "$T/cnt.kpt" --counters=sm__inst_executed.sum \
	-- "$TR" --standalone --nproc-per-node 2 "$SCRIPT" >"$T/out" 2>"$T/err"; rc=$?
cat "$T/err"
[ $rc -eq 0 ] || fail "record --counters -- torchrun exit $rc"
n=$(sed -n 's/^kptprof: counters: \([0-9]*\) kernels.*/\1/p' "$T/err")
t=$(sed -n 's/^kptprof: recorded \([0-9]*\) kernels.*/\1/p' "$T/err")
echo "timed kernels $t, kernels with counters $n"
# the counters pass runs the job once more: as many kernels as the timing run
[ -n "$n" ] && [ -n "$t" ] && [ "$n" -eq "$t" ] || fail "counters for $n kernels, timed $t"
echo ok
