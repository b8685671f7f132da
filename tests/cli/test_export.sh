# kptprof export: Chrome trace, CSV and JSON of kpt-synth and hand-made
# recordings; atomic output; errors.
. "$KPT_SRC/tests/cli/cli_lib.sh"
need_synth
need_testrec
need_python

"$KPT_BUILD/kpt-synth" -o "$T/s.kpt" --runs 2 --iterations 5 >/dev/null || fail "kpt-synth failed"
"$KPT_BUILD/kpt-testrec" "$T/h.kpt" || fail "kpt-testrec failed"
"$KPTPROF" report "$T/s.kpt" --format json >"$T/s.report.json" || fail "report --format json failed"

# Chrome trace: parses, one slice per kernel/memop, named tracks, Kineto args
run "$KPTPROF" export "$T/s.kpt" --format chrome -o "$T/s.trace.json"
expect_rc 0 "export chrome"
[ ! -s "$T/out" ] || fail "export wrote data to stdout"
python3 - "$T/s.trace.json" "$T/s.report.json" <<'PY' || fail "Chrome trace of s.kpt is wrong"
import json, re, sys
text = open(sys.argv[1]).read()
t = json.loads(text)
c = json.load(open(sys.argv[2]))["counts"]
ev = t["traceEvents"]
kern = [e for e in ev if e.get("cat") == "kernel"]
assert len(kern) == c["kernels"], (len(kern), c)
assert len([e for e in ev if e.get("cat") in ("gpu_memcpy", "gpu_memset")]) == c["memops"]
assert any(e.get("cat") == "nvtx" for e in ev)
for e in kern:
    assert e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0
    for a in ("grid", "block", "registers per thread", "shared memory", "stream", "correlation", "device"):
        assert a in e["args"], a
named = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
procs = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
for e in ev:
    if e["ph"] in ("X", "i"):
        assert (e["pid"], e["tid"]) in named and e["pid"] in procs, e
# microseconds with exactly three decimals (ns precision), never exponents
assert re.search(r'"ts":\d+\.\d{3},"dur":\d+\.\d{3}', text)
assert not re.search(r'"(ts|dur)":[0-9.]*[eE]', text)
assert isinstance(t["baseTimeNanoseconds"], int)
PY

# exact timestamps on the hand-made file: base T0+10, kernel at T0+1234567
run "$KPTPROF" export "$T/h.kpt" --format=chrome -o -
expect_rc 0 "export chrome to stdout"
expect_out '"ts":1234.557,"dur":0.300'
expect_out '"name":"axpy(float*, float*, float)"'
expect_out '"args":{"grid":[108,2,1],"block":[256,1,1],"registers per thread":32,"shared memory":5120,"stream":7,"correlation":40,"device":0,"nvtx range":"work/launch"}'

# CSV: header + one row per kernel and memop, parseable
run "$KPTPROF" export "$T/s.kpt" --format csv -o "$T/s.csv"
expect_rc 0 "export csv"
python3 - "$T/s.csv" "$T/s.report.json" <<'PY' || fail "CSV export is wrong"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
c = json.load(open(sys.argv[2]))["counts"]
assert len(rows) == c["kernels"] + c["memops"], (len(rows), c)
k = [r for r in rows if r["kind"] == "kernel"]
assert len(k) == c["kernels"]
assert all(int(r["duration_ns"]) == int(r["end_ns"]) - int(r["start_ns"]) for r in k)
PY

# JSON: every record
run "$KPTPROF" export "$T/s.kpt" --format json --output "$T/s.json"
expect_rc 0 "export json"
python3 - "$T/s.json" "$T/s.report.json" <<'PY' || fail "JSON export is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))["counts"]
assert len(d["kernels"]) == c["kernels"] and len(d["memops"]) == c["memops"]
assert len(d["ranges"]) == c["ranges"] and d["counts"] == c
assert d["devices"][0]["slug"] == "nvidia-h100-80gb-hbm3"
PY

# a failed export leaves the old output untouched and no temporary file
echo "old content" >"$T/keep.json"
cp "$T/s.kpt" "$T/bad.kpt"
size=$(stat -c %s "$T/bad.kpt")
printf '\377\377\377\377\377\377\377\377' | dd of="$T/bad.kpt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run "$KPTPROF" export "$T/bad.kpt" --format chrome -o "$T/keep.json"
if [ "$RC" != 0 ]; then
	expect_error "corrupt input" "bad.kpt"
fi
[ "$RC" = 0 ] || [ "$(cat "$T/keep.json")" = "old content" ] || fail "failed export clobbered the output"
! ls "$T"/keep.json.tmp.* >/dev/null 2>&1 || fail "temporary file left behind"

