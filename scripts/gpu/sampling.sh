#!/usr/bin/env bash
# scripts/gpu/sampling.sh - sparse sampling and on-demand capture on GPUs
# (issue 37): CUPTI attached only around each captured step, detached
# between; `kptprof trigger` against every rank of a running job.
# The job: bench/collector/sampled_steps.py (NVTX "step" ranges, the same
# kernels each step) on 2 ranks: torchrun with NCCL on 2 GPUs, else both
# ranks share the one GPU through gloo (RANKS=1: one rank).
#   0. a whole-run recording of the job (3 s): the kernels of one step;
#   1. soak: `record --capture-range nvtx:step --sample-every SOAK_EVERY`
#      for SOAK_S seconds: hundreds of captures, each with its attach and
#      detach cycle per rank (at 0.05 s the captures come faster than the
#      detach's 50 ms grace and CUPTI stays attached: 2 x H200, session 15).
#      Checks: exit 0; every captured step holds the whole run's kernels
#      (bench/collector/window_kernels.py: none lost at a detach); the
#      collector's meta (attaches, detaches, windows missed);
#   2. on demand: `record --on-demand` for ONDEMAND_S seconds while
#      `kptprof trigger PID --steps 1` runs TRIGGERS times, each waiting
#      for the answers of every rank. Checks: exit 0; every trigger
#      answered by every rank; the delay from the request to the capture's
#      opening per rank (ondemand.tsv: trigger pid delay_ms; its median and
#      maximum in summary.txt); every captured step whole.
# Writes under $RES: summary.txt (PASS/FAIL lines and numbers), soak/,
# ondemand/ (recordings, logs, csv), ondemand.tsv. Needs SRC, BUILD, RES.
# Knobs: SOAK_S (40), SOAK_EVERY (0.25), ONDEMAND_S (100; 200 triggers
# took about 90 s on 2 H200s), TRIGGERS (200).
# Exit 1 when a check failed, 77 without a GPU or PyTorch.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
SOAK_S=${SOAK_S:-40}
SOAK_EVERY=${SOAK_EVERY:-0.25}
ONDEMAND_S=${ONDEMAND_S:-100}
TRIGGERS=${TRIGGERS:-200}
nvidia-smi -L >/dev/null 2>&1 || { echo "sampling: no GPU: skipped"; exit 77; }
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null || { echo "sampling: no PyTorch with CUDA: skipped"; exit 77; }
cmake --build "$BUILD" -j16 --target kptprof kptinject >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
S=$SRC/bench/collector/sampled_steps.py
WK=$SRC/bench/collector/window_kernels.py
export KPTPROF_NO_CALIBRATE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
ranks=1
[ "$ngpu" -ge 2 ] && python3 -c 'import torch.distributed as d; assert d.is_nccl_available()' 2>/dev/null && ranks=2
# one GPU: 2 ranks share it through gloo (the trigger still has to reach
# two traced processes); RANKS=1 keeps one
if [ "$ranks" = 1 ] && [ "${RANKS:-2}" = 2 ]; then
	ranks=2
	export KPT_DIST_BACKEND=gloo
fi
job=(python3 "$S")
[ "$ranks" -gt 1 ] && job=(python3 -m torch.distributed.run --standalone --nproc-per-node "$ranks" "$S")
fails=0
check() { # name status detail
	local v=PASS
	[ "$2" = 0 ] || { v=FAIL; fails=$((fails + 1)); }
	echo "$v $1: $3" | tee -a "$RES/summary.txt"
}
meta() { # recording: the collector's sampling meta, one line
	"$K" report "$1" --top 0 --format json 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin).get("meta", {})
keys = ("windows", "samples", "attaches", "attach_us", "detaches", "detach_us", "windows_missed",
        "requests", "ranges_untraced_dropped", "detach_failed", "attach_failed")
print(" ".join("%s=%s" % (k, m.get("collector." + k, "-")) for k in keys))'
}
mkdir -p "$RES/soak" "$RES/ondemand"
: >"$RES/summary.txt"
echo "ranks $ranks gpus $ngpu $(date -u +%FT%TZ)" | tee -a "$RES/summary.txt"

# 0. the whole run
timeout 120 "$K" record -o "$RES/soak/whole.kpt" -- "${job[@]}" --seconds 3 >"$RES/soak/whole.out" 2>"$RES/soak/whole.err"
check whole-run $? "$(grep -h '^sampled_steps' "$RES/soak/whole.out" | tr '\n' ' ')"
"$K" export "$RES/soak/whole.kpt" --format csv -o "$RES/soak/whole.csv" >/dev/null 2>&1

