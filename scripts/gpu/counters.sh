#!/usr/bin/env bash
# counters.sh - hardware counters on a GPU (issue 8). Called by
# scripts/gpu-check.sh with BUILD, SRC and RES set; standalone it builds
# kptprof, libkptinject.so, kpt-workloads and counters_check into $BUILD.
# Writes into $RES: gpu.txt, copy.txt (the 512 MiB copy's DRAM bytes against
# the bytes it moves), quick.kpt (the quick suite with the default set;
# small), quick-report.txt, memory.txt (the memory set), errors.txt (an
# unknown metric, exit status), steps.txt (rc and time of every step);
# with KPT_COMPARE_SUITES=1 also <gpu-slug>-seed.kpt and -default.kpt.
set -u -o pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build-gpu}
RES=${RES:-$SRC/out/counters}
mkdir -p "$RES"
K=$BUILD/cli/kptprof
KW=$BUILD/cli/kpt-workloads
CHECK=$BUILD/tests/counters_check
status=0

nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
	--format=csv >"$RES/gpu.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >>"$RES/gpu.txt"
if [ ! -x "$K" ] || [ ! -x "$KW" ] || [ ! -x "$CHECK" ]; then
	{ cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
		&& cmake --build "$BUILD" -j16 --target kptprof kptinject kpt-workloads counters_check; } \
		>"$RES/build.log" 2>&1 || { tail -30 "$RES/build.log"; exit 2; }
fi
"$KW" --check memory.copy.1B >/dev/null 2>&1
[ $? -eq 77 ] && { echo "counters.sh: no GPU here, skipped"; exit 77; }

step() { # name, command...
	local name=$1; shift
	local t0=$(date +%s%N)
	"$@" >"$RES/$name.txt" 2>&1
	local rc=$?
	printf '%-16s rc=%-3s %6d ms\n' "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$RES/steps.txt"
	[ $rc -eq 0 ] || status=1
	return $rc
}

copy() {
	"$K" record -o "$RES/copy.kpt" --runs 1 --iterations 5 --warmup 1 --counters --workload memory.copy.512MiB &&
		"$CHECK" "$RES/copy.kpt" memory.copy.512MiB 5
}
step copy copy
step memory bash -c "'$K' record -o '$RES/mem.kpt' --runs 1 --iterations 3 --warmup 1 --counters=memory \
	--workload memory.copy.512MiB && '$CHECK' '$RES/mem.kpt' memory.copy.512MiB 5"
step quick timeout 300 "$K" record -o "$RES/quick.kpt" --runs 2 --counters --suite quick
step quick-report "$K" report "$RES/quick.kpt" --top 20
# Optional (KPT_COMPARE_SUITES=1; minutes of GPU time): the seed and
# default suites with ceilings, for `kptprof compare` across GPU models and
# the baselines the issue asks for (H100 and H200).
if [ -n "${KPT_COMPARE_SUITES:-}" ]; then
	slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
	for suite in seed default; do
		step "suite-$suite" timeout 400 "$K" record -o "$RES/$slug-$suite.kpt" --runs 3 --suite "$suite"
	done
fi
errors() {
	"$K" record -o "$RES/bad.kpt" --runs 1 --iterations 1 --warmup 0 --counters=sm__no_such_counter.sum \
		--workload memory.copy.4MiB
	echo "exit status $?"
}
errors >"$RES/errors.txt" 2>&1
grep -q "exit status 2" "$RES/errors.txt" || status=1
rm -f "$RES/mem.kpt" "$RES/copy.kpt"
exit $status
