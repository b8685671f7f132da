#!/usr/bin/env bash
# scripts/collector-compare.sh - whether two builds of the collector
# record the same thing: the committed test programs (tests/gpu:
# kpt-collector-app, kpt-window-app, kpt-nvtx-app) recorded by OLD's and by
# NEW's kptprof and libkptinject.so, each program with NEW's build of it,
# in the modes the collector has (whole run, --steps windows with and
# without a pre-roll overrun, cudaProfilerApi, NVTX domains and payload
# pops, --api, --counters), then per recording its kernels and memops
# without times and ids (kind, device, stream, grid, block, registers,
# shared memory, bytes, range path, name; counted), its NVTX range paths
# and the collector's meta keys, OLD against NEW. A refactor of the
# collector (issue 38: core and CUPTI backend) must print SAME for each;
# timings are not compared (run scripts/gpu/overhead.sh for those).
#
# Usage: OLD=build-of-old NEW=build-of-new scripts/collector-compare.sh
# NEW_ENV="VAR=value ...": set for NEW's recordings only (one build in two
# settings: OLD=NEW=build NEW_ENV=KPT_RANGE_LINK=driver).
# Both builds need the targets kptinject kptprof kpt-collector-check, and
# NEW the test programs kpt-collector-app kpt-window-app kpt-nvtx-app.
# Writes under $RES (default a temporary folder, kept): MODE-old.sig,
# MODE-new.sig, the recordings and logs. Exit 0 when all are SAME, 1 when
# one differs, 2 when a recording failed, 77 without a GPU.
set -u -o pipefail
: "${OLD:?OLD: the old build folder}" "${NEW:?NEW: the new build folder}"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
RES=${RES:-$(mktemp -d "${TMPDIR:-/tmp}/kptcmp.XXXXXX")}
mkdir -p "$RES"
export KPTPROF_NO_CALIBRATE=1
APP=$NEW/tests/kpt-collector-app WIN=$NEW/tests/kpt-window-app NVTX=$NEW/tests/kpt-nvtx-app

# mode name, then record's options and the program
modes=(
	"app|-- $APP"
	"steps|--capture-range nvtx:hstep --steps 2-4 -- $WIN"
	"overrun|--capture-range nvtx:hstep --steps 6-7 -- $WIN --overrun"
	"every|--capture-range nvtx:hstep --every 3 -- $WIN"
	"profiler|--capture-range cudaProfilerApi -- $WIN --profiler"
	"nvtx|-- $NVTX"
	"api|--api -- $APP"
	"counters|--counters -- $APP"
)
meta_keys="collector.windows collector.prerolls collector.preroll_kernels_dropped
	collector.kernels_before_window collector.memops_before_window collector.api_callbacks
	collector.api_callbacks_failed collector.buffers_grown collector.detached collector.detach_failed
	collector.nvml collector.api collector.nvtx_payload collector.nvtx_unmatched_pops
	collector.nvtx_closed_by_parent collector.window counters.passes counters.metrics"

sig() { # build file -> the recording without times and ids
	"$1/cli/kptprof" export "$2" --format csv -o "$2.csv" >/dev/null || return 1
	awk -F, 'NR > 1 { $2 = $3 = $4 = $5 = $9 = $20 = ""; print }' "$2.csv" | sort | uniq -c
	"$1/tests/kpt-collector-check" ranges "$2" | sed 's/[0-9]\{6,\}/N/g' | sort | uniq -c
	for k in $meta_keys; do
		echo "$k=$("$1/tests/kpt-collector-check" meta "$2" "$k" 2>/dev/null)"
	done
}

rc=0
for m in "${modes[@]}"; do
	name=${m%%|*}
	read -r -a args <<<"${m#*|}"
	for side in old new; do
		b=$OLD
		[ $side = new ] && b=$NEW
		envs=()
		[ $side = new ] && [ -n "${NEW_ENV:-}" ] && read -r -a envs <<<"$NEW_ENV"
		if ! env "${envs[@]}" "$b/cli/kptprof" record -o "$RES/$name-$side.kpt" "${args[@]}" >"$RES/$name-$side.log" 2>&1; then
			echo "FAIL $name: $side's record (see $RES/$name-$side.log)"
			tail -3 "$RES/$name-$side.log"
			rc=2
			continue 2
		fi
		sig "$b" "$RES/$name-$side.kpt" >"$RES/$name-$side.sig" || { echo "FAIL $name: $side's export"; rc=2; continue 2; }
	done
	if diff "$RES/$name-old.sig" "$RES/$name-new.sig" >"$RES/$name.diff"; then
		echo "SAME $name ($(wc -l <"$RES/$name-new.sig") lines)"
	else
		echo "DIFF $name:"
		head -20 "$RES/$name.diff"
		[ $rc = 0 ] && rc=1
	fi
done
echo "results: $RES"
exit $rc
