#!/usr/bin/env bash
# nvtx_test.sh - range paths of a program that uses NVTX as NCCL and a
# training loop do (nvtx_app.cu: a user step range with NCCL's and
# PyTorch's domains inside, registered strings, start/end ranges ended on
# another thread, a pop through the NVTX payload extension, a lost pop, an
# unmatched pop; two threads, four steps). Asserts the path of every kernel
# in every step (as counts per kernel and path: a path gone stale after
# step 1 changes them), the start/end ranges closed, and the meta counts.
# Env: KPTPROF, APP, CHECK. Exit 77 without a GPU.
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/kptnvtx.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

KPTPROF_NO_CALIBRATE=1 "$KPTPROF" record -o "$T/nvtx.kpt" -- "$APP" >"$T/out" 2>"$T/err" ||
	{ cat "$T/out" "$T/err"; echo "FAIL: record exit status"; exit 1; }
grep -q 'nvtx_app: done' "$T/out" || { cat "$T/out" "$T/err"; echo "FAIL: the app did not finish"; exit 1; }
"$KPTPROF" export "$T/nvtx.kpt" --format csv -o "$T/k.csv" || { echo "FAIL: export"; exit 1; }
# "count name|path" for each kernel name (without its arguments) and path
awk -F, 'NR > 1 && $1 == "kernel" { n = $NF; sub(/\(.*/, "", n); gsub(/"/, "", n); p = $(NF - 1);
	gsub(/"/, "", p); print n "|" p }' "$T/k.csv" | sort | uniq -c | awk '{ $1 = $1; print }' >"$T/got"
cat >"$T/want" <<'W'
1 nvtx_bwd|hstep/ncclLost
1 nvtx_lost|hstep/ncclLost
2 nvtx_init|hstep/ncclCommInitRankConfig
2 nvtx_outside|
7 nvtx_bwd|hstep
8 nvtx_allreduce|hstep/ncclAllReduce
8 nvtx_fwd|hstep
8 nvtx_group|hstep
8 nvtx_mm|hstep/aten::mm
W
sort -o "$T/want" "$T/want"
sort -o "$T/got" "$T/got"
echo "kernels by name and range path:"
cat "$T/got"
diff "$T/want" "$T/got" >/dev/null || { bad "range paths differ (want < > got):"; diff "$T/want" "$T/got"; }

"$CHECK" ranges "$T/nvtx.kpt" | sort | uniq -c | awk '{ $1 = $1; print }' >"$T/ranges"
echo "ranges:"
cat "$T/ranges"
grep -qx '8 startend closed NCCL ncclGroup' "$T/ranges" || bad "want 8 closed start/end ranges ncclGroup in NCCL"
grep -qx '8 pushpop closed - hstep' "$T/ranges" || bad "want 8 closed hstep ranges"
grep -qx '2 pushpop closed NCCL ncclCommInitRankConfig' "$T/ranges" ||
	bad "ncclCommInitRankConfig (popped by nvtxRangePopPayload) must be closed twice"
grep -qx '1 pushpop closed NCCL ncclLost' "$T/ranges" || bad "ncclLost must be closed by hstep's pop"
grep -q ' open ' "$T/ranges" && bad "open ranges left"
for kv in collector.nvtx_unmatched_pops=1 collector.nvtx_closed_by_parent=1 collector.nvtx_payload=1; do
	v=$("$CHECK" meta "$T/nvtx.kpt" "${kv%%=*}")
	[ "$v" = "${kv#*=}" ] || bad "meta ${kv%%=*} is '$v', want ${kv#*=}"
done
"$KPTPROF" report "$T/nvtx.kpt" --by range
[ $fail -eq 0 ] && echo "nvtx_test: ok"
exit $fail
