#!/bin/bash
# Fuzzes the .kpt reader with libFuzzer for SECONDS (default 60), or for
# N runs (executions of the target; 100,000 take a few minutes on 2 cores).
#   tests/fuzz/run-fuzz.sh [SECONDS]
#   tests/fuzz/run-fuzz.sh --runs N
# KPT_FUZZ_TARGET=fuzz_import fuzzes the Chrome trace importer instead
# (corpus tests/fuzz/corpus_import/), KPT_FUZZ_TARGET=fuzz_import_nsys the
# Nsight Systems SQLite importer (the same binary, seeds
# tests/fuzz/corpus_import_nsys/: small exports with 512-byte pages,
# inputs up to 16 KiB). UBSan findings are fatal (-fno-sanitize-recover).
# $KPT_FUZZ_JOBS: libFuzzer -jobs/-workers (default 1).
# Builds with clang into build-fuzz/ (KPT_FUZZ=ON, no CUDA), starts from a
# copy of tests/fuzz/corpus/, and leaves crash inputs in build-fuzz/fuzz-artifacts/.
# Exit 0: no crash found; 86: a crash, sanitizer report or timeout (the
# input is named in the output); other non-zero: could not build or run.
# Inputs are capped at 4 KiB: a compressed format can always be made to
# expand (zstd frames of zeros decode to valid empty rows), and 4 KiB keeps
# the largest legitimate expansion under libFuzzer's 2 GB malloc limit.
set -euo pipefail
limit="-max_total_time=${1:-60}"
if [ "${1:-}" = --runs ]; then
	[[ ${2:-} =~ ^[0-9]+$ ]] || { echo "run-fuzz.sh: --runs needs a number of runs" >&2; exit 2; }
	limit="-runs=$2"
fi
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${KPT_FUZZ_BUILD:-$src/build-fuzz}
CC=clang CXX=clang++ cmake -S "$src" -B "$build" -DKPT_FUZZ=ON -DKPT_CUDA=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
target=${KPT_FUZZ_TARGET:-fuzz_reader}
seeds=corpus
max_len=4096
case $target in
fuzz_import) seeds=corpus_import ;;
fuzz_import_nsys) target=fuzz_import seeds=corpus_import_nsys max_len=16384 ;;
esac
jobs=()
[ "${KPT_FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-jobs="$KPT_FUZZ_JOBS" -workers="$KPT_FUZZ_JOBS")
cmake --build "$build" -j2 --target "$target"
work="$build/fuzz-$seeds"
mkdir -p "$work" "$build/fuzz-artifacts"
cp -n "$src"/tests/fuzz/$seeds/* "$work"/ 2>/dev/null || true
exec "$build/$target" "$limit" "${jobs[@]}" -rss_limit_mb=2048 -max_len=$max_len -timeout=60 \
	-error_exitcode=86 -timeout_exitcode=86 \
	-artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1 "$work"
