#!/bin/bash
# kptprof compare: synthetic recordings of one suite on three GPU models
# (known speedups, declared bytes/FLOPs, ceilings in the device rows), the
# committed real H100 copy pair (planted +10% on the 512 MiB copy), and bad
# command lines.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
S="$KPT_BUILD/kpt-synth"
common=(--runs 3 --iterations 5 --names 20 --meta workload.synth.workload.bytes=4e9
	--meta workload.synth.workload.flops=1e12)
"$S" -o "$T/h100.kpt" "${common[@]}" || fail "kpt-synth h100"
"$S" -o "$T/h200.kpt" "${common[@]}" --gpu "NVIDIA H200" --slow _:-20 || fail "kpt-synth h200"
"$S" -o "$T/l4.kpt" --runs 3 --iterations 5 --names 20 --gpu "NVIDIA L4" --slow _:300 || fail "kpt-synth l4"

run "$KPTPROF" compare "$T/h100.kpt" "$T/h200.kpt" "$T/l4.kpt"
expect_rc 0 "compare text"
expect_out "NVIDIA H100 80GB HBM3"
expect_out "NVIDIA H200"
expect_out "NVIDIA L4"
expect_out "3000 GB/s"
expect_out "810 TFLOP/s"
grep -E '^synth\.workload +time' "$T/out" >/dev/null || fail "no time line for synth.workload: $(cat "$T/out")"
grep -E '^ +speedup +1\.00x +1\.2[45]x +0\.25x$' "$T/out" >/dev/null || fail "speedups not 1.00x 1.25x 0.25x: $(cat "$T/out")"
# 4e9 bytes per iteration: GB/s = 4e9 / ns, percent of each file's copy ceiling; the L4 file declares none.
grep -E '^ +GB/s \(% copy\) +[0-9]+ \([0-9]+%\) +[0-9]+ \([0-9]+%\) +-$' "$T/out" >/dev/null ||
	fail "GB/s line: $(cat "$T/out")"

run "$KPTPROF" compare --format json "$T/h100.kpt" "$T/h200.kpt"
expect_rc 0 "compare json"
if command -v python3 >/dev/null; then
	python3 - "$T/out" <<'PY' || fail "json check"
import json, sys
j = json.load(open(sys.argv[1]))
assert [f["gpu"] for f in j["files"]] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"], j["files"]
w = {r["workload"]: r["cells"] for r in j["workloads"]}
a, b = w["synth.workload"]
assert a["speedup"] == 1 and abs(b["speedup"] - 1.25) < 0.03, b
assert abs(a["gbps"] - 4e9 / a["ns"]) < 1e-6 * a["gbps"], a
assert abs(b["copy_pct"] - 100 * b["gbps"] / j["files"][1]["copy_gbps"]) < 1e-9, b
assert w["(all)"][0]["gbps"] is None
PY
fi

run "$KPTPROF" compare --format md "$T/h100.kpt" "$T/h200.kpt"
expect_rc 0 "compare md"
expect_out "| workload | quantity | NVIDIA H100 80GB HBM3 | NVIDIA H200 |"
expect_out "| \`synth.workload\` | time |"

# Real H100 recordings: the 512 MiB copy was planted 10% slower.
run "$KPTPROF" compare "$KPT_DATA/copy_base.kpt" "$KPT_DATA/copy_plant10_512MiB.kpt"
expect_rc 0 "compare real"
expect_out "memory.copy.512MiB"
awk '/^memory.copy.512MiB/ { getline; if ($3 + 0 < 0.88 || $3 + 0 > 0.95) exit 1; found = 1 } END { exit !found }' \
	"$T/out" || fail "512MiB speedup not about 1/1.1: $(cat "$T/out")"
expect_out "unknown" # these recordings predate measured ceilings

run "$KPTPROF" compare "$T/h100.kpt"
expect_error "one file" "at least two recordings"
run "$KPTPROF" compare "$T/h100.kpt" "$T/missing.kpt"
expect_error "missing file" "missing.kpt"
run "$KPTPROF" compare --format xml "$T/h100.kpt" "$T/h200.kpt"
expect_error "bad format" "xml"
run "$KPTPROF" compare --bogus "$T/h100.kpt" "$T/h200.kpt"
expect_error "bad option" "--bogus"
printf 'not a kpt file' >"$T/junk.kpt"
run "$KPTPROF" compare "$T/h100.kpt" "$T/junk.kpt"
expect_error "junk file" "junk.kpt"
echo ok
