#!/usr/bin/env bash
# exp.sh - the timed-window detach runs of 2026-11-26 (bench/RESULTS.md,
# "The detach after a timed window crashed the program"), run on the GPU
# machine from the repository root with this folder's segv.c (a backtrace
# printer preloaded into the program) at .carry/dbg/segv.c:
#   EXP=1|2|3 bash exp.sh   builds the collector (Release) into /tmp/bx
#   EXP=4 bash exp.sh       uses scripts/gpu-check.sh's build-gpu (after the change)
# Each line: label, exit status, collector.detached, when, the crash's
# time if any, the steps the program ran after its window.
set -u
EXP=${EXP:-1}
if [ "$EXP" = 4 ]; then
  B=build-gpu
else
  B=/tmp/bx
  cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
  cmake --build $B -j16 --target kptprof kptinject kpt-window-app kpt-collector-check 2>&1 | grep -E "error|Built target kptinject"
fi
gcc -shared -fPIC -O1 -o /tmp/segv.so .carry/dbg/segv.c -ldl 2>/dev/null || exit 1
K=$B/cli/kptprof; APP=$(find $B -name kpt-window-app -type f | head -1); C=$(find $B -name kpt-collector-check -type f | head -1)
one() { # label [VAR=value...] command...
  local lab=$1; shift
  env LD_PRELOAD=/tmp/segv.so "$@" >/tmp/o.out 2>/tmp/o.err; local rc=$?
  echo "$lab rc=$rc det=$($C meta /tmp/o.kpt collector.detached 2>/dev/null) after=$($C meta /tmp/o.kpt collector.detached_after_ns 2>/dev/null) $(grep -o 'SEGV-BT.*' /tmp/o.err | head -1) $(grep -o '[0-9]* steps after' /tmp/o.out)"
  rm -f /tmp/o.kpt
}
R="$K record -o /tmp/o.kpt"
case $EXP in
1) for i in 1 2 3 4 5; do
     one dur-detach $R --duration 1 -- $APP --after 6
     one steps-detach $R --capture-range nvtx:hstep --steps 2-4 -- $APP --after 6
     one dur-nodetach KPT_DETACH=0 $R --duration 1 -- $APP --after 6
     one dur-runtime-link KPT_RANGE_LINK=runtime $R --duration 1 -- $APP --after 6
   done ;;
2) for i in 1 2 3 4 5 6; do
     one steps9-detach $R --capture-range nvtx:hstep --steps 9-12 -- $APP --after 6
     one delayed-dur-detach $R --delay 0.3 --duration 1 -- $APP --after 6
   done ;;
3) for i in 1 2 3 4 5 6; do
     one heavy-steps-detach $R --capture-range nvtx:hstep --steps 9-100000 -- $APP --after 6
     one short-dur-detach $R --duration 0.05 -- $APP --after 4
   done ;;
4) for i in 1 2 3 4 5 6 7; do
     one dur-after $R --duration 1 -- $APP --after 6
     one steps-detach $R --capture-range nvtx:hstep --steps 9-100000 -- $APP --after 6
   done ;;
esac
