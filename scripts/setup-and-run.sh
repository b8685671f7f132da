#!/usr/bin/env bash
# setup-and-run.sh - on a fresh Debian/Ubuntu machine: install what is
# missing, build kptprof, and run the main job: the regression gate.
#
#   scripts/setup-and-run.sh [CMAKE_ARGS...]     (BUILD=folder, default build/)
#
# On a machine with an NVIDIA GPU (and the CUDA toolkit): builds the
# collector and the kernel library too and runs `kptprof gate --suite
# default`: records the default suite on this GPU (5 runs, each a fresh
# process), finds the committed baseline for this GPU model under
# baselines/, prints the verdicts and exits 0 (no regression), 1 (a kernel
# got slower) or 2 (error; no baseline for this GPU says how to make one).
# Optional packages that cannot be installed (no network, no root) are left
# out with one line each saying what that costs; a missing required one is
# one line and exit 2 (scripts/kpt-deps.sh).
# Without a GPU: diffs a committed real candidate recording of the default
# suite (made on an H100) against the committed H100 baseline, the same
# comparison `gate` makes. CANDIDATE=file.kpt and BASELINE=file.kpt pick
# others; KPT_NO_GPU=1 takes the no-GPU path on a GPU machine. Wherever
# CMake finds the CUDA toolkit (a GPU or not) the collector and the
# kpt-workloads runner are built too, so `kptprof workloads` and `record`
# work from this build (on a machine without a GPU: for every default
# architecture, slower). KPT_SETUP_DRY=1 (a test's knob) stops after the
# configure step and prints the targets it would build.
# KPT_SETUP_SKIP_BUILD=1 (the README check's knob) runs the main job on the
# kptprof already in BUILD: no packages, no configure, no build.
# KPT_GATE_OPTS adds options to the gate on a GPU (word-split), e.g.
# KPT_GATE_OPTS="-o run.kpt --junit gate.xml" keeps the recording and writes
# a JUnit report.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
. "$SRC/scripts/kpt-deps.sh"

gpu=0
if [ "${KPT_NO_GPU:-0}" != 1 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
	command -v nvcc >/dev/null 2>&1; then
	gpu=1
fi
if [ "${KPT_SETUP_SKIP_BUILD:-0}" = 1 ]; then
	# the README check (tests/docs): the main job on an existing build
	[ -x "$BUILD/cli/kptprof" ] || { echo "setup-and-run: no kptprof in '$BUILD' (KPT_SETUP_SKIP_BUILD=1)" >&2; exit 2; }
else
kpt_install_deps build || exit 2
kpt_check_cmake || exit 2
mkdir -p "$BUILD"
targets=(kptprof)
# On a GPU machine, build the kernels for this GPU only (much faster than
# the four default architectures) unless the caller chose architectures.
arch=()
if [ $gpu = 1 ] && [[ " $* " != *CMAKE_CUDA_ARCHITECTURES* ]]; then
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
	[[ $cc =~ ^[0-9]+$ ]] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$cc")
fi
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${arch[@]}" "$@" >"$BUILD/configure.log" 2>&1 \
	|| { cat "$BUILD/configure.log"; exit 2; }
# The top CMakeLists.txt says this line once when it leaves the CUDA side out.
grep -q 'kptprof: no CUDA toolkit found' "$BUILD/configure.log" || targets+=(kptinject kpt-workloads)
if [ "${KPT_SETUP_DRY:-0}" = 1 ]; then
	echo "setup-and-run: would build: ${targets[*]}" >&2
	exit 0
fi
cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}" >"$BUILD/build.log" 2>&1 \
	|| { tail -50 "$BUILD/build.log"; exit 2; }
fi

cd "$SRC"
if [ $gpu = 1 ]; then
	# shellcheck disable=SC2086 # word-split on purpose: a list of options
	exec "$BUILD/cli/kptprof" gate --suite default --runs 5 ${KPT_GATE_OPTS:-}
fi
base=${BASELINE:-baselines/nvidia-h100-80gb-hbm3/default}
cand=${CANDIDATE:-tests/data/heldout_h100_s11.kpt}
echo "(no GPU here: comparing the committed H100 recording $cand, from a machine the baseline's sessions did not come from, with the H100 baseline)" >&2
exec "$BUILD/cli/kptprof" diff "$base" "$cand"
