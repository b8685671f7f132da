#!/usr/bin/env bash
# pool_call.sh - one machine's share of the cross-machine pool (issue 12):
# what one call of the device tool runs on a freshly started GPU machine.
#
#   bench/analyzer/pool_call.sh            (writes under $OUT)
#
# Records the `default` suite, 10 runs (each a fresh process), unchanged:
# pool.kpt; and 5 runs with two kernels planted slower by real extra work
# (memory.copy.128MiB +5%, memory.triad.f32.64M +2%): plant.kpt. Writes
# machine.txt (GPU name, UUID, driver, boot id, time, clocks at the start).
# The binaries come from BIN (default .pool-bin: kptprof, kpt-workloads and
# libkptinject.so built on the development machine and carried); when they
# do not run here, it builds them into build-gpu/ (sm_90).
# bench/analyzer/pool_eval.sh evaluates the returned files.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$SRC/out}
BIN=${BIN:-$SRC/.pool-bin}
T0=$(date +%s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT"
{
	nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active \
		--format=csv,noheader
	echo "boot_id $(cat /proc/sys/kernel/random/boot_id)"
	echo "host $(hostname)"
	echo "start $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
if ! "$BIN/kptprof" version >/dev/null 2>&1 || ! "$BIN/kpt-workloads" --list >/dev/null 2>&1; then
	echo "carried binaries do not run here: building"
	BIN=$SRC/build-gpu
	{ cmake -S "$SRC" -B "$BIN" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
		cmake --build "$BIN" -j16 --target kptprof kptinject kpt-workloads; } >"$OUT/build.log" 2>&1 ||
		{ tail -30 "$OUT/build.log"; exit 2; }
	BIN=$BIN/cli
fi
echo "binaries ready $(( $(date +%s) - T0 ))s"
K=$BIN/kptprof
KW=$BIN/kpt-workloads
timeout 240 "$K" record --suite default --runs 10 -o "$OUT/pool.kpt" >"$OUT/pool.log" 2>&1
echo "pool rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$OUT/machine.txt"
timeout 150 "$K" record --runs 5 -o "$OUT/plant.kpt" -- "$KW" --suite default \
	--plant memory.copy.128MiB=5 --plant memory.triad.f32.64M=2 >"$OUT/plant.log" 2>&1
echo "plant rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$OUT/machine.txt"
echo "end $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$OUT/machine.txt"
tail -3 "$OUT/pool.log" "$OUT/plant.log"
ls -la "$OUT"
