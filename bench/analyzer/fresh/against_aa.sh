#!/usr/bin/env bash
# against_aa.sh - fresh_multi.sh's EXTRA for issue 20's same-runner goals:
# on every GPU of the host at once (CUDA_VISIBLE_DEVICES=g), with the
# kptprof the main command built ($K, $KW, $F from fresh_multi.sh):
#   1. `kptprof gate --against $F/build` - the real PR gate on one runner,
#      base and candidate the same build (an A/A: it must exit 0);
#   2. `kptprof ab --runs $AB_PAIRS` of the same build with the 3 ms idle
#      gap on both sides (gate --against's default), kept as g<N>/ablong/
#      {a,b}.kpt for bench/analyzer/kpt_ab_eval.c, which cuts it into
#      disjoint 10-pair gates (false alarms) and plants +2% on every key
#      >= 50 us (power).
# Results land in $R/g<N>/ (fresh_multi.sh tars $R).
set -u -o pipefail
: "${K:?}" "${KW:?}" "${F:?}" "${R:?}"
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
one() {
	local g=$1 d=$R/g$1 t
	mkdir -p "$d"
	t=$(date +%s)
	(cd "$F" && CUDA_VISIBLE_DEVICES=$g timeout 240 "$K" gate --against "$F/build" -o "$d/against.kpt") >"$d/against.log" 2>&1
	echo "g$g against_aa rc=$? seconds=$(( $(date +%s) - t ))" >>"$d/times.txt"
	t=$(date +%s)
	CUDA_VISIBLE_DEVICES=$g timeout 300 "$K" ab --runs "${AB_PAIRS:-20}" -o "$d/ablong" -- \
		"$KW" --suite default --settle-us 3000 ::: "$KW" --suite default --settle-us 3000 >"$d/ablong.log" 2>&1
	echo "g$g ab_long pairs=${AB_PAIRS:-20} rc=$? seconds=$(( $(date +%s) - t ))" >>"$d/times.txt"
	rm -f "$d"/ablong/[ab]-*.kpt
	grep -E '^[0-9]+ SLOW' "$d/against.log" | tail -1
}
for ((g = 0; g < ngpu; g++)); do one "$g" & done
wait
cat "$R"/g*/times.txt | grep -E "against|ab_long"
