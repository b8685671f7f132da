#!/usr/bin/env bash
# scripts/gpu/sampling.sh - sparse sampling and on-demand capture on GPUs
# (issue 37): CUPTI attached only around each captured step, detached
# between; `kptprof trigger` against every rank of a running job.
#   1. soak: `record --capture-range nvtx:step --sample-every SOAK_EVERY`
#      over bench/collector/sampled_steps.py for SOAK_S seconds, on 2 ranks
#      (torchrun, NCCL) when there are 2 GPUs, else 1: hundreds of
#      attach/detach cycles per rank. Checks: exit 0, per rank as many
#      windows as attaches, none missed, and every window holds the same
#      kernels (kernels in "step" ranges / windows = the kernels of one
#      step of a whole-run recording of the same program).
#   2. on demand: `record --on-demand` over the same job for ONDEMAND_S
#      seconds; TRIGGERS times `kptprof trigger PID --steps 1`, each waiting
#      for the acknowledgements of every rank: the delay from the request to
#      the opening of the capture per rank (ondemand.tsv), and afterwards
#      the recording's windows per rank (= triggers) and kernels per window.
# Writes under $RES: soak/, ondemand/ (recordings, logs), summary.txt (the
# checks, one line each: PASS or FAIL), ondemand.tsv (trigger rank delay_ms).
# Needs SRC, BUILD, RES. Knobs: SOAK_S (40), SOAK_EVERY (0.05), ONDEMAND_S
# (90), TRIGGERS (200). Exit 1 when a check failed, 77 without a GPU or
# PyTorch.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
SOAK_S=${SOAK_S:-40}
SOAK_EVERY=${SOAK_EVERY:-0.05}
ONDEMAND_S=${ONDEMAND_S:-90}
TRIGGERS=${TRIGGERS:-200}
nvidia-smi -L >/dev/null 2>&1 || { echo "sampling: no GPU: skipped"; exit 77; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "sampling: no PyTorch with CUDA: skipped"; exit 77; }
cmake --build "$BUILD" -j16 --target kptprof kptinject >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
S=$SRC/bench/collector/sampled_steps.py
export KPTPROF_NO_CALIBRATE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
ranks=1
[ "$ngpu" -ge 2 ] && python3 -c 'import torch.distributed as d; assert d.is_nccl_available()' 2>/dev/null && ranks=2
job() { # the job, on $ranks ranks
	if [ "$ranks" -gt 1 ]; then
		python3 -m torch.distributed.run --standalone --nproc-per-node "$ranks" "$S" "$@"
	else
		python3 "$S" "$@"
	fi
}
fails=0
check() { # name, condition result (0 pass), detail
	if [ "$2" = 0 ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; fails=$((fails + 1)); fi | tee -a "$RES/summary.txt"
}
# kernels inside "step" ranges per process of a recording, and the windows'
# count: "rank kernels_in_steps steps_with_kernels"
steps_kernels() {
	"$K" export "$1" --format csv -o "$1.csv" >/dev/null 2>&1 || return 1
	python3 - "$1.csv" <<'EOF'
import csv, sys, collections
k = collections.Counter()
for row in csv.DictReader(open(sys.argv[1])):
    if row.get("kind", "kernel") != "kernel":
        continue
    path = row.get("range", "") or row.get("range_path", "")
    if path.split("/")[-1:] == ["step"] or "/step/" in f"/{path}/":
        k[row.get("process", "0")] += 1
for p, n in sorted(k.items()):
    print(p, n)
EOF
}
mkdir -p "$RES/soak" "$RES/ondemand"
: >"$RES/summary.txt"
echo "ranks $ranks gpus $ngpu" | tee -a "$RES/summary.txt"

# 0. what one step launches: a short whole-run recording
"$K" record -o "$RES/soak/whole.kpt" -- bash -c "$(declare -f job); S=$S ranks=$ranks; job --seconds 3" \
	>"$RES/soak/whole.out" 2>"$RES/soak/whole.err"
check whole-run $? "$(grep -h sampled_steps "$RES/soak/whole.out" | tr '\n' ' ')"
steps_kernels "$RES/soak/whole.kpt" >"$RES/soak/whole.kernels"
wsteps=$(awk '/sampled_steps rank 0/ {print $5}' "$RES/soak/whole.out")
wk=$(awk 'NR==1 {print $2}' "$RES/soak/whole.kernels")
echo "whole run: rank 0 steps $wsteps kernels in steps $wk" | tee -a "$RES/summary.txt"

# 1. soak
t0=$(date +%s)
"$K" record -o "$RES/soak/sampled.kpt" --capture-range nvtx:step --sample-every "$SOAK_EVERY" -- \
	bash -c "$(declare -f job); S=$S ranks=$ranks; job --seconds $SOAK_S" >"$RES/soak/sampled.out" 2>"$RES/soak/sampled.err"
rc=$?
check soak-exit $rc "exit $rc after $(( $(date +%s) - t0 )) s; $(grep -h sampled_steps "$RES/soak/sampled.out" | tr '\n' ' ')"
"$K" report "$RES/soak/sampled.kpt" --top 0 --format json >"$RES/soak/sampled.json" 2>"$RES/soak/report.err"
python3 - "$RES/soak/sampled.json" <<'EOF' | tee -a "$RES/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
m = d.get("meta", {})
for k in sorted(m):
    if k.startswith("collector.") and any(w in k for w in ("sample", "attach", "detach", "missed", "windows", "untraced", "lost", "dropped")) and k != "collector.sample_windows":
        print("soak meta", k, m[k])
EOF
steps_kernels "$RES/soak/sampled.kpt" >"$RES/soak/sampled.kernels"
echo "soak kernels in steps per process: $(tr '\n' ' ' <"$RES/soak/sampled.kernels")" | tee -a "$RES/summary.txt"

# 2. on demand
pidf=$RES/ondemand/pid
rm -f "$pidf"
"$K" record -o "$RES/ondemand/od.kpt" --capture-range nvtx:step --on-demand -- \
	bash -c "$(declare -f job); S=$S ranks=$ranks; job --seconds $ONDEMAND_S --pidfile $pidf" \
	>"$RES/ondemand/od.out" 2>"$RES/ondemand/od.err" &
rec=$!
for _ in $(seq 120); do [ -s "$pidf" ] && break; sleep 0.5; done
echo "trigger rank delay_ms" >"$RES/ondemand.tsv"
ok=0 bad=0
for i in $(seq "$TRIGGERS"); do
	kill -0 $rec 2>/dev/null || break
	out=$("$K" trigger "$rec" --steps 1 --wait 3 2>&1)
	n=$(grep -c 'step' <<<"$out")
	if [ "$n" -ge "$ranks" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "trigger $i: $out" >>"$RES/ondemand/trigger-fail.txt"; fi
	grep -oE 'pid [0-9]+.*' <<<"$out" | sed "s/^/$i /" >>"$RES/ondemand/acks.txt"
done
wait $rec
rc=$?
check ondemand-exit $rc "exit $rc; triggers acknowledged by all $ranks ranks: $ok, not: $bad"
check ondemand-acks $((bad > 0)) "$ok of $((ok + bad)) triggers acknowledged"
"$K" report "$RES/ondemand/od.kpt" --top 0 --format json >"$RES/ondemand/od.json" 2>/dev/null
python3 - "$RES/ondemand/od.json" <<'EOF' | tee -a "$RES/summary.txt"
import json, sys
d = json.load(open(sys.argv[1]))
m = d.get("meta", {})
for k in sorted(m):
    if k.startswith("collector.") and any(w in k for w in ("sample", "attach", "detach", "missed", "requests", "untraced")) and k != "collector.sample_windows":
        print("ondemand meta", k, m[k])
EOF
steps_kernels "$RES/ondemand/od.kpt" >"$RES/ondemand/od.kernels"
echo "on-demand kernels in steps per process: $(tr '\n' ' ' <"$RES/ondemand/od.kernels")" | tee -a "$RES/summary.txt"
cp "$RES/ondemand/acks.txt" "$RES/ondemand.tsv" 2>/dev/null
echo "failed checks: $fails" | tee -a "$RES/summary.txt"
[ $fails = 0 ]
