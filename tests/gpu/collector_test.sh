#!/usr/bin/env bash
# collector_test.sh - GPU test of the collector with collector_app.cu:
#  1. `kptprof record -- APP`: the recording matches exactly (check_collector.c)
#  2. --runs 2 --api: two runs of three processes, runtime/driver API events
#  3. cudaDeviceReset mid-program: kernels of both contexts are kept
#  4. SIGTERM to a sleeping target (through kptprof): the file is written and
#     kptprof exits 128+15
#  5. another CUPTI subscriber first (LAUNCH=kpt-launch-bench): exit 2, no file
# Env: KPTPROF, APP, CHECK, LAUNCH (optional). Exit 77 without a GPU. KEEP=DIR keeps the main
# recording there (scripts/gpu/collector.sh commits it as test data).
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
field() { "$CHECK" stats "$1" | tr ' ' '\n' | grep -A1 -x "$2" | tail -1; }

# the check counts the samples of a 10 ms NVML sampler (record -- CMD
# samples every 100 ms unless KPT_SAMPLE_MS is set: a setting it must keep)
KPT_SAMPLE_MS=10 "$KPTPROF" record --kinds all -o "$tmp/app.kpt" -- "$APP"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: kptprof record exited $rc"; exit 1; }
[ -z "$(ls -A "$tmp" | grep -v '^app.kpt$')" ] || { echo "FAIL: temporary files left: $(ls -A "$tmp")"; fail=1; }
"$CHECK" app "$tmp/app.kpt" || fail=1
[ -n "${KEEP:-}" ] && cp "$tmp/app.kpt" "$KEEP/collector_app.kpt"

"$KPTPROF" record --kinds all --runs 2 --api -o "$tmp/runs.kpt" -- "$APP" >/dev/null 2>&1 || { echo "FAIL: --runs 2 --api"; fail=1; }
"$CHECK" stats "$tmp/runs.kpt"
[ "$(field "$tmp/runs.kpt" processes)" = 6 ] || { echo "FAIL: --runs 2: want 6 processes"; fail=1; }
[ "$(field "$tmp/runs.kpt" runs)" = 2 ] || { echo "FAIL: --runs 2: want 2 runs"; fail=1; }
[ "$(field "$tmp/runs.kpt" kernels)" = 34 ] || { echo "FAIL: --runs 2: want 34 kernels"; fail=1; }
[ "$(field "$tmp/runs.kpt" events)" -gt 100 ] || { echo "FAIL: --api: too few API events"; fail=1; }

"$KPTPROF" record --kinds all -o "$tmp/reset.kpt" -- "$APP" --reset >/dev/null 2>&1 || { echo "FAIL: --reset run"; fail=1; }
n=$("$CHECK" names "$tmp/reset.kpt" | grep -c kpt_t_empty)
[ "$n" = 7 ] || { echo "FAIL: cudaDeviceReset: $n kernels, want 7"; fail=1; }

"$KPTPROF" record --kinds all -o "$tmp/term.kpt" -- "$APP" --wait >"$tmp/wait.out" 2>"$tmp/wait.err" &
kp=$!
for _ in $(seq 1 100); do grep -q ready "$tmp/wait.out" 2>/dev/null && break; sleep 0.1; done
kill -TERM $kp
wait $kp
rc=$?
[ $rc -eq 143 ] || { echo "FAIL: SIGTERM: kptprof exited $rc, want 143"; cat "$tmp/wait.err"; fail=1; }
n=$("$CHECK" names "$tmp/term.kpt" 2>/dev/null | grep -c kpt_t_empty)
[ "$n" = 10 ] || { echo "FAIL: SIGTERM: $n kernels recorded, want 10"; fail=1; }
# Another CUPTI subscriber before CUDA starts: the target runs to the end,
# kptprof says why nothing was recorded and exits 2, leaving no file.
if [ -x "${LAUNCH:-}" ]; then
	"$KPTPROF" record --kinds all -o "$tmp/busy.kpt" -- "$LAUNCH" --subscribe-first --n 100 --reps 3 >"$tmp/busy.out" 2>"$tmp/busy.err"
	rc=$?
	if [ $rc -ne 2 ] || ! grep -q "another profiler is already attached" "$tmp/busy.err" || \
	   ! grep -q "^launch " "$tmp/busy.out" || [ -e "$tmp/busy.kpt" ]; then
		echo "FAIL: busy CUPTI: rc $rc"; cat "$tmp/busy.err"; fail=1
	fi
fi
[ $fail -eq 0 ] && echo "collector_test: ok"
exit $fail
