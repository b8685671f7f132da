#!/usr/bin/env bash
# scripts/gpu/project_gate.sh - issue 40's loop on a user's project, end to
# end: examples/cuda-project becomes a git repository in a temporary folder
# (branch main), is built, recorded (`kptprof record --project`) and its
# recording made the committed baseline (`kptprof baseline update`); then for
# each pull-request-like change of examples/cuda-project/plant/ (noop: a
# comment; slow: sgemm_tiled +2%) a branch from main with the patch
# committed, built, and `kptprof gate --against main` run in that checkout.
#
#   [REPEAT=N] [CASES="noop slow"] bash scripts/gpu/project_gate.sh
#
# Needs SRC and BUILD (gpu-check.sh sets them: BUILD/cli/kptprof is the
# kptprof used) and RES, the results folder (default: $OUT, else a new
# temporary folder). Under RES: project-gate-<case>[-rN].{md,xml,json}
# (the gate's reports), logs, main.kpt and its report, and
# project-gate-summary.md, rewritten after every gate (a timeout keeps the
# rows so far): per gate its exit status, the SLOW keys, the planted key's
# change and interval from the JSON report, and times; per case the rate
# (goals: slow exits 1 with sgemm_tiled SLOW in >= 95% of gates, noop
# exits 0 in >= 19 of 20); and the time goal: the whole gate --against
# (base build in its worktree, 10 pairs) plus the candidate's build takes
# at most 2x the time of running the workloads 20 times directly. The
# summary is also copied to $OUT when OUT is set and differs from RES.
#
# REPEAT (default 1) repeats each case's gate (the branch is built once);
# GATE_TIMEOUT (default 900) bounds one gate, seconds; STEPS=N runs the
# workload with --steps N instead of the project file's 60 (its window
# stays steps 10-49): at 60 a run takes ~0.4 s on an H200, so the two
# builds (~10 s each) weigh more than the 20 runs; STEPS=2000 makes a run
# ~1.8 s, closer to a real workload.
# Exit: 0 every gate as expected, 1 a gate gave a wrong verdict, 2 the loop
# could not run (a missing tool, a failed build or record, a gate exit 2),
# 77 no GPU.
set -u -o pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${BUILD:-$SRC/build-gpu}
RES=${RES:-${OUT:-$(mktemp -d /tmp/kpt-project-gate.XXXXXX)}}
REPEAT=${REPEAT:-1}
CASES=${CASES:-noop slow}
GATE_TIMEOUT=${GATE_TIMEOUT:-900}
EX=$SRC/examples/cuda-project
K=$BUILD/cli/kptprof
PLANTED=sgemm_tiled # the key slow.patch slows down

die() { echo "project_gate: $*" >&2; exit 2; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT '$REPEAT': want a positive integer" ;; esac
mkdir -p "$RES" || die "cannot make the results folder '$RES'"
RES=$(cd "$RES" && pwd)
[ -x "$K" ] || die "no kptprof at '$K' (set BUILD to a build folder with cli/kptprof)"
[ -f "$EX/kptprof.json" ] || die "no example project at '$EX'"
for t in git cmake nvcc python3; do
	command -v "$t" >/dev/null || die "'$t' is not installed (the example's build and this script need it)"
done
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "project_gate: no GPU: skipped" >&2
	exit 77
fi
"$K" record --help 2>&1 | grep -- '--project' >/dev/null || die "'$K record' has no --project: this kptprof cannot record a project"
"$K" gate --help 2>&1 | grep -- '--against' >/dev/null || die "'$K gate' has no --against"
for c in $CASES; do
	[ -f "$EX/plant/$c.patch" ] || die "no patch '$EX/plant/$c.patch' for case '$c'"
done

W=$(mktemp -d /tmp/kpt-project.XXXXXX) || die "cannot make a temporary folder"
trap 'rm -rf "$W"' EXIT
P=$W/stencil-bench
mkdir -p "$P"
# the example as a user's repository: its files, not the build folder
tar -C "$EX" --exclude=./build -cf - . | tar -C "$P" -xf - || die "cannot copy '$EX' to '$P'"
g() { git -C "$P" -c user.name=kptprof-gpu -c user.email=gpu@kptprof.invalid "$@"; }
if [ -n "${STEPS:-}" ]; then
	case $STEPS in *[!0-9]* | [0-4] | [0-4][0-9]) die "STEPS '$STEPS': want an integer >= 50 (the window is steps 10-49)" ;; esac
	python3 - "$P/kptprof.json" "$STEPS" <<'EOF' || die "cannot set --steps $STEPS in kptprof.json"
