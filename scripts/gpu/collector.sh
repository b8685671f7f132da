#!/usr/bin/env bash
# scripts/gpu/collector.sh - the collector's GPU tests, recordings and
# benchmarks in one go (run by scripts/gpu-check.sh, or alone with BUILD,
# SRC and RES set). Writes under $RES:
#   gpu.txt            GPU, driver, clocks
#   test-app.log, test-torch.log   the GPU tests (also in ctest -L gpu)
#   collector_app.kpt, torch_small.kpt   real recordings (tests/data)
#   launch.txt         (a) per-launch overhead: plain / raw-CUPTI floor /
#                      kptprof record / torch.profiler, interleaved rounds
#   transformer.txt    (b) transformer block fwd+bwd step, plain vs kptprof
#   flood.txt          (c) sustained kernel rate with drop counts
#   summary.txt        medians and differences (what bench/RESULTS.md quotes)
# Knobs: ROUNDS (transformer, default 3), ROUNDS_C (launch rounds of the C
# modes, default 24), ROUNDS_A (how many of them also run torch.profiler,
# default 3: about 20 s each, mostly PyTorch start-up), FLOOD_SECONDS (default 30),
# FLOOD_STREAMS (default "8"), SKIP_BENCH=1,
# SKIP_TESTS=1, SKIP_TF=1, NOSAMPLE=1 (adds kptprof with KPT_SAMPLE_MS=0 to (a)),
# ABLATE=1 (also the raw floor with kptprof's activity kinds, and kptprof
# with KPT_ACTIVITY_KINDS=kernel and with KPT_SAMPLE_MS=0).
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
ROUNDS=${ROUNDS:-3}
ROUNDS_A=${ROUNDS_A:-3}
FLOOD_SECONDS=${FLOOD_SECONDS:-30}
FLOOD_STREAMS=${FLOOD_STREAMS:-8}
mkdir -p "$RES"
cmake --build "$BUILD" -j16 --target kptprof kptinject kpt-collector-app kpt-collector-check \
	kpt-launch-bench kpt-flood kptlaunch >"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
CHECK=$BUILD/tests/kpt-collector-check
B=$BUILD/bench/collector
T=$(mktemp -d /tmp/kpt-coll.XXXXXX)
date -u +%FT%TZ >"$RES/date.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
	--format=csv >"$RES/gpu.txt" 2>&1
"$K" devices >>"$RES/gpu.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' >>"$RES/gpu.txt" 2>&1

echo "== tests"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
KPTPROF=$K APP=$BUILD/tests/kpt-collector-app CHECK=$CHECK LAUNCH=$BUILD/bench/collector/kpt-launch-bench KEEP=$RES \
	timeout 120 bash "$SRC/tests/gpu/collector_test.sh" >"$RES/test-app.log" 2>&1
echo "collector_app rc=$?" | tee -a "$RES/summary.txt"
tail -3 "$RES/test-app.log"
KPTPROF=$K CHECK=$CHECK SCRIPT=$SRC/tests/gpu/torch_workload.py KEEP=$RES \
	timeout 200 bash "$SRC/tests/gpu/collector_torch_test.sh" >"$RES/test-torch.log" 2>&1
echo "collector_torch rc=$?" | tee -a "$RES/summary.txt"
tail -4 "$RES/test-torch.log"
# `kptprof record --suite quick` through the kernels engineer's runner (built
# on its own: a failure there does not stop the collector's work).
if cmake --build "$BUILD" -j16 --target kpt-workloads >"$RES/build-workloads.log" 2>&1; then
	timeout 120 "$K" record -o "$T/quick.kpt" --suite quick --iterations 3 --warmup 1 >"$RES/suite-quick.log" 2>&1
	echo "record --suite quick rc=$?" | tee -a "$RES/summary.txt"
	"$CHECK" stats "$T/quick.kpt" 2>&1 | tee -a "$RES/suite-quick.log" | tee -a "$RES/summary.txt"
	cp "$T/quick.kpt" "$RES/suite_quick.kpt" 2>/dev/null
else
	echo "kpt-workloads did not build (see build-workloads.log)" | tee -a "$RES/summary.txt"
