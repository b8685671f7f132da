#!/usr/bin/env bash
# gpu-check.sh - everything kptprof checks on a GPU machine, in one call.
#
#   scripts/gpu-check.sh [PART...]      (default: every scripts/gpu/*.sh)
#
# Builds for sm_90 into build-gpu/, runs `ctest -L gpu`, then each part
# scripts/gpu/<part>.sh (benchmarks, recordings). Each part gets BUILD (the
# build folder), SRC (the repository) and RES (its own results folder) in
# its environment and writes logs and files under RES. At the end everything
# is packed into $OUT/gpu-results.tar.gz (the device tool returns at most 8
# files) and a short table of what passed is printed last.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$SRC/out}
BUILD=${BUILD:-$SRC/build-gpu}
RESROOT=$(mktemp -d /tmp/kpt-gpu.XXXXXX)
export SRC BUILD
mkdir -p "$OUT"
summary=()

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
	| tee "$RESROOT/gpu.txt"
{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
	&& cmake --build "$BUILD" -j16; } >"$RESROOT/build.log" 2>&1
rc=$?
summary+=("build rc=$rc")
if [ $rc -ne 0 ]; then
	tail -40 "$RESROOT/build.log"
else
	(cd "$BUILD" && ctest -L gpu --output-on-failure --timeout 300) >"$RESROOT/ctest-gpu.log" 2>&1
	summary+=("ctest -L gpu rc=$? ($(grep -E 'tests passed|tests failed' "$RESROOT/ctest-gpu.log" | tail -1))")
	parts=("$@")
	if [ ${#parts[@]} -eq 0 ]; then
		for f in "$SRC"/scripts/gpu/*.sh; do
			[ -e "$f" ] && parts+=("$(basename "$f" .sh)")
		done
	fi
	for p in "${parts[@]}"; do
		export RES="$RESROOT/$p"
		mkdir -p "$RES"
		start=$(date +%s)
		bash "$SRC/scripts/gpu/$p.sh" >"$RES/log.txt" 2>&1
		rc=$?
		summary+=("$p rc=$rc $(( $(date +%s) - start ))s")
	done
fi
tar -C "$RESROOT" -czf "$OUT/gpu-results.tar.gz" .
grep -hE 'FAIL|Failed|failed' "$RESROOT"/ctest-gpu.log 2>/dev/null | head -20
printf '%s\n' "${summary[@]}"
