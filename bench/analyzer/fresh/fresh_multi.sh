#!/usr/bin/env bash
# fresh_multi.sh - one device call on a freshly started machine with one or
# more GPUs, for issue 20 (first contact; the default suite's sessions with
# the idle gap, for the committed baselines and for held-out gates):
#   1. MAIN=1 (default): the README's main command, scripts/setup-and-run.sh,
#      from `git archive` of main (.fresh/main.tar, carried; without it the
#      device's copy of the working tree, the same files when it is clean:
#      the caller writes .fresh/rev, e.g. `git describe --always --dirty`): exit status,
#      seconds, output (it runs on the first GPU);
#   2. on every GPU at once (CUDA_VISIBLE_DEVICES=g), with the kptprof it
#      built: the default suite recorded three times with the default idle
#      gap (record's --settle-us default): a1 and a2 unchanged, plant with
#      copy.128MiB +5% and triad.f32.64M +2% of real extra work;
#      NOGAP=1 adds n1, the same as a1 with --settle-us 0;
#      PLANT2="NAME=PCT ..." adds plant2, the default suite with those
#      plants (e.g. the MoE and d64 attention keys);
#      SEED=1 adds s1, the seed suite (5 runs), a session for its baseline.
#      RECS=0 skips step 2.
#   3. EXTRA="cmd": run after the recordings (its output in extra.log).
# Everything lands in $OUT/fresh.tar as g<N>/{a1,a2,plant,...}.kpt and
# machine.txt; bench/analyzer/fresh/eval.sh and kpt-pool-eval judge them.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-$SRC/out}
T0=$(date +%s)
R=$OUT/r
mkdir -p "$R"
{
	nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit \
		--format=csv,noheader
	echo "boot_id $(cat /proc/sys/kernel/random/boot_id)"
	echo "host $(hostname)"
	echo "start $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$R/machine.txt" 2>&1
cat "$R/machine.txt"
F=/tmp/fresh
rm -rf "$F" && mkdir -p "$F" || exit 2
if [ -f "$SRC/.fresh/main.tar" ]; then
	tar -xzf "$SRC/.fresh/main.tar" -C "$F" || exit 2
	echo "archive $(cat "$SRC/.fresh/rev" 2>/dev/null)" | tee -a "$R/machine.txt"
else
	# no carried archive: the device's copy of the tree (tracked files of a
	# clean checkout: what `git archive` of it holds), less build outputs
	(cd "$SRC" && tar -cf - --exclude=./.fresh --exclude='./build*' --exclude=./out .) | tar -xf - -C "$F" || exit 2
	# .fresh/rev (optional, written by the caller): the commit, and "dirty"
	# when the tree was not clean
	echo "archive: the device's copy of the working tree, $(cat "$SRC/.fresh/rev" 2>/dev/null || echo "revision unknown")" |
		tee -a "$R/machine.txt"
fi
if [ "${MAIN:-1}" = 1 ]; then
	t=$(date +%s)
	(cd "$F" && scripts/setup-and-run.sh) >"$R/main.out" 2>"$R/main.err"
	rc=$?
	echo "main rc=$rc seconds=$(( $(date +%s) - t ))" | tee -a "$R/machine.txt"
	tail -3 "$R/main.err"
	tail -2 "$R/main.out"
else
	(cd "$F" && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
		cmake --build build -j"$(nproc)" --target kptprof kptinject kpt-workloads >/dev/null) ||
		{ echo "build failed"; exit 2; }
fi
K=$F/build/cli/kptprof
KW=$F/build/cli/kpt-workloads
if [ ! -x "$K" ] || [ ! -x "$KW" ]; then
	echo "no kptprof/kpt-workloads built"; cp "$R"/* "$OUT"/; exit 1
fi
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
per_gpu() {
	local g=$1 d=$R/g$1
	mkdir -p "$d"
	rec() { local name=$1; shift; CUDA_VISIBLE_DEVICES=$g timeout 200 "$K" record -o "$d/$name.kpt" "$@" >"$d/$name.log" 2>&1;
		echo "g$g $name rc=$? $(( $(date +%s) - T0 ))s" >>"$d/times.txt"; }
	rec a1 --suite default --runs 5
	rec a2 --suite default --runs 5
	rec plant --runs 5 -- "$KW" --suite default --settle-us 3000 --plant memory.copy.128MiB=5 --plant memory.triad.f32.64M=2
	[ "${NOGAP:-0}" = 1 ] && rec n1 --suite default --runs 5 --settle-us 0
	if [ -n "${PLANT2:-}" ]; then
		local pl=() x
		for x in $PLANT2; do pl+=(--plant "$x"); done
		rec plant2 --runs 5 -- "$KW" --suite default --settle-us 3000 "${pl[@]}"
	fi
	[ "${SEED:-0}" = 1 ] && rec s1 --suite seed --runs 5
	return 0
}
if [ "${RECS:-1}" = 1 ]; then
	for ((g = 0; g < ngpu; g++)); do per_gpu "$g" & done
	wait
	cat "$R"/g*/times.txt | tee -a "$R/machine.txt"
fi
if [ -n "${EXTRA:-}" ]; then
	t=$(date +%s)
	(cd "$SRC" && K=$K KW=$KW F=$F R=$R bash -c "$EXTRA") >"$R/extra.log" 2>&1
	echo "extra rc=$? seconds=$(( $(date +%s) - t ))" | tee -a "$R/machine.txt"
	tail -20 "$R/extra.log"
fi
echo "end $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$R/machine.txt"
cp "$R/machine.txt" "$OUT/"
[ -f "$R/main.err" ] && cp "$R/main.out" "$R/main.err" "$OUT/"
tar -cf "$OUT/fresh.tar" -C "$R" .
for ((g = 0; g < ngpu; g++)); do
	[ -f "$R/g$g/a1.kpt" ] || continue
	"$K" diff "$R/g$g/a1.kpt" "$R/g$g/a2.kpt" 2>&1 | tail -1
	"$K" diff "$R/g$g/a1.kpt" "$R/g$g/plant.kpt" 2>&1 | grep -E "SLOW" | cut -c1-150 | head -4
done
ls -la "$OUT"
