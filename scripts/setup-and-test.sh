#!/usr/bin/env bash
# setup-and-test.sh - on a fresh Debian/Ubuntu machine: install what is
# missing, build everything and run every test that needs no GPU.
#
#   scripts/setup-and-test.sh [CMAKE_ARGS...]    (BUILD=folder, default build-test/)
#
# Ends with ctest's summary line; exits with ctest's status.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build-test}
. "$SRC/scripts/kpt-deps.sh"

kpt_install_deps test || exit 2
kpt_check_cmake || exit 2
cmake -S "$SRC" -B "$BUILD" "$@"
cmake --build "$BUILD" -j"$(nproc)"
cd "$BUILD"
exec ctest -LE gpu --output-on-failure --timeout 600