fi
fi
[ "${SKIP_BENCH:-0}" = 1 ] && exit 0

echo "== (a) launch overhead"
# Every process runs in the same CPU set: the cores that share CPU 2's last-
# level cache (threads of CUDA, CUPTI and the collector stay close to the
# launching thread), and the launching thread itself is pinned to the first
# of them. ROUNDS_C rounds interleave plain / raw-CUPTI floor / kptprof (a
# few seconds each); every ROUNDS_C / ROUNDS_A-th round also runs
# torch.profiler (about 20 s of PyTorch start-up each).
ROUNDS_C=${ROUNDS_C:-24}
L3=$(cat /sys/devices/system/cpu/cpu2/cache/index3/shared_cpu_list 2>/dev/null || echo 2-9)
CPUS=$(python3 -c 'import sys
cpus = []
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    cpus += range(int(a), int(b or a) + 1)
cpus = [c for c in cpus if c >= 2][:8] or [2, 3, 4, 5]
print(",".join(map(str, cpus)))' "$L3")
PINCPU=${CPUS%%,*}
PIN="taskset -c $CPUS"
command -v taskset >/dev/null || PIN=""
echo "cpu set $CPUS (L3 of cpu2: $L3), launching thread on $PINCPU" | tee -a "$RES/launch.txt"
lscpu >"$RES/lscpu.txt" 2>&1
every=$(( ROUNDS_A > 0 ? (ROUNDS_C + ROUNDS_A - 1) / ROUNDS_A : 0 ))
for r in $(seq 1 "$ROUNDS_C"); do
	LB="$B/kpt-launch-bench --reps 9 --pin $PINCPU"
	echo "round $r" >>"$RES/launch.txt"
	$PIN $LB >>"$RES/launch.txt" 2>&1
	$PIN $LB --floor >>"$RES/launch.txt" 2>&1
	$PIN "$K" record -o "$T/launch.kpt" -- $LB 2>>"$RES/launch-record.log" \
		| sed 's/mode=plain/mode=kptprof/' >>"$RES/launch.txt"
	if [ "${NOSAMPLE:-0}" = 1 ] || [ "${ABLATE:-0}" = 1 ]; then
		KPT_SAMPLE_MS=0 $PIN "$K" record -o "$T/launch0.kpt" -- $LB \
			2>>"$RES/launch-record.log" | sed 's/mode=plain/mode=kptprof_nosample/' >>"$RES/launch.txt"
	fi
	if [ "${ABLATE:-0}" = 1 ]; then
		# where the cost over the floor comes from: the same activity
		# kinds in the raw floor, and kptprof with the kernel kind only
		$PIN $LB --floor-all >>"$RES/launch.txt" 2>&1
		KPT_ACTIVITY_KINDS=kernel $PIN "$K" record -o "$T/launchk.kpt" -- $LB \
			2>>"$RES/launch-record.log" | sed 's/mode=plain/mode=kptprof_kernel_only/' >>"$RES/launch.txt"
	fi
	if [ "$every" -gt 0 ] && [ $(( (r - 1) % every )) -eq 0 ]; then
		$PIN python3 "$SRC/bench/collector/torch_launch.py" "$B/libkptlaunch.so" --reps 9 --pin "$PINCPU" \
			>>"$RES/launch.txt" 2>>"$RES/launch-torch.log"
	fi
done
"$CHECK" stats "$T/launch.kpt" >>"$RES/launch-record.log" 2>&1
cat "$RES/launch.txt"

echo "== (b) transformer step"
[ "${SKIP_TF:-0}" = 1 ] && ROUNDS=0
TF="python3 $SRC/bench/collector/transformer_step.py"
for r in $(seq 1 "$ROUNDS"); do
	$TF 2>&1 | sed 's/^step/step mode=plain/' >>"$RES/transformer.txt"
	"$K" record -o "$T/tf.kpt" -- $TF 2>>"$RES/transformer-record.log" | sed 's/^step/step mode=kptprof/' \
		>>"$RES/transformer.txt"
done
"$CHECK" stats "$T/tf.kpt" >>"$RES/transformer-record.log" 2>&1
cat "$RES/transformer.txt"

echo "== (c) flood"
for st in $FLOOD_STREAMS; do
	"$B/kpt-flood" --seconds "$FLOOD_SECONDS" --streams "$st" 2>&1 | sed 's/^flood/flood mode=plain/' >>"$RES/flood.txt"
	"$B/kpt-flood" --seconds "$FLOOD_SECONDS" --streams "$st" --floor 2>&1 | sed 's/^flood/flood mode=floor/' \
		>>"$RES/flood.txt"
	/usr/bin/time -v "$K" record -o "$T/flood.kpt" -- "$B/kpt-flood" --seconds "$FLOOD_SECONDS" --streams "$st" \
		2>>"$RES/flood-record.log" | sed 's/^flood/flood mode=kptprof/' >>"$RES/flood.txt"
	"$CHECK" stats "$T/flood.kpt" 2>&1 | sed 's/^/recorded /' >>"$RES/flood.txt"
	ls -l "$T/flood.kpt" >>"$RES/flood.txt" 2>&1
	rm -f "$T/flood.kpt"
done
cat "$RES/flood.txt"
rm -rf "$T"

python3 - "$RES" <<'PY' | tee -a "$RES/summary.txt"
import re, statistics, sys
res = sys.argv[1]
def med(path, key, mode):
    v = []
    for line in open(f"{res}/{path}"):
        if f"mode={mode} " in line:
            m = re.search(key + r"=([0-9.]+)", line)
            if m: v.append(float(m.group(1)))
    return (statistics.median(v), v) if v else (float("nan"), v)
def launch_rounds():
    """mode -> {round: median_us}; rounds are marked by "round N" lines."""
    per, r = {}, 0
    for line in open(f"{res}/launch.txt"):
        if line.startswith("round "):
            r = int(line.split()[1])
            continue
        m = re.search(r"mode=(\S+) .*median_us=([0-9.]+)", line)
        if m:
            per.setdefault(m.group(1), {})[r] = float(m.group(2))
    return per
def boot(d, n=4000):
    import random
    rnd = random.Random(1)
    meds = sorted(statistics.median(rnd.choices(d, k=len(d))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n)]
per = launch_rounds()
out = {}
for mode, rr in per.items():
    v = sorted(rr.values())
    out[mode] = statistics.median(v)
    print(f"(a) launch {mode}: {len(v)} processes, median {out[mode]:.3f} us/launch, "
          f"25th pct {v[len(v) // 4]:.3f}, min {v[0]:.3f}  {[round(x, 3) for x in rr.values()]}")
for a, b in (("kptprof", "floor"), ("kptprof_nosample", "floor"), ("kptprof", "floor_all"),
             ("kptprof_kernel_only", "floor"), ("floor_all", "floor"), ("kptprof_nosample", "kptprof"),
             ("kptprof", "plain"), ("floor", "plain"),
             ("torch_profiler", "plain"), ("torch_profiler", "floor"), ("kptprof", "torch_profiler")):
    if a not in per or b not in per:
        continue
    d = [per[a][r] - per[b][r] for r in per[a] if r in per[b]]
    if d:
        lo, hi = boot(d)
        print(f"(a) paired per round {a} - {b}: n={len(d)} median {statistics.median(d):+.3f} us "
              f"(95% bootstrap {lo:+.3f} .. {hi:+.3f})  {[round(x, 3) for x in d]}")
if "kptprof" in out and "floor" in out and "torch_profiler" in out:
    print(f"(a) kptprof - floor = {out['kptprof'] - out['floor']:+.3f} us/launch (goal <= 0.3); "
          f"kptprof - plain = {out['kptprof'] - out['plain']:+.3f}; torch_profiler - plain = {out['torch_profiler'] - out['plain']:+.3f}")
import os
if not os.path.exists(f"{res}/transformer.txt"):
    open(f"{res}/transformer.txt", "w").close()
p, pv = med("transformer.txt", "median_ms", "plain")
k, kv = med("transformer.txt", "median_ms", "kptprof")
print(f"(b) transformer step: plain {p:.3f} ms {pv}, kptprof {k:.3f} ms {kv}: slowdown {100 * (k / p - 1):+.2f}% (goal <= 5%)")
for line in open(f"{res}/flood.txt"):
    print("(c) " + line.strip())
PY
