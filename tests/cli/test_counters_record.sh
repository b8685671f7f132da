#!/bin/bash
# kptprof record --counters without a GPU: option parsing, and the counters
# pass's plumbing with a stand-in target that plays the collector's part
# (writes its recording to KPT_OUTPUT, or an error to KPT_STATUS when
# KPT_COUNTERS is set, as libkptinject.so does).
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
CC="$KPT_BUILD/tests/counters_check"
[ -x "$CC" ] || skip "counters_check is not built"

run "$KPTPROF" record --help
expect_rc 0 "record --help"
expect_out "kptprof record"
expect_out "  memory     DRAM and L2 traffic"
expect_out "  default    time, DRAM bytes"

run "$KPTPROF" record --counters=bogus -- true
expect_error "unknown set" "unknown counter set or metric 'bogus'"
expect_err "hint: counter sets: default, memory"
run "$KPTPROF" record --counters=default,,memory -- true
expect_error "empty item" "empty item"
run "$KPTPROF" record --counters=Dram__bytes.sum -- true
expect_error "bad metric" "'Dram__bytes.sum'"

"$KPT_BUILD/kpt-synth" -o "$T/timing.kpt" --runs 1 --iterations 2 --names 5 || fail "kpt-synth"
cat >"$T/target.sh" <<'SH'
#!/bin/bash
# Stand-in CUDA program: what libkptinject.so would leave behind.
out=${KPT_OUTPUT//%p/$$}
st=${KPT_STATUS//%p/$$}
if [ -n "${KPT_COUNTERS:-}" ]; then
	echo "$KPT_COUNTERS" >"$FAKE_DIR/counters.env"
	case "$FAKE_MODE" in
	perm) printf 'error perm insufficient privileges to read GPU counters (cuptiProfilerHostInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)\nhint run as root, or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0\n' >"$st" ;;
	unknown) printf "error notfound counter 'sm__bogus.sum' is unknown on this GPU (chip GH100)\n" >"$st" ;;
	busy) printf 'error busy another profiler holds the GPU'"'"'s counters (cuptiRangeProfilerEnable: CUPTI_ERROR_HARDWARE_BUSY)\n' >"$st" ;;
	none) ;;
	samples) echo "${KPT_SAMPLE_MS:-unset}" >"$FAKE_DIR/sample_ms" ;;
	ok) "$FAKE_CC" --write "$out" cgc && echo "ok $out" >"$st" ;;
	empty) "$FAKE_CC" --write "$out" "" && echo "ok $out" >"$st" ;;
	esac
	exit 0
fi
cp "$FAKE_DIR/timing.kpt" "$out" && echo "ok $out" >"$st"
SH
chmod +x "$T/target.sh"
export KPTPROF_SKIP_GPU_CHECK=1 KPTPROF_INJECT="$T/target.sh" FAKE_DIR="$T" FAKE_CC="$CC"

FAKE_MODE=perm run "$KPTPROF" record -o "$T/out.kpt" --counters -- "$T/target.sh"
expect_error "no privileges" "cannot read counters: insufficient privileges"
expect_err "NVreg_RestrictProfilingToAdminUsers=0"
[ ! -e "$T/out.kpt" ] || fail "a failed counters pass left '$T/out.kpt'"
grep -qx "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,sm__cycles_active.avg,lts__t_sectors.sum,sm__pipe_tensor_op_hmma_cycles_active.sum,sm__warps_active.avg.pct_of_peak_sustained_active" \
	"$T/counters.env" || fail "KPT_COUNTERS of the default set: $(cat "$T/counters.env")"

FAKE_MODE=unknown run "$KPTPROF" record -o "$T/out.kpt" --counters=sm__bogus.sum -- "$T/target.sh"
expect_error "unknown metric" "counter 'sm__bogus.sum' is unknown on this GPU"
[ "$(cat "$T/counters.env")" = "sm__bogus.sum" ] || fail "KPT_COUNTERS: $(cat "$T/counters.env")"

