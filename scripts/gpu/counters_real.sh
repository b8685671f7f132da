#!/usr/bin/env bash
# scripts/gpu/counters_real.sh - hardware counters on programs kptprof did
# not write (issue 13), run by scripts/gpu-check.sh or alone with BUILD, SRC
# and RES set. Writes under $RES:
#   torch.txt          `record --counters -- python3 tests/gpu/torch_workload.py`:
#                      its stderr, and how many of the kernels it timed have
#                      counters (every one must)
#   torch_counters.kpt that recording (tests/data)
#   pair_base.kpt, pair_plant.kpt   `record --runs 3 --counters -- kpt-workloads
#                      memory.copy.64MiB memory.triad.f32.64M`, the second with
#                      the copy planted 10% slower (it moves 10% more memory),
#                      for tests/data: diff explains the SLOW key with counters
#   pair_diff.txt      kptprof diff of the two
#   empty.txt          --counters on a program with no kernel: exit status 2
#   steps.txt          rc and time of every step
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
mkdir -p "$RES"
cmake --build "$BUILD" -j16 --target kptprof kptinject kpt-workloads >"$RES/build.log" 2>&1 \
	|| { tail -30 "$RES/build.log"; exit 1; }
K=$BUILD/cli/kptprof
KW=$BUILD/cli/kpt-workloads
status=0
step() { # name, command...
	local name=$1; shift
	local t0=$(date +%s%N)
	"$@" >"$RES/$name.txt" 2>&1
	local rc=$?
	printf '%-12s rc=%-3s %6d ms\n' "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$RES/steps.txt"
	[ $rc -eq 0 ] || status=1
	return $rc
}
date -u +%FT%TZ >"$RES/date.txt"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv >>"$RES/date.txt" 2>&1

torch_counters() {
	"$K" record -o "$RES/torch_counters.kpt" --counters -- python3 "$SRC/tests/gpu/torch_workload.py" --steps 3 \
		|| return 1
	"$K" report "$RES/torch_counters.kpt" --format json >"$RES/torch_counters.json" || return 1
	python3 - "$RES/torch_counters.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
timed = {k["mangled"] for k in r["kernels"]}
counted = {k["mangled"] for k in r.get("kernel_counters", [])}
print(f"kernels timed: {len(timed)} names, with counters: {len(counted & timed)}; "
      f"counters for names not timed: {len(counted - timed)}")
for m in sorted(timed - counted)[:20]:
    print("no counters:", m)
sys.exit(0 if timed and timed <= counted else 1)
PY
}
step torch torch_counters

pair() {
	local w="memory.copy.64MiB memory.triad.f32.64M"
	"$K" record -o "$RES/pair_base.kpt" --runs 3 --counters -- "$KW" --iterations 20 $w || return 1
	"$K" record -o "$RES/pair_plant.kpt" --runs 3 --counters -- "$KW" --iterations 20 $w \
		--plant memory.copy.64MiB=10 || return 1
	"$K" diff "$RES/pair_base.kpt" "$RES/pair_plant.kpt"
	echo "diff exit status $?"
}
step pair pair
cp "$RES/pair.txt" "$RES/pair_diff.txt"
grep -q "diff exit status 1" "$RES/pair.txt" || status=1

empty() {
	"$K" record -o "$RES/empty.kpt" --counters -- python3 -c 'print("no kernels")'
	echo "exit status $?"
	ls -l "$RES/empty.kpt" 2>&1
}
empty >"$RES/empty.txt" 2>&1
grep -q "exit status 2" "$RES/empty.txt" || status=1
exit $status
