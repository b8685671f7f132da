#!/usr/bin/env bash
# eval.sh - judges what fresh_call.sh brought back from each machine, with
# the kptprof of BUILD (default build/): the README main command's exit and
# time; the same machine and boot (a1 vs a2 A/A, a1 vs the real plants, the
# PyTorch program before/after); across machines (the committed baseline of
# the GPU against a1 and against the plants).
#   bench/analyzer/fresh/eval.sh [BUILD] DIR...   (DIR holds fresh.tar or its files)
set -u
B=${1:-build}; shift
K=$B/cli/kptprof
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
line() { "$K" diff "$@" 2>/dev/null | tail -n1 | sed 's/ (.*)//'; }
verdict() { # FILE_A FILE_B PATTERN: the verdict of the first row matching
	"$K" diff "$1" "$2" 2>/dev/null | grep -E "$3" | head -n1 | awk '{print $NF}'; }
for d in "$@"; do
	x=$d/x
	[ -d "$x" ] || { mkdir -p "$x" && tar -xf "$d/fresh.tar" -C "$x"; }
	gpu=$(head -n1 "$x/machine.txt" | cut -d, -f1)
	slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/-$//')
	base=$SRC/baselines/$slug/default
	echo "## $d: $gpu $(head -n1 "$x/machine.txt" | cut -d, -f2)"
	grep -E "^main rc|^against|^ab_plant" "$x/machine.txt"
	echo "same machine, a1 vs a2 (A/A):        $(line "$x/a1.kpt" "$x/a2.kpt")"
	echo "same machine, a1 vs plant:           $(line "$x/a1.kpt" "$x/plant.kpt"); copy $(verdict "$x/a1.kpt" "$x/plant.kpt" '^copy_vec.*memory.copy....') triad $(verdict "$x/a1.kpt" "$x/plant.kpt" '^triad_vec')"
	echo "other machines, baseline vs a1:      $(line "$base" "$x/a1.kpt")"
	echo "other machines, baseline vs a2:      $(line "$base" "$x/a2.kpt")"
	echo "other machines, baseline vs plant:   $(line "$base" "$x/plant.kpt" --suite-name default); copy $(verdict "$base" "$x/plant.kpt" '^copy_vec.*memory.copy....') triad $(verdict "$base" "$x/plant.kpt" '^triad_vec')"
	echo "PyTorch program, before vs again:    $(line "$x/f_before.kpt" "$x/f_aa.kpt")"
	for p in 5 2; do
		echo "PyTorch program, before vs +$p% work: $(line "$x/f_before.kpt" "$x/f_s$p.kpt")"
		"$K" diff "$x/f_before.kpt" "$x/f_s$p.kpt" 2>/dev/null | grep -E "nvjet|reduce_kernel" | awk '{printf "    %s ... %s %s\n", substr($1,1,40), $(NF-4), $NF}'
	done
done
