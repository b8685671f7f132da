#!/usr/bin/env bash
# ab_call.sh - one freshly started machine's share of the same-machine A/B
# evidence (issue 12): what one call of the device tool runs.
#
#   bench/analyzer/ab_call.sh            (writes under $OUT)
#
# kptprof ab, 10 pairs, of the `default` suite against itself (A/A: the
# verdict is a live false-alarm check) into $OUT/aa/{a,b}.kpt, and 10 pairs
# against the suite with memory.copy.128MiB and memory.triad.f32.64M planted
# 2% slower (real extra work) into $OUT/plant/{a,b}.kpt. The A/A recordings
# are also held-out candidates for the cross-machine gate (10 runs each).
# Binaries: BIN (default .pool-bin, carried), else built into build-gpu/.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$SRC/out}
BIN=${BIN:-$SRC/.pool-bin}
T0=$(date +%s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT/aa" "$OUT/plant"
{
	nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active \
		--format=csv,noheader
	echo "boot_id $(cat /proc/sys/kernel/random/boot_id)"
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
K=$BIN/kptprof
KW=$BIN/kpt-workloads
timeout 200 "$K" ab --runs 10 -o "$OUT/aa" -- "$KW" --suite default ::: "$KW" --suite default \
	>"$OUT/aa/verdict.txt" 2>>"$OUT/machine.txt"
echo "ab A/A exit $? $(( $(date +%s) - T0 ))s: $(tail -n 1 "$OUT/aa/verdict.txt")" | tee -a "$OUT/machine.txt"
timeout 200 "$K" ab --runs 10 -o "$OUT/plant" -- "$KW" --suite default ::: "$KW" --suite default \
	--plant memory.copy.128MiB=2 --plant memory.triad.f32.64M=2 >"$OUT/plant/verdict.txt" 2>>"$OUT/machine.txt"
echo "ab plant exit $? $(( $(date +%s) - T0 ))s: $(tail -n 1 "$OUT/plant/verdict.txt")" | tee -a "$OUT/machine.txt"
grep -E 'SLOW|FAST' "$OUT/plant/verdict.txt" | head -5
rm -f "$OUT/aa/ab.log" "$OUT/plant/ab.log"
