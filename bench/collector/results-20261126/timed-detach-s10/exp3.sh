#!/usr/bin/env bash
# which duration/steps detach runs crash
set -u
B=/tmp/bx
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1
cmake --build $B -j16 --target kptprof kptinject kpt-window-app kpt-collector-check 2>&1 | grep -E "error|Built target kptinject"
gcc -shared -fPIC -O1 -o /tmp/segv.so .carry/dbg/segv.c -ldl 2>/dev/null || exit 1
K=$B/cli/kptprof; APP=$(find $B -name kpt-window-app -type f | head -1); C=$(find $B -name kpt-collector-check -type f | head -1)
one() { # label env... -- args
  local lab=$1; shift; local i=$((${#lab}+RANDOM)); 
  env LD_PRELOAD=/tmp/segv.so "$@" >/tmp/o.out 2>/tmp/o.err; local rc=$?
  echo "$lab rc=$rc det=$($C meta /tmp/o.kpt collector.detached 2>/dev/null) after=$($C meta /tmp/o.kpt collector.detached_after_ns 2>/dev/null) $(grep -o 'SEGV-BT.*' /tmp/o.err | head -1) $(grep -o '[0-9]* steps after' /tmp/o.out)"
  rm -f /tmp/o.kpt
}
for i in 1 2 3 4 5 6; do
  one heavy-steps-detach $K record -o /tmp/o.kpt --capture-range nvtx:hstep --steps 9-100000 -- $APP --after 6
  one short-dur-detach $K record -o /tmp/o.kpt --duration 0.05 -- $APP --after 4
done
