#!/usr/bin/env bash
# scripts/gpu/windows_detach_torch.sh - a `--steps A-B` window on a PyTorch
# training loop that goes on long after it (bench/collector/overhead_step.py,
# the launch-bound step, STEPS steps): plain, the window with the collector's
# detach after it (the default) and without (KPT_DETACH=0), PAIRS rounds in
# a rotated order, each process pinned to CORES. Checks every recording:
# exit 0, the window's kernels only (2 steps' worth), collector.detached as
# the mode says. Writes RES/detach_torch.tsv (round mode median_ms mean_ms
# kernels detached) and prints the per-round log ratios against plain
# (mean, min, max). Needs SRC, BUILD, RES. Knobs: PAIRS (5), STEPS (1500),
# CORES (2-9).
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
PAIRS=${PAIRS:-5}
STEPS=${STEPS:-1500}
CORES=${CORES:-2-9}
K=$BUILD/cli/kptprof
CHECK=$BUILD/tests/kpt-collector-check
S=$SRC/bench/collector/overhead_step.py
T=$(mktemp -d /tmp/kpt-wdt.XXXXXX)
trap 'rm -rf "$T"' EXIT
export KPTPROF_NO_CALIBRATE=1
echo "round mode median_ms mean_ms kernels detached" >"$RES/detach_torch.tsv"
rc=0
modes=(plain detach nodetach)
for ((r = 0; r < PAIRS; r++)); do
	for ((i = 0; i < 3; i++)); do
		m=${modes[$(((i + r) % 3))]} env=() rec=()
		case $m in
		detach) rec=("$K" record --capture-range nvtx:step --steps 100-101 -o "$T/$m.kpt" --) ;;
		nodetach) env=(KPT_DETACH=0); rec=("$K" record --capture-range nvtx:step --steps 100-101 -o "$T/$m.kpt" --) ;;
		esac
		rm -f "$T/$m.kpt"
		out=$(env "${env[@]}" taskset -c "$CORES" "${rec[@]}" python3 "$S" --steps "$STEPS" --gpu-steps 0 2>"$T/err") ||
			{ echo "FAIL: $m round $r"; tail -5 "$T/err"; rc=1; continue; }
		line=$(echo "$out" | grep '^result workload=launch')
		med=$(echo "$line" | sed 's/.*median_ms=\([0-9.]*\).*/\1/')
		mean=$(echo "$line" | sed 's/.*mean_ms=\([0-9.]*\).*/\1/')
		kern=- det=-
		if [ "$m" != plain ]; then
			kern=$("$K" report "$T/$m.kpt" --format json | python3 -c 'import json,sys; print(sum(k["instances"] for k in json.load(sys.stdin)["kernels"]))')
			det=$("$CHECK" meta "$T/$m.kpt" collector.detached)
			[ "$m" = detach ] && [ "$det" != 1 ] && { echo "FAIL: detach round $r: not detached"; rc=1; }
			[ "$m" = nodetach ] && [ -n "$det" ] && { echo "FAIL: nodetach round $r: detached"; rc=1; }
		fi
		echo "$r $m $med $mean $kern ${det:--}" >>"$RES/detach_torch.tsv"
	done
done
cat "$RES/detach_torch.tsv"
python3 - "$RES/detach_torch.tsv" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("round")]
by = {}
for r, m, med, mean, *_ in rows:
    by.setdefault(int(r), {})[m] = float(mean)
for m in ("detach", "nodetach"):
    d = [100 * (math.exp(math.log(v[m] / v["plain"])) - 1) for v in by.values() if m in v and "plain" in v]
    if d:
        print(f"{m}: mean step vs plain over {len(d)} rounds: {sum(d) / len(d):+.2f}% (min {min(d):+.2f}, max {max(d):+.2f})")
PY
exit $rc