import json, sys
path, steps = sys.argv[1:3]
p = json.load(open(path))
for w in p["workloads"]:
    c = w["command"]
    c[c.index("--steps") + 1] = steps
json.dump(p, open(path, "w"), indent=2)
EOF
fi
{ g init -q && g checkout -q -b main && g add -A && g commit -qm "stencil-bench"; } || die "cannot make a git repository in '$P'"

# build SECONDS_VAR LOG: the project's build at P, its wall time in
# build_s; a failed build stops the script.
build() {
	local t0
	t0=$(now)
	(cd "$P" && rm -rf build && sh build.sh) >"$RES/$1" 2>&1 || { tail -20 "$RES/$1" >&2; die "the build failed (log: $RES/$1)"; }
	build_s=$(secs "$t0" "$(now)")
}

echo "== main: build, record, baseline"
build build-main.log
echo "main build: ${build_s}s"
t0=$(now)
(cd "$P" && "$K" record --project kptprof.json -o "$RES/main.kpt") >"$RES/record-main.log" 2>&1 ||
	{ tail -20 "$RES/record-main.log" >&2; die "kptprof record --project failed (log: $RES/record-main.log)"; }
record_s=$(secs "$t0" "$(now)")
"$K" report "$RES/main.kpt" >"$RES/main-report.txt" 2>&1
(cd "$P" && "$K" baseline update --baselines baselines "$RES/main.kpt") >"$RES/baseline-main.log" 2>&1 ||
	{ cat "$RES/baseline-main.log" >&2; die "kptprof baseline update failed (log: $RES/baseline-main.log)"; }
{ g add -A baselines && g commit -qm "baseline for $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; } ||
	die "cannot commit the baseline"
echo "record (5 runs): ${record_s}s; the baseline: $(head -1 "$RES/baseline-main.log")"

# The workloads run 20 times each, directly (no kptprof): the gate's 10
# pairs run each workload 20 times. Their commands come from the project
# file, so this times what the gate runs.
python3 - "$P/kptprof.json" >"$W/direct.sh" <<'EOF' || die "cannot read the workloads of kptprof.json"
import json, os, shlex, sys
path = sys.argv[1]
p = json.load(open(path))
for w in p["workloads"]:
    cwd = os.path.join(os.path.dirname(path), w.get("cwd", "."))
    env = ["%s=%s" % kv for kv in sorted(w.get("env", {}).items())]
    print("(cd %s && env %s) || exit 1" % (shlex.quote(cwd), shlex.join(env + w["command"])))
EOF
t0=$(now)
for i in $(seq 20); do
	bash "$W/direct.sh" >>"$RES/direct.log" 2>&1 || die "a workload failed when run directly (run $i; log: $RES/direct.log)"
done
direct_s=$(secs "$t0" "$(now)")
echo "the workloads 20 times directly: ${direct_s}s"

# One row per gate, tab-separated, in $W/rows: case, run, exit, expected,
# SLOW keys, planted key (verdict change [low, high]), build s, gate s.
: >"$W/rows"
# row CASE RUN RC JSON: the row of one gate from its JSON report.
row() {
	python3 - "$@" "$PLANTED" <<'EOF'
import json, sys
case, run, rc, path, planted = sys.argv[1:6]
slow, key = [], "-"
try:
    d = json.load(open(path))
except (OSError, ValueError) as e:
    d = {"result": "no report (%s)" % type(e).__name__}
for k in d.get("keys", []):
    short = k["name"].split("(")[0].split("<")[0]
    if k.get("verdict") == "SLOW":
        slow.append(short)
    if planted in k["name"] and key == "-":
        f = lambda v: "?" if v is None else "%+.2f%%" % v
        key = "%s %s [%s, %s]" % (k["verdict"], f(k.get("change_pct")), f(k.get("ci_low_pct")), f(k.get("ci_high_pct")))
if case.startswith("slow"):
    ok = rc == "1" and planted in slow
else:
    ok = rc == "0"
print("\t".join([case, run, rc, "yes" if ok else "NO", " ".join(slow) or "-", key, d.get("result", "?")]))
EOF
}

summary() {
	local c

	{
		echo "# kptprof gate --against on examples/cuda-project"
		echo
		echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1);" \
			"kptprof: $("$K" --version 2>&1 | head -1); repeats per case: $REPEAT"
		echo
		echo "main: build ${main_build_s}s, record (5 runs) ${record_s}s; the workloads 20 times directly: ${direct_s}s" \
			"(steps per run: ${STEPS:-as in kptprof.json})"
		echo
		echo "| case | run | exit | as expected | SLOW keys | $PLANTED: verdict change [interval] | result | branch build s | gate s | (build + gate) / direct |"
		echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
		awk -F'\t' -v d="$direct_s" '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, ($8 + $9) / d }' "$W/rows"
		echo
		for c in $CASES; do
			awk -F'\t' -v c="$c" '$1 == c { n++; if ($4 == "yes") ok++ }
				END { if (n) printf "- %s: as expected in %d of %d gates (%.0f%%)%s\n", c, ok, n, 100 * ok / n,
					c ~ /^slow/ ? "; goal: exit 1 with the planted key SLOW in >= 95%" : "; goal: exit 0 in >= 19 of 20" }' "$W/rows"
		done
		awk -F'\t' -v d="$direct_s" '{ r = ($8 + $9) / d; if (r > m) m = r; n++ }
			END { if (n) printf "- time: (branch build + gate) / (workloads 20x directly) at most %.2f (goal <= 2)\n", m }' "$W/rows"
	} >"$RES/project-gate-summary.md"
	if [ -n "${OUT:-}" ] && [ -d "$OUT" ] && [ "$(cd "$OUT" && pwd)" != "$RES" ]; then
		cp "$RES/project-gate-summary.md" "$OUT/"
	fi
}

