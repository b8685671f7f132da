#!/usr/bin/env bash
# scripts/gpu/collector_ab.sh - a collector refactor against its before, on
# one GPU (issue 38: "same recordings, same cost in interleaved rounds").
# OLD_SRC is the before's source (default .carry/old: `git archive` of the
# commit, carried to the device; not tracked). Builds it into OLD_BUILD,
# then:
#   1. scripts/collector-compare.sh old against new, new against new and
#      old against old (each build's own test programs): what differs
#      between the builds, and what differs between two runs of one build;
#      and new against new with KPT_RANGE_LINK=both (range links from the
#      runtime's and the driver's launch callbacks, against the driver's
#      alone, the default: the same range paths?);
#   2. scripts/gpu/overhead.sh with OLD_BUILD: host microseconds per launch
#      (kpt-launch-bench, LAUNCH_ROUNDS interleaved rounds) and the
#      launch-bound PyTorch step (ROUNDS interleaved rounds), the modes
#      plain, kptprof, kptprof-old and floor-kernel, with the paired row
#      "kptprof vs kptprof-old".
# Needs SRC, BUILD, RES. Knobs: OLD_SRC, OLD_BUILD, ROUNDS (10),
# LAUNCH_ROUNDS (15), STEPS (200), BUDGET_S (200), PAIRS (the comparisons
# to run, default "old-new new-new old-old new-both"), SKIP_OVERHEAD=1
# (the comparisons only). Exit 77 without the old
# source or a GPU.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
OLD_SRC=${OLD_SRC:-$SRC/.carry/old}
OLD_BUILD=${OLD_BUILD:-$SRC/build-old}
[ -f "$OLD_SRC/CMakeLists.txt" ] || { echo "collector_ab: no old source at $OLD_SRC: skipped"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "collector_ab: no GPU: skipped"; exit 77; }
mkdir -p "$RES"
progs="kpt-collector-app kpt-window-app kpt-nvtx-app kpt-collector-check"
{ cmake -S "$OLD_SRC" -B "$OLD_BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
	cmake --build "$OLD_BUILD" -j16 --target kptprof kptinject $progs; } >"$RES/build-old.log" 2>&1 ||
	{ tail -30 "$RES/build-old.log"; exit 1; }
cmake --build "$BUILD" -j16 --target kptprof kptinject kptfloor kpt-launch-bench $progs >"$RES/build-new.log" 2>&1 ||
	{ tail -30 "$RES/build-new.log"; exit 1; }

rc=0
pairs=("old-new $OLD_BUILD $BUILD" "new-new $BUILD $BUILD" "old-old $OLD_BUILD $OLD_BUILD" "new-both $BUILD $BUILD")
for pair in "${pairs[@]}"; do
	case " ${PAIRS:-old-new new-new old-old new-both} " in *" ${pair%% *} "*) ;; *) continue ;; esac
	set -- $pair
	ne=""
	[ "$1" = new-both ] && ne=KPT_RANGE_LINK=both
	NEW_ENV=$ne OLD=$2 NEW=$3 RES=$RES/cmp-$1 bash "$SRC/scripts/collector-compare.sh" >"$RES/cmp-$1.txt" 2>&1
	r=$?
	echo "compare $1: rc=$r"
	grep -E '^(SAME|DIFF|FAIL)|differ' "$RES/cmp-$1.txt" | head -12
	[ "$1" = new-new ] && [ $r -ne 0 ] && rc=1
done

[ "${SKIP_OVERHEAD:-0}" = 1 ] && exit $rc
OLD_BUILD=$OLD_BUILD RES=$RES/overhead MODES="plain kptprof kptprof-old floor-kernel" \
	LAUNCH_ROUNDS=${LAUNCH_ROUNDS:-15} \
	ROUNDS=${ROUNDS:-10} STEPS=${STEPS:-200} GPU_STEPS=0 BUDGET_S=${BUDGET_S:-200} \
	bash "$SRC/scripts/gpu/overhead.sh"
exit $rc
