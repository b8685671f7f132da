#!/usr/bin/env bash
# Real torch.profiler traces of one H200 (bench/import/torch_trace_pairs.py,
# 2026-11-28, three processes one after another: before, after, before
# again; each .json.gz as tensorboard_trace_handler writes it, 30 active
# steps): "after" runs the bf16 GEMM 8192 x 8192 x 1080 instead of x 1024
# (same cuBLAS kernel, 191.4 -> 205.1 us). Imported directly, the steps of
# one trace are its runs; diffed on one machine (--same-machine: a Kineto
# trace names no host) only that GEMM is SLOW, and before against before
# again has no SLOW or FAST key. Not data any rule was tuned on.
set -u
D=${KPT_SRC:?}/tests/data
T=$(mktemp -d /tmp/kpt-test-torch.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
GEMM=nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT
for c in before after before2; do
	"$KPTPROF" import "$D/torch_h200_gemm_$c.json.gz" -o "$T/$c.kpt" 2>"$T/imp.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		grep -q "zlib" "$T/imp.err" && { echo "skip: built without zlib"; exit 77; }
		cat "$T/imp.err"; fail "import $c: exit $rc"
	fi
done
"$KPTPROF" diff "$T/before.kpt" "$T/after.kpt" --same-machine >"$T/ab.txt" 2>&1
rc=$?; [ $rc -eq 1 ] || { cat "$T/ab.txt"; fail "before/after: exit $rc, want 1"; }
grep "^$GEMM " "$T/ab.txt" | grep -q " SLOW$" || { cat "$T/ab.txt"; fail "the GEMM is not SLOW"; }
[ "$(grep -c ' SLOW$' "$T/ab.txt")" -eq 1 ] || { cat "$T/ab.txt"; fail "other keys SLOW"; }
"$KPTPROF" diff "$T/before.kpt" "$T/before2.kpt" --same-machine >"$T/aa.txt" 2>&1
rc=$?; [ $rc -eq 0 ] || { cat "$T/aa.txt"; fail "before/before again: exit $rc, want 0"; }
grep -q ' SLOW$\| FAST$' "$T/aa.txt" && { cat "$T/aa.txt"; fail "a SLOW or FAST key in the unchanged pair"; }
echo "ok"