# every committed recording (tests/data/*.kpt) exports to a trace with one
# slice per kernel
for f in "$KPT_DATA"/*.kpt; do
	[ -e "$f" ] || continue
	"$KPTPROF" report "$f" --format json >"$T/d.report.json" || fail "report $f failed"
	run "$KPTPROF" export "$f" --format chrome -o "$T/d.trace.json"
	expect_rc 0 "export $f"
	python3 - "$T/d.trace.json" "$T/d.report.json" <<'PY' || fail "Chrome trace of $f is wrong"
import json, sys
t = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))["counts"]
assert len([e for e in t["traceEvents"] if e.get("cat") == "kernel"]) == c["kernels"]
PY
done

# an output that exists and is not a regular file is written in place, not
# replaced by a renamed temporary file
mkfifo "$T/fifo" || fail "mkfifo failed"
timeout 30 cat "$T/fifo" >"$T/fifo.out" &
reader=$!
run "$KPTPROF" export "$T/s.kpt" --format csv -o "$T/fifo"
expect_rc 0 "export to a FIFO"
wait "$reader" || fail "reading the FIFO failed"
[ -p "$T/fifo" ] || fail "the FIFO was replaced by a regular file"
cmp -s "$T/fifo.out" "$T/s.csv" || fail "the FIFO did not carry the CSV export"
! ls "$T"/fifo.tmp.* >/dev/null 2>&1 || fail "temporary file left beside the FIFO"
run "$KPTPROF" export "$T/s.kpt" --format json -o /dev/null
expect_rc 0 "export to /dev/null"
[ -c /dev/null ] || fail "/dev/null is no longer a character device"

# the input recording itself, by any path, is refused and stays readable
cp "$T/s.kpt" "$T/self.kpt"
ln -s self.kpt "$T/self-link.kpt"
run "$KPTPROF" export "$T/self.kpt" --format csv -o "$T/self.kpt"
expect_error "self-overwrite" "'$T/self.kpt': it is an input of this command"
run "$KPTPROF" export "$T/self.kpt" --format json -o "$T/./self-link.kpt"
expect_error "self-overwrite through a link" "'$T/./self-link.kpt': it is"
cmp -s "$T/self.kpt" "$T/s.kpt" || fail "the input recording changed"
run "$KPTPROF" report "$T/self.kpt" --format json
expect_rc 0 "report of the input after a refused export"

# progress (docs/cli.md, "Progress"): quiet within 2 s (the test switch
# makes it 0 ms); not on a terminal one plain line; the export unchanged
run env KPTPROF_NO_PROGRESS=1 "$KPTPROF" export "$T/s.kpt" --format csv -o -
expect_rc 0 "export csv to stdout without progress"
cp "$T/out" "$T/quiet.csv"
[ ! -s "$T/err" ] || fail "export without progress wrote to stderr: $(cat "$T/err")"
run env KPTPROF_NO_PROGRESS= KPTPROF_PROGRESS_TEST_AFTER_MS=0 "$KPTPROF" export "$T/s.kpt" --format csv -o -
expect_rc 0 "export csv with progress"
cmp -s "$T/out" "$T/quiet.csv" || fail "progress changed the export on stdout"
grep -qE '^kptprof export: export [0-9]+% \([0-9.]+k? of [0-9.]+k? kernels\), 0 s$' "$T/err" ||
	fail "no progress line on stderr: $(od -c "$T/err" | head -5)"
[ "$(wc -l <"$T/err")" = 1 ] || fail "more than one progress line off a terminal: $(cat "$T/err")"
! grep -q $'\r' "$T/err" || fail "a carriage return off a terminal"
run env KPTPROF_NO_PROGRESS= "$KPTPROF" export "$T/s.kpt" --format csv -o -
[ ! -s "$T/err" ] || fail "a progress line within 2 s: $(cat "$T/err")"
# on a terminal (script(1) gives one): the line overwrites itself and is erased
if command -v script >/dev/null; then
	KPTPROF_NO_PROGRESS= KPTPROF_PROGRESS_TEST_AFTER_MS=0 script -qec \
		"'$KPTPROF' export '$T/s.kpt' --format csv -o '$T/tty.csv'" /dev/null </dev/null >"$T/tty.err" 2>&1 ||
		fail "export on a terminal failed: $(cat "$T/tty.err")"
	cmp -s "$T/tty.csv" "$T/quiet.csv" || fail "progress changed the export file"
	python3 - "$T/tty.err" <<'PY' || fail "terminal progress line: $(od -c "$T/tty.err" | head -8)"
import re, sys
t = open(sys.argv[1], "rb").read()
assert re.fullmatch(rb"(\rkptprof export: export \d+% \([^)]*kernels\), 0 s\x1b\[K)+\r\x1b\[K", t), t
PY
fi

# errors
run "$KPTPROF" export "$T/s.kpt" --format chrome -o "$T/no/such/dir/t.json"
expect_error "unwritable output" "cannot write '$T/no/such/dir/t.json'"
[ ! -e "$T/no" ] || fail "output folder appeared"
if [ -w /dev/full ]; then
	"$KPTPROF" export "$T/s.kpt" --format csv -o - >/dev/full 2>"$T/err"
	RC=$?
	expect_rc 2 "export to a full disk"
	expect_err "No space left on device"
fi
run "$KPTPROF" export "$T/s.kpt" --format perfetto -o "$T/x"
expect_error "bad format" "bad value 'perfetto' for --format"
run "$KPTPROF" export "$T/s.kpt" -o "$T/x"
expect_error "no format" "missing --format"
run "$KPTPROF" export "$T/s.kpt" --format csv
expect_error "no -o" "missing -o OUT"
run "$KPTPROF" export --format csv -o "$T/x"
expect_error "no FILE" "missing FILE"
run "$KPTPROF" export "$T/missing.kpt" --format csv -o "$T/x"
expect_error "missing input" "missing.kpt"
[ ! -e "$T/x" ] || fail "output written for a missing input"
run "$KPTPROF" export "$T/s.kpt" --format csv -o "$T/x" --zip
expect_error "unknown option" "unknown option '--zip'"
run "$KPTPROF" export --help
expect_rc 0 "export --help"
expect_out "usage: kptprof export FILE --format chrome|csv|json -o OUT"
exit 0
