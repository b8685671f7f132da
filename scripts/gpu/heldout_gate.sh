#!/usr/bin/env bash
# scripts/gpu/heldout_gate.sh - issue 35's goals on the GPU this runs on,
# which must not be among the committed baseline's sessions (a freshly
# started lent machine is not):
#   1. the README main command's gate (`kptprof gate --suite default
#      --runs 5`, sequential resolution as it defaults) against the
#      committed baseline of this GPU model: a cross-machine A/A; the share
#      of keys AMBG, SLOW/FAST (false alarms), the time it took;
#   2. the same suite gated against a baseline of one session recorded on
#      this machine and boot just before (no between-machine part): where
#      AMBG comes from run-to-run noise, so where sequential resolution can
#      settle keys; the share of run-noise AMBG keys settled within its
#      rounds and the time it added (the gate's JSON "resolve" object).
#
# Needs SRC and BUILD (gpu-check.sh sets them; BUILD/cli/kptprof and the
# runner built) and RES (default: a new temporary folder). Writes under
# RES: aa-cross.{json,txt}, aa-self.{json,txt}, rec.kpt (the cross gate's
# recording: a session of a host the baseline lacks), self-base.kpt, and
# heldout-gate-summary.md (also printed).
set -u -o pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build-gpu}
RES=${RES:-$(mktemp -d /tmp/kpt-heldout.XXXXXX)}
K=$BUILD/cli/kptprof
mkdir -p "$RES"
[ -x "$K" ] || { echo "heldout_gate: '$K' not built"; exit 2; }
cd "$SRC" || exit 2
nvidia-smi --query-gpu=uuid,name,driver_version,clocks.sm,power.limit --format=csv >"$RES/gpu.txt" 2>&1
cat /proc/sys/kernel/random/boot_id >>"$RES/gpu.txt"

t0=$(date +%s)
timeout 300 "$K" gate --suite default --runs 5 -o "$RES/rec.kpt" --json "$RES/aa-cross.json" >"$RES/aa-cross.txt" 2>&1
echo "cross rc=$? $(( $(date +%s) - t0 ))s" >>"$RES/steps.txt"

t0=$(date +%s)
timeout 200 "$K" record --suite default --runs 5 -o "$RES/self-base.kpt" >"$RES/self-record.txt" 2>&1 &&
	"$K" baseline update "$RES/self-base.kpt" --suite default --baselines "$RES/self" >>"$RES/self-record.txt" 2>&1
echo "self baseline rc=$? $(( $(date +%s) - t0 ))s" >>"$RES/steps.txt"
t0=$(date +%s)
timeout 300 "$K" gate --suite default --runs 5 --baselines "$RES/self" --json "$RES/aa-self.json" \
	>"$RES/aa-self.txt" 2>&1
echo "self rc=$? $(( $(date +%s) - t0 ))s" >>"$RES/steps.txt"

python3 - "$RES" >"$RES/heldout-gate-summary.md" <<'PY'
import json, os, sys
res = sys.argv[1]
print("| gate | exit | keys | SLOW | FAST | AMBG | AMBG machine-limited | resolve |")
print("| --- | --: | --: | --: | --: | --: | --: | --- |")
for name in ("aa-cross", "aa-self"):
    p = os.path.join(res, name + ".json")
    try:
        j = json.load(open(p))
    except (OSError, ValueError) as e:
        print("| %s | - | - | - | - | - | - | no report (%s) |" % (name, e.__class__.__name__))
        continue
    c = j.get("counts", {})
    keys = j.get("keys", [])
    ml = sum(1 for r in keys if r.get("verdict") == "AMBG" and r.get("machine_limited"))
    rs = j.get("resolve")
    print("| %s | %s | %d | %s | %s | %s | %d | %s |" % (name, j.get("result", "?"), len(keys), c.get("SLOW"),
          c.get("FAST"), c.get("AMBG"), ml, json.dumps(rs) if rs is not None else "-"))
PY
cat "$RES/steps.txt" "$RES/heldout-gate-summary.md"