# 1. soak
t0=$(date +%s)
timeout $((SOAK_S + 90)) "$K" record -o "$RES/soak/sampled.kpt" --capture-range nvtx:step --sample-every "$SOAK_EVERY" -- \
	"${job[@]}" --seconds "$SOAK_S" >"$RES/soak/sampled.out" 2>"$RES/soak/sampled.err"
rc=$?
check soak-exit $rc "exit $rc after $(($(date +%s) - t0)) s; $(grep -h '^sampled_steps' "$RES/soak/sampled.out" | tr '\n' ' ')"
echo "soak meta: $(meta "$RES/soak/sampled.kpt")" | tee -a "$RES/summary.txt"
"$K" report "$RES/soak/sampled.kpt" --top 5 >"$RES/soak/report.txt" 2>&1
"$K" export "$RES/soak/sampled.kpt" --format csv -o "$RES/soak/sampled.csv" >/dev/null 2>&1
python3 "$WK" "$RES/soak/sampled.csv" "$RES/soak/whole.csv" >"$RES/soak/kernels.txt" 2>&1
check soak-kernels $? "$(tail -1 "$RES/soak/kernels.txt")"

# 2. on demand
timeout $((ONDEMAND_S + 90)) "$K" record -o "$RES/ondemand/od.kpt" --capture-range nvtx:step --on-demand -- \
	"${job[@]}" --seconds "$ONDEMAND_S" --pidfile "$RES/ondemand/pid" >"$RES/ondemand/od.out" 2>"$RES/ondemand/od.err" &
rec=$!
for _ in $(seq 240); do [ -s "$RES/ondemand/pid" ] && break; sleep 0.25; done
echo "trigger pid delay_ms" >"$RES/ondemand.tsv"
ok=0 bad=0 i=0
t0=$(date +%s)
while [ $i -lt "$TRIGGERS" ] && kill -0 $rec 2>/dev/null; do
	i=$((i + 1))
	out=$("$K" trigger --steps 1 --wait 3 2>&1) # the only recording on demand (rec is timeout's pid)
	n=$(grep -c '^pid ' <<<"$out")
	if [ "$n" -ge "$ranks" ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "trigger $i: $out" >>"$RES/ondemand/trigger-fail.txt"; fi
	echo "$out" >>"$RES/ondemand/triggers.txt"
	# "pid 123: capture from step 45, 38 ms after the request" (cli/cmd_trigger.c)
	sed -n "s/^pid \([0-9]*\): capture from step [0-9]*, \([0-9.]*\) ms after the request.*/$i \1 \2/p" \
		<<<"$out" >>"$RES/ondemand.tsv"
done
tt=$(($(date +%s) - t0))
wait $rec
rc=$?
check ondemand-exit $rc "exit $rc; $i triggers in $tt s"
check ondemand-answers $((bad > 0 || i < TRIGGERS)) "$ok of $i triggers answered by all $ranks ranks"
awk 'NR > 1 { print $3 }' "$RES/ondemand.tsv" | sort -n | awk '{ v[NR] = $1 } END {
	if (NR) printf "on-demand delay request -> capture opened: %d answers, median %.1f ms, 90th %.1f ms, max %.1f ms\n",
		NR, v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)], v[NR] }' | tee -a "$RES/summary.txt"
maxd=$(awk 'NR > 1 && $3 > m { m = $3 } END { print m + 0 }' "$RES/ondemand.tsv")
nd=$(($(wc -l <"$RES/ondemand.tsv") - 1))
# every answer's delay read (an unread answer would leave the maximum blind)
check ondemand-delay "$(awk -v m="$maxd" -v n="$nd" -v want=$((ok * ranks)) 'BEGIN { print (m < 1000 && n >= want) ? 0 : 1 }')" \
	"max delay $maxd ms over $nd answers of $((ok * ranks)) (goal < 1000 ms)"
echo "on-demand meta: $(meta "$RES/ondemand/od.kpt")" | tee -a "$RES/summary.txt"
"$K" export "$RES/ondemand/od.kpt" --format csv -o "$RES/ondemand/od.csv" >/dev/null 2>&1
python3 "$WK" "$RES/ondemand/od.csv" "$RES/soak/whole.csv" >"$RES/ondemand/kernels.txt" 2>&1
check ondemand-kernels $? "$(tail -1 "$RES/ondemand/kernels.txt")"
echo "failed checks: $fails" | tee -a "$RES/summary.txt"
[ $fails = 0 ]
