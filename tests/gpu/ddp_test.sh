#!/usr/bin/env bash
# ddp_test.sh - `kptprof record -- python3 -m torch.distributed.run
# --nproc-per-node 2 ddp_step.py` on two GPUs (NCCL all-reduce): one
# recording with both ranks' processes, each on its own GPU, NCCL kernels on
# both, and `report --by rank` showing rank 0 and rank 1 with their NCCL
# time. Env: KPTPROF, SCRIPT. Exit 77 with fewer than 2 GPUs or no PyTorch.
set -u
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$n" -ge 2 ] || { echo "fewer than 2 GPUs ($n): skipped"; exit 77; }
python3 -c 'import torch, torch.distributed as d; assert torch.cuda.device_count() >= 2 and d.is_nccl_available()' 2>/dev/null ||
	{ echo "no PyTorch with NCCL and 2 GPUs: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$KPTPROF" record -o "$tmp/ddp.kpt" -- python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
	"$SCRIPT" --steps 10 --warmup 2 >"$tmp/log" 2>&1 || { tail -30 "$tmp/log"; fail "kptprof record of torchrun"; }
grep -q "ddp_step median_ms" "$tmp/log" || fail "the script did not finish: $(tail -5 "$tmp/log")"
"$KPTPROF" report "$tmp/ddp.kpt" --by rank --format json >"$tmp/r.json" || fail "report --by rank"
python3 - "$tmp/r.json" <<'PY' || fail "ranks in the recording"
import json, sys
d = json.load(open(sys.argv[1]))
ranks = {k["rank"]: k for k in d["ranks"]}
assert "rank 0 GPU 0" in ranks and "rank 1 GPU 1" in ranks, list(ranks)
for k in ranks.values():
    assert k["comm_kernels"] > 0 and k["comm_ns"] > 0, k
    assert k["instances"] > k["comm_kernels"], k
print("ok:", {r: (k["instances"], k["comm_kernels"]) for r, k in ranks.items()})
PY
[ -n "${KEEP:-}" ] && cp "$tmp/ddp.kpt" "$KEEP/ddp_2gpu.kpt"
exit 0
