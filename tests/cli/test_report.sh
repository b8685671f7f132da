# kptprof report on a kpt-synth recording and on the hand-made recording of
# kpt-testrec (exact numbers): every format, --by, --top, errors.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
need_testrec
need_python

"$KPT_BUILD/kpt-synth" -o "$T/s.kpt" --runs 3 --iterations 10 >/dev/null || fail "kpt-synth failed"
"$KPT_BUILD/kpt-testrec" "$T/h.kpt" || fail "kpt-testrec failed"

# text: headers, table, no colour when not a terminal, nothing on stderr
run "$KPTPROF" report "$T/s.kpt"
expect_rc 0 "report"
for s in "file      $T/s.kpt (format 1." "GPU 0     NVIDIA H100 80GB HBM3 (nvidia-h100-80gb-hbm3): 132 SMs, CC 9.0" \
	 "env GPU 0 SM clock" "processes 3 in 3 runs" "Time %" "Instances" "StdDev" "Name"; do
	expect_out "$s"
done
[ ! -s "$T/err" ] || fail "report wrote to stderr: $(cat "$T/err")"
! grep -q $'\033' "$T/out" || fail "colour codes without a terminal"

# exact numbers on the hand-made file (durations in kpt_test_rec.h)
run "$KPTPROF" report "$T/h.kpt"
expect_rc 0 "report h.kpt"
expect_out " 80.0%    6.00 us          3    2.00 us    2.00 us    1.00 us    3.00 us    1.00 us  plain_kernel"
expect_out " 13.3%    1.00 us          4     250 ns     250 ns     100 ns     400 ns     129 ns  axpy(float*, float*, float)"
expect_out "GPU 1     NVIDIA L4 (nvidia-l4): 58 SMs, CC 8.9"
expect_out "throttle gpu_idle,sw_power_cap, slowed in 1 of 3 samples"
expect_err "warning: '$T/h.kpt': 7 activity records were dropped"

# --top N and --by range
run "$KPTPROF" report "$T/h.kpt" --top 1
expect_rc 0 "--top 1"
expect_out "plain_kernel"
expect_no_out "axpy"
expect_out "(2 more rows: --top 0 shows all)"
run "$KPTPROF" report --by=range "$T/h.kpt"
expect_rc 0 "--by range"
expect_out "NVTX range"
expect_out "  (no range)"
expect_out "  work/launch"
expect_no_out "kpt:iter"
run "$KPTPROF" report "$T/s.kpt" --by range
expect_rc 0 "--by range synth"
grep -q '  synth.workload/' "$T/out" || fail "no synth.workload/ range paths"

# markdown and CSV
run "$KPTPROF" report "$T/h.kpt" --format md
expect_rc 0 "md"
expect_out "| Time % | Total | Instances | Avg | Med | Min | Max | StdDev | Name |"
expect_out '| 80.0% | 6.00 us | 3 | 2.00 us | 2.00 us | 1.00 us | 3.00 us | 1.00 us | `plain_kernel` |'
run "$KPTPROF" report "$T/h.kpt" --format csv
expect_rc 0 "csv"
expect_out "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,name"
expect_out '13.333,1000,4,250.0,250.0,100,400,129.1,"axpy(float*, float*, float)"'
python3 - "$T/out" <<'PY' || fail "CSV does not parse to 4 rows of 9 fields"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert len(rows) == 4 and all(len(r) == 9 for r in rows), rows
PY

# JSON: the documented keys and consistent numbers
for f in s h; do
	run "$KPTPROF" report "$T/$f.kpt" --format json --by range
	expect_rc 0 "json $f"
	python3 - "$T/out" <<'PY' || fail "report JSON of $f.kpt is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("format_version", "meta", "devices", "counts", "kernels", "ranges"):
    assert k in r, k
assert isinstance(r["meta"], dict)
for d in r["devices"]:
    for k in ("name", "slug", "sm_count", "compute_capability"):
        assert k in d, k
for k in ("kernels", "memops", "ranges", "runs", "dropped_records"):
    assert isinstance(r["counts"][k], int), k
ks = r["kernels"]
for k in ks:
    for f in ("name", "instances", "total_ns", "median_ns", "min_ns", "max_ns"):
        assert f in k, f
    assert k["min_ns"] <= k["median_ns"] <= k["max_ns"]
assert sum(k["instances"] for k in ks) == r["counts"]["kernels"]
assert sum(k["total_ns"] for k in ks) == r["gpu_time_ns"]
assert [k["total_ns"] for k in ks] == sorted((k["total_ns"] for k in ks), reverse=True)
assert sum(x["instances"] for x in r["ranges"]) == r["counts"]["kernels"]
if r["meta"].get("command") == "app --x":   # the hand-made file
    assert r["counts"]["dropped_records"] == 7
    assert r["devices"][0]["compute_capability"] == "9.0"
    assert r["kernels"][1]["name"] == "axpy(float*, float*, float)"
    assert r["kernels"][1]["median_ns"] == 250
    assert [x["path"] for x in r["ranges"]] == ["", "work", "work/launch"]
