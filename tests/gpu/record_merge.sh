#!/usr/bin/env bash
# record_merge.sh - `kptprof record` as a launcher, without a GPU: a fake
# target plays the injection library (writes a real H100 recording from
# tests/data where KPT_OUTPUT says, or an error status where KPT_STATUS
# says). Checks: the environment the target gets, --runs numbering, the
# merge, the exit status passed through, the summary, errors from the
# collector's status file, and that no temporary file is left.
# Env: KPTPROF, CHECK, KPT_DATA.
set -u
fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
# The launcher only checks that the injection library exists; a stand-in
# lets these tests run on builds without CUDA (no libkptinject.so).
: >"$work/libkptinject.so"
export KPTPROF_INJECT=$work/libkptinject.so
export KPTPROF_SKIP_GPU_CHECK=1
field() { "$CHECK" stats "$1" | tr ' ' '\n' | grep -A1 -x "$2" | tail -1; }

cat >fake.sh <<'SH'
#!/bin/sh
# plays libkptinject.so: one recording per process, then exits 3
out=$(printf '%s' "$KPT_OUTPUT" | sed "s/%p/$$/")
cp "$SRCFILE" "$out"
[ -r "$CUDA_INJECTION64_PATH" ] && [ "$NVTX_INJECTION64_PATH" = "$CUDA_INJECTION64_PATH" ] && echo env-ok >>env.txt
exit 3
SH
chmod +x fake.sh
SRCFILE=$KPT_DATA/collector_app.kpt "$KPTPROF" record --runs 2 -o m.kpt -- ./fake.sh 2>err.txt
rc=$?
[ $rc -eq 3 ] || { echo "FAIL: exit status $rc, want the target's 3"; cat err.txt; fail=1; }
[ "$(grep -c env-ok env.txt 2>/dev/null)" = 2 ] || { echo "FAIL: the target did not get both injection variables"; fail=1; }
[ "$(field m.kpt runs)" = 2 ] || { echo "FAIL: want 2 runs"; fail=1; }
[ "$(field m.kpt processes)" = 6 ] || { echo "FAIL: want 6 processes"; fail=1; }
[ "$(field m.kpt kernels)" = 34 ] || { echo "FAIL: want 34 kernels"; fail=1; }
[ "$("$CHECK" meta m.kpt exit_status)" = "3,3" ] || { echo "FAIL: meta exit_status '$("$CHECK" meta m.kpt exit_status)', want 3,3"; fail=1; }
[ "$("$CHECK" meta m.kpt runs)" = 2 ] || { echo "FAIL: meta runs"; fail=1; }
[ "$("$CHECK" meta m.kpt command)" = "./fake.sh" ] || { echo "FAIL: meta command '$("$CHECK" meta m.kpt command)'"; fail=1; }
[ -n "$("$CHECK" meta m.kpt host)" ] && [ -n "$("$CHECK" meta m.kpt time)" ] && [ -n "$("$CHECK" meta m.kpt tool_version)" ] \
	|| { echo "FAIL: meta host/time/tool_version missing"; fail=1; }
grep -q "recorded 34 kernels" err.txt || { echo "FAIL: no summary line"; cat err.txt; fail=1; }
grep -q "kpt_t_add" err.txt || { echo "FAIL: summary lacks the top kernels"; fail=1; }
left=$(ls -A | grep -v -E '^(libkptinject\.so|fake\.sh|m\.kpt|err\.txt|env\.txt)$')
[ -z "$left" ] || { echo "FAIL: left behind: $left"; fail=1; }

cat >busy.sh <<'SH'
#!/bin/sh
# plays a collector that found another CUPTI tool
st=$(printf '%s' "$KPT_STATUS" | sed "s/%p/$$/")
printf 'error busy another profiler is already attached to process %s (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)\nhint CUPTI allows one tool per process\n' $$ >"$st"
exit 0
SH
chmod +x busy.sh
"$KPTPROF" record -o b.kpt -- ./busy.sh 2>err.txt
rc=$?
[ $rc -eq 2 ] && grep -q "^kptprof: another profiler is already attached" err.txt && grep -q "^hint: CUPTI allows" err.txt \
	|| { echo "FAIL: busy collector: rc $rc"; cat err.txt; fail=1; }
[ ! -e b.kpt ] || { echo "FAIL: b.kpt written"; fail=1; }

# --workload runs the runner under the collector and declares each
# workload's FLOPs and bytes from `kpt-workloads --list --tsv` in meta.
cat >runner.sh <<'SH'
#!/bin/sh
# plays kpt-workloads: lists with --list --tsv, else records like fake.sh
if [ "$1" = --list ]; then
	[ "$2" = --tsv ] && [ "$3" = memory.copy.4MiB ] || exit 2
	printf 'memory.copy.4MiB\tmemory\t0\t8388608\tquick\n'
	exit 0
fi
out=$(printf '%s' "$KPT_OUTPUT" | sed "s/%p/$$/")
cp "$SRCFILE" "$out"
SH
chmod +x runner.sh
SRCFILE=$KPT_DATA/collector_app.kpt KPTPROF_WORKLOADS=$work/runner.sh \
	"$KPTPROF" record -o w.kpt --workload memory.copy.4MiB 2>err.txt
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --workload with a fake runner: rc $rc"; cat err.txt; fail=1; }
[ "$("$CHECK" meta w.kpt workload.memory.copy.4MiB.bytes)" = 8388608 ] && [ "$("$CHECK" meta w.kpt workload.memory.copy.4MiB.flops)" = 0 ] \
	|| { echo "FAIL: workload FLOPs/bytes not in meta"; fail=1; }
rm -f w.kpt runner.sh

"$KPTPROF" record -o n.kpt -- true 2>err.txt
rc=$?
[ $rc -eq 2 ] && grep -q "nothing recorded: 'true' used no CUDA" err.txt || { echo "FAIL: no CUDA: rc $rc"; cat err.txt; fail=1; }
left=$(ls -A | grep -v -E '^(libkptinject\.so|fake\.sh|busy\.sh|m\.kpt|err\.txt|env\.txt)$')
[ -z "$left" ] || { echo "FAIL: left behind: $left"; fail=1; }
[ $fail -eq 0 ] && echo "record_merge: ok"
exit $fail