main_build_s=$build_s
status=0
for c in $CASES; do
	echo "== $c: a branch from main with plant/$c.patch"
	g checkout -q -B "pr-$c" main || die "cannot make the branch pr-$c"
	g apply "$EX/plant/$c.patch" || die "plant/$c.patch does not apply to the example"
	g commit -qam "pull request: $c" || die "cannot commit plant/$c.patch"
	build "build-$c.log"
	for r in $(seq "$REPEAT"); do
		base=project-gate-$c
		[ "$r" -gt 1 ] && base=$base-r$r
		t0=$(now)
		(cd "$P" && timeout "$GATE_TIMEOUT" "$K" gate --against main --markdown "$RES/$base.md" \
			--junit "$RES/$base.xml" --json "$RES/$base.json") >"$RES/$base.log" 2>&1
		rc=$?
		gate_s=$(secs "$t0" "$(now)")
		line=$(row "$c" "$r" "$rc" "$RES/$base.json") || die "cannot read the report '$RES/$base.json'"
		printf '%s\t%s\t%s\n' "$line" "$build_s" "$gate_s" >>"$W/rows"
		echo "$c run $r: exit $rc in ${gate_s}s: $(printf '%s' "$line" | cut -f4-6)"
		case $rc in
		0 | 1) [ "$(printf '%s' "$line" | cut -f4)" = yes ] || [ $status -ne 0 ] || status=1 ;;
		*) tail -5 "$RES/$base.log" >&2; status=2 ;;
		esac
		summary
	done
	g checkout -q main || die "cannot go back to main"
done
cat "$RES/project-gate-summary.md"
exit $status
