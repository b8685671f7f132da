#!/usr/bin/env bash
# kernels_diag.sh - GPU part (scripts/gpu-check.sh) for a kernel variant
# beside the one it would replace (issue 39); gpu-check.sh without part
# names runs it with every other part (about a minute):
#   1. the e4m3 forward's check entries, one process per kernel (serial,
#      .pp, .pp3: the hung flag is sticky for a process);
#   2. ROUNDS (3) interleaved rounds of the e4m3 16k entries, every kernel;
#   3. ncu on one E128 MoE layer, the wgmma FFN and its clustered variant
#      (.mc): duration, throughputs, launch shape and warp stalls of the
#      FFN GEMMs (ncu's own clock control: compare the two, not the times).
# MOE_TMA=1 runs only this instead (issue 39: the clustered FFN's TMA store
# of full tiles, KPT_MOE_MC_TMA_STORE): `kpt-attn-moe check` with the store
# off and on (check-tma{0,1}.txt), then `kpt-attn-moe bench moe` ROUNDS (3)
# times each, off and on alternating and alternately first
# (bench-tma{0,1}-R.txt); tma.md: each run's sm90 / sm90mc line.
# Needs SRC, BUILD (kpt-workloads built; MOE_TMA: kpt-attn-moe), RES.
set -u -o pipefail
: "${SRC:?}" "${BUILD:?}" "${RES:?}"
KW=$BUILD/cli/kpt-workloads
mkdir -p "$RES"
rc=0
if [ "${MOE_TMA:-0}" = 1 ]; then
	AM=$BUILD/bench/attention_moe/kpt-attn-moe
	for v in 1 0; do
		KPT_MOE_MC_TMA_STORE=$v timeout 300 "$AM" check >"$RES/check-tma$v.txt" 2>&1
		crc=$?
		[ $crc = 0 ] || rc=1
		echo "check KPT_MOE_MC_TMA_STORE=$v: rc=$crc ($(grep -c '^FAIL' "$RES/check-tma$v.txt") FAIL lines)" \
			| tee -a "$RES/steps.txt"
	done
	for ((r = 0; r < ${ROUNDS:-3}; r++)); do
		for i in 0 1; do
			v=$(((r + i) % 2))
			KPT_MOE_MC_TMA_STORE=$v timeout 200 "$AM" bench moe >"$RES/bench-tma$v-$r.txt" 2>&1 || rc=1
		done
	done
	for f in "$RES"/bench-tma*-*.txt; do
		echo "## $(basename "$f" .txt)"
		grep -E 'sm90mc|sm90 / sm90mc' "$f"
	done | tee "$RES/tma.md"
	exit $rc
fi
L=$("$KW" --list --suite check | awk 'NR > 1 && $1 ~ /^attention\.fwd\.e4m3\./ {print $1}')
for v in serial pp pp3; do
	case $v in
	serial) sel=$(echo "$L" | grep -v '\.pp') ;;
	pp) sel=$(echo "$L" | grep '\.pp$') ;;
	pp3) sel=$(echo "$L" | grep '\.pp3$') ;;
	esac
	# shellcheck disable=SC2086
	timeout 240 "$KW" --check $sel >"$RES/check-$v.txt" 2>&1
	echo "check $v: rc=$? ($(echo "$sel" | wc -l) entries)" | tee -a "$RES/steps.txt"
done
B=$("$KW" --list --suite bench | awk 'NR > 1 && $1 ~ /^attention\.fwd\.e4m3\.d(64|128)\.s16384/ {print $1}')
for ((r = 0; r < ${ROUNDS:-3}; r++)); do
	# shellcheck disable=SC2086
	timeout 200 "$KW" $B --settle-us 3000 --iterations 20 --warmup 3 --json >"$RES/e4m3-$r.json" 2>"$RES/e4m3-$r.err" || rc=1
done
python3 - "$RES" <<'EOF' | tee "$RES/e4m3.md"
import glob, json, statistics, sys
t = {}
for p in sorted(glob.glob(sys.argv[1] + "/e4m3-*.json")):
    try:
        for row in json.load(open(p)):
            if "median_s" in row:
                t.setdefault(row["name"], []).append((row["median_s"], row.get("flops", 0)))
    except (OSError, ValueError):
        pass
print("| workload | rounds | median us | TFLOP/s |")
print("| --- | --: | --: | --: |")
for n, v in sorted(t.items()):
    m = statistics.median(x for x, _ in v)
    print(f"| {n} | {len(v)} | {m * 1e6:.1f} | {v[0][1] / m / 1e12:.0f} |")
EOF
if command -v ncu >/dev/null; then
	for w in moe.layer.e128.top8.h2048.f768.b8.s4096 moe.layer.e128.top8.h2048.f768.mc.b8.s4096; do
		timeout 150 ncu --kernel-name regex:moe_ffn_sm90 --launch-skip 0 --launch-count 2 \
			--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
			"$KW" "$w" --iterations 1 --warmup 0 >"$RES/ncu-$w.txt" 2>&1
		echo "ncu $w: rc=$?" | tee -a "$RES/steps.txt"
	done
fi
exit $rc
