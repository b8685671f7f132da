#!/usr/bin/env bash
# fresh_call.sh - what one device call runs on a freshly started GPU machine
# for issue 20 (first contact, and the gate's power and false alarms on the
# same machine and across machines):
#   1. the README's main command, scripts/setup-and-run.sh, from `git
#      archive` of main (.fresh/main.tar, made on the development machine
#      and carried): its exit status, seconds and output;
#   2. with the kptprof it built: the default suite twice unchanged (a1,
#      a2: 5 runs each, minutes apart: same GPU and boot), once with two
#      kernels planted slower by real extra work (plant: copy.128MiB +5%,
#      triad.f32.64M +2%), and a PyTorch program kptprof did not write
#      (foreign_torch.py, no NVTX): 5 runs unchanged, 3 unchanged again, 3
#      with every op doing 5% more work, 3 with 2% more.
# Everything lands in $OUT/fresh.tar (plus machine.txt and the main
# command's output); bench/analyzer/fresh/eval.sh judges it on the CPU.
set -u -o pipefail
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-$SRC/out}
T0=$(date +%s)
R=$OUT/r
mkdir -p "$R"
{
	nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active \
		--format=csv,noheader
	echo "boot_id $(cat /proc/sys/kernel/random/boot_id)"
	echo "host $(hostname)"
	echo "start $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$R/machine.txt" 2>&1
cat "$R/machine.txt"
F=/tmp/fresh
rm -rf "$F" && mkdir -p "$F" && tar -xzf "$SRC/.fresh/main.tar" -C "$F" || exit 2
echo "archive $(cat "$SRC/.fresh/rev" 2>/dev/null)" | tee -a "$R/machine.txt"
t=$(date +%s)
(cd "$F" && scripts/setup-and-run.sh) >"$R/main.out" 2>"$R/main.err"
rc=$?
echo "main rc=$rc seconds=$(( $(date +%s) - t ))" | tee -a "$R/machine.txt"
tail -3 "$R/main.err"
tail -2 "$R/main.out"
K=$F/build/cli/kptprof
KW=$F/build/cli/kpt-workloads
[ -x "$KW" ] || KW=$(find "$F/build" -name kpt-workloads -type f -perm -u+x | head -n1)
if [ ! -x "$K" ] || [ ! -x "$KW" ]; then
	echo "no kptprof/kpt-workloads built"; cp "$R"/* "$OUT"/; exit 1
fi
rec() { local name=$1; shift; timeout 200 "$K" record -o "$R/$name.kpt" "$@" >"$R/$name.log" 2>&1;
	echo "$name rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$R/machine.txt"; }
rec a1 --suite default --runs 5
rec a2 --suite default --runs 5
rec plant --runs 5 -- "$KW" --suite default --plant memory.copy.128MiB=5 --plant memory.triad.f32.64M=2
FT=$SRC/bench/analyzer/fresh/foreign_torch.py
[ "${FOREIGN:-1}" = 1 ] && {
rec f_before --runs 5 -- python3 "$FT" --steps 20
rec f_aa --runs 3 -- python3 "$FT" --steps 20
rec f_s5 --runs 3 -- python3 "$FT" --steps 20 --slow 5
rec f_s2 --runs 3 -- python3 "$FT" --steps 20 --slow 2
}
if [ "${AGAINST:-1}" = 1 ]; then
	# gate --against (A/A: the same build as base) and ab with two kernels 2% slower
	t=$(date +%s)
	(cd "$F" && timeout 300 "$K" gate --against "$F/build" -o "$R/against") >"$R/against.log" 2>&1
	echo "against_aa rc=$? seconds=$(( $(date +%s) - t ))" | tee -a "$R/machine.txt"
	tail -1 "$R/against.log"
	t=$(date +%s)
	timeout 300 "$K" ab --runs 10 -o "$R/abplant" -- "$KW" --suite default ::: "$KW" --suite default \
		--plant memory.copy.128MiB=2 --plant memory.triad.f32.64M=2 >"$R/abplant.log" 2>&1
	echo "ab_plant rc=$? seconds=$(( $(date +%s) - t ))" | tee -a "$R/machine.txt"
	grep -E "SLOW|^[0-9]+ SLOW" "$R/abplant.log" | cut -c1-160
fi
if [ "${AB_LONG:-0}" -gt 0 ]; then
	# one long interleaved A/A of the same build: cut into disjoint
	# 10-pair gates by bench/analyzer/kpt_ab_eval.c (gate --against's
	# false alarms and power on real sessions)
	t=$(date +%s)
	# SETTLE: kpt-workloads --settle-us on both sides (gate --against's gap)
	st=()
	[ -n "${SETTLE:-}" ] && st=(--settle-us "$SETTLE")
	timeout 400 "$K" ab --runs "$AB_LONG" -o "$R/ablong" -- "$KW" --suite default "${st[@]}" ::: "$KW" --suite default "${st[@]}" \
		>"$R/ablong.log" 2>&1
	echo "ab_long pairs=$AB_LONG settle=${SETTLE:-0} rc=$? seconds=$(( $(date +%s) - t ))" | tee -a "$R/machine.txt"
	rm -f "$R"/ablong/[ab]-*.kpt
fi
if [ "${CLOCK:-0}" = 1 ]; then
	K=$K KW=$KW OUT=$R/clock bash "$SRC/bench/analyzer/clock/clock_probe.sh" | tee -a "$R/machine.txt"
fi
echo "end $(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$R/machine.txt"
cp "$R/machine.txt" "$R/main.out" "$R/main.err" "$OUT/"
tar -cf "$OUT/fresh.tar" -C "$R" .
"$K" diff "$R/a1.kpt" "$R/a2.kpt" 2>&1 | tail -1
"$K" diff "$R/f_before.kpt" "$R/f_s5.kpt" 2>&1 | tail -1
ls -la "$OUT"