FAKE_MODE=busy run "$KPTPROF" record -o "$T/out.kpt" --counters=memory -- "$T/target.sh"
expect_error "busy" "another profiler"

FAKE_MODE=none run "$KPTPROF" record -o "$T/out.kpt" --counters -- "$T/target.sh"
expect_error "nothing" "the counters pass recorded nothing"
ls -a "$T" | grep -q '^\.kptprof-record' && fail "temporary folder left behind"
# A file with no counter values (a program whose kernels all ran in CUDA
# graphs): an error naming why, never "0 kernels" and exit 0.
FAKE_MODE=empty run "$KPTPROF" record -o "$T/out.kpt" --counters -- "$T/target.sh"
expect_error "no values" "the counters pass profiled no kernel of"
expect_err "3 graph launches, 2 launches captured into graphs"
[ ! -e "$T/out.kpt" ] || fail "an empty counters pass left '$T/out.kpt'"
FAKE_MODE=samples run "$KPTPROF" record -o "$T/out.kpt" --counters -- "$T/target.sh"
[ "$(cat "$T/sample_ms")" = 0 ] || fail "the counters pass samples NVML: KPT_SAMPLE_MS=$(cat "$T/sample_ms")"

# Success: the counters pass's file joins run 0 as one more process (the
# number of runs, the decision rule's sample size, stays 2).
FAKE_MODE=ok run "$KPTPROF" record -o "$T/ok.kpt" --runs 2 --counters -- "$T/target.sh"
expect_rc 0 "counters pass ok"
expect_err "kptprof: counters: 3 kernels x 8 metrics, 1 pass per kernel (3 kernel replays)"
run "$KPTPROF" report "$T/ok.kpt"
expect_rc 0 "report with counters"
expect_out "processes 3 in 2 runs"
# ceilings come from GPU 0 (here the synthetic timing runs' H100: 3000 GB/s, 798 TFLOP/s)
expect_out "Counters (replay pass, mean per profiled launch; ceilings: copy 3000 GB/s, bf16 798 TFLOP/s)"
grep -E '^ +1\.000 ms +3000\.0 +100\.0 +1\.78 +0\.0 +80\.0  copy_vec\(' "$T/out" >/dev/null ||
	fail "copy_vec counters row: $(cat "$T/out")"
grep -E '^ +2\.000 ms +150\.0 +5\.0 +1\.78 +25\.0 +40\.0  gemm\(' "$T/out" >/dev/null ||
	fail "gemm counters row: $(cat "$T/out")"
run "$KPTPROF" report "$T/ok.kpt" --format json
expect_rc 0 "report json with counters"
if command -v python3 >/dev/null; then
	python3 - "$T/out" <<'PY' || fail "kernel_counters JSON"
import json, sys
j = json.load(open(sys.argv[1]))
k = {x["mangled"]: x for x in j["kernel_counters"]}
c = k["_Z8copy_vecPvPKvm"]
assert c["dram_gbps"] == 3000 and abs(c["copy_ceiling_pct"] - 100) < 1e-9, c
assert c["metrics"]["dram__bytes_read.sum"] == 1.5e9, c
assert abs(k["_Z4gemmPKvS0_Pv"]["tensor_active_pct"] - 25) < 1e-9
assert j["meta"]["counters.set"] == "default" and j["meta"]["counters.passes"] == "1", j["meta"]
PY
fi
# the timing runs' kernels are still there, and only theirs
run "$KPTPROF" report "$T/timing.kpt" --top 0
n_base=$(grep -c '^ *[0-9.]*%' "$T/out")
run "$KPTPROF" report "$T/ok.kpt" --top 0
[ "$(grep -c '^ *[0-9.]*%' "$T/out")" = "$n_base" ] || fail "kernel rows changed by the counters pass"

# A recording without counters has no Counters section.
run "$KPTPROF" report "$T/timing.kpt"
expect_no_out "Counters ("
echo ok
