#!/usr/bin/env bash
# setup-and-run.sh - on a fresh Debian/Ubuntu machine: install what is
# missing, build kptprof, and run the main job.
#
#   scripts/setup-and-run.sh [CMAKE_ARGS...]     (BUILD=folder, default build/)
#
# The main job, for now: `kptprof report` on a recording: $SAMPLE, else the
# largest tests/data/*.kpt (real GPU recordings), else a synthetic one made
# by kpt-synth.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
. "$SRC/scripts/kpt-deps.sh"

kpt_install_deps build
kpt_check_cmake
mkdir -p "$BUILD"
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "$@" >"$BUILD/configure.log" 2>&1 \
	|| { cat "$BUILD/configure.log"; exit 2; }
cmake --build "$BUILD" -j"$(nproc)" --target kptprof kpt-synth >"$BUILD/build.log" 2>&1 \
	|| { tail -50 "$BUILD/build.log"; exit 2; }

sample=${SAMPLE:-$(ls -S "$SRC"/tests/data/*.kpt 2>/dev/null | head -n1 || true)}
if [ -z "$sample" ]; then
	sample=$BUILD/sample.kpt
	"$BUILD/kpt-synth" -o "$sample" --runs 3 --iterations 20
	echo "(no recording under tests/data/: reporting on a synthetic one, $sample)" >&2
fi
exec "$BUILD/cli/kptprof" report "$sample"
