#!/usr/bin/env bash
# scripts/gpu/calib_host.sh - one freshly started host's share of issue
# 35's cross-machine data (a gpu-check.sh part; run it on as many fresh
# hosts as can be had, one call each):
#   1. the README main command's gate (`kptprof gate --suite default --runs
#      5`) against the committed baseline: a cross-machine A/A on a host the
#      baseline never saw; its recording (rec.kpt) is a session with the
#      in-process calibration probes (meta calibration.*), for a baseline
#      recorded again and for leave-one-host-out evaluation;
#   2. two programs not written for the rule, recorded as their users would:
#      examples/cuda-project (`record --project`, its stencil and tiled
#      SGEMM kernels, steps 10-49 of 60) and a PyTorch transformer block
#      fwd+bwd+AdamW (bench/collector/transformer_step.py, `record --runs 5
#      -- python3 ...`, every kernel);
#   3. `kpt-workloads --calibrate --settle-us 3000` three times in processes
#      of their own, beside the in-process probes (how much a separate
#      process moves them).
# Writes under RES: gpu.txt (uuid, clocks, power limit, boot id), gate.txt,
# gate.json, rec.kpt, project.kpt, torch.kpt, calib-separate.txt,
# probes.txt (each recording's calibration meta), steps.txt (times).
# Knobs: TORCH_RUNS (5), TORCH_STEPS (20) for the PyTorch program.
# Needs SRC and BUILD (gpu-check.sh sets them) and RES.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
K=$BUILD/cli/kptprof
W=$BUILD/cli/kpt-workloads
[ -x "$K" ] && [ -x "$W" ] || { echo "calib_host: '$K' or '$W' not built"; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "calib_host: no GPU: skipped"; exit 77; }
nvidia-smi --query-gpu=uuid,name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
	--format=csv >"$RES/gpu.txt" 2>&1
cat /proc/sys/kernel/random/boot_id >>"$RES/gpu.txt"
step() { # name seconds command...: runs it under timeout, logs its time
	local name=$1 lim=$2 t0=$SECONDS rc
	shift 2
	timeout "$lim" "$@"
	rc=$?
	echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$RES/steps.txt"
	return $rc
}
probes() { # recording: its calibration meta, one line
	"$K" report "$1" --top 0 --format json 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin).get("meta", {})
print(" ".join(f"{k[12:]}={v}" for k, v in sorted(m.items()) if k.startswith("calibration.")) or "none")'
}

# 1. the README main command's gate
cd "$SRC" || exit 2
step gate 240 "$K" gate --suite default --runs 5 -o "$RES/rec.kpt" --json "$RES/gate.json" >"$RES/gate.txt" 2>&1
echo "rec.kpt $(probes "$RES/rec.kpt")" | tee -a "$RES/probes.txt"
tail -3 "$RES/gate.txt"

# 2. programs not written for the rule
P=$(mktemp -d /tmp/kpt-calib-proj.XXXXXX)
cp -r "$SRC/examples/cuda-project/." "$P/"
(cd "$P" && step project-build 120 sh build.sh >"$RES/project-build.log" 2>&1 &&
	step project 180 "$K" record --project kptprof.json -o "$RES/project.kpt" >"$RES/project.txt" 2>&1)
echo "project.kpt $(probes "$RES/project.kpt")" | tee -a "$RES/probes.txt"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	step torch 200 "$K" record --runs "${TORCH_RUNS:-5}" -o "$RES/torch.kpt" -- \
		python3 "$SRC/bench/collector/transformer_step.py" --steps "${TORCH_STEPS:-20}" --warmup 4 >"$RES/torch.txt" 2>&1
	echo "torch.kpt $(probes "$RES/torch.kpt")" | tee -a "$RES/probes.txt"
fi

# 3. the probes in processes of their own
for i in 1 2 3; do
	step "calibrate-$i" 60 "$W" --calibrate --settle-us 3000 >>"$RES/calib-separate.txt" 2>&1
done
cat "$RES/calib-separate.txt"
rm -rf "$P"
exit 0
