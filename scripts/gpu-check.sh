#!/usr/bin/env bash
# gpu-check.sh - everything kptprof checks on a GPU machine, in one call.
#
#   scripts/gpu-check.sh [PART...]      (default: every scripts/gpu/*.sh; none: no part)
#
# Builds for sm_90 into build-gpu/, runs `ctest -L gpu`, then each part
# scripts/gpu/<part>.sh (benchmarks, recordings). Each part gets BUILD (the
# build folder), SRC (the repository) and RES (its own results folder) in
# its environment and writes logs and files under RES. At the end everything
# is packed into $OUT/gpu-results.tar.gz (the device tool returns at most 8
# files) and a short table of what passed is printed last.
#
# Knobs: DEADLINE_S (default 570): every step is stopped so that the whole
# call ends by then and the results are packed (the device tool kills a
# command at 600 s, and what is not under $OUT then is lost); the archive is
# rewritten after each step. SKIP_BUILD=1 reuses BUILD as it is (a warm
# machine); SKIP_CTEST=1 skips the tests; TARGETS="a b" builds only those
# targets (a benchmark-only call: kptprof kptinject kptfloor; a call that
# also runs the tests gets kptinject added). CTEST_R=REGEX
# runs only the tests it matches (default: every gpu test and the cli tests
# that skip without a GPU).
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$SRC/out}
BUILD=${BUILD:-$SRC/build-gpu}
RESROOT=$(mktemp -d /tmp/kpt-gpu.XXXXXX)
export SRC BUILD
mkdir -p "$OUT"
summary=()
T0=$(date +%s)
DEADLINE_S=${DEADLINE_S:-570}
left() { echo $(( DEADLINE_S - ($(date +%s) - T0) - 15 )); }
pack() { tar -C "$RESROOT" -czf "$OUT/gpu-results.tar.gz" . 2>/dev/null; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
	| tee "$RESROOT/gpu.txt"
# The gpu tests record through the collector: a TARGETS list for a call
# that also runs them gets kptinject (without it gpu.kernels_paths failed
# with "cannot find the collector").
if [ -n "${TARGETS:-}" ] && [ "${SKIP_CTEST:-0}" != 1 ] && [[ " $TARGETS " != *" kptinject "* ]]; then
	TARGETS="$TARGETS kptinject"
	summary+=("TARGETS: kptinject added (the gpu tests need the collector)")
fi
if [ "${SKIP_BUILD:-0}" = 1 ] && [ -x "$BUILD/cli/kptprof" ]; then
	rc=0
	summary+=("build skipped (SKIP_BUILD=1)")
else
	{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
		&& timeout "$(left)" cmake --build "$BUILD" -j16 ${TARGETS:+--target $TARGETS}; } >"$RESROOT/build.log" 2>&1
	rc=$?
	summary+=("build rc=$rc $(( $(date +%s) - T0 ))s")
fi
if [ $rc -ne 0 ]; then
	tail -40 "$RESROOT/build.log"
else
	if [ "${SKIP_CTEST:-0}" != 1 ]; then
		t1=$(date +%s)
		# the gpu tests, and the cli tests that skip without a GPU
		(cd "$BUILD" && timeout "$(left)" ctest -R "${CTEST_R:-^gpu\.|record_errors|record_merge|kernels_list|baseline_kernel_names}" \
			--output-on-failure --timeout 300) >"$RESROOT/ctest-gpu.log" 2>&1
		summary+=("ctest gpu rc=$? $(( $(date +%s) - t1 ))s ($(grep -E 'tests passed|tests failed' "$RESROOT/ctest-gpu.log" | tail -1))")
		pack
	fi
	parts=("$@")
	if [ ${#parts[@]} -eq 0 ]; then
		for f in "$SRC"/scripts/gpu/*.sh; do
			[ -e "$f" ] && parts+=("$(basename "$f" .sh)")
		done
	fi
	[ "${parts[*]}" = none ] && parts=() # `gpu-check.sh none`: the build and the tests only
	for p in "${parts[@]}"; do
		export RES="$RESROOT/$p"
		mkdir -p "$RES"
		start=$(date +%s)
		if [ "$(left)" -lt 20 ]; then
			summary+=("$p not run: out of time")
			continue
		fi
		timeout "$(left)" bash "$SRC/scripts/gpu/$p.sh" >"$RES/log.txt" 2>&1
		rc=$?
		summary+=("$p rc=$rc $(( $(date +%s) - start ))s")
		pack
	done
fi
printf '%s\n' "${summary[@]}" >"$RESROOT/summary.txt"
pack
grep -hE 'FAIL|Failed|failed' "$RESROOT"/ctest-gpu.log 2>/dev/null | head -20
printf '%s\n' "${summary[@]}"