PY
done

# every committed recording (tests/data/*.kpt, real GPU runs) reports in
# every format with consistent numbers
for f in "$KPT_DATA"/*.kpt; do
	[ -e "$f" ] || continue
	for fmt in text md csv; do
		run "$KPTPROF" report "$f" --format $fmt
		expect_rc 0 "report $f --format $fmt"
	done
	run "$KPTPROF" report "$f" --format json --by range
	expect_rc 0 "report $f --format json"
	python3 - "$T/out" <<'PY' || fail "report JSON of $f is inconsistent"
import json, sys
r = json.load(open(sys.argv[1]))
ks = r["kernels"]
assert sum(k["instances"] for k in ks) == r["counts"]["kernels"]
assert sum(k["total_ns"] for k in ks) == r["gpu_time_ns"]
assert sum(x["instances"] for x in r["ranges"]) == r["counts"]["kernels"]
assert all(k["min_ns"] <= k["median_ns"] <= k["max_ns"] for k in ks)
assert all(d["slug"] and d["sm_count"] > 0 for d in r["devices"])
PY
done

# colour only on a terminal, and never with NO_COLOR
if command -v script >/dev/null; then
	script -qec "$KPTPROF report $T/h.kpt" /dev/null >"$T/tty" 2>&1 </dev/null
	grep -q $'\033\[1m' "$T/tty" || fail "no bold header on a terminal"
	NO_COLOR=1 script -qec "$KPTPROF report $T/h.kpt" /dev/null >"$T/tty" 2>&1 </dev/null
	! grep -q $'\033\[1m' "$T/tty" || fail "colour despite NO_COLOR"
	# long names are shortened to the terminal's width, never when piped
	script -qec "stty cols 150; $KPTPROF report $T/s.kpt" /dev/null >"$T/tty" 2>&1 </dev/null
	# return type and parameters go first, template arguments stay
	grep -q ' cutlass::gemm_kernel<128,128,float,kpt::functor::add<float>,0>' "$T/tty" ||
		fail "no shortened names on a 150-column terminal: $(cat "$T/tty")"
	! grep -q '(void const\*' "$T/tty" || fail "parameters kept on a 150-column terminal"
	[ "$(tr -d '\r' <"$T/tty" | awk '{ if (length($0) > m) m = length($0) } END { print m }')" -le 150 ] \
		|| fail "lines wider than the terminal"
	"$KPTPROF" report "$T/s.kpt" | grep -q 'kernel<32, 16, float' || fail "names shortened when piped"
fi

# --help, and errors: one line, exit 2
run "$KPTPROF" report --help
expect_rc 0 "--help"
expect_out "usage: kptprof report FILE"
run "$KPTPROF" report
expect_error "no FILE" "missing FILE"
run "$KPTPROF" report "$T/nonexistent.kpt"
expect_error "missing file" "nonexistent.kpt"
: >"$T/empty.kpt"
run "$KPTPROF" report "$T/empty.kpt"
expect_error "empty file" "empty.kpt"
head -c 4096 /dev/urandom >"$T/junk.kpt"
run "$KPTPROF" report "$T/junk.kpt"
expect_error "junk file" "junk.kpt"
run "$KPTPROF" report "$T/h.kpt" --top abc
expect_error "bad --top" "bad value 'abc' for --top"
run "$KPTPROF" report "$T/h.kpt" --top -1
expect_error "negative --top" "bad value '-1' for --top"
run "$KPTPROF" report "$T/h.kpt" --by stream
expect_error "bad --by" "bad value 'stream' for --by: expected kernel|range"
run "$KPTPROF" report "$T/h.kpt" --format xml
expect_error "bad --format" "bad value 'xml' for --format"
run "$KPTPROF" report "$T/h.kpt" --format
expect_error "--format without value" "option '--format' needs a value"
run "$KPTPROF" report "$T/h.kpt" --frobnicate
expect_error "unknown option" "unknown option '--frobnicate'"
run "$KPTPROF" report "$T/h.kpt" "$T/s.kpt"
expect_error "two files" "one FILE only"
if [ -w /dev/full ]; then
	for fmt in text json; do
		"$KPTPROF" report "$T/s.kpt" --format $fmt >/dev/full 2>"$T/err"
		RC=$?
		expect_rc 2 "report --format $fmt to a full disk"
		expect_err "No space left on device"
	done
fi
exit 0
