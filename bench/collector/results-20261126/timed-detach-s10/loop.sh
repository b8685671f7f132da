#!/usr/bin/env bash
# repeat gpu.windows' duration_detach case on the Release build, with a backtrace on a crash
set -u
B=${BUILD:-build-gpu}
gcc -shared -fPIC -O1 -g -o /tmp/segv.so .carry/dbg/segv.c -ldl 2>/dev/null || exit 1
K=$B/cli/kptprof; APP=$(find $B -name kpt-window-app -type f | head -1); C=$(find $B -name kpt-collector-check -type f | head -1)
fails=0
for i in $(seq 1 ${N:-8}); do
  LD_PRELOAD=/tmp/segv.so $K record -o /tmp/l$i.kpt --duration 1 -- $APP --after ${AFTER:-6} >/tmp/l$i.out 2>/tmp/l$i.err; rc=$?
  echo "run $i rc=$rc detached=$($C meta /tmp/l$i.kpt collector.detached 2>/dev/null) after=$($C meta /tmp/l$i.kpt collector.detached_after_ns 2>/dev/null) $(grep -c '^SEGV' /tmp/l$i.err) bt lines"
  if [ $rc -ne 0 ]; then fails=$((fails+1)); grep -v "^SEGV-FR" /tmp/l$i.err | tail -5
    grep "^SEGV" /tmp/l$i.err | head -40 | while read a f off s; do if [ "$a" = SEGV-FR ] && [ -f "$f" ]; then echo "  $(basename $f) $off $s $(addr2line -f -i -C -e $f $off 2>/dev/null | paste -sd' ' | cut -c1-200)"; else echo "  $a $f $off $s"; fi; done; fi
done
echo "duration_detach loop: $fails of ${N:-8} failed"
