#!/usr/bin/env bash
# nvtx_nccl_test.sh - `kptprof record -- torchrun --nproc-per-node 2` of a
# real NCCL job (nvtx_nccl_steps.py, one GPU per rank): in every one of the
# steps the user's range reads "hstep" and NCCL's kernels sit under it
# ("hstep/nccl..."), never "hstep/hstep" (issue 22: the path went stale
# after NCCL's communicator range, popped through nvtxRangePopPayload).
# Env: KPTPROF, SCRIPT, CHECK. Exit 77 with fewer than 2 GPUs, or no
# PyTorch with NCCL (NCCL needs a GPU per rank).
set -u
. "$(dirname "$0")/need_two_gpus.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/kptnccl.XXXXXX")
trap 'rm -rf "$T"' EXIT
STEPS=10
KPTPROF_NO_CALIBRATE=1 "$KPTPROF" record -o "$T/nccl.kpt" -- python3 -m torch.distributed.run --standalone \
	--nproc-per-node 2 "$SCRIPT" $STEPS >"$T/log" 2>&1 || { tail -40 "$T/log"; echo "FAIL: record"; exit 1; }
[ "$(grep -c "steps $STEPS done" "$T/log")" = 2 ] || { tail -20 "$T/log"; echo "FAIL: the ranks did not finish"; exit 1; }
"$KPTPROF" export "$T/nccl.kpt" --format csv -o "$T/k.csv" || { echo "FAIL: export"; exit 1; }
echo "meta collector.nvtx_payload: '$("$CHECK" meta "$T/nccl.kpt" collector.nvtx_payload)'," \
	"closed_by_parent: '$("$CHECK" meta "$T/nccl.kpt" collector.nvtx_closed_by_parent)'," \
	"unmatched_pops: '$("$CHECK" meta "$T/nccl.kpt" collector.nvtx_unmatched_pops)'"
"$KPTPROF" report "$T/nccl.kpt" --by range
python3 - "$T/k.csv" "$STEPS" <<'PY'
import collections, csv, sys
steps = int(sys.argv[2])
paths = collections.Counter()
nccl_paths = collections.Counter()
bad = []
for row in csv.DictReader(open(sys.argv[1])):
    if row["kind"] != "kernel":
        continue
    name, path = row["name"], row["range"]
    parts = path.split("/") if path else []
    is_nccl = name.startswith("nccl")
    (nccl_paths if is_nccl else paths)[path] += 1
    if parts.count("hstep") > 1:
        bad.append(("hstep twice", name, path))
    elif is_nccl and not (len(parts) >= 2 and parts[0] == "hstep" and parts[1].startswith("nccl")):
        bad.append(("NCCL kernel outside hstep/nccl*", name, path))
    elif not is_nccl and path not in ("", "hstep") and not path.startswith("hstep/ncclCommInit"):
        bad.append(("kernel under an unexpected path", name, path))
print("non-NCCL kernels by path:", dict(paths))
print("NCCL kernels by path:", dict(nccl_paths))
for b in bad[:20]:
    print("FAIL:", *b)
want_h, want_n = 2 * steps * 3, 2 * steps * 4
if paths["hstep"] != want_h:
    print("FAIL: %d kernels under 'hstep', want %d (3 a step, 2 ranks)" % (paths["hstep"], want_h))
    bad.append(1)
if sum(nccl_paths.values()) != want_n:
    print("FAIL: %d NCCL kernels, want %d (4 a step, 2 ranks)" % (sum(nccl_paths.values()), want_n))
    bad.append(1)
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc -eq 0 ] && echo "nvtx_nccl_test: ok"
exit $rc
