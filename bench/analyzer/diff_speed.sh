#!/usr/bin/env bash
# diff_speed.sh - kptprof diff of two recordings of 10 million kernels each:
# wall and CPU time, peak RSS. Goal (issue 5): < 3 s and < 1 GB on the 2-core
# CPU machine.
#
#   bench/analyzer/diff_speed.sh BUILD_DIR [KERNELS] [REPEATS]
#
# The files are kpt-synth recordings (5 runs, 24 launch sites per iteration,
# one with a planted 5% slowdown), made once under /tmp and reused.
set -eu
BUILD=${1:?usage: diff_speed.sh BUILD_DIR [KERNELS] [REPEATS]}
N=${2:-10000000}
REP=${3:-3}
A=/tmp/kpt-diff-speed-a-$N.kpt
B=/tmp/kpt-diff-speed-b-$N.kpt
[ -s "$A" ] || "$BUILD/kpt-synth" -o "$A" --total-kernels "$N" --runs 5 --seed 21
[ -s "$B" ] || "$BUILD/kpt-synth" -o "$B" --total-kernels "$N" --runs 5 --seed 21 --slow gemm:5
echo "files: $(du -m "$A" | cut -f1) MB + $(du -m "$B" | cut -f1) MB, $N kernels each; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REP"); do
	/usr/bin/time -f "wall %e s  user %U s  sys %S s  peak RSS %M KB" \
		"$BUILD/cli/kptprof" diff "$A" "$B" -q || [ $? -eq 1 ]
done
