#!/usr/bin/env bash
# scripts/gpu/import_check.sh - kptprof import against torch.profiler's own
# trace (issue 22, point 4). Run by scripts/gpu-check.sh (as the part
# import_check) or alone with BUILD, SRC and RES set (RES defaults to
# $OUT/import). Writes under $RES:
#   trace.json       torch.profiler's Chrome trace of tests/gpu/torch_import_workload.py
#                    (6 steps, the last 4 active: 4 ProfilerStep#N ranges)
#   imported.kpt     kptprof import trace.json
#   recorded.kpt     kptprof record of the same program without the profiler
#                    (each step an NVTX range kpt:iter)
#   check.txt        kernels, memops and GPU time counted in the JSON itself vs
#                    the import: kernel and memop counts must be equal, GPU
#                    time within 0.1% (exit 1 otherwise)
#   report.txt, report_range.txt, recorded.txt, diff.txt
#                    report of the import (by kernel, by range), of the
#                    recording, and `diff recorded.kpt imported.kpt` (shown, not judged:
#                    the profiler's own cost is in the imported times)
#   steps.txt        rc and time of each step
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}"
RES=${RES:-${OUT:?}/import}
mkdir -p "$RES"
[ -x "$BUILD/cli/kptprof" ] || cmake --build "$BUILD" -j16 --target kptprof kptinject >"$RES/build.log" 2>&1 \
	|| { tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
W=$SRC/tests/gpu/torch_import_workload.py
status=0
step() { # name, command...
	local name=$1; shift
	local t0=$(date +%s%N)
	"$@" >"$RES/$name.txt" 2>&1
	local rc=$?
	printf '%-12s rc=%-3s %6d ms\n' "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$RES/steps.txt"
	[ $rc -eq 0 ] || status=1
	return $rc
}
date -u +%FT%TZ >"$RES/date.txt"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv >>"$RES/date.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__)' >>"$RES/date.txt" 2>&1

step profile python3 "$W" --trace "$RES/trace.json" --steps 6
step import "$K" import "$RES/trace.json" -o "$RES/imported.kpt"
compare() {
	cat "$RES/import.txt"
	grep -q "(4 steps as kpt:iter)" "$RES/import.txt" || { echo "FAIL: the import did not find the 4 steps"; return 1; }
	"$K" report "$RES/imported.kpt" --format json >"$RES/imported.json" || return 1
	python3 - "$RES/trace.json" "$RES/imported.json" <<'PY'
import json, sys
from decimal import Decimal
# count and sum straight from the JSON text, durations as exact decimals
t = json.load(open(sys.argv[1]), parse_float=Decimal)
r = json.load(open(sys.argv[2]))
ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
kern = [e for e in ev if str(e.get("cat", "")).lower() == "kernel"]
mem = [e for e in ev if str(e.get("cat", "")).lower() in ("gpu_memcpy", "gpu_memset")]
steps = {e["name"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")}
trace_ns = sum(Decimal(e["dur"]) for e in kern) * 1000
imp_ns = Decimal(r["gpu_time_ns"])
c = r["counts"]
rel = abs(imp_ns - trace_ns) / trace_ns if trace_ns else Decimal(1)
print(f"trace:  {len(kern)} kernels, {len(mem)} memops, GPU time {trace_ns} ns, steps {sorted(steps)}")
print(f"import: {c['kernels']} kernels, {c['memops']} memops, GPU time {imp_ns} ns, ranges {c['ranges']}")
print(f"GPU time difference {float(rel) * 100:.5f}% (limit 0.1%)")
ok = len(kern) == c["kernels"] and len(mem) == c["memops"] and rel <= Decimal("0.001") and len(kern) > 0
ok = ok and len(steps) == 4
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
}
step check compare
"$K" report "$RES/imported.kpt" >"$RES/report.txt" 2>&1
"$K" report "$RES/imported.kpt" --by range >"$RES/report_range.txt" 2>&1
step record "$K" record -o "$RES/recorded.kpt" -- python3 "$W" --steps 6
"$K" report "$RES/recorded.kpt" >"$RES/recorded_report.txt" 2>&1
"$K" diff "$RES/recorded.kpt" "$RES/imported.kpt" >"$RES/diff.txt" 2>&1
echo "diff exit status $?" >>"$RES/diff.txt"
cat "$RES/check.txt"
head -12 "$RES/report.txt"
head -20 "$RES/diff.txt"
exit $status
